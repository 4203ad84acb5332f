//! Batched 1-D FFTs on CUDA through cuFFT (loaded at run time): the jobs of `runtime/fft.rs`,
//! on the device's stream. Plans are cached per device, kind and size (a few, least recently
//! used first out), as CuPy's plan cache does.

use std::ffi::c_int;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cufft::sys as fsys;

use super::context::CudaInner;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::runtime::fft::{FftJob, FftKind};
use crate::runtime::memory::Buffer;

/// Plans kept per process (each holds a work area in device memory).
const CACHED_PLANS: usize = 16;

fn check(status: fsys::cufftResult, what: &str) -> Result<()> {
    if status == fsys::cufftResult::CUFFT_SUCCESS {
        Ok(())
    } else {
        Err(Error::Device(format!("{what}: {status:?}")))
    }
}

/// A plan and what it was made for: (device ordinal, type, n, batch).
type Key = (usize, fsys::cufftType, usize, usize);

struct Plans(Vec<(Key, fsys::cufftHandle)>);

fn plans() -> &'static Mutex<Plans> {
    static P: OnceLock<Mutex<Plans>> = OnceLock::new();
    P.get_or_init(|| Mutex::new(Plans(Vec::new())))
}

/// Device pointer of element `e` of a buffer of `esize`-byte elements.
fn ptr(b: &Buffer, e: usize, esize: usize) -> Result<u64> {
    let base = b
        .device_ptr()
        .ok_or_else(|| Error::DeviceMismatch("cuFFT given a host buffer".into()))?;
    Ok(base + (e * esize) as u64)
}

/// Runs `job` on cuFFT. `Ok(false)` without libcufft or for sizes cuFFT's 32-bit plans do not
/// take (the caller then transforms on the host).
pub fn run(inner: &Arc<CudaInner>, job: &FftJob<'_>) -> Result<bool> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only probes for the shared library.
    if !*PRESENT.get_or_init(|| unsafe { fsys::is_culib_present() }) {
        return Ok(false);
    }
    let double = match job.dtype {
        DType::Complex64 => false,
        DType::Complex128 => true,
        _ => return Ok(false),
    };
    let rows = |len: usize| len.checked_mul(job.batch);
    if job.n == 0
        || job.batch == 0
        || c_int::try_from(job.n).is_err()
        || c_int::try_from(job.batch).is_err()
        || rows(job.n).is_none_or(|t| c_int::try_from(t).is_err())
    {
        return Ok(job.n == 0 || job.batch == 0);
    }
    use fsys::cufftType::*;
    let (ty, in_size, out_size) = match (job.kind, double) {
        (FftKind::C2C { .. }, false) => (CUFFT_C2C, 8, 8),
        (FftKind::C2C { .. }, true) => (CUFFT_Z2Z, 16, 16),
        (FftKind::R2C, false) => (CUFFT_R2C, 4, 8),
        (FftKind::R2C, true) => (CUFFT_D2Z, 8, 16),
        (FftKind::C2R, false) => (CUFFT_C2R, 8, 4),
        (FftKind::C2R, true) => (CUFFT_Z2D, 16, 8),
    };
    inner.bind()?;
    let key = (inner.ordinal(), ty, job.n, job.batch);
    let mut cache = plans().lock().unwrap_or_else(|e| e.into_inner());
    let plan = match cache.0.iter().position(|(k, _)| *k == key) {
        Some(i) => {
            let entry = cache.0.remove(i);
            cache.0.push(entry);
            entry.1
        }
        None => {
            let mut h: fsys::cufftHandle = 0;
            let mut n = job.n as c_int;
            // SAFETY: out-pointer to a plan; null embeddings select the contiguous layout
            // (rows of n, or n / 2 + 1 complex values for the real transforms).
            check(
                unsafe {
                    fsys::cufftPlanMany(
                        &mut h,
                        1,
                        &mut n,
                        std::ptr::null_mut(),
                        1,
                        0,
                        std::ptr::null_mut(),
                        1,
                        0,
                        ty,
                        job.batch as c_int,
                    )
                },
                "cufftPlanMany",
            )?;
            if cache.0.len() >= CACHED_PLANS {
                let (_, old) = cache.0.remove(0);
                // SAFETY: a plan created here, destroyed once, no longer in the cache.
                unsafe {
                    let _ = fsys::cufftDestroy(old);
                }
            }
            cache.0.push((key, h));
            h
        }
    };
    // SAFETY: a live plan; the device's stream.
    check(
        unsafe { fsys::cufftSetStream(plan, inner.stream() as fsys::cudaStream_t) },
        "cufftSetStream",
    )?;
    let i = ptr(job.input.0, job.input.1, in_size)?;
    let o = ptr(job.output.0, job.output.1, out_size)?;
    // SAFETY: the caller's buffers hold `batch` rows of the plan's input and output sizes.
    let status = unsafe {
        match job.kind {
            FftKind::C2C { inverse } => {
                let dir = if inverse { 1 } else { -1 };
                if double {
                    fsys::cufftExecZ2Z(plan, i as *mut _, o as *mut _, dir)
                } else {
                    fsys::cufftExecC2C(plan, i as *mut _, o as *mut _, dir)
                }
            }
            FftKind::R2C if double => fsys::cufftExecD2Z(plan, i as *mut _, o as *mut _),
            FftKind::R2C => fsys::cufftExecR2C(plan, i as *mut _, o as *mut _),
            FftKind::C2R if double => fsys::cufftExecZ2D(plan, i as *mut _, o as *mut _),
            FftKind::C2R => fsys::cufftExecC2R(plan, i as *mut _, o as *mut _),
        }
    };
    check(status, "cufftExec")?;
    Ok(true)
}
