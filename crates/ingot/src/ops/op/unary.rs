//! The unary op vocabulary: [`UnaryOp`], its classes and dtype rules.

use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};

/// Elementwise functions of one argument. The `name` of each is shared with the GPU kernel
/// library (`unary_<name>_<dtype>`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Abs,
    Negative,
    Positive,
    Sign,
    Sqrt,
    Square,
    Exp,
    Expm1,
    Log,
    Log1p,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Asinh,
    Acosh,
    Atanh,
    Floor,
    Ceil,
    /// Round half to even, as NumPy.
    Round,
    Trunc,
    LogicalNot,
    BitwiseInvert,
    IsNan,
    IsInf,
    IsFinite,
    /// `1 / x` (integers and bool are first converted to a float).
    Reciprocal,
    /// True where the sign bit is set (`-0.0` and NaNs with the sign bit included).
    Signbit,
}

/// What an op does with dtypes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum UnaryClass {
    /// Same dtype in and out; bool not accepted.
    Numeric,
    /// Float functions: integers and bool are first converted to a float (see [`DType::float_result`]).
    Float,
    /// Rounding: identity on integers, float in float out.
    Rounding,
    /// Float in, bool out (integers give constant results).
    Predicate,
    /// Logical not: any dtype in, bool out.
    Logical,
    /// Bitwise invert: bool and integers only.
    Bitwise,
}

impl UnaryOp {
    /// Every unary op.
    pub const ALL: [UnaryOp; 35] = [
        UnaryOp::Abs,
        UnaryOp::Negative,
        UnaryOp::Positive,
        UnaryOp::Sign,
        UnaryOp::Sqrt,
        UnaryOp::Square,
        UnaryOp::Exp,
        UnaryOp::Expm1,
        UnaryOp::Log,
        UnaryOp::Log1p,
        UnaryOp::Log2,
        UnaryOp::Log10,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Asin,
        UnaryOp::Acos,
        UnaryOp::Atan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Tanh,
        UnaryOp::Asinh,
        UnaryOp::Acosh,
        UnaryOp::Atanh,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Round,
        UnaryOp::Trunc,
        UnaryOp::LogicalNot,
        UnaryOp::BitwiseInvert,
        UnaryOp::IsNan,
        UnaryOp::IsInf,
        UnaryOp::IsFinite,
        UnaryOp::Reciprocal,
        UnaryOp::Signbit,
    ];

    /// The op's name, as in the array API (`"abs"`, `"log1p"`...).
    pub fn name(self) -> &'static str {
        use UnaryOp::*;
        match self {
            Abs => "abs",
            Negative => "negative",
            Positive => "positive",
            Sign => "sign",
            Sqrt => "sqrt",
            Square => "square",
            Exp => "exp",
            Expm1 => "expm1",
            Log => "log",
            Log1p => "log1p",
            Log2 => "log2",
            Log10 => "log10",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Asinh => "asinh",
            Acosh => "acosh",
            Atanh => "atanh",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            LogicalNot => "logical_not",
            BitwiseInvert => "bitwise_invert",
            IsNan => "isnan",
            IsInf => "isinf",
            IsFinite => "isfinite",
            Reciprocal => "reciprocal",
            Signbit => "signbit",
        }
    }

    /// The op with this name.
    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// How the op treats dtypes.
    pub fn class(self) -> UnaryClass {
        use UnaryOp::*;
        match self {
            Abs | Negative | Positive | Sign | Square => UnaryClass::Numeric,
            Floor | Ceil | Round | Trunc => UnaryClass::Rounding,
            IsNan | IsInf | IsFinite | Signbit => UnaryClass::Predicate,
            LogicalNot => UnaryClass::Logical,
            BitwiseInvert => UnaryClass::Bitwise,
            _ => UnaryClass::Float,
        }
    }

    /// `(computation dtype, result dtype)` for an input of `dtype`, or an error when unsupported.
    pub fn dtypes(self, dtype: DType) -> Result<(DType, DType)> {
        let unsupported = || Error::UnsupportedDType {
            op: self.name(),
            dtype: dtype.to_string(),
        };
        if dtype.is_complex() {
            use UnaryOp::*;
            return match self {
                Abs => Ok((dtype, dtype.real_dtype())),
                Floor | Ceil | Trunc | BitwiseInvert | Signbit => Err(unsupported()),
                IsNan | IsInf | IsFinite | LogicalNot => Ok((dtype, DType::Bool)),
                _ => Ok((dtype, dtype)),
            };
        }
        match self.class() {
            UnaryClass::Numeric => {
                if dtype == DType::Bool && self != UnaryOp::Positive {
                    return Err(unsupported());
                }
                Ok((dtype, dtype))
            }
            UnaryClass::Float => {
                let f = dtype.float_result();
                Ok((f, f))
            }
            UnaryClass::Rounding => {
                if dtype == DType::Bool {
                    return Err(unsupported());
                }
                Ok((dtype, dtype))
            }
            UnaryClass::Predicate => Ok((dtype, DType::Bool)),
            UnaryClass::Logical => Ok((dtype, DType::Bool)),
            UnaryClass::Bitwise => match dtype.kind() {
                Kind::Float | Kind::Complex => Err(unsupported()),
                _ => Ok((dtype, dtype)),
            },
        }
    }
}
