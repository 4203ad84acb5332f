//! Device memory as the layers above see it: a [`Buffer`] (a block of some backend's memory with
//! its size, device and writability) and the [`DeviceMemory`] trait every backend's memory type
//! implements. A backend recovers its own type from a buffer with [`Buffer::memory_as`].

use std::any::Any;

use crate::device::Device;
use crate::error::{Error, Result};

/// One backend's block of memory. Dropping it returns the memory to its backend.
pub trait DeviceMemory: Send + Sync + 'static {
    /// The host address of the first byte, for memory the host can read and write directly
    /// (CPU memory; Metal's shared memory once queued GPU work is synchronised).
    fn host_ptr(&self) -> Option<*mut u8> {
        None
    }

    /// The device address of the first byte, for GPU memory with a numeric address (CUDA).
    fn device_ptr(&self) -> Option<u64> {
        None
    }

    /// The concrete type, for the backend that made it.
    fn as_any(&self) -> &dyn Any;
}

/// A block of device memory with its size and whether it may be written.
pub struct Buffer {
    memory: Box<dyn DeviceMemory>,
    nbytes: usize,
    device: Device,
    writable: bool,
}

impl Buffer {
    /// Wraps backend memory of `nbytes` on `device`.
    pub fn new(memory: impl DeviceMemory, nbytes: usize, device: Device, writable: bool) -> Buffer {
        Buffer {
            memory: Box::new(memory),
            nbytes,
            device,
            writable,
        }
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }

    /// The device holding the memory.
    pub fn device(&self) -> Device {
        self.device
    }

    /// False for memory that must not be written (a read-only NumPy array wrapped without copy).
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// The backend memory.
    pub fn memory(&self) -> &dyn DeviceMemory {
        self.memory.as_ref()
    }

    /// The backend memory as the concrete type `M`, or `None` when another backend made it.
    pub fn memory_as<M: DeviceMemory>(&self) -> Option<&M> {
        self.memory.as_any().downcast_ref::<M>()
    }

    /// The backend memory as `M`, or [`Error::DeviceMismatch`] naming `what` and `backend`.
    pub fn expect_memory<M: DeviceMemory>(&self, what: &str, backend: &str) -> Result<&M> {
        self.memory_as::<M>().ok_or_else(|| {
            Error::DeviceMismatch(format!(
                "{what}: buffer on {} given to the {backend} runtime",
                self.device
            ))
        })
    }

    /// Fails unless bytes `offset..offset + len` lie inside the buffer (`what` names the caller).
    pub fn check_range(&self, offset: usize, len: usize, what: &str) -> Result<()> {
        if offset.checked_add(len).is_none_or(|end| end > self.nbytes) {
            return Err(Error::Value(format!(
                "{what}: range {offset}..{} is outside a buffer of {} bytes",
                offset.saturating_add(len),
                self.nbytes
            )));
        }
        Ok(())
    }

    /// The host address of the memory (see [`DeviceMemory::host_ptr`]).
    pub fn host_ptr(&self) -> Option<*mut u8> {
        self.memory.host_ptr()
    }

    /// The device address of the memory (see [`DeviceMemory::device_ptr`]).
    pub fn device_ptr(&self) -> Option<u64> {
        self.memory.device_ptr()
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes on {})", self.nbytes, self.device)
    }
}

/// Memory statistics of a device, in bytes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MemoryInfo {
    /// Bytes held by live arrays.
    pub used: usize,
    /// Bytes held in the runtime's pool of freed blocks, ready for reuse.
    pub pool: usize,
    /// Bytes the device reports free (the host's available memory for the CPU).
    pub free: usize,
    /// Total bytes of the device.
    pub total: usize,
    /// The highest `used` seen since start (or the last reset).
    pub peak: usize,
    /// Number of live buffers.
    pub buffers: usize,
}
