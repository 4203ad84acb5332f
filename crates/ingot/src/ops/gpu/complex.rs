//! Complex arrays on GPUs. Copies, conversions, `+ - * /`, `==`/`!=`, `abs`, `negative`, the
//! predicates, the reductions (`sum`, `mean`, `prod`, `any`, `all`, `count_nonzero`), the
//! cumulative sums and products and `where` are composed of the real kernels over the two parts
//! ([`Array::complex_part`]: strided views, no copy) or over the `[..., 2]` real pairs
//! ([`Array::complex_pairs`]); the elementary functions and `**` run the kernels of
//! `cmath.metal` (the CPU's functions, value for value) over contiguous copies of the parts.
//! Other ops are an `UnsupportedDType` error naming the op and the device. Inputs are read into
//! temporaries before the output is written, so an output may alias an input (`a += b`).

use super::copy::copy_cast;
use super::elementwise::{binary, unary, where_};
use super::library::{groups_for, kernel, launch, ty, Inst, KernelId, Module};
use super::reduce::{reduce, scan};
use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::KernelArg;
use crate::layout::IndexItem;
use crate::ops::op::{BinaryOp, ReduceOp, ScanOp, UnaryOp};

/// The error for a complex op that GPU devices do not have.
fn unsupported_on(op: &'static str, dtype: DType, device: Device) -> Error {
    Error::UnsupportedDType {
        op,
        dtype: format!(
            "{dtype} on {device} (complex arrays on GPUs support copies, astype, arithmetic, \
             comparisons for equality, the elementwise functions the standard defines for \
             complex numbers, sum, prod, mean, any, all, count_nonzero, cumulative sums and \
             products, and where; move them to the CPU for the rest)"
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
        UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::LogicalNot => {
            let b = DType::Bool;
            let (pr, pi) = (
                Array::empty(x.shape(), b, x.device())?,
                Array::empty(x.shape(), b, x.device())?,
            );
            // `not z` is `re == 0 and im == 0`; the others are a predicate of either part.
            let (part_op, join) = match op {
                UnaryOp::IsNan => (UnaryOp::IsNan, BinaryOp::LogicalOr),
                UnaryOp::IsInf => (UnaryOp::IsInf, BinaryOp::LogicalOr),
                UnaryOp::IsFinite => (UnaryOp::IsFinite, BinaryOp::LogicalAnd),
                _ => (UnaryOp::LogicalNot, BinaryOp::LogicalAnd),
            };
            let (rc, ic) = (contiguous(&re)?, contiguous(&im)?);
            unary(part_op, &rc, &pr)?;
            unary(part_op, &ic, &pi)?;
            binary(join, &pr, &pi, out)
        }
        _ if in_cmath(op) => {
            let (or, oi) = (
                Array::empty(x.shape(), rd, x.device())?,
                Array::empty(x.shape(), rd, x.device())?,
            );
            let args = format!("cop_{}, {}", op.name(), ty(rd));
            let parts = [contiguous(&re)?, contiguous(&im)?, or.clone(), oi.clone()];
            run_parts("cunary", op.name(), args, rd, &parts)?;
            store(&or, &oi, out)
        }
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// Whether `cmath.metal` has the complex function `op` (`cop_<name>`).
fn in_cmath(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Square
            | Reciprocal
            | Sign
            | Round
            | Sqrt
            | Exp
            | Expm1
            | Log
            | Log1p
            | Log2
            | Log10
            | Sin
            | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Sinh
            | Cosh
            | Tanh
            | Asinh
            | Acosh
            | Atanh
    )
}

/// Runs the `cmath.metal` instantiation `template<args>` (named for `op` and `rd`) over the
/// contiguous `parts` (inputs, then the two outputs) of `n` elements.
fn run_parts(
    template: &'static str,
    op: &'static str,
    args: String,
    rd: DType,
    parts: &[Array],
) -> Result<()> {
    let n = parts[parts.len() - 1].size();
    if n == 0 {
        return Ok(());
    }
    let device = parts[0].device();
    let id = KernelId::new(template, op, &[rd]);
    let k = kernel(device, Module::Complex, id, || {
        vec![Inst::new(template, op, &[rd], &args)]
    })?;
    let mut kargs = Vec::with_capacity(parts.len() + 1);
    for p in parts {
        kargs.push(KernelArg::Array(p.clone()));
    }
    kargs.push(KernelArg::Bytes((n as u64).to_ne_bytes().to_vec()));
    launch(&k, &kargs, groups_for(device, n as u64, 1))
}

/// `x` itself when contiguous, else a contiguous copy (the parts of a complex array are views
/// two elements apart).
fn contiguous(x: &Array) -> Result<Array> {
    if x.is_contiguous() {
        return Ok(x.clone());
    }
    let c = Array::empty(x.shape(), x.dtype(), x.device())?;
    copy_cast(x, &c)?;
    Ok(c)
}

/// `out = x ** y` for complex `x`, `y` of `out`'s shape and dtype (`cpow` of `cmath.metal`).
fn complex_pow(x: &Array, y: &Array, out: &Array) -> Result<()> {
    let ((xr, xi), (yr, yi)) = (parts(x)?, parts(y)?);
    let rd = xr.dtype();
    let (or, oi) = (
        Array::empty(out.shape(), rd, out.device())?,
        Array::empty(out.shape(), rd, out.device())?,
    );
    let parts = [
        contiguous(&xr)?,
        contiguous(&xi)?,
        contiguous(&yr)?,
        contiguous(&yi)?,
        or.clone(),
        oi.clone(),
    ];
    run_parts("cpow_parts", "pow", ty(rd).to_string(), rd, &parts)?;
    store(&or, &oi, out)
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
        Pow => complex_pow(x, y, out),
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
        ReduceOp::Prod => complex_prod(x, axes, out),
        ReduceOp::All | ReduceOp::Any | ReduceOp::CountNonzero => {
            // Truth is `z != 0`: reduce the booleans.
            let b = Array::empty(x.shape(), DType::Bool, x.device())?;
            complex_copy_cast(x, &b)?;
            reduce(op, &b, axes, out)
        }
        _ => Err(unsupported_on(op.name(), x.dtype(), x.device())),
    }
}

/// Columns `start..stop` of the matrix `m`.
fn columns(m: &Array, start: usize, stop: usize) -> Result<Array> {
    m.index(&[
        IndexItem::Ellipsis,
        IndexItem::Slice {
            start: Some(start as isize),
            stop: Some(stop as isize),
            step: None,
        },
    ])
}

/// `x` with the sorted `axes` moved last and flattened: a contiguous `[rows, len]` matrix.
fn rows_of(x: &Array, axes: &[usize]) -> Result<(Array, usize, usize)> {
    let kept: Vec<usize> = (0..x.ndim()).filter(|i| !axes.contains(i)).collect();
    let order: Vec<usize> = kept.iter().chain(axes).copied().collect();
    let rows: usize = kept.iter().map(|&i| x.shape()[i]).product();
    let len: usize = axes.iter().map(|&i| x.shape()[i]).product();
    let m = x
        .permute(&order)?
        .contiguous()?
        .reshape(&[rows as isize, len as isize])?;
    Ok((m, rows, len))
}

/// The product of a complex `x` over the sorted `axes` by pairwise halving: each level
/// multiplies the first half of every row by its second half (an odd last element carried),
/// so a row of `len` takes `ceil(log2 len)` levels of complex multiplies.
fn complex_prod(x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    let (mut cur, rows, mut len) = rows_of(x, axes)?;
    if len == 0 {
        let one = Array::scalar(Scalar::Float(1.0), out.dtype(), out.device())?;
        return complex_copy_cast(&one.broadcast_to(out.shape())?, out);
    }
    while len > 1 {
        let half = len / 2;
        let next = Array::empty(&[rows, len - half], x.dtype(), x.device())?;
        complex_binary(
            BinaryOp::Multiply,
            &columns(&cur, 0, half)?,
            &columns(&cur, half, 2 * half)?,
            &columns(&next, 0, half)?,
        )?;
        if len % 2 == 1 {
            complex_copy_cast(
                &columns(&cur, len - 1, len)?,
                &columns(&next, half, half + 1)?,
            )?;
        }
        cur = next;
        len -= half;
    }
    let shape: Vec<isize> = out.shape().iter().map(|&d| d as isize).collect();
    complex_copy_cast(&cur.reshape(&shape)?, out)
}

/// The cumulative sum (part by part) or product of a complex `x` along `axis` into the
/// contiguous `out` of its shape and dtype. The product is a Hillis-Steele scan: at step `d`
/// (1, 2, 4, ...) every element from `d` on is multiplied by the one `d` before it.
pub fn complex_scan(op: ScanOp, x: &Array, axis: usize, out: &Array) -> Result<()> {
    if out.size() == 0 {
        return Ok(());
    }
    match op {
        ScanOp::Sum => {
            let (re, im) = parts(x)?;
            let rd = re.dtype();
            let (sr, si) = (
                Array::empty(out.shape(), rd, x.device())?,
                Array::empty(out.shape(), rd, x.device())?,
            );
            scan(op, &re, axis, &sr)?;
            scan(op, &im, axis, &si)?;
            store(&sr, &si, out)
        }
        ScanOp::Prod => {
            let (mut cur, rows, len) = rows_of(x, &[axis])?;
            let mut d = 1;
            while d < len {
                let next = Array::empty(&[rows, len], x.dtype(), x.device())?;
                complex_copy_cast(&columns(&cur, 0, d)?, &columns(&next, 0, d)?)?;
                complex_binary(
                    BinaryOp::Multiply,
                    &columns(&cur, d, len)?,
                    &columns(&cur, 0, len - d)?,
                    &columns(&next, d, len)?,
                )?;
                cur = next;
                d *= 2;
            }
            // Back from [rows, len] (axis last) to the input's axis order.
            let nd = x.ndim();
            let mut moved: Vec<isize> = (0..nd)
                .filter(|&i| i != axis)
                .map(|i| x.shape()[i] as isize)
                .collect();
            moved.push(len as isize);
            let mut back: Vec<usize> = (0..nd - 1).collect();
            back.insert(axis, nd - 1);
            complex_copy_cast(&cur.reshape(&moved)?.permute(&back)?, out)
        }
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
        // One real copy (or cast) of both parts at once.
        (true, true) => copy_cast(&src.complex_pairs()?, &dst.complex_pairs()?),
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
