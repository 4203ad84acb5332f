//! NumPy and Metal share memory without copies (Apple silicon has unified memory).
//!
//! Compiled only with the `metal` feature on macOS (or under the Linux type-check cfg
//! `ingot_metal_typecheck`), like `ingot::runtime::metal`.
//!
//! - **NumPy → Metal** ([`wrap_numpy`]): a C-contiguous, aligned NumPy array whose address is
//!   page-aligned and whose size is a multiple of the page size (16 KiB on Apple silicon) becomes
//!   a Metal buffer over the same memory (`newBufferWithBytesNoCopy`). The ingot array then
//!   aliases the NumPy array, as on the CPU; but Metal work is asynchronous, so the NumPy array
//!   must not be written while queued GPU work reads it, and GPU writes are seen through NumPy
//!   only after `ingot.synchronize()` (or anything that reads the array on the host, such as
//!   `numpy.asarray`). Other NumPy arrays are copied, as before.
//! - **Metal → NumPy** ([`synchronized_host_ptr`]): `__array_interface__` of a Metal array waits
//!   for the device's queued work and then exposes the buffer's shared memory; NumPy keeps the
//!   ingot array (so the buffer) alive as the view's base.
//!
//! **The Metal backend has not yet run on Apple hardware**; this glue is type-checked on Linux by
//! `scripts/metal_typecheck.sh` and tested on macOS by `tests/test_metal.py`.

use std::sync::Arc;

use numpy::{PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyBufferError;
use pyo3::prelude::*;

use ingot::{Array, DType, Device, Layout};

use crate::errors::{detached, IntoPyResult};

/// Wraps the memory of a NumPy array as an array on Metal device `index` without copying.
///
/// `Ok(None)` when it cannot be wrapped: the array is empty, not C-contiguous or not aligned for
/// its dtype, or Metal refuses the memory (an address that is not page-aligned, a size that is not
/// a multiple of the page size). The caller then copies. The dtype must be one Metal holds (the
/// caller checks `ingot::runtime::check_dtype` first; it is checked again here). The result is
/// writable exactly when the NumPy array is.
pub fn wrap_numpy(
    arr: &Bound<'_, PyUntypedArray>,
    dtype: DType,
    index: usize,
) -> PyResult<Option<Array>> {
    ingot::runtime::check_dtype(Device::Metal(index), dtype).py_err()?;
    if arr.len() == 0 || !arr.is_c_contiguous() || !arr.is_aligned() {
        return Ok(None);
    }
    let Some(nbytes) = arr.len().checked_mul(dtype.size()) else {
        return Ok(None);
    };
    // SAFETY: `as_array_ptr` is a live PyArrayObject while `arr` is bound.
    let (data, flags) = unsafe {
        let p = arr.as_array_ptr();
        ((*p).fields.data as *mut u8, (*p).fields.flags)
    };
    let writable = flags & numpy::npyffi::NPY_ARRAY_WRITEABLE != 0;
    let rt = ingot::runtime::metal::runtime(index).py_err()?;
    // The owner keeps the NumPy array, and so its memory, alive until Metal frees the buffer.
    // Metal may free it on one of its own threads, without the GIL: dropping a `Py` there only
    // queues the decref, which Python applies the next time a thread attaches (as for the CPU
    // wrap in `creation.rs`). Taking the GIL in the deallocator instead could deadlock with a
    // thread that holds the GIL while waiting for the Metal queue.
    let owner: Py<PyAny> = arr.clone().into_any().unbind();
    // SAFETY: a C-contiguous NumPy array of `arr.len()` elements of `dtype` owns `nbytes` bytes
    // from `data`; `owner` keeps the array alive, and NumPy neither frees nor moves the memory
    // of an array that is referenced (`resize` refuses). Writes from the GPU happen only through
    // ingot arrays over this buffer, which is read-only when the NumPy array is.
    let wrapped = unsafe { rt.wrap_host(data, nbytes, Box::new(owner), writable) }.py_err()?;
    let Some(buffer) = wrapped else {
        return Ok(None);
    };
    Array::from_parts(Arc::new(buffer), Layout::contiguous(arr.shape()), dtype)
        .py_err()
        .map(Some)
}

/// The host address of the shared memory of Metal array `a`'s buffer (its start, not the first
/// element), after every queued command of its device has completed (raising the device's
/// pending error, if any). The GIL is released while waiting.
pub fn synchronized_host_ptr(py: Python<'_>, a: &Array) -> PyResult<*mut u8> {
    let Device::Metal(index) = a.device() else {
        return Err(PyBufferError::new_err(format!(
            "synchronized_host_ptr: the array is on {}, not a Metal device",
            a.device()
        )));
    };
    let rt = ingot::runtime::metal::runtime(index).py_err()?;
    detached(py, move || rt.inner().synchronize())?;
    a.buffer()
        .host_ptr()
        .ok_or_else(|| PyBufferError::new_err("this Metal array has no host address"))
}

/// True when `a`'s buffer wraps host memory (a NumPy array used in place by [`wrap_numpy`]).
pub fn wraps_host_memory(a: &Array) -> bool {
    a.buffer()
        .memory_as::<ingot::runtime::metal::MetalMemory>()
        .is_some_and(|m| m.is_wrapped())
}
