//! Matrix products on CUDA through cuBLAS (loaded at run time).
//!
//! ingot arrays are row-major; cuBLAS is column-major. A row-major `C = A @ B` is the
//! column-major `C^T = B^T @ A^T`, so every call swaps the operands and passes row-major leading
//! dimensions as column-major ones; a transposed view (column stride != 1) becomes `op = T`
//! instead of a copy. float32 is computed in full FP32 (no TF32, as PyTorch's default), float16
//! and bfloat16 accumulate in FP32.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cublas::{result as cublas, sys as cusys};

use super::CudaInner;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// A cuBLAS handle bound to the device's stream.
pub struct Blas {
    inner: Arc<CudaInner>,
    handle: Mutex<cusys::cublasHandle_t>,
}

// SAFETY: the handle is only used under the mutex, with the device's context current.
unsafe impl Send for Blas {}
unsafe impl Sync for Blas {}

impl Blas {
    fn new(inner: Arc<CudaInner>) -> Result<Blas> {
        // SAFETY: only probes for the shared library.
        if !unsafe { cusys::is_culib_present() } {
            return Err(Error::DeviceUnavailable(
                "cuBLAS (libcublas) was not found: matrix products on CUDA need it".into(),
            ));
        }
        inner.bind()?;
        let handle = cublas::create_handle().map_err(|e| blas_error(e, "cublasCreate"))?;
        // SAFETY: a fresh handle and the device's stream.
        unsafe { cublas::set_stream(handle, inner.stream() as _) }
            .map_err(|e| blas_error(e, "cublasSetStream"))?;
        Ok(Blas {
            inner,
            handle: Mutex::new(handle),
        })
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        let h = *self.handle.lock().unwrap_or_else(|p| p.into_inner());
        if self.inner.bind().is_ok() {
            // SAFETY: created in `new`, destroyed once.
            let _ = unsafe { cublas::destroy_handle(h) };
        }
    }
}

fn blas_error(e: cublas::CublasError, what: &str) -> Error {
    Error::Device(format!("{what}: {e:?}"))
}

type Handles = Mutex<Vec<(usize, Arc<Blas>)>>;

/// The cuBLAS state of the device behind `inner` (one per device, created on first use).
pub fn blas(inner: &Arc<CudaInner>) -> Result<Arc<Blas>> {
    static ALL: OnceLock<Handles> = OnceLock::new();
    let mut all = ALL
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((_, b)) = all.iter().find(|(o, _)| *o == inner.ordinal()) {
        return Ok(b.clone());
    }
    let b = Arc::new(Blas::new(inner.clone())?);
    all.push((inner.ordinal(), b.clone()));
    Ok(b)
}

/// How one operand's last two axes sit in memory: row-major with leading dimension `ld`, or
/// the transpose of such a matrix.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct MatrixLayout {
    transposed: bool,
    ld: i64,
}

fn matrix_layout(a: &Array) -> Option<MatrixLayout> {
    let n = a.ndim();
    let (rows, cols) = (a.shape()[n - 2], a.shape()[n - 1]);
    let (rs, cs) = (a.layout().strides()[n - 2], a.layout().strides()[n - 1]);
    if (cs == 1 || cols <= 1) && rs >= cols.max(1) as isize {
        return Some(MatrixLayout {
            transposed: false,
            ld: rs.max(1) as i64,
        });
    }
    if (rs == 1 || rows <= 1) && cs >= rows.max(1) as isize {
        return Some(MatrixLayout {
            transposed: true,
            ld: cs.max(1) as i64,
        });
    }
    None
}

/// Splits the batch axes into an outer part looped over and an inner run that all three
/// operands step through with one stride each: `(outer shape, inner count, strides)`.
fn batch_plan(arrays: [&Array; 3]) -> (Vec<usize>, usize, [i64; 3]) {
    let nb = arrays[2].ndim() - 2;
    let shape = &arrays[2].shape()[..nb];
    let stride = |i: usize, ax: usize| arrays[i].layout().strides()[ax] as i64;
    let mut split = nb;
    let mut count = 1usize;
    let mut strides = [0i64; 3];
    while split > 0 {
        let ax = split - 1;
        let len = shape[ax];
        if len == 1 {
            split -= 1;
            continue;
        }
        if count == 1 {
            strides = [stride(0, ax), stride(1, ax), stride(2, ax)];
        } else if (0..3).any(|i| stride(i, ax) != strides[i] * count as i64) {
            break;
        }
        count *= len;
        split -= 1;
    }
    (shape[..split].to_vec(), count, strides)
}

/// `out = a @ b` for arrays already broadcast to `[..batch, m, k] @ [..batch, k, n]`;
/// `out` is contiguous. Layouts cuBLAS cannot express are copied first.
pub fn matmul(inner: &Arc<CudaInner>, a: &Array, b: &Array, out: &Array) -> Result<()> {
    let dtype = out.dtype();
    let (data_type, compute, esize) = match dtype {
        DType::Float32 => (
            cusys::cudaDataType::CUDA_R_32F,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            4,
        ),
        DType::Float64 => (
            cusys::cudaDataType::CUDA_R_64F,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_64F,
            8,
        ),
        DType::Float16 => (
            cusys::cudaDataType::CUDA_R_16F,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            2,
        ),
        DType::BFloat16 => (
            cusys::cudaDataType::CUDA_R_16BF,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            2,
        ),
        other => {
            return Err(Error::UnsupportedDType {
                op: "matmul on cuda (cuBLAS)",
                dtype: other,
            })
        }
    };
    let nd = out.ndim();
    let (m, n) = (out.shape()[nd - 2], out.shape()[nd - 1]);
    let k = a.shape()[nd - 1];
    if m == 0 || n == 0 {
        return Ok(());
    }
    let fixed = |x: &Array| -> Result<(Array, MatrixLayout)> {
        match matrix_layout(x) {
            Some(l) => Ok((x.clone(), l)),
            None => {
                let c = x.contiguous()?;
                let l = matrix_layout(&c).expect("contiguous matrices are row-major");
                Ok((c, l))
            }
        }
    };
    let (a, la) = fixed(a)?;
    let (b, lb) = fixed(b)?;
    let (outer, count, strides) = batch_plan([&a, &b, out]);
    let handle = blas(inner)?;
    let h = handle.handle.lock().unwrap_or_else(|p| p.into_inner());
    inner.bind()?;
    let (alpha, beta): (Vec<u8>, Vec<u8>) = match compute {
        cusys::cublasComputeType_t::CUBLAS_COMPUTE_64F => {
            (1f64.to_ne_bytes().to_vec(), 0f64.to_ne_bytes().to_vec())
        }
        _ => (1f32.to_ne_bytes().to_vec(), 0f32.to_ne_bytes().to_vec()),
    };
    let ptr = |x: &Array| -> Result<u64> {
        x.buffer()
            .device_ptr()
            .ok_or_else(|| Error::DeviceMismatch("matmul on cuda given a host array".into()))
    };
    let (pa, pb, pc) = (ptr(&a)?, ptr(&b)?, ptr(out)?);
    let outer_total: usize = outer.iter().product();
    for o in 0..outer_total {
        // Position of this outer batch element in each operand.
        let mut rem = o;
        let mut offs = [
            a.layout().offset() as i64,
            b.layout().offset() as i64,
            out.layout().offset() as i64,
        ];
        for ax in (0..outer.len()).rev() {
            let i = (rem % outer[ax]) as i64;
            rem /= outer[ax];
            for (j, x) in [&a, &b, out].iter().enumerate() {
                offs[j] += i * x.layout().strides()[ax] as i64;
            }
        }
        let at = |p: u64, off: i64| (p as i64 + off * esize) as u64 as *const c_void;
        let op = |t: bool| {
            if t {
                cusys::cublasOperation_t::CUBLAS_OP_T
            } else {
                cusys::cublasOperation_t::CUBLAS_OP_N
            }
        };
        // Column-major view: C^T (n x m) = B^T (n x k) @ A^T (k x m).
        // SAFETY: pointers and strides describe memory inside the operands' buffers.
        unsafe {
            cublas::gemm_strided_batched_ex(
                *h,
                op(lb.transposed),
                op(la.transposed),
                n as i32,
                m as i32,
                k as i32,
                alpha.as_ptr() as *const c_void,
                at(pb, offs[1]),
                data_type,
                lb.ld as i32,
                strides[1],
                at(pa, offs[0]),
                data_type,
                la.ld as i32,
                strides[0],
                beta.as_ptr() as *const c_void,
                at(pc, offs[2]) as *mut c_void,
                data_type,
                n as i32,
                strides[2],
                count as i32,
                compute,
                cusys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )
        }
        .map_err(|e| blas_error(e, "cublasGemmStridedBatchedEx"))?;
    }
    inner.note_launch("matmul (cuBLAS)");
    Ok(())
}
