//! The factorizations and the functions that are one factorization away: `solve`, `inv`,
//! `det`, `slogdet`, `cholesky`, `qr`, `eigh`, `eigvalsh`, `svd`, `svdvals`.
//!
//! Each validates its input, converts it to the computation dtype, and runs on the CPU (faer),
//! on the device's solver, or on the host for devices without one (see `mod.rs`).

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;
use crate::ops::{binary, reduce, unary, where_, BinaryOp, ReduceOp, UnaryOp};
use crate::runtime::{SolverJob, SvdDriver};

use super::device::{check_info, on_host, run, vectors, ColMajor};
use super::diagonal::diagonal;
use crate::ops::cpu::linalg as cpu;

/// The dtype a factorization computes in and the dtype of its results, for an input of `d`.
pub(super) fn dtypes(op: &'static str, d: DType, device: Device) -> Result<(DType, DType)> {
    Ok(match d.kind() {
        Kind::Float => match d {
            DType::Float16 | DType::BFloat16 => (DType::Float32, d),
            _ => (d, d),
        },
        Kind::Bool | Kind::SignedInt | Kind::UnsignedInt => {
            let f = default_float(device);
            (f, f)
        }
        Kind::Complex => (d, d),
    })
    .and_then(|r| {
        crate::runtime::check_dtype(device, r.0).map_err(|_| Error::UnsupportedDType {
            op,
            dtype: d.to_string(),
        })?;
        Ok(r)
    })
}

/// The device's default floating dtype (float64; float32 on devices without float64).
pub(super) fn default_float(device: Device) -> DType {
    if crate::runtime::check_dtype(device, DType::Float64).is_ok() {
        DType::Float64
    } else {
        DType::Float32
    }
}

/// The real part of results that are real by definition (singular values, eigenvalues of
/// Hermitian matrices, `log|det|`), which the complex factorizations return as complex numbers
/// with zero imaginary parts.
fn real_valued(x: Array) -> Result<Array> {
    if x.dtype().is_complex() {
        crate::ops::real(&x)
    } else {
        Ok(x)
    }
}

pub(super) fn cast(x: &Array, d: DType) -> Result<Array> {
    if x.dtype() == d {
        Ok(x.clone())
    } else {
        x.astype(d)
    }
}

/// A result in the result dtype `rd`, or in its real counterpart for results that are real
/// already (singular values, eigenvalues and `log|det|` from a GPU solver).
fn cast_result(x: &Array, rd: DType) -> Result<Array> {
    if x.dtype().is_complex() {
        cast(x, rd)
    } else {
        cast(x, rd.real_dtype())
    }
}

/// The conjugate transpose of each matrix (the transpose for real dtypes).
fn adjoint(x: &Array) -> Result<Array> {
    let t = x.matrix_transpose()?;
    if x.dtype().is_complex() {
        crate::ops::conj(&t)
    } else {
        Ok(t)
    }
}

/// `(rows, cols)` of a stack of matrices, or the error NumPy gives for fewer than two axes.
pub(super) fn matrix_dims(op: &str, x: &Array) -> Result<(usize, usize)> {
    if x.ndim() < 2 {
        return Err(Error::LinAlg(format!(
            "{op}: {}-dimensional array given; the array must be at least two-dimensional",
            x.ndim()
        )));
    }
    let nd = x.ndim();
    Ok((x.shape()[nd - 2], x.shape()[nd - 1]))
}

/// The order of a stack of square matrices.
pub(super) fn square(op: &str, x: &Array) -> Result<usize> {
    let (m, n) = matrix_dims(op, x)?;
    if m != n {
        return Err(Error::LinAlg(format!(
            "{op}: the last two dimensions of the array must be square, got {:?}",
            x.shape()
        )));
    }
    Ok(n)
}

pub(super) fn batch_of(x: &Array) -> Vec<usize> {
    x.shape()[..x.ndim() - 2].to_vec()
}

pub(super) fn with(batch: &[usize], tail: &[usize]) -> Vec<usize> {
    let mut s = batch.to_vec();
    s.extend_from_slice(tail);
    s
}

/// `f` on the CPU for CPU arrays; otherwise `gpu` (the device's solver), and when it has none,
/// `f` on host copies whose results go back to the device.
pub(super) fn dispatch(
    inputs: &[&Array],
    f: impl Fn(&[Array]) -> Result<Vec<Array>>,
    gpu: impl FnOnce() -> Result<Option<Vec<Array>>>,
) -> Result<Vec<Array>> {
    let device = inputs[0].device();
    if device == Device::Cpu {
        let owned: Vec<Array> = inputs.iter().map(|a| (*a).clone()).collect();
        return f(&owned);
    }
    match gpu()? {
        Some(r) => Ok(r),
        None => on_host(device, inputs, f),
    }
}

fn solver_missing(op: &str) -> Error {
    Error::Device(format!(
        "internal: the device's solver ran the first step of {op} but not the next"
    ))
}

/// A fresh `[..batch, 1]` int32 array for the solver's `info`.
fn info_array(batch_count: usize, device: Device) -> Result<Array> {
    let info = Array::empty(&[batch_count, 1], DType::Int32, device)?;
    info.fill(Scalar::Int(0))?;
    Ok(info)
}

/// `[rows, cols]` bool: true on and below the diagonal (`lower`), or on and above it.
fn triangle(rows: usize, cols: usize, lower: bool, device: Device) -> Result<Array> {
    let r = crate::ops::arange(0.0, rows as f64, 1.0, DType::Int64, device)?.expand_dims(1)?;
    let c = crate::ops::arange(0.0, cols as f64, 1.0, DType::Int64, device)?.expand_dims(0)?;
    binary(
        if lower {
            BinaryOp::GreaterEqual
        } else {
            BinaryOp::LessEqual
        },
        &r,
        &c,
    )
}

/// `x` with the elements outside the triangle set to zero.
fn keep_triangle(x: &Array, lower: bool) -> Result<Array> {
    let nd = x.ndim();
    let mask = triangle(x.shape()[nd - 2], x.shape()[nd - 1], lower, x.device())?;
    let zero = Array::scalar(Scalar::Int(0), x.dtype(), x.device())?;
    where_(&mask, x, &zero)
}

/// The LU factors of the square batch `a` on the device's solver: the column-major factors,
/// the pivots `[count, n]` and `info` `[count, 1]`; `None` without a solver.
fn device_lu(a: &Array) -> Result<Option<(ColMajor, Array, Array)>> {
    let device = a.device();
    let lu = ColMajor::copy_of(a)?;
    let pivots = Array::empty(&[lu.count, lu.rows], DType::Int64, device)?;
    let info = info_array(lu.count, device)?;
    let job = SolverJob::Lu {
        a: lu.mats(),
        pivots: vectors(&pivots),
        info: vectors(&info),
    };
    if !run(device, job, a.dtype())? {
        return Ok(None);
    }
    Ok(Some((lu, pivots, info)))
}

/// Solves with LU factors for the column-major right-hand sides `x` in place.
fn device_lu_solve(lu: &ColMajor, pivots: &Array, x: &ColMajor) -> Result<()> {
    let job = SolverJob::LuSolve {
        lu: lu.mats(),
        pivots: vectors(pivots),
        b: x.mats(),
    };
    if !run(x.arr.device(), job, x.arr.dtype())? {
        return Err(solver_missing("solve"));
    }
    Ok(())
}

// ---- solve, inv -----------------------------------------------------------------------------

/// The solution `x` of `a @ x = b` for square `a` (`[..., n, n]`) and `b` either `[..., n, k]`
/// or the vector `[n]`; batch axes broadcast. A singular `a` is [`Error::LinAlg`].
pub fn solve(a: &Array, b: &Array) -> Result<Array> {
    crate::array::same_device("solve", &[a, b])?;
    let n = square("solve", a)?;
    let vector = b.ndim() == 1;
    let b2 = if vector {
        b.expand_dims(-1)?
    } else {
        b.clone()
    };
    if b2.ndim() < 2 || b2.shape()[b2.ndim() - 2] != n {
        return Err(Error::Shape(format!(
            "solve: {:?} does not match the matrices {:?} (the right-hand side must be [..., {n}, k] or [{n}])",
            b.shape(),
            a.shape()
        )));
    }
    let k = b2.shape()[b2.ndim() - 1];
    let batch = broadcast_shapes(&[&batch_of(a), &batch_of(&b2)])?;
    let device = a.device();
    let (cd, rd) = dtypes("solve", a.dtype().promote(b.dtype()), device)?;
    let a3 = cast(a, cd)?.broadcast_to(&with(&batch, &[n, n]))?;
    let b3 = cast(&b2, cd)?.broadcast_to(&with(&batch, &[n, k]))?;
    let out = if a3.size() == 0 || b3.size() == 0 {
        Array::empty(&with(&batch, &[n, k]), cd, device)?
    } else {
        let r = dispatch(
            &[&a3, &b3],
            |h| {
                let out = Array::empty(&with(&batch, &[n, k]), cd, Device::Cpu)?;
                cpu::solve(&h[0].contiguous()?, &h[1].contiguous()?, &out)?;
                Ok(vec![out])
            },
            || {
                let Some((lu, pivots, info)) = device_lu(&a3)? else {
                    return Ok(None);
                };
                check_info(&info, "Singular matrix")?;
                let x = ColMajor::copy_of(&b3)?;
                device_lu_solve(&lu, &pivots, &x)?;
                Ok(Some(vec![x.logical()?]))
            },
        )?;
        r.into_iter()
            .next()
            .ok_or_else(|| solver_missing("solve"))?
    };
    let out = cast(&out, rd)?;
    if vector {
        out.squeeze(Some(&[-1]))
    } else {
        Ok(out)
    }
}

/// The inverse of each square matrix of `a`. A singular matrix is [`Error::LinAlg`].
pub fn inv(a: &Array) -> Result<Array> {
    let n = square("inv", a)?;
    let device = a.device();
    let (cd, rd) = dtypes("inv", a.dtype(), device)?;
    let x = cast(a, cd)?;
    if x.size() == 0 {
        return Array::empty(a.shape(), rd, device);
    }
    let r = dispatch(
        &[&x],
        |h| {
            let out = Array::empty(h[0].shape(), cd, Device::Cpu)?;
            cpu::inv(&h[0].contiguous()?, &out)?;
            Ok(vec![out])
        },
        || {
            let Some((lu, pivots, info)) = device_lu(&x)? else {
                return Ok(None);
            };
            check_info(&info, "Singular matrix")?;
            let eye = crate::ops::eye(n, n, 0, cd, device)?.broadcast_to(x.shape())?;
            let id = ColMajor::copy_of(&eye)?;
            device_lu_solve(&lu, &pivots, &id)?;
            Ok(Some(vec![id.logical()?]))
        },
    )?;
    cast(&r[0], rd)
}

// ---- determinants ---------------------------------------------------------------------------

/// A batch of real matrices scaled each by a power of two (exact): `x * 2^k` with `k` chosen
/// to bring the matrix's largest magnitude near 1.
struct Scaled {
    x: Array,
    /// k per matrix (x's float dtype, shape `[..batch, 1, 1]`).
    k: Array,
    /// 2^-k (same shape).
    unscale: Array,
}

/// `x` (float32 or float64, `[..batch, n, n]`) scaled per matrix for the device LU; `None` for
/// other dtypes. Why: cuSOLVER's getrf multiplies by the pivots' reciprocals, so a singular
/// matrix whose entries are near the underflow threshold leaves subnormal residuals whose
/// reciprocals overflow (NaN determinants, where NumPy gives 0); the CPU path scales the same
/// way (`cpu::linalg::scaled_copy`). The powers of two are built from their exponent bits:
/// `exp2` need not be exact for large arguments.
fn power_of_two_scaled(x: &Array) -> Result<Option<Scaled>> {
    let (dt, it, bias, mant) = match x.dtype() {
        DType::Float64 => (DType::Float64, DType::Int64, 1023i64, 52i64),
        DType::Float32 => (DType::Float32, DType::Int32, 127, 23),
        _ => return Ok(None),
    };
    let device = x.device();
    let f = |v: f64| Array::scalar(Scalar::Float(v), dt, device);
    let i = |v: i64| Array::scalar(Scalar::Int(v), it, device);
    let amax = reduce(
        ReduceOp::Max,
        &unary(UnaryOp::Abs, x)?,
        Some(&[-2, -1]),
        true,
    )?;
    let k = unary(
        UnaryOp::Negative,
        &unary(UnaryOp::Round, &unary(UnaryOp::Log2, &amax)?)?,
    )?;
    // Zero, infinite or NaN matrices stay as they are (k = 0); k within the normal exponents so
    // that both 2^k and 2^-k are normal numbers.
    let k = where_(&unary(UnaryOp::IsFinite, &k)?, &k, &f(0.0)?)?;
    let lim = (bias - 1) as f64;
    let k = binary(
        BinaryOp::Minimum,
        &binary(BinaryOp::Maximum, &k, &f(-lim)?)?,
        &f(lim)?,
    )?;
    let ki = k.astype(it)?;
    let pow2 = |e: &Array| -> Result<Array> {
        let bits = binary(
            BinaryOp::BitwiseLeftShift,
            &binary(BinaryOp::Add, e, &i(bias)?)?,
            &i(mant)?,
        )?;
        bits.contiguous()?.view_as(dt)
    };
    let scale = pow2(&ki)?;
    let unscale = pow2(&unary(UnaryOp::Negative, &ki)?)?;
    Ok(Some(Scaled {
        x: binary(BinaryOp::Multiply, x, &scale)?,
        k,
        unscale,
    }))
}

/// The determinant of each square matrix of `a` (0 for a singular one).
pub fn det(a: &Array) -> Result<Array> {
    Ok(determinants(a, false)?.remove(0))
}

/// The sign (1, -1 or 0) and the natural log of the absolute value of the determinant of each
/// square matrix of `a` (`(0, -inf)` for a singular one).
pub fn slogdet(a: &Array) -> Result<(Array, Array)> {
    let mut r = determinants(a, true)?;
    let logabs = r.remove(1);
    Ok((r.remove(0), logabs))
}

fn determinants(a: &Array, slog: bool) -> Result<Vec<Array>> {
    let op = if slog { "slogdet" } else { "det" };
    let n = square(op, a)?;
    let device = a.device();
    let (cd, rd) = dtypes(op, a.dtype(), device)?;
    let x = cast(a, cd)?;
    let batch = batch_of(&x);
    if x.size() == 0 {
        // The determinant of a 0 x 0 matrix is 1 (an empty product).
        let one = crate::ops::full(&batch, Scalar::Float(1.0), rd, device)?;
        let zero = crate::ops::full(&batch, Scalar::Float(0.0), rd.real_dtype(), device)?;
        return Ok(if slog { vec![one, zero] } else { vec![one] });
    }
    let r = dispatch(
        &[&x],
        |h| {
            let d = Array::empty(&batch, cd, Device::Cpu)?;
            let (s, l) = (
                Array::empty(&batch, cd, Device::Cpu)?,
                Array::empty(&batch, cd, Device::Cpu)?,
            );
            let xc = h[0].contiguous()?;
            if slog {
                cpu::det(&xc, None, Some((&s, &l)))?;
                Ok(vec![s, l])
            } else {
                cpu::det(&xc, Some(&d), None)?;
                Ok(vec![d])
            }
        },
        || {
            let scaled = power_of_two_scaled(&x)?;
            let Some((lu, pivots, _)) = device_lu(scaled.as_ref().map_or(&x, |s| &s.x))? else {
                return Ok(None);
            };
            // The permutation's sign from the pivots (1-based): one swap per pivot i != i + 1.
            let positions = crate::ops::arange(1.0, n as f64 + 1.0, 1.0, DType::Int64, device)?;
            let pivots = pivots.reshape(
                &with(&batch, &[n])
                    .iter()
                    .map(|&d| d as isize)
                    .collect::<Vec<_>>(),
            )?;
            let swaps = reduce(
                ReduceOp::Sum,
                &binary(BinaryOp::NotEqual, &pivots, &positions)?,
                Some(&[-1]),
                false,
            )?;
            let two = Array::scalar(Scalar::Int(2), DType::Int64, device)?;
            let parity = binary(BinaryOp::Remainder, &swaps, &two)?;
            // 1 - 2 * parity.
            let perm_sign = binary(
                BinaryOp::Subtract,
                &Array::scalar(Scalar::Int(1), DType::Int64, device)?,
                &binary(BinaryOp::Multiply, &parity, &two)?,
            )?
            .astype(cd)?;
            let d = diagonal(&lu.logical()?, 0)?;
            let as_batch = |a: &Array, tail: &[usize]| {
                a.reshape(
                    &with(&batch, tail)
                        .iter()
                        .map(|&d| d as isize)
                        .collect::<Vec<_>>(),
                )
            };
            if slog {
                let signs = reduce(
                    ReduceOp::Prod,
                    &unary(UnaryOp::Sign, &d)?,
                    Some(&[-1]),
                    false,
                )?;
                let sign = binary(BinaryOp::Multiply, &signs, &perm_sign)?;
                let mut logabs = reduce(
                    ReduceOp::Sum,
                    &unary(UnaryOp::Log, &unary(UnaryOp::Abs, &d)?)?,
                    Some(&[-1]),
                    false,
                )?;
                if let Some(sc) = &scaled {
                    // log|det x| = log|det(x 2^k)| - n k ln 2.
                    let nln2 = Array::scalar(
                        Scalar::Float(n as f64 * std::f64::consts::LN_2),
                        cd,
                        device,
                    )?;
                    let shift = binary(BinaryOp::Multiply, &as_batch(&sc.k, &[])?, &nln2)?;
                    logabs = binary(BinaryOp::Subtract, &logabs, &shift)?;
                }
                Ok(Some(vec![sign, logabs]))
            } else {
                // det x = prod(diag(LU of x 2^k) 2^-k): each pivot scaled back on its own, so
                // the product under- or overflows only where the unscaled one would.
                let d = match &scaled {
                    Some(sc) => binary(BinaryOp::Multiply, &d, &as_batch(&sc.unscale, &[1])?)?,
                    None => d,
                };
                let prod = reduce(ReduceOp::Prod, &d, Some(&[-1]), false)?;
                Ok(Some(vec![binary(BinaryOp::Multiply, &prod, &perm_sign)?]))
            }
        },
    )?;
    let mut r = r
        .iter()
        .map(|x| cast_result(x, rd))
        .collect::<Result<Vec<_>>>()?;
    if slog && r.len() == 2 {
        let logabs = r.remove(1);
        r.push(real_valued(logabs)?);
    }
    Ok(r)
}

// ---- cholesky --------------------------------------------------------------------------------

/// The Cholesky factor of each symmetric positive-definite matrix of `a` (only its lower
/// triangle is read): lower `L` with `a = L L^T`, or `U = L^T` with `upper`. A matrix that is
/// not positive definite is [`Error::LinAlg`].
pub fn cholesky(a: &Array, upper: bool) -> Result<Array> {
    square("cholesky", a)?;
    let device = a.device();
    let (cd, rd) = dtypes("cholesky", a.dtype(), device)?;
    let x = cast(a, cd)?;
    if x.size() == 0 {
        return Array::empty(a.shape(), rd, device);
    }
    let r = dispatch(
        &[&x],
        |h| {
            let out = Array::empty(h[0].shape(), cd, Device::Cpu)?;
            cpu::cholesky(&h[0].contiguous()?, &out, upper)?;
            Ok(vec![out])
        },
        || {
            let f = ColMajor::copy_of(&x)?;
            let info = info_array(f.count, device)?;
            let job = SolverJob::Cholesky {
                a: f.mats(),
                info: vectors(&info),
            };
            if !run(device, job, cd)? {
                return Ok(None);
            }
            check_info(&info, "Matrix is not positive definite")?;
            let l = keep_triangle(&f.logical()?, true)?;
            Ok(Some(vec![if upper { adjoint(&l)? } else { l }]))
        },
    )?;
    cast(&r[0], rd)
}

// ---- qr -----------------------------------------------------------------------------------------

/// The shapes of [`qr`]'s factors.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QrMode {
    /// `Q: [..., m, k]`, `R: [..., k, n]` with `k = min(m, n)`.
    Reduced,
    /// `Q: [..., m, m]`, `R: [..., m, n]`.
    Complete,
}

/// The QR factorization `a = Q R` of each matrix (Householder: Q orthonormal, R upper
/// triangular; signs as LAPACK's on GPUs, faer's on the CPU).
pub fn qr(a: &Array, mode: QrMode) -> Result<(Array, Array)> {
    let (m, n) = matrix_dims("qr", a)?;
    let device = a.device();
    let (cd, rd) = dtypes("qr", a.dtype(), device)?;
    let x = cast(a, cd)?;
    let k = m.min(n);
    let qc = if mode == QrMode::Complete { m } else { k };
    let batch = batch_of(&x);
    if x.size() == 0 {
        let q = crate::ops::eye(m, qc, 0, rd, device)?.broadcast_to(&with(&batch, &[m, qc]))?;
        let r = crate::ops::full(&with(&batch, &[qc, n]), Scalar::Float(0.0), rd, device)?;
        return Ok((q.copy()?, r));
    }
    let r = dispatch(
        &[&x],
        |h| {
            let q = Array::empty(&with(&batch, &[m, qc]), cd, Device::Cpu)?;
            let r = Array::empty(&with(&batch, &[qc, n]), cd, Device::Cpu)?;
            cpu::qr(&h[0].contiguous()?, &q, &r, mode == QrMode::Complete)?;
            Ok(vec![q, r])
        },
        || {
            let f = ColMajor::copy_of(&x)?;
            let tau = Array::empty(&[f.count, k], cd, device)?;
            let job = SolverJob::Qr {
                a: f.mats(),
                tau: vectors(&tau),
            };
            if !run(device, job, cd)? {
                return Ok(None);
            }
            let full = f.logical()?;
            let top = full.index(&rows_upto(full.ndim(), qc.min(m)))?;
            let r = keep_triangle(&top, false)?;
            // Q from the first k reflectors (the first k columns of the factored matrix).
            let q = ColMajor::empty(&batch, m, qc, cd, device)?;
            if qc > k {
                q.arr.fill(Scalar::Int(0))?;
            }
            let nd = q.arr.ndim();
            let lead = |c: usize| rows_upto(nd, c);
            q.arr.index(&lead(k))?.assign(&f.arr.index(&lead(k))?)?;
            let job = SolverJob::QrQ {
                a: q.mats(),
                tau: vectors(&tau),
                k,
            };
            if !run(device, job, cd)? {
                return Err(solver_missing("qr"));
            }
            Ok(Some(vec![q.logical()?, r]))
        },
    )?;
    Ok((cast(&r[0], rd)?, cast(&r[1], rd)?))
}

/// Index items selecting the first `count` entries of axis `ndim - 2`.
fn rows_upto(ndim: usize, count: usize) -> Vec<crate::layout::IndexItem> {
    use crate::layout::IndexItem;
    let mut items = vec![
        IndexItem::Slice {
            start: None,
            stop: None,
            step: None
        };
        ndim
    ];
    items[ndim - 2] = IndexItem::Slice {
        start: None,
        stop: Some(count as isize),
        step: None,
    };
    items
}

// ---- eigh -------------------------------------------------------------------------------------

/// Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix of `a` (only its
/// lower triangle is read).
pub fn eigh(a: &Array) -> Result<(Array, Array)> {
    let r = eig(a, true)?;
    Ok((r[0].clone(), r[1].clone()))
}

/// Eigenvalues (ascending) of each symmetric matrix of `a` (lower triangle read).
pub fn eigvalsh(a: &Array) -> Result<Array> {
    Ok(eig(a, false)?.remove(0))
}

fn eig(a: &Array, vectors_too: bool) -> Result<Vec<Array>> {
    let op = if vectors_too { "eigh" } else { "eigvalsh" };
    let n = square(op, a)?;
    let device = a.device();
    let (cd, rd) = dtypes(op, a.dtype(), device)?;
    let x = cast(a, cd)?;
    let batch = batch_of(&x);
    if x.size() == 0 {
        let w = Array::empty(&with(&batch, &[n]), rd.real_dtype(), device)?;
        let v = Array::empty(a.shape(), rd, device)?;
        return Ok(if vectors_too { vec![w, v] } else { vec![w] });
    }
    let r = dispatch(
        &[&x],
        |h| {
            let w = Array::empty(&with(&batch, &[n]), cd, Device::Cpu)?;
            let v = Array::empty(h[0].shape(), cd, Device::Cpu)?;
            let xc = h[0].contiguous()?;
            if vectors_too {
                cpu::eigh(&xc, &w, Some(&v))?;
                Ok(vec![w, v])
            } else {
                cpu::eigh(&xc, &w, None)?;
                Ok(vec![w])
            }
        },
        || {
            let f = ColMajor::copy_of(&x)?;
            let w = Array::empty(&with(&batch, &[n]), cd.real_dtype(), device)?;
            let info = info_array(f.count, device)?;
            let job = SolverJob::Eigh {
                a: f.mats(),
                w: vectors(&w),
                vectors: vectors_too,
                info: vectors(&info),
            };
            if !run(device, job, cd)? {
                return Ok(None);
            }
            check_info(&info, "Eigenvalues did not converge")?;
            Ok(Some(if vectors_too {
                vec![w, f.logical()?]
            } else {
                vec![w]
            }))
        },
    )?;
    let mut r = r
        .iter()
        .map(|x| cast_result(x, rd))
        .collect::<Result<Vec<_>>>()?;
    r[0] = real_valued(r[0].clone())?;
    Ok(r)
}

// ---- svd ----------------------------------------------------------------------------------------

/// The singular value decomposition `a = U diag(S) Vh` of each matrix: `S` descending;
/// `full_matrices` gives square `U` and `Vh`, else `U: [..., m, k]`, `Vh: [..., k, n]`.
/// `driver` picks the GPU algorithm (ignored on the CPU).
pub fn svd(a: &Array, full_matrices: bool, driver: SvdDriver) -> Result<(Array, Array, Array)> {
    let r = sv(a, Some(full_matrices), driver)?;
    Ok((r[0].clone(), r[1].clone(), r[2].clone()))
}

/// The singular values (descending) of each matrix of `a`.
pub fn svdvals(a: &Array) -> Result<Array> {
    Ok(sv(a, None, SvdDriver::Default)?.remove(0))
}

/// `[U, S, Vh]` with vectors (`full` given), else `[S]`.
fn sv(a: &Array, full: Option<bool>, driver: SvdDriver) -> Result<Vec<Array>> {
    let op = if full.is_some() { "svd" } else { "svdvals" };
    let (m, n) = matrix_dims(op, a)?;
    let device = a.device();
    let (cd, rd) = dtypes(op, a.dtype(), device)?;
    let x = cast(a, cd)?;
    let batch = batch_of(&x);
    let k = m.min(n);
    let (uc, vr) = match full {
        Some(true) => (m, n),
        _ => (k, k),
    };
    if x.size() == 0 {
        let s = Array::empty(&with(&batch, &[k]), rd.real_dtype(), device)?;
        return match full {
            None => Ok(vec![s]),
            Some(_) => {
                let u =
                    crate::ops::eye(m, uc, 0, rd, device)?.broadcast_to(&with(&batch, &[m, uc]))?;
                let vh =
                    crate::ops::eye(vr, n, 0, rd, device)?.broadcast_to(&with(&batch, &[vr, n]))?;
                Ok(vec![u.copy()?, s, vh.copy()?])
            }
        };
    }
    let r = dispatch(
        &[&x],
        |h| {
            let s = Array::empty(&with(&batch, &[k]), cd, Device::Cpu)?;
            let xc = h[0].contiguous()?;
            match full {
                None => {
                    cpu::svd(&xc, &s, None, false)?;
                    Ok(vec![s])
                }
                Some(f) => {
                    let u = Array::empty(&with(&batch, &[m, uc]), cd, Device::Cpu)?;
                    let vh = Array::empty(&with(&batch, &[vr, n]), cd, Device::Cpu)?;
                    cpu::svd(&xc, &s, Some((&u, &vh)), f)?;
                    Ok(vec![u, s, vh])
                }
            }
        },
        || device_svd(&x, full, driver),
    )?;
    let mut r = r
        .iter()
        .map(|x| cast_result(x, rd))
        .collect::<Result<Vec<_>>>()?;
    // S is [S] or the middle of [U, S, Vh].
    let at = if r.len() == 3 { 1 } else { 0 };
    r[at] = real_valued(r[at].clone())?;
    Ok(r)
}

/// The SVD on the device's solver, which needs rows >= cols: a wide matrix is factored as its
/// transpose (whose column-major form is the row-major original) and the factors swapped.
fn device_svd(x: &Array, full: Option<bool>, driver: SvdDriver) -> Result<Option<Vec<Array>>> {
    let device = x.device();
    let cd = x.dtype();
    let (m, n) = matrix_dims("svd", x)?;
    let batch = batch_of(x);
    let wide = m < n;
    // The factored matrix, rows >= cols, column-major.
    let (f, rows, cols) = if wide {
        (ColMajor::wrap(x.copy()?, n, m), n, m)
    } else {
        (ColMajor::copy_of(x)?, m, n)
    };
    let k = cols;
    let s = Array::empty(&with(&batch, &[k]), cd.real_dtype(), device)?;
    let info = info_array(f.count, device)?;
    let uc = if full == Some(true) { rows } else { k };
    let (u, vt) = match full {
        None => (None, None),
        Some(_) => (
            Some(ColMajor::empty(&batch, rows, uc, cd, device)?),
            Some(ColMajor::empty(&batch, k, k, cd, device)?),
        ),
    };
    let uv = match (&u, &vt) {
        (Some(u), Some(vt)) => Some((u.mats(), vt.mats())),
        _ => None,
    };
    let job = SolverJob::Svd {
        a: f.mats(),
        s: vectors(&s),
        uv,
        driver,
        info: vectors(&info),
    };
    if !run(device, job, cd)? {
        return Ok(None);
    }
    check_info(&info, "SVD did not converge")?;
    let (Some(u), Some(vt)) = (u, vt) else {
        return Ok(Some(vec![s]));
    };
    if wide {
        // x^T = U2 S Vt2, so x = Vt2^T S U2^T: U = Vt2^T and Vh = U2^T, which are the column-major
        // arrays read row-major.
        Ok(Some(vec![vt.arr, s, u.arr]))
    } else {
        Ok(Some(vec![u.logical()?, s, vt.logical()?]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each matrix times 2^k exactly, its largest magnitude brought to [2^-0.5, 2^0.5) where k
    /// stays within the normal exponents, k = 0 for zero and non-finite matrices, and 2^-k the
    /// exact inverse.
    #[test]
    fn power_of_two_scaling_of_extreme_matrices() {
        let cases: [(f64, f64); 7] = [
            (3.0, -2.0),
            (1e-300, 997.0),
            (9.49643867e-296, 980.0),
            (5e-324, 1022.0),
            (1e300, -997.0),
            (0.0, 0.0),
            (f64::INFINITY, 0.0),
        ];
        let mut vals = Vec::new();
        for (v, _) in cases {
            // A 2 x 2 matrix whose largest magnitude is v.
            vals.extend([v, -v / 2.0, v / 4.0, 0.0]);
        }
        let x = Array::from_vec(vals.clone(), &[cases.len(), 2, 2], Device::Cpu).unwrap();
        let s = power_of_two_scaled(&x).unwrap().unwrap();
        let k = s.k.to_vec::<f64>().unwrap();
        let un = s.unscale.to_vec::<f64>().unwrap();
        let xs = s.x.to_vec::<f64>().unwrap();
        for (m, (_, want)) in cases.iter().enumerate() {
            assert_eq!(k[m], *want, "matrix {m}");
            assert_eq!(un[m], (-want).exp2(), "matrix {m}");
            for j in 0..4 {
                let v = vals[4 * m + j];
                let exact = v * want.exp2();
                assert!(xs[4 * m + j] == exact || (v.is_nan() && xs[4 * m + j].is_nan()));
            }
        }
        let f32x = x.astype(DType::Float32).unwrap();
        let s = power_of_two_scaled(&f32x).unwrap().unwrap();
        let k = s.k.to_vec::<f32>().unwrap();
        assert_eq!(k[0], -2.0);
        assert_eq!(k[1], 0.0, "1e-300 is 0 in float32");
        assert!(power_of_two_scaled(&x.astype(DType::Int64).unwrap())
            .unwrap()
            .is_none());
    }
}
