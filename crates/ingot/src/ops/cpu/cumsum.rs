//! Cumulative sums and products along one axis, complex dtypes included (each step rounded to
//! the dtype, as NumPy's `add.accumulate` and `multiply.accumulate`).

use super::arith::Num;
use super::element::{dispatch, Elem};
use super::iter::{elem_ptr, par_runs, Plan};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;
use crate::ops::ScanOp;

/// `out[..., i, ...] = x[..., 0, ...] op ... op x[..., i, ...]` along `axis`; `x` and `out` have
/// one shape and dtype.
pub(crate) fn scan(op: ScanOp, x: &Array, axis: usize, out: &Array) -> Result<()> {
    use super::element::{C32, C64};
    // Complex steps as NumPy's: `(a + b)` part by part, `(ac - bd) + (ad + bc)i`.
    match (op, x.dtype()) {
        (ScanOp::Sum, DType::Complex64) => return run::<C32>(x, axis, out, |a, b| C32(a.0 + b.0)),
        (ScanOp::Sum, DType::Complex128) => return run::<C64>(x, axis, out, |a, b| C64(a.0 + b.0)),
        (ScanOp::Prod, DType::Complex64) => return run::<C32>(x, axis, out, |a, b| C32(a.0 * b.0)),
        (ScanOp::Prod, DType::Complex128) => {
            return run::<C64>(x, axis, out, |a, b| C64(a.0 * b.0))
        }
        _ => {}
    }
    match op {
        ScanOp::Sum => dispatch!(x.dtype(), T => run::<T>(x, axis, out, Num::add)),
        ScanOp::Prod => dispatch!(x.dtype(), T => run::<T>(x, axis, out, Num::mul)),
    }
}

fn run<T: Elem>(x: &Array, axis: usize, out: &Array, f: fn(T, T) -> T) -> Result<()> {
    let (px, po) = (elem_ptr::<T>(x)?, elem_ptr::<T>(out)?);
    let (xs, os) = (x.layout().strides(), out.layout().strides());
    let len = x.shape()[axis];
    let (sx, so) = (xs[axis], os[axis]);
    let others: Vec<usize> = (0..x.ndim()).filter(|&d| d != axis).collect();
    let shape: Vec<usize> = others.iter().map(|&d| x.shape()[d]).collect();
    let oxs: Vec<isize> = others.iter().map(|&d| xs[d]).collect();
    let oos: Vec<isize> = others.iter().map(|&d| os[d]).collect();
    let plan = Plan::new(&shape, [&oxs, &oos]);
    if len == 0 {
        return Ok(());
    }
    let grain = (super::iter::GRAIN_CHEAP / len).max(1);
    par_runs(&plan, grain, true, |_, [ox, oo], [tx, to], n| {
        for j in 0..n as isize {
            // SAFETY: offsets come from the arrays' layouts; each line is written by one task.
            unsafe {
                let a = px.get::<T>().offset(ox + j * tx);
                let o = po.get::<T>().offset(oo + j * to);
                let mut acc = *a;
                *o = acc;
                for i in 1..len as isize {
                    acc = f(acc, *a.offset(i * sx));
                    *o.offset(i * so) = acc;
                }
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::ops::cumsum;
    use crate::{Array, Device};

    #[test]
    fn cumsum_axes_and_dtypes() {
        let a = Array::from_vec((1..=6).collect::<Vec<i32>>(), &[2, 3], Device::Cpu).unwrap();
        let c = cumsum(&a, Some(1), None).unwrap();
        assert_eq!(c.dtype(), DType::Int64);
        assert_eq!(c.to_vec::<i64>().unwrap(), vec![1, 3, 6, 4, 9, 15]);
        let c = cumsum(&a, Some(0), None).unwrap();
        assert_eq!(c.to_vec::<i64>().unwrap(), vec![1, 2, 3, 5, 7, 9]);
        let c = cumsum(&a.t(), None, None).unwrap();
        assert_eq!(c.to_vec::<i64>().unwrap(), vec![1, 5, 7, 12, 15, 21]);
        let c = cumsum(&a, Some(-1), Some(DType::Int8)).unwrap();
        assert_eq!(c.to_vec::<i8>().unwrap(), vec![1, 3, 6, 4, 9, 15]);
        let w = Array::from_vec(vec![100i8, 100, 100], &[3], Device::Cpu).unwrap();
        let c = cumsum(&w, None, Some(DType::Int8)).unwrap();
        assert_eq!(c.to_vec::<i8>().unwrap(), vec![100, -56, 44]);
        let f = Array::from_vec(vec![0.5f32, f32::NAN, 1.0], &[3], Device::Cpu).unwrap();
        let c = cumsum(&f, Some(0), None).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(c[0], 0.5);
        assert!(c[1].is_nan() && c[2].is_nan());
        let e = Array::from_vec(Vec::<f64>::new(), &[2, 0], Device::Cpu).unwrap();
        assert_eq!(cumsum(&e, Some(1), None).unwrap().shape(), &[2, 0]);
        let z = Array::from_vec(vec![4.0f64], &[], Device::Cpu).unwrap();
        assert_eq!(
            cumsum(&z, None, None).unwrap().to_vec::<f64>().unwrap(),
            vec![4.0]
        );
        let b = Array::from_bytes(&[1, 0, 1], &[3], DType::Bool, Device::Cpu).unwrap();
        assert_eq!(
            cumsum(&b, None, None).unwrap().to_vec::<i64>().unwrap(),
            vec![1, 1, 2]
        );
        let n = 200_000;
        let big = Array::from_vec(vec![1u32; n], &[n / 4, 4], Device::Cpu).unwrap();
        let c = cumsum(&big, Some(0), None)
            .unwrap()
            .to_vec::<u64>()
            .unwrap();
        assert_eq!(c[n - 1], (n / 4) as u64);
        assert_eq!(c[4 * 10 + 2], 11);
    }

    #[test]
    fn cumprod_widens_and_wraps_like_numpy() {
        use crate::ops::{cumulative, ScanOp};
        let a = Array::from_vec(vec![2i8, -3, 4, 5], &[2, 2], Device::Cpu).unwrap();
        let p = cumulative(ScanOp::Prod, &a, Some(1), None).unwrap();
        assert_eq!(p.dtype(), DType::Int64);
        assert_eq!(p.to_vec::<i64>().unwrap(), vec![2, -6, 4, 20]);
        let w = Array::from_vec(vec![16u8, 16, 2], &[3], Device::Cpu).unwrap();
        let p = cumulative(ScanOp::Prod, &w, None, Some(DType::UInt8)).unwrap();
        assert_eq!(p.to_vec::<u8>().unwrap(), vec![16, 0, 0]);
        let f = Array::from_vec(vec![0.5f64, -2.0, f64::INFINITY, 0.0], &[4], Device::Cpu).unwrap();
        let p = cumulative(ScanOp::Prod, &f, Some(0), None).unwrap();
        let v = p.to_vec::<f64>().unwrap();
        assert_eq!(&v[..3], &[0.5, -1.0, f64::NEG_INFINITY]);
        assert!(v[3].is_nan());
    }
}
