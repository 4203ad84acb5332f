//! Device objects (`ingot.Device("cpu")`) and device arguments.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::errors::IntoPyResult;
use ingot::Device;

/// A compute device: `Device("cpu")`, `Device("cuda:0")`, `Device("metal")`.
///
/// Creating a Device object never fails for a well-formed name; using an absent device raises
/// `DeviceUnavailableError`.
#[pyclass(name = "Device", module = "ingot", frozen)]
pub struct PyDevice {
    /// The ingot device.
    pub device: Device,
}

/// Converts a device argument: a `Device`, a string, or `None` (the default device).
pub fn device_from_py(obj: Option<&Bound<'_, PyAny>>) -> PyResult<Device> {
    match obj {
        None => ingot::default_device().py_err(),
        Some(o) if o.is_none() => ingot::default_device().py_err(),
        Some(o) => {
            if let Ok(d) = o.cast::<PyDevice>() {
                return Ok(d.get().device);
            }
            if let Ok(s) = o.cast::<PyString>() {
                return s.to_cow()?.parse::<Device>().py_err();
            }
            Err(PyTypeError::new_err(format!(
                "expected a device (ingot.Device or a string such as 'cpu'), got {}",
                o.get_type().name()?
            )))
        }
    }
}

#[pymethods]
impl PyDevice {
    /// Parses `"cpu"`, `"cuda"`, `"cuda:N"`, `"metal"` (or copies a Device).
    #[new]
    fn new(spec: &Bound<'_, PyAny>) -> PyResult<PyDevice> {
        Ok(PyDevice {
            device: device_from_py(Some(spec))?,
        })
    }

    /// `"cpu"`, `"cuda"` or `"metal"`.
    #[getter]
    fn kind(&self) -> &'static str {
        self.device.kind()
    }

    /// The device ordinal (0 for the CPU).
    #[getter]
    fn index(&self) -> usize {
        self.device.index()
    }

    /// Whether this device exists on this machine.
    fn is_available(&self) -> bool {
        self.device.is_available()
    }

    /// The hardware name (CPU model, GPU name).
    fn name(&self) -> PyResult<String> {
        Ok(self.device.runtime().py_err()?.name())
    }

    /// Memory statistics in bytes: used, pool, free, total, peak, buffers.
    fn memory_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let i = self.device.runtime().py_err()?.memory_info();
        let d = PyDict::new(py);
        d.set_item("used", i.used)?;
        d.set_item("pool", i.pool)?;
        d.set_item("free", i.free)?;
        d.set_item("total", i.total)?;
        d.set_item("peak", i.peak)?;
        d.set_item("buffers", i.buffers)?;
        Ok(d)
    }

    /// Makes this the current device of the calling thread until the `with` block ends: arrays
    /// and kernels created without `device=` go there (nested blocks restore the outer device).
    ///
    /// ```python
    /// with ingot.Device("cuda:1"):
    ///     x = ingot.ones(10)          # on cuda:1
    /// ```
    fn __enter__(slf: PyRef<'_, Self>) -> PyResult<PyRef<'_, Self>> {
        ingot::runtime::push_current_device(slf.device).py_err()?;
        Ok(slf)
    }

    /// Restores the device that was current before the matching `__enter__`.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        ingot::runtime::pop_current_device();
        false
    }

    /// Waits for all work queued on the device.
    fn synchronize(&self) -> PyResult<()> {
        self.device.runtime().py_err()?.synchronize().py_err()
    }

    fn __repr__(&self) -> String {
        format!("Device('{}')", self.device)
    }

    fn __str__(&self) -> String {
        self.device.to_string()
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        if other.is_none() {
            return false;
        }
        device_from_py(Some(other)).is_ok_and(|d| d == self.device)
    }

    fn __ne__(&self, other: &Bound<'_, PyAny>) -> bool {
        !self.__eq__(other)
    }

    fn __hash__(&self, py: Python<'_>) -> PyResult<isize> {
        PyString::new(py, &self.device.to_string()).hash()
    }

    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, pyo3::types::PyType>, (String,))> {
        Ok((py.get_type::<PyDevice>(), (self.device.to_string(),)))
    }
}

/// Every available device, GPUs first, the CPU last.
///
/// >>> import ingot
/// >>> ingot.devices()[-1]
/// Device('cpu')
#[pyfunction]
fn devices() -> Vec<PyDevice> {
    ingot::devices()
        .into_iter()
        .map(|device| PyDevice { device })
        .collect()
}

/// The default device: the calling thread's current device (`with ingot.Device(...)`) when
/// set, else the process's (`set_default_device`) when set, else `INGOT_DEVICE` when set, else
/// the best available.
///
/// >>> import ingot
/// >>> ingot.default_device() in ingot.devices()
/// True
/// >>> with ingot.Device("cpu"):
/// ...     ingot.default_device()
/// Device('cpu')
#[pyfunction]
fn default_device() -> PyResult<PyDevice> {
    Ok(PyDevice {
        device: ingot::default_device().py_err()?,
    })
}

/// Sets (or, with `None`, clears) the default device of every thread of this process that is
/// not inside a `with ingot.Device(...)` block. One Dask worker per GPU calls it once.
///
/// >>> import ingot
/// >>> ingot.set_default_device("cpu")
/// >>> ingot.default_device()
/// Device('cpu')
/// >>> ingot.set_default_device(None)
#[pyfunction]
#[pyo3(signature = (device, /))]
fn set_default_device(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    let d = match device {
        Some(o) if !o.is_none() => Some(device_from_py(Some(o))?),
        _ => None,
    };
    ingot::runtime::set_process_device(d).py_err()
}

/// Adds `Device`, `devices`, `default_device` and `set_default_device` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyDevice>()?;
    m.add_function(wrap_pyfunction!(devices, m)?)?;
    m.add_function(wrap_pyfunction!(default_device, m)?)?;
    m.add_function(wrap_pyfunction!(set_default_device, m)?)?;
    Ok(())
}
