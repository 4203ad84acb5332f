//! The `ingot.Array` type (its methods are in `array.rs`, `array_operators.rs` and
//! `array_methods.rs`) and the argument conversions every binding file shares.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ingot::Array;

/// An n-dimensional array on a device (CPU, CUDA or Metal), following the Python array API.
#[pyclass(name = "Array", module = "ingot", frozen)]
pub struct PyArray {
    /// The ingot array this object wraps.
    pub inner: Array,
}

impl From<Array> for PyArray {
    fn from(inner: Array) -> Self {
        PyArray { inner }
    }
}

/// Converts a shape argument: an int or a sequence of ints, each non-negative.
pub fn shape_from_py(obj: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
    let dims: Vec<i64> = if let Ok(n) = obj.extract::<i64>() {
        vec![n]
    } else {
        obj.extract::<Vec<i64>>().map_err(|_| {
            PyTypeError::new_err("a shape must be an integer or a sequence of integers")
        })?
    };
    dims.iter()
        .map(|&d| {
            usize::try_from(d).map_err(|_| {
                PyValueError::new_err(format!("negative dimensions are not allowed: {d}"))
            })
        })
        .collect()
}

/// Converts an axis argument: `None`, an int or a sequence of ints.
pub fn axes_from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<isize>>> {
    match obj {
        None => Ok(None),
        Some(o) if o.is_none() => Ok(None),
        Some(o) => {
            if let Ok(a) = o.extract::<isize>() {
                Ok(Some(vec![a]))
            } else {
                o.extract::<Vec<isize>>().map(Some).map_err(|_| {
                    PyTypeError::new_err("axis must be None, an integer or a tuple of integers")
                })
            }
        }
    }
}

/// Calls `ingot.<name>(self, *args, **kwargs)`: array methods that mirror namespace functions.
pub fn delegate<'py>(
    slf: &Bound<'py, PyArray>,
    module: &str,
    name: &str,
    args: &Bound<'py, PyTuple>,
    kwargs: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let py = slf.py();
    let f = py.import(module)?.getattr(name)?;
    let mut all = vec![slf.clone().into_any()];
    all.extend(args.iter());
    f.call(PyTuple::new(py, all)?, kwargs)
}
