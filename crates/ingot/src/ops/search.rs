//! Searches in sorted data: `searchsorted` (with an optional `sorter`, applied with `take`) and
//! set membership (`isin`). The backends search real keys; complex values go through
//! `sort_complex` (NumPy's complex order) on every device.

use super::gather::take;
use super::op::{BinaryOp, UnaryOp};
use super::select::as_dtype;
use super::{binary, sort_complex, unary};
use crate::array::{same_device, Array};
use crate::error::{Error, Result};

/// For each element of `x2`, the position in the 1-D `x1` (ascending, in `sort`'s order) at which
/// inserting it keeps `x1` sorted: before equal elements (`right = false`) or after them. With
/// `sorter`, `x1` is taken in the order of those indices. The dtypes are promoted together.
///
/// ```
/// use ingot::{Array, Device, ops};
/// let s = Array::from_vec(vec![1.0f64, 2.0, 2.0, 5.0], &[4], Device::Cpu).unwrap();
/// let v = Array::from_vec(vec![2.0f64, 0.0, 9.0], &[3], Device::Cpu).unwrap();
/// let l = ops::searchsorted(&s, &v, false, None).unwrap();
/// assert_eq!(l.to_vec::<i64>().unwrap(), vec![1, 0, 4]);
/// let r = ops::searchsorted(&s, &v, true, None).unwrap();
/// assert_eq!(r.to_vec::<i64>().unwrap(), vec![3, 0, 4]);
/// ```
pub fn searchsorted(x1: &Array, x2: &Array, right: bool, sorter: Option<&Array>) -> Result<Array> {
    same_device("searchsorted", &[x1, x2])?;
    if x1.ndim() != 1 {
        return Err(Error::Value(format!(
            "searchsorted: the sorted array must be one-dimensional, got shape {:?}",
            x1.shape()
        )));
    }
    let d = x1.dtype().promote(x2.dtype());
    let sorted = match sorter {
        Some(s) => {
            if s.shape() != x1.shape() {
                return Err(Error::Shape(format!(
                    "searchsorted: sorter of shape {:?} for an array of shape {:?}",
                    s.shape(),
                    x1.shape()
                )));
            }
            take(x1, s, Some(0))?
        }
        None => x1.clone(),
    };
    let (s, v) = (as_dtype(&sorted, d)?, as_dtype(x2, d)?);
    if d.is_complex() {
        return sort_complex::searchsorted(&s, &v, right);
    }
    match super::route::native(x1.device()) {
        true => super::cpu::searchsorted(&s, &v, right),
        false => super::gpu::searchsorted(&s, &v, right),
    }
}

/// Whether each element of `x1` equals some element of `x2` (bool, x1's shape), or the
/// complement when `invert`. The dtypes are promoted together; NaN is in no set.
///
/// ```
/// use ingot::{Array, Device, ops};
/// let a = Array::from_vec(vec![1i64, 2, 3, 4], &[4], Device::Cpu).unwrap();
/// let b = Array::from_vec(vec![4i64, 2], &[2], Device::Cpu).unwrap();
/// let r = ops::isin(&a, &b, false).unwrap();
/// assert_eq!(r.to_bytes().unwrap(), vec![0, 1, 0, 1]);
/// ```
pub fn isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    same_device("isin", &[x1, x2])?;
    let d = x1.dtype().promote(x2.dtype());
    let (a, b) = (as_dtype(x1, d)?, as_dtype(x2, d)?);
    if d.is_complex() {
        return complex_isin(&a, &b, invert);
    }
    match super::route::native(x1.device()) {
        true => super::cpu::isin(&a, &b, invert),
        false => super::gpu::isin(&a, &b, invert),
    }
}

/// [`isin`] of complex arrays: an element is in `x2` when some element of `x2` sorts
/// equal to it (the left and right insertion points differ) and it is not NaN.
fn complex_isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    let set = x2.reshape(&[-1])?;
    let left = sort_complex::searchsorted(&set, x1, false)?;
    let right = sort_complex::searchsorted(&set, x1, true)?;
    let equal = binary(BinaryOp::Greater, &right, &left)?;
    let number = unary(UnaryOp::LogicalNot, &unary(UnaryOp::IsNan, x1)?)?;
    let found = binary(BinaryOp::LogicalAnd, &equal, &number)?;
    match invert {
        true => unary(UnaryOp::LogicalNot, &found),
        false => Ok(found),
    }
}
