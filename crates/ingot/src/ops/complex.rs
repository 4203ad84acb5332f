//! Complex numbers: `real`, `imag`, `conj`, and the complex ops of GPU devices.
//!
//! A complex array is a pair of real arrays interleaved in memory: [`part`] views the real or
//! imaginary parts as a strided real array (no copy). On the CPU complex ops run natively
//! (`cpu/complex.rs`); on GPUs, which have no complex kernels, the ops below are composed of
//! real kernels over the two parts (copies, conversions, `+ - * /`, `==`, `abs`, `sum`, `mean`,
//! `where`); anything else is an `UnsupportedDType` error naming the op and the device.

use super::op::{BinaryOp, ReduceOp, UnaryOp};
use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::Layout;

/// The real (`imag = false`) or imaginary part of the complex array `x` as a strided view of
/// its real dtype; writes through the view change `x`.
pub fn part(x: &Array, imag: bool) -> Result<Array> {
    if !x.dtype().is_complex() {
        return Err(Error::DTypeMismatch(format!(
            "internal: complex part of an array of {}",
            x.dtype()
        )));
    }
    let l = x.layout();
    let layout = Layout::new(
        l.shape().to_vec(),
        l.strides().iter().map(|&s| s * 2).collect(),
        l.offset() * 2 + imag as usize,
    )?;
    Array::from_parts(x.buffer().clone(), layout, x.dtype().real_dtype())
}

/// The real part (a new array of the real dtype; a copy of `x` for real dtypes).
pub fn real(x: &Array) -> Result<Array> {
    if x.dtype().is_complex() {
        part(x, false)?.copy()
    } else {
        x.copy()
    }
}

/// The imaginary part (a new array of the real dtype; zeros for real dtypes).
pub fn imag(x: &Array) -> Result<Array> {
    if x.dtype().is_complex() {
        part(x, true)?.copy()
    } else {
        super::full(x.shape(), Scalar::Int(0), x.dtype(), x.device())
    }
}

/// The complex conjugate (a copy of `x` for real dtypes).
pub fn conj(x: &Array) -> Result<Array> {
    let out = x.copy()?;
    if x.dtype().is_complex() {
        let im = super::unary(UnaryOp::Negative, &part(x, true)?)?;
        part(&out, true)?.assign(&im)?;
    }
    Ok(out)
}

/// The error for a complex op that GPU devices do not have.
fn unsupported_on(op: &'static str, dtype: DType, device: Device) -> Error {
    Error::UnsupportedDType {
        op,
        dtype: format!(
            "{dtype} on {device} (complex arrays on GPUs support copies, astype, + - * /, ==, !=, \
             abs, conj, real, imag, sum, mean and where; move them to the CPU for the rest)"
        ),
    }
}

/// A complex array of `shape` on `device` from its two parts.
fn assemble(re: &Array, im: &Array, dtype: DType) -> Result<Array> {
    let out = Array::empty(re.shape(), dtype, re.device())?;
    part(&out, false)?.assign(re)?;
    part(&out, true)?.assign(im)?;
    Ok(out)
}

/// `op(x)` of a complex array on a GPU, composed of real kernels.
pub(crate) fn gpu_unary(op: UnaryOp, x: &Array) -> Result<Array> {
    let (re, im) = (part(x, false)?, part(x, true)?);
    match op {
        UnaryOp::Positive => x.copy(),
        UnaryOp::Negative => assemble(&super::unary(op, &re)?, &super::unary(op, &im)?, x.dtype()),
        UnaryOp::Abs => super::binary(BinaryOp::Hypot, &re, &im),
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// `op(x, y)` of complex arrays of one dtype and shape on a GPU, composed of real kernels.
pub(crate) fn gpu_binary(op: BinaryOp, x: &Array, y: &Array) -> Result<Array> {
    use super::binary as b;
    use BinaryOp::*;
    let (xr, xi, yr, yi) = (
        part(x, false)?,
        part(x, true)?,
        part(y, false)?,
        part(y, true)?,
    );
    let d = x.dtype();
    match op {
        Add | Subtract => assemble(&b(op, &xr, &yr)?, &b(op, &xi, &yi)?, d),
        Multiply => {
            let re = b(Subtract, &b(Multiply, &xr, &yr)?, &b(Multiply, &xi, &yi)?)?;
            let im = b(Add, &b(Multiply, &xr, &yi)?, &b(Multiply, &xi, &yr)?)?;
            assemble(&re, &im, d)
        }
        Divide => {
            let den = b(Add, &b(Multiply, &yr, &yr)?, &b(Multiply, &yi, &yi)?)?;
            let re = b(Add, &b(Multiply, &xr, &yr)?, &b(Multiply, &xi, &yi)?)?;
            let im = b(Subtract, &b(Multiply, &xi, &yr)?, &b(Multiply, &xr, &yi)?)?;
            assemble(&b(Divide, &re, &den)?, &b(Divide, &im, &den)?, d)
        }
        Equal => b(LogicalAnd, &b(Equal, &xr, &yr)?, &b(Equal, &xi, &yi)?),
        NotEqual => b(LogicalOr, &b(NotEqual, &xr, &yr)?, &b(NotEqual, &xi, &yi)?),
        _ => Err(unsupported_on(op.name(), d, x.device())),
    }
}

/// A reduction of a complex array on a GPU: `sum` and `mean` part by part.
pub(crate) fn gpu_reduce(
    op: ReduceOp,
    x: &Array,
    axes: Option<&[isize]>,
    keepdims: bool,
) -> Result<Array> {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => {
            let re = super::reduce(op, &part(x, false)?, axes, keepdims)?;
            let im = super::reduce(op, &part(x, true)?, axes, keepdims)?;
            assemble(&re, &im, x.dtype())
        }
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// `c ? x : y` of complex arrays (already broadcast, of one dtype) on a GPU.
pub(crate) fn gpu_where(c: &Array, x: &Array, y: &Array) -> Result<Array> {
    let re = super::where_(c, &part(x, false)?, &part(y, false)?)?;
    let im = super::where_(c, &part(x, true)?, &part(y, true)?)?;
    assemble(&re, &im, x.dtype())
}

/// Copies with conversion where either side is complex, on a GPU: part by part.
pub(crate) fn gpu_copy_cast(src: &Array, dst: &Array) -> Result<()> {
    match (src.dtype().is_complex(), dst.dtype().is_complex()) {
        (true, true) => {
            part(dst, false)?.assign(&part(src, false)?)?;
            part(dst, true)?.assign(&part(src, true)?)
        }
        (false, true) => {
            part(dst, false)?.assign(src)?;
            let zero = Array::scalar(Scalar::Int(0), dst.dtype().real_dtype(), dst.device())?;
            part(dst, true)?.assign(&zero)
        }
        (true, false) if dst.dtype() == DType::Bool => {
            let zero = Array::scalar(Scalar::Int(0), src.dtype().real_dtype(), src.device())?;
            let nz = |p: Array| super::binary(BinaryOp::NotEqual, &p, &zero);
            let any = super::binary(
                BinaryOp::LogicalOr,
                &nz(part(src, false)?)?,
                &nz(part(src, true)?)?,
            )?;
            dst.assign(&any)
        }
        (true, false) => dst.assign(&part(src, false)?),
        (false, false) => Err(Error::DTypeMismatch(
            "internal: complex copy of real arrays".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
