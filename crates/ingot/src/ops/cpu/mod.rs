//! Native CPU implementations of the ops: strided iteration with contiguous fast paths that the
//! compiler vectorises (AVX2 / AVX-512 copies chosen at run time), rayon for large arrays,
//! and gemm for matrix products. See README.md in this folder for the design and measurements.

mod arith;
mod binary;
mod cast;
mod cmath;
mod complex;
mod cumsum;
pub(crate) mod eig;
pub(crate) mod element;
mod fft;
mod fill;
mod float2;
mod gather;
pub(crate) mod iter;
pub(crate) mod linalg;
mod math;
mod matmul;
pub(crate) mod philox;
mod radix;
pub(crate) mod random;
mod reduce;
mod select;
mod sort;
mod sortkey;
mod unary;

use crate::array::Array;
use crate::error::Result;
use crate::ops::{BinaryOp, ReduceOp, ScanOp, UnaryOp};

/// `out = op(x)` elementwise.
pub(crate) fn unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    if x.dtype().is_complex() {
        return complex::unary(op, x, out);
    }
    unary::unary(op, x, out)
}
/// `out = op(x, y)` elementwise (inputs broadcast to `out`'s shape).
pub(crate) fn binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    if x.dtype().is_complex() {
        return complex::binary(op, x, y, out);
    }
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
/// Cumulative `op` of `x` along `axis` into `out` (same shape and dtype).
pub(crate) fn scan(op: ScanOp, x: &Array, axis: usize, out: &Array) -> Result<()> {
    cumsum::scan(op, x, axis, out)
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
/// Sorts each row (last axis) of `x` into `values` and/or stable argsort `indices` (int64).
pub(crate) fn sort_rows(
    x: &Array,
    values: Option<&Array>,
    indices: Option<&Array>,
    descending: bool,
) -> Result<()> {
    sort::sort_rows(x, values, indices, descending)
}
/// Row-major positions (int64) of the nonzero elements of `x`.
pub(crate) fn flat_nonzero(x: &Array) -> Result<Array> {
    select::flat_nonzero(x)
}
/// The distinct values of `x` with (when asked) first positions, inverse and counts.
pub(crate) fn unique(
    x: &Array,
    index: bool,
    inverse: bool,
    counts: bool,
) -> Result<crate::ops::op::UniqueParts> {
    let u = select::unique(x, index, inverse, counts)?;
    Ok((u.values, u.index, u.inverse, u.counts))
}
/// Insertion positions of `values` in the 1-D ascending `sorted` (one dtype).
pub(crate) fn searchsorted(sorted: &Array, values: &Array, right: bool) -> Result<Array> {
    select::searchsorted(sorted, values, right)
}
/// Whether each element of `x1` is in `x2` (one dtype), or the complement.
pub(crate) fn isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    select::isin(x1, x2, invert)
}
/// `lin (+)= idx * stride` with bounds checks (integer-array indexing).
pub(crate) fn index_offsets(
    lin: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    first: bool,
    axis: usize,
) -> Result<()> {
    gather::index_offsets(lin, idx, dim, stride, first, axis)
}
/// `out` = the elements of `w` shifted by `lin` along its stride-0 axis `jaxis`.
pub(crate) fn gather(w: &Array, jaxis: usize, lin: &Array, out: &Array) -> Result<()> {
    gather::gather(w, jaxis, lin, out)
}
/// Writes `value` through `w` shifted by `lin` along its stride-0 axis `jaxis`.
pub(crate) fn scatter(w: &Array, jaxis: usize, lin: &Array, value: &Array) -> Result<()> {
    gather::scatter(w, jaxis, lin, value)
}
/// `out[i] = w[i with the axis at idx[i]]` (take_along_axis).
pub(crate) fn take_along(
    w: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    axis: usize,
    out: &Array,
) -> Result<()> {
    gather::take_along(w, idx, dim, stride, axis, out)
}
/// In-place complex FFT of each row (last axis) of the contiguous complex `x`, scaled.
pub(crate) fn fft_c2c(x: &Array, inverse: bool, scale: f64) -> Result<()> {
    fft::c2c(x, inverse, scale)
}
/// Real-to-complex FFT of the rows of the contiguous `x` into the contiguous `out`, scaled.
pub(crate) fn fft_r2c(x: &Array, out: &Array, scale: f64) -> Result<()> {
    fft::r2c(x, out, scale)
}
/// Complex-to-real inverse FFT of the rows of the contiguous `x` into the contiguous `out`.
pub(crate) fn fft_c2r(x: &Array, out: &Array, scale: f64) -> Result<()> {
    fft::c2r(x, out, scale)
}
