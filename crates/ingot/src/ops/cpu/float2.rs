//! Two-argument float functions with NumPy's special cases: `copysign`, `hypot`, `logaddexp`,
//! `nextafter` (the last also on the bits of float16 and bfloat16, where stepping through f32
//! would not give the neighbouring 16-bit value).

use half::{bf16, f16};

/// `log(exp(a) + exp(b))`: `max + log1p(exp(-|a - b|))`; equal arguments (infinities included)
/// give `a + ln 2`, NaN propagates.
#[inline(always)]
pub(crate) fn logaddexp_f64(a: f64, b: f64) -> f64 {
    if a == b {
        return a + std::f64::consts::LN_2;
    }
    let d = a - b;
    if d > 0.0 {
        a + (-d).exp().ln_1p()
    } else if d <= 0.0 {
        b + d.exp().ln_1p()
    } else {
        d
    }
}

/// [`logaddexp_f64`] in f32.
#[inline(always)]
pub(crate) fn logaddexp_f32(a: f32, b: f32) -> f32 {
    if a == b {
        return a + std::f32::consts::LN_2;
    }
    let d = a - b;
    if d > 0.0 {
        a + (-d).exp().ln_1p()
    } else if d <= 0.0 {
        b + d.exp().ln_1p()
    } else {
        d
    }
}

/// Float bit patterns for [`nextafter_bits`].
pub(crate) trait FloatBits: Copy {
    /// The value's bits, widened to u64.
    fn bits(self) -> u64;
    /// The value with these bits (truncated to the type's width).
    fn from_bits(b: u64) -> Self;
    /// The sign bit.
    const SIGN: u64;
    /// The value as f64 (exact), for comparisons.
    fn f64(self) -> f64;
}

macro_rules! float_bits {
    ($($t:ty, $u:ty, $sign:expr, |$v:ident| $f:expr);* $(;)?) => {$(
        impl FloatBits for $t {
            #[inline(always)]
            fn bits(self) -> u64 {
                self.to_bits() as u64
            }
            #[inline(always)]
            fn from_bits(b: u64) -> Self {
                <$t>::from_bits(b as $u)
            }
            const SIGN: u64 = $sign;
            #[inline(always)]
            fn f64(self) -> f64 {
                let $v = self;
                $f
            }
        }
    )*};
}
float_bits! {
    f16, u16, 0x8000, |v| v.to_f64();
    bf16, u16, 0x8000, |v| v.to_f64();
    f32, u32, 0x8000_0000, |v| v as f64;
    f64, u64, 0x8000_0000_0000_0000, |v| v;
}

/// The next value after `x` toward `y` in `x`'s type: NaN when either is NaN, `y` when they are
/// equal, the smallest subnormal with `y`'s sign after a zero, else one step of the bit pattern.
#[inline(always)]
pub(crate) fn nextafter_bits<F: FloatBits>(x: F, y: F) -> F {
    let (a, b) = (x.f64(), y.f64());
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() { x } else { y };
    }
    if a == b {
        return y;
    }
    if a == 0.0 {
        return F::from_bits((y.bits() & F::SIGN) | 1);
    }
    let up = (a < b) == (a > 0.0);
    let u = x.bits();
    F::from_bits(if up { u + 1 } else { u - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nextafter_matches_libm_semantics() {
        assert_eq!(nextafter_bits(1.0f64, 2.0), 1.0 + f64::EPSILON);
        assert_eq!(nextafter_bits(1.0f32, 0.0), 1.0 - f32::EPSILON / 2.0);
        assert_eq!(
            nextafter_bits(0.0f64, -1.0).to_bits(),
            (-0.0f64).to_bits() | 1
        );
        assert_eq!(nextafter_bits(-0.0f32, 1.0).to_bits(), 1);
        assert_eq!(nextafter_bits(f32::MAX, f32::INFINITY), f32::INFINITY);
        assert_eq!(nextafter_bits(f32::INFINITY, 0.0), f32::MAX);
        assert_eq!(nextafter_bits(-1.0f64, -2.0), -1.0 - f64::EPSILON);
        assert!(nextafter_bits(f64::NAN, 1.0).is_nan());
        assert_eq!(nextafter_bits(0.0f64, -0.0).to_bits(), (-0.0f64).to_bits());
        let h = nextafter_bits(f16::ONE, f16::from_f32(2.0));
        assert_eq!(h.to_bits(), f16::ONE.to_bits() + 1);
        let b = nextafter_bits(bf16::ONE, bf16::ZERO);
        assert_eq!(b.to_bits(), bf16::ONE.to_bits() - 1);
    }

    #[test]
    fn logaddexp_special_values() {
        assert_eq!(logaddexp_f64(f64::INFINITY, f64::INFINITY), f64::INFINITY);
        assert_eq!(
            logaddexp_f64(f64::NEG_INFINITY, f64::NEG_INFINITY),
            f64::NEG_INFINITY
        );
        assert_eq!(logaddexp_f64(f64::NEG_INFINITY, 3.0), 3.0);
        assert!(logaddexp_f64(f64::NAN, 3.0).is_nan());
        assert!((logaddexp_f64(1000.0, 1000.0) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert!((logaddexp_f32(0.0, 0.0) - 2f32.ln()).abs() < 1e-7);
    }
}
