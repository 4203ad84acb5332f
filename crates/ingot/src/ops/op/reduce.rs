//! The reduction vocabulary: [`ReduceOp`] and its result dtypes.

use crate::dtype::{DType, Kind};
use crate::error::Result;

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
    /// The number of nonzero elements (NaN counts as nonzero), as int64.
    CountNonzero,
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
            ReduceOp::CountNonzero => "count_nonzero",
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
                Kind::Float | Kind::Complex => dtype,
            },
            ReduceOp::Min
            | ReduceOp::Max
            | ReduceOp::ArgMin
            | ReduceOp::ArgMax
            | ReduceOp::Var { .. }
            | ReduceOp::Std { .. }
                if dtype.is_complex() =>
            {
                return Err(crate::error::Error::UnsupportedDType {
                    op: self.name(),
                    dtype: dtype.to_string(),
                })
            }
            ReduceOp::Min | ReduceOp::Max => dtype,
            ReduceOp::ArgMin | ReduceOp::ArgMax | ReduceOp::CountNonzero => DType::Int64,
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
                if dtype.is_float() || dtype.is_complex() {
                    dtype
                } else {
                    DType::Float64
                }
            }
        })
    }
}

/// Cumulative (scan) operations along one axis. The `name` of each is shared with the GPU kernel
/// library (`cumsum_lines__<name>_<dtype>`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ScanOp {
    /// Running sum.
    Sum,
    /// Running product.
    Prod,
}

impl ScanOp {
    /// The op's name (`"cumsum"`, `"cumprod"`).
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
        }
    }

    /// The result dtype for an input of `dtype` (as the matching reduction: integers widen to
    /// int64/uint64).
    pub fn result_dtype(self, dtype: DType) -> Result<DType> {
        match self {
            ScanOp::Sum => ReduceOp::Sum.result_dtype(dtype),
            ScanOp::Prod => ReduceOp::Prod.result_dtype(dtype),
        }
    }
}
