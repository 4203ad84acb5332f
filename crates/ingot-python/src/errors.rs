//! The one place where `ingot::Error` becomes a Python exception.
//!
//! Exception classes (all exported by `ingot._ingot` and re-exported by `ingot`):
//!
//! | `ingot::Error`              | Python exception                                              |
//! |-----------------------------|---------------------------------------------------------------|
//! | `Shape`, `Value`, `ReadOnly`| `ValueError`                                                  |
//! | `Index`                     | `IndexError`                                                  |
//! | `Type`, `UnsupportedDType`, `DTypeMismatch` | `TypeError`                                   |
//! | `OutOfMemory`               | `MemoryError`                                                 |
//! | `DeviceMismatch`            | `DeviceMismatchError(IngotError, ValueError)`                 |
//! | `DeviceUnavailable`         | `DeviceUnavailableError(DeviceError)`                         |
//! | `Device`                    | `DeviceError(IngotError)`                                     |
//! | `KernelFault`               | `KernelFaultError(DeviceError)`                               |
//! | `Interrupted`               | `KeyboardInterrupt` (after running pending signal handlers)   |
//! | `Compile`                   | `CompileError(IngotError)`                                    |
//! | `KernelArgument`            | `KernelArgumentError(IngotError, TypeError, ValueError)`      |
//! | `Unsupported`               | `UnsupportedError(IngotError, NotImplementedError)`           |
//! | `LinAlg`                    | `LinAlgError(IngotError, ValueError)` (`ingot.linalg.LinAlgError`) |
//! | `Io`                        | `IngotError`                                                  |
//!
//! A Rust panic inside a binding never reaches Python as `PanicException`: [`guard`] catches it
//! and raises `IngotError` with the panic message.

use std::panic::{catch_unwind, AssertUnwindSafe};

use pyo3::exceptions::{
    PyException, PyIndexError, PyKeyboardInterrupt, PyMemoryError, PyNotImplementedError,
    PyTypeError, PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

pyo3::create_exception!(
    ingot,
    IngotError,
    PyException,
    "Base class of the errors that ingot raises itself (other errors use Python's built-in classes)."
);
pyo3::create_exception!(
    ingot,
    CompileError,
    IngotError,
    "An MSL kernel that did not translate or compile; the message carries the compiler's log."
);
pyo3::create_exception!(
    ingot,
    DeviceError,
    IngotError,
    "A fault reported by a device (CUDA error, Metal command-buffer error, CPU kernel error)."
);
pyo3::create_exception!(
    ingot,
    DeviceUnavailableError,
    DeviceError,
    "A device that does not exist, or a backend that is not available on this machine."
);

pyo3::create_exception!(
    ingot,
    KernelFaultError,
    DeviceError,
    "A kernel that accessed memory outside its buffers (checked mode, or a guard page on the CPU); the message names the kernel, parameter, index, length and thread."
);

static KERNEL_ARGUMENT_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static DEVICE_MISMATCH_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static UNSUPPORTED_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();
static LINALG_ERROR: PyOnceLock<Py<PyType>> = PyOnceLock::new();

/// Creates `ingot.<name>` deriving from every class of `bases` (Python's `type(name, bases, ns)`).
fn multi_base_type(
    py: Python<'_>,
    name: &str,
    doc: &str,
    bases: Vec<Bound<'_, PyType>>,
) -> PyResult<Py<PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__module__", "ingot")?;
    ns.set_item("__doc__", doc)?;
    let bases = PyTuple::new(py, bases)?;
    let t = py
        .get_type::<PyType>()
        .call1((name, bases, ns))?
        .cast_into::<PyType>()?;
    Ok(t.unbind())
}

/// `KernelArgumentError(IngotError, TypeError, ValueError)`: kernel arguments that do not match
/// the kernel's parameters; catchable as any of its bases.
pub fn kernel_argument_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    KERNEL_ARGUMENT_ERROR
        .get_or_try_init(py, || {
            multi_base_type(
                py,
                "KernelArgumentError",
                "Kernel arguments that do not match the kernel's parameters (a TypeError and a ValueError too).",
                vec![
                    py.get_type::<IngotError>(),
                    py.get_type::<PyTypeError>(),
                    py.get_type::<PyValueError>(),
                ],
            )
        })
        .map(|t| t.bind(py))
}

/// `DeviceMismatchError(IngotError, ValueError)`: arrays on different devices combined.
pub fn device_mismatch_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    DEVICE_MISMATCH_ERROR
        .get_or_try_init(py, || {
            multi_base_type(
                py,
                "DeviceMismatchError",
                "Arrays on different devices were combined; move one with to_device (a ValueError too).",
                vec![py.get_type::<IngotError>(), py.get_type::<PyValueError>()],
            )
        })
        .map(|t| t.bind(py))
}

/// `UnsupportedError(IngotError, NotImplementedError)`: something ingot does not support (yet).
pub fn unsupported_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    UNSUPPORTED_ERROR
        .get_or_try_init(py, || {
            multi_base_type(
                py,
                "UnsupportedError",
                "Something ingot does not support (yet) (a NotImplementedError too).",
                vec![
                    py.get_type::<IngotError>(),
                    py.get_type::<PyNotImplementedError>(),
                ],
            )
        })
        .map(|t| t.bind(py))
}

/// `LinAlgError(IngotError, ValueError)`: a singular matrix, one that is not positive definite,
/// a factorization that did not converge (a ValueError too, as NumPy's `LinAlgError`).
pub fn linalg_error(py: Python<'_>) -> PyResult<&Bound<'_, PyType>> {
    LINALG_ERROR
        .get_or_try_init(py, || {
            multi_base_type(
                py,
                "LinAlgError",
                "A linear-algebra failure the inputs cause: a singular matrix, one that is not positive definite, no convergence (a ValueError too, as NumPy's).",
                vec![py.get_type::<IngotError>(), py.get_type::<PyValueError>()],
            )
        })
        .map(|t| t.bind(py))
}

/// Raises an instance of `ty` with `msg`, or the error met while creating `ty`.
fn raise(ty: PyResult<&Bound<'_, PyType>>, msg: String) -> PyErr {
    match ty {
        Ok(t) => PyErr::from_type(t.clone(), msg),
        Err(e) => e,
    }
}

/// Converts an ingot error into the Python exception a user should catch (see the module docs).
pub fn to_py(e: ingot::Error) -> PyErr {
    use ingot::Error as E;
    let msg = e.to_string();
    match e {
        E::Shape(_) | E::Value(_) | E::ReadOnly(_) => PyValueError::new_err(msg),
        E::Index(_) => PyIndexError::new_err(msg),
        E::Type(_) | E::UnsupportedDType { .. } | E::DTypeMismatch(_) => PyTypeError::new_err(msg),
        E::OutOfMemory { .. } => PyMemoryError::new_err(msg),
        E::DeviceUnavailable(_) => DeviceUnavailableError::new_err(msg),
        E::Device(_) => DeviceError::new_err(msg),
        E::Compile(_) => CompileError::new_err(msg),
        E::DeviceMismatch(_) => Python::attach(|py| raise(device_mismatch_error(py), msg)),
        E::KernelArgument(_) => Python::attach(|py| raise(kernel_argument_error(py), msg)),
        E::Unsupported(_) => Python::attach(|py| raise(unsupported_error(py), msg)),
        E::LinAlg(_) => Python::attach(|py| raise(linalg_error(py), msg)),
        E::KernelFault(_) => KernelFaultError::new_err(msg),
        // Python's own SIGINT handler has a pending call: run it (it raises KeyboardInterrupt,
        // or the user's handler decides), so the interrupt is not raised a second time later.
        E::Interrupted(_) => Python::attach(|py| match py.check_signals() {
            Err(e) => e,
            Ok(()) => PyKeyboardInterrupt::new_err(msg),
        }),
        E::Io { .. } => IngotError::new_err(msg),
    }
}

/// `ingot::Result<T>` to `PyResult<T>` through [`to_py`].
pub trait IntoPyResult<T> {
    /// Maps the error with [`to_py`].
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPyResult<T> for ingot::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

/// The message of a caught panic payload.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs `f`, turning a Rust panic into `IngotError` (an internal error, never a crash).
pub fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => Err(IngotError::new_err(format!(
            "internal error (please report): {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// Runs the ingot operation `f` with the GIL released, catching panics and mapping errors.
pub fn detached<T: Send>(
    py: Python<'_>,
    f: impl FnOnce() -> ingot::Result<T> + Send,
) -> PyResult<T> {
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(f)));
    match r {
        Ok(r) => r.py_err(),
        Err(payload) => Err(IngotError::new_err(format!(
            "internal error (please report): {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// Runs an array operation of about `work` elements on `device`: without the GIL when it is
/// long (a large array on the CPU, which computes before returning), with the GIL otherwise. On a
/// GPU an operation only queues work, and releasing and retaking the GIL would cost a sizeable
/// share of a small operation's few microseconds. Panics become `IngotError` either way.
pub fn compute<T: Send>(
    py: Python<'_>,
    device: ingot::Device,
    work: usize,
    f: impl FnOnce() -> ingot::Result<T> + Send,
) -> PyResult<T> {
    /// Elements from which a CPU operation releases the GIL.
    const CPU_DETACH: usize = 1 << 14;
    if device == ingot::Device::Cpu && work >= CPU_DETACH {
        return detached(py, f);
    }
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r.py_err(),
        Err(payload) => Err(IngotError::new_err(format!(
            "internal error (please report): {}",
            panic_message(payload.as_ref())
        ))),
    }
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("IngotError", py.get_type::<IngotError>())?;
    m.add("CompileError", py.get_type::<CompileError>())?;
    m.add("DeviceError", py.get_type::<DeviceError>())?;
    m.add(
        "DeviceUnavailableError",
        py.get_type::<DeviceUnavailableError>(),
    )?;
    m.add("KernelArgumentError", kernel_argument_error(py)?)?;
    m.add("KernelFaultError", py.get_type::<KernelFaultError>())?;
    m.add("DeviceMismatchError", device_mismatch_error(py)?)?;
    m.add("UnsupportedError", unsupported_error(py)?)?;
    m.add("LinAlgError", linalg_error(py)?)?;
    Ok(())
}
