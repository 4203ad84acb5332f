//! The backends this build has, and the runtime of each device, opened on first use.
//!
//! Adding a backend: a folder under `runtime/` whose `mod.rs` defines a `BACKEND` value
//! implementing [`Backend`], its line in [`backends`], and its variant in [`Device`].

use std::cell::RefCell;
use std::sync::{Arc, Mutex, OnceLock};

use super::backend::{Backend, Runtime};
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Every backend compiled into this build, best first (the default device is the first
/// available device in this order).
static BACKENDS: &[&dyn Backend] = &[
    #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
    &super::metal::BACKEND,
    #[cfg(feature = "cuda")]
    &super::cuda::BACKEND,
    &super::cpu::BACKEND,
];

fn backends() -> &'static [&'static dyn Backend] {
    BACKENDS
}

type Registry = Mutex<Vec<(Device, Arc<dyn Runtime>)>>;

fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Mutex::new(Vec::new()))
}

/// The runtime of `device`, created on first use and shared afterwards.
pub fn get(device: Device) -> Result<Arc<dyn Runtime>> {
    let mut reg = registry()
        .lock()
        .map_err(|_| Error::Device("runtime registry poisoned".into()))?;
    if let Some((_, rt)) = reg.iter().find(|(d, _)| *d == device) {
        return Ok(rt.clone());
    }
    let Some(backend) = backends().iter().find(|b| b.kind() == device.kind()) else {
        return Err(Error::DeviceUnavailable(format!(
            "{device}: this build of ingot has no {} backend",
            device.kind()
        )));
    };
    let rt = backend.open(device.index())?;
    reg.push((device, rt.clone()));
    Ok(rt)
}

/// Whether arrays of `dtype` can live on `device` (see [`Runtime::check_dtype`]).
pub fn check_dtype(device: Device, dtype: DType) -> Result<()> {
    get(device)?.check_dtype(dtype)
}

/// The GPUs present on this machine, best first (Metal devices, then CUDA devices).
///
/// Probed once per process: without a GPU driver the probe searches the library path for it
/// (hundreds of failed `open`s, about a millisecond), and [`default_device`] asks on every
/// array created without a device.
pub fn available_gpus() -> Vec<Device> {
    static GPUS: OnceLock<Vec<Device>> = OnceLock::new();
    GPUS.get_or_init(|| {
        let mut out = Vec::new();
        for b in backends().iter().filter(|b| b.kind() != "cpu") {
            for i in 0..b.device_count() {
                if let Ok(d) = format!("{}:{i}", b.kind()).parse::<Device>() {
                    out.push(d);
                }
            }
        }
        out
    })
    .clone()
}

/// Every device that is available on this machine, the CPU last.
pub fn devices() -> Vec<Device> {
    let mut out = available_gpus();
    out.push(Device::Cpu);
    out
}

thread_local! {
    /// The devices made current on this thread (`with ingot.Device("cuda:1"):`), innermost last.
    static CURRENT: RefCell<Vec<Device>> = const { RefCell::new(Vec::new()) };
}

/// Makes `device` this thread's current device until the matching [`pop_current_device`]:
/// [`default_device`] returns it, so arrays created without a device go there. Fails when the
/// device is not available.
///
/// ```
/// use ingot::{runtime, Device};
/// runtime::push_current_device(Device::Cpu).unwrap();
/// assert_eq!(runtime::default_device().unwrap(), Device::Cpu);
/// runtime::pop_current_device();
/// ```
pub fn push_current_device(device: Device) -> Result<()> {
    get(device)?;
    CURRENT.with(|c| c.borrow_mut().push(device));
    Ok(())
}

/// Ends the innermost [`push_current_device`] of this thread; returns the device it made
/// current (`None` when there was none).
pub fn pop_current_device() -> Option<Device> {
    CURRENT.with(|c| c.borrow_mut().pop())
}

/// The process-wide default device set by [`set_process_device`].
static PROCESS_DEVICE: Mutex<Option<Device>> = Mutex::new(None);

/// Makes `device` the default device of every thread of the process that has no current device
/// of its own ([`push_current_device`]); `None` clears it. A worker process pinned to one GPU
/// (one Dask worker per GPU) sets it once, so the threads that run its tasks all use that GPU.
/// Fails when the device is not available.
pub fn set_process_device(device: Option<Device>) -> Result<()> {
    if let Some(d) = device {
        get(d)?;
    }
    *PROCESS_DEVICE.lock().unwrap_or_else(|p| p.into_inner()) = device;
    Ok(())
}

/// The default device: this thread's current device when one was pushed, else the process
/// device ([`set_process_device`]) when set, else `INGOT_DEVICE` when set, else the best
/// available (metal, cuda, cpu).
pub fn default_device() -> Result<Device> {
    if let Some(d) = CURRENT.with(|c| c.borrow().last().copied()) {
        return Ok(d);
    }
    if let Some(d) = *PROCESS_DEVICE.lock().unwrap_or_else(|p| p.into_inner()) {
        return Ok(d);
    }
    if let Ok(name) = std::env::var("INGOT_DEVICE") {
        if !name.trim().is_empty() {
            let d: Device = name.parse()?;
            get(d)?;
            return Ok(d);
        }
    }
    Ok(available_gpus().into_iter().next().unwrap_or(Device::Cpu))
}

impl Device {
    /// The runtime that drives this device, started on first use.
    pub fn runtime(&self) -> Result<Arc<dyn Runtime>> {
        get(*self)
    }

    /// Whether the device exists on this machine.
    pub fn is_available(&self) -> bool {
        self.runtime().is_ok()
    }
}
