//! Elementwise functions of one array.

use super::op::UnaryOp;
use crate::array::Array;
use crate::device::Device;
use crate::error::Result;

/// Applies `op` elementwise, returning a new contiguous array.
///
/// ```
/// use ingot::{Array, Device, ops::{unary, UnaryOp}};
/// let a = Array::from_vec(vec![1.0f32, 4.0, 9.0], &[3], Device::Cpu).unwrap();
/// let r = unary(UnaryOp::Sqrt, &a).unwrap();
/// assert_eq!(r.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0]);
/// ```
pub fn unary(op: UnaryOp, x: &Array) -> Result<Array> {
    let (compute, result) = op.dtypes(x.dtype())?;
    let input = if x.dtype() == compute {
        x.clone()
    } else {
        x.astype(compute)?
    };
    let out = Array::empty(x.shape(), result, x.device())?;
    match x.device() {
        Device::Cpu => super::cpu::unary(op, &input, &out)?,
        _ if compute.is_complex() => super::gpu::complex_unary(op, &input, &out)?,
        _ => super::gpu::unary(op, &input, &out)?,
    }
    Ok(out)
}
