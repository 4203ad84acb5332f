//! The array API's `fft` extension: complex, real-to-complex and Hermitian transforms over one
//! or several axes, with the standard's `n`/`s` (truncate or zero-pad), `axis`/`axes` and `norm`.
//!
//! Each 1-D transform moves its axis last, resizes it into a fresh contiguous array and runs
//! over the rows: on the CPU backend (rustfft/realfft), or on the device's FFT library
//! ([`crate::runtime::Runtime::fft`]: cuFFT on CUDA); devices without one transform on the host
//! and move the result back.

use super::complex::conj;
use super::op::BinaryOp;
use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::layout::{IndexItem, Layout};
use crate::runtime::fft::{FftJob, FftKind};

/// The scaling of a transform pair (`norm=` of the standard).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FftNorm {
    /// No scaling forward, `1/n` backward (the default).
    Backward,
    /// `1/sqrt(n)` both ways.
    Ortho,
    /// `1/n` forward, none backward.
    Forward,
}

impl FftNorm {
    /// Parses `"backward"`, `"ortho"` or `"forward"`.
    pub fn parse(s: &str) -> Result<FftNorm> {
        match s {
            "backward" => Ok(FftNorm::Backward),
            "ortho" => Ok(FftNorm::Ortho),
            "forward" => Ok(FftNorm::Forward),
            _ => Err(Error::Value(format!(
                "invalid norm {s:?}: expected \"backward\", \"ortho\" or \"forward\""
            ))),
        }
    }

    /// The norm of the opposite direction (for the Hermitian transforms).
    fn swap(self) -> FftNorm {
        match self {
            FftNorm::Backward => FftNorm::Forward,
            FftNorm::Ortho => FftNorm::Ortho,
            FftNorm::Forward => FftNorm::Backward,
        }
    }

    fn scale(self, n: usize, inverse: bool) -> f64 {
        match (self, inverse) {
            (FftNorm::Ortho, _) => 1.0 / (n as f64).sqrt(),
            (FftNorm::Backward, true) | (FftNorm::Forward, false) => 1.0 / n as f64,
            _ => 1.0,
        }
    }
}

/// The complex dtype a complex transform of `d` computes in (NumPy's: float32 and the 16-bit
/// floats give complex64, everything else complex128).
fn complex_of(d: DType) -> DType {
    match d {
        DType::Complex64 | DType::Float32 | DType::Float16 | DType::BFloat16 => DType::Complex64,
        _ => DType::Complex128,
    }
}

/// The real dtype a real transform of `d` computes in.
fn real_of(op: &'static str, d: DType) -> Result<DType> {
    if d.is_complex() {
        return Err(Error::UnsupportedDType {
            op,
            dtype: d.to_string(),
        });
    }
    Ok(match d {
        DType::Float32 | DType::Float16 | DType::BFloat16 => DType::Float32,
        _ => DType::Float64,
    })
}

/// The contiguous `a` as a flat real array (complex elements as two reals): a view.
fn flat_real(a: &Array) -> Result<Array> {
    let parts = if a.dtype().is_complex() { 2 } else { 1 };
    let layout = Layout::new(vec![a.size() * parts], vec![1], a.layout().offset() * parts)?;
    Array::from_parts(a.buffer().clone(), layout, a.dtype().real_dtype())
}

/// Runs `kind` over the rows of the contiguous `input` into the fresh contiguous `output`
/// (complex transforms: the same array, or on GPUs a distinct one), transform length `n`,
/// scaled by `scale`. Only complex-to-real transforms write to `input` (a fresh copy then).
fn run_rows(kind: FftKind, input: &Array, output: &Array, n: usize, scale: f64) -> Result<()> {
    let dev = output.device();
    let host = |i: &Array, o: &Array| match kind {
        FftKind::C2C { inverse } => {
            if !i.shares_buffer(o) {
                o.assign(i)?;
            }
            super::cpu::fft_c2c(o, inverse, scale)
        }
        FftKind::R2C => super::cpu::fft_r2c(i, o, scale),
        FftKind::C2R => super::cpu::fft_c2r(i, o, scale),
    };
    if dev == Device::Cpu {
        return host(input, output);
    }
    let m = n / 2 + 1;
    let (dtype, batch) = match kind {
        FftKind::C2C { .. } => (output.dtype(), output.size() / n),
        FftKind::R2C => (output.dtype(), output.size() / m),
        FftKind::C2R => (input.dtype(), output.size() / n),
    };
    if kind == FftKind::C2R && input.size() > 0 {
        // NumPy ignores the imaginary parts of the zero and Nyquist terms; cuFFT need not.
        let im = input.complex_part(true)?;
        let zero = Array::scalar(Scalar::Int(0), im.dtype(), dev)?;
        let at = |j: usize| im.index(&[IndexItem::Ellipsis, IndexItem::Int(j as isize)]);
        at(0)?.assign(&zero)?;
        if n.is_multiple_of(2) {
            at(m - 1)?.assign(&zero)?;
        }
    }
    let job = FftJob {
        kind,
        dtype,
        n,
        batch,
        input: (input.buffer(), input.layout().offset()),
        output: (output.buffer(), output.layout().offset()),
    };
    if dev.runtime()?.fft(&job)? {
        if scale != 1.0 {
            let flat = flat_real(output)?;
            let s = Array::scalar(Scalar::Float(scale), flat.dtype(), dev)?;
            super::binary_into(BinaryOp::Multiply, &flat, &s, &flat)?;
        }
        return Ok(());
    }
    let hi = input.to_device(Device::Cpu)?;
    let ho = if input.shares_buffer(output) {
        hi.clone()
    } else {
        Array::empty(output.shape(), output.dtype(), Device::Cpu)?
    };
    host(&hi, &ho)?;
    output.assign(&ho.to_device(dev)?)
}

/// `x` with axis `ax` moved last (a view), and the permutation that undoes it.
fn axis_last(x: &Array, ax: usize) -> Result<(Array, Vec<usize>)> {
    let nd = x.ndim();
    let mut order: Vec<usize> = (0..nd).filter(|&i| i != ax).collect();
    order.push(ax);
    let mut back = vec![0; nd];
    for (i, &o) in order.iter().enumerate() {
        back[o] = i;
    }
    Ok((x.permute(&order)?, back))
}

/// Whether a GPU transform can read the rows of `x` in place: contiguous, of the transform's
/// `dtype` and length `n` (the CPU's complex transforms work in place, so they always copy).
fn as_is(x: &Array, n: usize, dtype: DType) -> bool {
    x.device() != Device::Cpu
        && x.is_contiguous()
        && x.dtype() == dtype
        && x.shape().last() == Some(&n)
}

/// A fresh contiguous array of `dtype`: `x` with its last axis truncated or zero-padded to `n`.
fn resized(x: &Array, n: usize, dtype: DType) -> Result<Array> {
    let mut shape = x.shape().to_vec();
    let len = shape.pop().unwrap_or(1);
    shape.push(n);
    let out = if n > len {
        super::full(&shape, Scalar::Int(0), dtype, x.device())?
    } else {
        Array::empty(&shape, dtype, x.device())?
    };
    let keep = [
        IndexItem::Ellipsis,
        IndexItem::Slice {
            start: None,
            stop: Some(len.min(n) as isize),
            step: None,
        },
    ];
    out.index(&keep)?.assign(&x.index(&keep)?)?;
    Ok(out)
}

fn check_axis(op: &str, x: &Array, axis: isize) -> Result<usize> {
    if x.ndim() == 0 {
        return Err(Error::Shape(format!(
            "{op}: a 0-d array has no axis to transform"
        )));
    }
    Layout::normalize_axis(axis, x.ndim())
}

fn check_n(op: &str, n: usize) -> Result<usize> {
    if n == 0 {
        return Err(Error::Value(format!(
            "{op}: invalid number of data points 0 (must be at least 1)"
        )));
    }
    Ok(n)
}

/// The 1-D complex FFT (`inverse`: `ifft`) of `x` along `axis`, over `n` points (default: the
/// axis length; fewer truncate, more zero-pad). Real inputs are converted to complex.
pub fn fft(
    x: &Array,
    n: Option<usize>,
    axis: isize,
    inverse: bool,
    norm: FftNorm,
) -> Result<Array> {
    let op = if inverse { "ifft" } else { "fft" };
    let ax = check_axis(op, x, axis)?;
    let n = check_n(op, n.unwrap_or(x.shape()[ax]))?;
    let (moved, back) = axis_last(x, ax)?;
    let cd = complex_of(x.dtype());
    let (input, rows) = if as_is(&moved, n, cd) {
        // Out of place from the caller's array, which cuFFT's complex transforms leave intact.
        (moved.clone(), Array::empty(moved.shape(), cd, x.device())?)
    } else {
        let r = resized(&moved, n, cd)?;
        (r.clone(), r)
    };
    run_rows(
        FftKind::C2C { inverse },
        &input,
        &rows,
        n,
        norm.scale(n, inverse),
    )?;
    rows.permute(&back)
}

/// The 1-D FFT of the real `x` along `axis`: the `n / 2 + 1` non-negative frequency terms.
pub fn rfft(x: &Array, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Array> {
    let ax = check_axis("rfft", x, axis)?;
    let rd = real_of("rfft", x.dtype())?;
    let n = check_n("rfft", n.unwrap_or(x.shape()[ax]))?;
    let (moved, back) = axis_last(x, ax)?;
    // cuFFT's real-to-complex transforms leave their input intact: no copy when none is needed.
    let rows = if as_is(&moved, n, rd) {
        moved.clone()
    } else {
        resized(&moved, n, rd)?
    };
    let mut shape = rows.shape().to_vec();
    *shape.last_mut().expect("at least one axis") = n / 2 + 1;
    let out = Array::empty(&shape, rd.complex_dtype(), x.device())?;
    run_rows(FftKind::R2C, &rows, &out, n, norm.scale(n, false))?;
    out.permute(&back)
}

/// The inverse of [`rfft`]: `n` real points (default `2 * (m - 1)` for `m` input terms) along
/// `axis` from the non-negative frequency terms of `x`.
pub fn irfft(x: &Array, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Array> {
    let ax = check_axis("irfft", x, axis)?;
    let m = x.shape()[ax];
    let n = check_n("irfft", n.unwrap_or(2 * m.saturating_sub(1)))?;
    let cd = complex_of(x.dtype());
    let (moved, back) = axis_last(x, ax)?;
    let rows = resized(&moved, n / 2 + 1, cd)?;
    let mut shape = rows.shape().to_vec();
    *shape.last_mut().expect("at least one axis") = n;
    let out = Array::empty(&shape, cd.real_dtype(), x.device())?;
    run_rows(FftKind::C2R, &rows, &out, n, norm.scale(n, true))?;
    out.permute(&back)
}

/// The FFT of a signal with Hermitian symmetry given by its non-negative frequency terms `x`:
/// `n` real points (default `2 * (m - 1)`).
pub fn hfft(x: &Array, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Array> {
    let x = if x.dtype().is_complex() {
        conj(x)?
    } else {
        x.clone()
    };
    irfft(&x, n, axis, norm.swap())
}

/// The inverse of [`hfft`]: the `n / 2 + 1` non-negative frequency terms of the real `x`.
pub fn ihfft(x: &Array, n: Option<usize>, axis: isize, norm: FftNorm) -> Result<Array> {
    conj(&rfft(x, n, axis, norm.swap())?)
}

/// The axes and sizes of an n-d transform, as NumPy resolves `s` and `axes`: all axes when
/// both are absent, the last `len(s)` axes when only `s` is given.
fn plan_axes(
    op: &str,
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    default_last: impl Fn(usize) -> usize,
) -> Result<Vec<(usize, usize)>> {
    let nd = x.ndim();
    let axes: Vec<usize> = match (axes, s) {
        (Some(a), _) => a
            .iter()
            .map(|&a| Layout::normalize_axis(a, nd))
            .collect::<Result<_>>()?,
        (None, Some(s)) => {
            if s.len() > nd {
                return Err(Error::Shape(format!(
                    "{op}: s has {} entries for an array of {nd} axes",
                    s.len()
                )));
            }
            (nd - s.len()..nd).collect()
        }
        (None, None) => (0..nd).collect(),
    };
    let mut seen = axes.clone();
    seen.sort_unstable();
    if seen.windows(2).any(|w| w[0] == w[1]) {
        return Err(Error::Value(format!("{op}: repeated axis in axes")));
    }
    if let Some(s) = s {
        if s.len() != axes.len() {
            return Err(Error::Value(format!(
                "{op}: s and axes have different lengths ({} and {})",
                s.len(),
                axes.len()
            )));
        }
    }
    let last = axes.len().saturating_sub(1);
    Ok(axes
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let n = match s {
                Some(s) => s[i],
                None if i == last => default_last(x.shape()[a]),
                None => x.shape()[a],
            };
            (a, n)
        })
        .collect())
}

/// The n-d complex FFT (`inverse`: `ifftn`) over `axes` with sizes `s` (NumPy's defaults).
pub fn fftn(
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    inverse: bool,
    norm: FftNorm,
) -> Result<Array> {
    let op = if inverse { "ifftn" } else { "fftn" };
    let plan = plan_axes(op, x, s, axes, |n| n)?;
    let mut r = if x.dtype().is_complex() {
        x.clone()
    } else {
        x.astype(complex_of(x.dtype()))?
    };
    if plan.is_empty() {
        return r.copy();
    }
    for &(a, n) in plan.iter().rev() {
        r = fft(&r, Some(n), a as isize, inverse, norm)?;
    }
    Ok(r)
}

/// The n-d FFT of the real `x`: [`rfft`] over the last of `axes`, complex FFTs over the others.
pub fn rfftn(
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: FftNorm,
) -> Result<Array> {
    let plan = plan_axes("rfftn", x, s, axes, |n| n)?;
    let Some(&(la, ln)) = plan.last() else {
        return Err(Error::Value("rfftn: no axes to transform".into()));
    };
    let mut r = rfft(x, Some(ln), la as isize, norm)?;
    for &(a, n) in plan[..plan.len() - 1].iter().rev() {
        r = fft(&r, Some(n), a as isize, false, norm)?;
    }
    Ok(r)
}

/// The inverse of [`rfftn`]: complex inverse FFTs over all but the last of `axes`, then
/// [`irfft`] over the last (default size `2 * (m - 1)`).
pub fn irfftn(
    x: &Array,
    s: Option<&[usize]>,
    axes: Option<&[isize]>,
    norm: FftNorm,
) -> Result<Array> {
    let plan = plan_axes("irfftn", x, s, axes, |m| 2 * m.saturating_sub(1))?;
    let Some(&(la, ln)) = plan.last() else {
        return Err(Error::Value("irfftn: no axes to transform".into()));
    };
    let mut r = x.clone();
    for &(a, n) in plan[..plan.len() - 1].iter() {
        r = fft(&r, Some(n), a as isize, true, norm)?;
    }
    irfft(&r, Some(ln), la as isize, norm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_complex::Complex;

    fn naive(x: &[Complex<f64>], sign: f64) -> Vec<Complex<f64>> {
        let n = x.len();
        (0..n)
            .map(|k| {
                x.iter()
                    .enumerate()
                    .fold(Complex::new(0.0, 0.0), |acc, (j, &v)| {
                        let t = sign * 2.0 * std::f64::consts::PI * (j * k) as f64 / n as f64;
                        acc + v * Complex::new(t.cos(), t.sin())
                    })
            })
            .collect()
    }

    #[test]
    fn fft_matches_the_definition_and_inverts() {
        let v: Vec<Complex<f64>> = (0..12)
            .map(|i| Complex::new((i as f64 * 0.7).sin(), (i as f64 * 1.3).cos()))
            .collect();
        let a = Array::from_vec(v.clone(), &[12], Device::Cpu).unwrap();
        let f = fft(&a, None, -1, false, FftNorm::Backward).unwrap();
        let got = f.contiguous().unwrap().to_vec::<Complex<f64>>().unwrap();
        for (g, w) in got.iter().zip(naive(&v, -1.0)) {
            assert!((g - w).norm() < 1e-12, "{g} vs {w}");
        }
        let back = fft(&f, None, 0, true, FftNorm::Backward).unwrap();
        let b = back.contiguous().unwrap().to_vec::<Complex<f64>>().unwrap();
        for (g, w) in b.iter().zip(&v) {
            assert!((g - w).norm() < 1e-12);
        }
    }

    #[test]
    fn real_transforms_round_trip_with_padding() {
        let v: Vec<f64> = (0..10).map(|i| (i as f64).sqrt()).collect();
        let a = Array::from_vec(v.clone(), &[2, 5], Device::Cpu).unwrap();
        let r = rfft(&a, Some(8), 1, FftNorm::Ortho).unwrap();
        assert_eq!(r.shape(), &[2, 5]);
        let back = irfft(&r, Some(8), 1, FftNorm::Ortho).unwrap();
        let b = back.contiguous().unwrap().to_vec::<f64>().unwrap();
        for row in 0..2 {
            for j in 0..8 {
                let want = if j < 5 { v[row * 5 + j] } else { 0.0 };
                assert!((b[row * 8 + j] - want).abs() < 1e-12);
            }
        }
    }
}
