//! FFTs of contiguous rows: rustfft (complex to complex) and realfft (real to complex and back),
//! rows spread over rayon, plans cached per length by the crates' planners.

use std::sync::{Mutex, OnceLock};

use num_complex::Complex;
use rayon::prelude::*;
use realfft::RealFftPlanner;
use rustfft::{FftNum, FftPlanner};

use super::element::{Elem, C32, C64};
use super::iter::elem_ptr;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// A float type of FFT parts, with its planners.
trait Part: FftNum + Elem {
    fn planner() -> &'static Mutex<FftPlanner<Self>>;
    fn real_planner() -> &'static Mutex<RealFftPlanner<Self>>;
    fn from_f64_(v: f64) -> Self;
}

macro_rules! part {
    ($t:ty) => {
        impl Part for $t {
            fn planner() -> &'static Mutex<FftPlanner<$t>> {
                static P: OnceLock<Mutex<FftPlanner<$t>>> = OnceLock::new();
                P.get_or_init(|| Mutex::new(FftPlanner::new()))
            }
            fn real_planner() -> &'static Mutex<RealFftPlanner<$t>> {
                static P: OnceLock<Mutex<RealFftPlanner<$t>>> = OnceLock::new();
                P.get_or_init(|| Mutex::new(RealFftPlanner::new()))
            }
            fn from_f64_(v: f64) -> $t {
                v as $t
            }
        }
    };
}
part!(f32);
part!(f64);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rows of a contiguous array whose last axis has `row` elements, as a mutable slice.
///
/// # Safety
/// `a` must be contiguous host memory of element type `E`, not aliased while the slice lives.
// The memory belongs to the array's buffer, not to the `&Array` borrow: exclusivity is the
// caller's contract (fresh arrays only), as for the other raw-pointer kernels of this backend.
#[allow(clippy::mut_from_ref)]
unsafe fn rows_mut<E: Elem, F>(a: &Array) -> Result<&mut [F]> {
    if !a.is_contiguous() {
        return Err(Error::Value(
            "internal: fft on a non-contiguous array".into(),
        ));
    }
    let p = elem_ptr::<E>(a)?;
    let parts = std::mem::size_of::<E>() / std::mem::size_of::<F>();
    // SAFETY: the caller's contract; E is F or a pair of F (repr(transparent) complex).
    Ok(unsafe { std::slice::from_raw_parts_mut(p.get::<F>(), a.size() * parts) })
}

/// Rows with at least this many elements in total go to rayon.
const PARALLEL: usize = 1 << 15;

fn c2c_t<E: Elem, T: Part>(x: &Array, inverse: bool, scale: f64) -> Result<()> {
    let n = *x.shape().last().unwrap_or(&1);
    if n == 0 || x.size() == 0 {
        return Ok(());
    }
    // SAFETY: `x` is a fresh contiguous array owned by the caller.
    let data: &mut [Complex<T>] = unsafe { rows_mut::<E, Complex<T>>(x)? };
    let plan = {
        let mut p = lock(T::planner());
        if inverse {
            p.plan_fft_inverse(n)
        } else {
            p.plan_fft_forward(n)
        }
    };
    let s = T::from_f64_(scale);
    let run = |chunk: &mut [Complex<T>]| {
        let mut scratch =
            vec![Complex::new(T::default(), T::default()); plan.get_inplace_scratch_len()];
        plan.process_with_scratch(chunk, &mut scratch);
        if scale != 1.0 {
            chunk.iter_mut().for_each(|v| *v = *v * s);
        }
    };
    let rows = data.len() / n;
    if rows > 1 && data.len() >= PARALLEL {
        let per = rows.div_ceil(rayon::current_num_threads() * 4).max(1);
        data.par_chunks_mut(per * n).for_each(run);
    } else {
        run(data);
    }
    Ok(())
}

/// In-place complex FFT of each row (last axis) of the contiguous complex array `x`, scaled by
/// `scale`.
pub(crate) fn c2c(x: &Array, inverse: bool, scale: f64) -> Result<()> {
    match x.dtype() {
        DType::Complex64 => c2c_t::<C32, f32>(x, inverse, scale),
        DType::Complex128 => c2c_t::<C64, f64>(x, inverse, scale),
        d => Err(Error::DTypeMismatch(format!(
            "internal: complex fft of {d}"
        ))),
    }
}

fn r2c_t<R: Elem, E: Elem, T: Part>(x: &Array, out: &Array, scale: f64) -> Result<()> {
    let n = *x.shape().last().unwrap_or(&1);
    if n == 0 || x.size() == 0 {
        return Ok(());
    }
    let m = n / 2 + 1;
    // SAFETY: `x` (used as scratch by the transform) and `out` are fresh contiguous arrays the
    // caller owns.
    let (input, output): (&mut [T], &mut [Complex<T>]) =
        unsafe { (rows_mut::<R, T>(x)?, rows_mut::<E, Complex<T>>(out)?) };
    let plan = lock(T::real_planner()).plan_fft_forward(n);
    let s = T::from_f64_(scale);
    let run = |(i, o): (&mut [T], &mut [Complex<T>])| {
        let mut scratch = plan.make_scratch_vec();
        for (ir, or) in i.chunks_mut(n).zip(o.chunks_mut(m)) {
            // Lengths match the plan: this cannot fail.
            let _ = plan.process_with_scratch(ir, or, &mut scratch);
            if scale != 1.0 {
                or.iter_mut().for_each(|v| *v = *v * s);
            }
        }
    };
    let rows = input.len() / n;
    if rows > 1 && input.len() >= PARALLEL {
        let per = rows.div_ceil(rayon::current_num_threads() * 4).max(1);
        input
            .par_chunks_mut(per * n)
            .zip(output.par_chunks_mut(per * m))
            .for_each(run);
    } else {
        run((input, output));
    }
    Ok(())
}

/// Real-to-complex FFT of each row of the contiguous real `x` (`n` per row) into the
/// contiguous complex `out` (`n / 2 + 1` per row), scaled by `scale`; `x` is overwritten.
pub(crate) fn r2c(x: &Array, out: &Array, scale: f64) -> Result<()> {
    match (x.dtype(), out.dtype()) {
        (DType::Float32, DType::Complex64) => r2c_t::<f32, C32, f32>(x, out, scale),
        (DType::Float64, DType::Complex128) => r2c_t::<f64, C64, f64>(x, out, scale),
        (a, b) => Err(Error::DTypeMismatch(format!(
            "internal: rfft of {a} into {b}"
        ))),
    }
}

fn c2r_t<E: Elem, R: Elem, T: Part>(x: &Array, out: &Array, scale: f64) -> Result<()> {
    let n = *out.shape().last().unwrap_or(&1);
    if n == 0 || out.size() == 0 {
        return Ok(());
    }
    let m = n / 2 + 1;
    // SAFETY: `x` (used as scratch by the transform) and `out` are fresh contiguous arrays the
    // caller owns.
    let (input, output): (&mut [Complex<T>], &mut [T]) =
        unsafe { (rows_mut::<E, Complex<T>>(x)?, rows_mut::<R, T>(out)?) };
    let plan = lock(T::real_planner()).plan_fft_inverse(n);
    let s = T::from_f64_(scale);
    let run = |(i, o): (&mut [Complex<T>], &mut [T])| {
        let mut scratch = plan.make_scratch_vec();
        for (ir, or) in i.chunks_mut(m).zip(o.chunks_mut(n)) {
            // NumPy ignores the imaginary parts of the zero (and Nyquist) terms; realfft
            // reports them but transforms all the same.
            ir[0].im = T::default();
            if n.is_multiple_of(2) {
                ir[m - 1].im = T::default();
            }
            let _ = plan.process_with_scratch(ir, or, &mut scratch);
            if scale != 1.0 {
                or.iter_mut().for_each(|v| *v = *v * s);
            }
        }
    };
    let rows = output.len() / n;
    if rows > 1 && output.len() >= PARALLEL {
        let per = rows.div_ceil(rayon::current_num_threads() * 4).max(1);
        input
            .par_chunks_mut(per * m)
            .zip(output.par_chunks_mut(per * n))
            .for_each(run);
    } else {
        run((input, output));
    }
    Ok(())
}

/// Complex-to-real inverse FFT of each row of the contiguous complex `x` (`n / 2 + 1` per row)
/// into the contiguous real `out` (`n` per row), scaled by `scale`; `x` is overwritten.
pub(crate) fn c2r(x: &Array, out: &Array, scale: f64) -> Result<()> {
    match (x.dtype(), out.dtype()) {
        (DType::Complex64, DType::Float32) => c2r_t::<C32, f32, f32>(x, out, scale),
        (DType::Complex128, DType::Float64) => c2r_t::<C64, f64, f64>(x, out, scale),
        (a, b) => Err(Error::DTypeMismatch(format!(
            "internal: irfft of {a} into {b}"
        ))),
    }
}
