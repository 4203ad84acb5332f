//! A caching allocator for device memory.
//!
//! `cuMemAlloc`/`cuMemFree` synchronise the device and cost tens of microseconds, so freed
//! blocks go to a free list keyed by size class and are handed out again without a driver call.
//! All work runs on one stream per device, so a block freed while a queued kernel still reads it
//! can be reused safely: whatever uses it next is queued after that kernel.

use std::collections::HashMap;
use std::sync::Mutex;

use cudarc::driver::{result, sys};

use super::driver::{check, describe};
use crate::error::{Error, Result};

pub use crate::runtime::size_class;

#[derive(Default)]
struct State {
    free: HashMap<usize, Vec<sys::CUdeviceptr>>,
    pooled: usize,
    used: usize,
    peak: usize,
    live: usize,
}

/// The free lists and counters of one device.
#[derive(Default)]
pub struct Pool {
    state: Mutex<State>,
}

/// Bytes counted by the pool.
pub struct PoolStats {
    pub used: usize,
    pub pooled: usize,
    pub peak: usize,
    pub live: usize,
}

impl Pool {
    /// A block of at least `nbytes` (`class` bytes really), reused or freshly allocated.
    /// The device's context must be current.
    pub fn allocate(&self, nbytes: usize) -> Result<(sys::CUdeviceptr, usize)> {
        let class = size_class(nbytes);
        {
            let mut s = self.lock();
            if let Some(ptr) = s.free.get_mut(&class).and_then(|v| v.pop()) {
                s.pooled -= class;
                s.used += class;
                s.live += 1;
                s.peak = s.peak.max(s.used);
                return Ok((ptr, class));
            }
        }
        // SAFETY: the caller made the device's context current.
        let ptr = match unsafe { result::malloc_sync(class) } {
            Ok(p) => p,
            Err(e) if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => {
                // Give cached blocks back to the driver and try once more.
                self.release_cached()?;
                unsafe { result::malloc_sync(class) }.map_err(|e2| {
                    if e2.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
                        Error::OutOfMemory {
                            bytes: nbytes,
                            device: "cuda".into(),
                        }
                    } else {
                        Error::Device(format!("cuMemAlloc({class}): {}", describe(e2)))
                    }
                })?
            }
            Err(e) => {
                return Err(Error::Device(format!(
                    "cuMemAlloc({class}): {}",
                    describe(e)
                )))
            }
        };
        let mut s = self.lock();
        s.used += class;
        s.live += 1;
        s.peak = s.peak.max(s.used);
        Ok((ptr, class))
    }

    /// Returns a block to its free list.
    pub fn release(&self, ptr: sys::CUdeviceptr, class: usize) {
        let mut s = self.lock();
        s.used -= class;
        s.live -= 1;
        s.pooled += class;
        s.free.entry(class).or_default().push(ptr);
    }

    /// Frees every cached block with the driver. The device's context must be current.
    pub fn release_cached(&self) -> Result<()> {
        let blocks: Vec<(usize, Vec<sys::CUdeviceptr>)> = {
            let mut s = self.lock();
            s.pooled = 0;
            s.free.drain().collect()
        };
        for (_, ptrs) in blocks {
            for p in ptrs {
                // SAFETY: each pointer came from malloc_sync and is owned by no array.
                check(unsafe { result::free_sync(p) }, "cuMemFree")?;
            }
        }
        Ok(())
    }

    /// Current counters.
    pub fn stats(&self) -> PoolStats {
        let s = self.lock();
        PoolStats {
            used: s.used,
            pooled: s.pooled,
            peak: s.peak,
            live: s.live,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn classes_round_up_with_bounded_waste() {
        assert_eq!(size_class(0), 512);
        assert_eq!(size_class(1), 512);
        assert_eq!(size_class(4096), 4096);
        assert_eq!(size_class(4097), 5120);
        for n in [5000usize, 1 << 20, (1 << 20) + 1, 123_456_789] {
            let c = size_class(n);
            assert!(c >= n && (c - n) * 4 <= n, "{n} -> {c}");
            assert_eq!(size_class(c), c);
        }
    }
}
