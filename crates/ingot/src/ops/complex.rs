//! `real`, `imag` and `conj`: the parts of complex arrays (on every device, through the strided
//! views of [`Array::complex_part`]).

use super::op::UnaryOp;
use crate::array::Array;
use crate::dtype::Scalar;
use crate::error::Result;

/// The real part (a new array of the real dtype; a copy of `x` for real dtypes).
pub fn real(x: &Array) -> Result<Array> {
    if x.dtype().is_complex() {
        x.complex_part(false)?.copy()
    } else {
        x.copy()
    }
}

/// The imaginary part (a new array of the real dtype; zeros for real dtypes).
pub fn imag(x: &Array) -> Result<Array> {
    if x.dtype().is_complex() {
        x.complex_part(true)?.copy()
    } else {
        super::full(x.shape(), Scalar::Int(0), x.dtype(), x.device())
    }
}

/// The complex conjugate (a copy of `x` for real dtypes).
pub fn conj(x: &Array) -> Result<Array> {
    let out = x.copy()?;
    if x.dtype().is_complex() {
        let im = super::unary(UnaryOp::Negative, &x.complex_part(true)?)?;
        out.complex_part(true)?.assign(&im)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::Device;
    use num_complex::Complex;

    fn c(v: &[(f64, f64)]) -> Array {
        let z: Vec<Complex<f64>> = v.iter().map(|&(r, i)| Complex::new(r, i)).collect();
        Array::from_vec(z, &[v.len()], Device::Cpu).unwrap()
    }

    #[test]
    fn parts_views_and_conj() {
        let a = c(&[(1.0, 2.0), (-3.0, 0.5)]);
        assert_eq!(real(&a).unwrap().to_vec::<f64>().unwrap(), vec![1.0, -3.0]);
        assert_eq!(imag(&a).unwrap().to_vec::<f64>().unwrap(), vec![2.0, 0.5]);
        let z = conj(&a).unwrap().to_vec::<Complex<f64>>().unwrap();
        assert_eq!(z, vec![Complex::new(1.0, -2.0), Complex::new(-3.0, -0.5)]);
        // A reversed view: negative strides double too.
        let r = a
            .index(&[crate::layout::IndexItem::Slice {
                start: None,
                stop: None,
                step: Some(-1),
            }])
            .unwrap();
        assert_eq!(imag(&r).unwrap().to_vec::<f64>().unwrap(), vec![0.5, 2.0]);
    }
}
