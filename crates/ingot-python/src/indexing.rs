//! Python index keys (`a[1, ::-2, None, ..., idx, mask]`) to `ingot::ops::IndexKey`s.
//!
//! Basic items: integers (anything with `__index__`, 0-d integer arrays), slices with any step,
//! `None`, `...`. Advanced items: integer arrays and boolean masks (ingot arrays, NumPy arrays,
//! lists; Python and NumPy booleans act as 0-d masks), moved to the indexed array's device.
//! Anything else (floats, float arrays, strings) is an `IndexError` naming it.

use pyo3::exceptions::{PyIndexError, PyOverflowError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyEllipsis, PyInt, PyList, PySlice, PyTuple};

use ingot::ops::IndexKey;
use ingot::{Array, DType, IndexItem, Scalar};

use crate::creation::{numpy_to_array, GpuAlias};
use crate::errors::IntoPyResult;
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

fn not_index(what: &str) -> PyErr {
    PyIndexError::new_err(format!(
        "only integers, slices (`:`), ellipsis (`...`), None, and integer or boolean arrays are \
         valid indices, got {what}"
    ))
}

/// An index array from an ingot array: integer or boolean, on `like`'s device.
fn array_key(a: &Array, like: &Array) -> PyResult<IndexKey> {
    if a.dtype() != DType::Bool && !a.dtype().is_integer() {
        return Err(PyIndexError::new_err(format!(
            "arrays used as indices must be of integer or boolean type, got {}",
            a.dtype()
        )));
    }
    let a = if a.device() == like.device() {
        a.clone()
    } else {
        a.to_device(like.device()).py_err()?
    };
    Ok(IndexKey::Array(a))
}

/// An array-like (NumPy array or scalar, list) as an index array on `like`'s device; an empty
/// list indexes with no integers.
fn array_like_key(obj: &Bound<'_, PyAny>, like: &Array) -> PyResult<IndexKey> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let mut a = np.getattr("asarray")?.call1((obj,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    let size: usize = a.getattr("size")?.extract()?;
    if size == 0 && kind == "f" {
        a = a.call_method1("astype", ("int64",))?;
    } else if kind != "b" && kind != "i" && kind != "u" {
        return Err(PyIndexError::new_err(format!(
            "arrays used as indices must be of integer or boolean type, got NumPy dtype {}",
            a.getattr("dtype")?.str()?
        )));
    }
    let arr = numpy_to_array(&a, None, like.device(), GpuAlias::Copy)?;
    array_key(&arr, like)
}

fn item(obj: &Bound<'_, PyAny>, like: &Array) -> PyResult<IndexKey> {
    if obj.is_none() {
        return Ok(IndexKey::Item(IndexItem::NewAxis));
    }
    if obj.is_instance_of::<PyEllipsis>() {
        return Ok(IndexKey::Item(IndexItem::Ellipsis));
    }
    if obj.is_instance_of::<PyBool>() {
        let b: bool = obj.extract()?;
        let a = Array::scalar(Scalar::Bool(b), DType::Bool, like.device()).py_err()?;
        return Ok(IndexKey::Array(a));
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
        return Ok(IndexKey::Item(IndexItem::Slice {
            start: part("start")?,
            stop: part("stop")?,
            step: part("step")?,
        }));
    }
    if let Ok(a) = obj.cast::<PyArray>() {
        let a = a.get();
        if a.inner.ndim() == 0 && a.inner.dtype().is_integer() {
            let v = obj.call_method0("__index__")?;
            return int_item(&v);
        }
        return array_key(&a.inner, like);
    }
    if obj.is_instance_of::<PyInt>() {
        return int_item(obj);
    }
    if obj.hasattr("__index__")? && !obj.hasattr("shape")? {
        let v = obj.call_method0("__index__")?;
        return int_item(&v);
    }
    if obj.hasattr("shape")? && obj.hasattr("dtype")? {
        // A NumPy array or scalar: 0-d integers act as integers, the rest as index arrays.
        let ndim: usize = obj.getattr("ndim")?.extract()?;
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        if ndim == 0 && (kind == "i" || kind == "u") {
            let v = obj.call_method0("__index__")?;
            return int_item(&v);
        }
        return array_like_key(obj, like);
    }
    if obj.is_instance_of::<PyList>() {
        return array_like_key(obj, like);
    }
    Err(not_index(&obj.get_type().name()?.to_string()))
}

fn int_item(v: &Bound<'_, PyAny>) -> PyResult<IndexKey> {
    match v.extract::<isize>() {
        Ok(i) => Ok(IndexKey::Item(IndexItem::Int(i))),
        Err(_) if v.is_instance_of::<PyInt>() => Err(PyIndexError::new_err(format!(
            "index {} is out of bounds",
            v.str()?
        ))),
        Err(_) => Err(PyOverflowError::new_err("index out of range")),
    }
}

/// Converts a `__getitem__`/`__setitem__` key of the array `like` into index keys.
pub fn parse_key(key: &Bound<'_, PyAny>, like: &Array) -> PyResult<Vec<IndexKey>> {
    if let Ok(t) = key.cast::<PyTuple>() {
        t.iter().map(|k| item(&k, like)).collect()
    } else {
        Ok(vec![item(key, like)?])
    }
}

/// The basic items of `keys` when every key is basic (a view suffices), else `None`.
pub fn basic_items(keys: &[IndexKey]) -> Option<Vec<IndexItem>> {
    keys.iter()
        .map(|k| match k {
            IndexKey::Item(i) => Some(*i),
            IndexKey::Array(_) => None,
        })
        .collect()
}
