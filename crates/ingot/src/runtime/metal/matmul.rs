//! Matrix products on Metal: an MSL kernel of ours on the matrix units (`simdgroup_matrix`,
//! `matmul.metal`; float32 / float16 / bfloat16, accumulating in float32), run through the
//! kernel API like every other built-in kernel. Integer and bool products are computed on the
//! host (the memory is shared) and copied back, as the CUDA backend does for dtypes cuBLAS lacks.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::{CompileOptions, Dispatch, KernelArg, Library};
use crate::layout::Layout;

/// The MSL source of the matmul kernels.
pub const SOURCE: &str = include_str!("matmul.metal");

/// The kernel's output tile (rows and columns per threadgroup).
const TILE: usize = 64;

fn library(device: Device) -> Result<Library> {
    static LIBS: OnceLock<Mutex<HashMap<Device, Library>>> = OnceLock::new();
    let map = LIBS.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(l) = map.lock().unwrap_or_else(|p| p.into_inner()).get(&device) {
        return Ok(l.clone());
    }
    let options = CompileOptions {
        file_name: "ingot/matmul.metal".to_string(),
        ..Default::default()
    };
    let lib = Library::compile(SOURCE, device, &options)?;
    map.lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(device, lib.clone());
    Ok(lib)
}

/// One operand as a row-major `(rows, cols)` matrix per batch: the array to bind and its batch
/// stride in elements (0 when every batch uses the same matrix, so a broadcast operand is not
/// copied once per batch).
fn operand(x: &Array, rows: usize, cols: usize) -> Result<(Array, u64)> {
    let nd = x.ndim();
    let strides = x.layout().strides();
    let batch_broadcast = strides[..nd - 2].iter().all(|&s| s == 0);
    if batch_broadcast {
        let layout = Layout::new(
            vec![rows, cols],
            strides[nd - 2..].to_vec(),
            x.layout().offset(),
        )?;
        let m = x.with_layout(layout)?;
        let m = if m.is_contiguous() {
            m
        } else {
            m.contiguous()?
        };
        return Ok((m, 0));
    }
    let c = if x.is_contiguous() {
        x.clone()
    } else {
        x.contiguous()?
    };
    Ok((c, (rows * cols) as u64))
}

fn to_u32(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| {
        Error::Unsupported(format!(
            "matmul on Metal: {what} of {v} exceeds the kernel's 32-bit range"
        ))
    })
}

/// `out = x @ y` for `x` of shape `(..., m, k)` and `y` of shape `(..., k, n)` (batch axes
/// already broadcast to `out`'s), all on the same Metal device; `out` is contiguous.
pub fn matmul(x: &Array, y: &Array, out: &Array) -> Result<()> {
    let nd = out.ndim();
    if nd < 2 || x.ndim() != nd || y.ndim() != nd {
        return Err(Error::Shape(format!(
            "matmul on Metal: operands {:?} @ {:?} -> {:?}",
            x.shape(),
            y.shape(),
            out.shape()
        )));
    }
    let (m, k) = (x.shape()[nd - 2], x.shape()[nd - 1]);
    let n = y.shape()[nd - 1];
    if out.size() == 0 {
        return Ok(());
    }
    if k == 0 {
        return out.fill(Scalar::Int(0));
    }
    let name = match out.dtype() {
        DType::Float32 => "matmul_float32",
        DType::Float16 => "matmul_float16",
        DType::BFloat16 => "matmul_bfloat16",
        _ => {
            let host =
                crate::ops::matmul::matmul(&x.to_device(Device::Cpu)?, &y.to_device(Device::Cpu)?)?;
            return out.assign(&host.to_device(out.device())?);
        }
    };
    let batch: usize = out.shape()[..nd - 2].iter().product();
    let (a, a_stride) = operand(x, m, k)?;
    let (b, b_stride) = operand(y, k, n)?;
    let (m32, n32, k32) = (to_u32(m, "m")?, to_u32(n, "n")?, to_u32(k, "k")?);
    let groups = [
        to_u32(n.div_ceil(TILE), "n")?,
        to_u32(m.div_ceil(TILE), "m")?,
        to_u32(batch, "the batch size")?,
    ];
    // MatmulParams: ulong a_batch_stride, b_batch_stride; uint m, n, k, pad.
    let mut params = Vec::with_capacity(32);
    params.extend_from_slice(&a_stride.to_ne_bytes());
    params.extend_from_slice(&b_stride.to_ne_bytes());
    for v in [m32, n32, k32, 0] {
        params.extend_from_slice(&v.to_ne_bytes());
    }
    let kernel = library(out.device())?.function(name)?;
    let dispatch = Dispatch::try_groups(&groups)?.with_threadgroup(&[16, 16, 1])?;
    kernel.launch(
        &[
            KernelArg::Array(a),
            KernelArg::Array(b),
            KernelArg::Array(out.clone()),
            KernelArg::Bytes(params),
        ],
        &dispatch,
    )
}
