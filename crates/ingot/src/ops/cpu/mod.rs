//! Native CPU implementations of the ops: strided iteration with contiguous fast paths that the
//! compiler vectorises (AVX2 / AVX-512 copies chosen at run time), rayon for large arrays,
//! and gemm for matrix products. See README.md in this folder for the design and measurements.

mod cast;
#[allow(dead_code)] // used by the kernels being added
pub(crate) mod element;
mod fill;
#[allow(dead_code, unused_imports)] // used by the kernels being added
pub(crate) mod iter;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, ReduceOp, UnaryOp};

fn pending(what: &str) -> Error {
    Error::Unsupported(format!("cpu {what} is being written"))
}

pub(crate) fn unary(_op: UnaryOp, _x: &Array, _out: &Array) -> Result<()> {
    Err(pending("unary"))
}
pub(crate) fn binary(_op: BinaryOp, _x: &Array, _y: &Array, _out: &Array) -> Result<()> {
    Err(pending("binary"))
}
pub(crate) fn where_(_c: &Array, _x: &Array, _y: &Array, _out: &Array) -> Result<()> {
    Err(pending("where"))
}
pub(crate) fn reduce(_op: ReduceOp, _x: &Array, _axes: &[usize], _out: &Array) -> Result<()> {
    Err(pending("reduce"))
}
pub(crate) fn cumsum(_x: &Array, _axis: usize, _out: &Array) -> Result<()> {
    Err(pending("cumsum"))
}
/// Writes `src` (broadcast to `dst`'s shape) into `dst` with NumPy's `astype` conversions.
pub(crate) fn copy_cast(src: &Array, dst: &Array) -> Result<()> {
    cast::copy_cast(src, dst)
}
/// Fills the contiguous 1-D `out` with `start + i * step`.
pub(crate) fn affine_fill(out: &Array, start: f64, step: f64) -> Result<()> {
    fill::affine_fill(out, start, step)
}
pub(crate) fn matmul(_a: &Array, _b: &Array, _out: &Array) -> Result<()> {
    Err(pending("matmul"))
}
