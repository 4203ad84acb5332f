//! Sorting, searching, set and index-array functions: `sort`, `argsort`, `unique`,
//! `searchsorted`, `isin`, `nonzero`, `take`, `take_along_axis`. Arguments are converted, the GIL
//! is released around the computation.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ingot::ops;

use crate::errors::detached;
use crate::pyarray::PyArray;

/// `x` sorted along `axis` (NaNs last; `descending` reverses the order).
#[pyfunction]
#[pyo3(signature = (x, axis = -1, descending = false))]
fn sort(py: Python<'_>, x: &PyArray, axis: isize, descending: bool) -> PyResult<PyArray> {
    let a = x.inner.clone();
    Ok(detached(py, move || ops::sort(&a, axis, descending))?.into())
}

/// The int64 indices that sort `x` along `axis` (stable).
#[pyfunction]
#[pyo3(signature = (x, axis = -1, descending = false))]
fn argsort(py: Python<'_>, x: &PyArray, axis: isize, descending: bool) -> PyResult<PyArray> {
    let a = x.inner.clone();
    Ok(detached(py, move || ops::argsort(&a, axis, descending))?.into())
}

/// The distinct values of `x` and, as asked, (values, first indices, inverse, counts); the
/// parts not asked for are None.
#[pyfunction]
#[pyo3(signature = (x, indices = false, inverse = false, counts = false))]
fn unique<'py>(
    py: Python<'py>,
    x: &PyArray,
    indices: bool,
    inverse: bool,
    counts: bool,
) -> PyResult<Bound<'py, PyTuple>> {
    let a = x.inner.clone();
    let u = detached(py, move || ops::unique(&a, indices, inverse, counts))?;
    let opt = |v: Option<ingot::Array>| v.map(PyArray::from);
    (
        PyArray::from(u.values),
        opt(u.indices),
        opt(u.inverse),
        opt(u.counts),
    )
        .into_pyobject(py)
}

/// Insertion positions of `x2` in the sorted 1-D `x1` (`side`: "left" or "right"; `sorter`:
/// indices that sort `x1`).
#[pyfunction]
#[pyo3(signature = (x1, x2, side = "left", sorter = None))]
fn searchsorted(
    py: Python<'_>,
    x1: &PyArray,
    x2: &PyArray,
    side: &str,
    sorter: Option<&PyArray>,
) -> PyResult<PyArray> {
    let right = match side {
        "left" => false,
        "right" => true,
        _ => {
            return Err(PyValueError::new_err(format!(
                "searchsorted: side must be 'left' or 'right', got {side:?}"
            )))
        }
    };
    let (a, b, s) = (
        x1.inner.clone(),
        x2.inner.clone(),
        sorter.map(|s| s.inner.clone()),
    );
    Ok(detached(py, move || ops::searchsorted(&a, &b, right, s.as_ref()))?.into())
}

/// Whether each element of `x1` is in `x2` (or not, with `invert`).
#[pyfunction]
#[pyo3(signature = (x1, x2, invert = false))]
fn isin(py: Python<'_>, x1: &PyArray, x2: &PyArray, invert: bool) -> PyResult<PyArray> {
    let (a, b) = (x1.inner.clone(), x2.inner.clone());
    Ok(detached(py, move || ops::isin(&a, &b, invert))?.into())
}

/// The coordinates of the nonzero elements of `x`, one int64 array per axis.
#[pyfunction]
fn nonzero<'py>(py: Python<'py>, x: &PyArray) -> PyResult<Bound<'py, PyTuple>> {
    let a = x.inner.clone();
    let r = detached(py, move || ops::nonzero(&a))?;
    PyTuple::new(py, r.into_iter().map(PyArray::from))
}

/// The elements of `x` at `indices` along `axis` (None: of the flattened array).
#[pyfunction]
#[pyo3(signature = (x, indices, axis = None))]
fn take(py: Python<'_>, x: &PyArray, indices: &PyArray, axis: Option<isize>) -> PyResult<PyArray> {
    let (a, i) = (x.inner.clone(), indices.inner.clone());
    Ok(detached(py, move || ops::take(&a, &i, axis))?.into())
}

/// `x` gathered along `axis` at `indices` (same number of dimensions, broadcasting elsewhere).
#[pyfunction]
#[pyo3(signature = (x, indices, axis = -1))]
fn take_along_axis(
    py: Python<'_>,
    x: &PyArray,
    indices: &PyArray,
    axis: isize,
) -> PyResult<PyArray> {
    let (a, i) = (x.inner.clone(), indices.inner.clone());
    Ok(detached(py, move || ops::take_along_axis(&a, &i, axis))?.into())
}

/// Adds the sorting, searching, set and index-array functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(argsort, m)?)?;
    m.add_function(wrap_pyfunction!(unique, m)?)?;
    m.add_function(wrap_pyfunction!(searchsorted, m)?)?;
    m.add_function(wrap_pyfunction!(isin, m)?)?;
    m.add_function(wrap_pyfunction!(nonzero, m)?)?;
    m.add_function(wrap_pyfunction!(take, m)?)?;
    m.add_function(wrap_pyfunction!(take_along_axis, m)?)?;
    Ok(())
}
