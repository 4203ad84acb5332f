//! Sorting along an axis: `sort` and the stable `argsort`.
//!
//! Both order NumPy's way: ascending with NaNs last; descending is the reverse order with ties
//! kept in their original order (NaNs first), as the array API's `descending=True`. `-0.0` and
//! `+0.0` are equal (argsort keeps their original order). The backends sort rows along the last
//! axis, so the axis is moved last as a view first (no copy). Complex numbers sort in NumPy's
//! order through three sorts of real keys (`sort_complex.rs`).

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;

/// `x` with `axis` moved last (a view), and the permutation used.
fn axis_last(x: &Array, axis: usize) -> Result<(Array, Vec<usize>)> {
    let mut perm: Vec<usize> = (0..x.ndim()).filter(|&d| d != axis).collect();
    perm.push(axis);
    Ok((x.permute(&perm)?, perm))
}

fn check(x: &Array, axis: isize, what: &str) -> Result<usize> {
    if x.ndim() == 0 {
        return Err(Error::Shape(format!(
            "{what}: a zero-dimensional array has no axis to sort along"
        )));
    }
    Layout::normalize_axis(axis, x.ndim())
}

/// The elements of `x` sorted along `axis` (ascending, NaNs last; or `descending`).
///
/// ```
/// use ingot::{Array, Device, ops};
/// let a = Array::from_vec(vec![3.0f32, f32::NAN, -1.0, 2.0], &[4], Device::Cpu).unwrap();
/// let s = ops::sort(&a, -1, false).unwrap().to_vec::<f32>().unwrap();
/// assert_eq!(&s[..3], &[-1.0, 2.0, 3.0]);
/// assert!(s[3].is_nan());
/// ```
pub fn sort(x: &Array, axis: isize, descending: bool) -> Result<Array> {
    let axis = check(x, axis, "sort")?;
    let out = Array::empty(x.shape(), x.dtype(), x.device())?;
    let (xv, perm) = axis_last(x, axis)?;
    let ov = out.permute(&perm)?;
    match super::route::native(x.device()) {
        // Complex rows sort through real keys on every device (`sort_complex.rs`).
        _ if x.dtype().is_complex() => {
            let order = super::sort_complex::argsort_rows(&xv, descending)?;
            ov.assign(&super::take_along_axis(&xv, &order, -1)?)?
        }
        true => super::cpu::sort_rows(&xv, Some(&ov), None, descending)?,
        false => super::gpu::sort_rows(&xv, Some(&ov), None, descending)?,
    }
    Ok(out)
}

/// The indices (int64) that sort `x` along `axis`, stable: equal elements keep their order
/// (also when `descending`).
///
/// ```
/// use ingot::{Array, Device, ops};
/// let a = Array::from_vec(vec![2i32, 1, 2, 0], &[4], Device::Cpu).unwrap();
/// let i = ops::argsort(&a, 0, false).unwrap();
/// assert_eq!(i.to_vec::<i64>().unwrap(), vec![3, 1, 0, 2]);
/// let d = ops::argsort(&a, 0, true).unwrap();
/// assert_eq!(d.to_vec::<i64>().unwrap(), vec![0, 2, 1, 3]);
/// ```
pub fn argsort(x: &Array, axis: isize, descending: bool) -> Result<Array> {
    let axis = check(x, axis, "argsort")?;
    let out = Array::empty(x.shape(), DType::Int64, x.device())?;
    let (xv, perm) = axis_last(x, axis)?;
    let ov = out.permute(&perm)?;
    match super::route::native(x.device()) {
        _ if x.dtype().is_complex() => {
            ov.assign(&super::sort_complex::argsort_rows(&xv, descending)?)?
        }
        true => super::cpu::sort_rows(&xv, None, Some(&ov), descending)?,
        false => super::gpu::sort_rows(&xv, None, Some(&ov), descending)?,
    }
    Ok(out)
}
