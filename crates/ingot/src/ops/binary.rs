//! Elementwise functions of two arrays (with broadcasting and promotion), `where` and `clip`.

use super::op::BinaryOp;
use crate::array::{same_device, Array};
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;

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
    same_device(op.name(), &[a, b])?;
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
    same_device(op.name(), &[a, b, out])?;
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
        _ if x.dtype().is_complex() => super::gpu::complex_binary(op, x, y, out),
        _ => super::gpu::binary(op, x, y, out),
    }
}

/// `cond ? a : b` elementwise, with broadcasting of all three; the result dtype promotes `a` and `b`.
pub fn where_(cond: &Array, a: &Array, b: &Array) -> Result<Array> {
    same_device("where", &[cond, a, b])?;
    let result = a.dtype().promote(b.dtype());
    let shape = broadcast_shapes(&[cond.shape(), a.shape(), b.shape()])?;
    let c = cast_view(cond, DType::Bool, &shape)?;
    let (x, y) = (cast_view(a, result, &shape)?, cast_view(b, result, &shape)?);
    let out = Array::empty(&shape, result, a.device())?;
    match out.device() {
        Device::Cpu => super::cpu::where_(&c, &x, &y, &out)?,
        _ if result.is_complex() => super::gpu::complex_where(&c, &x, &y, &out)?,
        _ => super::gpu::where_(&c, &x, &y, &out)?,
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
