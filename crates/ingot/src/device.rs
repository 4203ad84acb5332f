//! Devices: where an array's memory lives and where its operations run.
//!
//! A [`Device`] is a name. Opening it (`Device::runtime`), listing the devices of this machine
//! (`devices`) and choosing the default one (`default_device`) are the runtime registry's
//! (`runtime/registry.rs`).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// A compute device.
///
/// ```
/// use ingot::Device;
/// let d: Device = "cpu".parse().unwrap();
/// assert_eq!(d, Device::Cpu);
/// assert_eq!("cuda:1".parse::<Device>().unwrap(), Device::Cuda(1));
/// ```
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Device {
    /// The host CPU (all cores).
    Cpu,
    /// An NVIDIA GPU, by CUDA ordinal.
    Cuda(usize),
    /// An Apple GPU, by index in `MTLCopyAllDevices`.
    Metal(usize),
}

impl Device {
    /// The kind of device as a short name: `"cpu"`, `"cuda"` or `"metal"`.
    pub fn kind(&self) -> &'static str {
        match self {
            Device::Cpu => "cpu",
            Device::Cuda(_) => "cuda",
            Device::Metal(_) => "metal",
        }
    }

    /// The device ordinal (0 for the CPU).
    pub fn index(&self) -> usize {
        match self {
            Device::Cpu => 0,
            Device::Cuda(i) | Device::Metal(i) => *i,
        }
    }

    /// True for GPU devices.
    pub fn is_gpu(&self) -> bool {
        !matches!(self, Device::Cpu)
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => f.write_str("cpu"),
            Device::Cuda(i) => write!(f, "cuda:{i}"),
            Device::Metal(i) => write!(f, "metal:{i}"),
        }
    }
}

impl FromStr for Device {
    type Err = Error;

    fn from_str(s: &str) -> Result<Device> {
        let s = s.trim().to_ascii_lowercase();
        let (kind, index) = match s.split_once(':') {
            Some((k, i)) => {
                let i = i.parse::<usize>().map_err(|_| {
                    Error::Value(format!(
                        "invalid device index in {s:?}: expected e.g. 'cuda:0'"
                    ))
                })?;
                (k.to_string(), i)
            }
            None => (s.clone(), 0),
        };
        match kind.as_str() {
            "cpu" if index == 0 => Ok(Device::Cpu),
            "cpu" => Err(Error::Value(format!(
                "there is only one cpu device, got {s:?}"
            ))),
            "cuda" | "gpu" => Ok(Device::Cuda(index)),
            "metal" | "mps" => Ok(Device::Metal(index)),
            _ => Err(Error::Value(format!(
                "unknown device {s:?}: expected 'cpu', 'cuda', 'cuda:N' or 'metal'"
            ))),
        }
    }
}
