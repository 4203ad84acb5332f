//! Host memory: aligned allocations with a cache of large blocks, and foreign memory (a NumPy
//! array) kept alive by an owner.
//!
//! Why a cache: a fresh multi-megabyte allocation comes from `mmap`, and every one of its pages
//! faults on first touch; for a memory-bound op such as `a + b` on 1e7 floats the faults cost
//! more than the arithmetic. Freed blocks of 1 MiB and more are kept, by size class, up to a
//! bound, and handed out again without a system call.
//!
//! No transparent huge pages: on the 2-core VM of our CI (AMD EPYC, Linux 6.18), a reused
//! THP-backed output made `a + b` slower, not faster (1e6 float32: 109 us with THP, 93 us
//! without; NumPy writing into a THP buffer: 131 us vs 123 us), and with the cache only the
//! first use of a block pays for faults.

use std::alloc::{alloc, dealloc, Layout as AllocLayout};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::runtime::memory::DeviceMemory;
use crate::runtime::pool::{BlockSource, Pool, PoolPolicy, PoolStats, SizeClasses};

/// Alignment of every ingot host allocation (a cache line, and enough for any SIMD load).
pub const HOST_ALIGN: usize = 64;

/// Blocks at least this large are cached when freed.
const CACHE_MIN: usize = 1 << 20;
/// The most bytes the cache holds.
const CACHE_MAX: usize = 1 << 30;

/// A host block from the allocator.
struct HostBlock(NonNull<u8>);
// SAFETY: a block is owned by one array or by the pool alone.
unsafe impl Send for HostBlock {}

/// Aligned blocks from the global allocator (a dangling aligned pointer for zero bytes).
struct HostBlocks;

fn zero_sized() -> NonNull<u8> {
    NonNull::new(HOST_ALIGN as *mut u8).expect("non-zero")
}

impl BlockSource for HostBlocks {
    type Block = HostBlock;

    fn create(&self, bytes: usize) -> Result<HostBlock> {
        if bytes == 0 {
            return Ok(HostBlock(zero_sized()));
        }
        let oom = || Error::OutOfMemory {
            bytes,
            device: "cpu".into(),
        };
        let layout = AllocLayout::from_size_align(bytes, HOST_ALIGN).map_err(|_| oom())?;
        // SAFETY: the layout has a non-zero size.
        NonNull::new(unsafe { alloc(layout) })
            .map(HostBlock)
            .ok_or_else(oom)
    }

    fn destroy(&self, block: HostBlock, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let layout = AllocLayout::from_size_align(bytes, HOST_ALIGN)
            .expect("the layout was valid at allocation");
        // SAFETY: allocated by `create` with this layout, owned by no array.
        unsafe { dealloc(block.0.as_ptr(), layout) };
        Ok(())
    }
}

/// The process's host memory pool.
fn pool() -> &'static Pool<HostBlocks> {
    static P: OnceLock<Pool<HostBlocks>> = OnceLock::new();
    P.get_or_init(|| {
        Pool::new(
            HostBlocks,
            PoolPolicy {
                classes: SizeClasses {
                    granule: 512,
                    linear_until: 4096,
                },
                cache_min: CACHE_MIN,
                cache_max: CACHE_MAX,
                max_block: usize::MAX,
            },
        )
    })
}

/// Counters of the host memory pool.
pub fn pool_stats() -> PoolStats {
    pool().stats()
}

/// Gives every cached block back to the system allocator.
pub fn release_cached() {
    // Freeing host memory cannot fail.
    let _ = pool().release_cached();
}

enum Owner {
    /// From the pool, with the size it gave.
    Pool(usize),
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

/// A block of host memory.
pub struct CpuMemory {
    ptr: NonNull<u8>,
    nbytes: usize,
    owner: Owner,
}

// SAFETY: the memory is plain bytes with no thread affinity; synchronisation of accesses is the
// caller's concern, as for any array library that hands out raw buffers.
unsafe impl Send for CpuMemory {}
unsafe impl Sync for CpuMemory {}

impl CpuMemory {
    pub(crate) fn allocate(nbytes: usize) -> Result<CpuMemory> {
        let (block, size) = pool().allocate(nbytes)?;
        Ok(CpuMemory {
            ptr: block.0,
            nbytes,
            owner: Owner::Pool(size),
        })
    }

    /// Wraps memory owned by someone else (for example a NumPy array) without copying.
    ///
    /// # Safety
    /// `ptr` must point to `nbytes` bytes that stay valid while `owner` is alive.
    pub unsafe fn foreign(
        ptr: *mut u8,
        nbytes: usize,
        owner: Box<dyn Any + Send + Sync>,
    ) -> CpuMemory {
        let ptr = NonNull::new(ptr).unwrap_or(zero_sized());
        CpuMemory {
            ptr,
            nbytes,
            owner: Owner::Foreign(owner),
        }
    }

    /// The start of the memory.
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Size in bytes.
    pub fn nbytes(&self) -> usize {
        self.nbytes
    }
}

impl DeviceMemory for CpuMemory {
    fn host_ptr(&self) -> Option<*mut u8> {
        Some(self.ptr.as_ptr())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for CpuMemory {
    fn drop(&mut self) {
        if let Owner::Pool(size) = self.owner {
            pool().release(HostBlock(self.ptr), size);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_reused() {
        // An unusual size, so no concurrently running test uses the same class.
        let n = (13 << 20) + 12_345;
        let a = CpuMemory::allocate(n).unwrap();
        let p = a.as_ptr();
        // SAFETY: the block is n bytes long.
        unsafe { std::ptr::write_bytes(p, 0x5a, n) };
        drop(a);
        let b = CpuMemory::allocate(n - 1000).unwrap();
        assert_eq!(
            b.as_ptr(),
            p,
            "a freed block of the same class is handed out again"
        );
        let small = CpuMemory::allocate(100).unwrap();
        assert_eq!(small.as_ptr() as usize % HOST_ALIGN, 0);
    }
}
