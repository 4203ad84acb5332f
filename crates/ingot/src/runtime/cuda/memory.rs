//! Device memory of a CUDA runtime: a block from the device's pool (returned to it on drop), or
//! memory owned by another library kept alive by an owner.

use std::any::Any;
use std::sync::Arc;

use cudarc::driver::sys;

use super::context::CudaInner;
use crate::runtime::memory::DeviceMemory;

/// Device memory: a block from the pool (returned to it on drop), or memory owned by another
/// library (a PyTorch or CuPy tensor imported through DLPack) kept alive by `owner`.
pub struct CudaMemory {
    ptr: sys::CUdeviceptr,
    class: usize,
    inner: Arc<CudaInner>,
    owner: Option<Box<dyn Any + Send + Sync>>,
}

impl CudaMemory {
    /// A block of size `class` from the pool of `inner`.
    pub(super) fn pooled(inner: Arc<CudaInner>, ptr: sys::CUdeviceptr, class: usize) -> Self {
        CudaMemory {
            ptr,
            class,
            inner,
            owner: None,
        }
    }

    /// Memory owned by `owner`, which keeps it valid while alive.
    pub(super) fn foreign(
        inner: Arc<CudaInner>,
        ptr: sys::CUdeviceptr,
        owner: Box<dyn Any + Send + Sync>,
    ) -> Self {
        CudaMemory {
            ptr,
            class: 0,
            inner,
            owner: Some(owner),
        }
    }

    /// The device address.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The runtime state of the device owning the memory.
    pub fn inner(&self) -> &Arc<CudaInner> {
        &self.inner
    }
}

impl Drop for CudaMemory {
    fn drop(&mut self) {
        if self.owner.is_none() {
            self.inner.pool().release(self.ptr, self.class);
        }
    }
}

impl DeviceMemory for CudaMemory {
    fn device_ptr(&self) -> Option<u64> {
        Some(self.ptr)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
