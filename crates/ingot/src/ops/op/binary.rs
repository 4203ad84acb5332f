//! The binary op vocabulary: [`BinaryOp`], its dtype rules, and the dtype of Python scalars.

use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};

/// Elementwise functions of two arguments. The `name` of each is shared with the GPU kernel
/// library (`binary_<name>_<dtype>`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    /// True division: integers give float64, as NumPy.
    Divide,
    /// Python's `//`: rounds toward negative infinity.
    FloorDivide,
    /// Python's `%`: the result has the sign of the divisor.
    Remainder,
    Pow,
    Maximum,
    Minimum,
    Atan2,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    BitwiseLeftShift,
    BitwiseRightShift,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    Equal,
    NotEqual,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    /// The magnitude of the first argument with the sign of the second.
    Copysign,
    /// `sqrt(a^2 + b^2)` without undue overflow or underflow.
    Hypot,
    /// `log(exp(a) + exp(b))` without undue overflow.
    Logaddexp,
    /// The next representable value after `a` toward `b`, in the dtype.
    Nextafter,
}

impl BinaryOp {
    /// Every binary op.
    pub const ALL: [BinaryOp; 28] = [
        BinaryOp::Add,
        BinaryOp::Subtract,
        BinaryOp::Multiply,
        BinaryOp::Divide,
        BinaryOp::FloorDivide,
        BinaryOp::Remainder,
        BinaryOp::Pow,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
        BinaryOp::Atan2,
        BinaryOp::BitwiseAnd,
        BinaryOp::BitwiseOr,
        BinaryOp::BitwiseXor,
        BinaryOp::BitwiseLeftShift,
        BinaryOp::BitwiseRightShift,
        BinaryOp::LogicalAnd,
        BinaryOp::LogicalOr,
        BinaryOp::LogicalXor,
        BinaryOp::Equal,
        BinaryOp::NotEqual,
        BinaryOp::Less,
        BinaryOp::LessEqual,
        BinaryOp::Greater,
        BinaryOp::GreaterEqual,
        BinaryOp::Copysign,
        BinaryOp::Hypot,
        BinaryOp::Logaddexp,
        BinaryOp::Nextafter,
    ];

    /// The op's name, as in the array API (`"add"`, `"bitwise_left_shift"`...).
    pub fn name(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "add",
            Subtract => "subtract",
            Multiply => "multiply",
            Divide => "divide",
            FloorDivide => "floor_divide",
            Remainder => "remainder",
            Pow => "pow",
            Maximum => "maximum",
            Minimum => "minimum",
            Atan2 => "atan2",
            BitwiseAnd => "bitwise_and",
            BitwiseOr => "bitwise_or",
            BitwiseXor => "bitwise_xor",
            BitwiseLeftShift => "bitwise_left_shift",
            BitwiseRightShift => "bitwise_right_shift",
            LogicalAnd => "logical_and",
            LogicalOr => "logical_or",
            LogicalXor => "logical_xor",
            Equal => "equal",
            NotEqual => "not_equal",
            Less => "less",
            LessEqual => "less_equal",
            Greater => "greater",
            GreaterEqual => "greater_equal",
            Copysign => "copysign",
            Hypot => "hypot",
            Logaddexp => "logaddexp",
            Nextafter => "nextafter",
        }
    }

    /// The op with this name.
    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL.iter().copied().find(|op| op.name() == name)
    }

    /// True for the six comparisons (bool result).
    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal | NotEqual | Less | LessEqual | Greater | GreaterEqual
        )
    }

    /// True for the logical ops (any dtype in, bool out).
    pub fn is_logical(self) -> bool {
        matches!(
            self,
            BinaryOp::LogicalAnd | BinaryOp::LogicalOr | BinaryOp::LogicalXor
        )
    }

    /// `(computation dtype, result dtype)` for inputs of `a` and `b`.
    pub fn dtypes(self, a: DType, b: DType) -> Result<(DType, DType)> {
        use BinaryOp::*;
        let common = a.promote(b);
        let unsupported = || Error::UnsupportedDType {
            op: self.name(),
            dtype: common.to_string(),
        };
        if common.is_complex() {
            // The standard defines these for complex numbers; ordering and the rest are not.
            return match self {
                Add | Subtract | Multiply | Divide | Pow => Ok((common, common)),
                Equal | NotEqual => Ok((common, DType::Bool)),
                LogicalAnd | LogicalOr | LogicalXor => Ok((DType::Bool, DType::Bool)),
                _ => Err(unsupported()),
            };
        }
        if self.is_comparison() {
            return Ok((common, DType::Bool));
        }
        if self.is_logical() {
            return Ok((DType::Bool, DType::Bool));
        }
        match self {
            Add | Multiply | Maximum | Minimum => Ok((common, common)),
            Subtract | FloorDivide | Remainder | Pow => {
                if common == DType::Bool {
                    Err(unsupported())
                } else {
                    Ok((common, common))
                }
            }
            Divide => {
                let f = if common.is_float() {
                    common
                } else {
                    DType::Float64
                };
                Ok((f, f))
            }
            Atan2 | Copysign | Hypot | Logaddexp | Nextafter => {
                let f = common.float_result();
                Ok((f, f))
            }
            BitwiseAnd | BitwiseOr | BitwiseXor => match common.kind() {
                Kind::Float | Kind::Complex => Err(unsupported()),
                _ => Ok((common, common)),
            },
            BitwiseLeftShift | BitwiseRightShift => match common.kind() {
                Kind::SignedInt | Kind::UnsignedInt => Ok((common, common)),
                _ => Err(unsupported()),
            },
            _ => unreachable!("comparisons and logical ops handled above"),
        }
    }
}

/// The dtype a Python scalar takes when combined with an array of `array_dtype` (the array API's
/// rule: the scalar adopts the array's dtype when of a compatible kind; NumPy 2 otherwise).
pub fn scalar_dtype(array_dtype: DType, value: Scalar) -> Result<DType> {
    let d = match (value, array_dtype.kind()) {
        (Scalar::Bool(_), _) => array_dtype,
        (Scalar::Int(_) | Scalar::UInt(_), Kind::Bool) => DType::Int64,
        (Scalar::Int(_) | Scalar::UInt(_), _) => array_dtype,
        (Scalar::Float(_), Kind::Float | Kind::Complex) => array_dtype,
        (Scalar::Float(_), _) => DType::Float64,
        (Scalar::Complex(..), Kind::Float | Kind::Complex) => array_dtype.complex_dtype(),
        (Scalar::Complex(..), _) => DType::Complex128,
    };
    if !value.fits(d) {
        return Err(Error::Value(format!(
            "Python integer {} out of bounds for {d}",
            match value {
                Scalar::Int(i) => i.to_string(),
                Scalar::UInt(u) => u.to_string(),
                _ => String::new(),
            }
        )));
    }
    Ok(d)
}
