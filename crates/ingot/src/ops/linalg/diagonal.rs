//! `diagonal`: a strided view of one diagonal of each matrix.

use crate::array::Array;
use crate::error::{Error, Result};
use crate::layout::Layout;

/// The diagonal `offset` (0 main, > 0 above, < 0 below) of each matrix of `x` (a view).
pub fn diagonal(x: &Array, offset: isize) -> Result<Array> {
    if x.ndim() < 2 {
        return Err(Error::Shape(format!(
            "diagonal: the array must be at least two-dimensional, got shape {:?}",
            x.shape()
        )));
    }
    let (m, n) = (x.shape()[x.ndim() - 2], x.shape()[x.ndim() - 1]);
    let nd = x.ndim();
    let l = x.layout();
    let (sr, sc) = (l.strides()[nd - 2], l.strides()[nd - 1]);
    let (r0, c0) = if offset >= 0 {
        (0, offset as usize)
    } else {
        (offset.unsigned_abs(), 0)
    };
    let len = if r0 >= m || c0 >= n {
        0
    } else {
        (m - r0).min(n - c0)
    };
    let mut shape = x.shape()[..nd - 2].to_vec();
    shape.push(len);
    let mut strides = l.strides()[..nd - 2].to_vec();
    strides.push(sr + sc);
    let start = if len == 0 {
        l.offset() as isize
    } else {
        l.offset() as isize + r0 as isize * sr + c0 as isize * sc
    };
    x.with_layout(Layout::new(shape, strides, start.max(0) as usize)?)
}
