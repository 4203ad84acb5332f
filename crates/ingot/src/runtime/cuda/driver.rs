//! Loading the CUDA driver at run time, and turning its status codes into ingot errors.
//!
//! ingot links no CUDA library: cudarc opens `libcuda` on first use. Every driver call goes
//! through [`check`], which keeps the vendor's error name and message with what ingot was doing.

use cudarc::driver::{result, sys};

use crate::error::{Error, Result};

/// True when the CUDA driver library can be loaded and initialised on this machine.
pub fn driver_present() -> bool {
    // SAFETY: only probes for the shared library; loads it if found.
    let present = unsafe { sys::is_culib_present() };
    present && result::init().is_ok()
}

/// Number of CUDA devices, 0 when there is no driver.
pub fn device_count() -> usize {
    if !driver_present() {
        return 0;
    }
    result::device::get_count().map_or(0, |n| n.max(0) as usize)
}

/// The vendor's name and message of a driver error.
pub fn describe(e: result::DriverError) -> String {
    let name = e
        .error_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|_| format!("{:?}", e.0));
    let msg = e
        .error_string()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!("{name}: {msg}")
}

/// True for driver errors after which the context cannot be used any more.
pub fn is_sticky(e: result::DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        e.0,
        CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_LAUNCH_TIMEOUT
    )
}

/// Maps a driver status to an ingot error with context.
pub fn check<T>(r: std::result::Result<T, result::DriverError>, what: &str) -> Result<T> {
    r.map_err(|e| {
        if e.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            Error::OutOfMemory {
                bytes: 0,
                device: format!("cuda ({what})"),
            }
        } else {
            Error::Device(format!("{what}: {}", describe(e)))
        }
    })
}
