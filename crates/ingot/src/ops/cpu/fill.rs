//! Affine fills: `arange` and `linspace` values `start + i * step`, computed in f64.

use super::element::{dispatch, Elem};
use super::iter::{chunks, elem_ptr, GRAIN_CHEAP};
use crate::array::Array;
use crate::error::{Error, Result};
use rayon::prelude::*;

/// Fills the contiguous 1-D `out` with `start + i * step` (in f64) converted to its dtype.
pub(crate) fn affine_fill(out: &Array, start: f64, step: f64) -> Result<()> {
    if out.ndim() != 1 || !out.is_contiguous() {
        return Err(Error::Value(
            "internal: affine_fill needs a contiguous 1-D output".into(),
        ));
    }
    dispatch!(out.dtype(), T => fill::<T>(out, start, step))
}

fn fill<T: Elem>(out: &Array, start: f64, step: f64) -> Result<()> {
    let p = elem_ptr::<T>(out)?;
    let n = out.size();
    let run = |s: usize, e: usize| {
        for i in s..e {
            // SAFETY: i < n elements of the contiguous output.
            unsafe { *p.get::<T>().add(i) = T::from_f64(start + i as f64 * step) };
        }
    };
    match chunks(n, GRAIN_CHEAP) {
        None => run(0, n),
        Some(c) => c.into_par_iter().for_each(|(s, e)| run(s, e)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::ops::{arange, linspace};
    use crate::Device;

    #[test]
    fn arange_and_linspace() {
        let a = arange(0.0, 5.0, 1.0, DType::Int32, Device::Cpu).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 1, 2, 3, 4]);
        let a = arange(1.0, -2.0, -0.5, DType::Float64, Device::Cpu).unwrap();
        assert_eq!(
            a.to_vec::<f64>().unwrap(),
            vec![1.0, 0.5, 0.0, -0.5, -1.0, -1.5]
        );
        let a = arange(0.0, 1.0, 0.1, DType::Float32, Device::Cpu).unwrap();
        let v = a.to_vec::<f32>().unwrap();
        assert_eq!(v.len(), 10);
        assert_eq!(v[3], (0.1f64 * 3.0) as f32);
        let l = linspace(0.0, 1.0, 5, true, DType::Float64, Device::Cpu).unwrap();
        assert_eq!(l.to_vec::<f64>().unwrap(), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
        let l = linspace(0.0, 1.0, 4, false, DType::Float16, Device::Cpu).unwrap();
        assert_eq!(
            l.to_vec::<half::f16>().unwrap(),
            [0.0, 0.25, 0.5, 0.75].map(half::f16::from_f64).to_vec()
        );
        let l = linspace(0.0, 1.0, 0, true, DType::Float32, Device::Cpu).unwrap();
        assert_eq!(l.size(), 0);
        let big = arange(0.0, 300000.0, 1.0, DType::Int64, Device::Cpu).unwrap();
        let v = big.to_vec::<i64>().unwrap();
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as i64));
    }
}
