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
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, OnceLock};

use super::Counters;
use crate::error::{Error, Result};
use crate::runtime::size_class;

/// Alignment of every ingot host allocation (a cache line, and enough for any SIMD load).
pub const HOST_ALIGN: usize = 64;

/// Blocks at least this large are cached when freed.
const CACHE_MIN: usize = 1 << 20;
/// The most bytes the cache holds.
const CACHE_MAX: usize = 1 << 30;

enum Owner {
    Heap {
        counters: Arc<Counters>,
        class: usize,
    },
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

struct Block(NonNull<u8>);
// SAFETY: a cached block is owned by the cache alone.
unsafe impl Send for Block {}

#[derive(Default)]
struct Cache {
    free: HashMap<usize, Vec<Block>>,
    bytes: usize,
}

fn cache() -> &'static Mutex<Cache> {
    static C: OnceLock<Mutex<Cache>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(Cache::default()))
}

fn lock() -> std::sync::MutexGuard<'static, Cache> {
    cache().lock().unwrap_or_else(|p| p.into_inner())
}

fn layout_of(class: usize) -> Option<AllocLayout> {
    AllocLayout::from_size_align(class, HOST_ALIGN).ok()
}

fn fresh(class: usize) -> Option<NonNull<u8>> {
    let layout = layout_of(class)?;
    // SAFETY: the layout has a non-zero size.
    NonNull::new(unsafe { alloc(layout) })
}

/// Bytes held in the cache of freed blocks.
pub fn cached_bytes() -> usize {
    lock().bytes
}

/// Gives every cached block back to the system allocator.
pub fn release_cached() {
    let blocks: Vec<(usize, Vec<Block>)> = {
        let mut c = lock();
        c.bytes = 0;
        c.free.drain().collect()
    };
    for (class, list) in blocks {
        let layout = layout_of(class).expect("cached blocks have valid layouts");
        for b in list {
            // SAFETY: allocated by `fresh` with this layout, owned by no array.
            unsafe { dealloc(b.0.as_ptr(), layout) };
        }
    }
}

impl CpuMemory {
    pub(crate) fn allocate(nbytes: usize, counters: Arc<Counters>) -> Result<CpuMemory> {
        let oom = || Error::OutOfMemory {
            bytes: nbytes,
            device: "cpu".into(),
        };
        let (ptr, class) = if nbytes == 0 {
            // A dangling but aligned pointer: never dereferenced for zero bytes.
            (NonNull::new(HOST_ALIGN as *mut u8).expect("non-zero"), 0)
        } else if nbytes >= CACHE_MIN {
            let class = size_class(nbytes);
            let reused = {
                let mut c = lock();
                let hit = c.free.get_mut(&class).and_then(|v| v.pop());
                if hit.is_some() {
                    c.bytes -= class;
                }
                hit
            };
            match reused {
                Some(b) => (b.0, class),
                None => match fresh(class) {
                    Some(p) => (p, class),
                    None => {
                        // Memory is short: return the cache to the system and try once more.
                        release_cached();
                        (fresh(class).ok_or_else(oom)?, class)
                    }
                },
            }
        } else {
            let layout = AllocLayout::from_size_align(nbytes, HOST_ALIGN).map_err(|_| oom())?;
            // SAFETY: the layout has a non-zero size.
            (
                NonNull::new(unsafe { alloc(layout) }).ok_or_else(oom)?,
                nbytes,
            )
        };
        counters.add(nbytes);
        Ok(CpuMemory {
            ptr,
            nbytes,
            owner: Owner::Heap { counters, class },
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
        let ptr =
            NonNull::new(ptr).unwrap_or(NonNull::new(HOST_ALIGN as *mut u8).expect("non-zero"));
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

impl Drop for CpuMemory {
    fn drop(&mut self) {
        let Owner::Heap { counters, class } = &self.owner else {
            return;
        };
        counters.sub(self.nbytes);
        let class = *class;
        if self.nbytes == 0 {
            return;
        }
        if self.nbytes >= CACHE_MIN {
            let mut c = lock();
            if c.bytes + class <= CACHE_MAX {
                c.bytes += class;
                c.free.entry(class).or_default().push(Block(self.ptr));
                return;
            }
            drop(c);
            let layout = layout_of(class).expect("layout was valid at allocation");
            // SAFETY: allocated by `fresh` with this layout.
            unsafe { dealloc(self.ptr.as_ptr(), layout) };
            return;
        }
        let layout = AllocLayout::from_size_align(self.nbytes, HOST_ALIGN)
            .expect("layout was valid at allocation");
        // SAFETY: allocated in `allocate` with this layout.
        unsafe { dealloc(self.ptr.as_ptr(), layout) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_blocks_are_reused() {
        let counters = Arc::new(Counters::default());
        // An unusual size, so no concurrently running test uses the same class.
        let n = (13 << 20) + 12_345;
        let a = CpuMemory::allocate(n, counters.clone()).unwrap();
        let p = a.as_ptr();
        // SAFETY: the block is n bytes long.
        unsafe { std::ptr::write_bytes(p, 0x5a, n) };
        drop(a);
        let b = CpuMemory::allocate(n - 1000, counters.clone()).unwrap();
        assert_eq!(
            b.as_ptr(),
            p,
            "a freed block of the same class is handed out again"
        );
        let small = CpuMemory::allocate(100, counters).unwrap();
        assert_eq!(small.as_ptr() as usize % HOST_ALIGN, 0);
    }
}
