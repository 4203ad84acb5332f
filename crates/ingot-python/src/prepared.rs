//! `Kernel._prepare`: a kernel call whose dispatch and trailing scalar arguments are fixed, and
//! whose output array is made anew on each call. `ingot.fuse` runs every warm call of a
//! generated elementwise kernel through one, so that a call costs one argument conversion per
//! input array instead of parsing the whole call (keywords, dispatch, scalars) each time.

use std::collections::HashMap;
use std::sync::Mutex;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use ingot::kernel::{Dispatch, Kernel, KernelArg};
use ingot::{Array, DType};

use crate::dtype::scalar_from_py;
use crate::errors::{compute, guard, IntoPyResult};
use crate::pyarray::PyArray;

/// A prepared call: `call(*inputs)` launches `kernel(*inputs, out, *tail)` with the fixed
/// dispatch and returns `out`, a new array of the fixed shape and dtype on the kernel's device.
#[pyclass(name = "PreparedCall", module = "ingot", frozen)]
pub struct PyPreparedCall {
    kernel: Kernel,
    dispatch: Dispatch,
    tail: Vec<KernelArg>,
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
        Ok(PyPreparedCall {
            kernel,
            dispatch,
            tail: args,
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
            let mut args = Vec::with_capacity(inputs.len() + 1 + self.tail.len());
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
            args.extend(self.tail.iter().cloned());
            // Generated elementwise kernels do work in proportion to the output: small ones run
            // with the GIL held, as built-in ops do.
            compute(py, device, self.out_size, || {
                let args = ingot::ops::contiguous_inputs(&self.kernel, &args)?;
                self.kernel.launch(&args, &self.dispatch)
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

/// The warm calls of one fused function (`ingot.fuse`) taking arrays only: the prepared call of
/// each argument signature, found and launched without going through Python, so that a warm
/// fused call costs about what one built-in op does.
#[pyclass(name = "FastCalls", module = "ingot", frozen)]
pub struct PyFastCalls {
    calls: Mutex<HashMap<Vec<u64>, Py<PyPreparedCall>>>,
}

/// Signatures kept per fused function (as the Python plan table, cleared when full).
const FAST_CALLS_MAX: usize = 512;

#[pymethods]
impl PyFastCalls {
    #[new]
    fn new() -> Self {
        PyFastCalls {
            calls: Mutex::new(HashMap::new()),
        }
    }

    /// The result of the prepared call registered for the signature of `args`, or `None` when
    /// there is none (or an argument is not an array): the caller then takes the general path.
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

    /// Registers `call` for the signature of `args` (arrays only; otherwise nothing is kept).
    fn add(&self, args: &Bound<'_, PyTuple>, call: Py<PyPreparedCall>) {
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
    fn clear(&self) {
        self.calls.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
