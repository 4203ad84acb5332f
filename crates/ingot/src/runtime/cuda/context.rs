//! One CUDA device's context, stream and memory pool, shared by the runtime, its buffers and its
//! kernels; device errors are turned into messages naming the kernels in flight.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::driver::{check, describe, is_sticky};
use crate::error::{Error, Result};
use crate::runtime::pool::{BlockSource, Pool, PoolPolicy, SizeClasses};

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
    pool: Pool<CudaBlocks>,
    props: CudaProperties,
    /// Kernels launched since the last synchronisation, for error messages.
    in_flight: Mutex<Vec<String>>,
    /// Set after a fault that makes the context unusable.
    poisoned: Mutex<Option<String>>,
    /// `poisoned` is set (checked without the lock on every launch).
    is_poisoned: AtomicBool,
    /// Page-locked host memory for small reads, allocated at the first one.
    staging: Mutex<Option<Staging>>,
}

/// Reads of up to this many bytes go through the page-locked staging buffer.
pub const STAGING_BYTES: usize = 64 * 1024;

/// `STAGING_BYTES` of page-locked host memory from `cuMemHostAlloc`, kept for the life of the
/// process (as the context is).
struct Staging(*mut u8);

// SAFETY: a plain host allocation, only touched under the `staging` lock.
unsafe impl Send for Staging {}

// SAFETY: CUDA contexts and streams are usable from any thread once the context is made
// current there, which `bind` does before every driver call.
unsafe impl Send for CudaInner {}
unsafe impl Sync for CudaInner {}

impl CudaInner {
    /// Opens device `ordinal`: retains its primary context and creates its stream.
    pub(super) fn open(ordinal: usize) -> Result<CudaInner> {
        if !super::driver::driver_present() {
            return Err(Error::DeviceUnavailable(format!(
                "cuda:{ordinal}: no CUDA driver (libcuda) found on this machine"
            )));
        }
        let count = super::driver::device_count();
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
        Ok(CudaInner {
            ordinal,
            ctx,
            stream,
            pool: Pool::new(
                CudaBlocks,
                PoolPolicy {
                    classes: SizeClasses {
                        granule: 512,
                        linear_until: 4096,
                    },
                    cache_min: 0,
                    cache_max: usize::MAX,
                    max_block: usize::MAX,
                },
            ),
            props,
            in_flight: Mutex::new(Vec::new()),
            poisoned: Mutex::new(None),
            is_poisoned: AtomicBool::new(false),
            staging: Mutex::new(None),
        })
    }

    /// The device's memory pool.
    pub(crate) fn pool(&self) -> &Pool<CudaBlocks> {
        &self.pool
    }

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

    /// Copies `dst.len()` (at most `STAGING_BYTES`) bytes from device address `src` once the
    /// stream's earlier work is done. A small read (a scalar, a count read back to size a
    /// result) through page-locked memory is one DMA the stream orders, where a copy into
    /// pageable memory goes through the driver's own staging and returns later.
    pub fn read_small(&self, src: sys::CUdeviceptr, dst: &mut [u8]) -> Result<()> {
        debug_assert!(dst.len() <= STAGING_BYTES);
        self.bind()?;
        let mut guard = self.staging.lock().unwrap_or_else(|p| p.into_inner());
        if guard.is_none() {
            // SAFETY: the context is current; the memory is kept for the process.
            let p = unsafe { result::malloc_host(STAGING_BYTES, 0) }
                .map_err(|e| Error::Device(format!("cuMemHostAlloc: {}", describe(e))))?;
            *guard = Some(Staging(p as *mut u8));
        }
        let ptr = guard.as_ref().map(|s| s.0).unwrap_or(std::ptr::null_mut());
        // SAFETY: `ptr` holds STAGING_BYTES >= dst.len() bytes, used only under the lock.
        let host = unsafe { std::slice::from_raw_parts_mut(ptr, dst.len()) };
        // SAFETY: the caller checked the device range; we wait for the copy below.
        unsafe { result::memcpy_dtoh_async(host, src, self.stream) }
            .map_err(|e| self.fault(e, "copy to host"))?;
        self.synchronize()?;
        dst.copy_from_slice(host);
        Ok(())
    }

    /// The device's primary context.
    pub fn context(&self) -> sys::CUcontext {
        self.ctx
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

/// Raw device memory from the driver, for the pool. `create` and `destroy` need the device's
/// context current on the calling thread (the runtime binds it before allocating).
pub struct CudaBlocks;

impl BlockSource for CudaBlocks {
    type Block = sys::CUdeviceptr;

    fn create(&self, bytes: usize) -> Result<sys::CUdeviceptr> {
        // SAFETY: the caller made the device's context current.
        match unsafe { result::malloc_sync(bytes) } {
            Ok(p) => Ok(p),
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Err(Error::OutOfMemory {
                bytes,
                device: "cuda".into(),
            }),
            Err(e) => Err(Error::Device(format!(
                "cuMemAlloc({bytes}): {}",
                describe(e)
            ))),
        }
    }

    fn destroy(&self, block: sys::CUdeviceptr, _bytes: usize) -> Result<()> {
        // SAFETY: the pointer came from malloc_sync and is owned by no array.
        check(unsafe { result::free_sync(block) }, "cuMemFree")
    }
}
