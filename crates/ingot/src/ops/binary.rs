//! Elementwise functions of two arrays (with broadcasting and promotion), `where` and `clip`.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;

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
}

impl BinaryOp {
    /// Every binary op.
    pub const ALL: [BinaryOp; 24] = [
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
            dtype: common,
        };
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
            Atan2 => {
                let f = common.float_result();
                Ok((f, f))
            }
            BitwiseAnd | BitwiseOr | BitwiseXor => match common.kind() {
                Kind::Float => Err(unsupported()),
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
        (Scalar::Float(_), Kind::Float) => array_dtype,
        (Scalar::Float(_), _) => DType::Float64,
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

fn cast_view(x: &Array, dtype: DType, shape: &[usize]) -> Result<Array> {
    let x = if x.dtype() == dtype {
        x.clone()
    } else {
        x.astype(dtype)?
    };
    x.broadcast_to(shape)
}

/// Applies `op` elementwise with broadcasting and type promotion, returning a new array.
///
/// ```
/// use ingot::{Array, Device, ops::{binary, BinaryOp}};
/// let a = Array::from_vec(vec![1i32, 2, 3], &[3], Device::Cpu).unwrap();
/// let b = Array::from_vec(vec![10i32], &[1], Device::Cpu).unwrap();
/// let r = binary(BinaryOp::Add, &a, &b).unwrap();
/// assert_eq!(r.to_vec::<i32>().unwrap(), vec![11, 12, 13]);
/// ```
pub fn binary(op: BinaryOp, a: &Array, b: &Array) -> Result<Array> {
    super::same_device(op.name(), &[a, b])?;
    let (compute, result) = op.dtypes(a.dtype(), b.dtype())?;
    let shape = broadcast_shapes(&[a.shape(), b.shape()])?;
    let out = Array::empty(&shape, result, a.device())?;
    let (x, y) = (
        cast_view(a, compute, &shape)?,
        cast_view(b, compute, &shape)?,
    );
    dispatch(op, &x, &y, &out)?;
    Ok(out)
}

/// Applies `op` and writes the result into `out` (Python's `a += b`): the result dtype must cast
/// to `out`'s dtype under NumPy's `same_kind` rule, and the broadcast shape must equal `out`'s.
pub fn binary_into(op: BinaryOp, a: &Array, b: &Array, out: &Array) -> Result<()> {
    super::same_device(op.name(), &[a, b, out])?;
    out.check_writable(op.name())?;
    let (compute, result) = op.dtypes(a.dtype(), b.dtype())?;
    if !result.can_cast_same_kind(out.dtype()) {
        return Err(Error::Type(format!(
            "cannot store the {result} result of {} in an array of {} in place",
            op.name(),
            out.dtype()
        )));
    }
    let shape = broadcast_shapes(&[a.shape(), b.shape()])?;
    if shape != out.shape() {
        return Err(Error::Shape(format!(
            "{}: result of shape {shape:?} does not fit the output of shape {:?}",
            op.name(),
            out.shape()
        )));
    }
    // Straight into `out` when every input either does not share its memory or is exactly `out`
    // (each element is read before it is written, by the same thread): no temporary, one pass.
    if result == out.dtype() && out.is_contiguous() {
        let (x, y) = (
            cast_view(a, compute, &shape)?,
            cast_view(b, compute, &shape)?,
        );
        let safe = |v: &Array| {
            !v.shares_buffer(out) || (v.dtype() == out.dtype() && v.layout() == out.layout())
        };
        if safe(&x) && safe(&y) {
            return dispatch(op, &x, &y, out);
        }
    }
    let tmp = binary(op, a, b)?;
    out.assign(&tmp)
}

fn dispatch(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    match out.device() {
        Device::Cpu => super::cpu::binary(op, x, y, out),
        Device::Cuda(_) | Device::Metal(_) => super::gpu::binary(op, x, y, out),
    }
}

/// `cond ? a : b` elementwise, with broadcasting of all three; the result dtype promotes `a` and `b`.
pub fn where_(cond: &Array, a: &Array, b: &Array) -> Result<Array> {
    super::same_device("where", &[cond, a, b])?;
    let result = a.dtype().promote(b.dtype());
    let shape = broadcast_shapes(&[cond.shape(), a.shape(), b.shape()])?;
    let c = cast_view(cond, DType::Bool, &shape)?;
    let (x, y) = (cast_view(a, result, &shape)?, cast_view(b, result, &shape)?);
    let out = Array::empty(&shape, result, a.device())?;
    match out.device() {
        Device::Cpu => super::cpu::where_(&c, &x, &y, &out)?,
        Device::Cuda(_) | Device::Metal(_) => super::gpu::where_(&c, &x, &y, &out)?,
    }
    Ok(out)
}

/// Clamps `x` to `[min, max]` elementwise (either bound optional); the result keeps `x`'s dtype.
/// NaN in `x` stays NaN, as NumPy.
pub fn clip(x: &Array, min: Option<&Array>, max: Option<&Array>) -> Result<Array> {
    let mut r = x.clone();
    if let Some(lo) = min {
        r = binary(BinaryOp::Maximum, &r, &lo.astype(x.dtype())?)?;
    }
    if let Some(hi) = max {
        r = binary(BinaryOp::Minimum, &r, &hi.astype(x.dtype())?)?;
    }
    if r.shares_buffer(x) {
        r = r.copy()?;
    }
    Ok(r)
}
