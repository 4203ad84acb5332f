//! Host memory: 64-byte aligned allocations, and foreign memory (a NumPy array) kept alive by an owner.

use std::alloc::{alloc, dealloc, Layout as AllocLayout};
use std::any::Any;
use std::ptr::NonNull;
use std::sync::Arc;

use super::Counters;
use crate::error::{Error, Result};

/// Alignment of every ingot host allocation (a cache line, and enough for any SIMD load).
pub const HOST_ALIGN: usize = 64;

enum Owner {
    Heap(Arc<Counters>),
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
    pub(crate) fn allocate(nbytes: usize, counters: Arc<Counters>) -> Result<CpuMemory> {
        let ptr = if nbytes == 0 {
            // A dangling but aligned pointer: never dereferenced for zero bytes.
            NonNull::new(HOST_ALIGN as *mut u8).expect("non-zero")
        } else {
            let layout = AllocLayout::from_size_align(nbytes, HOST_ALIGN).map_err(|_| {
                Error::OutOfMemory {
                    bytes: nbytes,
                    device: "cpu".into(),
                }
            })?;
            // SAFETY: the layout has a non-zero size.
            let p = unsafe { alloc(layout) };
            NonNull::new(p).ok_or(Error::OutOfMemory {
                bytes: nbytes,
                device: "cpu".into(),
            })?
        };
        counters.add(nbytes);
        Ok(CpuMemory {
            ptr,
            nbytes,
            owner: Owner::Heap(counters),
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
        if let Owner::Heap(counters) = &self.owner {
            counters.sub(self.nbytes);
            if self.nbytes != 0 {
                let layout = AllocLayout::from_size_align(self.nbytes, HOST_ALIGN)
                    .expect("layout was valid at allocation");
                // SAFETY: allocated in `allocate` with this layout.
                unsafe { dealloc(self.ptr.as_ptr(), layout) };
            }
        }
    }
}
