//! Searches in sorted data: `searchsorted` (with an optional `sorter`, applied with `take`).

use super::gather::take;
use super::select::as_dtype;
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
    match super::route::native(x1.device()) {
        true => super::cpu::searchsorted(&s, &v, right),
        false => super::gpu::searchsorted(&s, &v, right),
    }
}
