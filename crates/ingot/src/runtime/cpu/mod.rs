//! The CPU runtime: host memory, and (in `kernel`) MSL kernels compiled by the system C++ compiler.

pub(crate) mod compiler;
pub mod kernel;
mod memory;

pub use memory::{cached_bytes, release_cached, CpuMemory};

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::{Buffer, MemoryInfo, Runtime, Storage};

/// Byte counters shared by every CPU buffer.
#[derive(Default)]
pub(crate) struct Counters {
    pub used: AtomicUsize,
    pub peak: AtomicUsize,
    pub buffers: AtomicUsize,
}

impl Counters {
    pub(crate) fn add(&self, n: usize) {
        let now = self.used.fetch_add(n, Ordering::Relaxed) + n;
        self.peak.fetch_max(now, Ordering::Relaxed);
        self.buffers.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn sub(&self, n: usize) {
        self.used.fetch_sub(n, Ordering::Relaxed);
        self.buffers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The host CPU as a device.
pub struct CpuRuntime {
    counters: Arc<Counters>,
}

impl CpuRuntime {
    /// Creates the CPU runtime (cheap; the registry keeps one).
    pub fn new() -> CpuRuntime {
        CpuRuntime {
            counters: Arc::new(Counters::default()),
        }
    }
}

impl Default for CpuRuntime {
    fn default() -> Self {
        Self::new()
    }
}

fn host_slice(buf: &Buffer, offset: usize, len: usize, what: &str) -> Result<*mut u8> {
    buf.check_range(offset, len, what)?;
    match buf.storage() {
        Storage::Cpu(m) => Ok(unsafe { m.as_ptr().add(offset) }),
        #[allow(unreachable_patterns)]
        _ => Err(Error::DeviceMismatch(format!(
            "{what}: buffer on {} given to the cpu runtime",
            buf.device()
        ))),
    }
}

impl Runtime for CpuRuntime {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn name(&self) -> String {
        cpu_model_name()
    }

    fn allocate(&self, nbytes: usize) -> Result<Buffer> {
        let mem = CpuMemory::allocate(nbytes, self.counters.clone())?;
        Ok(Buffer::new(Storage::Cpu(mem), nbytes, Device::Cpu, true))
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
        MemoryInfo {
            used: self.counters.used.load(Ordering::Relaxed),
            pool: memory::cached_bytes(),
            free,
            total,
            peak: self.counters.peak.load(Ordering::Relaxed),
            buffers: self.counters.buffers.load(Ordering::Relaxed),
        }
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
