//! Metal memory: a shared `MTLBuffer` from the device's pool, or wrapping host memory.

use std::any::Any;
use std::sync::Arc;

use objc2::runtime::ProtocolObject;
use objc2_metal::MTLBuffer;

use super::context::MetalInner;
use super::pool::PooledBuffer;
use crate::error::Result;
use crate::runtime::memory::DeviceMemory;

/// Metal memory: a shared `MTLBuffer`, from the pool or wrapping host memory.
pub struct MetalMemory {
    buffer: Option<PooledBuffer>,
    /// Size class for pooled buffers; `None` for wrapped host memory.
    class: Option<usize>,
    nbytes: usize,
    inner: Arc<MetalInner>,
}

// SAFETY: an MTLBuffer is safe to reference from any thread; its contents are only accessed
// under the synchronisation rules of the module documentation.
unsafe impl Send for MetalMemory {}
// SAFETY: as above; `&MetalMemory` exposes only the buffer object and its address.
unsafe impl Sync for MetalMemory {}

impl MetalMemory {
    /// A pooled buffer of at least `nbytes` for a temporary use on the GPU (returned to the pool
    /// when dropped; later users are ordered after the queued work).
    pub(crate) fn temp(inner: &Arc<MetalInner>, nbytes: usize) -> Result<MetalMemory> {
        let (buffer, class) = inner.allocate_block(nbytes)?;
        Ok(MetalMemory::pooled(inner.clone(), buffer, class, nbytes))
    }

    /// A buffer from the pool of `inner` (of size `class`) for a request of `nbytes`.
    pub(crate) fn pooled(
        inner: Arc<MetalInner>,
        buffer: PooledBuffer,
        class: usize,
        nbytes: usize,
    ) -> MetalMemory {
        MetalMemory {
            buffer: Some(buffer),
            class: Some(class),
            nbytes,
            inner,
        }
    }

    /// Host memory wrapped as `buffer` (counted by the pool as foreign memory).
    pub(crate) fn wrapped(
        inner: Arc<MetalInner>,
        buffer: PooledBuffer,
        nbytes: usize,
    ) -> MetalMemory {
        inner.pool().note_foreign(nbytes);
        MetalMemory {
            buffer: Some(buffer),
            class: None,
            nbytes,
            inner,
        }
    }

    /// The Metal buffer.
    pub fn mtl_buffer(&self) -> &ProtocolObject<dyn MTLBuffer> {
        match &self.buffer {
            Some(b) => &b.0,
            // The buffer is only taken in Drop.
            None => unreachable!("MetalMemory used after drop"),
        }
    }

    /// The host address of the shared memory (`contents()`).
    pub fn contents(&self) -> *mut u8 {
        self.mtl_buffer().contents().as_ptr() as *mut u8
    }

    /// The runtime state of the device owning the memory.
    pub fn inner(&self) -> &Arc<MetalInner> {
        &self.inner
    }

    /// True when the memory is a wrapped host allocation (no copy was made).
    pub fn is_wrapped(&self) -> bool {
        self.class.is_none()
    }
}

impl DeviceMemory for MetalMemory {
    // Shared storage: valid host memory once queued GPU work is synchronised.
    fn host_ptr(&self) -> Option<*mut u8> {
        Some(self.contents())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Drop for MetalMemory {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            match self.class {
                Some(class) => self.inner.pool().release(b, class),
                None => {
                    self.inner.pool().forget_foreign(self.nbytes);
                    // Metal keeps the buffer alive while a command buffer uses it and calls the
                    // deallocator (which drops the host owner) when it is freed.
                    drop(b);
                }
            }
        }
    }
}
