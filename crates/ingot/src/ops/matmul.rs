//! Matrix products (batched, broadcasting) and the array API's `matmul` rules.

use crate::array::Array;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;

/// The array API's `matmul`: 1-D operands are promoted to matrices and the added axis removed
/// afterwards; leading (batch) axes broadcast.
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    super::same_device("matmul", &[a, b])?;
    if a.ndim() == 0 || b.ndim() == 0 {
        return Err(Error::Shape(
            "matmul: operands must have at least one dimension".into(),
        ));
    }
    let a2 = if a.ndim() == 1 {
        a.expand_dims(0)?
    } else {
        a.clone()
    };
    let b2 = if b.ndim() == 1 {
        b.expand_dims(1)?
    } else {
        b.clone()
    };
    let (m, k) = (a2.shape()[a2.ndim() - 2], a2.shape()[a2.ndim() - 1]);
    let (k2, n) = (b2.shape()[b2.ndim() - 2], b2.shape()[b2.ndim() - 1]);
    if k != k2 {
        return Err(Error::Shape(format!(
            "matmul: contracted dimensions differ ({:?} @ {:?})",
            a.shape(),
            b.shape()
        )));
    }
    let batch = broadcast_shapes(&[&a2.shape()[..a2.ndim() - 2], &b2.shape()[..b2.ndim() - 2]])?;
    let dtype = a.dtype().promote(b.dtype());
    let mut ashape = batch.clone();
    ashape.extend([m, k]);
    let mut bshape = batch.clone();
    bshape.extend([k, n]);
    let mut oshape = batch.clone();
    oshape.extend([m, n]);
    let cast = |x: &Array| -> Result<Array> {
        if x.dtype() == dtype {
            Ok(x.clone())
        } else {
            x.astype(dtype)
        }
    };
    let x = cast(&a2)?.broadcast_to(&ashape)?;
    let y = cast(&b2)?.broadcast_to(&bshape)?;
    let out = Array::empty(&oshape, dtype, a.device())?;
    match out.device() {
        Device::Cpu => super::cpu::matmul(&x, &y, &out)?,
        #[cfg(feature = "cuda")]
        Device::Cuda(i) => cuda_matmul(i, &x, &y, &out)?,
        #[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
        Device::Metal(_) => crate::runtime::metal::matmul::matmul(&x, &y, &out)?,
        // Unreachable when every backend is compiled in.
        #[allow(unreachable_patterns)]
        other => return Err(Error::DeviceUnavailable(format!("{other}: no ops backend"))),
    }
    let mut res = out;
    if a.ndim() == 1 {
        res = res.squeeze(Some(&[-2]))?;
    }
    if b.ndim() == 1 {
        res = res.squeeze(Some(&[-1]))?;
    }
    Ok(res)
}

/// cuBLAS for float dtypes; other dtypes are computed on the host (cuBLAS has no general
/// integer GEMM) and copied back.
#[cfg(feature = "cuda")]
fn cuda_matmul(ordinal: usize, x: &Array, y: &Array, out: &Array) -> Result<()> {
    if x.shape()[x.ndim() - 1] == 0 {
        return out.fill(crate::dtype::Scalar::Int(0));
    }
    if out.dtype().is_float() {
        let rt = crate::runtime::cuda::runtime(ordinal)?;
        return crate::runtime::cuda::blas::matmul(rt.inner(), x, y, out);
    }
    let host = matmul(&x.to_device(Device::Cpu)?, &y.to_device(Device::Cpu)?)?;
    out.assign(&host.to_device(out.device())?)
}
