//! Reductions over axes, and cumulative sums.

use super::op::{ReduceOp, ScanOp};
use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;

/// Normalises an axis list (`None`: every axis), checking range and repeats.
pub fn normalize_axes(axes: Option<&[isize]>, ndim: usize) -> Result<Vec<usize>> {
    let mut out = match axes {
        None => (0..ndim).collect::<Vec<_>>(),
        Some(list) => list
            .iter()
            .map(|&a| Layout::normalize_axis(a, ndim))
            .collect::<Result<Vec<_>>>()?,
    };
    out.sort_unstable();
    if out.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::Value("repeated axis in reduction".into()));
    }
    Ok(out)
}

/// Reduces `x` over `axes` (`None`: all), keeping reduced axes as length 1 when `keepdims`.
///
/// `ArgMin`/`ArgMax` take at most one axis (`None` means the flattened array).
pub fn reduce(op: ReduceOp, x: &Array, axes: Option<&[isize]>, keepdims: bool) -> Result<Array> {
    let axes_n = normalize_axes(axes, x.ndim())?;
    if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) && axes.is_some() && axes_n.len() != 1 {
        return Err(Error::Value(format!(
            "{} takes a single axis or None",
            op.name()
        )));
    }
    let empty_reduced = axes_n.iter().any(|&a| x.shape()[a] == 0);
    if empty_reduced
        && matches!(
            op,
            ReduceOp::Min | ReduceOp::Max | ReduceOp::ArgMin | ReduceOp::ArgMax
        )
    {
        return Err(Error::Value(format!(
            "zero-size array to reduction operation {} which has no identity",
            op.name()
        )));
    }
    let result = op.result_dtype(x.dtype())?;
    let kept: Vec<usize> = (0..x.ndim())
        .map(|i| if axes_n.contains(&i) { 1 } else { x.shape()[i] })
        .collect();
    let out = Array::empty(&kept, result, x.device())?;
    match x.device() {
        Device::Cpu => super::cpu::reduce(op, x, &axes_n, &out)?,
        _ if x.dtype().is_complex() => super::gpu::complex_reduce(op, x, &axes_n, &out)?,
        _ => super::gpu::reduce(op, x, &axes_n, &out)?,
    }
    if keepdims {
        Ok(out)
    } else {
        let axes_i: Vec<isize> = axes_n.iter().map(|&a| a as isize).collect();
        out.squeeze(Some(&axes_i))
    }
}

/// Cumulative sum along `axis` (`None`: over the flattened array). Integer sums widen as in
/// [`ReduceOp::Sum`]; `dtype` overrides the result dtype.
pub fn cumsum(x: &Array, axis: Option<isize>, dtype: Option<DType>) -> Result<Array> {
    cumulative(ScanOp::Sum, x, axis, dtype)
}

/// Cumulative `op` (sum or product) along `axis` (`None`: over the flattened array). Integers
/// widen as in the matching reduction; `dtype` overrides the result dtype.
///
/// ```
/// use ingot::{Array, Device, ops::{cumulative, ScanOp}};
/// let a = Array::from_vec(vec![1i64, 2, 3, 4], &[4], Device::Cpu).unwrap();
/// let p = cumulative(ScanOp::Prod, &a, None, None).unwrap();
/// assert_eq!(p.to_vec::<i64>().unwrap(), vec![1, 2, 6, 24]);
/// ```
pub fn cumulative(
    op: ScanOp,
    x: &Array,
    axis: Option<isize>,
    dtype: Option<DType>,
) -> Result<Array> {
    let (x, axis) = match axis {
        Some(a) => (x.clone(), Layout::normalize_axis(a, x.ndim().max(1))?),
        None => (x.reshape(&[-1])?, 0),
    };
    let x = if x.ndim() == 0 { x.reshape(&[1])? } else { x };
    let result = match dtype {
        Some(d) => d,
        None => op.result_dtype(x.dtype())?,
    };
    let input = if x.dtype() == result {
        x
    } else {
        x.astype(result)?
    };
    let out = Array::empty(input.shape(), result, input.device())?;
    match input.device() {
        Device::Cpu => super::cpu::scan(op, &input, axis, &out)?,
        _ if input.dtype().is_complex() => super::gpu::complex_scan(op, &input, axis, &out)?,
        _ => super::gpu::scan(op, &input, axis, &out)?,
    }
    Ok(out)
}
