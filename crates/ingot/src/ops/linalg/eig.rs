//! The general eigenproblem (`eig`, `eigvals`; array API 2025.12): eigenvalues and right
//! eigenvectors of square matrices that need not be symmetric, complex results for real and
//! complex inputs alike.
//!
//! The CPU runs faer's Hessenberg-Schur solver (`ops/cpu/eig.rs`); other devices compute on host
//! copies and get the results back (cuSOLVER's `cusolverDnXgeev` is not wired in yet). Eigenvalues come in the solver's order (not sorted, as NumPy's); each
//! eigenvector has norm 1 and its largest component real, as LAPACK's.

use crate::array::Array;
use crate::device::Device;
use crate::error::Result;
use crate::ops::cpu::eig as cpu;

use super::factor::{batch_of, cast, dispatch, dtypes, square, with};

/// Eigenvalues and right eigenvectors (one per column) of each matrix of `a: [..., n, n]`:
/// `a @ v == v * w[..., None, :]`. Complex results: complex64 for float32 (and narrower)
/// inputs, complex128 for float64 (and integer inputs, as float64).
///
/// ```
/// use ingot::{Array, Device};
/// let a = Array::from_vec(vec![0.0f64, -1.0, 1.0, 0.0], &[2, 2], Device::Cpu).unwrap();
/// let (w, _v) = ingot::ops::linalg::eig(&a).unwrap();
/// let w: Vec<num_complex::Complex<f64>> = w.to_vec().unwrap();
/// assert!((w[0].im.abs() - 1.0).abs() < 1e-12 && w[0].re.abs() < 1e-12);
/// assert_eq!(w[1], w[0].conj());
/// ```
pub fn eig(a: &Array) -> Result<(Array, Array)> {
    let r = general(a, true)?;
    Ok((r[0].clone(), r[1].clone()))
}

/// The eigenvalues of each matrix of `a: [..., n, n]` (complex; see [`eig`]).
pub fn eigvals(a: &Array) -> Result<Array> {
    Ok(general(a, false)?.remove(0))
}

fn general(a: &Array, vectors_too: bool) -> Result<Vec<Array>> {
    let op = if vectors_too { "eig" } else { "eigvals" };
    let n = square(op, a)?;
    let device = a.device();
    let (cd, _) = dtypes(op, a.dtype(), device)?;
    let wd = if cd.is_complex() {
        cd
    } else {
        cd.complex_dtype()
    };
    crate::runtime::check_dtype(device, wd)?;
    let x = cast(a, cd)?;
    let batch = batch_of(&x);
    if x.size() == 0 {
        let w = Array::empty(&with(&batch, &[n]), wd, device)?;
        let v = Array::empty(a.shape(), wd, device)?;
        return Ok(if vectors_too { vec![w, v] } else { vec![w] });
    }
    dispatch(
        &[&x],
        |h| {
            let w = Array::empty(&with(&batch, &[n]), wd, Device::Cpu)?;
            let xc = h[0].contiguous()?;
            if vectors_too {
                let v = Array::empty(h[0].shape(), wd, Device::Cpu)?;
                cpu::eig(&xc, &w, Some(&v))?;
                Ok(vec![w, v])
            } else {
                cpu::eig(&xc, &w, None)?;
                Ok(vec![w])
            }
        },
        || Ok(None),
    )
}
