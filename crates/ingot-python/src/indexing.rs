//! Python index keys (`a[1, ::-2, None, ...]`) to `ingot::IndexItem`s.
//!
//! Basic indexing only: integers (anything with `__index__`, 0-d integer arrays), slices with any
//! step, `None`, `...` and tuples of these. Integer-array and boolean-mask indexing raise
//! `IndexError` naming what is not supported.

use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PySlice, PyTuple};

use ingot::IndexItem;

use crate::pyarray::PyArray;

/// Slice bounds past this magnitude are clamped (they select the same elements and keep the
/// arithmetic of `slice_indices` far from overflow).
const BOUND: i64 = 1 << 62;

fn clamp_index(obj: &Bound<'_, PyAny>) -> PyResult<isize> {
    let i: Bound<'_, PyInt> = obj.call_method0("__index__")?.cast_into()?;
    Ok(match i.extract::<i64>() {
        Ok(v) => v.clamp(-BOUND, BOUND) as isize,
        Err(_) => {
            if i.lt(0)? {
                -BOUND as isize
            } else {
                BOUND as isize
            }
        }
    })
}

fn unsupported(what: &str) -> PyErr {
    PyIndexError::new_err(format!(
        "{what} indexing is not supported yet: only integers, slices, None and ... are \
         (integer-array and boolean-mask indexing are out of scope for now)"
    ))
}

fn item(obj: &Bound<'_, PyAny>) -> PyResult<IndexItem> {
    if obj.is_none() {
        return Ok(IndexItem::NewAxis);
    }
    if obj.is_instance_of::<PyEllipsis>() {
        return Ok(IndexItem::Ellipsis);
    }
    if obj.is_instance_of::<PyBool>() {
        return Err(unsupported("boolean scalar"));
    }
    if let Ok(s) = obj.cast::<PySlice>() {
        let part = |name: &str| -> PyResult<Option<isize>> {
            let v = s.getattr(name)?;
            if v.is_none() {
                Ok(None)
            } else {
                clamp_index(&v).map(Some).map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(
                        "slice indices must be integers or None or have an __index__ method",
                    )
                })
            }
        };
        return Ok(IndexItem::Slice {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?,
        });
    }
    if let Ok(a) = obj.cast::<PyArray>() {
        let a = a.get();
        if a.inner.ndim() == 0 && a.inner.dtype().is_integer() {
            let v = obj.call_method0("__index__")?;
            return int_item(&v);
        }
        return Err(unsupported(if a.inner.dtype() == ingot::DType::Bool {
            "boolean-mask"
        } else {
            "array"
        }));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_item(obj);
    }
    if obj.hasattr("__index__")? && !obj.hasattr("shape")? {
        let v = obj.call_method0("__index__")?;
        return int_item(&v);
    }
    if obj.hasattr("shape")? && obj.hasattr("dtype")? {
        // A NumPy array or scalar: 0-d integers act as integers, the rest is advanced indexing.
        let ndim: usize = obj.getattr("ndim")?.extract()?;
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        if ndim == 0 && (kind == "i" || kind == "u") {
            let v = obj.call_method0("__index__")?;
            return int_item(&v);
        }
        return Err(unsupported(if kind == "b" {
            "boolean-mask"
        } else {
            "array"
        }));
    }
    if obj.is_instance_of::<pyo3::types::PyList>() {
        return Err(unsupported("list (integer-array)"));
    }
    Err(PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`) and None are valid indices, got {}",
        obj.get_type().name()?
    )))
}

fn int_item(v: &Bound<'_, PyAny>) -> PyResult<IndexItem> {
    match v.extract::<isize>() {
        Ok(i) => Ok(IndexItem::Int(i)),
        Err(_) if v.is_instance_of::<PyInt>() => Err(PyIndexError::new_err(format!(
            "index {} is out of bounds",
            v.str()?
        ))),
        Err(_) => Err(PyOverflowError::new_err("index out of range")),
    }
}

/// Converts a `__getitem__`/`__setitem__` key into index items.
pub fn parse_key(key: &Bound<'_, PyAny>) -> PyResult<Vec<IndexItem>> {
    if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| item(&k)).collect()
    } else {
        Ok(vec![item(key)?])
    }
}
