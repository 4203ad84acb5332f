//! Reductions over axes, and cumulative sums.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Kind};
use crate::error::{Error, Result};
use crate::layout::Layout;

/// Reductions. The `name` of each is shared with the GPU kernel library.
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum ReduceOp {
    Sum,
    Prod,
    Min,
    Max,
    /// Index of the first minimum (NaN counts as the minimum, as NumPy).
    ArgMin,
    /// Index of the first maximum (NaN counts as the maximum, as NumPy).
    ArgMax,
    All,
    Any,
    Mean,
    /// Variance with `correction` degrees of freedom removed (NumPy's `ddof`).
    Var {
        correction: f64,
    },
    /// Standard deviation with `correction` degrees of freedom removed.
    Std {
        correction: f64,
    },
}

impl ReduceOp {
    /// The op's name (`"sum"`, `"argmax"`...).
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
            ReduceOp::Mean => "mean",
            ReduceOp::Var { .. } => "var",
            ReduceOp::Std { .. } => "std",
        }
    }

    /// The result dtype for an input of `dtype` (NumPy's: sums of small integers widen to
    /// int64/uint64, bool sums give int64, means of integers give float64).
    pub fn result_dtype(self, dtype: DType) -> Result<DType> {
        Ok(match self {
            ReduceOp::Sum | ReduceOp::Prod => match dtype.kind() {
                Kind::Bool | Kind::SignedInt => DType::Int64,
                Kind::UnsignedInt => DType::UInt64,
                Kind::Float => dtype,
            },
            ReduceOp::Min | ReduceOp::Max => dtype,
            ReduceOp::ArgMin | ReduceOp::ArgMax => DType::Int64,
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
                if dtype.is_float() {
                    dtype
                } else {
                    DType::Float64
                }
            }
        })
    }
}

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
        Device::Cuda(_) | Device::Metal(_) => super::gpu::reduce(op, x, &axes_n, &out)?,
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
    let (x, axis) = match axis {
        Some(a) => (x.clone(), Layout::normalize_axis(a, x.ndim().max(1))?),
        None => (x.reshape(&[-1])?, 0),
    };
    let x = if x.ndim() == 0 { x.reshape(&[1])? } else { x };
    let result = match dtype {
        Some(d) => d,
        None => ReduceOp::Sum.result_dtype(x.dtype())?,
    };
    let input = if x.dtype() == result {
        x
    } else {
        x.astype(result)?
    };
    let out = Array::empty(input.shape(), result, input.device())?;
    match input.device() {
        Device::Cpu => super::cpu::cumsum(&input, axis, &out)?,
        Device::Cuda(_) | Device::Metal(_) => super::gpu::cumsum(&input, axis, &out)?,
    }
    Ok(out)
}
