//! Zero-copy exchange with other array libraries: DLPack (`__dlpack__`, `from_dlpack`) and the
//! CUDA array interface, plus `synchronize`.
//!
//! A DLPack capsule named `"dltensor"` holds a `DLManagedTensor` whose `manager_ctx` keeps the
//! ingot array (and so its buffer) alive; the consumer renames the capsule `"used_dltensor"` and
//! calls the deleter when done. An imported tensor's memory is wrapped without a copy and its
//! producer's deleter runs when the last ingot view of it goes.

use std::ffi::{c_void, CStr};

use pyo3::exceptions::{PyBufferError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ingot::layout::Layout;
use ingot::runtime::Buffer;
use ingot::{Array, DType, Device};

use crate::device::device_from_py;
use crate::errors::IntoPyResult;
use crate::pyarray::PyArray;

const K_DL_CPU: i32 = 1;
const K_DL_CUDA: i32 = 2;

#[repr(C)]
#[derive(Copy, Clone)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Copy, Clone)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// What an exported tensor owns: the array (keeping its buffer alive) and the shape/strides
/// arrays the DLTensor points into.
struct Export {
    _array: Array,
    shape: Vec<i64>,
    strides: Vec<i64>,
    managed: DLManagedTensor,
}

const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::Bool => (6, 8),
        DType::Int8 => (0, 8),
        DType::Int16 => (0, 16),
        DType::Int32 => (0, 32),
        DType::Int64 => (0, 64),
        DType::UInt8 => (1, 8),
        DType::UInt16 => (1, 16),
        DType::UInt32 => (1, 32),
        DType::UInt64 => (1, 64),
        DType::Float16 => (2, 16),
        DType::BFloat16 => (4, 16),
        DType::Float32 => (2, 32),
        DType::Float64 => (2, 64),
        DType::Complex64 => (5, 64),
        DType::Complex128 => (5, 128),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

fn from_dl_dtype(t: DLDataType) -> PyResult<DType> {
    if t.lanes != 1 {
        return Err(PyTypeError::new_err(format!(
            "DLPack tensors with {} lanes are not supported",
            t.lanes
        )));
    }
    Ok(match (t.code, t.bits) {
        (6, 8) | (1, 1) => DType::Bool,
        (0, 8) => DType::Int8,
        (0, 16) => DType::Int16,
        (0, 32) => DType::Int32,
        (0, 64) => DType::Int64,
        (1, 8) => DType::UInt8,
        (1, 16) => DType::UInt16,
        (1, 32) => DType::UInt32,
        (1, 64) => DType::UInt64,
        (2, 16) => DType::Float16,
        (4, 16) => DType::BFloat16,
        (2, 32) => DType::Float32,
        (2, 64) => DType::Float64,
        (5, 64) => DType::Complex64,
        (5, 128) => DType::Complex128,
        (code, bits) => {
            return Err(PyTypeError::new_err(format!(
                "DLPack dtype (code {code}, {bits} bits) has no ingot dtype"
            )))
        }
    })
}

fn dl_device(d: Device) -> PyResult<DLDevice> {
    match d {
        Device::Cpu => Ok(DLDevice {
            device_type: K_DL_CPU,
            device_id: 0,
        }),
        Device::Cuda(i) => Ok(DLDevice {
            device_type: K_DL_CUDA,
            device_id: i as i32,
        }),
        Device::Metal(_) => Err(PyBufferError::new_err(
            "DLPack export of Metal arrays is not supported: use to_device('cpu') (unified memory makes it one copy)",
        )),
    }
}

unsafe extern "C" fn export_deleter(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    // SAFETY: `manager_ctx` is the Box<Export> leaked in `to_dlpack`, freed exactly once here.
    let ctx = unsafe { (*m).manager_ctx } as *mut Export;
    if !ctx.is_null() {
        drop(unsafe { Box::from_raw(ctx) });
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut pyo3::ffi::PyObject) {
    // Only an unconsumed capsule still owns its tensor; a consumer renamed it and owns it now.
    // SAFETY: called by Python with the capsule being destroyed.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let m =
                pyo3::ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            if let Some(del) = (*m).deleter {
                del(m);
            }
        }
    }
}

/// `array.__dlpack__()`: a capsule viewing the array's memory. The device's queued work is
/// finished first, so any consumer stream sees the data.
pub fn to_dlpack(py: Python<'_>, a: &Array) -> PyResult<Py<PyAny>> {
    let device = dl_device(a.device())?;
    a.device().runtime().py_err()?.synchronize().py_err()?;
    let base = match a.device() {
        Device::Cpu => a.buffer().host_ptr().map(|p| p as u64),
        _ => a.buffer().device_ptr(),
    }
    .ok_or_else(|| PyBufferError::new_err("this array's memory cannot be exported"))?;
    let mut export = Box::new(Export {
        _array: a.clone(),
        shape: a.shape().iter().map(|&d| d as i64).collect(),
        strides: a.layout().strides().iter().map(|&s| s as i64).collect(),
        managed: DLManagedTensor {
            dl_tensor: DLTensor {
                data: base as *mut c_void,
                device,
                ndim: a.ndim() as i32,
                dtype: dl_dtype(a.dtype()),
                shape: std::ptr::null_mut(),
                strides: std::ptr::null_mut(),
                byte_offset: (a.layout().offset() * a.dtype().size()) as u64,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(export_deleter),
        },
    });
    export.managed.dl_tensor.shape = export.shape.as_mut_ptr();
    export.managed.dl_tensor.strides = export.strides.as_mut_ptr();
    let raw = Box::into_raw(export);
    // SAFETY: `raw` is a live Box; its address is stable until export_deleter frees it.
    unsafe {
        (*raw).managed.manager_ctx = raw as *mut c_void;
        let managed = &mut (*raw).managed as *mut DLManagedTensor;
        let cap = pyo3::ffi::PyCapsule_New(
            managed as *mut c_void,
            DLTENSOR.as_ptr(),
            Some(capsule_destructor),
        );
        if cap.is_null() {
            export_deleter(managed);
            return Err(PyErr::fetch(py));
        }
        Ok(Bound::from_owned_ptr(py, cap).unbind())
    }
}

/// `array.__dlpack_device__()`: `(device_type, device_id)` as DLPack numbers them.
pub fn dlpack_device(a: &Array) -> PyResult<(i32, i32)> {
    let d = dl_device(a.device())?;
    Ok((d.device_type, d.device_id))
}

/// Calls the producer's deleter when the last ingot view of an imported tensor goes.
struct Imported(*mut DLManagedTensor);

// SAFETY: the pointer is only used by Drop, which takes the GIL before calling the producer.
unsafe impl Send for Imported {}
unsafe impl Sync for Imported {}

impl Drop for Imported {
    fn drop(&mut self) {
        let m = self.0;
        // Producers' deleters may touch Python objects (NumPy's does): hold the GIL.
        Python::attach(|_| {
            // SAFETY: `m` came from a consumed capsule; its deleter is called exactly once.
            unsafe {
                if let Some(del) = (*m).deleter {
                    del(m);
                }
            }
        });
    }
}

/// `ingot.from_dlpack(x)`: views the memory of any DLPack producer (PyTorch, CuPy, NumPy, JAX)
/// on its device without copying.
#[pyfunction]
pub fn from_dlpack(py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<PyArray> {
    if let Ok(a) = x.cast::<PyArray>() {
        return Ok(PyArray::from(a.get().inner.clone()));
    }
    let (dev_type, dev_id): (i32, i32) = x.call_method0("__dlpack_device__")?.extract()?;
    let device = match dev_type {
        K_DL_CPU => Device::Cpu,
        K_DL_CUDA => Device::Cuda(dev_id.max(0) as usize),
        other => {
            return Err(PyBufferError::new_err(format!(
                "DLPack device type {other} is not supported (cpu=1, cuda=2)"
            )))
        }
    };
    let kwargs = PyDict::new(py);
    if let Device::Cuda(i) = device {
        // Our stream: the producer makes it wait for the producer's pending work.
        kwargs.set_item("stream", cuda_stream(i)?)?;
    }
    let cap = x.call_method("__dlpack__", (), Some(&kwargs))?;
    // SAFETY: checks the capsule's name before reading its pointer; renames it to take it over.
    let managed = unsafe {
        let p = cap.as_ptr();
        if pyo3::ffi::PyCapsule_IsValid(p, DLTENSOR.as_ptr()) != 1 {
            return Err(PyTypeError::new_err(
                "__dlpack__ did not return an unconsumed 'dltensor' capsule",
            ));
        }
        let m = pyo3::ffi::PyCapsule_GetPointer(p, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
        if pyo3::ffi::PyCapsule_SetName(p, USED_DLTENSOR.as_ptr()) != 0 {
            return Err(PyErr::fetch(py));
        }
        m
    };
    let owner = Imported(managed);
    // SAFETY: the producer guarantees the DLTensor is valid until its deleter runs.
    let t = unsafe { &(*managed).dl_tensor };
    let dtype = from_dl_dtype(t.dtype)?;
    let ndim = t.ndim.max(0) as usize;
    let shape: Vec<usize> = (0..ndim)
        .map(|i| unsafe { *t.shape.add(i) }.max(0) as usize)
        .collect();
    let strides: Vec<isize> = if t.strides.is_null() {
        ingot::layout::contiguous_strides(&shape)
    } else {
        (0..ndim)
            .map(|i| unsafe { *t.strides.add(i) } as isize)
            .collect()
    };
    // The buffer starts at the lowest element the view can reach.
    let mut lo = 0isize;
    let mut hi = 0isize;
    for (&n, &s) in shape.iter().zip(&strides) {
        if n == 0 {
            lo = 0;
            hi = -1;
            break;
        }
        let reach = (n as isize - 1) * s;
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let esize = dtype.size() as isize;
    let nbytes = ((hi - lo + 1).max(0) * esize) as usize;
    let start = t.data as u64 + t.byte_offset + (lo * esize) as i64 as u64;
    let buffer: Buffer = match device {
        Device::Cpu => {
            // SAFETY: the producer keeps `nbytes` from `start` valid until `owner` drops.
            let mem = unsafe {
                ingot::runtime::cpu::CpuMemory::foreign(start as *mut u8, nbytes, Box::new(owner))
            };
            Buffer::new(mem, nbytes, Device::Cpu, true)
        }
        #[cfg(feature = "cuda")]
        Device::Cuda(i) => {
            // SAFETY: as above, for device memory of CUDA device `i`.
            unsafe { ingot::runtime::cuda::foreign_buffer(i, start, nbytes, true, Box::new(owner)) }
                .py_err()?
        }
        _ => {
            return Err(PyBufferError::new_err(format!(
                "this build of ingot cannot import DLPack tensors on {device}"
            )))
        }
    };
    let layout = Layout::new(shape, strides, (-lo) as usize).py_err()?;
    let array = Array::from_parts(std::sync::Arc::new(buffer), layout, dtype).py_err()?;
    Ok(PyArray::from(array))
}

#[cfg(feature = "cuda")]
fn cuda_stream(ordinal: usize) -> PyResult<usize> {
    let rt = ingot::runtime::cuda::runtime(ordinal).py_err()?;
    Ok(rt.inner().stream() as usize)
}

#[cfg(not(feature = "cuda"))]
fn cuda_stream(_ordinal: usize) -> PyResult<usize> {
    Err(PyBufferError::new_err(
        "this build of ingot has no CUDA backend",
    ))
}

/// `array.__cuda_array_interface__` (version 3) for CUDA arrays; the device is synchronised
/// first, so the consumer may read on any stream.
pub fn cuda_array_interface<'py>(py: Python<'py>, a: &Array) -> PyResult<Bound<'py, PyDict>> {
    if !matches!(a.device(), Device::Cuda(_)) {
        return Err(pyo3::exceptions::PyAttributeError::new_err(
            "__cuda_array_interface__ exists only for arrays on a CUDA device",
        ));
    }
    a.device().runtime().py_err()?.synchronize().py_err()?;
    let base = a
        .buffer()
        .device_ptr()
        .ok_or_else(|| PyBufferError::new_err("no device pointer"))?;
    let esize = a.dtype().size();
    let ptr = base + (a.layout().offset() * esize) as u64;
    let d = PyDict::new(py);
    d.set_item("shape", PyTuple::new(py, a.shape())?)?;
    let typestr = match a.dtype() {
        DType::Bool => "|b1".to_string(),
        DType::BFloat16 => {
            return Err(PyTypeError::new_err(
                "bfloat16 has no __cuda_array_interface__ type code: use __dlpack__",
            ))
        }
        d => {
            let kind = if d.is_complex() {
                'c'
            } else if d.is_float() {
                'f'
            } else if d.is_signed_integer() {
                'i'
            } else {
                'u'
            };
            format!("<{kind}{}", d.size())
        }
    };
    d.set_item("typestr", typestr)?;
    d.set_item("data", (ptr, !a.is_writable()))?;
    if a.is_contiguous() {
        d.set_item("strides", py.None())?;
    } else {
        let strides: Vec<isize> = a
            .layout()
            .strides()
            .iter()
            .map(|&s| s * esize as isize)
            .collect();
        d.set_item("strides", PyTuple::new(py, strides)?)?;
    }
    d.set_item("version", 3)?;
    Ok(d)
}

/// `ingot.synchronize(device=None)`: waits for the device's queued work (the default device
/// when none is given) and raises any device error it reported.
///
/// >>> import ingot
/// >>> y = ingot.exp(ingot.ones(1000))   # queued on a GPU, done at once on the CPU
/// >>> ingot.synchronize()               # waits until y is computed
#[pyfunction]
#[pyo3(signature = (device=None))]
pub fn synchronize(py: Python<'_>, device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let d = device_from_py(device)?;
    let rt = d.runtime().py_err()?;
    py.detach(|| rt.synchronize()).py_err()
}

#[pyfunction]
fn _dlpack(py: Python<'_>, a: &Bound<'_, PyArray>) -> PyResult<Py<PyAny>> {
    to_dlpack(py, &a.get().inner)
}

#[pyfunction]
fn _dlpack_device(a: &Bound<'_, PyArray>) -> PyResult<(i32, i32)> {
    dlpack_device(&a.get().inner)
}

#[pyfunction]
fn _cuda_array_interface<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyArray>,
) -> PyResult<Bound<'py, PyDict>> {
    cuda_array_interface(py, &a.get().inner)
}

/// Registers the interop functions on the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(from_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(synchronize, m)?)?;
    m.add_function(wrap_pyfunction!(_dlpack, m)?)?;
    m.add_function(wrap_pyfunction!(_dlpack_device, m)?)?;
    m.add_function(wrap_pyfunction!(_cuda_array_interface, m)?)?;
    Ok(())
}
