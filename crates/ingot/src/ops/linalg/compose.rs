//! linalg functions composed from other ops (they run wherever their inputs live): `trace`, `outer`, `cross`, `matrix_power`, `matrix_norm`, `vector_norm`, `matrix_rank`,
//! `pinv`.

use crate::array::Array;
use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};
use crate::layout::{broadcast_shapes, IndexItem};
use crate::ops::{binary, matmul, reduce, unary, where_, BinaryOp, ReduceOp, UnaryOp};

use super::diagonal::diagonal;
use super::factor::{default_float, inv, matrix_dims, square, svd, svdvals};
use crate::runtime::SvdDriver;

/// The sum of diagonal `offset` of each matrix of `x`, in `dtype` when given (else as `sum`:
/// integers widen to int64/uint64).
pub fn trace(x: &Array, offset: isize, dtype: Option<DType>) -> Result<Array> {
    let d = diagonal(x, offset)?;
    let d = match dtype {
        Some(t) if t != d.dtype() => d.astype(t)?,
        _ => d,
    };
    let r = reduce(ReduceOp::Sum, &d, Some(&[-1]), false)?;
    match dtype {
        Some(t) if t != r.dtype() => r.astype(t),
        _ => Ok(r),
    }
}

/// The outer product of two vectors: `[n] x [m] -> [n, m]`.
pub fn outer(x1: &Array, x2: &Array) -> Result<Array> {
    if x1.ndim() != 1 || x2.ndim() != 1 {
        return Err(Error::Shape(format!(
            "outer: both arguments must be 1-D, got {:?} and {:?}",
            x1.shape(),
            x2.shape()
        )));
    }
    binary(BinaryOp::Multiply, &x1.expand_dims(1)?, &x2.expand_dims(0)?)
}

/// The cross product of 3-element vectors along `axis` (of the broadcast shape; negative counts
/// from the end).
pub fn cross(x1: &Array, x2: &Array, axis: isize) -> Result<Array> {
    crate::array::same_device("cross", &[x1, x2])?;
    let shape = broadcast_shapes(&[x1.shape(), x2.shape()])?;
    let nd = shape.len();
    if axis >= 0 || axis < -(x1.ndim().min(x2.ndim()) as isize) {
        return Err(Error::Index(format!(
            "cross: axis {axis} must be negative and within both arguments ({:?}, {:?})",
            x1.shape(),
            x2.shape()
        )));
    }
    let ax = (nd as isize + axis) as usize;
    let a1 = x1.shape()[(x1.ndim() as isize + axis) as usize];
    let a2 = x2.shape()[(x2.ndim() as isize + axis) as usize];
    if a1 != 3 || a2 != 3 {
        return Err(Error::Shape(format!(
            "cross: the axis must have 3 elements in both arguments, got {a1} and {a2}"
        )));
    }
    let a = x1.broadcast_to(&shape)?;
    let b = x2.broadcast_to(&shape)?;
    let comp = |x: &Array, i: isize| -> Result<Array> {
        let mut items = vec![
            IndexItem::Slice {
                start: None,
                stop: None,
                step: None
            };
            nd
        ];
        items[ax] = IndexItem::Int(i);
        x.index(&items)
    };
    let (a0, a1, a2) = (comp(&a, 0)?, comp(&a, 1)?, comp(&a, 2)?);
    let (b0, b1, b2) = (comp(&b, 0)?, comp(&b, 1)?, comp(&b, 2)?);
    let term = |p: &Array, q: &Array, r: &Array, s: &Array| -> Result<Array> {
        binary(
            BinaryOp::Subtract,
            &binary(BinaryOp::Multiply, p, q)?,
            &binary(BinaryOp::Multiply, r, s)?,
        )
    };
    let c = [
        term(&a1, &b2, &a2, &b1)?,
        term(&a2, &b0, &a0, &b2)?,
        term(&a0, &b1, &a1, &b0)?,
    ];
    let out = Array::empty(&shape, c[0].dtype(), x1.device())?;
    for (i, ci) in c.iter().enumerate() {
        comp(&out, i as isize)?.assign(ci)?;
    }
    Ok(out)
}

/// `x` raised to the integer power `n` (matrix products by repeated squaring; `n < 0` inverts
/// first, which integer matrices refuse, as NumPy's).
pub fn matrix_power(x: &Array, n: i64) -> Result<Array> {
    let m = square("matrix_power", x)?;
    let mut base = if n < 0 {
        if !x.dtype().is_float() {
            return Err(Error::Type(
                "matrix_power: integer matrices cannot be raised to negative powers".into(),
            ));
        }
        inv(x)?
    } else {
        x.clone()
    };
    let mut e = n.unsigned_abs();
    if e == 0 {
        let eye = crate::ops::eye(m, m, 0, x.dtype(), x.device())?;
        return eye.broadcast_to(x.shape())?.copy();
    }
    let mut acc: Option<Array> = None;
    loop {
        if e & 1 == 1 {
            acc = Some(match acc {
                None => base.clone(),
                Some(a) => matmul(&a, &base)?,
            });
        }
        e >>= 1;
        if e == 0 {
            break;
        }
        base = matmul(&base, &base)?;
    }
    let r = acc.ok_or_else(|| Error::Value("internal: empty matrix power".into()))?;
    if r.shares_buffer(x) {
        r.copy()
    } else {
        Ok(r)
    }
}

/// The norms of [`matrix_norm`].
#[derive(Copy, Clone, Debug, PartialEq)]
pub enum MatrixNorm {
    /// Frobenius (`'fro'`).
    Frobenius,
    /// Nuclear (`'nuc'`): the sum of the singular values.
    Nuclear,
    /// `1`/`-1`: the largest/smallest column sum of absolute values.
    MaxColumnSum,
    MinColumnSum,
    /// `inf`/`-inf`: the largest/smallest row sum of absolute values.
    MaxRowSum,
    MinRowSum,
    /// `2`/`-2`: the largest/smallest singular value.
    MaxSingular,
    MinSingular,
}

/// A float array for norms: floats and complex numbers as they are, other dtypes in the device's
/// default float.
fn float_input(x: &Array) -> Result<Array> {
    match x.dtype().kind() {
        Kind::Float | Kind::Complex => Ok(x.clone()),
        _ => x.astype(default_float(x.device())),
    }
}

/// The norm `ord` of each matrix of `x`; `keepdims` keeps the two axes with length 1.
pub fn matrix_norm(x: &Array, ord: MatrixNorm, keepdims: bool) -> Result<Array> {
    matrix_dims("matrix_norm", x)?;
    let x = float_input(x)?;
    let abs = || unary(UnaryOp::Abs, &x);
    let r = match ord {
        MatrixNorm::Frobenius => unary(
            UnaryOp::Sqrt,
            &reduce(
                ReduceOp::Sum,
                &unary(UnaryOp::Square, &abs()?)?,
                Some(&[-2, -1]),
                false,
            )?,
        )?,
        MatrixNorm::Nuclear => reduce(ReduceOp::Sum, &svdvals(&x)?, Some(&[-1]), false)?,
        MatrixNorm::MaxSingular => reduce(ReduceOp::Max, &svdvals(&x)?, Some(&[-1]), false)?,
        MatrixNorm::MinSingular => reduce(ReduceOp::Min, &svdvals(&x)?, Some(&[-1]), false)?,
        MatrixNorm::MaxColumnSum | MatrixNorm::MinColumnSum => {
            let sums = reduce(ReduceOp::Sum, &abs()?, Some(&[-2]), false)?;
            let op = if ord == MatrixNorm::MaxColumnSum {
                ReduceOp::Max
            } else {
                ReduceOp::Min
            };
            reduce(op, &sums, Some(&[-1]), false)?
        }
        MatrixNorm::MaxRowSum | MatrixNorm::MinRowSum => {
            let sums = reduce(ReduceOp::Sum, &abs()?, Some(&[-1]), false)?;
            let op = if ord == MatrixNorm::MaxRowSum {
                ReduceOp::Max
            } else {
                ReduceOp::Min
            };
            reduce(op, &sums, Some(&[-1]), false)?
        }
    };
    if keepdims {
        r.expand_dims(-1)?.expand_dims(-1)
    } else {
        Ok(r)
    }
}

/// The `ord`-norm of `x` over `axes` (all axes when `None`): `inf`/`-inf` the largest/smallest
/// absolute value, 0 the number of nonzero elements, else `(sum |x|^ord)^(1/ord)`.
pub fn vector_norm(x: &Array, axes: Option<&[isize]>, keepdims: bool, ord: f64) -> Result<Array> {
    let x = float_input(x)?;
    let abs = unary(UnaryOp::Abs, &x)?;
    let sum = |v: &Array| reduce(ReduceOp::Sum, v, axes, keepdims);
    if ord == f64::INFINITY {
        return reduce(ReduceOp::Max, &abs, axes, keepdims);
    }
    if ord == f64::NEG_INFINITY {
        return reduce(ReduceOp::Min, &abs, axes, keepdims);
    }
    if ord == 0.0 {
        let zero = Array::scalar(Scalar::Int(0), x.dtype(), x.device())?;
        return sum(&binary(BinaryOp::NotEqual, &x, &zero)?)?.astype(abs.dtype());
    }
    if ord == 1.0 {
        return sum(&abs);
    }
    if ord == 2.0 {
        return unary(UnaryOp::Sqrt, &sum(&unary(UnaryOp::Square, &abs)?)?);
    }
    if ord.is_nan() {
        return Err(Error::Value("vector_norm: ord must not be NaN".into()));
    }
    // In |x|'s (real) dtype: a complex exponent would make the norm complex.
    let p = Array::scalar(Scalar::Float(ord), abs.dtype(), x.device())?;
    let inv_p = Array::scalar(Scalar::Float(1.0 / ord), abs.dtype(), x.device())?;
    binary(
        BinaryOp::Pow,
        &sum(&binary(BinaryOp::Pow, &abs, &p)?)?,
        &inv_p,
    )
}

/// The singular-value cutoff `rtol * max(S)` of each matrix (`rtol` broadcast against the
/// batch; default `max(m, n) * eps`), shaped `[..., 1]` to compare with `S: [..., k]`.
fn cutoff(s: &Array, m: usize, n: usize, rtol: Option<&Array>) -> Result<Array> {
    let smax = reduce(ReduceOp::Max, s, Some(&[-1]), true)?;
    let rt = match rtol {
        Some(r) => r.astype(s.dtype())?.expand_dims(-1)?,
        None => Array::scalar(
            Scalar::Float(m.max(n) as f64 * s.dtype().finfo()?.eps),
            s.dtype(),
            s.device(),
        )?,
    };
    binary(BinaryOp::Multiply, &smax, &rt)
}

/// The rank of each matrix: the number of singular values above `rtol * max(S)` (int64).
pub fn matrix_rank(x: &Array, rtol: Option<&Array>) -> Result<Array> {
    let (m, n) = matrix_dims("matrix_rank", x)?;
    let x = float_input(x)?;
    let batch = &x.shape()[..x.ndim() - 2];
    if m.min(n) == 0 {
        return crate::ops::full(batch, Scalar::Int(0), DType::Int64, x.device());
    }
    let s = svdvals(&x)?;
    let tol = cutoff(&s, m, n, rtol)?;
    reduce(
        ReduceOp::Sum,
        &binary(BinaryOp::Greater, &s, &tol)?,
        Some(&[-1]),
        false,
    )
}

/// The Moore-Penrose pseudo-inverse of each matrix (singular values at or below
/// `rtol * max(S)` count as zero).
pub fn pinv(x: &Array, rtol: Option<&Array>) -> Result<Array> {
    let (m, n) = matrix_dims("pinv", x)?;
    let x = float_input(x)?;
    let mut out_shape = x.shape().to_vec();
    let nd = out_shape.len();
    out_shape.swap(nd - 2, nd - 1);
    if x.size() == 0 {
        return crate::ops::full(&out_shape, Scalar::Float(0.0), x.dtype(), x.device());
    }
    let (u, s, vh) = svd(&x, false, SvdDriver::Default)?;
    let tol = cutoff(&s, m, n, rtol)?;
    let one = Array::scalar(Scalar::Float(1.0), s.dtype(), s.device())?;
    let zero = Array::scalar(Scalar::Float(0.0), s.dtype(), s.device())?;
    let big = binary(BinaryOp::Greater, &s, &tol)?;
    // 1/s only where kept (1/0 would be inf there, masked to 0 either way).
    let safe = where_(&big, &s, &one)?;
    let s_inv = where_(&big, &binary(BinaryOp::Divide, &one, &safe)?, &zero)?;
    // pinv = V diag(1/s) U^H (U^T, V = Vh^T for real matrices).
    let adjoint = |m: &Array| -> Result<Array> {
        if m.dtype().is_complex() {
            crate::ops::conj(m)?.matrix_transpose()
        } else {
            m.matrix_transpose()
        }
    };
    let scaled = binary(BinaryOp::Multiply, &adjoint(&u)?, &s_inv.expand_dims(-1)?)?;
    matmul(&adjoint(&vh)?, &scaled)
}
