//! The CPU runtime: host memory, and (in `kernel`) MSL kernels compiled by the system C++ compiler.

pub(crate) mod compiler;
pub mod guard;
pub mod kernel;
mod memory;
mod pch;

pub use memory::{pool_stats, release_cached, CpuMemory};

use std::sync::Arc;

use crate::device::Device;
use crate::error::Result;
use crate::runtime::backend::{Backend, Runtime};
use crate::runtime::kernel::KernelBackend;
use crate::runtime::memory::{Buffer, MemoryInfo};

/// The CPU backend: one device.
pub struct CpuBackend;

/// The CPU backend, as the registry lists it.
pub static BACKEND: CpuBackend = CpuBackend;

impl Backend for CpuBackend {
    fn kind(&self) -> &'static str {
        "cpu"
    }

    fn device_count(&self) -> usize {
        1
    }

    fn open(&self, index: usize) -> Result<Arc<dyn Runtime>> {
        if index != 0 {
            return Err(crate::error::Error::DeviceUnavailable(format!(
                "cpu:{index}: there is only one cpu device"
            )));
        }
        Ok(Arc::new(CpuRuntime::new()))
    }
}

/// The host CPU as a device.
pub struct CpuRuntime;

impl CpuRuntime {
    /// Creates the CPU runtime (cheap; the registry keeps one).
    pub fn new() -> CpuRuntime {
        CpuRuntime
    }
}

impl Default for CpuRuntime {
    fn default() -> Self {
        Self::new()
    }
}

fn host_slice(buf: &Buffer, offset: usize, len: usize, what: &str) -> Result<*mut u8> {
    buf.check_range(offset, len, what)?;
    let m = buf.expect_memory::<CpuMemory>(what, "cpu")?;
    // SAFETY: the range was checked against the buffer.
    Ok(unsafe { m.as_ptr().add(offset) })
}

impl Runtime for CpuRuntime {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn name(&self) -> String {
        cpu_model_name()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        let mem = CpuMemory::allocate(nbytes)?;
        Ok(Buffer::new(mem, nbytes, Device::Cpu, true))
    }

    fn copy_from_host(&self, src: &[u8], dst: &Buffer, dst_offset: usize) -> Result<()> {
        let p = host_slice(dst, dst_offset, src.len(), "copy_from_host")?;
        // SAFETY: the range was checked against the buffer; `src` is a distinct host slice.
        unsafe { std::ptr::copy(src.as_ptr(), p, src.len()) };
        Ok(())
    }

    fn copy_to_host(&self, src: &Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        let p = host_slice(src, src_offset, dst.len(), "copy_to_host")?;
        // SAFETY: the range was checked against the buffer.
        unsafe { std::ptr::copy(p, dst.as_mut_ptr(), dst.len()) };
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
        let s = host_slice(src, src_offset, nbytes, "copy_within")?;
        let d = host_slice(dst, dst_offset, nbytes, "copy_within")?;
        // SAFETY: both ranges were checked; `copy` allows overlap.
        unsafe { std::ptr::copy(s, d, nbytes) };
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn empty_cache(&self) {
        memory::release_cached();
    }

    fn memory_info(&self) -> MemoryInfo {
        let (free, total) = host_memory();
        let s = memory::pool_stats();
        MemoryInfo {
            used: s.used,
            pool: s.pooled,
            free,
            total,
            peak: s.peak,
            buffers: s.live,
        }
    }

    fn kernels(&self) -> Result<Arc<dyn KernelBackend>> {
        Ok(kernel::CpuKernelBackend::shared())
    }
}

/// `(available, total)` host memory in bytes, from /proc/meminfo where it exists.
fn host_memory() -> (usize, usize) {
    let text = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |name: &str| -> usize {
        text.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("MemAvailable:"), field("MemTotal:"))
}

fn cpu_model_name() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split_once(':'))
        .map(|(_, v)| v.trim().to_string())
        .unwrap_or_else(|| format!("{} CPU", std::env::consts::ARCH))
}
