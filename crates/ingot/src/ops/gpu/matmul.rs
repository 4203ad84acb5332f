//! Matrix products on GPUs without a BLAS (Metal): an MSL kernel of ours on the matrix units
//! (`simdgroup_matrix`, `kernels/matmul.metal`; float32 / float16 / bfloat16, accumulating in
//! float32), run through the kernel API like every other built-in kernel. `ops::matmul` uses it
//! when the device's runtime has no GEMM for the dtype.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::{CompileOptions, Dispatch, KernelArg, Library};
use crate::layout::Layout;

/// Whether the kernel computes products of `dtype`.
pub fn supports(dtype: DType) -> bool {
    matches!(dtype, DType::Float32 | DType::Float16 | DType::BFloat16)
}

/// The MSL source of the matmul kernels.
pub const SOURCE: &str = include_str!("../../../kernels/matmul.metal");

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
            "matmul kernel: {what} of {v} exceeds the kernel's 32-bit range"
        ))
    })
}

/// `out = x @ y` for `x` of shape `(..., m, k)` and `y` of shape `(..., k, n)` (batch axes
/// already broadcast to `out`'s, `k > 0`), all on the same GPU; `out` is contiguous and of a
/// dtype the kernel [`supports`].
pub fn matmul(x: &Array, y: &Array, out: &Array) -> Result<()> {
    let nd = out.ndim();
    if nd < 2 || x.ndim() != nd || y.ndim() != nd {
        return Err(Error::Shape(format!(
            "matmul kernel: operands {:?} @ {:?} -> {:?}",
            x.shape(),
            y.shape(),
            out.shape()
        )));
    }
    let (m, k) = (x.shape()[nd - 2], x.shape()[nd - 1]);
    let n = y.shape()[nd - 1];
    if out.size() == 0 || k == 0 {
        return Err(Error::Shape(format!(
            "internal: matmul kernel called for an empty product {:?} @ {:?}",
            x.shape(),
            y.shape()
        )));
    }
    let name = match out.dtype() {
        DType::Float32 => "matmul_float32",
        DType::Float16 => "matmul_float16",
        DType::BFloat16 => "matmul_bfloat16",
        other => {
            return Err(Error::UnsupportedDType {
                op: "matmul kernel",
                dtype: other.to_string(),
            })
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
