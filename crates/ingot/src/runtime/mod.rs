//! The low-level device contract.
//!
//! A runtime owns one device: it allocates and frees memory, copies between host and device and
//! within the device, and waits for queued work. Everything above it (arrays, ops, kernels) talks
//! to devices only through [`Runtime`] and [`Buffer`]. A backend is one folder here; adding one
//! touches no other backend.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
pub mod metal;

use std::sync::{Arc, Mutex, OnceLock};

use crate::device::Device;
use crate::error::{Error, Result};

/// The size class of an allocation request, shared by the caching allocators: 512-byte
/// granules up to 4 KiB, then four classes per power of two (at most 25% rounding waste), so a
/// freed block serves any later request of the same class.
pub fn size_class(nbytes: usize) -> usize {
    let n = nbytes.max(1);
    if n <= 4096 {
        return n.div_ceil(512) * 512;
    }
    let k = usize::BITS - 1 - n.leading_zeros();
    let step = 1usize << (k - 2);
    n.div_ceil(step) * step
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

/// What every device backend provides.
pub trait Runtime: Send + Sync {
    /// The device this runtime drives.
    fn device(&self) -> Device;

    /// A human-readable device name (`"NVIDIA H100 80GB HBM3"`, the CPU model...).
    fn name(&self) -> String;

    /// Allocates `nbytes` of uninitialised memory.
    fn allocate(&self, nbytes: usize) -> Result<Buffer>;

    /// Copies `src` into `dst` at byte offset `dst_offset`.
    fn copy_from_host(&self, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()>;

    /// Copies bytes of `src` starting at `src_offset` into `dst` (waits for queued work first).
    fn copy_to_host(&self, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()>;

    /// Copies `nbytes` within the device.
    fn copy_within(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        nbytes: usize,
    ) -> Result<()>;

    /// Waits until all queued work has finished; reports the first device error since the last call.
    fn synchronize(&self) -> Result<()>;

    /// Memory statistics.
    fn memory_info(&self) -> MemoryInfo;

    /// Frees cached blocks the runtime holds for reuse.
    fn empty_cache(&self) {}
}

/// Device memory of any backend. Dropping it returns the memory to its runtime.
pub enum Storage {
    /// Host memory.
    Cpu(cpu::CpuMemory),
    /// NVIDIA GPU memory from the device's pool.
    #[cfg(feature = "cuda")]
    Cuda(cuda::CudaMemory),
    /// Apple GPU memory (shared with the host).
    #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
    Metal(metal::MetalMemory),
}

/// A block of device memory with its size and whether it may be written.
pub struct Buffer {
    storage: Storage,
    nbytes: usize,
    device: Device,
    writable: bool,
}

impl Buffer {
    /// Wraps backend storage.
    pub fn new(storage: Storage, nbytes: usize, device: Device, writable: bool) -> Buffer {
        Buffer {
            storage,
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

    /// The backend storage.
    pub fn storage(&self) -> &Storage {
        &self.storage
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

    /// The host address of the memory, for CPU buffers.
    pub fn host_ptr(&self) -> Option<*mut u8> {
        match &self.storage {
            Storage::Cpu(m) => Some(m.as_ptr()),
            // Shared storage: valid host memory once queued GPU work is synchronised.
            #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
            Storage::Metal(m) => Some(m.contents()),
            #[allow(unreachable_patterns)]
            _ => None,
        }
    }

    /// The device address of the memory, for CUDA buffers.
    pub fn device_ptr(&self) -> Option<u64> {
        match &self.storage {
            #[cfg(feature = "cuda")]
            Storage::Cuda(m) => Some(m.device_ptr()),
            _ => None,
        }
    }
}

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer({} bytes on {})", self.nbytes, self.device)
    }
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
    let rt: Arc<dyn Runtime> = match device {
        Device::Cpu => Arc::new(cpu::CpuRuntime::new()),
        #[cfg(feature = "cuda")]
        Device::Cuda(i) => cuda::runtime(i)?,
        #[cfg(not(feature = "cuda"))]
        Device::Cuda(_) => {
            return Err(Error::DeviceUnavailable(format!(
                "{device}: this build of ingot has no CUDA backend"
            )))
        }
        #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
        Device::Metal(i) => metal::runtime(i)?,
        #[cfg(not(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck))))]
        Device::Metal(_) => {
            return Err(Error::DeviceUnavailable(format!(
                "{device}: this build of ingot has no Metal backend"
            )))
        }
    };
    reg.push((device, rt.clone()));
    Ok(rt)
}

/// Whether arrays of `dtype` can live on `device`: Metal GPUs have no float64
/// ([`Error::UnsupportedDType`]); every other device holds every dtype. Array constructors call
/// this before allocating.
pub fn check_dtype(device: Device, dtype: crate::dtype::DType) -> Result<()> {
    match device {
        #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
        Device::Metal(_) => metal::check_dtype(dtype),
        _ => {
            let _ = dtype;
            Ok(())
        }
    }
}

/// The GPUs present on this machine, best first (Metal devices, then CUDA devices).
pub fn available_gpus() -> Vec<Device> {
    #[allow(unused_mut)]
    let mut out = Vec::new();
    #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
    out.extend((0..metal::device_count()).map(Device::Metal));
    #[cfg(feature = "cuda")]
    out.extend((0..cuda::device_count()).map(Device::Cuda));
    out
}
