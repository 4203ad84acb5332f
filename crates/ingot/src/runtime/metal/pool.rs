//! Metal buffers for the shared caching pool (`runtime/pool.rs`).
//!
//! `newBufferWithLength:options:` maps fresh pages and costs far more than a free-list lookup, so
//! freed buffers go back to the pool and are handed out again. Reuse is safe because every GPU
//! use of a buffer is ordered on the device's single command queue, and every host access
//! (`copy_from_host`, `copy_to_host`, `host_ptr` after a synchronisation) waits for the queued
//! work first (see the module documentation of `runtime::metal`).

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_metal::{MTLBuffer, MTLDevice, MTLResourceOptions};

use super::device::MtlDevice;
use crate::error::{Error, Result};
use crate::runtime::pool::{BlockSource, PoolPolicy, SizeClasses};

/// A retained `MTLBuffer` that may move between threads.
pub(crate) struct PooledBuffer(pub(crate) Retained<ProtocolObject<dyn MTLBuffer>>);

// SAFETY: Metal resources are thread-safe to reference and release from any thread (Apple's
// "Metal Programming Guide: Transient and Non-transient Objects"); the pool only stores them and
// never touches their contents.
unsafe impl Send for PooledBuffer {}

/// Shared-storage buffers of one device.
pub(crate) struct MetalBlocks {
    pub(crate) device: MtlDevice,
}

// SAFETY: an MTLDevice is a thread-safe Metal object (`Send + Sync` in objc2-metal).
unsafe impl Send for MetalBlocks {}
// SAFETY: as above.
unsafe impl Sync for MetalBlocks {}

impl MetalBlocks {
    /// A new shared, hazard-tracked buffer of `nbytes`, or `None` when Metal has no memory.
    pub(crate) fn new_shared(
        &self,
        nbytes: usize,
    ) -> Option<Retained<ProtocolObject<dyn MTLBuffer>>> {
        let options = MTLResourceOptions::StorageModeShared
            | MTLResourceOptions::CPUCacheModeDefaultCache
            | MTLResourceOptions::HazardTrackingModeTracked;
        autoreleasepool(|_| self.device.newBufferWithLength_options(nbytes, options))
    }
}

impl BlockSource for MetalBlocks {
    type Block = PooledBuffer;

    fn create(&self, bytes: usize) -> Result<PooledBuffer> {
        self.new_shared(bytes)
            .map(PooledBuffer)
            .ok_or_else(|| Error::OutOfMemory {
                bytes,
                device: "metal".into(),
            })
    }

    fn destroy(&self, block: PooledBuffer, _bytes: usize) -> Result<()> {
        // Metal frees the memory once no command buffer uses it.
        drop(block);
        Ok(())
    }
}

/// The pool policy of a Metal device whose largest buffer is `max_buffer_length`: 4 KiB
/// granules up to 64 KiB (Metal allocates whole pages anyway), every freed buffer cached.
pub(crate) fn policy(max_buffer_length: usize) -> PoolPolicy {
    PoolPolicy {
        classes: SizeClasses {
            granule: 4096,
            linear_until: 64 * 1024,
        },
        cache_min: 0,
        cache_max: usize::MAX,
        max_block: max_buffer_length,
    }
}
