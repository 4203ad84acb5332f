//! User MSL kernels from Python: `compile`, `Library`, `Kernel`, `KernelParameter`.
//!
//! Arguments bind to the kernel's buffer and bytes parameters in buffer-index order:
//! - `ingot.Array`: bound as a buffer, written in place.
//! - NumPy arrays (and other objects NumPy converts: `array.array`, memoryview...) for buffer
//!   parameters: on the CPU a C-contiguous, aligned NumPy array is used in place (no copy), and
//!   on Metal one whose memory is also page-aligned and a whole number of pages (the launch is
//!   then synchronised, so the NumPy array holds the results when the call returns and may be
//!   written again); otherwise the data is copied to the device, and for a writable parameter
//!   the results are copied back into the NumPy array after the launch. A read-only NumPy array
//!   for a writable parameter is an error.
//! - Python `bool`/`int`/`float` and NumPy scalars for `constant T&`: converted to `T` with a
//!   range check.
//! - `bytes`, `bytearray`, `memoryview`, NumPy structured scalars (`np.void`), ctypes structures
//!   for `constant Struct&`: the bytes, checked against `sizeof(Struct)`.
//!
//! Launches on the CPU release the GIL while the kernel runs; GPU launches only queue work and
//! keep it.

use std::collections::BTreeMap;

use pyo3::exceptions::{PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

use ingot::kernel::{
    CompileOptions, Constants, Dispatch, Kernel, KernelArg, Library, MathMode, ParamInfo,
};
use ingot::{Array, Scalar};

use crate::creation::{aliases_host_on_gpu, numpy_to_array, GpuAlias};
use crate::device::device_from_py;
use crate::dtype::{py_dtype, scalar_from_py};
use crate::errors::{detached, guard, kernel_argument_error, IntoPyResult};
use crate::pyarray::PyArray;

/// A compiled MSL source: its kernel functions by name.
#[pyclass(name = "Library", module = "ingot", frozen)]
pub struct PyLibrary {
    inner: Library,
}

/// One kernel function of a Library, callable.
#[pyclass(name = "Kernel", module = "ingot", frozen)]
pub struct PyKernel {
    inner: Kernel,
}

/// The reflection of one kernel parameter.
#[pyclass(name = "KernelParameter", module = "ingot", frozen)]
pub struct PyKernelParameter {
    info: ParamInfo,
}

impl PyKernelParameter {
    /// Wraps a parameter's reflection (also used by `translate`).
    pub(crate) fn new(info: ParamInfo) -> PyKernelParameter {
        PyKernelParameter { info }
    }
}

fn kernel_arg_err(py: Python<'_>, msg: String) -> PyErr {
    match kernel_argument_error(py) {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    }
}

#[pymethods]
impl PyKernelParameter {
    /// The declared name.
    #[getter]
    fn name(&self) -> &str {
        &self.info.name
    }
    /// `[[buffer(n)]]` for buffers and bytes, `[[threadgroup(n)]]` for threadgroup memory,
    /// None for builtins.
    #[getter]
    fn index(&self) -> Option<u32> {
        self.info.index
    }
    /// `"buffer"`, `"bytes"`, `"threadgroup"` or `"builtin"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.info.kind.name()
    }
    /// The element dtype of the pointee (None for void*, structs, unknown types).
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        match self.info.dtype {
            Some(d) => Ok(Some(py_dtype(py, d)?.into_any())),
            None => Ok(None),
        }
    }
    /// `"read"` or `"read_write"`.
    #[getter]
    fn access(&self) -> &'static str {
        self.info.access.name()
    }
    /// The builtin role (`"thread_position_in_grid"`...), None for other parameters.
    #[getter]
    fn role(&self) -> Option<&'static str> {
        self.info.role
    }
    /// The declared type as written.
    #[getter]
    fn type_name(&self) -> &str {
        &self.info.type_name
    }
    /// The value type (`float`, `float4`, `Params`).
    #[getter]
    fn pointee(&self) -> &str {
        &self.info.pointee
    }
    /// Lanes of a vector value type (1 for scalars).
    #[getter]
    fn lanes(&self) -> u32 {
        self.info.lanes
    }
    /// True when a buffer parameter accepts any dtype (byte pointers, structs).
    #[getter]
    fn any_dtype(&self) -> bool {
        self.info.any_dtype
    }
    /// Position among the call's arguments (None for builtins and threadgroup memory).
    #[getter]
    fn position(&self) -> Option<usize> {
        self.info.arg_position
    }
    /// The parameter as a dict.
    fn as_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("name", &self.info.name)?;
        d.set_item("index", self.info.index)?;
        d.set_item("kind", self.info.kind.name())?;
        d.set_item("dtype", self.dtype(py)?)?;
        d.set_item("access", self.info.access.name())?;
        d.set_item("role", self.info.role)?;
        d.set_item("type", &self.info.type_name)?;
        Ok(d)
    }
    fn __getitem__<'py>(&self, py: Python<'py>, key: &str) -> PyResult<Bound<'py, PyAny>> {
        self.as_dict(py)?
            .get_item(key)?
            .ok_or_else(|| PyKeyError::new_err(key.to_string()))
    }
    fn __repr__(&self) -> String {
        let i = &self.info;
        format!(
            "KernelParameter(name={:?}, kind={:?}, index={}, dtype={}, access={:?}, role={})",
            i.name,
            i.kind.name(),
            i.index.map_or("None".into(), |v| v.to_string()),
            i.dtype.map_or("None".into(), |d| d.name().to_string()),
            i.access.name(),
            i.role.map_or("None".into(), |r| format!("{r:?}")),
        )
    }
}

fn scalar_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Scalar>> {
    if let Some(s) = scalar_from_py(obj)? {
        return Ok(Some(s));
    }
    // NumPy scalars (np.float32(2), np.uint8(3)) and 0-d arrays of a plain dtype.
    if obj.hasattr("dtype")? && obj.hasattr("item")? && !obj.is_instance_of::<PyArray>() {
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        let ndim: usize = obj.getattr("ndim").and_then(|n| n.extract()).unwrap_or(1);
        if ndim == 0 && "biufc".contains(kind.as_str()) && kind != "c" {
            return scalar_from_py(&obj.call_method0("item")?);
        }
    }
    Ok(None)
}

fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    // np.void (structured scalars) and anything with the buffer protocol.
    if obj.hasattr("tobytes")? && obj.hasattr("dtype")? {
        let kind: String = obj.getattr("dtype")?.getattr("kind")?.extract()?;
        if kind == "V" {
            let b = obj.call_method0("tobytes")?;
            return Ok(Some(b.cast::<PyBytes>()?.as_bytes().to_vec()));
        }
    }
    let py = obj.py();
    if let Ok(mv) = py.import("builtins")?.getattr("memoryview")?.call1((obj,)) {
        let b = mv.call_method0("tobytes")?;
        return Ok(Some(b.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// A NumPy array whose results must be copied back after the launch.
struct WriteBack<'py> {
    target: Bound<'py, PyAny>,
    array: Array,
}

/// The converted arguments of one launch.
struct Converted<'py> {
    args: Vec<KernelArg>,
    /// NumPy arrays that receive results by copy after the launch.
    back: Vec<WriteBack<'py>>,
    /// A NumPy argument is used in place by a GPU (Metal): the launch must be synchronised
    /// before the call returns.
    host_aliased: bool,
}

/// Converts the call's arguments `args[start..]` for `kernel`.
fn convert_args<'py>(
    kernel: &Kernel,
    args: &Bound<'py, PyTuple>,
    start: usize,
) -> PyResult<Converted<'py>> {
    let device = kernel.device();
    let n = args.len().saturating_sub(start);
    let mut out = Vec::with_capacity(n);
    let mut back = Vec::new();
    let mut host_aliased = false;
    let mut params = kernel.argument_params();
    for (i, a) in args.iter().skip(start).enumerate() {
        let a = &a;
        let p = params.next();
        if let Ok(arr) = a.cast::<PyArray>() {
            out.push(KernelArg::Array(arr.get().inner.clone()));
            continue;
        }
        let is_buffer = p.is_none_or(|p| p.kind == ingot::kernel::ParamRole::Buffer);
        if !is_buffer {
            if let Some(s) = scalar_of(a)? {
                out.push(KernelArg::Scalar(s));
                continue;
            }
            if let Some(b) = bytes_of(a)? {
                out.push(KernelArg::Bytes(b));
                continue;
            }
        } else if scalar_from_py(a)?.is_some() {
            if let Some(s) = scalar_from_py(a)? {
                out.push(KernelArg::Scalar(s));
                continue;
            }
        }
        // Arrays: NumPy and everything NumPy converts.
        let name = p.map_or(format!("argument {i}"), |p| {
            format!("parameter `{}`", p.name)
        });
        let array = numpy_to_array(a, None, device, GpuAlias::Allow).map_err(|e| {
            kernel_arg_err(
                a.py(),
                format!(
                    "kernel `{}`, {name}: cannot use a {} as an array: {e}",
                    kernel.name(),
                    a.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ),
            )
        })?;
        host_aliased |= aliases_host_on_gpu(&array);
        let writable = p.is_some_and(|p| p.access == ingot::kernel::Access::ReadWrite);
        // On a GPU the NumPy data is copied to the device; a read-only source could not take the
        // results back, so it is refused before the launch, as on the CPU.
        let numpy_read_only = a
            .getattr("flags")
            .and_then(|f| f.getattr("writeable"))
            .and_then(|w| w.extract::<bool>())
            .is_ok_and(|w| !w);
        if writable && numpy_read_only {
            return Err(kernel_arg_err(
                a.py(),
                format!(
                    "kernel `{}`, {name}: the kernel writes this argument, but the NumPy array is read-only",
                    kernel.name()
                ),
            ));
        }
        if writable && array.is_writable() {
            let in_place =
                array.is_contiguous() && array.device() == device && is_view_of(a, &array)?;
            if !in_place {
                let copy = array.copy().py_err()?;
                back.push(WriteBack {
                    target: a.clone(),
                    array: copy.clone(),
                });
                out.push(KernelArg::Array(copy));
                continue;
            }
        }
        out.push(KernelArg::Array(array));
    }
    Ok(Converted {
        args: out,
        back,
        host_aliased,
    })
}

/// True when `array` uses the memory of the NumPy array `obj` (zero-copy wrap on the CPU or on
/// Metal).
fn is_view_of(obj: &Bound<'_, PyAny>, array: &Array) -> PyResult<bool> {
    let Ok(iface) = obj.getattr("__array_interface__") else {
        return Ok(false);
    };
    let Ok(data) = iface.get_item("data") else {
        return Ok(false);
    };
    let addr: usize = data.get_item(0)?.extract()?;
    let Some(base) = array.buffer().host_ptr() else {
        return Ok(false);
    };
    let first = base as usize + array.layout().offset() * array.dtype().size();
    Ok(first == addr)
}

/// Waits for `kernel`'s device when a NumPy argument was used in place by the GPU, so that the
/// NumPy array holds the results, and may be written, once the call returns (as on the CPU).
fn sync_host_aliased(py: Python<'_>, kernel: &Kernel, host_aliased: bool) -> PyResult<()> {
    if !host_aliased {
        return Ok(());
    }
    let device = kernel.device();
    detached(py, move || device.runtime()?.synchronize())
}

fn write_back(py: Python<'_>, back: Vec<WriteBack<'_>>) -> PyResult<()> {
    if back.is_empty() {
        return Ok(());
    }
    let np = py.import("numpy")?;
    for wb in back {
        let bytes = detached(py, || wb.array.to_bytes())?;
        let target = &wb.target;
        let Ok(dtype) = target.getattr("dtype") else {
            continue;
        };
        let src = np
            .getattr("frombuffer")?
            .call1((PyBytes::new(py, &bytes), dtype))?
            .call_method1("reshape", (target.getattr("shape")?,))?;
        np.getattr("copyto")?.call1((target, src))?;
    }
    Ok(())
}

/// A 1- to 3-axis extent from an int or a sequence of ints: the values and how many there are.
fn shape3(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<([u32; 3], usize)> {
    let err = |msg: String| kernel_arg_err(obj.py(), msg);
    let entry = |x: i64| {
        u32::try_from(x).map_err(|_| err(format!("{what} entries must be in 0..2^32, got {x}")))
    };
    if let Ok(n) = obj.extract::<i64>() {
        return Ok(([entry(n)?, 1, 1], 1));
    }
    let v: Vec<i64> = obj
        .extract()
        .map_err(|_| err(format!("{what} must be an int or a tuple of 1 to 3 ints")))?;
    if v.is_empty() || v.len() > 3 {
        return Err(err(format!(
            "{what} must have 1 to 3 dimensions, got {}",
            v.len()
        )));
    }
    let mut out = [1u32; 3];
    for (o, &x) in out.iter_mut().zip(&v) {
        *o = entry(x)?;
    }
    Ok((out, v.len()))
}

/// `shape3` as the slice `Dispatch` takes.
fn dims(s: &([u32; 3], usize)) -> &[u32] {
    &s.0[..s.1]
}

impl PyKernel {
    /// Parses and converts a call's arguments, runs `go` with them, then hands the results to
    /// NumPy arguments that were copied (after waiting for the device when one was used in place).
    fn with_call<'py, T>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
        go: impl FnOnce(&[KernelArg], &Dispatch) -> PyResult<T>,
    ) -> PyResult<T> {
        guard(|| {
            let (d, start) = self.dispatch_and_args(py, args, kwargs)?;
            let Converted {
                args: kargs,
                back,
                host_aliased,
            } = convert_args(&self.inner, args, start)?;
            let kargs = ingot::ops::contiguous_inputs(&self.inner, &kargs).py_err()?;
            let r = go(&kargs, &d)?;
            sync_host_aliased(py, &self.inner, host_aliased)?;
            write_back(py, back)?;
            Ok(r)
        })
    }

    fn dispatch_and_args<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<(Dispatch, usize)> {
        let mut grid = None;
        let mut groups = None;
        let mut tg = None;
        let mut tgmem = None;
        if let Some(kw) = kwargs {
            for (k, v) in kw.iter() {
                let k: String = k.extract()?;
                let v = if v.is_none() { None } else { Some(v) };
                match k.as_str() {
                    "grid" => grid = v,
                    "groups" => groups = v,
                    "threadgroup" => tg = v,
                    "threadgroup_memory" => tgmem = v,
                    other => {
                        return Err(PyTypeError::new_err(format!(
                            "kernel call got an unexpected keyword argument {other:?} (expected grid, groups, threadgroup, threadgroup_memory)"
                        )))
                    }
                }
            }
        }
        // The kernel's arguments start after the thread count when it is given first.
        let mut start = 0;
        let mut d = match (grid, groups) {
            (Some(_), Some(_)) => {
                return Err(kernel_arg_err(
                    py,
                    format!(
                        "kernel `{}`: give grid= (threads) or groups= (threadgroups), not both",
                        self.inner.name()
                    ),
                ))
            }
            (Some(g), None) => Dispatch::try_threads(dims(&shape3(&g, "grid")?)).py_err()?,
            (None, Some(g)) => Dispatch::try_groups(dims(&shape3(&g, "groups")?)).py_err()?,
            (None, None) => {
                let first = args.get_item(0).ok().filter(|f| {
                    !f.is_instance_of::<pyo3::types::PyBool>() && f.extract::<i64>().is_ok()
                });
                let Some(first) = first else {
                    return Err(kernel_arg_err(
                        py,
                        format!(
                            "kernel `{}`: give the thread count first (kernel(count, *args)) or grid=/groups=",
                            self.inner.name()
                        ),
                    ));
                };
                let count = shape3(&first, "count")?;
                start = 1;
                Dispatch::try_threads(dims(&count)).py_err()?
            }
        };
        if let Some(t) = tg {
            d = d
                .with_threadgroup(dims(&shape3(&t, "threadgroup")?))
                .py_err()?;
        }
        if let Some(m) = tgmem {
            let m = m.cast::<PyDict>().map_err(|_| {
                kernel_arg_err(
                    py,
                    "threadgroup_memory must be a dict {index: nbytes}".into(),
                )
            })?;
            let mut map = BTreeMap::new();
            for (k, v) in m.iter() {
                let k: u32 = k.extract().map_err(|_| {
                    kernel_arg_err(
                        py,
                        "threadgroup_memory keys must be indices (ints >= 0)".into(),
                    )
                })?;
                let v: usize = v.extract().map_err(|_| {
                    kernel_arg_err(
                        py,
                        "threadgroup_memory values must be byte counts (ints >= 0)".into(),
                    )
                })?;
                map.insert(k, v);
            }
            d.threadgroup_memory = map;
        }
        Ok((d, start))
    }
}

#[pymethods]
impl PyKernel {
    /// The kernel's name.
    #[getter]
    fn name(&self) -> &str {
        self.inner.name()
    }

    /// The device it runs on.
    #[getter]
    fn device(&self) -> crate::device::PyDevice {
        crate::device::PyDevice {
            device: self.inner.device(),
        }
    }

    /// Every parameter, in declaration order.
    #[getter]
    fn parameters(&self) -> Vec<PyKernelParameter> {
        self.inner
            .parameters()
            .iter()
            .map(|p| PyKernelParameter { info: p.clone() })
            .collect()
    }

    /// The parameters that take an argument, in argument (buffer-index) order.
    #[getter]
    fn arguments(&self) -> Vec<PyKernelParameter> {
        self.inner
            .arguments()
            .into_iter()
            .map(|p| PyKernelParameter { info: p.clone() })
            .collect()
    }

    /// The largest threadgroup the kernel accepts.
    #[getter]
    fn max_total_threads_per_threadgroup(&self) -> u32 {
        self.inner.max_total_threads_per_threadgroup()
    }

    /// A prepared call (used by `ingot.fuse`): `k._prepare(out_shape, out_dtype, *tail,
    /// groups=..., threadgroup=...)` returns `call` with `call(*inputs)` running
    /// `k(*inputs, out, *tail, ...)` on a new `out` and returning it.
    #[pyo3(signature = (out_shape, out_dtype, *tail, **kwargs))]
    fn _prepare<'py>(
        &self,
        py: Python<'py>,
        out_shape: &Bound<'py, PyAny>,
        out_dtype: &Bound<'py, PyAny>,
        tail: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<crate::prepared::PyPreparedCall> {
        if kwargs.is_none_or(|k| {
            !k.contains("grid").unwrap_or(false) && !k.contains("groups").unwrap_or(false)
        }) {
            return Err(kernel_arg_err(
                py,
                format!(
                    "kernel `{}`: a prepared call needs grid= or groups=",
                    self.inner.name()
                ),
            ));
        }
        let (d, _) = self.dispatch_and_args(py, tail, kwargs)?;
        crate::prepared::PyPreparedCall::new(
            self.inner.clone(),
            d,
            tail,
            crate::pyarray::shape_from_py(out_shape)?,
            crate::dtype::dtype_from_py(out_dtype)?,
        )
    }

    /// `kernel(count, *args)` runs exactly `count` threads (1-D); `kernel(*args, grid=...)`
    /// (threads, 1-3 axes) or `kernel(*args, groups=...)` (threadgroups), with optional
    /// `threadgroup=` and `threadgroup_memory={index: nbytes}`. Arrays are written in place.
    #[pyo3(signature = (*args, **kwargs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<()> {
        self.with_call(py, args, kwargs, |kargs, d| {
            if self.inner.device() == ingot::Device::Cpu {
                // The CPU engine runs the kernel before returning: let other threads run.
                detached(py, || self.inner.launch(kargs, d))
            } else {
                // A GPU launch only queues work (microseconds): releasing and retaking the GIL
                // would cost a noticeable share of it.
                self.inner.launch(kargs, d).py_err()
            }
        })
    }

    /// Like a call, and returns the kernel's run time in seconds (device time; on the CPU the
    /// host clock around the synchronous run).
    #[pyo3(signature = (*args, **kwargs))]
    fn time<'py>(
        &self,
        py: Python<'py>,
        args: &Bound<'py, PyTuple>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<f64> {
        self.with_call(py, args, kwargs, |kargs, d| {
            detached(py, || self.inner.time(kargs, d))
        })
    }

    fn __repr__(&self) -> String {
        let args: Vec<String> = self
            .inner
            .arguments()
            .iter()
            .map(|p| p.name.clone())
            .collect();
        format!(
            "<ingot.Kernel {}({}) on {}>",
            self.inner.name(),
            args.join(", "),
            self.inner.device()
        )
    }
}

/// Function-constant values from a dict keyed by name (str) or index (int).
fn constants_from_py(constants: Option<&Bound<'_, PyDict>>) -> PyResult<Constants> {
    let mut out = Constants::new();
    let Some(c) = constants else {
        return Ok(out);
    };
    for (k, v) in c.iter() {
        let key = if let Ok(i) = k.extract::<u32>() {
            i.to_string()
        } else {
            k.extract::<String>().map_err(|_| {
                PyTypeError::new_err("constants keys must be names (str) or indices (int)")
            })?
        };
        let val = scalar_of(&v)?.ok_or_else(|| {
            PyTypeError::new_err(format!(
                "function constant {key:?}: value must be a bool, int or float"
            ))
        })?;
        out.insert(key, val);
    }
    Ok(out)
}

#[pymethods]
impl PyLibrary {
    /// The kernel function `name`, compiled on first use (only its own unit). `constants`
    /// gives function-constant values (by name or index) for this specialisation, merged over
    /// the library's; each specialisation is compiled once and cached.
    #[pyo3(signature = (name, constants = None))]
    fn function(
        &self,
        py: Python<'_>,
        name: &str,
        constants: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<PyKernel> {
        guard(|| {
            let c = constants_from_py(constants)?;
            let lib = self.inner.clone();
            let name = name.to_string();
            let k = detached(py, move || lib.function_with(&name, &c))?;
            Ok(PyKernel { inner: k })
        })
    }

    /// Compiles the kernel functions `names`, each in a unit of its own, the units in
    /// parallel; returns them in that order.
    #[pyo3(signature = (names, constants = None))]
    fn prepare(
        &self,
        py: Python<'_>,
        names: Vec<String>,
        constants: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Vec<PyKernel>> {
        guard(|| {
            let c = constants_from_py(constants)?;
            let lib = self.inner.clone();
            let ks = detached(py, move || {
                let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                lib.prepare(&refs, &c)
            })?;
            Ok(ks.into_iter().map(|inner| PyKernel { inner }).collect())
        })
    }

    /// How many units (kernel functions with their function-constant values) this library
    /// has compiled or loaded from the cache so far.
    #[getter]
    fn compiled_units(&self) -> usize {
        self.inner.compiled_units()
    }

    /// The function constants the source declares: dicts with `name`, `type` and `index`.
    #[getter]
    fn function_constants<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.inner
            .module()
            .function_constants
            .iter()
            .map(|c| {
                let d = PyDict::new(py);
                d.set_item("name", &c.name)?;
                d.set_item("type", &c.ty)?;
                d.set_item("index", c.index)?;
                Ok(d)
            })
            .collect()
    }

    fn __getitem__(&self, py: Python<'_>, name: &str) -> PyResult<PyKernel> {
        self.function(py, name, None)
    }

    fn __contains__(&self, name: &str) -> bool {
        self.inner.functions().iter().any(|f| f == name)
    }

    /// The names of the kernel functions, in source order.
    #[getter]
    fn functions(&self) -> Vec<String> {
        self.inner.functions()
    }

    /// The device the library runs on.
    #[getter]
    fn device(&self) -> crate::device::PyDevice {
        crate::device::PyDevice {
            device: self.inner.device(),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<ingot.Library [{}] on {}>",
            self.inner.functions().join(", "),
            self.inner.device()
        )
    }
}

/// Prepares MSL `source` for `device` (default: the default device): every kernel function
/// is reflected, none is compiled until it is first obtained or called (then only its own
/// unit, cached in memory and on disk). `constants` maps function-constant names (or
/// indices) to values for every function (they may also be given per function with
/// `Library.function(name, constants=...)`); `math_mode` is `"precise"` or `"fast"`;
/// `include_dirs` are searched by `#include "..."`; `file_name` names the source in errors;
/// `defines` maps macro names to values (`-D NAME=VALUE`); `checked=True` bounds-checks every
/// buffer access (default: `INGOT_CHECKED=1` in the environment).
///
/// >>> import ingot, numpy as np
/// >>> lib = ingot.compile("""
/// ... #include <metal_stdlib>
/// ... using namespace metal;
/// ... kernel void scale(device float* x [[buffer(0)]], constant float& a [[buffer(1)]],
/// ...                   uint i [[thread_position_in_grid]]) { x[i] *= a * FACTOR; }
/// ... """, defines={"FACTOR": "2"})
/// >>> lib.functions
/// ['scale']
/// >>> x = ingot.asarray(np.array([1.0, 2.0, 3.0], dtype=np.float32))
/// >>> lib["scale"](3, x, 1.5)                     # 3 threads; x is written in place
/// >>> x.tolist()
/// [3.0, 6.0, 9.0]
#[pyfunction]
#[pyo3(signature = (source, *, device = None, constants = None, math_mode = "precise", include_dirs = None, file_name = None, defines = None, checked = None))]
#[allow(clippy::too_many_arguments)]
fn compile(
    py: Python<'_>,
    source: &str,
    device: Option<&Bound<'_, PyAny>>,
    constants: Option<&Bound<'_, PyDict>>,
    math_mode: &str,
    include_dirs: Option<&Bound<'_, PyAny>>,
    file_name: Option<String>,
    defines: Option<&Bound<'_, PyAny>>,
    checked: Option<bool>,
) -> PyResult<PyLibrary> {
    guard(|| {
        let device = device_from_py(device)?;
        let mut opts = CompileOptions {
            math_mode: MathMode::parse(math_mode).py_err()?,
            file_name: file_name.unwrap_or_default(),
            checked: checked.unwrap_or_else(ingot::kernel::checked_from_env),
            ..Default::default()
        };
        opts.constants = constants_from_py(constants)?;
        if let Some(dirs) = include_dirs {
            let list: Vec<Bound<'_, PyAny>> = if dirs.is_instance_of::<pyo3::types::PyString>() {
                vec![dirs.clone()]
            } else {
                dirs.try_iter()?.collect::<PyResult<_>>()?
            };
            for d in list {
                let s = py
                    .import("os")?
                    .getattr("fspath")?
                    .call1((d,))?
                    .extract::<String>()
                    .map_err(|_| PyValueError::new_err("include_dirs must be paths"))?;
                opts.include_dirs.push(s.into());
            }
        }
        opts.defines = defines_from_py(defines)?;
        let src = source.to_string();
        let lib = detached(py, move || Library::compile(&src, device, &opts))?;
        Ok(PyLibrary { inner: lib })
    })
}

/// `compile` for a source ingot generated (`ingot.fuse`): precise math, checked mode from
/// `INGOT_CHECKED`, and marked generated, so that on the CPU small arrays reach the kernel
/// without guarded scratch copies (its buffer indexing is the generator's, not a user's).
#[pyfunction]
#[pyo3(signature = (source, *, device = None, file_name = None))]
fn _compile_generated(
    py: Python<'_>,
    source: &str,
    device: Option<&Bound<'_, PyAny>>,
    file_name: Option<String>,
) -> PyResult<PyLibrary> {
    guard(|| {
        let device = device_from_py(device)?;
        let opts = CompileOptions {
            file_name: file_name.unwrap_or_default(),
            checked: ingot::kernel::checked_from_env(),
            generated: true,
            ..Default::default()
        };
        let src = source.to_string();
        let lib = detached(py, move || Library::compile(&src, device, &opts))?;
        Ok(PyLibrary { inner: lib })
    })
}

/// The MSL source of one of the built-in kernel modules that generated and test kernels build
/// on, with the shared definitions for `device`: `"functor"` (the functors and reduction
/// helpers of the kernels `ingot.fuse` generates, python/ingot/_fuse.py) or `"cmath"` (the
/// GPUs' complex functions, which tests run on the CPU engine against the CPU's own).
#[pyfunction]
#[pyo3(signature = (module, device = None))]
fn _kernel_source(module: &str, device: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    guard(|| {
        let device = device_from_py(device)?;
        match module {
            "functor" => ingot::ops::gpu::functor_source(device).py_err(),
            "cmath" => ingot::ops::gpu::cmath_source(device).py_err(),
            other => Err(PyValueError::new_err(format!(
                "no built-in kernel module {other:?} (\"functor\" or \"cmath\")"
            ))),
        }
    })
}

/// Stops running CPU kernels between threadgroups and refuses new ones: called by `ingot` when
/// the interpreter exits, so a kernel still running then does not keep the process alive.
#[pyfunction]
fn _shutdown() {
    ingot::runtime::cpu::guard::request_shutdown();
}

/// `defines` of `compile` and `translate`: a dict `{name: value}` (a value of None or `True`
/// defines `1`, other values their `str`) or a sequence of `"NAME=VALUE"` / `"NAME"` strings.
pub(crate) fn defines_from_py(
    defines: Option<&Bound<'_, PyAny>>,
) -> PyResult<BTreeMap<String, String>> {
    let mut out = BTreeMap::new();
    let Some(d) = defines else {
        return Ok(out);
    };
    if let Ok(dict) = d.cast::<PyDict>() {
        for (k, v) in dict.iter() {
            let name: String = k
                .extract()
                .map_err(|_| PyTypeError::new_err("defines keys must be macro names (str)"))?;
            let value = if v.is_none() {
                String::new()
            } else if let Ok(b) = v.cast::<pyo3::types::PyBool>() {
                if b.is_true() { "1" } else { "0" }.to_string()
            } else {
                v.str()?.to_string()
            };
            out.insert(name, value);
        }
        return Ok(out);
    }
    if d.is_instance_of::<pyo3::types::PyString>() {
        return Err(PyTypeError::new_err(
            "defines must be a dict {name: value} or a list of \"NAME=VALUE\" strings, not a str",
        ));
    }
    for item in d.try_iter()? {
        let item: String = item?
            .extract()
            .map_err(|_| PyTypeError::new_err("defines must be \"NAME=VALUE\" strings"))?;
        let (k, v) = item.split_once('=').unwrap_or((item.as_str(), ""));
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// Adds `compile`, `Library`, `Kernel` and `KernelParameter` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(_kernel_source, m)?)?;
    m.add_function(wrap_pyfunction!(_compile_generated, m)?)?;
    m.add_function(wrap_pyfunction!(_shutdown, m)?)?;
    m.add_class::<PyLibrary>()?;
    m.add_class::<PyKernel>()?;
    m.add_class::<PyKernelParameter>()?;
    m.add_class::<crate::prepared::PyPreparedCall>()?;
    m.add_class::<crate::prepared::PyFastCalls>()?;
    Ok(())
}
