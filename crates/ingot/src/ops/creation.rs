//! Arrays made from nothing: constants, ranges, identity matrices.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};

/// A new array of `shape` with every element `value` converted to `dtype`.
pub fn full(shape: &[usize], value: Scalar, dtype: DType, device: Device) -> Result<Array> {
    let out = Array::empty(shape, dtype, device)?;
    out.fill(value)?;
    Ok(out)
}

/// `start, start + step, ...` up to but excluding `stop` (NumPy's length rule).
pub fn arange(start: f64, stop: f64, step: f64, dtype: DType, device: Device) -> Result<Array> {
    if step == 0.0 || !step.is_finite() {
        return Err(Error::Value(format!("arange: invalid step {step}")));
    }
    let n = ((stop - start) / step).ceil();
    let n = if n.is_finite() && n > 0.0 {
        n as usize
    } else {
        0
    };
    let out = Array::empty(&[n], dtype, device)?;
    match device {
        Device::Cpu => super::cpu::affine_fill(&out, start, step)?,
        _ => super::gpu::affine_fill(&out, start, step)?,
    }
    Ok(out)
}

/// `num` evenly spaced values from `start` to `stop` (included when `endpoint`).
pub fn linspace(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    dtype: DType,
    device: Device,
) -> Result<Array> {
    let div = if endpoint { num.saturating_sub(1) } else { num };
    let step = if div > 0 {
        (stop - start) / div as f64
    } else {
        0.0
    };
    let out = Array::empty(&[num], dtype, device)?;
    match device {
        Device::Cpu => super::cpu::affine_fill(&out, start, step)?,
        _ => super::gpu::affine_fill(&out, start, step)?,
    }
    if endpoint && num > 1 {
        out.index(&[crate::layout::IndexItem::Int(-1)])?
            .fill(Scalar::Float(stop))?;
    }
    Ok(out)
}

/// An `n x m` matrix with ones on diagonal `k` (above the main one for k > 0).
pub fn eye(n: usize, m: usize, k: isize, dtype: DType, device: Device) -> Result<Array> {
    let out = full(&[n, m], Scalar::Int(0), dtype, device)?;
    let (r0, c0) = if k >= 0 {
        (0, k as usize)
    } else {
        ((-k) as usize, 0)
    };
    if r0 < n && c0 < m {
        let len = (n - r0).min(m - c0);
        let l = out.layout();
        let diag = crate::layout::Layout::new(
            vec![len],
            vec![l.strides()[0] + l.strides()[1]],
            l.position(&[r0, c0]),
        )?;
        out.with_layout(diag)?.fill(Scalar::Int(1))?;
    }
    Ok(out)
}
