//! The CUDA runtime: one primary context and one stream per device, a caching memory pool,
//! asynchronous copies and launches, and device errors reported at the next synchronisation.
//!
//! `context.rs` holds the device's context, stream and pool; `memory.rs` its buffers;
//! `kernel.rs` the kernel engine (NVRTC); `blas.rs` matrix products (cuBLAS); `solver.rs` dense
//! factorizations (cuSOLVER); `peer.rs` copies between two CUDA devices.

pub mod blas;
pub mod context;
mod driver;
pub mod fft;
pub mod kernel;
pub mod memory;
pub mod nvrtc;
pub mod peer;
pub mod solver;

pub use context::{CudaInner, CudaProperties};
pub use driver::{device_count, driver_present};
pub use memory::CudaMemory;
pub use peer::can_access_peer;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::result;

use self::driver::check;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::backend::{Backend, Runtime};
use crate::runtime::gemm::Gemm;
use crate::runtime::kernel::KernelBackend;
use crate::runtime::memory::{Buffer, MemoryInfo};
use crate::runtime::solver::Solver;

/// The CUDA backend: the NVIDIA GPUs the driver reports.
pub struct CudaBackend;

/// The CUDA backend, as the registry lists it.
pub static BACKEND: CudaBackend = CudaBackend;

impl Backend for CudaBackend {
    fn kind(&self) -> &'static str {
        "cuda"
    }

    fn device_count(&self) -> usize {
        device_count()
    }

    fn open(&self, index: usize) -> Result<Arc<dyn Runtime>> {
        Ok(runtime(index)?)
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
    let mem = CudaMemory::foreign(rt.inner.clone(), ptr, owner);
    Ok(Buffer::new(mem, nbytes, Device::Cuda(ordinal), writable))
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
    let rt = Arc::new(CudaRuntime {
        inner: Arc::new(CudaInner::open(ordinal)?),
        kernels: OnceLock::new(),
    });
    map.insert(ordinal, rt.clone());
    Ok(rt)
}

impl CudaRuntime {
    /// The state shared with buffers and kernels.
    pub fn inner(&self) -> &Arc<CudaInner> {
        &self.inner
    }
}

fn cuda_memory<'a>(buf: &'a Buffer, what: &str) -> Result<&'a CudaMemory> {
    buf.expect_memory::<CudaMemory>(what, "cuda")
}

impl Runtime for CudaRuntime {
    fn device(&self) -> Device {
        Device::Cuda(self.inner.ordinal())
    }

    fn name(&self) -> String {
        self.inner.properties().name.clone()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        self.inner.bind()?;
        let (ptr, class) = self.inner.pool().allocate(nbytes).map_err(|e| match e {
            Error::OutOfMemory { .. } => Error::OutOfMemory {
                bytes: nbytes,
                device: self.device().to_string(),
            },
            other => other,
        })?;
        let mem = CudaMemory::pooled(self.inner.clone(), ptr, class);
        Ok(Buffer::new(mem, nbytes, self.device(), true))
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
                result::memcpy_htod_async(
                    m.device_ptr() + dst_offset as u64,
                    src,
                    self.inner.stream(),
                ),
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
        if dst.len() <= context::STAGING_BYTES {
            return self
                .inner
                .read_small(m.device_ptr() + src_offset as u64, dst);
        }
        self.inner.bind()?;
        // SAFETY: the range was checked; we wait for the copy before returning.
        unsafe {
            result::memcpy_dtoh_async(dst, m.device_ptr() + src_offset as u64, self.inner.stream())
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
                    d.device_ptr() + dst_offset as u64,
                    s.device_ptr() + src_offset as u64,
                    nbytes,
                    self.inner.stream(),
                ),
                "cuMemcpyDtoDAsync",
            )
        }
    }

    fn copy_to_peer(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        nbytes: usize,
    ) -> Result<bool> {
        peer::copy_to_peer(&self.inner, src, src_offset, dst, dst_offset, nbytes)
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }

    fn memory_info(&self) -> MemoryInfo {
        let stats = self.inner.pool().stats();
        let (free, total) = if self.inner.bind().is_ok() {
            result::mem_get_info().unwrap_or((0, self.inner.properties().total_memory))
        } else {
            (0, self.inner.properties().total_memory)
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
            let _ = self.inner.pool().release_cached();
        }
    }

    fn kernels(&self) -> Result<Arc<dyn KernelBackend>> {
        Ok(self
            .kernels
            .get_or_init(|| Arc::new(kernel::CudaKernels::new(self.inner.clone())))
            .clone())
    }

    fn gemm(&self, gemm: &Gemm<'_>) -> Result<bool> {
        blas::gemm(&self.inner, gemm)
    }

    fn solver(&self, job: &Solver<'_>) -> Result<bool> {
        solver::run(self, &self.inner, job)
    }

    fn fft(&self, job: &crate::runtime::fft::FftJob<'_>) -> Result<bool> {
        fft::run(&self.inner, job)
    }
}
