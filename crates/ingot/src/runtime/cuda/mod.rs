//! The CUDA runtime: one primary context and one stream per device, a caching memory pool,
//! asynchronous copies and launches, and device errors reported at the next synchronisation.

pub mod blas;
mod driver;
pub mod kernel;
pub mod nvrtc;
mod pool;

pub use driver::{device_count, driver_present};
pub use pool::size_class;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{result, sys};

use self::driver::{check, describe, is_sticky};
use self::pool::Pool;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::{Buffer, MemoryInfo, Runtime, Storage};

/// Properties read once from the device.
#[derive(Clone, Debug)]
pub struct CudaProperties {
    pub name: String,
    pub compute_capability: (i32, i32),
    pub multiprocessors: i32,
    pub total_memory: usize,
    pub max_shared_memory_per_block_optin: i32,
    pub l2_cache_bytes: i32,
}

/// State shared by the runtime and every buffer it allocated.
pub struct CudaInner {
    ordinal: usize,
    ctx: sys::CUcontext,
    stream: sys::CUstream,
    pool: Pool,
    props: CudaProperties,
    /// Kernels launched since the last synchronisation, for error messages.
    in_flight: Mutex<Vec<String>>,
    /// Set after a fault that makes the context unusable.
    poisoned: Mutex<Option<String>>,
    /// `poisoned` is set (checked without the lock on every launch).
    is_poisoned: AtomicBool,
}

// SAFETY: CUDA contexts and streams are usable from any thread once the context is made
// current there, which `bind` does before every driver call.
unsafe impl Send for CudaInner {}
unsafe impl Sync for CudaInner {}

impl CudaInner {
    /// Makes this device's context current on the calling thread and fails if it was poisoned.
    pub fn bind(&self) -> Result<()> {
        if self.is_poisoned.load(Ordering::Acquire) {
            let msg = self
                .poisoned
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            return Err(Error::Device(msg.unwrap_or_default()));
        }
        // Reading the current context is a thread-local lookup; setting it costs more, and on
        // the launch path the context is almost always already current.
        if matches!(result::ctx::get_current(), Ok(Some(c)) if c == self.ctx) {
            return Ok(());
        }
        // SAFETY: the context was retained in `CudaRuntime::new` and lives as long as `self`.
        check(
            unsafe { result::ctx::set_current(self.ctx) },
            "cuCtxSetCurrent",
        )
    }

    /// The device's stream (all ingot work on the device is queued on it).
    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Device properties.
    pub fn properties(&self) -> &CudaProperties {
        &self.props
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// Notes a launch so a later fault can name it.
    pub fn note_launch(&self, name: &str) {
        let mut v = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
        if v.len() < 64 && v.last().map(|s| s.as_str()) != Some(name) {
            v.push(name.to_string());
        }
    }

    /// Turns a driver error seen at a synchronisation point into an error naming the kernels
    /// launched since the last one; poisons the runtime when the context is lost.
    pub fn fault(&self, e: result::DriverError, what: &str) -> Error {
        let kernels =
            std::mem::take(&mut *self.in_flight.lock().unwrap_or_else(|p| p.into_inner()));
        let names = if kernels.is_empty() {
            String::new()
        } else {
            format!(" in kernel {}", kernels.join(", "))
        };
        let msg = format!("cuda:{}: {what}{names}: {}", self.ordinal, describe(e));
        if is_sticky(e) {
            *self.poisoned.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                "{msg} (the CUDA context is unusable after this fault; restart the process)"
            ));
            self.is_poisoned.store(true, Ordering::Release);
        }
        Error::Device(msg)
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the stream belongs to the bound context.
        match unsafe { result::stream::synchronize(self.stream) } {
            Ok(()) => {
                self.in_flight
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .clear();
                Ok(())
            }
            Err(e) => Err(self.fault(e, "synchronize")),
        }
    }
}

/// Device memory: a block from the pool (returned to it on drop), or memory owned by another
/// library (a PyTorch or CuPy tensor imported through DLPack) kept alive by `owner`.
pub struct CudaMemory {
    ptr: sys::CUdeviceptr,
    class: usize,
    inner: Arc<CudaInner>,
    owner: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl CudaMemory {
    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The runtime state of the device owning the memory.
    pub fn inner(&self) -> &Arc<CudaInner> {
        &self.inner
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.owner.is_none() {
            self.inner.pool.release(self.ptr, self.class);
        }
    }
}

/// Wraps device memory owned by someone else (for example a DLPack tensor) as a buffer of
/// CUDA device `ordinal`, without copying.
///
/// # Safety
/// `ptr` must be a device address of that device's context valid for `nbytes` bytes while
/// `owner` is alive; dropping `owner` releases it.
pub unsafe fn foreign_buffer(
    ordinal: usize,
    ptr: u64,
    nbytes: usize,
    writable: bool,
    owner: Box<dyn std::any::Any + Send + Sync>,
) -> Result<Buffer> {
    let rt = runtime(ordinal)?;
    let mem = CudaMemory {
        ptr,
        class: 0,
        inner: rt.inner.clone(),
        owner: Some(owner),
    };
    Ok(Buffer::new(
        Storage::Cuda(mem),
        nbytes,
        Device::Cuda(ordinal),
        writable,
    ))
}

/// An NVIDIA GPU as an ingot device.
pub struct CudaRuntime {
    inner: Arc<CudaInner>,
    kernels: OnceLock<Arc<kernel::CudaKernels>>,
}

/// The runtime of CUDA device `ordinal`, opened on first use and shared afterwards.
pub fn runtime(ordinal: usize) -> Result<Arc<CudaRuntime>> {
    static RUNTIMES: OnceLock<Mutex<HashMap<usize, Arc<CudaRuntime>>>> = OnceLock::new();
    let mut map = RUNTIMES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = map.get(&ordinal) {
        return Ok(rt.clone());
    }
    let rt = Arc::new(CudaRuntime::new(ordinal)?);
    map.insert(ordinal, rt.clone());
    Ok(rt)
}

/// The kernel engine of CUDA device `ordinal`.
pub fn kernel_backend(ordinal: usize) -> Result<Arc<kernel::CudaKernels>> {
    let rt = runtime(ordinal)?;
    Ok(rt
        .kernels
        .get_or_init(|| Arc::new(kernel::CudaKernels::new(rt.inner.clone())))
        .clone())
}

impl CudaRuntime {
    /// Opens device `ordinal`: retains its primary context and creates its stream.
    /// Use [`runtime`] to share one per device.
    fn new(ordinal: usize) -> Result<CudaRuntime> {
        if !driver_present() {
            return Err(Error::DeviceUnavailable(format!(
                "cuda:{ordinal}: no CUDA driver (libcuda) found on this machine"
            )));
        }
        let count = device_count();
        if ordinal >= count {
            return Err(Error::DeviceUnavailable(format!(
                "cuda:{ordinal}: this machine has {count} CUDA device(s)"
            )));
        }
        let dev = check(result::device::get(ordinal as i32), "cuDeviceGet")?;
        // SAFETY: `dev` is a valid device handle; the context is released in Drop.
        let ctx = check(
            unsafe { result::primary_ctx::retain(dev) },
            "cuDevicePrimaryCtxRetain",
        )?;
        check(unsafe { result::ctx::set_current(ctx) }, "cuCtxSetCurrent")?;
        let stream = check(
            result::stream::create(result::stream::StreamKind::NonBlocking),
            "cuStreamCreate",
        )?;
        let attr = |a: sys::CUdevice_attribute| -> i32 {
            // SAFETY: plain attribute query of a valid device.
            unsafe { result::device::get_attribute(dev, a) }.unwrap_or(0)
        };
        use sys::CUdevice_attribute::*;
        let props = CudaProperties {
            name: result::device::get_name(dev).unwrap_or_else(|_| "CUDA device".into()),
            compute_capability: (
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR),
                attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR),
            ),
            multiprocessors: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT),
            total_memory: unsafe { result::device::total_mem(dev) }.unwrap_or(0),
            max_shared_memory_per_block_optin: attr(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            ),
            l2_cache_bytes: attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE),
        };
        Ok(CudaRuntime {
            inner: Arc::new(CudaInner {
                ordinal,
                ctx,
                stream,
                pool: Pool::default(),
                props,
                in_flight: Mutex::new(Vec::new()),
                poisoned: Mutex::new(None),
                is_poisoned: AtomicBool::new(false),
            }),
            kernels: OnceLock::new(),
        })
    }

    /// The state shared with buffers and kernels.
    pub fn inner(&self) -> &Arc<CudaInner> {
        &self.inner
    }
}

fn cuda_memory<'a>(buf: &'a Buffer, what: &str) -> Result<&'a CudaMemory> {
    match buf.storage() {
        Storage::Cuda(m) => Ok(m),
        #[allow(unreachable_patterns)]
        _ => Err(Error::DeviceMismatch(format!(
            "{what}: buffer on {} given to a cuda runtime",
            buf.device()
        ))),
    }
}

impl Runtime for CudaRuntime {
    fn device(&self) -> Device {
        Device::Cuda(self.inner.ordinal)
    }

    fn name(&self) -> String {
        self.inner.props.name.clone()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        self.inner.bind()?;
        let (ptr, class) = self.inner.pool.allocate(nbytes).map_err(|e| match e {
            Error::OutOfMemory { .. } => Error::OutOfMemory {
                bytes: nbytes,
                device: self.device().to_string(),
            },
            other => other,
        })?;
        let mem = CudaMemory {
            ptr,
            class,
            inner: self.inner.clone(),
            owner: None,
        };
        Ok(Buffer::new(Storage::Cuda(mem), nbytes, self.device(), true))
    }

    fn copy_from_host(&self, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()> {
        dst.check_range(dst_offset, src.len(), "copy_from_host")?;
        if src.is_empty() {
            return Ok(());
        }
        let m = cuda_memory(dst, "copy_from_host")?;
        self.inner.bind()?;
        // From pageable memory the driver returns once `src` has been staged, so the caller may
        // free it right after; the transfer itself stays ordered on the stream.
        // SAFETY: the range was checked; the stream orders this after earlier work.
        unsafe {
            check(
                result::memcpy_htod_async(m.ptr + dst_offset as u64, src, self.inner.stream),
                "cuMemcpyHtoDAsync",
            )
        }
    }

    fn copy_to_host(&self, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        src.check_range(src_offset, dst.len(), "copy_to_host")?;
        if dst.is_empty() {
            return Ok(());
        }
        let m = cuda_memory(src, "copy_to_host")?;
        self.inner.bind()?;
        // SAFETY: the range was checked; we wait for the copy before returning.
        unsafe {
            result::memcpy_dtoh_async(dst, m.ptr + src_offset as u64, self.inner.stream)
                .map_err(|e| self.inner.fault(e, "copy to host"))?;
        }
        self.inner.synchronize()
    }

    fn copy_within(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        nbytes: usize,
    ) -> Result<()> {
        src.check_range(src_offset, nbytes, "copy_within")?;
        dst.check_range(dst_offset, nbytes, "copy_within")?;
        if nbytes == 0 {
            return Ok(());
        }
        let (s, d) = (
            cuda_memory(src, "copy_within")?,
            cuda_memory(dst, "copy_within")?,
        );
        self.inner.bind()?;
        // SAFETY: both ranges were checked; stream-ordered.
        unsafe {
            check(
                result::memcpy_dtod_async(
                    d.ptr + dst_offset as u64,
                    s.ptr + src_offset as u64,
                    nbytes,
                    self.inner.stream,
                ),
                "cuMemcpyDtoDAsync",
            )
        }
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    fn memory_info(&self) -> MemoryInfo {
        let stats = self.inner.pool.stats();
        let (free, total) = if self.inner.bind().is_ok() {
            result::mem_get_info().unwrap_or((0, self.inner.props.total_memory))
        } else {
            (0, self.inner.props.total_memory)
        };
        MemoryInfo {
            used: stats.used,
            pool: stats.pooled,
            free,
            total,
            peak: stats.peak,
            buffers: stats.live,
        }
    }

    fn empty_cache(&self) {
        if self.inner.bind().is_ok() && self.inner.synchronize().is_ok() {
            let _ = self.inner.pool.release_cached();
        }
    }
}
