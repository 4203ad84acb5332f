//! `Kernel._prepare`: a kernel call whose dispatch and trailing scalar arguments are fixed, and
//! whose output array is made anew on each call. `ingot.fuse` runs every warm call of a
//! generated elementwise kernel through one, so that a call costs one argument conversion per
//! input array instead of parsing the whole call (keywords, dispatch, scalars) each time.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use ingot::kernel::{Dispatch, Kernel, KernelArg, PreparedLaunch};
use ingot::{Array, DType};

use crate::dtype::scalar_from_py;
use crate::errors::{compute, guard, IntoPyResult};
use crate::pyarray::PyArray;

/// A prepared call: `call(*inputs)` launches `kernel(*inputs, out, *tail)` with the fixed
/// dispatch and returns `out`, a new array of the fixed shape and dtype on the kernel's device.
#[pyclass(name = "PreparedCall", module = "ingot", frozen)]
pub struct PyPreparedCall {
    kernel: Kernel,
    /// The dispatch and the bound trailing scalars.
    launch: PreparedLaunch,
    /// Input arrays per call.
    inputs: usize,
    out_shape: Vec<usize>,
    out_dtype: DType,
    out_size: usize,
}

impl PyPreparedCall {
    /// A prepared call of `kernel`; `tail` must hold Python scalars (ints, floats, bools).
    pub fn new(
        kernel: Kernel,
        dispatch: Dispatch,
        tail: &Bound<'_, PyTuple>,
        out_shape: Vec<usize>,
        out_dtype: DType,
    ) -> PyResult<PyPreparedCall> {
        // The leading parameters take the inputs, then the output; the rest is `tail`.
        let inputs = kernel
            .argument_params()
            .len()
            .checked_sub(tail.len() + 1)
            .ok_or_else(|| {
                PyTypeError::new_err(format!(
                    "kernel `{}` takes {} arguments: too many trailing arguments ({}) for a prepared call",
                    kernel.name(),
                    kernel.argument_params().len(),
                    tail.len()
                ))
            })?;
        let mut args = Vec::with_capacity(tail.len());
        for t in tail.iter() {
            let Some(s) = scalar_from_py(&t)? else {
                return Err(PyTypeError::new_err(format!(
                    "kernel `{}`: prepared trailing arguments must be Python scalars, got {}",
                    kernel.name(),
                    t.get_type().name()?
                )));
            };
            args.push(KernelArg::Scalar(s));
        }
        let out_size = out_shape.iter().product();
        let launch = kernel
            .prepare_launch(inputs + 1, &args, &dispatch)
            .py_err()?;
        Ok(PyPreparedCall {
            kernel,
            launch,
            inputs,
            out_shape,
            out_dtype,
            out_size,
        })
    }
}

#[pymethods]
impl PyPreparedCall {
    /// Launches the kernel on `inputs` (ingot arrays on the kernel's device) and a new output.
    #[pyo3(signature = (*inputs))]
    fn __call__(&self, py: Python<'_>, inputs: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
        self.call(py, inputs)
    }
}

impl PyPreparedCall {
    fn call(&self, py: Python<'_>, inputs: &Bound<'_, PyTuple>) -> PyResult<PyArray> {
        guard(|| {
            if inputs.len() != self.inputs {
                return Err(PyTypeError::new_err(format!(
                    "kernel `{}`: the prepared call takes {} arrays, got {}",
                    self.kernel.name(),
                    self.inputs,
                    inputs.len()
                )));
            }
            let mut args = Vec::with_capacity(inputs.len() + 1);
            for a in inputs.iter() {
                let arr = a.cast::<PyArray>().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "kernel `{}`: a prepared call takes ingot arrays, got {}",
                        self.kernel.name(),
                        a.get_type()
                            .name()
                            .map(|n| n.to_string())
                            .unwrap_or_default()
                    ))
                })?;
                args.push(KernelArg::Array(arr.get().inner.clone()));
            }
            let device = self.kernel.device();
            let out = Array::empty(&self.out_shape, self.out_dtype, device).py_err()?;
            args.push(KernelArg::Array(out.clone()));
            // Generated elementwise kernels do work in proportion to the output: small ones run
            // with the GIL held, as built-in ops do.
            compute(py, device, self.out_size, || {
                let args = ingot::ops::contiguous_inputs(&self.kernel, &args)?;
                self.kernel.launch_prepared(&self.launch, &args)
            })?;
            Ok(out.into())
        })
    }
}

/// The signature of a call whose arguments are all ingot arrays: per array its dtype, device,
/// rank and extents (what `ingot.fuse` keys its plans by); `None` when an argument is not one.
fn signature(args: &Bound<'_, PyTuple>) -> Option<Vec<u64>> {
    let mut key = Vec::with_capacity(args.len() * 5);
    for a in args.iter() {
        let arr = a.cast::<PyArray>().ok()?;
        let x = &arr.get().inner;
        let device = x.device();
        key.push(x.dtype() as u64);
        key.push(((device.kind().as_bytes()[0] as u64) << 32) | device.index() as u64);
        key.push(x.ndim() as u64);
        key.extend(x.shape().iter().map(|&d| d as u64));
    }
    Some(key)
}

/// The warm calls of one fused function (`ingot.fuse`): the base class of `Fused`. Calling it
/// looks up the prepared call of the arguments' signature and launches it without entering
/// Python, so that a warm fused call costs about what one built-in op does; any other call
/// (keywords, a new signature, non-array arguments) goes to the subclass's `_call`.
#[pyclass(name = "FastCalls", module = "ingot", frozen, subclass)]
pub struct PyFastCalls {
    calls: Mutex<HashMap<Vec<u64>, Py<PyPreparedCall>>>,
}

/// Signatures kept per fused function (as the Python plan table, cleared when full).
const FAST_CALLS_MAX: usize = 512;

#[pymethods]
impl PyFastCalls {
    /// Takes (and ignores) the subclass's constructor arguments.
    #[new]
    #[pyo3(signature = (*_args, **_kwargs))]
    fn new(_args: &Bound<'_, PyTuple>, _kwargs: Option<&Bound<'_, PyDict>>) -> Self {
        PyFastCalls {
            calls: Mutex::new(HashMap::new()),
        }
    }

    #[pyo3(signature = (*args, **kwargs))]
    fn __call__(
        slf: &Bound<'_, Self>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        if kwargs.is_none_or(|k| k.is_empty()) {
            if let Some(out) = slf.get().run(py, args)? {
                return Ok(Py::new(py, out)?.into_any());
            }
        }
        Ok(slf.call_method("_call", args.clone(), kwargs)?.unbind())
    }

    /// The result of the prepared call registered for the signature of `args`, or `None` when
    /// there is none (or an argument is not an array): the caller then takes the general path.
    fn _fast_run(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyArray>> {
        self.run(py, args)
    }

    /// Registers `call` for the signature of `args` (arrays only; otherwise nothing is kept).
    fn _fast_add(&self, args: &Bound<'_, PyTuple>, call: Py<PyPreparedCall>) {
        let Some(key) = signature(args) else {
            return;
        };
        let mut calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
        if calls.len() >= FAST_CALLS_MAX {
            calls.clear();
        }
        calls.insert(key, call);
    }

    /// Forgets every signature.
    fn _fast_clear(&self) {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

impl PyFastCalls {
    fn run(&self, py: Python<'_>, args: &Bound<'_, PyTuple>) -> PyResult<Option<PyArray>> {
        let Some(key) = signature(args) else {
            return Ok(None);
        };
        let call = {
            let calls = self.calls.lock().unwrap_or_else(|p| p.into_inner());
            match calls.get(&key) {
                Some(c) => c.clone_ref(py),
                None => return Ok(None),
            }
        };
        call.get().call(py, args).map(Some)
    }
}
