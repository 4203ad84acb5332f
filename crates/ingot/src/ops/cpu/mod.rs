//! Native CPU implementations of the ops: strided iteration with contiguous fast paths that the
//! compiler vectorises (AVX2 / AVX-512 copies chosen at run time), rayon for large arrays,
//! and gemm for matrix products. See README.md in this folder for the design and measurements.

mod arith;
mod binary;
mod cast;
#[allow(dead_code)] // used by the kernels being added
pub(crate) mod element;
mod fill;
#[allow(dead_code, unused_imports)] // used by the kernels being added
pub(crate) mod iter;
mod math;
mod unary;

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, ReduceOp, UnaryOp};

fn pending(what: &str) -> Error {
    Error::Unsupported(format!("cpu {what} is being written"))
}

/// `out = op(x)` elementwise.
pub(crate) fn unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    unary::unary(op, x, out)
}
/// `out = op(x, y)` elementwise (inputs broadcast to `out`'s shape).
pub(crate) fn binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    binary::binary(op, x, y, out)
}
/// `out = c ? x : y` elementwise.
pub(crate) fn where_(c: &Array, x: &Array, y: &Array, out: &Array) -> Result<()> {
    binary::where_(c, x, y, out)
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
