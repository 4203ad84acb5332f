//! Matrix products (batched, broadcasting) and the array API's `matmul` rules.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::Scalar;
use crate::error::{Error, Result};
use crate::layout::broadcast_shapes;
use crate::runtime::{Gemm, GemmOperand};

/// The array API's `matmul`: 1-D operands are promoted to matrices and the added axis removed
/// afterwards; leading (batch) axes broadcast.
pub fn matmul(a: &Array, b: &Array) -> Result<Array> {
    crate::array::same_device("matmul", &[a, b])?;
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
    if out.device() == Device::Cpu {
        super::cpu::matmul(&x, &y, &out)?;
    } else {
        gpu_matmul(&x, &y, &out)?;
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

fn operand(a: &Array) -> GemmOperand<'_> {
    GemmOperand {
        buffer: a.buffer(),
        layout: a.layout(),
    }
}

/// On a GPU: the runtime's BLAS when it has a GEMM for the dtype (cuBLAS), else the MSL matmul
/// kernel (Metal), else the host (integer and bool products) with the result copied back.
fn gpu_matmul(x: &Array, y: &Array, out: &Array) -> Result<()> {
    if out.size() == 0 {
        return Ok(());
    }
    if x.shape()[x.ndim() - 1] == 0 {
        return out.fill(Scalar::Int(0));
    }
    // An operand whose last two axes no BLAS can describe is copied first.
    let blas_form = |a: &Array| -> Result<Array> {
        if a.layout().matrix_form().is_some() {
            Ok(a.clone())
        } else {
            a.contiguous()
        }
    };
    let (x, y) = (blas_form(x)?, blas_form(y)?);
    let gemm = Gemm {
        a: operand(&x),
        b: operand(&y),
        out: operand(out),
        dtype: out.dtype(),
    };
    if out.device().runtime()?.gemm(&gemm)? {
        return Ok(());
    }
    if super::gpu::matmul::supports(out.dtype()) {
        return super::gpu::matmul::matmul(&x, &y, out);
    }
    let host = matmul(&x.to_device(Device::Cpu)?, &y.to_device(Device::Cpu)?)?;
    out.assign(&host.to_device(out.device())?)
}
