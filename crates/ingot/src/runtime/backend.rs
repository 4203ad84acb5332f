//! What a backend implements: [`Backend`] (how the registry counts and opens devices of one
//! kind) and [`Runtime`] (one open device: memory, copies, synchronisation, its kernel engine and
//! optional capabilities such as a BLAS and a dense solver).

use std::sync::Arc;

use super::gemm::Gemm;
use super::kernel::KernelBackend;
use super::memory::{Buffer, MemoryInfo};
use super::solver::Solver;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::Result;

/// One kind of device (`"cpu"`, `"cuda"`, `"metal"`): how many there are and how to open one.
/// Each backend folder defines one static value of a type implementing this; the registry
/// (`registry.rs`) lists them.
pub trait Backend: Sync {
    /// The kind's name, as in [`Device::kind`].
    fn kind(&self) -> &'static str;

    /// The devices of this kind present on this machine (0 when the driver is missing).
    fn device_count(&self) -> usize;

    /// Opens device `index` of this kind. Called once per device; the registry shares the
    /// result.
    fn open(&self, index: usize) -> Result<Arc<dyn Runtime>>;
}

/// One open device. Everything above the runtime layer (arrays, kernels, ops) talks to devices
/// only through this trait and [`Buffer`].
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

    /// Copies `nbytes` of `src` (a buffer of this device) from `src_offset` into `dst`, a buffer of
    /// another device, at `dst_offset`, without going through [`Array`](crate::Array) host
    /// copies: device to device (peer to peer where the hardware allows). Stream-ordered after
    /// the work queued on both devices, and before the work queued on `dst`'s device afterwards.
    /// `Ok(false)` when this runtime has no direct path to `dst`'s device: the caller then copies
    /// through the host.
    fn copy_to_peer(
        &self,
        src: &Buffer,
        src_offset: usize,
        dst: &Buffer,
        dst_offset: usize,
        nbytes: usize,
    ) -> Result<bool> {
        let _ = (src, src_offset, dst, dst_offset, nbytes);
        Ok(false)
    }

    /// Waits until all queued work has finished; reports the first device error since the last call.
    fn synchronize(&self) -> Result<()>;

    /// Memory statistics.
    fn memory_info(&self) -> MemoryInfo;

    /// Frees cached blocks the runtime holds for reuse.
    fn empty_cache(&self) {}

    /// The device's MSL kernel engine (compiles and launches kernels; the built-in ops of GPU
    /// devices run on it too).
    fn kernels(&self) -> Result<Arc<dyn KernelBackend>>;

    /// Whether arrays of `dtype` can live on this device (Metal GPUs have no float64). Array
    /// constructors call this before allocating.
    fn check_dtype(&self, dtype: DType) -> Result<()> {
        let _ = dtype;
        Ok(())
    }

    /// Runs a matrix product on the device's BLAS. `Ok(false)` when the device has none, or
    /// none for this dtype: the caller then uses another implementation.
    fn gemm(&self, gemm: &Gemm<'_>) -> Result<bool> {
        let _ = gemm;
        Ok(false)
    }

    /// Runs a dense factorization (LU, Cholesky, QR, eigh, SVD) on the device's solver library.
    /// `Ok(false)` when the device has none, or none for this job and dtype: the caller then
    /// computes on the host.
    fn solver(&self, job: &Solver<'_>) -> Result<bool> {
        let _ = job;
        Ok(false)
    }

    /// Runs a batch of 1-D FFTs on the device's FFT library (unscaled). `Ok(false)` when the
    /// device has none, or none for this job: the caller then transforms on the host.
    fn fft(&self, job: &crate::runtime::fft::FftJob<'_>) -> Result<bool> {
        let _ = job;
        Ok(false)
    }
}
