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

use super::context::CudaInner;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::MatrixForm;
use crate::runtime::gemm::{Gemm, GemmOperand};

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

/// `gemm.out = gemm.a @ gemm.b` on cuBLAS. `Ok(false)` for dtypes cuBLAS has no GEMM for, or
/// an operand whose last two axes have no BLAS form (the caller copies it first).
pub fn gemm(inner: &Arc<CudaInner>, gemm: &Gemm<'_>) -> Result<bool> {
    let (data_type, compute, esize) = match gemm.dtype {
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
        DType::Complex64 => (
            cusys::cudaDataType::CUDA_C_32F,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
            8,
        ),
        DType::Complex128 => (
            cusys::cudaDataType::CUDA_C_64F,
            cusys::cublasComputeType_t::CUBLAS_COMPUTE_64F,
            16,
        ),
        _ => return Ok(false),
    };
    let (Some(la), Some(lb)) = (gemm.a.layout.matrix_form(), gemm.b.layout.matrix_form()) else {
        return Ok(false);
    };
    let (m, n, k) = gemm.dims();
    if m == 0 || n == 0 {
        return Ok(true);
    }
    let (outer, count, strides) = gemm.batch_plan();
    let handle = blas(inner)?;
    let h = handle.handle.lock().unwrap_or_else(|p| p.into_inner());
    inner.bind()?;
    let (mut alpha, mut beta): (Vec<u8>, Vec<u8>) = match compute {
        cusys::cublasComputeType_t::CUBLAS_COMPUTE_64F => {
            (1f64.to_ne_bytes().to_vec(), 0f64.to_ne_bytes().to_vec())
        }
        _ => (1f32.to_ne_bytes().to_vec(), 0f32.to_ne_bytes().to_vec()),
    };
    if gemm.dtype.is_complex() {
        // Complex scalars: the real part above, a zero imaginary part.
        let zero = vec![0u8; alpha.len()];
        alpha.extend_from_slice(&zero);
        beta.extend_from_slice(&zero);
    }
    let ptr = |x: &GemmOperand<'_>| -> Result<u64> {
        x.buffer
            .device_ptr()
            .ok_or_else(|| Error::DeviceMismatch("matmul on cuda given a host array".into()))
    };
    let operands = [gemm.a, gemm.b, gemm.out];
    let (pa, pb, pc) = (ptr(&gemm.a)?, ptr(&gemm.b)?, ptr(&gemm.out)?);
    let outer_total: usize = outer.iter().product();
    let ld = |f: MatrixForm| f.ld as i32;
    for o in 0..outer_total {
        // Position of this outer batch element in each operand.
        let mut rem = o;
        let mut offs = operands.map(|x| x.layout.offset() as i64);
        for ax in (0..outer.len()).rev() {
            let i = (rem % outer[ax]) as i64;
            rem /= outer[ax];
            for (j, x) in operands.iter().enumerate() {
                offs[j] += i * x.layout.strides()[ax] as i64;
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
                ld(lb),
                strides[1],
                at(pa, offs[0]),
                data_type,
                ld(la),
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
    Ok(true)
}

/// `dst = src^H` (the conjugate transpose; the transpose for real dtypes) for column-major
/// `rows x cols` `src` (leading dimension `ld_src`) into the column-major `cols x rows` `dst`
/// (`ld_dst`), real or complex floating dtypes, on the device's stream (`cublas<t>geam`; the two
/// must not overlap).
#[allow(clippy::too_many_arguments)]
pub fn adjoint(
    inner: &Arc<CudaInner>,
    dtype: DType,
    rows: usize,
    cols: usize,
    src: u64,
    ld_src: usize,
    dst: u64,
    ld_dst: usize,
) -> Result<()> {
    let handle = blas(inner)?;
    let h = handle.handle.lock().unwrap_or_else(|p| p.into_inner());
    inner.bind()?;
    use cusys::cublasOperation_t::{CUBLAS_OP_C, CUBLAS_OP_N, CUBLAS_OP_T};
    let (m, nn, lds, ldd) = (cols as i32, rows as i32, ld_src as i32, ld_dst as i32);
    // Geam's arguments after the handle, for element type `$t` with ones and zeros `$one`/`$zero`.
    macro_rules! geam {
        ($f:ident, $op:expr, $t:ty, $one:expr, $zero:expr) => {
            cusys::$f(
                *h,
                $op,
                CUBLAS_OP_N,
                m,
                nn,
                &$one,
                src as *const $t,
                lds,
                &$zero,
                dst as *const $t,
                ldd,
                dst as *mut $t,
                ldd,
            )
        };
    }
    let (c1, c0) = (
        cusys::float2 { x: 1.0, y: 0.0 },
        cusys::float2 { x: 0.0, y: 0.0 },
    );
    let (z1, z0) = (
        cusys::double2 { x: 1.0, y: 0.0 },
        cusys::double2 { x: 0.0, y: 0.0 },
    );
    // SAFETY: the pointers address `rows x cols` and `cols x rows` matrices of the device; with
    // beta = 0 the B operand is not read.
    let status = unsafe {
        match dtype {
            DType::Float32 => geam!(cublasSgeam, CUBLAS_OP_T, f32, 1.0f32, 0.0f32),
            DType::Float64 => geam!(cublasDgeam, CUBLAS_OP_T, f64, 1.0f64, 0.0f64),
            DType::Complex64 => geam!(cublasCgeam, CUBLAS_OP_C, cusys::float2, c1, c0),
            DType::Complex128 => geam!(cublasZgeam, CUBLAS_OP_C, cusys::double2, z1, z0),
            d => {
                return Err(Error::UnsupportedDType {
                    op: "adjoint (cuBLAS)",
                    dtype: d.to_string(),
                })
            }
        }
    };
    status.result().map_err(|e| blas_error(e, "cublasGeam"))?;
    Ok(())
}
