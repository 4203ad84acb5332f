//! Batched matrix products: faer for float32/64 and complex (its x86 kernels are 1.6-2x the
//! gemm crate's on one core for 256-1024 float32), gemm for float16 (faer has no f16), float32
//! for bfloat16, a cache-friendly loop for integers and bool. Strided operands are passed as
//! they are.

use gemm::Parallelism;
use half::f16;

use super::arith::Num;
use super::element::{Elem, B8, C32, C64};
use super::iter::{elem_ptr, Plan};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// `out[b] = x[b] @ y[b]` for every batch index `b`; `x` is `[..., m, k]`, `y` `[..., k, n]`
/// (batch axes broadcast to `out`'s), `out` `[..., m, n]`, all of one dtype.
pub(crate) fn matmul(x: &Array, y: &Array, out: &Array) -> Result<()> {
    let nd = out.ndim();
    if nd < 2 || x.ndim() != nd || y.ndim() != nd {
        return Err(Error::Shape(
            "internal: matmul operands must have the output's rank (>= 2)".into(),
        ));
    }
    match out.dtype() {
        DType::Float32 => batched::<f32>(x, y, out, faer_kernel::<f32>),
        DType::Float64 => batched::<f64>(x, y, out, faer_kernel::<f64>),
        DType::Float16 => batched::<f16>(x, y, out, gemm_kernel::<f16>),
        DType::BFloat16 => {
            let (xf, yf) = (x.astype(DType::Float32)?, y.astype(DType::Float32)?);
            let of = Array::empty(out.shape(), DType::Float32, out.device())?;
            batched::<f32>(&xf, &yf, &of, faer_kernel::<f32>)?;
            super::cast::copy_cast(&of, out)
        }
        DType::Bool => batched::<B8>(x, y, out, loop_kernel::<B8>),
        DType::Int8 => batched::<i8>(x, y, out, loop_kernel::<i8>),
        DType::Int16 => batched::<i16>(x, y, out, loop_kernel::<i16>),
        DType::Int32 => batched::<i32>(x, y, out, loop_kernel::<i32>),
        DType::Int64 => batched::<i64>(x, y, out, loop_kernel::<i64>),
        DType::UInt8 => batched::<u8>(x, y, out, loop_kernel::<u8>),
        DType::UInt16 => batched::<u16>(x, y, out, loop_kernel::<u16>),
        DType::UInt32 => batched::<u32>(x, y, out, loop_kernel::<u32>),
        DType::UInt64 => batched::<u64>(x, y, out, loop_kernel::<u64>),
        DType::Complex64 => batched::<C32>(x, y, out, faer_c32),
        DType::Complex128 => batched::<C64>(x, y, out, faer_c64),
    }
}

/// One matrix product: sizes, and pointer + (row stride, column stride) of each operand.
#[derive(Copy, Clone)]
struct Mat<T> {
    m: usize,
    n: usize,
    k: usize,
    a: (*const T, isize, isize),
    b: (*const T, isize, isize),
    c: (*mut T, isize, isize),
    parallel: bool,
}

type Kernel<T> = unsafe fn(Mat<T>);

fn batched<T: Elem>(x: &Array, y: &Array, out: &Array, kernel: Kernel<T>) -> Result<()> {
    let nd = out.ndim();
    let (m, n) = (out.shape()[nd - 2], out.shape()[nd - 1]);
    let k = x.shape()[nd - 1];
    let (px, py, po) = (elem_ptr::<T>(x)?, elem_ptr::<T>(y)?, elem_ptr::<T>(out)?);
    let (xs, ys, os) = (
        x.layout().strides(),
        y.layout().strides(),
        out.layout().strides(),
    );
    if out.size() == 0 {
        return Ok(());
    }
    let batch = Plan::new(
        &out.shape()[..nd - 2],
        [&xs[..nd - 2], &ys[..nd - 2], &os[..nd - 2]],
    );
    let count = batch.size();
    let work = m * n * k.max(1);
    // Large products use gemm's own threads; many small ones are spread over batches.
    let parallel_each = work >= 48 * 48 * 48;
    let mut jobs = Vec::with_capacity(count);
    batch.for_runs(0, count, |_, [ox, oy, oo], [sx, sy, so], len| {
        for j in 0..len as isize {
            // SAFETY: offsets come from the arrays' layouts.
            unsafe {
                jobs.push(Mat {
                    m,
                    n,
                    k,
                    a: (px.get::<T>().offset(ox + j * sx), xs[nd - 2], xs[nd - 1]),
                    b: (py.get::<T>().offset(oy + j * sy), ys[nd - 2], ys[nd - 1]),
                    c: (po.get::<T>().offset(oo + j * so), os[nd - 2], os[nd - 1]),
                    parallel: parallel_each,
                });
            }
        }
    });
    if k == 0 {
        for job in &jobs {
            for i in 0..m as isize {
                for j in 0..n as isize {
                    // SAFETY: inside the output matrix.
                    unsafe { *job.c.0.offset(i * job.c.1 + j * job.c.2) = T::default() };
                }
            }
        }
        return Ok(());
    }
    if count == 1 && parallel_each && work < TILED_MAX_WORK && rayon::current_num_threads() > 1 {
        if let Some(blocks) = tiles(jobs[0], rayon::current_num_threads()) {
            use rayon::prelude::*;
            // SAFETY: the blocks write disjoint parts of the output matrix.
            blocks.par_iter().for_each(|j| unsafe { kernel(j.0) });
            return Ok(());
        }
    }
    if !parallel_each && count > 1 && count * work >= 1 << 16 {
        use rayon::prelude::*;
        let jobs: Vec<SendMat<T>> = jobs.into_iter().map(SendMat).collect();
        // SAFETY: each job writes its own output matrix.
        jobs.par_iter().for_each(|j| unsafe { kernel(j.0) });
    } else {
        for job in jobs {
            // SAFETY: pointers and strides describe matrices inside the arrays.
            unsafe { kernel(job) };
        }
    }
    Ok(())
}

/// Below this many multiply-adds a single product is split into output blocks, one
/// sequential product each, spread over the threads: faer's own parallel split of small
/// products scaled 1.8x on 16 cores at 256 (OpenBLAS: 0.069 ms, faer 0.20 ms). From 1536 up
/// faer's split is as fast (6.5 ms both).
const TILED_MAX_WORK: usize = 1536 * 1536 * 1536;

/// The output of `j` cut into about `4 * threads` blocks of whole rows and columns (at least 32
/// of each, multiples of 16), as sequential jobs; `None` when it cannot be cut in two.
fn tiles<T>(j: Mat<T>, threads: usize) -> Option<Vec<SendMat<T>>> {
    const MIN: usize = 32;
    let (max_gm, max_gn) = ((j.m / MIN).max(1), (j.n / MIN).max(1));
    if max_gm * max_gn < 2 {
        return None;
    }
    // Four blocks per thread: on 16 cores, 256: 0.058 ms, 512: 0.26 ms, 1024: 1.84 ms (one
    // block per thread: 0.061 / 0.33 / 2.09 ms; faer's own split: 0.20 / 0.54 / 2.02 ms).
    let want = 4 * threads;
    // Blocks near square: gm / gn follows m / n.
    let gm = ((want as f64 * j.m as f64 / j.n as f64).sqrt().round() as usize).clamp(1, max_gm);
    let gn = want.div_ceil(gm).clamp(1, max_gn);
    let step = |len: usize, parts: usize| len.div_ceil(parts).next_multiple_of(16).max(MIN);
    let (sm, sn) = (step(j.m, gm), step(j.n, gn));
    let mut out = Vec::with_capacity(gm * gn);
    for r in (0..j.m).step_by(sm) {
        for c in (0..j.n).step_by(sn) {
            let (m, n) = (sm.min(j.m - r), sn.min(j.n - c));
            let (r, c) = (r as isize, c as isize);
            out.push(SendMat(Mat {
                m,
                n,
                k: j.k,
                // Pointer arithmetic only: the offsets stay inside the operands.
                a: (j.a.0.wrapping_offset(r * j.a.1), j.a.1, j.a.2),
                b: (j.b.0.wrapping_offset(c * j.b.2), j.b.1, j.b.2),
                c: (j.c.0.wrapping_offset(r * j.c.1 + c * j.c.2), j.c.1, j.c.2),
                parallel: false,
            }));
        }
    }
    Some(out)
}

struct SendMat<T>(Mat<T>);
// SAFETY: jobs write disjoint output matrices and only read their inputs.
unsafe impl<T> Send for SendMat<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SendMat<T> {}

/// faer's product for one job: `c = a @ b`.
unsafe fn faer_kernel<T: faer::traits::ComplexField + Copy>(j: Mat<T>) {
    let par = if j.parallel && rayon::current_num_threads() > 1 {
        faer::Par::rayon(rayon::current_num_threads())
    } else {
        faer::Par::Seq
    };
    // SAFETY: the caller's pointers and strides describe m x k, k x n and m x n matrices
    // (non-null: empty products return before any job runs); the output does not overlap the
    // operands (it is a new array).
    unsafe {
        let a = faer::MatRef::from_raw_parts(j.a.0, j.m, j.k, j.a.1, j.a.2);
        let b = faer::MatRef::from_raw_parts(j.b.0, j.k, j.n, j.b.1, j.b.2);
        let c = faer::MatMut::from_raw_parts_mut(j.c.0, j.m, j.n, j.c.1, j.c.2);
        faer::linalg::matmul::matmul(c, faer::Accum::Replace, a, b, T::one_impl(), par);
    }
}

/// [`faer_kernel`] of complex matrices: [`C32`]/[`C64`] are `repr(transparent)` over
/// `num_complex`'s types, which are faer's `c32`/`c64`.
macro_rules! faer_complex {
    ($name:ident, $t:ty, $g:ty) => {
        unsafe fn $name(m: Mat<$t>) {
            let c = |p: *const $t| p as *const $g;
            let j = Mat::<$g> {
                m: m.m,
                n: m.n,
                k: m.k,
                a: (c(m.a.0), m.a.1, m.a.2),
                b: (c(m.b.0), m.b.1, m.b.2),
                c: (m.c.0 as *mut $g, m.c.1, m.c.2),
                parallel: m.parallel,
            };
            // SAFETY: as for `faer_kernel`, with the same bytes seen as faer's complex type.
            unsafe { faer_kernel::<$g>(j) }
        }
    };
}
faer_complex!(faer_c32, C32, faer::c32);
faer_complex!(faer_c64, C64, faer::c64);

unsafe fn gemm_kernel<T: 'static + Num>(j: Mat<T>) {
    let par = if j.parallel && rayon::current_num_threads() > 1 {
        Parallelism::Rayon(rayon::current_num_threads())
    } else {
        Parallelism::None
    };
    let (zero, one) = (T::from_f64(0.0), T::from_f64(1.0));
    // SAFETY: the caller's pointers and strides describe m x k, k x n and m x n matrices.
    unsafe {
        gemm::gemm(
            j.m, j.n, j.k, j.c.0, j.c.2, j.c.1, false, j.a.0, j.a.2, j.a.1, j.b.0, j.b.2, j.b.1,
            zero, one, false, false, false, par,
        );
    }
}

/// `c = a @ b` with wrapping integer arithmetic (bool: or of ands), row by row so that the
/// inner loop runs along rows of `b` and `c`.
unsafe fn loop_kernel<T: Num>(j: Mat<T>) {
    let (a, ars, acs) = j.a;
    let (b, brs, bcs) = j.b;
    let (c, crs, ccs) = j.c;
    for i in 0..j.m as isize {
        // SAFETY: all offsets are inside the matrices.
        unsafe {
            for q in 0..j.n as isize {
                *c.offset(i * crs + q * ccs) = T::default();
            }
            for p in 0..j.k as isize {
                let av = *a.offset(i * ars + p * acs);
                let brow = b.offset(p * brs);
                let crow = c.offset(i * crs);
                if bcs == 1 && ccs == 1 {
                    for q in 0..j.n {
                        *crow.add(q) = (*crow.add(q)).add(av.mul(*brow.add(q)));
                    }
                } else {
                    for q in 0..j.n as isize {
                        let cp = crow.offset(q * ccs);
                        *cp = (*cp).add(av.mul(*brow.offset(q * bcs)));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::ops::matmul;
    use crate::{Array, Device};
    use half::{bf16, f16};

    fn naive(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                for p in 0..k {
                    c[i * n + j] += a[i * k + p] * b[p * n + j];
                }
            }
        }
        c
    }

    fn vals(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 58) as f64) - 32.0
            })
            .collect()
    }

    #[test]
    fn every_dtype_and_layout() {
        let (m, k, n) = (5, 7, 3);
        let av = vals(m * k, 1);
        let bv = vals(k * n, 2);
        let want = naive(&av, &bv, m, k, n);
        let a64 = Array::from_vec(av.clone(), &[m, k], Device::Cpu).unwrap();
        let b64 = Array::from_vec(bv.clone(), &[k, n], Device::Cpu).unwrap();
        for d in [
            DType::Float64,
            DType::Float32,
            DType::Float16,
            DType::BFloat16,
            DType::Int32,
            DType::Int64,
            DType::Int16,
        ] {
            let (a, b) = (a64.astype(d).unwrap(), b64.astype(d).unwrap());
            let c = matmul(&a, &b).unwrap();
            assert_eq!(c.dtype(), d);
            let got = c.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            // Entries are small integers: exact in every dtype but the 16-bit floats' rounding.
            for (g, w) in got.iter().zip(&want) {
                let tol = if matches!(d, DType::Float16 | DType::BFloat16) {
                    w.abs() * 1e-2 + 1e-3
                } else {
                    0.0
                };
                assert!((g - w).abs() <= tol, "{d}: {g} vs {w}");
            }
            // Transposed operands (non-contiguous) give the same.
            let at = a.t().copy().unwrap().t();
            let bt = b.t().copy().unwrap().t();
            let c2 = matmul(&at, &bt).unwrap();
            assert_eq!(c2.to_bytes().unwrap(), c.to_bytes().unwrap(), "{d}");
        }
        let _ = (f16::ONE, bf16::ONE);
    }

    #[test]
    fn batches_vectors_and_empty() {
        let a = Array::from_vec(vals(2 * 3 * 4, 5), &[2, 3, 4], Device::Cpu).unwrap();
        let b = Array::from_vec(vals(4 * 2, 6), &[4, 2], Device::Cpu).unwrap();
        let c = matmul(&a, &b).unwrap();
        assert_eq!(c.shape(), &[2, 3, 2]);
        let av = a.to_vec::<f64>().unwrap();
        let bv = b.to_vec::<f64>().unwrap();
        let got = c.to_vec::<f64>().unwrap();
        assert_eq!(&got[..6], &naive(&av[..12], &bv, 3, 4, 2)[..]);
        assert_eq!(&got[6..], &naive(&av[12..], &bv, 3, 4, 2)[..]);
        let v = Array::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4], Device::Cpu).unwrap();
        let r = matmul(&v, &v).unwrap();
        assert_eq!(r.shape(), &[] as &[usize]);
        assert_eq!(r.to_vec::<f64>().unwrap(), vec![30.0]);
        let e = Array::from_vec(Vec::<f32>::new(), &[3, 0], Device::Cpu).unwrap();
        let f = Array::from_vec(Vec::<f32>::new(), &[0, 2], Device::Cpu).unwrap();
        assert_eq!(
            matmul(&e, &f).unwrap().to_vec::<f32>().unwrap(),
            vec![0.0; 6]
        );
        let bo = Array::from_bytes(&[1, 0, 0, 1], &[2, 2], DType::Bool, Device::Cpu).unwrap();
        assert_eq!(
            matmul(&bo, &bo).unwrap().to_bytes().unwrap(),
            vec![1, 0, 0, 1]
        );
        let w = Array::from_vec(vec![100i8, 100], &[1, 2], Device::Cpu).unwrap();
        let w2 = Array::from_vec(vec![2i8, 1], &[2, 1], Device::Cpu).unwrap();
        assert_eq!(matmul(&w, &w2).unwrap().to_vec::<i8>().unwrap(), vec![44]);
        // A large product through gemm's threads.
        let n = 130;
        let x = Array::from_vec(vals(n * n, 9), &[n, n], Device::Cpu).unwrap();
        let y = Array::from_vec(vals(n * n, 10), &[n, n], Device::Cpu).unwrap();
        let want = naive(
            &x.to_vec::<f64>().unwrap(),
            &y.to_vec::<f64>().unwrap(),
            n,
            n,
            n,
        );
        let got = matmul(
            &x.astype(DType::Float32).unwrap(),
            &y.astype(DType::Float32).unwrap(),
        )
        .unwrap()
        .astype(DType::Float64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn blocks_of_one_product_cover_the_output() {
        // Products cut into blocks over the threads (`tiles`): uneven edges, transposed
        // operands, float32 and float64, against the exact integer result.
        let (m, k, n) = (211, 67, 149);
        let (av, bv) = (vals(m * k, 11), vals(k * n, 12));
        let want = naive(&av, &bv, m, k, n);
        let a = Array::from_vec(av, &[m, k], Device::Cpu).unwrap();
        let b = Array::from_vec(bv, &[k, n], Device::Cpu).unwrap();
        for d in [DType::Float32, DType::Float64] {
            let (a, b) = (a.astype(d).unwrap(), b.astype(d).unwrap());
            let at = a.t().copy().unwrap().t();
            let bt = b.t().copy().unwrap().t();
            for (x, y) in [(&a, &b), (&at, &b), (&a, &bt), (&at, &bt)] {
                let got = matmul(x, y)
                    .unwrap()
                    .astype(DType::Float64)
                    .unwrap()
                    .to_vec::<f64>()
                    .unwrap();
                assert_eq!(got, want, "{d}");
            }
        }
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(7)
            .build()
            .unwrap();
        let got = pool.install(|| matmul(&a, &b).unwrap().to_vec::<f64>().unwrap());
        assert_eq!(got, want);
        let blocks = super::tiles(
            super::Mat::<f64> {
                m,
                n,
                k,
                a: (std::ptr::null(), k as isize, 1),
                b: (std::ptr::null(), n as isize, 1),
                c: (std::ptr::null_mut(), n as isize, 1),
                parallel: true,
            },
            7,
        )
        .unwrap();
        let cells: usize = blocks.iter().map(|j| j.0.m * j.0.n).sum();
        assert_eq!(cells, m * n);
        assert!(blocks.len() >= 14, "{} blocks", blocks.len());
    }
}
