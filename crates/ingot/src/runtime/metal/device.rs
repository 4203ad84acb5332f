//! Metal devices on this machine, their properties, and the rules every Metal device shares
//! (no float64, the command-buffer batch size, the host page size).

use std::sync::OnceLock;

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::ProtocolObject;
use objc2_metal::{MTLCopyAllDevices, MTLCreateSystemDefaultDevice, MTLDevice};

use crate::dtype::DType;
use crate::error::{Error, Result};

// `MTLCreateSystemDefaultDevice` (and device enumeration in a command-line process) returns no
// device unless CoreGraphics is linked (objc2-metal's documentation); objc2-metal links Metal.
#[cfg(target_os = "macos")]
#[link(name = "CoreGraphics", kind = "framework")]
extern "C" {}

/// A retained Metal device.
pub type MtlDevice = Retained<ProtocolObject<dyn MTLDevice>>;

/// The dtype rule of Metal devices: everything but float64.
pub fn check_dtype(dtype: DType) -> Result<()> {
    if dtype == DType::Float64 || dtype == DType::Complex128 {
        return Err(Error::UnsupportedDType {
            op: "a Metal array (Metal GPUs have no 64-bit floating point; convert with \
                 astype(float32) or astype(complex64) first)",
            dtype: dtype.to_string(),
        });
    }
    Ok(())
}

/// Dispatches per command buffer before it is committed without waiting (`INGOT_METAL_BATCH`,
/// default 64, at least 1).
pub fn batch_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("INGOT_METAL_BATCH")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(64)
            .max(1)
    })
}

/// The host's page size (16 KiB on Apple silicon).
pub fn page_size() -> usize {
    extern "C" {
        fn getpagesize() -> std::ffi::c_int;
    }
    // SAFETY: `getpagesize` takes no argument and only reads a system constant.
    let n = unsafe { getpagesize() };
    usize::try_from(n).ok().filter(|&n| n > 0).unwrap_or(16384)
}

pub(crate) fn all_devices() -> Vec<MtlDevice> {
    autoreleasepool(|_| {
        let list = MTLCopyAllDevices();
        let mut out: Vec<MtlDevice> = (0..list.count()).map(|i| list.objectAtIndex(i)).collect();
        if out.is_empty() {
            if let Some(d) = MTLCreateSystemDefaultDevice() {
                out.push(d);
            }
        }
        out
    })
}

/// Number of Metal devices on this machine (0 where Metal is absent).
pub fn device_count() -> usize {
    static COUNT: OnceLock<usize> = OnceLock::new();
    *COUNT.get_or_init(|| all_devices().len())
}

/// Properties read once from the device.
#[derive(Clone, Debug)]
pub struct MetalProperties {
    /// `name` (`"Apple M2 Max"`).
    pub name: String,
    /// `registryID`: identifies the GPU across processes.
    pub registry_id: u64,
    /// `recommendedMaxWorkingSetSize`: bytes the GPU can use without a performance penalty.
    pub recommended_working_set_size: u64,
    /// `maxThreadsPerThreadgroup` along x, y, z.
    pub max_threads_per_threadgroup: [usize; 3],
    /// `maxThreadgroupMemoryLength` in bytes.
    pub max_threadgroup_memory: usize,
    /// `maxBufferLength` in bytes.
    pub max_buffer_length: usize,
    /// `hasUnifiedMemory`: true on Apple silicon.
    pub has_unified_memory: bool,
    /// `maxTransferRate` in bytes per second (0 for built-in GPUs).
    pub max_transfer_rate: u64,
    /// `isLowPower`.
    pub low_power: bool,
    /// `isRemovable` (an eGPU).
    pub removable: bool,
}

impl MetalProperties {
    pub(crate) fn read(d: &ProtocolObject<dyn MTLDevice>) -> MetalProperties {
        let t = d.maxThreadsPerThreadgroup();
        MetalProperties {
            name: d.name().to_string(),
            registry_id: d.registryID(),
            recommended_working_set_size: d.recommendedMaxWorkingSetSize(),
            max_threads_per_threadgroup: [t.width, t.height, t.depth],
            max_threadgroup_memory: d.maxThreadgroupMemoryLength(),
            max_buffer_length: d.maxBufferLength(),
            has_unified_memory: d.hasUnifiedMemory(),
            max_transfer_rate: d.maxTransferRate(),
            low_power: d.isLowPower(),
            removable: d.isRemovable(),
        }
    }
}
