//! The Metal runtime (Apple GPUs): shared-storage buffers, a caching pool, one command queue per
//! device with command-buffer batching, and command-buffer errors reported at the next
//! synchronisation.
//!
//! **This backend has not yet run on Apple hardware.** It is written against the objc2-metal 0.3
//! bindings and type-checked on Linux by `scripts/metal_typecheck.sh` (see `README.md` beside
//! this file); its tests (`crates/ingot/tests/metal_runtime.rs`, `tests/test_metal.py`) run on
//! macOS only.
//!
//! # Memory
//!
//! Every buffer is `MTLStorageModeShared`: on Apple silicon (unified memory) the CPU and the GPU
//! see the same pages, so [`crate::runtime::Buffer::host_ptr`] returns the buffer's `contents()`
//! and NumPy can view a Metal array without a copy. The host may only touch that memory while no
//! queued GPU work uses it: [`Runtime::copy_from_host`] and [`Runtime::copy_to_host`] wait for
//! all queued work first, and a caller reading or writing through `host_ptr` must call
//! [`Runtime::synchronize`] before doing so. A page-aligned host allocation whose length is a
//! multiple of the page size can be wrapped without a copy ([`MetalRuntime::wrap_host`]).
//!
//! # Execution
//!
//! Kernels are encoded into one compute encoder of one command buffer; the command buffer is
//! committed when the host needs data (a copy to or from the host, [`Runtime::synchronize`]) or
//! when it holds [`batch_limit`] dispatches (`INGOT_METAL_BATCH`, default 64). Metal runs the
//! command buffers of a queue in order and tracks hazards between dispatches on the same buffers,
//! so the order of a program's operations is kept. A command buffer that fails (status
//! `MTLCommandBufferStatusError`) is reported by the next synchronisation as
//! [`Error::Device`] naming the kernels of that command buffer.
//!
//! # Dtypes
//!
//! Metal has no 64-bit floating point: **float64 arrays cannot live on a Metal device**.
//! [`check_dtype`] is the rule: creating a float64 array on Metal is
//! [`Error::UnsupportedDType`]; a user who wants the data on the GPU converts explicitly
//! (`astype(float32)` before `to_device`, or `asarray(x, dtype=float32, device="metal")`).
//! Every other dtype of ingot (bool, integers up to 64 bits, float16, bfloat16, float32) is
//! supported.

mod context;
mod device;
mod kernel;
mod memory;
mod pool;

pub use context::MetalInner;
pub use device::{batch_limit, check_dtype, device_count, page_size, MetalProperties, MtlDevice};
pub use kernel::{MetalFunction, MetalKernels, MetalLibrary};
pub use memory::MetalMemory;

use std::any::Any;
use std::collections::HashMap;
use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use block2::RcBlock;
use objc2::rc::autoreleasepool;
use objc2_metal::{MTLBlitCommandEncoder, MTLDevice, MTLResourceOptions};

use self::pool::PooledBuffer;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;
use crate::runtime::backend::{Backend, Runtime};
use crate::runtime::kernel::KernelBackend;
use crate::runtime::memory::{Buffer, MemoryInfo};

/// Owner of host memory wrapped without a copy, dropped when Metal frees the buffer.
type HostOwner = Box<dyn Any + Send>;

/// The Metal backend: the Apple GPUs `MTLCopyAllDevices` lists.
pub struct MetalBackend;

/// The Metal backend, as the registry lists it.
pub static BACKEND: MetalBackend = MetalBackend;

impl Backend for MetalBackend {
    fn kind(&self) -> &'static str {
        "metal"
    }

    fn device_count(&self) -> usize {
        device_count()
    }

    fn open(&self, index: usize) -> Result<Arc<dyn Runtime>> {
        Ok(runtime(index)?)
    }
}

/// An Apple GPU as an ingot device.
pub struct MetalRuntime {
    inner: Arc<MetalInner>,
    kernels: OnceLock<Arc<MetalKernels>>,
}

/// The runtime of Metal device `index`, opened on first use and shared afterwards.
pub fn runtime(index: usize) -> Result<Arc<MetalRuntime>> {
    static RUNTIMES: OnceLock<Mutex<HashMap<usize, Arc<MetalRuntime>>>> = OnceLock::new();
    let mut map = RUNTIMES
        .get_or_init(|| Mutex::new(HashMap::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some(rt) = map.get(&index) {
        return Ok(rt.clone());
    }
    let rt = Arc::new(MetalRuntime {
        inner: Arc::new(MetalInner::open(index)?),
        kernels: OnceLock::new(),
    });
    map.insert(index, rt.clone());
    Ok(rt)
}

fn metal_memory<'a>(buf: &'a Buffer, what: &str) -> Result<&'a MetalMemory> {
    buf.expect_memory::<MetalMemory>(what, "metal")
}

impl MetalRuntime {
    /// The device's kernel engine, as its concrete type.
    pub fn kernel_engine(&self) -> Arc<MetalKernels> {
        self.kernels
            .get_or_init(|| Arc::new(MetalKernels::new(self.inner.clone())))
            .clone()
    }

    /// The state shared with buffers and kernels.
    pub fn inner(&self) -> &Arc<MetalInner> {
        &self.inner
    }

    /// Device properties.
    pub fn properties(&self) -> &MetalProperties {
        self.inner.properties()
    }

    /// Wraps host memory as a Metal buffer without copying (`newBufferWithBytesNoCopy`).
    ///
    /// Returns `Ok(None)` when the memory cannot be wrapped (the address is not page-aligned,
    /// the length is zero or not a multiple of [`page_size`], or Metal refuses it): the caller
    /// then copies. `owner` keeps the memory alive; it is dropped when Metal frees the buffer,
    /// possibly on another thread and only after the last command buffer using it completed.
    ///
    /// # Safety
    ///
    /// `ptr..ptr + nbytes` must be valid host memory that stays allocated while `owner` lives and
    /// that nothing else frees; when `writable`, nothing else may access it while kernels write it.
    pub unsafe fn wrap_host(
        &self,
        ptr: *mut u8,
        nbytes: usize,
        owner: Box<dyn Any + Send>,
        writable: bool,
    ) -> Result<Option<Buffer>> {
        let page = page_size();
        let Some(nn) = NonNull::new(ptr as *mut c_void) else {
            return Ok(None);
        };
        if nbytes == 0 || !(ptr as usize).is_multiple_of(page) || !nbytes.is_multiple_of(page) {
            return Ok(None);
        }
        let slot: Mutex<Option<HostOwner>> = Mutex::new(Some(owner));
        let dealloc = RcBlock::new(move |_p: NonNull<c_void>, _n: usize| {
            let owner = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
            drop(owner);
        });
        let options = MTLResourceOptions::StorageModeShared
            | MTLResourceOptions::CPUCacheModeDefaultCache
            | MTLResourceOptions::HazardTrackingModeTracked;
        // SAFETY: the caller guarantees the range is valid while `owner` lives; the deallocator
        // block (copied by Metal) owns `owner` and drops it when the buffer is freed. The block
        // only drops a `Send` value, so it may run on any thread.
        let buffer = autoreleasepool(|_| unsafe {
            self.inner
                .device()
                .newBufferWithBytesNoCopy_length_options_deallocator(
                    nn,
                    nbytes,
                    options,
                    Some(&dealloc),
                )
        });
        let Some(buffer) = buffer else {
            return Ok(None);
        };
        let mem = MetalMemory::wrapped(self.inner.clone(), PooledBuffer(buffer), nbytes);
        Ok(Some(Buffer::new(mem, nbytes, self.device(), writable)))
    }
}

impl Runtime for MetalRuntime {
    fn device(&self) -> Device {
        Device::Metal(self.inner.index())
    }

    fn name(&self) -> String {
        self.inner.properties().name.clone()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        let (buffer, class) = self.inner.allocate_block(nbytes)?;
        let mem = MetalMemory::pooled(self.inner.clone(), buffer, class, nbytes);
        Ok(Buffer::new(mem, nbytes, self.device(), true))
    }

    fn copy_from_host(&self, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()> {
        dst.check_range(dst_offset, src.len(), "copy_from_host")?;
        if src.is_empty() {
            return Ok(());
        }
        let m = metal_memory(dst, "copy_from_host")?;
        // Queued kernels may still read or write this memory (a pooled block reused).
        self.inner.synchronize()?;
        // SAFETY: the range was checked against the buffer, whose shared contents are host
        // memory of at least `dst.nbytes()` bytes; no GPU work is queued.
        unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), m.contents().add(dst_offset), src.len());
        }
        Ok(())
    }

    fn copy_to_host(&self, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        src.check_range(src_offset, dst.len(), "copy_to_host")?;
        if dst.is_empty() {
            return Ok(());
        }
        let m = metal_memory(src, "copy_to_host")?;
        self.inner.synchronize()?;
        // SAFETY: the range was checked; every queued write has completed.
        unsafe {
            std::ptr::copy_nonoverlapping(
                m.contents().add(src_offset),
                dst.as_mut_ptr(),
                dst.len(),
            );
        }
        Ok(())
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
            metal_memory(src, "copy_within")?,
            metal_memory(dst, "copy_within")?,
        );
        let same = std::ptr::eq(s.mtl_buffer(), d.mtl_buffer());
        let overlap = same && src_offset < dst_offset + nbytes && dst_offset < src_offset + nbytes;
        if overlap {
            // A blit between overlapping ranges is undefined: move on the host after waiting.
            self.inner.synchronize()?;
            // SAFETY: both ranges were checked; no GPU work is queued; `copy` allows overlap.
            unsafe {
                std::ptr::copy(
                    s.contents().add(src_offset),
                    d.contents().add(dst_offset),
                    nbytes,
                );
            }
            return Ok(());
        }
        self.inner.encode_blit("copy", |blit| {
            // SAFETY: both ranges lie inside their buffers (checked above) and do not overlap.
            unsafe {
                blit.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size(
                    s.mtl_buffer(),
                    src_offset,
                    d.mtl_buffer(),
                    dst_offset,
                    nbytes,
                )
            }
        })
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    fn memory_info(&self) -> MemoryInfo {
        let stats = self.inner.pool().stats();
        let total = self.inner.properties().recommended_working_set_size as usize;
        let allocated = self.inner.device().currentAllocatedSize();
        MemoryInfo {
            used: stats.used,
            pool: stats.pooled,
            free: total.saturating_sub(allocated),
            total,
            peak: stats.peak,
            buffers: stats.live,
        }
    }

    fn empty_cache(&self) {
        // Pooled buffers may still be referenced by queued command buffers; Metal keeps them
        // alive until those complete, so dropping our references needs no wait.
        let _ = self.inner.pool().release_cached();
    }

    fn kernels(&self) -> Result<Arc<dyn KernelBackend>> {
        Ok(self.kernel_engine())
    }

    fn check_dtype(&self, dtype: DType) -> Result<()> {
        check_dtype(dtype)
    }
}
