//! Branch-free float32 `exp`, `log`, `sin` and `cos` that the compiler vectorises (the
//! transcendental functions of libm are scalar calls). Special values (±inf, NaN, -0.0,
//! denormal inputs and results, overflow) are handled with selects, not branches.
//!
//! Polynomials are the classic minimax fits used for single precision (errors below 2 ulp,
//! checked against f64 in the tests).
#![allow(clippy::excessive_precision)]

use super::iter::multiversion;

/// `e^x` in single precision.
#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    const LOG2E: f32 = std::f32::consts::LOG2_E;
    // ln 2 split so that n * LN2_HI is exact for |n| < 2^9.
    const LN2_HI: f32 = 0.693_359_375;
    const LN2_LO: f32 = -2.121_944_4e-4;
    // Rounding by adding 1.5 * 2^23 leaves n in the low mantissa bits: a vector integer
    // subtract instead of a float-to-int conversion (which Rust saturates lane by lane).
    const MAGIC: f32 = 12_582_912.0;
    let xc = x.clamp(-104.0, 89.0);
    let t = xc * LOG2E + MAGIC;
    let n = t - MAGIC;
    let ni = t.to_bits() as i32 - 0x4b40_0000;
    let r = (xc - n * LN2_HI) - n * LN2_LO;
    let z = r * r;
    let p = ((((1.987_569_1e-4 * r + 1.398_199_9e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 1.666_666_5e-1)
        * r
        + 5.000_000_1e-1;
    let y = p * z + r + 1.0;
    // 2^n in two factors so that denormal results and n = 128 stay exact until the last product.
    let n1 = ni >> 1;
    let n2 = ni - n1;
    let s1 = f32::from_bits(((n1 + 127) as u32) << 23);
    let s2 = f32::from_bits(((n2 + 127) as u32) << 23);
    y * s1 * s2
}

/// Natural logarithm in single precision.
#[inline(always)]
pub(crate) fn log_f32(x: f32) -> f32 {
    // Denormal inputs are scaled into the normal range first.
    let tiny = x < f32::MIN_POSITIVE;
    let xs = if tiny { x * 8_388_608.0 } else { x };
    let bits = xs.to_bits();
    let mut e = ((bits >> 23) & 0xff) as i32 - 127 - if tiny { 23 } else { 0 };
    let mut m = f32::from_bits((bits & 0x007f_ffff) | 0x3f80_0000);
    let big = m > std::f32::consts::SQRT_2;
    m = if big { m * 0.5 } else { m };
    e += big as i32;
    let f = m - 1.0;
    let z = f * f;
    let p = (((((((7.037_683_6e-2 * f - 1.151_461e-1) * f + 1.167_699_9e-1) * f
        - 1.242_014_1e-1)
        * f
        + 1.424_932_3e-1)
        * f
        - 1.666_805_8e-1)
        * f
        + 2.000_071_4e-1)
        * f
        - 2.499_999_4e-1)
        * f
        + 3.333_333e-1;
    let ef = e as f32;
    let y = f * z * p + ef * -2.121_944_4e-4 - 0.5 * z;
    let r = f + y + ef * 0.693_359_375;
    // Special values: log(0) = -inf, log(<0) = NaN, log(inf) = inf, NaN stays NaN.
    let r = if x == f32::INFINITY { x } else { r };
    let r = if x == 0.0 { f32::NEG_INFINITY } else { r };
    if x < 0.0 || x.is_nan() {
        f32::NAN
    } else {
        r
    }
}

/// Beyond this |x| the reduction loses accuracy; such inputs are redone with libm in f64.
const TRIG_LIMIT: f32 = 262_144.0;

/// `(sin r, cos r, quadrant)` of `x` reduced by multiples of pi/2. The reduction runs in f64
/// (pi/2 in two parts, the first with 33 bits so that `j * PIO2_HI` is exact), so results near
/// zero crossings keep full relative accuracy; the polynomials run in f32.
#[inline(always)]
fn sincos_reduced(x: f32) -> (f32, f32, u32) {
    const TWO_OVER_PI: f64 = std::f64::consts::FRAC_2_PI;
    const PIO2_HI: f64 = 1.570_796_326_734_125_6;
    const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
    let xd = x as f64;
    // Rounding by adding 1.5 * 2^52 leaves j in the low mantissa bits (see exp_f32).
    const MAGIC: f64 = 6_755_399_441_055_744.0;
    let t = xd * TWO_OVER_PI + MAGIC;
    let j = t - MAGIC;
    let r = ((xd - j * PIO2_HI) - j * PIO2_LO) as f32;
    let q = t.to_bits() as u32;
    let z = r * r;
    let s = ((-1.951_529_6e-4 * z + 8.332_161e-3) * z - 1.666_665_5e-1) * z * r + r;
    let c = ((2.443_315_7e-5 * z - 1.388_731_6e-3) * z + 4.166_664_6e-2) * z * z - 0.5 * z + 1.0;
    (s, c, q)
}

/// `sin x` in single precision for |x| <= 2^18 (NaN for ±inf and NaN).
#[inline(always)]
pub(crate) fn sin_f32_fast(x: f32) -> f32 {
    let (s, c, q) = sincos_reduced(x);
    let v = if q & 1 == 0 { s } else { c };
    let v = f32::from_bits(v.to_bits() ^ ((q & 2) << 30));
    // Keeps the sign of a zero argument (the reduction turns -0.0 into +0.0).
    if x == 0.0 {
        x
    } else {
        v
    }
}

/// `cos x` in single precision for |x| <= 2^18 (NaN for ±inf and NaN).
#[inline(always)]
pub(crate) fn cos_f32_fast(x: f32) -> f32 {
    let (s, c, q) = sincos_reduced(x);
    let v = if q & 1 == 0 { c } else { s };
    f32::from_bits(v.to_bits() ^ (((q.wrapping_add(1)) & 2) << 30))
}

/// `sin x` for any x (large arguments through f64).
#[inline(always)]
pub(crate) fn sin_f32(x: f32) -> f32 {
    if x.abs() <= TRIG_LIMIT {
        sin_f32_fast(x)
    } else {
        (x as f64).sin() as f32
    }
}

/// `cos x` for any x (large arguments through f64).
#[inline(always)]
pub(crate) fn cos_f32(x: f32) -> f32 {
    if x.abs() <= TRIG_LIMIT {
        cos_f32_fast(x)
    } else {
        (x as f64).cos() as f32
    }
}

macro_rules! trig_slice {
    ($name:ident, $fast:ident, $exact:expr) => {
        multiversion! {
            /// The function over `len` contiguous elements: a vectorised pass, then the rare
            /// large arguments redone in f64.
            pub(crate) unsafe fn $name[](a: *const f32, o: *mut f32, len: usize) where [] {
                const BLOCK: usize = 256;
                let mut buf = [0f32; BLOCK];
                let mut i = 0;
                while i < len {
                    let n = BLOCK.min(len - i);
                    for k in 0..n {
                        buf[k] = unsafe { *a.add(i + k) };
                    }
                    let mut big = false;
                    for k in 0..n {
                        let x = buf[k];
                        big |= x.abs() > TRIG_LIMIT;
                        unsafe { *o.add(i + k) = $fast(x) };
                    }
                    if big {
                        for k in 0..n {
                            let x = buf[k];
                            if x.abs() > TRIG_LIMIT && x.is_finite() {
                                let f: fn(f64) -> f64 = $exact;
                                unsafe { *o.add(i + k) = f(x as f64) as f32 };
                            }
                        }
                    }
                    i += n;
                }
            }
        }
    };
}
trig_slice!(sin_f32_slice, sin_f32_fast, f64::sin);
trig_slice!(cos_f32_slice, cos_f32_fast, f64::cos);

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Distance in units in the last place between `got` and the f64 reference.
    fn ulps(got: f32, want: f64) -> f64 {
        let w = want as f32;
        if got.is_nan() || w.is_nan() {
            return if got.is_nan() == w.is_nan() {
                0.0
            } else {
                f64::INFINITY
            };
        }
        if got == w {
            return 0.0;
        }
        if got.is_infinite() || w.is_infinite() {
            return f64::INFINITY;
        }
        let e = (w.abs().to_bits() >> 23) as i32;
        let ulp = 2f64.powi(e.max(1) - 127 - 23);
        ((got as f64) - want).abs() / ulp
    }

    fn check(f: fn(f32) -> f32, r: fn(f64) -> f64, lo: f32, hi: f32, max_ulp: f64) {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut worst = (0.0, 0.0f32);
        for i in 0..200_000 {
            let x = if i % 2 == 0 {
                lo + (hi - lo) * ((rng.next() >> 40) as f32 / (1u64 << 24) as f32)
            } else {
                // Random bit patterns inside the range, to reach tiny magnitudes.
                let v = f32::from_bits(rng.next() as u32);
                if v.is_finite() && v >= lo && v <= hi {
                    v
                } else {
                    continue;
                }
            };
            let e = ulps(f(x), r(x as f64));
            if e > worst.0 {
                worst = (e, x);
            }
        }
        assert!(worst.0 <= max_ulp, "worst {} ulp at {:e}", worst.0, worst.1);
    }

    #[test]
    fn exp_accuracy_and_special_values() {
        check(exp_f32, f64::exp, -103.0, 88.7, 2.0);
        check(exp_f32, f64::exp, -1.0, 1.0, 1.5);
        assert_eq!(exp_f32(0.0), 1.0);
        assert_eq!(exp_f32(-0.0), 1.0);
        assert_eq!(exp_f32(f32::INFINITY), f32::INFINITY);
        assert_eq!(exp_f32(f32::NEG_INFINITY), 0.0);
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(88.8), f32::INFINITY);
        assert_eq!(exp_f32(1000.0), f32::INFINITY);
        assert_eq!(exp_f32(-1000.0), 0.0);
        assert!(ulps(exp_f32(88.72), (88.72f32 as f64).exp()) <= 1.0);
        // Denormal results.
        let d = exp_f32(-100.0);
        assert!(d > 0.0 && d < f32::MIN_POSITIVE);
        assert!(ulps(d, (-100.0f64).exp()) <= 1.0);
        assert_eq!(exp_f32(1e-45), 1.0);
    }

    #[test]
    fn log_accuracy_and_special_values() {
        check(log_f32, f64::ln, 0.0, f32::MAX, 2.0);
        check(log_f32, f64::ln, 0.5, 2.0, 2.0);
        assert_eq!(log_f32(1.0), 0.0);
        assert_eq!(log_f32(0.0), f32::NEG_INFINITY);
        assert_eq!(log_f32(-0.0), f32::NEG_INFINITY);
        assert!(log_f32(-1.0).is_nan());
        assert!(log_f32(f32::NEG_INFINITY).is_nan());
        assert!(log_f32(f32::NAN).is_nan());
        assert_eq!(log_f32(f32::INFINITY), f32::INFINITY);
        let tiny = f32::from_bits(1);
        assert!(ulps(log_f32(tiny), (tiny as f64).ln()) <= 1.0);
    }

    #[test]
    fn sin_cos_accuracy_and_special_values() {
        check(sin_f32, f64::sin, -262144.0, 262144.0, 2.0);
        check(cos_f32, f64::cos, -262144.0, 262144.0, 2.0);
        check(sin_f32, f64::sin, -3.0, 3.0, 2.0);
        check(sin_f32, f64::sin, -1e30, 1e30, 2.0);
        check(cos_f32, f64::cos, -10.0, 10.0, 2.0);
        assert_eq!(sin_f32(-0.0).to_bits(), (-0.0f32).to_bits());
        assert_eq!(sin_f32(0.0), 0.0);
        assert_eq!(cos_f32(0.0), 1.0);
        assert!(sin_f32(f32::INFINITY).is_nan());
        assert!(cos_f32(f32::NEG_INFINITY).is_nan());
        assert!(sin_f32(f32::NAN).is_nan());
        let xs = [0.5f32, -3.0, 1e4, -2e6, 7.0, f32::INFINITY, f32::NAN, 3e5];
        let mut s = [0f32; 8];
        let mut c = [0f32; 8];
        unsafe {
            sin_f32_slice(xs.as_ptr(), s.as_mut_ptr(), 8);
            cos_f32_slice(xs.as_ptr(), c.as_mut_ptr(), 8);
        }
        for i in 0..8 {
            let (es, ec) = (sin_f32(xs[i]), cos_f32(xs[i]));
            assert!(s[i] == es || (s[i].is_nan() && es.is_nan()), "{}", xs[i]);
            assert!(c[i] == ec || (c[i].is_nan() && ec.is_nan()), "{}", xs[i]);
        }
    }
}
