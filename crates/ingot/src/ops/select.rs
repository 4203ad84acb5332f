//! Selections whose output size depends on the data (`nonzero`, `unique`); `searchsorted` and
//! set membership (`isin`) are in `search.rs`.
//!
//! On GPUs the output length is read back from the device once (a 4-byte read); the data stays
//! there. Values are compared as `sort` orders them: `-0.0` equals `+0.0`, NaN sorts last and is
//! equal to nothing (each NaN is its own unique value, and is in no set).

use super::binary::binary;
use super::op::BinaryOp;
use crate::array::Array;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};

/// The row-major positions (int64, 1-D) of the nonzero elements of `x` (NaN counts as nonzero).
///
/// ```
/// use ingot::{Array, Device, ops};
/// let a = Array::from_vec(vec![0.0f32, 2.0, -0.0, f32::NAN], &[2, 2], Device::Cpu).unwrap();
/// assert_eq!(ops::flat_nonzero(&a).unwrap().to_vec::<i64>().unwrap(), vec![1, 3]);
/// ```
pub fn flat_nonzero(x: &Array) -> Result<Array> {
    match super::route::native(x.device()) {
        true => super::cpu::flat_nonzero(x),
        // The GPU's compaction kernels have no complex types; `z != 0` is the same test.
        false if x.dtype().is_complex() => super::gpu::flat_nonzero(&x.astype(DType::Bool)?),
        false => super::gpu::flat_nonzero(x),
    }
}

/// The coordinates of the nonzero elements of `x`: one int64 array per axis, in row-major order
/// of the elements. Zero-dimensional arrays are an error (as the array API requires).
pub fn nonzero(x: &Array) -> Result<Vec<Array>> {
    if x.ndim() == 0 {
        return Err(Error::Value(
            "nonzero of a zero-dimensional array (use nonzero(atleast_1d(x)))".into(),
        ));
    }
    let flat = flat_nonzero(x)?;
    unravel(&flat, x.shape())
}

/// Row-major coordinates in `shape` of the flat positions `flat` (int64): one array per axis.
pub fn unravel(flat: &Array, shape: &[usize]) -> Result<Vec<Array>> {
    if shape.len() == 1 {
        return Ok(vec![flat.clone()]);
    }
    let device = flat.device();
    let scalar = |v: usize| Array::scalar(Scalar::Int(v as i64), DType::Int64, device);
    let mut out = Vec::with_capacity(shape.len());
    let mut inner = 1usize;
    let mut rev = Vec::with_capacity(shape.len());
    for &n in shape.iter().rev() {
        rev.push((inner, n));
        inner = inner.saturating_mul(n);
    }
    for (d, &(stride, n)) in rev.iter().rev().enumerate() {
        let q = if stride == 1 {
            flat.clone()
        } else {
            binary(BinaryOp::FloorDivide, flat, &scalar(stride)?)?
        };
        out.push(if d == 0 {
            q
        } else {
            binary(BinaryOp::Remainder, &q, &scalar(n)?)?
        });
    }
    Ok(out)
}

/// What [`unique`] returns: the distinct values (sorted) and, when asked for, the position of
/// each value's first occurrence, the inverse (each element's value number, in `x`'s shape) and
/// the number of occurrences of each value; all int64.
#[derive(Debug)]
pub struct Unique {
    /// The distinct values, ascending (NaNs last, each its own value).
    pub values: Array,
    /// First row-major position of each value in `x`.
    pub indices: Option<Array>,
    /// For every element of `x`, the index of its value in `values` (x's shape).
    pub inverse: Option<Array>,
    /// Occurrences of each value.
    pub counts: Option<Array>,
}

/// [`super::unique`] of a real `x`, on the device's backend.
pub(crate) fn unique_of_reals(
    x: &Array,
    indices: bool,
    inverse: bool,
    counts: bool,
) -> Result<Unique> {
    let (values, indices, inverse, counts) = match super::route::native(x.device()) {
        true => super::cpu::unique(x, indices, inverse, counts)?,
        false => super::gpu::unique(x, indices, inverse, counts)?,
    };
    Ok(Unique {
        values,
        indices,
        inverse,
        counts,
    })
}

/// `a` converted to `d` (the same array when it already has that dtype).
pub(crate) fn as_dtype(a: &Array, d: DType) -> Result<Array> {
    if a.dtype() == d {
        Ok(a.clone())
    } else {
        a.astype(d)
    }
}
