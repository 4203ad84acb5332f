//! Copies between arrays of any layout, with broadcasting and dtype conversion.

use crate::array::Array;
use crate::device::Device;
use crate::error::Result;

/// Writes `src`, broadcast to `dst`'s shape and converted to `dst`'s dtype (NumPy's `astype`
/// conversions), into `dst`'s elements. `src` and `dst` may overlap in memory.
pub fn copy_into(src: &Array, dst: &Array) -> Result<()> {
    super::same_device("copy", &[src, dst])?;
    dst.check_writable("assignment")?;
    let src = src.broadcast_to(dst.shape())?;
    if dst.size() == 0 {
        return Ok(());
    }
    match dst.device() {
        Device::Cpu => super::cpu::copy_cast(&src, dst),
        Device::Cuda(_) | Device::Metal(_) => super::gpu::copy_cast(&src, dst),
    }
}
