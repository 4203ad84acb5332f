//! Array creation: from NumPy (zero-copy on the CPU, and on Metal for page-aligned memory, where
//! possible), constants, ranges.

use std::sync::Arc;

use numpy::{PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;

use ingot::runtime::cpu::CpuMemory;
use ingot::runtime::Buffer;
use ingot::{Array, DType, Device, Layout};

use crate::device::device_from_py;
use crate::dtype::{check_fits, dtype_from_py, scalar_from_py};
use crate::errors::{detached, IntoPyResult};
use crate::pyarray::{shape_from_py, PyArray};

/// The ingot dtype of a NumPy array, if ingot supports it in native byte order.
fn numpy_dtype(arr: &Bound<'_, PyUntypedArray>) -> PyResult<DType> {
    let descr = arr.dtype();
    let name: String = descr.getattr("name")?.extract()?;
    if descr.is_native_byteorder() == Some(false) {
        return Err(PyTypeError::new_err(format!(
            "non-native byte order ({name}) is not supported: convert with astype first"
        )));
    }
    DType::parse(&name)
        .map_err(|_| PyTypeError::new_err(format!("NumPy dtype {name} is not supported by ingot")))
}

/// Wraps the memory of a CPU NumPy array without copying, when aligned and when the strides are
/// multiples of the itemsize. `None` when it cannot.
fn wrap_numpy(arr: &Bound<'_, PyUntypedArray>, dtype: DType) -> PyResult<Option<Array>> {
    let itemsize = dtype.size() as isize;
    if !arr.is_aligned() || arr.len() == 0 {
        return Ok(None);
    }
    let shape = arr.shape().to_vec();
    let byte_strides = arr.strides().to_vec();
    if byte_strides.iter().any(|s| s % itemsize != 0) {
        return Ok(None);
    }
    // SAFETY: `as_array_ptr` is a live PyArrayObject while `arr` is bound.
    let (data, flags) = unsafe {
        let p = arr.as_array_ptr();
        ((*p).fields.data as *mut u8, (*p).fields.flags)
    };
    let writable = flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0;
    let (mut lo, mut hi) = (0isize, 0isize);
    for (&n, &s) in shape.iter().zip(&byte_strides) {
        let reach = (n as isize - 1) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let nbytes = (hi - lo + itemsize) as usize;
    // SAFETY: every element the strides reach lies in [data + lo, data + hi + itemsize).
    let base = unsafe { data.offset(lo) };
    let owner: Py<PyAny> = arr.clone().into_any().unbind();
    // SAFETY: the NumPy array (kept alive by `owner`) owns these bytes.
    let mem = unsafe { CpuMemory::foreign(base, nbytes, Box::new(owner)) };
    let buffer = Buffer::new(mem, nbytes, Device::Cpu, writable);
    let layout = Layout::new(
        shape,
        byte_strides.iter().map(|s| s / itemsize).collect(),
        (-lo / itemsize) as usize,
    )
    .py_err()?;
    Array::from_parts(Arc::new(buffer), layout, dtype)
        .py_err()
        .map(Some)
}

/// Whether [`numpy_to_array`] may wrap NumPy memory on a GPU that shares memory with the host
/// (Metal). The CPU always wraps when it can: its operations finish before they return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GpuAlias {
    /// Wrap when possible: the ingot array aliases the NumPy array while GPU work is queued.
    /// For `asarray`/`from_numpy` (documented aliasing) and kernel arguments (the launch is
    /// synchronised when an argument aliases NumPy memory).
    Allow,
    /// Always copy to a GPU: for operands of one operation, whose queued reads would otherwise
    /// see later writes to the NumPy array.
    Copy,
}

/// Wraps a NumPy array on a GPU that shares memory with the host (Metal) without copying.
/// `None` on other devices, or when the memory cannot be wrapped.
fn wrap_numpy_gpu(
    arr: &Bound<'_, PyUntypedArray>,
    dtype: DType,
    device: Device,
) -> PyResult<Option<Array>> {
    match device {
        #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
        Device::Metal(index) => crate::metal::wrap_numpy(arr, dtype, index),
        _ => {
            let _ = (arr, dtype);
            Ok(None)
        }
    }
}

/// True when `array` is on a GPU and its buffer is host memory used in place (a NumPy array
/// wrapped by [`numpy_to_array`] on Metal): queued GPU work then reads and writes that memory.
pub fn aliases_host_on_gpu(array: &Array) -> bool {
    match array.device() {
        #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
        Device::Metal(_) => crate::metal::wraps_host_memory(array),
        _ => false,
    }
}

/// A NumPy array (or NumPy scalar) as an ingot array on `device` unless `copy=True`: zero-copy
/// on the CPU where possible, and on Metal (with `GpuAlias::Allow`) for a C-contiguous array
/// whose memory is page-aligned and a whole number of pages; `copy=False` raises when a copy is
/// needed. A dtype the device cannot hold (float64 on Metal) raises before anything is copied.
pub fn numpy_to_array(
    obj: &Bound<'_, PyAny>,
    copy: Option<bool>,
    device: Device,
    alias: GpuAlias,
) -> PyResult<Array> {
    let py = obj.py();
    let np = py.import("numpy")?;
    let arr_obj = if obj.cast::<PyUntypedArray>().is_ok() {
        obj.clone()
    } else {
        np.getattr("asarray")?.call1((obj,))?
    };
    let arr = arr_obj
        .cast::<PyUntypedArray>()
        .map_err(|_| PyTypeError::new_err("expected a NumPy array"))?;
    let dtype = numpy_dtype(arr)?;
    ingot::runtime::check_dtype(device, dtype).py_err()?;
    if device == Device::Cpu && copy != Some(true) {
        if let Some(a) = wrap_numpy(arr, dtype)? {
            return Ok(a);
        }
        if arr.len() == 0 && copy.is_none() {
            return Array::empty(arr.shape(), dtype, device).py_err();
        }
    }
    if device != Device::Cpu && copy != Some(true) && alias == GpuAlias::Allow {
        if let Some(a) = wrap_numpy_gpu(arr, dtype, device)? {
            return Ok(a);
        }
    }
    if copy == Some(false) && arr.len() != 0 {
        let why = match device {
            Device::Metal(_) => {
                " (on Metal, only a C-contiguous array whose address is page-aligned and whose \
                 size is a multiple of the page size is used in place)"
            }
            _ => "",
        };
        return Err(PyValueError::new_err(format!(
            "copy=False: this NumPy array cannot be used on {device} without a copy{why}"
        )));
    }
    // `ascontiguousarray` returns at least 1-D: the shape comes from the original array.
    let shape = arr.shape().to_vec();
    let contiguous = np.getattr("ascontiguousarray")?.call1((arr,))?;
    let c = contiguous.cast::<PyUntypedArray>()?;
    let nbytes = c.len() * dtype.size();
    let bytes: &[u8] = if nbytes == 0 {
        &[]
    } else {
        // SAFETY: `c` is a C-contiguous array of `nbytes` bytes that lives through this call
        // (the GIL stays held, so no Python code can resize or free it).
        unsafe { std::slice::from_raw_parts((*c.as_array_ptr()).fields.data as *const u8, nbytes) }
    };
    Array::from_bytes(bytes, &shape, dtype, device).py_err()
}

/// A NumPy array as an ingot array (see `numpy_to_array`). On the CPU, and on Metal when the
/// memory is page-aligned, the result shares memory with the NumPy array; on Metal, do not write
/// the NumPy array while GPU work on the ingot array is queued, and synchronise before reading
/// results through NumPy.
#[pyfunction]
#[pyo3(signature = (arr, copy = None, device = None))]
fn from_numpy(
    arr: &Bound<'_, PyAny>,
    copy: Option<bool>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let d = device_from_py(device)?;
    Ok(numpy_to_array(arr, copy, d, GpuAlias::Allow)?.into())
}

/// A new array with uninitialised contents.
#[pyfunction]
#[pyo3(signature = (shape, dtype, device = None))]
fn empty(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (s, d, dev) = (
        shape_from_py(shape)?,
        dtype_from_py(dtype)?,
        device_from_py(device)?,
    );
    Ok(detached(py, move || Array::empty(&s, d, dev))?.into())
}

/// A new array with every element `value` (a Python scalar; integers must fit the dtype).
#[pyfunction]
#[pyo3(signature = (shape, value, dtype, device = None))]
fn full(
    py: Python<'_>,
    shape: &Bound<'_, PyAny>,
    value: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (s, d, dev) = (
        shape_from_py(shape)?,
        dtype_from_py(dtype)?,
        device_from_py(device)?,
    );
    let v = scalar_from_py(value)?
        .ok_or_else(|| PyTypeError::new_err("fill_value must be a Python bool, int or float"))?;
    if d.is_integer() && !matches!(v, ingot::Scalar::Float(_)) {
        check_fits(v, d)?;
    }
    Ok(detached(py, move || ingot::ops::full(&s, v, d, dev))?.into())
}

/// `start, start + step, ...` below `stop`.
#[pyfunction]
#[pyo3(signature = (start, stop, step, dtype, device = None))]
fn arange(
    py: Python<'_>,
    start: f64,
    stop: f64,
    step: f64,
    dtype: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (d, dev) = (dtype_from_py(dtype)?, device_from_py(device)?);
    Ok(detached(py, move || ingot::ops::arange(start, stop, step, d, dev))?.into())
}

/// `num` evenly spaced values from `start` to `stop`.
#[pyfunction]
#[pyo3(signature = (start, stop, num, endpoint, dtype, device = None))]
fn linspace(
    py: Python<'_>,
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    dtype: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (d, dev) = (dtype_from_py(dtype)?, device_from_py(device)?);
    Ok(detached(py, move || {
        ingot::ops::linspace(start, stop, num, endpoint, d, dev)
    })?
    .into())
}

/// An `n x m` matrix with ones on diagonal `k`.
#[pyfunction]
#[pyo3(signature = (n, m, k, dtype, device = None))]
fn eye(
    py: Python<'_>,
    n: usize,
    m: usize,
    k: isize,
    dtype: &Bound<'_, PyAny>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyArray> {
    let (d, dev) = (dtype_from_py(dtype)?, device_from_py(device)?);
    Ok(detached(py, move || ingot::ops::eye(n, m, k, d, dev))?.into())
}

/// Adds the creation functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_numpy, m)?)?;
    m.add_function(wrap_pyfunction!(empty, m)?)?;
    m.add_function(wrap_pyfunction!(full, m)?)?;
    m.add_function(wrap_pyfunction!(arange, m)?)?;
    m.add_function(wrap_pyfunction!(linspace, m)?)?;
    m.add_function(wrap_pyfunction!(eye, m)?)?;
    Ok(())
}
