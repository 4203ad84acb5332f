//! `unique` of every dtype: the backends' for real dtypes, three sorts of real keys for complex
//! ones (`sort_complex.rs`), so that both orders are NumPy's on every device.

use crate::array::Array;
use crate::error::Result;

use super::select::{unique_of_reals, Unique};

/// The distinct values of `x` (flattened), sorted, and the parts asked for.
///
/// ```
/// use ingot::{Array, Device, ops};
/// let a = Array::from_vec(vec![3i32, 1, 3, 2, 1], &[5], Device::Cpu).unwrap();
/// let u = ops::unique(&a, true, true, true).unwrap();
/// assert_eq!(u.values.to_vec::<i32>().unwrap(), vec![1, 2, 3]);
/// assert_eq!(u.indices.unwrap().to_vec::<i64>().unwrap(), vec![1, 3, 0]);
/// assert_eq!(u.inverse.unwrap().to_vec::<i64>().unwrap(), vec![2, 0, 2, 1, 0]);
/// assert_eq!(u.counts.unwrap().to_vec::<i64>().unwrap(), vec![2, 1, 2]);
/// ```
pub fn unique(x: &Array, indices: bool, inverse: bool, counts: bool) -> Result<Unique> {
    if !x.dtype().is_complex() {
        return unique_of_reals(x, indices, inverse, counts);
    }
    let (values, indices, inverse, counts) =
        super::sort_complex::unique(x, indices, inverse, counts)?;
    Ok(Unique {
        values,
        indices,
        inverse,
        counts,
    })
}
