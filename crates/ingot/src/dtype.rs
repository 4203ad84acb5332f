//! Data types, their properties, and type promotion.
//!
//! Promotion follows the Python array API standard where it defines a result, and NumPy 2 where
//! the standard leaves it to the implementation (mixed signed/unsigned 64-bit, integer with
//! float). `bfloat16` is not in the standard: with `float16` it promotes to `float32`, with
//! integers as `float16` does.

use std::fmt;

use half::{bf16, f16};

use crate::error::{Error, Result};

/// The element type of an array.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    Int8,
    Int16,
    Int32,
    Int64,
    UInt8,
    UInt16,
    UInt32,
    UInt64,
    Float16,
    BFloat16,
    Float32,
    Float64,
    /// Two `float32`: real part, then imaginary part (NumPy's and C's layout).
    Complex64,
    /// Two `float64`: real part, then imaginary part.
    Complex128,
}

/// The broad category of a dtype.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    Bool,
    SignedInt,
    UnsignedInt,
    Float,
    Complex,
}

impl DType {
    /// Every real dtype (bool, integers, floats), in a stable order. The complex dtypes are in
    /// [`DType::COMPLEX`]: most kernels and tables are per real dtype, and complex arrays are
    /// handled apart (natively on the CPU, as pairs of real parts on GPUs).
    pub const ALL: [DType; 13] = [
        DType::Bool,
        DType::Int8,
        DType::Int16,
        DType::Int32,
        DType::Int64,
        DType::UInt8,
        DType::UInt16,
        DType::UInt32,
        DType::UInt64,
        DType::Float16,
        DType::BFloat16,
        DType::Float32,
        DType::Float64,
    ];

    /// The complex dtypes.
    pub const COMPLEX: [DType; 2] = [DType::Complex64, DType::Complex128];

    /// Every dtype: [`DType::ALL`] then [`DType::COMPLEX`].
    pub fn every() -> impl Iterator<Item = DType> {
        DType::ALL.into_iter().chain(DType::COMPLEX)
    }

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::Bool | DType::Int8 | DType::UInt8 => 1,
            DType::Int16 | DType::UInt16 | DType::Float16 | DType::BFloat16 => 2,
            DType::Int32 | DType::UInt32 | DType::Float32 => 4,
            DType::Int64 | DType::UInt64 | DType::Float64 | DType::Complex64 => 8,
            DType::Complex128 => 16,
        }
    }

    /// The category of the dtype.
    pub const fn kind(self) -> Kind {
        match self {
            DType::Bool => Kind::Bool,
            DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => Kind::SignedInt,
            DType::UInt8 | DType::UInt16 | DType::UInt32 | DType::UInt64 => Kind::UnsignedInt,
            DType::Float16 | DType::BFloat16 | DType::Float32 | DType::Float64 => Kind::Float,
            DType::Complex64 | DType::Complex128 => Kind::Complex,
        }
    }

    /// True for `complex64` and `complex128`.
    pub const fn is_complex(self) -> bool {
        matches!(self.kind(), Kind::Complex)
    }

    /// The dtype of the real and imaginary parts of a complex dtype (`complex64` -> `float32`);
    /// other dtypes are their own real dtype.
    pub const fn real_dtype(self) -> DType {
        match self {
            DType::Complex64 => DType::Float32,
            DType::Complex128 => DType::Float64,
            d => d,
        }
    }

    /// The complex dtype whose parts hold this float dtype (`float32` -> `complex64`, the
    /// 16-bit floats -> `complex64`, `float64` -> `complex128`); complex dtypes stay, bool and
    /// integers give the complex dtype of [`DType::float_result`].
    pub const fn complex_dtype(self) -> DType {
        match self {
            DType::Complex64 | DType::Complex128 => self,
            DType::Float64 | DType::Int32 | DType::Int64 | DType::UInt32 | DType::UInt64 => {
                DType::Complex128
            }
            _ => DType::Complex64,
        }
    }

    /// True for the four floating-point dtypes.
    pub const fn is_float(self) -> bool {
        matches!(self.kind(), Kind::Float)
    }

    /// True for signed and unsigned integers (not bool).
    pub const fn is_integer(self) -> bool {
        matches!(self.kind(), Kind::SignedInt | Kind::UnsignedInt)
    }

    /// True for signed integers.
    pub const fn is_signed_integer(self) -> bool {
        matches!(self.kind(), Kind::SignedInt)
    }

    /// True for unsigned integers.
    pub const fn is_unsigned_integer(self) -> bool {
        matches!(self.kind(), Kind::UnsignedInt)
    }

    /// The canonical name, as NumPy spells it (`"float32"`, `"bool"`...).
    pub const fn name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "int8",
            DType::Int16 => "int16",
            DType::Int32 => "int32",
            DType::Int64 => "int64",
            DType::UInt8 => "uint8",
            DType::UInt16 => "uint16",
            DType::UInt32 => "uint32",
            DType::UInt64 => "uint64",
            DType::Float16 => "float16",
            DType::BFloat16 => "bfloat16",
            DType::Float32 => "float32",
            DType::Float64 => "float64",
            DType::Complex64 => "complex64",
            DType::Complex128 => "complex128",
        }
    }

    /// The short suffix used in kernel names (`f32`, `i8`, `bool`...).
    pub const fn short_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "i8",
            DType::Int16 => "i16",
            DType::Int32 => "i32",
            DType::Int64 => "i64",
            DType::UInt8 => "u8",
            DType::UInt16 => "u16",
            DType::UInt32 => "u32",
            DType::UInt64 => "u64",
            DType::Float16 => "f16",
            DType::BFloat16 => "bf16",
            DType::Float32 => "f32",
            DType::Float64 => "f64",
            DType::Complex64 => "c64",
            DType::Complex128 => "c128",
        }
    }

    /// The MSL spelling of the element type (`float`, `half`, `uchar`...).
    pub const fn msl_name(self) -> &'static str {
        match self {
            DType::Bool => "bool",
            DType::Int8 => "char",
            DType::Int16 => "short",
            DType::Int32 => "int",
            DType::Int64 => "long",
            DType::UInt8 => "uchar",
            DType::UInt16 => "ushort",
            DType::UInt32 => "uint",
            DType::UInt64 => "ulong",
            DType::Float16 => "half",
            DType::BFloat16 => "bfloat",
            DType::Float32 => "float",
            DType::Float64 => "double",
            // MSL has no complex type: the built-in kernels see (re, im) vectors.
            DType::Complex64 => "float2",
            DType::Complex128 => "double2",
        }
    }

    /// Parses a dtype name: canonical names, NumPy's short codes and common aliases.
    pub fn parse(name: &str) -> Result<DType> {
        let d = match name {
            "bool" | "bool_" | "?" | "b1" => DType::Bool,
            "int8" | "i1" | "b" | "char" => DType::Int8,
            "int16" | "i2" | "h" | "short" => DType::Int16,
            "int32" | "i4" | "i" | "int" => DType::Int32,
            "int64" | "i8" | "l" | "q" | "long" => DType::Int64,
            "uint8" | "u1" | "B" | "uchar" => DType::UInt8,
            "uint16" | "u2" | "H" | "ushort" => DType::UInt16,
            "uint32" | "u4" | "I" | "uint" => DType::UInt32,
            "uint64" | "u8" | "L" | "Q" | "ulong" => DType::UInt64,
            "float16" | "f2" | "e" | "half" => DType::Float16,
            "bfloat16" | "bfloat" => DType::BFloat16,
            "float32" | "f4" | "f" | "float" => DType::Float32,
            "float64" | "f8" | "d" | "double" => DType::Float64,
            "complex64" | "c8" | "F" | "cfloat" => DType::Complex64,
            "complex128" | "c16" | "D" | "complex" | "cdouble" => DType::Complex128,
            _ => return Err(Error::Type(format!("unknown dtype {name:?}"))),
        };
        Ok(d)
    }

    /// Bits of the significand and exponent range of a float dtype: `(bits, eps, max, min_positive_normal, smallest_subnormal)`.
    /// Complex dtypes give the limits of their parts (`complex64`: those of `float32`).
    pub fn finfo(self) -> Result<FloatInfo> {
        let info = match self.real_dtype() {
            DType::Float16 => FloatInfo {
                bits: 16,
                eps: f16::EPSILON.to_f64(),
                max: f16::MAX.to_f64(),
                min: f16::MIN.to_f64(),
                smallest_normal: f16::MIN_POSITIVE.to_f64(),
                smallest_subnormal: f16::from_bits(1).to_f64(),
            },
            DType::BFloat16 => FloatInfo {
                bits: 16,
                eps: bf16::EPSILON.to_f64(),
                max: bf16::MAX.to_f64(),
                min: bf16::MIN.to_f64(),
                smallest_normal: bf16::MIN_POSITIVE.to_f64(),
                smallest_subnormal: bf16::from_bits(1).to_f64(),
            },
            DType::Float32 => FloatInfo {
                bits: 32,
                eps: f32::EPSILON as f64,
                max: f32::MAX as f64,
                min: f32::MIN as f64,
                smallest_normal: f32::MIN_POSITIVE as f64,
                smallest_subnormal: f32::from_bits(1) as f64,
            },
            DType::Float64 => FloatInfo {
                bits: 64,
                eps: f64::EPSILON,
                max: f64::MAX,
                min: f64::MIN,
                smallest_normal: f64::MIN_POSITIVE,
                smallest_subnormal: f64::from_bits(1),
            },
            _ => {
                return Err(Error::Type(format!(
                    "finfo needs a floating-point dtype, got {self}"
                )))
            }
        };
        Ok(info)
    }

    /// Range of an integer dtype: `(bits, min, max)`.
    pub fn iinfo(self) -> Result<IntInfo> {
        let (bits, min, max): (u32, i128, i128) = match self {
            DType::Int8 => (8, i8::MIN as i128, i8::MAX as i128),
            DType::Int16 => (16, i16::MIN as i128, i16::MAX as i128),
            DType::Int32 => (32, i32::MIN as i128, i32::MAX as i128),
            DType::Int64 => (64, i64::MIN as i128, i64::MAX as i128),
            DType::UInt8 => (8, 0, u8::MAX as i128),
            DType::UInt16 => (16, 0, u16::MAX as i128),
            DType::UInt32 => (32, 0, u32::MAX as i128),
            DType::UInt64 => (64, 0, u64::MAX as i128),
            _ => {
                return Err(Error::Type(format!(
                    "iinfo needs an integer dtype, got {self}"
                )))
            }
        };
        Ok(IntInfo { bits, min, max })
    }

    /// The dtype that an array of `self` and an array of `other` promote to.
    pub fn promote(self, other: DType) -> DType {
        use DType::*;
        if self == other {
            return self;
        }
        match (self.kind(), other.kind()) {
            (Kind::Bool, _) => other,
            (_, Kind::Bool) => self,
            (Kind::Complex, _) => complex_with(self, other),
            (_, Kind::Complex) => complex_with(other, self),
            (Kind::Float, Kind::Float) => match (self, other) {
                (Float16, BFloat16) | (BFloat16, Float16) => Float32,
                _ => {
                    if self.size() >= other.size() {
                        self
                    } else {
                        other
                    }
                }
            },
            (Kind::Float, _) => float_with_int(self, other),
            (_, Kind::Float) => float_with_int(other, self),
            (Kind::SignedInt, Kind::SignedInt) | (Kind::UnsignedInt, Kind::UnsignedInt) => {
                if self.size() >= other.size() {
                    self
                } else {
                    other
                }
            }
            (Kind::SignedInt, Kind::UnsignedInt) => signed_with_unsigned(self, other),
            (Kind::UnsignedInt, Kind::SignedInt) => signed_with_unsigned(other, self),
        }
    }

    /// Whether a value of `self` can be cast to `to` without loss under promotion rules
    /// (the array API's `can_cast`: true when `promote(self, to) == to`).
    pub fn can_cast(self, to: DType) -> bool {
        self.promote(to) == to
    }

    /// NumPy's `same_kind` casting: within a kind, or up the order bool < unsigned < signed <
    /// float (the rule of in-place operators: `int_array += 1.5` is refused, `int32 += int64`
    /// is not).
    pub fn can_cast_same_kind(self, to: DType) -> bool {
        let rank = |d: DType| match d.kind() {
            Kind::Bool => 0,
            Kind::UnsignedInt => 1,
            Kind::SignedInt => 2,
            Kind::Float => 3,
            Kind::Complex => 4,
        };
        rank(self) <= rank(to)
    }

    /// The default floating-point dtype of results of integer inputs (`mean`, true division...).
    pub fn default_float() -> DType {
        DType::Float64
    }

    /// The default integer dtype (indices, `arange` of Python ints).
    pub fn default_int() -> DType {
        DType::Int64
    }

    /// The dtype a float op produces for this input: floats stay, bool and integers give `float64`
    /// (NumPy's rule for `sqrt`, `exp`, `/`...; int8/uint8 give float16 and int16/uint16 float32 in NumPy).
    pub fn float_result(self) -> DType {
        match self {
            DType::Float16
            | DType::BFloat16
            | DType::Float32
            | DType::Float64
            | DType::Complex64
            | DType::Complex128 => self,
            DType::Bool | DType::Int8 | DType::UInt8 => DType::Float16,
            DType::Int16 | DType::UInt16 => DType::Float32,
            _ => DType::Float64,
        }
    }
}

/// NumPy 2's promotion of a float with an integer: the smallest float that holds the integer's range.
fn float_with_int(float: DType, int: DType) -> DType {
    use DType::*;
    let needed = match int.size() {
        1 => Float16,
        2 => Float32,
        _ => Float64,
    };
    match float {
        BFloat16 => match needed {
            Float16 => BFloat16,
            other => other,
        },
        _ => {
            if float.size() >= needed.size() {
                float
            } else {
                needed
            }
        }
    }
}

/// A complex dtype with any other: the complex dtype whose parts hold the other's real
/// promotion (`complex64` with `float64` or `int32` gives `complex128`, as NumPy).
fn complex_with(complex: DType, other: DType) -> DType {
    let part = complex.real_dtype().promote(other.real_dtype());
    if part == DType::Float64 || complex == DType::Complex128 {
        DType::Complex128
    } else {
        DType::Complex64
    }
}

/// Signed with unsigned: the smallest signed integer holding both, `float64` past 64 bits (NumPy).
fn signed_with_unsigned(signed: DType, unsigned: DType) -> DType {
    use DType::*;
    if signed.size() > unsigned.size() {
        return signed;
    }
    match unsigned.size() {
        1 => Int16,
        2 => Int32,
        4 => Int64,
        _ => Float64,
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Properties of a floating-point dtype.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct FloatInfo {
    pub bits: u32,
    pub eps: f64,
    pub max: f64,
    pub min: f64,
    pub smallest_normal: f64,
    pub smallest_subnormal: f64,
}

/// Properties of an integer dtype.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IntInfo {
    pub bits: u32,
    pub min: i128,
    pub max: i128,
}

/// A single value of any dtype, used for fills, Python scalars and reduction results.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum Scalar {
    Bool(bool),
    Int(i64),
    UInt(u64),
    Float(f64),
    /// A complex value: `(real, imaginary)`.
    Complex(f64, f64),
}

impl Scalar {
    /// The value as `f64` (integers beyond 2^53 round).
    pub fn to_f64(self) -> f64 {
        match self {
            Scalar::Bool(b) => b as u8 as f64,
            Scalar::Int(i) => i as f64,
            Scalar::UInt(u) => u as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(re, _) => re,
        }
    }

    /// The imaginary part (zero for real values).
    pub fn imag(self) -> f64 {
        match self {
            Scalar::Complex(_, im) => im,
            _ => 0.0,
        }
    }

    /// True if the value is zero/false.
    pub fn is_zero(self) -> bool {
        match self {
            Scalar::Bool(b) => !b,
            Scalar::Int(i) => i == 0,
            Scalar::UInt(u) => u == 0,
            Scalar::Float(f) => f == 0.0,
            Scalar::Complex(re, im) => re == 0.0 && im == 0.0,
        }
    }

    /// Writes the value converted to `dtype` (C-style conversion: wrap for integers,
    /// truncation toward zero for float to integer, NaN to zero) into `out`, which must be
    /// `dtype.size()` bytes long.
    pub fn write_as(self, dtype: DType, out: &mut [u8]) {
        macro_rules! put {
            ($v:expr) => {{
                let bytes = $v.to_ne_bytes();
                out[..bytes.len()].copy_from_slice(&bytes);
            }};
        }
        match dtype {
            DType::Bool => out[0] = !self.is_zero() as u8,
            DType::Int8 => put!(self.to_i64_wrapping() as i8),
            DType::Int16 => put!(self.to_i64_wrapping() as i16),
            DType::Int32 => put!(self.to_i64_wrapping() as i32),
            DType::Int64 => put!(self.to_i64_wrapping()),
            DType::UInt8 => put!(self.to_i64_wrapping() as u8),
            DType::UInt16 => put!(self.to_i64_wrapping() as u16),
            DType::UInt32 => put!(self.to_i64_wrapping() as u32),
            DType::UInt64 => put!(self.to_u64_wrapping()),
            DType::Float16 => put!(f16::from_f32(f64_to_f32_odd(self.to_f64())).to_bits()),
            DType::BFloat16 => put!(bf16::from_f32(f64_to_f32_odd(self.to_f64())).to_bits()),
            DType::Float32 => put!(self.to_f64() as f32),
            DType::Float64 => put!(self.to_f64()),
            DType::Complex64 => {
                put!(self.to_f64() as f32);
                out[4..8].copy_from_slice(&(self.imag() as f32).to_ne_bytes());
            }
            DType::Complex128 => {
                put!(self.to_f64());
                out[8..16].copy_from_slice(&self.imag().to_ne_bytes());
            }
        }
    }

    /// The bytes of the value converted to `dtype` (see [`Scalar::write_as`]).
    pub fn to_bytes(self, dtype: DType) -> Vec<u8> {
        let mut v = vec![0u8; dtype.size()];
        self.write_as(dtype, &mut v);
        v
    }

    /// Reads one element of `dtype` from `bytes`.
    pub fn read_from(dtype: DType, bytes: &[u8]) -> Scalar {
        macro_rules! get {
            ($t:ty) => {{
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(&bytes[..std::mem::size_of::<$t>()]);
                <$t>::from_ne_bytes(b)
            }};
        }
        match dtype {
            DType::Bool => Scalar::Bool(bytes[0] != 0),
            DType::Int8 => Scalar::Int(get!(i8) as i64),
            DType::Int16 => Scalar::Int(get!(i16) as i64),
            DType::Int32 => Scalar::Int(get!(i32) as i64),
            DType::Int64 => Scalar::Int(get!(i64)),
            DType::UInt8 => Scalar::UInt(get!(u8) as u64),
            DType::UInt16 => Scalar::UInt(get!(u16) as u64),
            DType::UInt32 => Scalar::UInt(get!(u32) as u64),
            DType::UInt64 => Scalar::UInt(get!(u64)),
            DType::Float16 => Scalar::Float(f16::from_bits(get!(u16)).to_f64()),
            DType::BFloat16 => Scalar::Float(bf16::from_bits(get!(u16)).to_f64()),
            DType::Float32 => Scalar::Float(get!(f32) as f64),
            DType::Float64 => Scalar::Float(get!(f64)),
            DType::Complex64 => {
                let re = get!(f32) as f64;
                let im = Scalar::read_from(DType::Float32, &bytes[4..8]).to_f64();
                Scalar::Complex(re, im)
            }
            DType::Complex128 => {
                let re = get!(f64);
                let im = Scalar::read_from(DType::Float64, &bytes[8..16]).to_f64();
                Scalar::Complex(re, im)
            }
        }
    }

    fn to_i64_wrapping(self) -> i64 {
        match self {
            Scalar::Bool(b) => b as i64,
            Scalar::Int(i) => i,
            Scalar::UInt(u) => u as i64,
            Scalar::Float(f) | Scalar::Complex(f, _) => float_to_i64(f),
        }
    }

    fn to_u64_wrapping(self) -> u64 {
        match self {
            Scalar::Bool(b) => b as u64,
            Scalar::Int(i) => i as u64,
            Scalar::UInt(u) => u,
            Scalar::Float(f) | Scalar::Complex(f, _) => {
                if f >= 0.0 {
                    f as u64
                } else {
                    float_to_i64(f) as u64
                }
            }
        }
    }

    /// Checks that the value fits `dtype` exactly as a Python scalar must (the array API's
    /// rule for Python ints with integer arrays; NumPy 2 raises `OverflowError`).
    pub fn fits(self, dtype: DType) -> bool {
        match (self, dtype.kind()) {
            (Scalar::Int(i), Kind::SignedInt | Kind::UnsignedInt) => {
                let info = dtype.iinfo().expect("integer dtype");
                (i as i128) >= info.min && (i as i128) <= info.max
            }
            (Scalar::UInt(u), Kind::SignedInt | Kind::UnsignedInt) => {
                let info = dtype.iinfo().expect("integer dtype");
                (u as i128) <= info.max
            }
            _ => true,
        }
    }
}

/// Float to integer as C casts on x86 do for in-range values; out-of-range and NaN give the
/// "integer indefinite" value NumPy produces on x86-64 (i64::MIN).
fn float_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `v` rounded to `f32` with round-to-odd (an inexact result gets an odd last bit), so that a
/// second rounding to a 16-bit float gives the correctly rounded value of `v`, as NumPy's
/// conversion does. (`half`'s `from_f64` goes through `f32` with the usual rounding on x86 with
/// F16C, which rounds twice: 71 of 2^20 random doubles came out one unit off.)
#[inline(always)]
pub(crate) fn f64_to_f32_odd(v: f64) -> f32 {
    let f = v as f32;
    let back = f as f64;
    if back == v || !f.is_finite() {
        return f;
    }
    let bits = f.to_bits();
    if bits & 1 == 1 {
        return f;
    }
    // Step one unit towards `v`: away from zero when |f| < |v|.
    let away = (back.abs() < v.abs()) as u32;
    f32::from_bits(if away == 1 { bits + 1 } else { bits - 1 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use DType::*;

    #[test]
    fn promotion_follows_the_standard_and_numpy() {
        assert_eq!(Int8.promote(Int16), Int16);
        assert_eq!(UInt8.promote(Int8), Int16);
        assert_eq!(UInt32.promote(Int32), Int64);
        assert_eq!(UInt64.promote(Int64), Float64);
        assert_eq!(Int64.promote(UInt8), Int64);
        assert_eq!(Float16.promote(Float32), Float32);
        assert_eq!(Float16.promote(BFloat16), Float32);
        assert_eq!(Bool.promote(Int8), Int8);
        assert_eq!(Bool.promote(Float16), Float16);
        assert_eq!(Int8.promote(Float16), Float16);
        assert_eq!(Int16.promote(Float16), Float32);
        assert_eq!(Int32.promote(Float32), Float64);
        assert_eq!(UInt8.promote(Float32), Float32);
        assert_eq!(Complex64.promote(Float32), Complex64);
        assert_eq!(Complex64.promote(Float64), Complex128);
        assert_eq!(Complex64.promote(Float16), Complex64);
        assert_eq!(Complex64.promote(Int16), Complex64);
        assert_eq!(Complex64.promote(Int32), Complex128);
        assert_eq!(Complex64.promote(Complex128), Complex128);
        assert_eq!(Bool.promote(Complex64), Complex64);
        assert!(Float32.can_cast(Complex64) && !Complex64.can_cast(Float64));
        for a in DType::every() {
            for b in DType::every() {
                assert_eq!(a.promote(b), b.promote(a), "{a} {b}");
            }
        }
    }

    #[test]
    fn scalars_convert_like_c() {
        assert_eq!(Scalar::Int(-1).to_bytes(UInt8), vec![255]);
        assert_eq!(Scalar::Int(300).to_bytes(UInt8), vec![44]);
        assert_eq!(
            Scalar::Float(2.5).to_bytes(Int32),
            2i32.to_ne_bytes().to_vec()
        );
        assert_eq!(
            Scalar::read_from(Float16, &Scalar::Float(1.5).to_bytes(Float16)),
            Scalar::Float(1.5)
        );
        assert!(Scalar::Int(127).fits(Int8));
        assert!(!Scalar::Int(128).fits(Int8));
        assert!(!Scalar::Int(-1).fits(UInt32));
        let z = Scalar::Complex(1.5, -2.25);
        assert_eq!(Scalar::read_from(Complex64, &z.to_bytes(Complex64)), z);
        assert_eq!(Scalar::read_from(Complex128, &z.to_bytes(Complex128)), z);
        assert_eq!(z.to_bytes(Float32), 1.5f32.to_ne_bytes().to_vec());
    }
}
