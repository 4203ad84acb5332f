//! Complex arrays on GPUs, which have no complex kernels: copies, conversions, `+ - * /`,
//! `==`/`!=`, `abs`, `negative`, `sum`, `mean` and `where`, composed of the real kernels over
//! the two parts ([`Array::complex_part`]: strided views, no copy). Other ops are an
//! `UnsupportedDType` error naming the op and the device. Inputs read into temporaries before
//! the output is written, so an output may alias an input (`a += b`).

use super::copy::copy_cast;
use super::elementwise::{binary, unary, where_};
use super::reduce::reduce;
use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::ops::op::{BinaryOp, ReduceOp, UnaryOp};

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

fn parts(x: &Array) -> Result<(Array, Array)> {
    Ok((x.complex_part(false)?, x.complex_part(true)?))
}

/// `op(a, b)` of real arrays of one dtype and shape into a new array of `dtype`.
fn bin(op: BinaryOp, a: &Array, b: &Array, dtype: DType) -> Result<Array> {
    let out = Array::empty(a.shape(), dtype, a.device())?;
    binary(op, a, b, &out)?;
    Ok(out)
}

/// Writes the two real arrays into the parts of the complex `out`.
fn store(re: &Array, im: &Array, out: &Array) -> Result<()> {
    copy_cast(re, &out.complex_part(false)?)?;
    copy_cast(im, &out.complex_part(true)?)
}

/// A zero of `dtype` broadcast to `shape` on `device`.
fn zeros(shape: &[usize], dtype: DType, device: Device) -> Result<Array> {
    Array::scalar(Scalar::Int(0), dtype, device)?.broadcast_to(shape)
}

/// `out = op(x)` for a complex `x` (`out`: `x`'s dtype, or its real dtype for `abs`).
pub fn complex_unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    let (re, im) = parts(x)?;
    let rd = x.dtype().real_dtype();
    match op {
        UnaryOp::Positive => store(&re, &im, out),
        UnaryOp::Negative => {
            let (nr, ni) = (
                Array::empty(x.shape(), rd, x.device())?,
                Array::empty(x.shape(), rd, x.device())?,
            );
            unary(op, &re, &nr)?;
            unary(op, &im, &ni)?;
            store(&nr, &ni, out)
        }
        UnaryOp::Abs => binary(BinaryOp::Hypot, &re, &im, out),
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// `out = op(x, y)` for complex `x`, `y` of `out`'s shape and one dtype (`out`: that dtype, or
/// bool for the comparisons).
pub fn complex_binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    use BinaryOp::*;
    let ((xr, xi), (yr, yi)) = (parts(x)?, parts(y)?);
    let d = xr.dtype();
    let mul = |a: &Array, b: &Array| bin(Multiply, a, b, d);
    match op {
        Add | Subtract => store(&bin(op, &xr, &yr, d)?, &bin(op, &xi, &yi, d)?, out),
        Multiply => {
            let re = bin(Subtract, &mul(&xr, &yr)?, &mul(&xi, &yi)?, d)?;
            let im = bin(Add, &mul(&xr, &yi)?, &mul(&xi, &yr)?, d)?;
            store(&re, &im, out)
        }
        Divide => {
            let den = bin(Add, &mul(&yr, &yr)?, &mul(&yi, &yi)?, d)?;
            let re = bin(Add, &mul(&xr, &yr)?, &mul(&xi, &yi)?, d)?;
            let im = bin(Subtract, &mul(&xi, &yr)?, &mul(&xr, &yi)?, d)?;
            store(
                &bin(Divide, &re, &den, d)?,
                &bin(Divide, &im, &den, d)?,
                out,
            )
        }
        Equal | NotEqual => {
            let b = DType::Bool;
            let join = if op == Equal { LogicalAnd } else { LogicalOr };
            let (r, i) = (bin(op, &xr, &yr, b)?, bin(op, &xi, &yi, b)?);
            binary(join, &r, &i, out)
        }
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// `sum` and `mean` of a complex `x` over the sorted `axes` into the complex `out` (the shape
/// of `x` with those axes set to 1), part by part.
pub fn complex_reduce(op: ReduceOp, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    match op {
        ReduceOp::Sum | ReduceOp::Mean => {
            let (re, im) = parts(x)?;
            let rd = re.dtype();
            let (sr, si) = (
                Array::empty(out.shape(), rd, x.device())?,
                Array::empty(out.shape(), rd, x.device())?,
            );
            reduce(op, &re, axes, &sr)?;
            reduce(op, &im, axes, &si)?;
            store(&sr, &si, out)
        }
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// `out = c ? x : y` for complex `x`, `y` (all broadcast to `out`'s shape), part by part.
pub fn complex_where(c: &Array, x: &Array, y: &Array, out: &Array) -> Result<()> {
    let ((xr, xi), (yr, yi)) = (parts(x)?, parts(y)?);
    let rd = xr.dtype();
    let (wr, wi) = (
        Array::empty(out.shape(), rd, out.device())?,
        Array::empty(out.shape(), rd, out.device())?,
    );
    where_(c, &xr, &yr, &wr)?;
    where_(c, &xi, &yi, &wi)?;
    store(&wr, &wi, out)
}

/// Copies with conversion where either side is complex (`src` broadcast to `dst`'s shape).
pub fn complex_copy_cast(src: &Array, dst: &Array) -> Result<()> {
    match (src.dtype().is_complex(), dst.dtype().is_complex()) {
        (true, true) => {
            let (sr, si) = parts(src)?;
            store(&sr, &si, dst)
        }
        (false, true) => {
            copy_cast(src, &dst.complex_part(false)?)?;
            let rd = dst.dtype().real_dtype();
            copy_cast(
                &zeros(dst.shape(), rd, dst.device())?,
                &dst.complex_part(true)?,
            )
        }
        (true, false) if dst.dtype() == DType::Bool => {
            let (sr, si) = parts(src)?;
            let z = zeros(src.shape(), sr.dtype(), src.device())?;
            let b = DType::Bool;
            let (nr, ni) = (
                bin(BinaryOp::NotEqual, &sr, &z, b)?,
                bin(BinaryOp::NotEqual, &si, &z, b)?,
            );
            let any = bin(BinaryOp::LogicalOr, &nr, &ni, b)?;
            copy_cast(&any, dst)
        }
        (true, false) => copy_cast(&src.complex_part(false)?, dst),
        (false, false) => copy_cast(src, dst),
    }
}
