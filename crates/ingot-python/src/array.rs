//! The `ingot.Array` class's attributes, indexing and conversions. Its operators are in
//! `array_operators.rs`, its namespace-mirroring methods (`x.sum()`...) in `array_methods.rs`,
//! the type itself in `pyarray.rs`.
//!
//! Methods whose logic is plain Python (formatting, `tolist`, `__array__`...) delegate to
//! `ingot._array_impl`, so that there is one implementation of each.

use pyo3::exceptions::{PyAttributeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ingot::{Array, DType, Device};

use crate::device::{device_from_py, PyDevice};
use crate::dtype::{dtype_from_py, py_dtype, scalar_to_py, PyDType};
use crate::errors::{detached, guard, IntoPyResult};
use crate::indexing::{basic_items, parse_key};
use crate::ops::operand_like;
use crate::pyarray::{axes_from_py, delegate, shape_from_py, PyArray};

/// `ingot.asarray(value, device=like.device)`: lists and other array-likes assigned into `like`.
fn asarray_on(py: Python<'_>, value: &Bound<'_, PyAny>, like: &Array) -> PyResult<Array> {
    let kw = PyDict::new(py);
    kw.set_item("device", like.device().to_string())?;
    let a = py
        .import("ingot")?
        .getattr("asarray")?
        .call((value,), Some(&kw))?;
    Ok(a.cast::<PyArray>()?.get().inner.clone())
}

fn size1_item<'py>(py: Python<'py>, a: &Array, what: &str) -> PyResult<Bound<'py, PyAny>> {
    if a.size() != 1 {
        return Err(PyValueError::new_err(format!(
            "{what} needs an array of size 1, got shape {:?}{}",
            a.shape(),
            if what == "bool()" {
                " (the truth value of an array with more than one element is ambiguous)"
            } else {
                ""
            }
        )));
    }
    let v = detached(py, || a.item())?;
    scalar_to_py(py, v, a.dtype())
}

#[pymethods]
impl PyArray {
    /// The extent of each axis.
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.inner.shape())
    }

    /// The element dtype.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDType>> {
        py_dtype(py, self.inner.dtype())
    }

    /// The device holding the array.
    #[getter]
    fn device(&self) -> PyDevice {
        PyDevice {
            device: self.inner.device(),
        }
    }

    /// Number of axes.
    #[getter]
    fn ndim(&self) -> usize {
        self.inner.ndim()
    }

    /// Number of elements.
    #[getter]
    fn size(&self) -> usize {
        self.inner.size()
    }

    /// Bytes of the elements (`size * itemsize`).
    #[getter]
    fn nbytes(&self) -> usize {
        self.inner.nbytes()
    }

    /// Bytes per element.
    #[getter]
    fn itemsize(&self) -> usize {
        self.inner.dtype().size()
    }

    /// Strides in bytes, as NumPy reports them.
    #[getter]
    fn strides<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let s = self.inner.dtype().size() as isize;
        PyTuple::new(py, self.inner.layout().strides().iter().map(|&x| x * s))
    }

    /// True when the array may be written (false for read-only NumPy memory).
    #[getter]
    fn writable(&self) -> bool {
        self.inner.is_writable()
    }

    /// NumPy's `real`: the real part of a complex array as a view (writes reach this array);
    /// a real array itself (a view).
    #[getter]
    fn real(&self) -> PyResult<PyArray> {
        if self.inner.dtype().is_complex() {
            guard(|| Ok(self.inner.complex_part(false).py_err()?.into()))
        } else {
            Ok(self.inner.clone().into())
        }
    }

    /// NumPy's `imag`: the imaginary part of a complex array as a view (writes reach this
    /// array); for a real array, read-only zeros of its shape and dtype.
    #[getter]
    fn imag(&self, py: Python<'_>) -> PyResult<PyArray> {
        if self.inner.dtype().is_complex() {
            return guard(|| Ok(self.inner.complex_part(true).py_err()?.into()));
        }
        let (shape, dtype, device) = (
            self.inner.shape().to_vec(),
            self.inner.dtype(),
            self.inner.device(),
        );
        let z = detached(py, move || {
            ingot::ops::full(&shape, ingot::Scalar::Int(0), dtype, device)
        })?;
        Ok(z.read_only().into())
    }

    /// True when the elements are row-major without gaps.
    #[getter]
    fn is_contiguous(&self) -> bool {
        self.inner.is_contiguous()
    }

    /// The axes reversed (a view).
    #[getter(T)]
    fn t(&self) -> PyArray {
        self.inner.t().into()
    }

    /// The last two axes swapped (a view).
    #[getter(mT)]
    fn m_t(&self) -> PyResult<PyArray> {
        guard(|| Ok(self.inner.matrix_transpose().py_err()?.into()))
    }

    /// DLPack export: a capsule viewing this array's memory (CPU or CUDA), for
    /// `torch.from_dlpack(x)`, `cupy.from_dlpack(x)`, `numpy.from_dlpack(x)`.
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<&Bound<'_, PyAny>>,
        max_version: Option<&Bound<'_, PyAny>>,
        dl_device: Option<&Bound<'_, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version, dl_device);
        if copy == Some(true) {
            let c = detached(py, || self.inner.copy())?;
            return crate::interop::to_dlpack(py, &c);
        }
        crate::interop::to_dlpack(py, &self.inner)
    }

    /// `(device_type, device_id)` as DLPack numbers devices (1 = CPU, 2 = CUDA).
    fn __dlpack_device__(&self) -> PyResult<(i32, i32)> {
        crate::interop::dlpack_device(&self.inner)
    }

    /// The CUDA array interface (version 3), for CUDA arrays only.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        crate::interop::cuda_array_interface(py, &self.inner)
    }

    /// NumPy's array interface, for zero-copy `numpy.asarray(x)` of CPU arrays and of Metal
    /// arrays (shared memory; the device's queued work is finished first), not bfloat16. NumPy
    /// keeps this array alive as the view's base. On Metal, synchronise again before reading the
    /// view after later GPU work, and do not write it while GPU work on the array is queued.
    #[getter]
    fn __array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let a = &self.inner;
        let typestr = match a.dtype() {
            DType::Bool => "|b1",
            DType::Int8 => "|i1",
            DType::UInt8 => "|u1",
            DType::Int16 => "<i2",
            DType::Int32 => "<i4",
            DType::Int64 => "<i8",
            DType::UInt16 => "<u2",
            DType::UInt32 => "<u4",
            DType::UInt64 => "<u8",
            DType::Float16 => "<f2",
            DType::Float32 => "<f4",
            DType::Float64 => "<f8",
            DType::Complex64 => "<c8",
            DType::Complex128 => "<c16",
            DType::BFloat16 => {
                return Err(PyAttributeError::new_err(
                    "bfloat16 arrays have no NumPy array interface",
                ))
            }
        };
        if cfg!(target_endian = "big") {
            return Err(PyAttributeError::new_err(
                "only little-endian arrays expose the array interface",
            ));
        }
        let base = match a.device() {
            Device::Cpu => a
                .buffer()
                .host_ptr()
                .ok_or_else(|| PyAttributeError::new_err("no host pointer"))?,
            #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
            Device::Metal(_) => crate::metal::synchronized_host_ptr(py, a)?,
            _ => {
                return Err(PyAttributeError::new_err(
                    "only CPU and Metal arrays expose the array interface (copy others to the host with to_device('cpu'))",
                ))
            }
        };
        let itemsize = a.dtype().size();
        let ptr = if a.size() == 0 {
            base as usize
        } else {
            base as usize + a.layout().offset() * itemsize
        };
        let d = PyDict::new(py);
        d.set_item("version", 3)?;
        d.set_item("shape", PyTuple::new(py, a.shape())?)?;
        d.set_item("typestr", typestr)?;
        d.set_item("data", (ptr, !a.is_writable()))?;
        let strides: Vec<isize> = a
            .layout()
            .strides()
            .iter()
            .map(|&s| s * itemsize as isize)
            .collect();
        d.set_item("strides", PyTuple::new(py, strides)?)?;
        Ok(d)
    }

    /// The elements in row-major order as bytes (a host copy).
    fn _tobytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyBytes>> {
        let a = self.inner.clone();
        let v = detached(py, move || a.to_bytes())?;
        Ok(pyo3::types::PyBytes::new(py, &v))
    }

    /// True when both arrays view the same buffer.
    fn _shares_buffer(&self, other: &PyArray) -> bool {
        self.inner.shares_buffer(&other.inner)
    }

    fn __getitem__(&self, key: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let keys = parse_key(key, &self.inner)?;
        if let Some(items) = basic_items(&keys) {
            return guard(|| Ok(self.inner.index(&items).py_err()?.into()));
        }
        let a = self.inner.clone();
        Ok(detached(key.py(), move || ingot::ops::index_get(&a, &keys))?.into())
    }

    fn __setitem__(&self, key: &Bound<'_, PyAny>, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let py = key.py();
        let keys = parse_key(key, &self.inner)?;
        let Some(items) = basic_items(&keys) else {
            self.inner.check_writable("assignment").py_err()?;
            let v = match operand_like(value, &self.inner, true)? {
                Some(v) => v,
                None => asarray_on(py, value, &self.inner)?,
            };
            let a = self.inner.clone();
            return detached(py, move || ingot::ops::index_set(&a, &keys, &v));
        };
        let target = guard(|| self.inner.index(&items).py_err())?;
        target.check_writable("assignment").py_err()?;
        let v = match operand_like(value, &target, true)? {
            Some(v) => v,
            // Lists and other array-likes: through the namespace's asarray.
            None => asarray_on(py, value, &target)?,
        };
        detached(py, move || target.assign(&v))
    }

    fn __len__(&self) -> PyResult<usize> {
        self.inner
            .shape()
            .first()
            .copied()
            .ok_or_else(|| PyTypeError::new_err("len() of a 0-d array"))
    }

    fn __bool__(&self, py: Python<'_>) -> PyResult<bool> {
        size1_item(py, &self.inner, "bool()")?.is_truthy()
    }

    fn __int__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = size1_item(py, &self.inner, "int()")?;
        py.get_type::<pyo3::types::PyInt>().call1((v,))
    }

    fn __float__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = size1_item(py, &self.inner, "float()")?;
        py.get_type::<pyo3::types::PyFloat>().call1((v,))
    }

    fn __index__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        if !self.inner.dtype().is_integer() {
            return Err(PyTypeError::new_err(format!(
                "only integer arrays can be used as an index, got {}",
                self.inner.dtype()
            )));
        }
        size1_item(py, &self.inner, "__index__")
    }

    fn __complex__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = size1_item(py, &self.inner, "complex()")?;
        py.get_type::<pyo3::types::PyComplex>().call1((v,))
    }

    /// The single element as a Python scalar.
    fn item<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        size1_item(py, &self.inner, "item()")
    }

    /// NumPy's `view`: the same memory read as `dtype` (this array's dtype when None); of
    /// another element size the last axis must be contiguous and changes length.
    #[pyo3(signature = (dtype = None, /))]
    fn view(&self, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
        let d = match dtype {
            Some(d) => dtype_from_py(d)?,
            None => self.inner.dtype(),
        };
        guard(|| Ok(self.inner.view_dtype(d).py_err()?.into()))
    }

    /// A new contiguous copy.
    fn copy(&self, py: Python<'_>) -> PyResult<PyArray> {
        let a = self.inner.clone();
        Ok(detached(py, move || a.copy())?.into())
    }

    /// A copy (or this array, when `copy=False` and the dtype already matches) of another dtype.
    #[pyo3(signature = (dtype, /, *, copy = true))]
    fn astype(
        slf: &Bound<'_, Self>,
        dtype: &Bound<'_, PyAny>,
        copy: bool,
    ) -> PyResult<Py<PyArray>> {
        let d = dtype_from_py(dtype)?;
        let a = slf.get().inner.clone();
        if !copy && a.dtype() == d {
            return Ok(slf.clone().unbind());
        }
        let r = detached(slf.py(), move || a.astype(d))?;
        Py::new(slf.py(), PyArray::from(r))
    }

    /// The array on another device (this array when already there).
    #[pyo3(signature = (device, /, *, stream = None))]
    fn to_device(
        slf: &Bound<'_, Self>,
        device: &Bound<'_, PyAny>,
        stream: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyArray>> {
        if stream.is_some_and(|s| !s.is_none()) {
            return Err(PyValueError::new_err("streams are not supported yet"));
        }
        let d = device_from_py(Some(device))?;
        let a = slf.get().inner.clone();
        if a.device() == d {
            return Ok(slf.clone().unbind());
        }
        let r = detached(slf.py(), move || a.to_device(d))?;
        Py::new(slf.py(), PyArray::from(r))
    }

    /// The same elements with a new shape (a view when the strides allow; `copy=False`
    /// raises when a copy would be needed, `copy=True` always copies).
    #[pyo3(signature = (shape, /, *, copy = None))]
    fn reshape(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        copy: Option<bool>,
    ) -> PyResult<PyArray> {
        let dims: Vec<isize> = if let Ok(n) = shape.extract::<isize>() {
            vec![n]
        } else {
            shape.extract().map_err(|_| {
                PyTypeError::new_err("a shape must be an integer or a sequence of integers")
            })?
        };
        let a = self.inner.clone();
        let r = detached(py, move || a.reshape(&dims))?;
        match copy {
            Some(true) if r.shares_buffer(&self.inner) => {
                Ok(detached(py, move || r.copy())?.into())
            }
            Some(false) if !r.shares_buffer(&self.inner) && self.inner.size() > 0 => Err(
                PyValueError::new_err("reshape with copy=False: the strides need a copy"),
            ),
            _ => Ok(r.into()),
        }
    }

    /// Reorders the axes (a view).
    fn permute_dims(&self, axes: Vec<isize>) -> PyResult<PyArray> {
        let n = self.inner.ndim();
        let axes = axes
            .iter()
            .map(|&a| ingot::Layout::normalize_axis(a, n))
            .collect::<ingot::Result<Vec<_>>>()
            .py_err()?;
        guard(|| Ok(self.inner.permute(&axes).py_err()?.into()))
    }

    /// Broadcasts to `shape`: a read-only view (zero strides repeat elements), as NumPy's
    /// `broadcast_to` is, even when nothing repeats.
    fn broadcast_to(&self, shape: &Bound<'_, PyAny>) -> PyResult<PyArray> {
        let s = shape_from_py(shape)?;
        guard(|| Ok(self.inner.broadcast_to(&s).py_err()?.read_only().into()))
    }

    /// Inserts an axis of length 1 (a view).
    #[pyo3(signature = (axis = 0))]
    fn expand_dims(&self, axis: isize) -> PyResult<PyArray> {
        guard(|| Ok(self.inner.expand_dims(axis).py_err()?.into()))
    }

    /// Removes axes of length 1 (all of them when `axis` is None).
    #[pyo3(signature = (axis = None))]
    fn squeeze(&self, axis: Option<&Bound<'_, PyAny>>) -> PyResult<PyArray> {
        let axes = axes_from_py(axis)?;
        guard(|| Ok(self.inner.squeeze(axes.as_deref()).py_err()?.into()))
    }

    // ---- delegated to Python ---------------------------------------------------------------

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let empty = PyTuple::empty(slf.py());
        delegate(slf, "ingot._array_impl", "array_repr", &empty, None)?.extract()
    }
    fn __str__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let empty = PyTuple::empty(slf.py());
        delegate(slf, "ingot._array_impl", "array_str", &empty, None)?.extract()
    }
    fn __iter__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let empty = PyTuple::empty(slf.py());
        delegate(slf, "ingot._array_impl", "array_iter", &empty, None)
    }
    /// NumPy conversion: `numpy.asarray(x)` (zero-copy on the CPU through `__array_interface__`).
    #[pyo3(signature = (*args, **kwargs))]
    fn __array__<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        delegate(slf, "ingot._array_impl", "array_to_numpy", args, kwargs)
    }
    /// The array API namespace of this array (the `ingot` module).
    #[pyo3(signature = (*, api_version = None))]
    fn __array_namespace__<'py>(
        slf: &Bound<'py, Self>,
        api_version: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = PyTuple::new(slf.py(), [api_version.map(|a| a.clone().unbind())])?;
        delegate(slf, "ingot._array_impl", "array_namespace", &args, None)
    }
    /// The elements as nested Python lists (a scalar for 0-d arrays).
    fn tolist<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let empty = PyTuple::empty(slf.py());
        delegate(slf, "ingot._array_impl", "array_tolist", &empty, None)
    }
    #[pyo3(signature = (*args, **kwargs))]
    fn __format__<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        delegate(slf, "ingot._array_impl", "array_format", args, kwargs)
    }
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        let empty = PyTuple::empty(slf.py());
        delegate(slf, "ingot._array_impl", "array_reduce", &empty, None)
    }
    /// NumPy's function protocol (NEP 18): `numpy.sum(x)`, `numpy.concatenate([x, y])`... on
    /// ingot arrays run on their device and return ingot arrays (what Dask calls on chunks).
    #[pyo3(signature = (*args, **kwargs))]
    fn __array_function__<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        delegate(slf, "ingot._numpy_protocol", "array_function", args, kwargs)
    }
    /// NumPy's ufunc protocol (NEP 13): `numpy.exp(x)`, `numpy.add(x, 1)`, `numpy.add.reduce`...
    /// on ingot arrays run on their device and return ingot arrays.
    #[pyo3(signature = (*args, **kwargs))]
    fn __array_ufunc__<'py>(
        slf: &Bound<'py, Self>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        delegate(slf, "ingot._numpy_protocol", "array_ufunc", args, kwargs)
    }
    /// Above NumPy's (0) and Dask's (11): libraries that pick the implementation of the operand
    /// with the highest priority (Dask's tensordot of two chunks) pick ingot's.
    #[classattr]
    fn __array_priority__() -> f64 {
        100.0
    }
    /// The elements as a 1-d array in row-major order (a view when the strides allow).
    fn ravel(&self, py: Python<'_>) -> PyResult<PyArray> {
        let a = self.inner.clone();
        Ok(detached(py, move || a.reshape(&[-1]))?.into())
    }
}
