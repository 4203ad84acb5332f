//! Host memory: aligned allocations with a cache of large blocks, and foreign memory (a NumPy
//! array) kept alive by an owner.
//!
//! Why a cache: a fresh multi-megabyte allocation comes from `mmap`, and every one of its pages
//! faults on first touch; for a memory-bound op such as `a + b` on 1e7 floats the faults cost
//! more than the arithmetic. Freed blocks are kept, by size class, up to a bound, and handed
//! out again without a system call. Small blocks are cached too: a 64-byte-aligned `malloc` of a
//! few kilobytes splits and later consolidates heap chunks, and on a warm call of a small
//! generated kernel (`ingot.fuse`) those two cost more than the kernel (perf: 25% of the call).
//!
//! Guard pages: blocks of [`GUARD_MIN`] bytes and more are mapped with an inaccessible page
//! right after them, and an array's bytes are placed at the end of its block (64-byte aligned),
//! so a kernel that runs past the end of a large buffer faults on the guard page (the kernel
//! engine turns that into `KernelFaultError`) instead of corrupting the neighbouring memory.
//! Smaller buffers get the same protection from the kernel engine's guarded scratch copies.
//! Blocks from [`GUARD_MIN`] up are cached, so a guarded block costs its system calls once.
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

/// Blocks at least this large are mapped with a guard page behind them.
pub const GUARD_MIN: usize = 64 << 10;
/// Blocks at least this large are cached when freed: all but empty ones.
const CACHE_MIN: usize = 1;
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
        // More than the machine's memory and swap can never be used: refuse it now, rather
        // than let an overcommitting system hand out address space that faults later.
        if host_limit().is_some_and(|l| bytes > l) {
            return Err(oom());
        }
        #[cfg(unix)]
        if bytes >= GUARD_MIN {
            return guarded::map(bytes).map(HostBlock).ok_or_else(oom);
        }
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
        #[cfg(unix)]
        if bytes >= GUARD_MIN {
            // SAFETY: mapped by `guarded::map(bytes)`, owned by no array.
            unsafe { guarded::unmap(block.0, bytes) };
            return Ok(());
        }
        let layout = AllocLayout::from_size_align(bytes, HOST_ALIGN)
            .expect("the layout was valid at allocation");
        // SAFETY: allocated by `create` with this layout, owned by no array.
        unsafe { dealloc(block.0.as_ptr(), layout) };
        Ok(())
    }
}

/// Physical memory plus swap in bytes (from /proc/meminfo; None where unknown).
fn host_limit() -> Option<usize> {
    static L: OnceLock<Option<usize>> = OnceLock::new();
    *L.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let field = |name: &str| -> Option<usize> {
            text.lines()
                .find(|l| l.starts_with(name))?
                .split_whitespace()
                .nth(1)?
                .parse::<usize>()
                .ok()
                .map(|kb| kb.saturating_mul(1024))
        };
        let total = field("MemTotal:")?.saturating_add(field("SwapTotal:").unwrap_or(0));
        (total > 0).then_some(total)
    })
}

/// Blocks whose end touches an inaccessible page.
#[cfg(unix)]
mod guarded {
    use std::ptr::NonNull;

    pub(super) fn page() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            p as usize
        } else {
            4096
        }
    }

    /// The mapping of a block of `bytes`: (start, length, offset of the block in it).
    fn layout(bytes: usize) -> Option<(usize, usize)> {
        let pg = page();
        let body = bytes.checked_next_multiple_of(pg)?;
        Some((body.checked_add(pg)?, body - bytes))
    }

    /// Maps `bytes` (a multiple of 64) followed by a guard page; None when out of memory.
    pub(super) fn map(bytes: usize) -> Option<NonNull<u8>> {
        let (len, lead) = layout(bytes)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let base = p as *mut u8;
        // SAFETY: the last page belongs to the mapping just made.
        let guard = unsafe { base.add(len - page()) };
        // SAFETY: as above; on failure the block simply has no guard.
        unsafe { libc::mprotect(guard as *mut libc::c_void, page(), libc::PROT_NONE) };
        // SAFETY: `lead` < len.
        NonNull::new(unsafe { base.add(lead) })
    }

    /// Unmaps a block from [`map`].
    ///
    /// # Safety
    /// `block` came from `map(bytes)` and is no longer used.
    pub(super) unsafe fn unmap(block: NonNull<u8>, bytes: usize) {
        if let Some((len, lead)) = layout(bytes) {
            libc::munmap(block.as_ptr().sub(lead) as *mut libc::c_void, len);
        }
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
                    // Classes of 64 bytes up to 1 KiB, so a scalar takes 64 bytes, not 512.
                    granule: HOST_ALIGN,
                    linear_until: 1024,
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
    /// From the pool, with the size it gave and the offset of the bytes in the block.
    Pool(usize, usize),
    Foreign(#[allow(dead_code)] Box<dyn Any + Send + Sync>),
}

/// A block of host memory.
pub struct CpuMemory {
    ptr: NonNull<u8>,
    nbytes: usize,
    owner: Owner,
    /// Where the inaccessible page behind the bytes starts (guarded blocks only).
    guard: Option<NonNull<u8>>,
}

// SAFETY: the memory is plain bytes with no thread affinity; synchronisation of accesses is the
// caller's concern, as for any array library that hands out raw buffers.
unsafe impl Send for CpuMemory {}
unsafe impl Sync for CpuMemory {}

impl CpuMemory {
    pub(crate) fn allocate(nbytes: usize) -> Result<CpuMemory> {
        let (block, size) = pool().allocate(nbytes)?;
        if cfg!(unix) && size >= GUARD_MIN {
            // The bytes end at the guard page (to within 64 bytes, for alignment).
            let lead = size - nbytes.next_multiple_of(HOST_ALIGN);
            // SAFETY: lead + nbytes <= size, inside the block.
            let ptr = unsafe { NonNull::new_unchecked(block.0.as_ptr().add(lead)) };
            // SAFETY: one past the block: the guard page's first byte.
            let guard = unsafe { NonNull::new_unchecked(block.0.as_ptr().add(size)) };
            return Ok(CpuMemory {
                ptr,
                nbytes,
                owner: Owner::Pool(size, lead),
                guard: Some(guard),
            });
        }
        Ok(CpuMemory {
            ptr: block.0,
            nbytes,
            owner: Owner::Pool(size, 0),
            guard: None,
        })
    }

    /// The first byte of the inaccessible page right behind this memory's bytes (rounded up
    /// to 64), when it has one.
    pub fn guard_page(&self) -> Option<*const u8> {
        self.guard.map(|g| g.as_ptr() as *const u8)
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
            guard: None,
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
        if let Owner::Pool(size, lead) = self.owner {
            // SAFETY: `ptr - lead` is the block's start.
            let block = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().sub(lead)) };
            pool().release(HostBlock(block), size);
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
        // The bytes sit at the end of the block, against the guard page.
        let end = |m: *mut u8, k: usize| m as usize + k.next_multiple_of(HOST_ALIGN);
        assert_eq!(
            end(b.as_ptr(), n - 1000),
            end(p, n),
            "a freed block of the same class is handed out again"
        );
        assert_eq!(b.guard_page().map(|g| g as usize), Some(end(p, n)));
        let small = CpuMemory::allocate(100).unwrap();
        assert_eq!(small.as_ptr() as usize % HOST_ALIGN, 0);
    }
}
