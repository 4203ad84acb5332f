//! Native CPU implementations of the ops: strided iteration with contiguous fast paths that the
//! compiler vectorises (AVX2 / AVX-512 copies chosen at run time), rayon for large arrays,
//! and gemm for matrix products. See README.md in this folder for the design and measurements.

mod arith;
mod binary;
mod cast;
mod cumsum;
pub(crate) mod element;
mod fill;
pub(crate) mod iter;
pub(crate) mod linalg;
mod math;
mod matmul;
pub(crate) mod philox;
pub(crate) mod random;
mod reduce;
mod unary;

use crate::array::Array;
use crate::error::Result;
use crate::ops::{BinaryOp, ReduceOp, UnaryOp};

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
/// Reduces `x` over the sorted `axes` into `out` (the shape of `x` with those axes set to 1).
pub(crate) fn reduce(op: ReduceOp, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    reduce::reduce(op, x, axes, out)
}
/// Cumulative sum of `x` along `axis` into `out` (same shape and dtype).
pub(crate) fn cumsum(x: &Array, axis: usize, out: &Array) -> Result<()> {
    cumsum::cumsum(x, axis, out)
}
/// Writes `src` (broadcast to `dst`'s shape) into `dst` with NumPy's `astype` conversions.
pub(crate) fn copy_cast(src: &Array, dst: &Array) -> Result<()> {
    cast::copy_cast(src, dst)
}
/// Fills the contiguous 1-D `out` with `start + i * step`.
pub(crate) fn affine_fill(out: &Array, start: f64, step: f64) -> Result<()> {
    fill::affine_fill(out, start, step)
}
/// Batched `out = a @ b` (`[..., m, k] @ [..., k, n]`, batch axes already broadcast).
pub(crate) fn matmul(a: &Array, b: &Array, out: &Array) -> Result<()> {
    matmul::matmul(a, b, out)
}
