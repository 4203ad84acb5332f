//! Dense factorizations on CUDA through cuSOLVER (loaded at run time): the jobs of
//! `runtime/solver.rs` on batches of column-major matrices, one cuSOLVER call per matrix on the
//! device's stream, for float32, float64, complex64 and complex128. The 64-bit generic API
//! (`cusolverDnX*`, one entry point for every dtype) where cuSOLVER has one; `orgqr`/`ungqr` and
//! `gesvdj` through their typed entry points ([`Element`]).
//!
//! SVD: Jacobi (`gesvdj`) by default, as PyTorch does, falling back to QR iteration (`gesvd`,
//! CuPy's choice) for the matrices where Jacobi did not converge; values only use `gesvd`.

use std::ffi::{c_int, c_void};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::cusolver::sys as csys;

use super::context::CudaInner;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::runtime::backend::Runtime;
use crate::runtime::memory::Buffer;
use crate::runtime::solver::{Matrices, Solver, SolverJob, SvdDriver, Vectors};

/// A cuSOLVER dense handle and its parameter object, bound to the device's stream.
pub struct Dense {
    inner: Arc<CudaInner>,
    state: Mutex<(csys::cusolverDnHandle_t, csys::cusolverDnParams_t)>,
}

// SAFETY: the handle is only used under the mutex, with the device's context current.
unsafe impl Send for Dense {}
unsafe impl Sync for Dense {}

fn check(status: csys::cusolverStatus_t, what: &str) -> Result<()> {
    if status == csys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Device(format!("{what}: {status:?}")))
    }
}

impl Dense {
    fn new(inner: Arc<CudaInner>) -> Result<Dense> {
        inner.bind()?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: out-pointer to a handle.
        check(
            unsafe { csys::cusolverDnCreate(&mut handle) },
            "cusolverDnCreate",
        )?;
        let mut params = std::ptr::null_mut();
        // SAFETY: a fresh handle and the device's stream; out-pointer to a parameter object.
        unsafe {
            check(
                csys::cusolverDnSetStream(handle, inner.stream() as csys::cudaStream_t),
                "cusolverDnSetStream",
            )?;
            check(
                csys::cusolverDnCreateParams(&mut params),
                "cusolverDnCreateParams",
            )?;
        }
        Ok(Dense {
            inner,
            state: Mutex::new((handle, params)),
        })
    }
}

impl Drop for Dense {
    fn drop(&mut self) {
        let (h, p) = *self.state.lock().unwrap_or_else(|e| e.into_inner());
        if self.inner.bind().is_ok() {
            // SAFETY: created in `new`, destroyed once.
            unsafe {
                let _ = csys::cusolverDnDestroyParams(p);
                let _ = csys::cusolverDnDestroy(h);
            }
        }
    }
}

type Handles = Mutex<Vec<(usize, Arc<Dense>)>>;

/// The cuSOLVER state of the device behind `inner` (one per device, created on first use), or
/// `None` when libcusolver is not installed.
fn dense(inner: &Arc<CudaInner>) -> Result<Option<Arc<Dense>>> {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only probes for the shared library.
    if !*PRESENT.get_or_init(|| unsafe { csys::is_culib_present() }) {
        return Ok(None);
    }
    static ALL: OnceLock<Handles> = OnceLock::new();
    let mut all = ALL
        .get_or_init(|| Mutex::new(Vec::new()))
        .lock()
        .unwrap_or_else(|p| p.into_inner());
    if let Some((_, d)) = all.iter().find(|(o, _)| *o == inner.ordinal()) {
        return Ok(Some(d.clone()));
    }
    let d = Arc::new(Dense::new(inner.clone())?);
    all.push((inner.ordinal(), d.clone()));
    Ok(Some(d))
}

/// Device pointer of element `e` of a buffer of `esize`-byte elements.
fn ptr(b: &Buffer, e: usize, esize: usize) -> Result<*mut c_void> {
    let base = b
        .device_ptr()
        .ok_or_else(|| Error::DeviceMismatch("cuSOLVER given a host buffer".into()))?;
    Ok((base + (e * esize) as u64) as *mut c_void)
}

fn mat(m: &Matrices<'_>, b: usize, esize: usize) -> Result<*mut c_void> {
    ptr(m.buffer, m.offset + b * m.stride, esize)
}

fn vec(v: &Vectors<'_>, b: usize, esize: usize) -> Result<*mut c_void> {
    ptr(v.buffer, v.offset + b * v.stride, esize)
}

type Handle = csys::cusolverDnHandle_t;
type Status = csys::cusolverStatus_t;
type Gesvdj = csys::gesvdjInfo_t;
type EigMode = csys::cusolverEigMode_t;

// Untyped device pointers and ints: the typed routines' signatures in [`Element`].
type P = *mut c_void;
type I = c_int;

/// One element type: its cuSOLVER data types and sizes (matrices, and the real vectors of
/// eigenvalues and singular values), and its typed routines on untyped pointers.
#[allow(clippy::type_complexity)]
struct Element {
    dt: csys::cudaDataType,
    real: csys::cudaDataType,
    esize: usize,
    rsize: usize,
    /// `<t>orgqr_bufferSize` / `<t>ungqr_bufferSize`: (m, n, k, a, lda, tau, &lwork).
    orgqr_size: fn(Handle, I, I, I, P, I, P, *mut I) -> Status,
    /// `<t>orgqr` / `<t>ungqr`: (m, n, k, a, lda, tau, work, lwork, info).
    orgqr: fn(Handle, I, I, I, P, I, P, P, I, *mut I) -> Status,
    /// `<t>gesvdj_bufferSize`: (jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, &lwork, params).
    gesvdj_size: fn(Handle, EigMode, I, I, I, P, I, P, P, I, P, I, *mut I, Gesvdj) -> Status,
    /// `<t>gesvdj`: (jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, work, lwork, info, params).
    gesvdj: fn(Handle, EigMode, I, I, I, P, I, P, P, I, P, I, P, I, *mut I, Gesvdj) -> Status,
}

// The typed routines of element type `$t` (real part `$r`) as an [`Element`]. The wrappers are
// safe fns because every caller hands them pointers it checked (`ptr`), as for the generic API.
macro_rules! element {
    ($dt:ident, $real:ident, $t:ty, $r:ty, $oqs:ident, $oq:ident, $gjs:ident, $gj:ident) => {
        Element {
            dt: csys::cudaDataType::$dt,
            real: csys::cudaDataType::$real,
            esize: std::mem::size_of::<$t>(),
            rsize: std::mem::size_of::<$r>(),
            // SAFETY (all four): device pointers of the caller's buffers, cast to the routine's
            // element type; cuSOLVER checks the sizes it is given against the handle's device.
            orgqr_size: |h, m, n, k, a, lda, tau, lw| unsafe {
                csys::$oqs(h, m, n, k, a as *const $t, lda, tau as *const $t, lw)
            },
            orgqr: |h, m, n, k, a, lda, tau, w, lw, info| unsafe {
                csys::$oq(
                    h,
                    m,
                    n,
                    k,
                    a as *mut $t,
                    lda,
                    tau as *const $t,
                    w as *mut $t,
                    lw,
                    info,
                )
            },
            gesvdj_size: |h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, lw, gj| unsafe {
                csys::$gjs(
                    h,
                    jobz,
                    econ,
                    m,
                    n,
                    a as *const $t,
                    lda,
                    s as *const $r,
                    u as *const $t,
                    ldu,
                    v as *const $t,
                    ldv,
                    lw,
                    gj,
                )
            },
            gesvdj: |h, jobz, econ, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, gj| unsafe {
                csys::$gj(
                    h,
                    jobz,
                    econ,
                    m,
                    n,
                    a as *mut $t,
                    lda,
                    s as *mut $r,
                    u as *mut $t,
                    ldu,
                    v as *mut $t,
                    ldv,
                    w as *mut $t,
                    lw,
                    info,
                    gj,
                )
            },
        }
    };
}

impl Element {
    /// The element type of matrices of `dtype`, or `None` where cuSOLVER has no routines.
    fn of(dtype: DType) -> Option<Element> {
        Some(match dtype {
            DType::Float32 => element!(
                CUDA_R_32F,
                CUDA_R_32F,
                f32,
                f32,
                cusolverDnSorgqr_bufferSize,
                cusolverDnSorgqr,
                cusolverDnSgesvdj_bufferSize,
                cusolverDnSgesvdj
            ),
            DType::Float64 => element!(
                CUDA_R_64F,
                CUDA_R_64F,
                f64,
                f64,
                cusolverDnDorgqr_bufferSize,
                cusolverDnDorgqr,
                cusolverDnDgesvdj_bufferSize,
                cusolverDnDgesvdj
            ),
            DType::Complex64 => element!(
                CUDA_C_32F,
                CUDA_R_32F,
                csys::cuComplex,
                f32,
                cusolverDnCungqr_bufferSize,
                cusolverDnCungqr,
                cusolverDnCgesvdj_bufferSize,
                cusolverDnCgesvdj
            ),
            DType::Complex128 => element!(
                CUDA_C_64F,
                CUDA_R_64F,
                csys::cuDoubleComplex,
                f64,
                cusolverDnZungqr_bufferSize,
                cusolverDnZungqr,
                cusolverDnZgesvdj_bufferSize,
                cusolverDnZgesvdj
            ),
            _ => return None,
        })
    }
}

/// Device and host workspaces, grown to the largest request of a job.
struct Work<'r> {
    rt: &'r dyn Runtime,
    inner: &'r Arc<CudaInner>,
    device: Option<Buffer>,
    host: Vec<u8>,
}

impl<'r> Work<'r> {
    fn new(rt: &'r dyn Runtime, inner: &'r Arc<CudaInner>) -> Self {
        Work {
            rt,
            inner,
            device: None,
            host: Vec::new(),
        }
    }

    /// Device workspace of at least `nbytes` (null for 0) and host workspace of `host` bytes.
    fn get(&mut self, nbytes: usize, host: usize) -> Result<(*mut c_void, *mut c_void)> {
        if nbytes > 0 && self.device.as_ref().is_none_or(|b| b.nbytes() < nbytes) {
            self.device = Some(self.rt.allocate(nbytes)?);
        }
        if host > self.host.len() {
            self.host.resize(host, 0);
        }
        let d = match (&self.device, nbytes) {
            (Some(b), n) if n > 0 => ptr(b, 0, 1)?,
            _ => std::ptr::null_mut(),
        };
        let h = if host > 0 {
            self.host.as_mut_ptr() as *mut c_void
        } else {
            std::ptr::null_mut()
        };
        Ok((d, h))
    }
}

impl Drop for Work<'_> {
    fn drop(&mut self) {
        // cuSOLVER may still use the host workspace from queued work.
        if !self.host.is_empty() {
            let _ = self.inner.synchronize();
        }
    }
}

/// Runs `job` on cuSOLVER (`rt` is the device's runtime, which allocates the workspaces).
/// `Ok(false)` for dtypes it has no routine for, or without libcusolver.
pub fn run(rt: &dyn Runtime, inner: &Arc<CudaInner>, job: &Solver<'_>) -> Result<bool> {
    let Some(el) = Element::of(job.dtype) else {
        return Ok(false);
    };
    let (dt, esize) = (el.dt, el.esize);
    let Some(d) = dense(inner)? else {
        return Ok(false);
    };
    let state = d.state.lock().unwrap_or_else(|p| p.into_inner());
    let (h, params) = *state;
    inner.bind()?;
    let mut work = Work::new(rt, inner);
    let i64_ = |x: usize| x as i64;
    // A device int for the `info` argument of routines whose info only reports bad arguments.
    let scratch_info = rt.allocate(4)?;
    let sinfo = ptr(&scratch_info, 0, 4)? as *mut c_int;
    match job.job {
        SolverJob::Lu { a, pivots, info } => {
            let (mut dsz, mut hsz) = (0usize, 0usize);
            // SAFETY: sizes query with the first matrix's geometry.
            check(
                unsafe {
                    csys::cusolverDnXgetrf_bufferSize(
                        h,
                        params,
                        i64_(a.rows),
                        i64_(a.cols),
                        dt,
                        mat(&a, 0, esize)?,
                        i64_(a.ld),
                        dt,
                        &mut dsz,
                        &mut hsz,
                    )
                },
                "cusolverDnXgetrf_bufferSize",
            )?;
            let (wd, wh) = work.get(dsz, hsz)?;
            for b in 0..a.count {
                // SAFETY: pointers inside the caller's buffers, workspaces of the queried sizes.
                check(
                    unsafe {
                        csys::cusolverDnXgetrf(
                            h,
                            params,
                            i64_(a.rows),
                            i64_(a.cols),
                            dt,
                            mat(&a, b, esize)?,
                            i64_(a.ld),
                            vec(&pivots, b, 8)? as *mut i64,
                            dt,
                            wd,
                            dsz,
                            wh,
                            hsz,
                            vec(&info, b, 4)? as *mut c_int,
                        )
                    },
                    "cusolverDnXgetrf",
                )?;
            }
        }
        SolverJob::LuSolve { lu, pivots, b: rhs } => {
            for b in 0..lu.count {
                // SAFETY: pointers inside the caller's buffers.
                check(
                    unsafe {
                        csys::cusolverDnXgetrs(
                            h,
                            params,
                            csys::cublasOperation_t::CUBLAS_OP_N,
                            i64_(lu.rows),
                            i64_(rhs.cols),
                            dt,
                            mat(&lu, b, esize)?,
                            i64_(lu.ld),
                            vec(&pivots, b, 8)? as *const i64,
                            dt,
                            mat(&rhs, b, esize)?,
                            i64_(rhs.ld),
                            sinfo,
                        )
                    },
                    "cusolverDnXgetrs",
                )?;
            }
        }
        SolverJob::Cholesky { a, info } => {
            let lower = csys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
            let (mut dsz, mut hsz) = (0usize, 0usize);
            // SAFETY: sizes query.
            check(
                unsafe {
                    csys::cusolverDnXpotrf_bufferSize(
                        h,
                        params,
                        lower,
                        i64_(a.rows),
                        dt,
                        mat(&a, 0, esize)?,
                        i64_(a.ld),
                        dt,
                        &mut dsz,
                        &mut hsz,
                    )
                },
                "cusolverDnXpotrf_bufferSize",
            )?;
            let (wd, wh) = work.get(dsz, hsz)?;
            for b in 0..a.count {
                // SAFETY: as above.
                check(
                    unsafe {
                        csys::cusolverDnXpotrf(
                            h,
                            params,
                            lower,
                            i64_(a.rows),
                            dt,
                            mat(&a, b, esize)?,
                            i64_(a.ld),
                            dt,
                            wd,
                            dsz,
                            wh,
                            hsz,
                            vec(&info, b, 4)? as *mut c_int,
                        )
                    },
                    "cusolverDnXpotrf",
                )?;
            }
        }
        SolverJob::Qr { a, tau } => {
            let (mut dsz, mut hsz) = (0usize, 0usize);
            // SAFETY: sizes query.
            check(
                unsafe {
                    csys::cusolverDnXgeqrf_bufferSize(
                        h,
                        params,
                        i64_(a.rows),
                        i64_(a.cols),
                        dt,
                        mat(&a, 0, esize)?,
                        i64_(a.ld),
                        dt,
                        vec(&tau, 0, esize)?,
                        dt,
                        &mut dsz,
                        &mut hsz,
                    )
                },
                "cusolverDnXgeqrf_bufferSize",
            )?;
            let (wd, wh) = work.get(dsz, hsz)?;
            for b in 0..a.count {
                // SAFETY: as above.
                check(
                    unsafe {
                        csys::cusolverDnXgeqrf(
                            h,
                            params,
                            i64_(a.rows),
                            i64_(a.cols),
                            dt,
                            mat(&a, b, esize)?,
                            i64_(a.ld),
                            dt,
                            vec(&tau, b, esize)?,
                            dt,
                            wd,
                            dsz,
                            wh,
                            hsz,
                            sinfo,
                        )
                    },
                    "cusolverDnXgeqrf",
                )?;
            }
        }
        SolverJob::QrQ { a, tau, k } => {
            let (m, n, k, lda) = (a.rows as c_int, a.cols as c_int, k as c_int, a.ld as c_int);
            let mut lwork: c_int = 0;
            check(
                (el.orgqr_size)(
                    h,
                    m,
                    n,
                    k,
                    mat(&a, 0, esize)?,
                    lda,
                    vec(&tau, 0, esize)?,
                    &mut lwork,
                ),
                "cusolverDn<t>orgqr_bufferSize",
            )?;
            let (wd, _) = work.get(lwork.max(1) as usize * esize, 0)?;
            for b in 0..a.count {
                check(
                    (el.orgqr)(
                        h,
                        m,
                        n,
                        k,
                        mat(&a, b, esize)?,
                        lda,
                        vec(&tau, b, esize)?,
                        wd,
                        lwork,
                        sinfo,
                    ),
                    "cusolverDn<t>orgqr",
                )?;
            }
        }
        SolverJob::Eigh {
            a,
            w,
            vectors,
            info,
        } => {
            let jobz = if vectors {
                csys::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR
            } else {
                csys::cusolverEigMode_t::CUSOLVER_EIG_MODE_NOVECTOR
            };
            let lower = csys::cublasFillMode_t::CUBLAS_FILL_MODE_LOWER;
            let (mut dsz, mut hsz) = (0usize, 0usize);
            // SAFETY: sizes query.
            check(
                unsafe {
                    csys::cusolverDnXsyevd_bufferSize(
                        h,
                        params,
                        jobz,
                        lower,
                        i64_(a.rows),
                        dt,
                        mat(&a, 0, esize)?,
                        i64_(a.ld),
                        el.real,
                        vec(&w, 0, el.rsize)?,
                        dt,
                        &mut dsz,
                        &mut hsz,
                    )
                },
                "cusolverDnXsyevd_bufferSize",
            )?;
            let (wd, wh) = work.get(dsz, hsz)?;
            for b in 0..a.count {
                // SAFETY: as above.
                check(
                    unsafe {
                        csys::cusolverDnXsyevd(
                            h,
                            params,
                            jobz,
                            lower,
                            i64_(a.rows),
                            dt,
                            mat(&a, b, esize)?,
                            i64_(a.ld),
                            el.real,
                            vec(&w, b, el.rsize)?,
                            dt,
                            wd,
                            dsz,
                            wh,
                            hsz,
                            vec(&info, b, 4)? as *mut c_int,
                        )
                    },
                    "cusolverDnXsyevd",
                )?;
            }
        }
        SolverJob::Svd {
            a,
            s,
            uv,
            driver,
            info,
        } => {
            if a.rows < a.cols {
                return Err(Error::Value(
                    "internal: the SVD job needs rows >= cols".into(),
                ));
            }
            match (uv, driver) {
                (Some((u, vt)), SvdDriver::Default | SvdDriver::Jacobi) => {
                    drop(state);
                    drop(work);
                    return svd_jacobi(rt, inner, &d, &el, job.dtype, a, s, u, vt, info, driver)
                        .map(|_| true);
                }
                _ => gesvd(h, params, &el, &mut work, a, s, uv, info, 0..a.count)?,
            }
        }
    }
    inner.note_launch("cuSOLVER");
    Ok(true)
}

/// `gesvd` on matrices `range` of the batch.
#[allow(clippy::too_many_arguments)]
fn gesvd(
    h: csys::cusolverDnHandle_t,
    params: csys::cusolverDnParams_t,
    el: &Element,
    work: &mut Work<'_>,
    a: Matrices<'_>,
    s: Vectors<'_>,
    uv: Option<(Matrices<'_>, Matrices<'_>)>,
    info: Vectors<'_>,
    range: std::ops::Range<usize>,
) -> Result<()> {
    let i64_ = |x: usize| x as i64;
    let (dt, esize) = (el.dt, el.esize);
    let (jobu, jobvt) = match &uv {
        None => (b'N', b'N'),
        Some((u, _)) if u.cols == a.rows => (b'A', b'A'),
        Some(_) => (b'S', b'A'),
    };
    let ptrs = |b: usize| -> Result<(*mut c_void, usize, *mut c_void, usize)> {
        Ok(match &uv {
            None => (std::ptr::null_mut(), 1, std::ptr::null_mut(), 1),
            Some((u, vt)) => (mat(u, b, esize)?, u.ld, mat(vt, b, esize)?, vt.ld),
        })
    };
    let (pu, ldu, pvt, ldvt) = ptrs(0)?;
    let (mut dsz, mut hsz) = (0usize, 0usize);
    // SAFETY: sizes query.
    check(
        unsafe {
            csys::cusolverDnXgesvd_bufferSize(
                h,
                params,
                jobu as i8,
                jobvt as i8,
                i64_(a.rows),
                i64_(a.cols),
                dt,
                mat(&a, 0, esize)?,
                i64_(a.ld),
                el.real,
                vec(&s, 0, el.rsize)?,
                dt,
                pu,
                i64_(ldu),
                dt,
                pvt,
                i64_(ldvt),
                dt,
                &mut dsz,
                &mut hsz,
            )
        },
        "cusolverDnXgesvd_bufferSize",
    )?;
    let (wd, wh) = work.get(dsz, hsz)?;
    for b in range {
        let (pu, _, pvt, _) = ptrs(b)?;
        // SAFETY: pointers inside the caller's buffers, workspaces of the queried sizes.
        check(
            unsafe {
                csys::cusolverDnXgesvd(
                    h,
                    params,
                    jobu as i8,
                    jobvt as i8,
                    i64_(a.rows),
                    i64_(a.cols),
                    dt,
                    mat(&a, b, esize)?,
                    i64_(a.ld),
                    el.real,
                    vec(&s, b, el.rsize)?,
                    dt,
                    pu,
                    i64_(ldu),
                    dt,
                    pvt,
                    i64_(ldvt),
                    dt,
                    wd,
                    dsz,
                    wh,
                    hsz,
                    vec(&info, b, 4)? as *mut c_int,
                )
            },
            "cusolverDnXgesvd",
        )?;
    }
    Ok(())
}

/// SVD with vectors by `gesvdj`: V (n x n) into a workspace, its adjoint into `vt` by cuBLAS.
/// With the default driver, matrices where Jacobi did not converge are redone by `gesvd` from
/// a copy of the input.
#[allow(clippy::too_many_arguments)]
fn svd_jacobi(
    rt: &dyn Runtime,
    inner: &Arc<CudaInner>,
    d: &Dense,
    el: &Element,
    dtype: DType,
    a: Matrices<'_>,
    s: Vectors<'_>,
    u: Matrices<'_>,
    vt: Matrices<'_>,
    info: Vectors<'_>,
    driver: SvdDriver,
) -> Result<()> {
    let esize = el.esize;
    let (m, n) = (a.rows, a.cols);
    let econ = (u.cols < m) as c_int;
    // A copy of the inputs for the fallback.
    let backup = if driver == SvdDriver::Default {
        let bytes = a.count * a.stride * esize;
        let copy = rt.allocate(bytes.max(esize))?;
        rt.copy_within(a.buffer, a.offset * esize, &copy, 0, bytes)?;
        Some(copy)
    } else {
        None
    };
    let v = rt.allocate(n * n * esize)?;
    let state = d.state.lock().unwrap_or_else(|p| p.into_inner());
    let (h, params) = *state;
    inner.bind()?;
    let mut gj: csys::gesvdjInfo_t = std::ptr::null_mut();
    // SAFETY: out-pointer to a fresh gesvdj parameter object, destroyed below.
    check(
        unsafe { csys::cusolverDnCreateGesvdjInfo(&mut gj) },
        "cusolverDnCreateGesvdjInfo",
    )?;
    let jobz = csys::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR;
    let result = (|| -> Result<()> {
        let mut lwork: c_int = 0;
        let (mi, ni, lda, ldu) = (m as c_int, n as c_int, a.ld as c_int, u.ld as c_int);
        let pv = ptr(&v, 0, esize)?;
        check(
            (el.gesvdj_size)(
                h,
                jobz,
                econ,
                mi,
                ni,
                mat(&a, 0, esize)?,
                lda,
                vec(&s, 0, el.rsize)?,
                mat(&u, 0, esize)?,
                ldu,
                pv,
                ni,
                &mut lwork,
                gj,
            ),
            "cusolverDn<t>gesvdj_bufferSize",
        )?;
        let wbuf = rt.allocate(lwork.max(1) as usize * esize)?;
        let wd = ptr(&wbuf, 0, esize)?;
        for b in 0..a.count {
            check(
                (el.gesvdj)(
                    h,
                    jobz,
                    econ,
                    mi,
                    ni,
                    mat(&a, b, esize)?,
                    lda,
                    vec(&s, b, el.rsize)?,
                    mat(&u, b, esize)?,
                    ldu,
                    pv,
                    ni,
                    wd,
                    lwork,
                    vec(&info, b, 4)? as *mut c_int,
                    gj,
                ),
                "cusolverDn<t>gesvdj",
            )?;
            // vt = V^H (V is n x n with ld n).
            super::blas::adjoint(
                inner,
                dtype,
                n,
                n,
                pv as u64,
                n,
                mat(&vt, b, esize)? as u64,
                vt.ld,
            )?;
        }
        Ok(())
    })();
    // SAFETY: created above.
    unsafe {
        let _ = csys::cusolverDnDestroyGesvdjInfo(gj);
    }
    result?;
    inner.note_launch("cuSOLVER gesvdj");
    let Some(backup) = backup else {
        return Ok(());
    };
    // Matrices where Jacobi did not converge (info > 0): gesvd from the saved input.
    let mut infos = vec![0u8; a.count * 4];
    rt.copy_to_host(info.buffer, info.offset * 4, &mut infos)?;
    let failed: Vec<usize> = (0..a.count)
        .filter(|&b| {
            let at = b * info.stride * 4;
            i32::from_ne_bytes(infos[at..at + 4].try_into().unwrap_or([0; 4])) > 0
        })
        .collect();
    if failed.is_empty() {
        return Ok(());
    }
    let mut work = Work::new(rt, inner);
    for b in failed {
        rt.copy_within(
            &backup,
            b * a.stride * esize,
            a.buffer,
            (a.offset + b * a.stride) * esize,
            a.stride.min(a.ld * n) * esize,
        )?;
        gesvd(
            h,
            params,
            el,
            &mut work,
            a,
            s,
            Some((u, vt)),
            info,
            b..b + 1,
        )?;
    }
    inner.note_launch("cuSOLVER gesvd");
    Ok(())
}
