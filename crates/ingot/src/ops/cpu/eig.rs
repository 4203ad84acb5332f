//! The general (non-symmetric) eigenproblem on the CPU with faer: eigenvalues and right
//! eigenvectors of batches of row-major square matrices, real or complex, always complex out.
//!
//! faer reduces to Hessenberg form, runs the multishift QR to a (real or complex) Schur form and
//! back-substitutes for the vectors, as LAPACK's `geev` does. For real matrices the Schur form is
//! real: a complex conjugate pair of eigenvalues `re ± i im` occupies two consecutive positions
//! (the first with `im > 0`), and its vectors are stored as two real columns, the real and the
//! imaginary part; they are unpacked here into the two conjugate complex vectors, so conjugate
//! pairs are exact conjugates and real eigenvalues have exactly zero imaginary parts. Every
//! vector is then normalized as LAPACK normalizes them: Euclidean norm 1, largest component
//! real (and here positive).

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::evd;
use faer::traits::RealField;
use faer::Mat;
use num_complex::Complex;

use super::linalg::{dims, elems, for_batch, part, parts, scaled_copy, source, LaElem};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Eigenvalues (into `w: [B, n]`, complex) and optionally right eigenvectors (columns of
/// `v: [B, n, n]`, complex) of the matrices `a: [B, n, n]` (float32/64 with complex64/128
/// outputs, or complex with outputs of the same dtype).
pub(crate) fn eig(a: &Array, w: &Array, v: Option<&Array>) -> Result<()> {
    match (a.dtype(), w.dtype()) {
        (DType::Float32, DType::Complex64) => eig_real::<f32>(a, w, v),
        (DType::Float64, DType::Complex128) => eig_real::<f64>(a, w, v),
        (DType::Complex64, DType::Complex64) => eig_complex::<f32>(a, w, v),
        (DType::Complex128, DType::Complex128) => eig_complex::<f64>(a, w, v),
        (d, _) => Err(Error::UnsupportedDType {
            op: "eig",
            dtype: d.to_string(),
        }),
    }
}

/// A real element type faer's general eigensolver handles.
pub(crate) trait EigReal: RealField + LaElem {
    fn f64(self) -> f64;
}

impl EigReal for f32 {
    fn f64(self) -> f64 {
        self as f64
    }
}

impl EigReal for f64 {
    fn f64(self) -> f64 {
        self
    }
}

fn no_convergence() -> Error {
    Error::LinAlg("Eigenvalues did not converge".into())
}

fn compute(yes: bool) -> evd::ComputeEigenvectors {
    if yes {
        evd::ComputeEigenvectors::Yes
    } else {
        evd::ComputeEigenvectors::No
    }
}

fn eig_real<T: EigReal>(a: &Array, w: &Array, v: Option<&Array>) -> Result<()>
where
    Complex<T>: LaElem,
{
    let (count, n, _) = dims(a);
    let av = elems::<T>(a)?;
    let ws = parts::<Complex<T>>(w, count, n)?;
    let vs = v
        .map(|v| parts::<Complex<T>>(v, count, n * n))
        .transpose()?;
    for_batch(count, n, |i, par| {
        let a = &av[i * n * n..(i + 1) * n * n];
        let (scaled, unscale) = scaled_copy(a, n, n);
        let src = source(&scaled, a, n, n);
        let mut re = vec![T::of(0.0); n];
        let mut im = vec![T::of(0.0); n];
        let mut u = vs.as_ref().map(|_| Mat::<T>::zeros(n, n));
        let mut mem = MemBuffer::new(evd::evd_scratch::<T>(
            n,
            evd::ComputeEigenvectors::No,
            compute(u.is_some()),
            par,
            Default::default(),
        ));
        evd::evd_real(
            src,
            faer::diag::DiagMut::from_slice_mut(&mut re),
            faer::diag::DiagMut::from_slice_mut(&mut im),
            None,
            u.as_mut().map(|u| u.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| no_convergence())?;
        {
            let mut wp = part(&ws, i);
            for j in 0..n {
                wp[j] = Complex::new(re[j] * T::of(unscale), im[j] * T::of(unscale));
            }
        }
        if let (Some(vs), Some(u)) = (&vs, &u) {
            let mut cols = vec![Complex::new(0.0f64, 0.0); n * n];
            let mut j = 0;
            while j < n {
                let pair = im[j] != T::of(0.0) && j + 1 < n;
                for r in 0..n {
                    let x = Complex::new(
                        u[(r, j)].f64(),
                        if pair { u[(r, j + 1)].f64() } else { 0.0 },
                    );
                    cols[r * n + j] = x;
                    if pair {
                        cols[r * n + j + 1] = x.conj();
                    }
                }
                j += if pair { 2 } else { 1 };
            }
            normalize(&mut cols, n);
            let mut vp = part(vs, i);
            for (o, c) in vp.iter_mut().zip(&cols) {
                *o = Complex::new(T::of(c.re), T::of(c.im));
            }
        }
        Ok(())
    })
}

fn eig_complex<T: EigReal>(a: &Array, w: &Array, v: Option<&Array>) -> Result<()>
where
    Complex<T>: LaElem,
{
    let (count, n, _) = dims(a);
    let av = elems::<Complex<T>>(a)?;
    let ws = parts::<Complex<T>>(w, count, n)?;
    let vs = v
        .map(|v| parts::<Complex<T>>(v, count, n * n))
        .transpose()?;
    for_batch(count, n, |i, par| {
        let a = &av[i * n * n..(i + 1) * n * n];
        let (scaled, unscale) = scaled_copy(a, n, n);
        let src = source(&scaled, a, n, n);
        let mut s = vec![Complex::new(T::of(0.0), T::of(0.0)); n];
        let mut u = vs.as_ref().map(|_| Mat::<Complex<T>>::zeros(n, n));
        let mut mem = MemBuffer::new(evd::evd_scratch::<Complex<T>>(
            n,
            evd::ComputeEigenvectors::No,
            compute(u.is_some()),
            par,
            Default::default(),
        ));
        evd::evd_cplx(
            src,
            faer::diag::DiagMut::from_slice_mut(&mut s),
            None,
            u.as_mut().map(|u| u.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| no_convergence())?;
        {
            let mut wp = part(&ws, i);
            for (o, x) in wp.iter_mut().zip(&s) {
                *o = Complex::new(x.re * T::of(unscale), x.im * T::of(unscale));
            }
        }
        if let (Some(vs), Some(u)) = (&vs, &u) {
            let mut cols: Vec<Complex<f64>> = (0..n * n)
                .map(|k| {
                    let x = u[(k / n, k % n)];
                    Complex::new(x.re.f64(), x.im.f64())
                })
                .collect();
            normalize(&mut cols, n);
            let mut vp = part(vs, i);
            for (o, c) in vp.iter_mut().zip(&cols) {
                *o = Complex::new(T::of(c.re), T::of(c.im));
            }
        }
        Ok(())
    })
}

/// Scales each column of the row-major `n x n` matrix `v` to Euclidean norm 1 with its largest
/// component (the first of equal ones) real and positive. A zero column is left as it is.
fn normalize(v: &mut [Complex<f64>], n: usize) {
    for c in 0..n {
        let mut norm = 0.0f64;
        let mut big = (0usize, -1.0f64);
        for r in 0..n {
            let m = v[r * n + c].norm();
            norm = norm.hypot(m);
            if m > big.1 {
                big = (r, m);
            }
        }
        if norm == 0.0 || !norm.is_finite() {
            continue;
        }
        let phase = v[big.0 * n + c] / big.1;
        let f = phase.conj() / norm;
        for r in 0..n {
            v[r * n + c] *= f;
        }
        // exactly real, as LAPACK leaves it
        v[big.0 * n + c].im = 0.0;
    }
}
