//! Scalar semantics of the arithmetic and bitwise ops for every element type, as NumPy defines
//! them: wrapping integers, integer division by zero giving 0, Python's floor division and
//! modulo, NaN-propagating maximum/minimum, shifts past the bit width.

use half::{bf16, f16};

use super::element::{Elem, Half, B8};

/// Arithmetic on one element type (bool: `+` is or, `*` is and).
pub(crate) trait Num: Elem {
    fn add(self, o: Self) -> Self;
    fn sub(self, o: Self) -> Self;
    fn mul(self, o: Self) -> Self;
    /// Python's `//` (integers: 0 when dividing by zero).
    fn floordiv(self, o: Self) -> Self;
    /// Python's `%`: the sign of the divisor (integers: 0 when dividing by zero).
    fn rem(self, o: Self) -> Self;
    /// Larger of the two, NaN if either is NaN.
    fn maxn(self, o: Self) -> Self;
    /// Smaller of the two, NaN if either is NaN.
    fn minn(self, o: Self) -> Self;
    /// `self ** o` (integers: wrapping; a negative exponent is rejected before this is called).
    fn pow(self, o: Self) -> Self;
    fn abs_(self) -> Self;
    fn neg_(self) -> Self;
    fn sign_(self) -> Self;
    fn square_(self) -> Self;
    fn floor_(self) -> Self;
    fn ceil_(self) -> Self;
    /// Round half to even.
    fn round_(self) -> Self;
    fn trunc_(self) -> Self;
    fn isinf_(self) -> bool;
    fn isfinite_(self) -> bool;
    /// True when the sign bit is set (negative integers; floats including -0.0 and -NaN).
    fn signbit_(self) -> bool;
}

/// Bitwise ops on bool and integers.
pub(crate) trait Bits: Elem {
    fn and(self, o: Self) -> Self;
    fn or(self, o: Self) -> Self;
    fn xor(self, o: Self) -> Self;
    fn not(self) -> Self;
    /// `<<`; 0 when shifting by the bit width or more (or a negative amount).
    fn shl(self, o: Self) -> Self;
    /// `>>`; 0 (or -1 for negative signed values) when shifting by the bit width or more.
    fn shr(self, o: Self) -> Self;
}

#[inline(always)]
fn wrapping_pow_u64(base: u64, mut e: u64) -> u64 {
    let (mut acc, mut b) = (1u64, base);
    while e > 0 {
        if e & 1 == 1 {
            acc = acc.wrapping_mul(b);
        }
        b = b.wrapping_mul(b);
        e >>= 1;
    }
    acc
}

macro_rules! int_common {
    ($t:ty) => {
        #[inline(always)]
        fn add(self, o: Self) -> Self {
            self.wrapping_add(o)
        }
        #[inline(always)]
        fn sub(self, o: Self) -> Self {
            self.wrapping_sub(o)
        }
        #[inline(always)]
        fn mul(self, o: Self) -> Self {
            self.wrapping_mul(o)
        }
        #[inline(always)]
        fn maxn(self, o: Self) -> Self {
            if self >= o {
                self
            } else {
                o
            }
        }
        #[inline(always)]
        fn minn(self, o: Self) -> Self {
            if self <= o {
                self
            } else {
                o
            }
        }
        #[inline(always)]
        fn pow(self, o: Self) -> Self {
            if (o as i128) < 0 {
                return 0;
            }
            // Products modulo 2^64 truncate to products modulo 2^bits.
            wrapping_pow_u64(self as u64, o as u64) as $t
        }
        #[inline(always)]
        fn neg_(self) -> Self {
            self.wrapping_neg()
        }
        #[inline(always)]
        fn square_(self) -> Self {
            self.wrapping_mul(self)
        }
        #[inline(always)]
        fn floor_(self) -> Self {
            self
        }
        #[inline(always)]
        fn ceil_(self) -> Self {
            self
        }
        #[inline(always)]
        fn round_(self) -> Self {
            self
        }
        #[inline(always)]
        fn trunc_(self) -> Self {
            self
        }
        #[inline(always)]
        fn isinf_(self) -> bool {
            false
        }
        #[inline(always)]
        fn isfinite_(self) -> bool {
            true
        }
    };
}

macro_rules! bits_int {
    ($t:ty, $signed:expr) => {
        impl Bits for $t {
            #[inline(always)]
            fn and(self, o: Self) -> Self {
                self & o
            }
            #[inline(always)]
            fn or(self, o: Self) -> Self {
                self | o
            }
            #[inline(always)]
            fn xor(self, o: Self) -> Self {
                self ^ o
            }
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn shl(self, o: Self) -> Self {
                if (o as u64) < <$t>::BITS as u64 {
                    self << (o as u32)
                } else {
                    0
                }
            }
            #[inline(always)]
            #[allow(unused_comparisons)]
            fn shr(self, o: Self) -> Self {
                if (o as u64) < <$t>::BITS as u64 {
                    self >> (o as u32)
                } else if $signed && self < 0 {
                    !0
                } else {
                    0
                }
            }
        }
    };
}

macro_rules! signed_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            int_common!($t);
            #[inline(always)]
            fn floordiv(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                let q = self.wrapping_div(o);
                if self.wrapping_rem(o) != 0 && ((self < 0) != (o < 0)) {
                    q.wrapping_sub(1)
                } else {
                    q
                }
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                if o == 0 {
                    return 0;
                }
                let r = self.wrapping_rem(o);
                if r != 0 && ((r < 0) != (o < 0)) {
                    r.wrapping_add(o)
                } else {
                    r
                }
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                self.wrapping_abs()
            }
            #[inline(always)]
            fn sign_(self) -> Self {
                self.signum()
            }
            #[inline(always)]
            fn signbit_(self) -> bool {
                self < 0
            }
        }
        bits_int!($t, true);
    )*};
}
signed_num!(i8, i16, i32, i64);

macro_rules! unsigned_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            int_common!($t);
            #[inline(always)]
            fn floordiv(self, o: Self) -> Self {
                self.checked_div(o).unwrap_or(0)
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                self.checked_rem(o).unwrap_or(0)
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                self
            }
            #[inline(always)]
            fn sign_(self) -> Self {
                (self > 0) as $t
            }
            #[inline(always)]
            fn signbit_(self) -> bool {
                false
            }
        }
        bits_int!($t, false);
    )*};
}
unsigned_num!(u8, u16, u32, u64);

impl Num for B8 {
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        B8(self.0 | o.0)
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        B8(self.0 ^ o.0)
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    #[inline(always)]
    fn floordiv(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    #[inline(always)]
    fn rem(self, _o: Self) -> Self {
        B8(0)
    }
    #[inline(always)]
    fn maxn(self, o: Self) -> Self {
        B8(self.0 | o.0)
    }
    #[inline(always)]
    fn minn(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    #[inline(always)]
    fn pow(self, o: Self) -> Self {
        B8(self.0 | (o.0 ^ 1))
    }
    #[inline(always)]
    fn abs_(self) -> Self {
        self
    }
    #[inline(always)]
    fn neg_(self) -> Self {
        self
    }
    #[inline(always)]
    fn sign_(self) -> Self {
        self
    }
    #[inline(always)]
    fn square_(self) -> Self {
        self
    }
    #[inline(always)]
    fn floor_(self) -> Self {
        self
    }
    #[inline(always)]
    fn ceil_(self) -> Self {
        self
    }
    #[inline(always)]
    fn round_(self) -> Self {
        self
    }
    #[inline(always)]
    fn trunc_(self) -> Self {
        self
    }
    #[inline(always)]
    fn isinf_(self) -> bool {
        false
    }
    #[inline(always)]
    fn isfinite_(self) -> bool {
        true
    }
    #[inline(always)]
    fn signbit_(self) -> bool {
        false
    }
}

impl Bits for B8 {
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        B8(self.0 & o.0)
    }
    #[inline(always)]
    fn or(self, o: Self) -> Self {
        B8(self.0 | o.0)
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        B8(self.0 ^ o.0)
    }
    #[inline(always)]
    fn not(self) -> Self {
        B8(self.0 ^ 1)
    }
    #[inline(always)]
    fn shl(self, _o: Self) -> Self {
        self
    }
    #[inline(always)]
    fn shr(self, _o: Self) -> Self {
        self
    }
}

macro_rules! float_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
            #[inline(always)]
            fn floordiv(self, o: Self) -> Self {
                divmod(self, o).0
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                divmod(self, o).1
            }
            #[inline(always)]
            fn maxn(self, o: Self) -> Self {
                if self >= o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn minn(self, o: Self) -> Self {
                if self <= o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                self.powf(o)
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn neg_(self) -> Self {
                -self
            }
            #[inline(always)]
            fn sign_(self) -> Self {
                if self > 0.0 {
                    1.0
                } else if self < 0.0 {
                    -1.0
                } else if self == 0.0 {
                    0.0
                } else {
                    self
                }
            }
            #[inline(always)]
            fn square_(self) -> Self {
                self * self
            }
            #[inline(always)]
            fn floor_(self) -> Self {
                self.floor()
            }
            #[inline(always)]
            fn ceil_(self) -> Self {
                self.ceil()
            }
            #[inline(always)]
            fn round_(self) -> Self {
                self.round_ties_even()
            }
            #[inline(always)]
            fn trunc_(self) -> Self {
                self.trunc()
            }
            #[inline(always)]
            fn isinf_(self) -> bool {
                self.is_infinite()
            }
            #[inline(always)]
            fn isfinite_(self) -> bool {
                self.is_finite()
            }
            #[inline(always)]
            fn signbit_(self) -> bool {
                self.is_sign_negative()
            }
        }
    )*};
}
float_num!(f32, f64);

/// NumPy's `divmod` for floats: `(a // b, a % b)` with Python's signs.
#[inline(always)]
fn divmod<F: FloatOps>(a: F, b: F) -> (F, F) {
    let m = a.fmod(b);
    if b == F::ZERO {
        return (a / b, m);
    }
    let mut div = (a - m) / b;
    let mut m = m;
    if m != F::ZERO {
        if (b < F::ZERO) != (m < F::ZERO) {
            m = m + b;
            div = div - F::ONE;
        }
    } else {
        m = F::ZERO.copysign(b);
    }
    let fd = if div != F::ZERO {
        let mut fd = div.floor();
        if div - fd > F::HALF {
            fd = fd + F::ONE;
        }
        fd
    } else {
        F::ZERO.copysign(a / b)
    };
    (fd, m)
}

/// The few float operations `divmod` needs, for f32 and f64.
trait FloatOps:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const HALF: Self;
    fn fmod(self, o: Self) -> Self;
    fn floor(self) -> Self;
    fn copysign(self, s: Self) -> Self;
}
macro_rules! float_ops {
    ($($t:ty),*) => {$(
        impl FloatOps for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const HALF: Self = 0.5;
            #[inline(always)]
            fn fmod(self, o: Self) -> Self {
                self % o
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn copysign(self, s: Self) -> Self {
                <$t>::copysign(self, s)
            }
        }
    )*};
}
float_ops!(f32, f64);

macro_rules! half_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                via2(self, o, |a, b| a + b)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                via2(self, o, |a, b| a - b)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                via2(self, o, |a, b| a * b)
            }
            #[inline(always)]
            fn floordiv(self, o: Self) -> Self {
                via2(self, o, Num::floordiv)
            }
            #[inline(always)]
            fn rem(self, o: Self) -> Self {
                via2(self, o, Num::rem)
            }
            #[inline(always)]
            fn maxn(self, o: Self) -> Self {
                if self >= o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn minn(self, o: Self) -> Self {
                if self <= o || self.is_nan() {
                    self
                } else {
                    o
                }
            }
            #[inline(always)]
            fn pow(self, o: Self) -> Self {
                via2(self, o, f32::powf)
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                <$t>::from_bits(self.to_bits() & 0x7fff)
            }
            #[inline(always)]
            fn neg_(self) -> Self {
                <$t>::from_bits(self.to_bits() ^ 0x8000)
            }
            #[inline(always)]
            fn sign_(self) -> Self {
                via1(self, Num::sign_)
            }
            #[inline(always)]
            fn square_(self) -> Self {
                via1(self, |a| a * a)
            }
            #[inline(always)]
            fn floor_(self) -> Self {
                via1(self, f32::floor)
            }
            #[inline(always)]
            fn ceil_(self) -> Self {
                via1(self, f32::ceil)
            }
            #[inline(always)]
            fn round_(self) -> Self {
                via1(self, f32::round_ties_even)
            }
            #[inline(always)]
            fn trunc_(self) -> Self {
                via1(self, f32::trunc)
            }
            #[inline(always)]
            fn isinf_(self) -> bool {
                self.is_infinite()
            }
            #[inline(always)]
            fn isfinite_(self) -> bool {
                self.is_finite()
            }
            #[inline(always)]
            fn signbit_(self) -> bool {
                self.is_sign_negative()
            }
        }
    )*};
}
half_num!(f16, bf16);

/// `f` computed in f32 and rounded back to the 16-bit type.
#[inline(always)]
pub(crate) fn via1<H: Half>(a: H, f: impl Fn(f32) -> f32) -> H {
    H::from_f32(f(a.to_f32()))
}

/// `f` computed in f32 and rounded back to the 16-bit type.
#[inline(always)]
pub(crate) fn via2<H: Half>(a: H, b: H, f: impl Fn(f32, f32) -> f32) -> H {
    H::from_f32(f(a.to_f32(), b.to_f32()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_division_follows_python() {
        assert_eq!(7i32.floordiv(-2), -4);
        assert_eq!((-7i32).floordiv(2), -4);
        assert_eq!((-7i32).rem(2), 1);
        assert_eq!(7i32.rem(-2), -1);
        assert_eq!(5i8.floordiv(0), 0);
        assert_eq!(5i8.rem(0), 0);
        assert_eq!(i8::MIN.floordiv(-1), i8::MIN);
        assert_eq!(i8::MIN.rem(-1), 0);
        assert_eq!(5u16.floordiv(0), 0);
        assert_eq!(7u16.rem(3), 1);
    }

    #[test]
    fn float_division_follows_numpy() {
        assert_eq!(7.0f64.floordiv(-2.0), -4.0);
        assert_eq!((-7.5f64).rem(2.0), 0.5);
        assert_eq!(7.5f32.rem(-2.0), -0.5);
        assert!(1.0f64.rem(0.0).is_nan());
        assert_eq!(1.0f64.floordiv(0.0), f64::INFINITY);
        assert!(0.0f64.floordiv(0.0).is_nan());
        assert!((-0.0f64).rem(3.0).to_bits() == 0.0f64.to_bits());
        assert!(2.0f64.rem(f64::INFINITY) == 2.0);
        assert_eq!(0.0f64.floordiv(-3.0).to_bits(), (-0.0f64).to_bits());
    }

    #[test]
    fn wrapping_and_shifts() {
        assert_eq!(i8::MIN.abs_(), i8::MIN);
        assert_eq!(127i8.add(1), -128);
        assert_eq!(3u8.sub(5), 254);
        assert_eq!(Num::pow(3i32, 4), 81);
        assert_eq!(Num::pow(2i8, 8), 0);
        assert_eq!(Num::pow(3u64, 0), 1);
        assert_eq!(1i32.shl(32), 0);
        assert_eq!(1i32.shl(-1), 0);
        assert_eq!((-8i32).shr(40), -1);
        assert_eq!(8i32.shr(40), 0);
        assert_eq!((-8i16).shr(1), -4);
        assert_eq!(1u8.shl(7), 128);
        assert_eq!(255u8.shr(8), 0);
    }

    #[test]
    fn float_sign_round_minmax() {
        assert!(f32::NAN.sign_().is_nan());
        assert_eq!((-3.0f64).sign_(), -1.0);
        assert_eq!(0.5f64.round_(), 0.0);
        assert_eq!(1.5f64.round_(), 2.0);
        assert_eq!(2.5f32.round_(), 2.0);
        assert_eq!((-2.5f32).round_(), -2.0);
        assert!(1.0f32.maxn(f32::NAN).is_nan());
        assert!(f32::NAN.minn(1.0).is_nan());
        assert_eq!(1.0f32.maxn(2.0), 2.0);
        let h = f16::from_f32(2.5);
        assert_eq!(h.round_(), f16::from_f32(2.0));
        assert!(f16::NAN.maxn(f16::ONE).is_nan());
        assert_eq!(f16::from_f32(-1.5).abs_(), f16::from_f32(1.5));
        assert_eq!(B8(1).add(B8(1)), B8(1));
        assert_eq!(B8(1).not(), B8(0));
    }
}
