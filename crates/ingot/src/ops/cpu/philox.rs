//! Philox4x32-10 and the per-value samplers of `ingot.random`, in Rust: the definition of the
//! stream that `kernels/random.metal` computes on GPUs, operation for operation (see
//! `ops/random.rs` for the stream layout). Every float operation here is one IEEE operation
//! (`+ - * /` and `sqrt`, correctly rounded on every backend; the kernels are compiled without
//! FMA contraction), integers are exact, and the transcendental functions the normal sampler
//! needs are written out below instead of calling the platform's `ln`/`sin`/`cos`, whose last
//! bits differ between libm, CUDA and Metal. Tests check both implementations bit for bit.

/// Multipliers and key increments of Philox4x32 (Salmon et al., SC'11; Random123).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with 10 rounds: the 128-bit `ctr` encrypted under the 64-bit `key`.
///
/// ```
/// // Random123's known-answer vector for a zero counter and key.
/// let out = ingot::ops::random::philox4x32_10([0; 4], [0; 2]);
/// assert_eq!(out, [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
/// ```
#[inline]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = ctr;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k = [k[0].wrapping_add(W0), k[1].wrapping_add(W1)];
        }
        let p0 = M0 as u64 * c[0] as u64;
        let p1 = M1 as u64 * c[2] as u64;
        c = [
            (p1 >> 32) as u32 ^ c[1] ^ k[0],
            p1 as u32,
            (p0 >> 32) as u32 ^ c[3] ^ k[1],
            p0 as u32,
        ];
    }
    c
}

/// The words of block `block` of the stream of `key`, attempt `attempt` (0 for the first
/// values; rejection samplers retry with attempts 1, 2, ...).
#[inline]
pub(crate) fn block(key: [u32; 2], block: u64, attempt: u32) -> [u32; 4] {
    philox4x32_10([block as u32, (block >> 32) as u32, attempt, 0], key)
}

/// Two words as one 64-bit value (`lo` the low half).
#[inline]
pub(crate) fn wide(lo: u32, hi: u32) -> u64 {
    lo as u64 | (hi as u64) << 32
}

/// A uniform float32 in [0, 1) from the top 24 bits of a word.
#[inline]
pub(crate) fn unit_f32(w: u32) -> f32 {
    (w >> 8) as f32 * (1.0 / 16_777_216.0)
}

/// A uniform float64 in [0, 1) from the top 53 bits of a 64-bit value.
#[inline]
pub(crate) fn unit_f64(x: u64) -> f64 {
    (x >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// A uniform float16 in [0, 1) (11 bits, exactly representable), as f32.
#[inline]
pub(crate) fn unit_f16(w: u32) -> f32 {
    (w >> 21) as f32 * (1.0 / 2048.0)
}

/// A uniform bfloat16 in [0, 1) (8 bits, exactly representable), as f32.
#[inline]
pub(crate) fn unit_bf16(w: u32) -> f32 {
    (w >> 24) as f32 * (1.0 / 256.0)
}

// ---- natural logarithm of a value in (0, 1] ---------------------------------------------------
// x = 2^e * m with m in [sqrt(1/2), sqrt(2)); ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| <=
// 0.1716, from its Taylor series; ln(x) = e ln2 + ln(m) with ln2 split so that e * LN2_HI is exact.

const LN2_HI_F64: f64 = 0.6931471803691238;
const LN2_LO_F64: f64 = 1.9082149292705877e-10;
const ATANH_F64: [f64; 10] = [
    0.3333333333333333,
    0.2,
    0.14285714285714285,
    0.1111111111111111,
    0.09090909090909091,
    0.07692307692307693,
    0.06666666666666667,
    0.058823529411764705,
    0.05263157894736842,
    0.047619047619047616,
];

/// ln(x) for a normal x in (0, 1].
pub(crate) fn ln_unit_f64(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) as i32) - 1023;
    let mut m = f64::from_bits((bits & 0x000F_FFFF_FFFF_FFFF) | 0x3FF0_0000_0000_0000);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let mut p = ATANH_F64[9];
    for c in ATANH_F64[..9].iter().rev() {
        p = *c + z * p;
    }
    let t = 2.0 * s;
    let lnm = t + t * (z * p);
    let ef = e as f64;
    ef * LN2_HI_F64 + (ef * LN2_LO_F64 + lnm)
}

const LN2_HI_F32: f32 = 0.69311523;
const LN2_LO_F32: f32 = 3.1946183e-05;
const ATANH_F32: [f32; 4] = [0.33333334, 0.2, 0.14285715, 0.11111111];

/// ln(x) for a normal x in (0, 1], in float32.
pub(crate) fn ln_unit_f32(x: f32) -> f32 {
    let bits = x.to_bits();
    let mut e = ((bits >> 23) as i32) - 127;
    let mut m = f32::from_bits((bits & 0x007F_FFFF) | 0x3F80_0000);
    if m > std::f32::consts::SQRT_2 {
        m *= 0.5;
        e += 1;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let mut p = ATANH_F32[3];
    for c in ATANH_F32[..3].iter().rev() {
        p = *c + z * p;
    }
    let t = 2.0 * s;
    let lnm = t + t * (z * p);
    let ef = e as f32;
    ef * LN2_HI_F32 + (ef * LN2_LO_F32 + lnm)
}

// ---- sin and cos of 2 pi u --------------------------------------------------------------------
// u = k / 2^B (k an integer): the quadrant q = round(4u) and the remainder r = k - q 2^(B-2)
// (|r| <= 2^(B-3)) are exact integer arithmetic; theta = r * (2 pi / 2^B) is in [-pi/4, pi/4],
// where the Taylor series of sin and cos converge fast; the quadrant rotates the pair.

const TWO_PI_2M53: f64 = 6.975736996017264e-16;
const SIN_F64: [f64; 9] = [
    -0.16666666666666666,
    0.008333333333333333,
    -0.0001984126984126984,
    2.7557319223985893e-06,
    -2.505210838544172e-08,
    1.6059043836821613e-10,
    -7.647163731819816e-13,
    2.8114572543455206e-15,
    -8.22063524662433e-18,
];
const COS_F64: [f64; 10] = [
    -0.5,
    0.041666666666666664,
    -0.001388888888888889,
    2.48015873015873e-05,
    -2.755731922398589e-07,
    2.08767569878681e-09,
    -1.1470745597729725e-11,
    4.779477332387385e-14,
    -1.5619206968586225e-16,
    4.110317623312165e-19,
];

/// (sin, cos) of 2 pi k / 2^53 for k < 2^53.
pub(crate) fn sincos_2pi_f64(k: u64) -> (f64, f64) {
    let q = (k + (1 << 50)) >> 51;
    let r = k as i64 - (q << 51) as i64;
    let x = r as f64 * TWO_PI_2M53;
    let z = x * x;
    let mut ps = SIN_F64[8];
    for c in SIN_F64[..8].iter().rev() {
        ps = *c + z * ps;
    }
    let mut pc = COS_F64[9];
    for c in COS_F64[..9].iter().rev() {
        pc = *c + z * pc;
    }
    let s = x + x * (z * ps);
    let c = 1.0 + z * pc;
    rotate(q, s, c)
}

const TWO_PI_2M24: f32 = 3.7450704e-07;
const SIN_F32: [f32; 4] = [-0.16666667, 0.008333334, -0.0001984127, 2.7557319e-06];
const COS_F32: [f32; 5] = [
    -0.5,
    0.041666668,
    -0.0013888889,
    2.4801588e-05,
    -2.755732e-07,
];

/// (sin, cos) of 2 pi k / 2^24 for k < 2^24, in float32.
pub(crate) fn sincos_2pi_f32(k: u32) -> (f32, f32) {
    let q = (k + (1 << 21)) >> 22;
    let r = k as i32 - (q << 22) as i32;
    let x = r as f32 * TWO_PI_2M24;
    let z = x * x;
    let mut ps = SIN_F32[3];
    for c in SIN_F32[..3].iter().rev() {
        ps = *c + z * ps;
    }
    let mut pc = COS_F32[4];
    for c in COS_F32[..4].iter().rev() {
        pc = *c + z * pc;
    }
    let s = x + x * (z * ps);
    let c = 1.0 + z * pc;
    rotate(q, s, c)
}

/// (sin, cos) of theta + q pi / 2 from those of theta.
#[inline]
fn rotate<F: std::ops::Neg<Output = F>>(q: impl Into<u64>, s: F, c: F) -> (F, F) {
    match q.into() & 3 {
        0 => (s, c),
        1 => (c, -s),
        2 => (-s, -c),
        _ => (-c, s),
    }
}

/// Two standard normal float64 values (Box-Muller) from two 64-bit values: the first gives the
/// radius from u1 = 1 - unit_f64 in (0, 1], the second the angle.
pub(crate) fn normal_pair_f64(a: u64, b: u64) -> (f64, f64) {
    let u1 = ((1u64 << 53) - (a >> 11)) as f64 * (1.0 / 9_007_199_254_740_992.0);
    let rad = (-2.0 * ln_unit_f64(u1)).sqrt();
    let (s, c) = sincos_2pi_f64(b >> 11);
    (rad * c, rad * s)
}

/// Two standard normal float32 values (Box-Muller) from two words.
pub(crate) fn normal_pair_f32(a: u32, b: u32) -> (f32, f32) {
    let u1 = ((1u32 << 24) - (a >> 8)) as f32 * (1.0 / 16_777_216.0);
    let rad = (-2.0 * ln_unit_f32(u1)).sqrt();
    let (s, c) = sincos_2pi_f32(b >> 8);
    (rad * c, rad * s)
}

/// Lemire's multiply-shift for a range of at most 2^32: `Some(value in [0, range))`, or `None`
/// when the word falls in the rejected zone (the caller retries with the next attempt).
#[inline]
pub(crate) fn lemire32(w: u32, range: u64) -> Option<u64> {
    if range == 1 << 32 {
        return Some(w as u64);
    }
    let r = range as u32;
    let m = w as u64 * r as u64;
    let low = m as u32;
    if low < r {
        let threshold = r.wrapping_neg() % r;
        if low < threshold {
            return None;
        }
    }
    Some(m >> 32)
}

/// Lemire's multiply-shift for a 64-bit range (0 stands for 2^64: every value is accepted).
#[inline]
pub(crate) fn lemire64(x: u64, range: u64) -> Option<u64> {
    if range == 0 {
        return Some(x);
    }
    let m = x as u128 * range as u128;
    let low = m as u64;
    if low < range {
        let threshold = range.wrapping_neg() % range;
        if low < threshold {
            return None;
        }
    }
    Some((m >> 64) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's `tests/kat_vectors`, the three `philox4x32 10` lines (counter, key, result).
    #[test]
    fn known_answers() {
        let cases: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
            (
                [0, 0, 0, 0],
                [0, 0],
                [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8],
            ),
            (
                [0xffffffff; 4],
                [0xffffffff; 2],
                [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd],
            ),
            (
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0],
                [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1],
            ),
        ];
        for (ctr, key, want) in cases {
            assert_eq!(philox4x32_10(ctr, key), want);
        }
    }

    fn ulps64(a: f64, b: f64) -> f64 {
        ((a - b) / (b.abs().max(f64::MIN_POSITIVE) * f64::EPSILON)).abs()
    }

    #[test]
    fn ln_is_within_two_ulp_of_libm() {
        let mut k = 1u64;
        while k <= 1 << 53 {
            for d in [0u64, 1, 3, 12345, 987_654_321] {
                let kk = (k + d).min(1 << 53);
                let x = kk as f64 / (1u64 << 53) as f64;
                let (got, want) = (ln_unit_f64(x), x.ln());
                if want != 0.0 {
                    assert!(ulps64(got, want) <= 2.0, "ln({x}) = {got}, libm {want}");
                } else {
                    assert_eq!(got, 0.0);
                }
                let xf = x as f32;
                if xf >= f32::MIN_POSITIVE {
                    let (g, w) = (ln_unit_f32(xf) as f64, (xf as f64).ln());
                    assert!(
                        (g - w).abs() <= 2.0 * f32::EPSILON as f64 * w.abs().max(1e-30),
                        "ln_f32({xf}) = {g}, exact {w}"
                    );
                }
            }
            k = k * 3 / 2 + 1;
        }
    }

    #[test]
    fn sincos_match_libm() {
        // The reference angle tau * k / 2^53 is itself rounded (up to 4.4e-16 near 2 pi).
        for i in 0..100_000u64 {
            let k = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
            let t = std::f64::consts::TAU * (k as f64 / (1u64 << 53) as f64);
            let (s, c) = sincos_2pi_f64(k);
            assert!(
                (s - t.sin()).abs() <= 1.2e-15,
                "sin 2pi {k}: {s} vs {}",
                t.sin()
            );
            assert!(
                (c - t.cos()).abs() <= 1.2e-15,
                "cos 2pi {k}: {c} vs {}",
                t.cos()
            );
            let k32 = (k >> 29) as u32;
            let t32 = std::f64::consts::TAU * (k32 as f64 / (1u64 << 24) as f64);
            let (s, c) = sincos_2pi_f32(k32);
            assert!((s as f64 - t32.sin()).abs() <= 2.5e-7, "sin32 {k32}");
            assert!((c as f64 - t32.cos()).abs() <= 2.5e-7, "cos32 {k32}");
        }
        // Exact quadrant points.
        assert_eq!(sincos_2pi_f64(0), (0.0, 1.0));
        assert_eq!(sincos_2pi_f64(1 << 51), (1.0, -0.0));
        assert_eq!(sincos_2pi_f32(1 << 23), (-0.0, -1.0));
    }

    #[test]
    fn lemire_is_unbiased_over_a_full_word_cycle() {
        // Every 16-bit word scaled to 32 bits through all residues: each value of a range of 7
        // gets the same number of accepted words.
        let range = 7u64;
        let mut counts = [0u64; 7];
        let mut rejected = 0;
        for w in 0..=u32::MAX / 65_537 {
            match lemire32(w.wrapping_mul(65_537), range) {
                Some(v) => counts[v as usize] += 1,
                None => rejected += 1,
            }
        }
        let (lo, hi) = (counts.iter().min().unwrap(), counts.iter().max().unwrap());
        assert!(hi - lo <= 2, "{counts:?} ({rejected} rejected)");
        assert_eq!(lemire64(u64::MAX, 0), Some(u64::MAX));
        assert_eq!(lemire32(u32::MAX, 1 << 32), Some(u32::MAX as u64));
        assert_eq!(lemire64(u64::MAX, 3), Some(2));
    }
}
