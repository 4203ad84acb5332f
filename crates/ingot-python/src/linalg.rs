//! The `linalg` extension and the contractions (`tensordot`, `vecdot`): argument conversion
//! around `ingot::ops::linalg`, computed without the GIL. `python/ingot/linalg.py` adds the
//! array API's signatures, named tuples and docstrings.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use ingot::ops::linalg::{self as la, MatrixNorm, QrMode, SvdDriver, TensordotAxes};
use ingot::Array;

use crate::dtype::dtype_from_py;
use crate::errors::detached;
use crate::pyarray::{axes_from_py, PyArray};

fn arr(x: &PyArray) -> Array {
    x.inner.clone()
}

/// `x1 @ x = x2` for square `x1`; `x2` is `[..., n, k]` or the vector `[n]`.
#[pyfunction]
fn linalg_solve(py: Python<'_>, x1: &PyArray, x2: &PyArray) -> PyResult<PyArray> {
    let (a, b) = (arr(x1), arr(x2));
    Ok(detached(py, move || la::solve(&a, &b))?.into())
}

/// The inverse of each square matrix.
#[pyfunction]
fn linalg_inv(py: Python<'_>, x: &PyArray) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::inv(&a))?.into())
}

/// The determinant of each square matrix.
#[pyfunction]
fn linalg_det(py: Python<'_>, x: &PyArray) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::det(&a))?.into())
}

/// `(sign, logabsdet)` of each square matrix.
#[pyfunction]
fn linalg_slogdet(py: Python<'_>, x: &PyArray) -> PyResult<(PyArray, PyArray)> {
    let a = arr(x);
    let (s, l) = detached(py, move || la::slogdet(&a))?;
    Ok((s.into(), l.into()))
}

/// The Cholesky factor (lower, or upper with `upper`).
#[pyfunction]
fn linalg_cholesky(py: Python<'_>, x: &PyArray, upper: bool) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::cholesky(&a, upper))?.into())
}

/// `(Q, R)`; `mode` is `"reduced"` or `"complete"`.
#[pyfunction]
fn linalg_qr(py: Python<'_>, x: &PyArray, mode: &str) -> PyResult<(PyArray, PyArray)> {
    let m = match mode {
        "reduced" => QrMode::Reduced,
        "complete" => QrMode::Complete,
        other => {
            return Err(PyValueError::new_err(format!(
                "qr: mode must be 'reduced' or 'complete', got {other:?}"
            )))
        }
    };
    let a = arr(x);
    let (q, r) = detached(py, move || la::qr(&a, m))?;
    Ok((q.into(), r.into()))
}

/// `(eigenvalues, eigenvectors)` of each symmetric matrix.
#[pyfunction]
fn linalg_eigh(py: Python<'_>, x: &PyArray) -> PyResult<(PyArray, PyArray)> {
    let a = arr(x);
    let (w, v) = detached(py, move || la::eigh(&a))?;
    Ok((w.into(), v.into()))
}

/// `(eigenvalues, eigenvectors)` of each square matrix (general; complex results).
#[pyfunction]
fn linalg_eig(py: Python<'_>, x: &PyArray) -> PyResult<(PyArray, PyArray)> {
    let a = arr(x);
    let (w, v) = detached(py, move || la::eig(&a))?;
    Ok((w.into(), v.into()))
}

/// The eigenvalues of each square matrix (general; complex).
#[pyfunction]
fn linalg_eigvals(py: Python<'_>, x: &PyArray) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::eigvals(&a))?.into())
}

/// The eigenvalues of each symmetric matrix.
#[pyfunction]
fn linalg_eigvalsh(py: Python<'_>, x: &PyArray) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::eigvalsh(&a))?.into())
}

fn driver_from(d: Option<&str>) -> PyResult<SvdDriver> {
    Ok(match d {
        None => SvdDriver::Default,
        Some("gesvd") => SvdDriver::Qr,
        Some("gesvdj") => SvdDriver::Jacobi,
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "svd: driver must be None, 'gesvd' or 'gesvdj', got {other:?}"
            )))
        }
    })
}

/// `(U, S, Vh)`.
#[pyfunction]
#[pyo3(signature = (x, full_matrices, driver = None))]
fn linalg_svd(
    py: Python<'_>,
    x: &PyArray,
    full_matrices: bool,
    driver: Option<&str>,
) -> PyResult<(PyArray, PyArray, PyArray)> {
    let d = driver_from(driver)?;
    let a = arr(x);
    let (u, s, vh) = detached(py, move || la::svd(&a, full_matrices, d))?;
    Ok((u.into(), s.into(), vh.into()))
}

/// The singular values.
#[pyfunction]
fn linalg_svdvals(py: Python<'_>, x: &PyArray) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::svdvals(&a))?.into())
}

/// The pseudo-inverse (`rtol`: an array broadcast against the batch, or None).
#[pyfunction]
#[pyo3(signature = (x, rtol = None))]
fn linalg_pinv(py: Python<'_>, x: &PyArray, rtol: Option<&PyArray>) -> PyResult<PyArray> {
    let (a, r) = (arr(x), rtol.map(arr));
    Ok(detached(py, move || la::pinv(&a, r.as_ref()))?.into())
}

/// The rank of each matrix.
#[pyfunction]
#[pyo3(signature = (x, rtol = None))]
fn linalg_matrix_rank(py: Python<'_>, x: &PyArray, rtol: Option<&PyArray>) -> PyResult<PyArray> {
    let (a, r) = (arr(x), rtol.map(arr));
    Ok(detached(py, move || la::matrix_rank(&a, r.as_ref()))?.into())
}

/// A matrix norm: `ord` is `'fro'`, `'nuc'`, or one of 1, -1, 2, -2, inf, -inf.
#[pyfunction]
fn linalg_matrix_norm(
    py: Python<'_>,
    x: &PyArray,
    ord: &Bound<'_, PyAny>,
    keepdims: bool,
) -> PyResult<PyArray> {
    let o = if let Ok(s) = ord.extract::<String>() {
        match s.as_str() {
            "fro" => MatrixNorm::Frobenius,
            "nuc" => MatrixNorm::Nuclear,
            other => {
                return Err(PyValueError::new_err(format!(
                    "matrix_norm: invalid ord {other:?}"
                )))
            }
        }
    } else {
        let v: f64 = ord.extract().map_err(|_| {
            PyTypeError::new_err("matrix_norm: ord must be 'fro', 'nuc' or a number")
        })?;
        match v {
            1.0 => MatrixNorm::MaxColumnSum,
            -1.0 => MatrixNorm::MinColumnSum,
            2.0 => MatrixNorm::MaxSingular,
            -2.0 => MatrixNorm::MinSingular,
            f64::INFINITY => MatrixNorm::MaxRowSum,
            f64::NEG_INFINITY => MatrixNorm::MinRowSum,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "matrix_norm: invalid ord {v}"
                )))
            }
        }
    };
    let a = arr(x);
    Ok(detached(py, move || la::matrix_norm(&a, o, keepdims))?.into())
}

/// A vector norm over `axis` (None: all axes).
#[pyfunction]
#[pyo3(signature = (x, axis, keepdims, ord))]
fn linalg_vector_norm(
    py: Python<'_>,
    x: &PyArray,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: bool,
    ord: f64,
) -> PyResult<PyArray> {
    let axes = axes_from_py(axis)?;
    let a = arr(x);
    Ok(detached(py, move || {
        la::vector_norm(&a, axes.as_deref(), keepdims, ord)
    })?
    .into())
}

/// `x` to the integer power `n`.
#[pyfunction]
fn linalg_matrix_power(py: Python<'_>, x: &PyArray, n: i64) -> PyResult<PyArray> {
    let a = arr(x);
    Ok(detached(py, move || la::matrix_power(&a, n))?.into())
}

/// The sum of diagonal `offset` (in `dtype` when given).
#[pyfunction]
#[pyo3(signature = (x, offset, dtype = None))]
fn linalg_trace(
    py: Python<'_>,
    x: &PyArray,
    offset: isize,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let d = dtype.map(dtype_from_py).transpose()?;
    let a = arr(x);
    Ok(detached(py, move || la::trace(&a, offset, d))?.into())
}

/// Diagonal `offset` of each matrix (a view).
#[pyfunction]
fn linalg_diagonal(x: &PyArray, offset: isize) -> PyResult<PyArray> {
    // Read-only, as NumPy's `diagonal` view: a client writing it expects a copy it owns.
    Ok(
        crate::errors::IntoPyResult::py_err(la::diagonal(&x.inner, offset))?
            .read_only()
            .into(),
    )
}

/// The outer product of two vectors.
#[pyfunction]
fn linalg_outer(py: Python<'_>, x1: &PyArray, x2: &PyArray) -> PyResult<PyArray> {
    let (a, b) = (arr(x1), arr(x2));
    Ok(detached(py, move || la::outer(&a, &b))?.into())
}

/// The cross product along `axis`.
#[pyfunction]
fn linalg_cross(py: Python<'_>, x1: &PyArray, x2: &PyArray, axis: isize) -> PyResult<PyArray> {
    let (a, b) = (arr(x1), arr(x2));
    Ok(detached(py, move || la::cross(&a, &b, axis))?.into())
}

/// Tensor contraction; `axes` is an int or a pair of sequences of ints.
#[pyfunction]
fn tensordot(
    py: Python<'_>,
    x1: &PyArray,
    x2: &PyArray,
    axes: &Bound<'_, PyAny>,
) -> PyResult<PyArray> {
    let ax = if let Ok(n) = axes.extract::<i64>() {
        if n < 0 {
            return Err(PyValueError::new_err(format!(
                "tensordot: axes must be non-negative, got {n}"
            )));
        }
        TensordotAxes::Last(n as usize)
    } else {
        let (a, b): (Vec<isize>, Vec<isize>) = axes.extract().map_err(|_| {
            PyTypeError::new_err("tensordot: axes must be an int or a pair of sequences of ints")
        })?;
        TensordotAxes::Pairs(a, b)
    };
    let (a, b) = (arr(x1), arr(x2));
    Ok(detached(py, move || la::tensordot(&a, &b, &ax))?.into())
}

/// The dot product along `axis`.
#[pyfunction]
fn vecdot(py: Python<'_>, x1: &PyArray, x2: &PyArray, axis: isize) -> PyResult<PyArray> {
    let (a, b) = (arr(x1), arr(x2));
    Ok(detached(py, move || la::vecdot(&a, &b, axis))?.into())
}

/// Adds the linalg functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(linalg_solve, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_inv, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_det, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_slogdet, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cholesky, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_qr, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eig, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigvals, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_eigvalsh, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_svd, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_svdvals, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_pinv, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_rank, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_norm, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_vector_norm, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_matrix_power, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_trace, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_diagonal, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_outer, m)?)?;
    m.add_function(wrap_pyfunction!(linalg_cross, m)?)?;
    m.add_function(wrap_pyfunction!(tensordot, m)?)?;
    m.add_function(wrap_pyfunction!(vecdot, m)?)?;
    Ok(())
}
