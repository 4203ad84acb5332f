//! One Rust type per dtype, NumPy's conversions between them, and the dtype dispatch macro.

use half::{bf16, f16};

use crate::dtype::{DType, Kind};

/// A bool element as stored: one byte, 0 or 1 (any nonzero byte reads as true).
#[derive(Copy, Clone, Default, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
pub(crate) struct B8(pub u8);

impl B8 {
    /// The stored truth value.
    #[inline(always)]
    pub(crate) fn get(self) -> bool {
        self.0 != 0
    }
    /// A stored truth value.
    #[inline(always)]
    pub(crate) fn new(v: bool) -> B8 {
        B8(v as u8)
    }
}

/// An element type of a dtype, with NumPy's `astype` conversions from the widest types.
pub(crate) trait Elem:
    Copy + Send + Sync + Default + PartialEq + PartialOrd + std::fmt::Debug + 'static
{
    /// The dtype stored as this type.
    const DTYPE: DType;
    /// The accumulator of `sum`/`prod` (wrapping int64/uint64, float32 for the small floats).
    type SumAcc: Acc;
    /// The accumulator of `mean` (float64 for integers).
    type MeanAcc: Acc;
    /// The result of `sum`/`prod` (int64/uint64 for integers and bool, the type itself for floats).
    type SumOut: Elem;
    /// The result of `mean`/`var`/`std` (float64 for integers and bool).
    type MeanOut: Elem;
    /// The value as `f64`.
    fn to_f64(self) -> f64;
    /// The value as `i64` (integers wrap, floats as [`f64_to_i64`]).
    fn to_i64(self) -> i64;
    /// The value as `u64` (integers wrap, floats as [`f64_to_u64`]).
    fn to_u64(self) -> u64;
    /// From `f64` with C/x86-64 conversion rules (truncation toward zero for integers).
    fn from_f64(v: f64) -> Self;
    /// From `i64` (integers wrap, floats round to nearest even).
    fn from_i64(v: i64) -> Self;
    /// From `u64` (integers wrap, floats round to nearest even).
    fn from_u64(v: u64) -> Self;
    /// 0 or 1.
    fn from_bool(v: bool) -> Self;
    /// True unless zero (NaN is nonzero).
    fn nonzero(self) -> bool;
    /// True for a NaN.
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn is_nan_(self) -> bool {
        self != self
    }
    /// The imaginary part as `f64` (zero for real types).
    #[inline(always)]
    fn im_f64(self) -> f64 {
        0.0
    }
    /// From a complex value: real types keep the real part (NumPy's `astype`).
    #[inline(always)]
    fn from_complex(re: f64, im: f64) -> Self {
        let _ = im;
        Self::from_f64(re)
    }
}

/// Float to int32 as x86-64's `cvttsd2si` does: NaN and out-of-range give `i32::MIN`.
#[inline(always)]
pub(crate) fn f64_to_i32(v: f64) -> i32 {
    if v > -2147483649.0 && v < 2147483648.0 {
        v as i32
    } else {
        i32::MIN
    }
}

/// Float to int64 as x86-64's `cvttsd2si` does: NaN and out-of-range give `i64::MIN`.
#[inline(always)]
pub(crate) fn f64_to_i64(v: f64) -> i64 {
    if (-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&v) {
        v as i64
    } else {
        i64::MIN
    }
}

/// Float to uint64 as NumPy on x86-64: negatives wrap through int64, NaN and out-of-range give 2^63.
#[inline(always)]
pub(crate) fn f64_to_u64(v: f64) -> u64 {
    if (0.0..18_446_744_073_709_551_616.0).contains(&v) {
        v as u64
    } else if (-9.223_372_036_854_776e18..0.0).contains(&v) {
        v as i64 as u64
    } else {
        1u64 << 63
    }
}

macro_rules! int_elem {
    ($t:ty, $d:ident, $sum:ty, $from_f:expr) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            type SumAcc = $sum;
            type MeanAcc = f64;
            type SumOut = $sum;
            type MeanOut = f64;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                let f: fn(f64) -> $t = $from_f;
                f(v)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                v as $t
            }
            #[inline(always)]
            fn nonzero(self) -> bool {
                self != 0
            }
        }
    };
}
int_elem!(i8, Int8, i64, |v| f64_to_i32(v) as i8);
int_elem!(i16, Int16, i64, |v| f64_to_i32(v) as i16);
int_elem!(i32, Int32, i64, f64_to_i32);
int_elem!(i64, Int64, i64, f64_to_i64);
int_elem!(u8, UInt8, u64, |v| f64_to_i32(v) as u8);
int_elem!(u16, UInt16, u64, |v| f64_to_i32(v) as u16);
int_elem!(u32, UInt32, u64, |v| f64_to_i64(v) as u32);
int_elem!(u64, UInt64, u64, f64_to_u64);

impl Elem for B8 {
    const DTYPE: DType = DType::Bool;
    type SumAcc = i64;
    type MeanAcc = f64;
    type SumOut = i64;
    type MeanOut = f64;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self.get() as u8 as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self.get() as i64
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        self.get() as u64
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        B8::new(v != 0.0)
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        B8::new(v != 0)
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        B8::new(v != 0)
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        B8::new(v)
    }
    #[inline(always)]
    fn nonzero(self) -> bool {
        self.get()
    }
}

impl Elem for f32 {
    const DTYPE: DType = DType::Float32;
    type SumAcc = f32;
    type MeanAcc = f32;
    type SumOut = f32;
    type MeanOut = f32;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        f64_to_i64(self as f64)
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        f64_to_u64(self as f64)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v as u8 as f32
    }
    #[inline(always)]
    fn nonzero(self) -> bool {
        self != 0.0
    }
}

impl Elem for f64 {
    const DTYPE: DType = DType::Float64;
    type SumAcc = f64;
    type MeanAcc = f64;
    type SumOut = f64;
    type MeanOut = f64;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        f64_to_i64(self)
    }
    #[inline(always)]
    fn to_u64(self) -> u64 {
        f64_to_u64(self)
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v as f64
    }
    #[inline(always)]
    fn from_u64(v: u64) -> Self {
        v as f64
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v as u8 as f64
    }
    #[inline(always)]
    fn nonzero(self) -> bool {
        self != 0.0
    }
}

/// A `complex64` element (`re`, `im` as two `f32`), ordered lexicographically as NumPy sorts.
#[derive(Copy, Clone, Default, Debug, PartialEq)]
#[repr(transparent)]
pub(crate) struct C32(pub num_complex::Complex<f32>);

/// A `complex128` element (`re`, `im` as two `f64`), ordered lexicographically.
#[derive(Copy, Clone, Default, Debug, PartialEq)]
#[repr(transparent)]
pub(crate) struct C64(pub num_complex::Complex<f64>);

macro_rules! complex_elem {
    ($t:ident, $f:ty, $d:ident) => {
        impl PartialOrd for $t {
            fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
                match self.0.re.partial_cmp(&o.0.re)? {
                    std::cmp::Ordering::Equal => self.0.im.partial_cmp(&o.0.im),
                    ord => Some(ord),
                }
            }
        }
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            type SumAcc = $t;
            type MeanAcc = $t;
            type SumOut = $t;
            type MeanOut = $t;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.0.re as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                f64_to_i64(self.0.re as f64)
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                f64_to_u64(self.0.re as f64)
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                $t(num_complex::Complex::new(v as $f, 0.0))
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                $t(num_complex::Complex::new(v as $f, 0.0))
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                $t(num_complex::Complex::new(v as $f, 0.0))
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                $t(num_complex::Complex::new(v as u8 as $f, 0.0))
            }
            #[inline(always)]
            fn nonzero(self) -> bool {
                self.0.re != 0.0 || self.0.im != 0.0
            }
            #[inline(always)]
            fn is_nan_(self) -> bool {
                self.0.re.is_nan() || self.0.im.is_nan()
            }
            #[inline(always)]
            fn im_f64(self) -> f64 {
                self.0.im as f64
            }
            #[inline(always)]
            fn from_complex(re: f64, im: f64) -> Self {
                $t(num_complex::Complex::new(re as $f, im as $f))
            }
        }
        impl Acc for $t {
            const ZERO: Self = $t(num_complex::Complex::new(0.0, 0.0));
            const ONE: Self = $t(num_complex::Complex::new(1.0, 0.0));
            #[inline(always)]
            fn acc_add(self, o: Self) -> Self {
                $t(self.0 + o.0)
            }
            #[inline(always)]
            fn acc_mul(self, o: Self) -> Self {
                $t(self.0 * o.0)
            }
        }
    };
}
complex_elem!(C32, f32, Complex64);
complex_elem!(C64, f64, Complex128);

/// The 16-bit floats, computed in `f32` and rounded back (round to nearest even).
pub(crate) trait Half: Elem {
    /// The value as `f32` (exact).
    fn to_f32(self) -> f32;
    /// The nearest value to `v`.
    fn from_f32(v: f32) -> Self;
}

macro_rules! half_elem {
    ($t:ty, $d:ident) => {
        impl Elem for $t {
            const DTYPE: DType = DType::$d;
            type SumAcc = f32;
            type MeanAcc = f32;
            type SumOut = $t;
            type MeanOut = $t;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                <$t>::to_f64(self)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                f64_to_i64(<$t>::to_f64(self))
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                f64_to_u64(<$t>::to_f64(self))
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::from_f32(crate::dtype::f64_to_f32_odd(v))
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                Self::from_f64(v as f64)
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                Self::from_f64(v as f64)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                if v {
                    <$t>::ONE
                } else {
                    <$t>::ZERO
                }
            }
            #[inline(always)]
            fn nonzero(self) -> bool {
                (self.to_bits() & 0x7fff) != 0
            }
        }
        impl Half for $t {
            #[inline(always)]
            fn to_f32(self) -> f32 {
                <$t>::to_f32(self)
            }
            #[inline(always)]
            fn from_f32(v: f32) -> Self {
                <$t>::from_f32(v)
            }
        }
    };
}
half_elem!(f16, Float16);
half_elem!(bf16, BFloat16);

/// An accumulator type: int64/uint64 (wrapping), float32, float64.
pub(crate) trait Acc: Elem {
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// Addition (wrapping for integers).
    fn acc_add(self, o: Self) -> Self;
    /// Multiplication (wrapping for integers).
    fn acc_mul(self, o: Self) -> Self;
}

macro_rules! acc_int {
    ($t:ty) => {
        impl Acc for $t {
            const ZERO: Self = 0;
            const ONE: Self = 1;
            #[inline(always)]
            fn acc_add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn acc_mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
        }
    };
}
acc_int!(i64);
acc_int!(u64);
macro_rules! acc_float {
    ($t:ty) => {
        impl Acc for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            #[inline(always)]
            fn acc_add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn acc_mul(self, o: Self) -> Self {
                self * o
            }
        }
    };
}
acc_float!(f32);
acc_float!(f64);

/// Converts one element with NumPy's `astype` rules.
#[inline(always)]
pub(crate) fn cast<S: Elem, D: Elem>(s: S) -> D {
    if S::DTYPE as u8 == D::DTYPE as u8 {
        // SAFETY: one dtype has one element type, so S and D are the same type.
        return unsafe { std::mem::transmute_copy::<S, D>(&s) };
    }
    match S::DTYPE.kind() {
        Kind::Bool => D::from_bool(s.nonzero()),
        Kind::SignedInt => D::from_i64(s.to_i64()),
        Kind::UnsignedInt => D::from_u64(s.to_u64()),
        Kind::Float => {
            if D::DTYPE as u8 == DType::Bool as u8 {
                D::from_bool(s.nonzero())
            } else {
                D::from_f64(s.to_f64())
            }
        }
        Kind::Complex => {
            if D::DTYPE as u8 == DType::Bool as u8 {
                D::from_bool(s.nonzero())
            } else {
                D::from_complex(s.to_f64(), s.im_f64())
            }
        }
    }
}

/// Runs `$body` with `$T` bound to the element type of the real dtype `$dt`; a complex dtype
/// returns an `UnsupportedDType` error from the enclosing function (the complex ops route
/// complex arrays to `complex.rs` before they get here, so this names what is still missing).
macro_rules! dispatch {
    ($dt:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dt {
            __d @ (__D::Complex64 | __D::Complex128) => {
                return Err($crate::error::Error::UnsupportedDType {
                    op: "this operation (on the CPU)",
                    dtype: __d.to_string(),
                })
            }
            __D::Bool => {
                type $T = $crate::ops::cpu::element::B8;
                $body
            }
            __D::Int8 => {
                type $T = i8;
                $body
            }
            __D::Int16 => {
                type $T = i16;
                $body
            }
            __D::Int32 => {
                type $T = i32;
                $body
            }
            __D::Int64 => {
                type $T = i64;
                $body
            }
            __D::UInt8 => {
                type $T = u8;
                $body
            }
            __D::UInt16 => {
                type $T = u16;
                $body
            }
            __D::UInt32 => {
                type $T = u32;
                $body
            }
            __D::UInt64 => {
                type $T = u64;
                $body
            }
            __D::Float16 => {
                type $T = half::f16;
                $body
            }
            __D::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            __D::Float32 => {
                type $T = f32;
                $body
            }
            __D::Float64 => {
                type $T = f64;
                $body
            }
        }
    }};
}
pub(crate) use dispatch;

/// As [`dispatch!`], with the complex dtypes bound to [`C32`] and [`C64`] (for bodies generic
/// over [`Elem`] only: copies, casts, `where`).
macro_rules! dispatch_all {
    ($dt:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dt {
            __D::Complex64 => {
                type $T = $crate::ops::cpu::element::C32;
                $body
            }
            __D::Complex128 => {
                type $T = $crate::ops::cpu::element::C64;
                $body
            }
            __d => $crate::ops::cpu::element::dispatch!(__d, $T => $body),
        }
    }};
}
pub(crate) use dispatch_all;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_to_int_follows_x86() {
        assert_eq!(cast::<f64, i32>(f64::NAN), i32::MIN);
        assert_eq!(cast::<f64, i64>(1e30), i64::MIN);
        assert_eq!(cast::<f64, i8>(f64::NAN), 0);
        assert_eq!(cast::<f64, i8>(300.0), 44);
        assert_eq!(cast::<f64, u8>(-1.0), 255);
        assert_eq!(cast::<f32, i32>(-2.9), -2);
        assert_eq!(cast::<f64, u64>(-1.0), u64::MAX);
        assert_eq!(cast::<f64, u64>(1.8e19), 18_000_000_000_000_000_000);
        assert_eq!(cast::<f64, u32>(4e9), 4_000_000_000);
    }

    #[test]
    fn bool_and_half_conversions() {
        assert_eq!(cast::<f32, B8>(f32::NAN), B8(1));
        assert_eq!(cast::<f32, B8>(-0.0), B8(0));
        assert_eq!(cast::<i32, B8>(256), B8(1));
        assert_eq!(cast::<B8, f32>(B8(1)), 1.0);
        assert_eq!(cast::<f64, f16>(65520.0), f16::INFINITY);
        assert_eq!(cast::<f32, f16>(1.0 + 1.0 / 2048.0), f16::ONE); // ties to even
        assert_eq!(cast::<f16, B8>(f16::NEG_ZERO), B8(0));
        assert_eq!(cast::<bf16, f32>(bf16::from_f32(3.0)), 3.0);
        assert_eq!(cast::<i64, f32>(16_777_217), 16_777_216.0);
        assert_eq!(cast::<u64, i8>(255), -1);
        assert_eq!(cast::<i8, u64>(-1), u64::MAX);
    }
}
