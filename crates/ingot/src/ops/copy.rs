//! Copies between arrays of any layout, with broadcasting and dtype conversion, and the
//! [`Array`] methods built on them (they move data, so they live in the ops layer).

use crate::array::{infer_shape, Array, HostElement};
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};

/// Writes `src`, broadcast to `dst`'s shape and converted to `dst`'s dtype (NumPy's `astype`
/// conversions), into `dst`'s elements. `src` and `dst` may overlap in memory.
pub fn copy_into(src: &Array, dst: &Array) -> Result<()> {
    crate::array::same_device("copy", &[src, dst])?;
    dst.check_writable("assignment")?;
    let src = src.broadcast_to(dst.shape())?;
    if dst.size() == 0 {
        return Ok(());
    }
    match dst.device() {
        Device::Cpu => super::cpu::copy_cast(&src, dst),
        _ if src.dtype().is_complex() || dst.dtype().is_complex() => {
            super::gpu::complex_copy_cast(&src, dst)
        }
        _ => super::gpu::copy_cast(&src, dst),
    }
}

impl Array {
    /// The same elements with a new shape: a view when the strides allow, else a copy.
    /// One entry of `shape` may be `-1` (inferred).
    pub fn reshape(&self, shape: &[isize]) -> Result<Array> {
        let shape = infer_shape(shape, self.size())?;
        match self.layout().reshape(&shape)? {
            Some(l) => self.with_layout(l),
            None => self.contiguous()?.reshape_exact(&shape),
        }
    }

    fn reshape_exact(&self, shape: &[usize]) -> Result<Array> {
        match self.layout().reshape(shape)? {
            Some(l) => self.with_layout(l),
            None => Err(Error::Shape(format!(
                "internal: contiguous array did not reshape to {shape:?}"
            ))),
        }
    }

    /// A contiguous array with the same values: `self` when already contiguous, else a copy.
    pub fn contiguous(&self) -> Result<Array> {
        if self.is_contiguous() {
            Ok(self.clone())
        } else {
            self.copy()
        }
    }

    /// A new contiguous copy.
    pub fn copy(&self) -> Result<Array> {
        let out = Array::empty(self.shape(), self.dtype(), self.device())?;
        copy_into(self, &out)?;
        Ok(out)
    }

    /// A copy converted to `dtype` (NumPy's `astype` results).
    pub fn astype(&self, dtype: DType) -> Result<Array> {
        let out = Array::empty(self.shape(), dtype, self.device())?;
        copy_into(self, &out)?;
        Ok(out)
    }

    /// Writes `value` (broadcast and converted to this array's dtype) into this array's elements.
    pub fn assign(&self, value: &Array) -> Result<()> {
        copy_into(value, self)
    }

    /// Fills every element with `value`.
    pub fn fill(&self, value: Scalar) -> Result<()> {
        let s = Array::scalar(value, self.dtype(), self.device())?;
        copy_into(&s, self)
    }

    /// A copy on another device: device to device where the source runtime has a path to the
    /// destination ([`Runtime::copy_to_peer`](crate::runtime::Runtime::copy_to_peer), peer to
    /// peer between two CUDA GPUs), through the host otherwise.
    pub fn to_device(&self, device: Device) -> Result<Array> {
        if device == self.device() {
            return Ok(self.clone());
        }
        if device != Device::Cpu && self.device() != Device::Cpu {
            let c = self.contiguous()?;
            let out = Array::empty(self.shape(), self.dtype(), device)?;
            let size = self.dtype().size();
            let copied = c.device().runtime()?.copy_to_peer(
                c.buffer(),
                c.layout().offset() * size,
                out.buffer(),
                out.layout().offset() * size,
                c.nbytes(),
            )?;
            if copied {
                return Ok(out);
            }
        }
        let bytes = self.to_bytes()?;
        Array::from_bytes(&bytes, self.shape(), self.dtype(), device)
    }

    /// The elements in row-major order as host bytes (synchronises with the device).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let c = self.contiguous()?;
        let mut out = vec![0u8; c.nbytes()];
        if !out.is_empty() {
            let rt = c.device().runtime()?;
            rt.copy_to_host(c.buffer(), c.layout().offset() * c.dtype().size(), &mut out)?;
        }
        Ok(out)
    }

    /// The elements in row-major order as a vector of `T`, which must match the dtype.
    pub fn to_vec<T: HostElement>(&self) -> Result<Vec<T>> {
        if T::DTYPE != self.dtype() {
            return Err(Error::DTypeMismatch(format!(
                "to_vec::<{}> of an array of {}",
                T::DTYPE,
                self.dtype()
            )));
        }
        let bytes = self.to_bytes()?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// The single element of a size-1 array.
    pub fn item(&self) -> Result<Scalar> {
        if self.size() != 1 {
            return Err(Error::Value(format!(
                "only arrays of size 1 can be converted to a scalar, got shape {:?}",
                self.shape()
            )));
        }
        let bytes = self.to_bytes()?;
        Ok(Scalar::read_from(self.dtype(), &bytes))
    }
}
