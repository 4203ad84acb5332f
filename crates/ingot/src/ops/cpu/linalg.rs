//! Dense factorizations on the CPU with faer: LU (solve, inverse, determinants), Cholesky,
//! Householder QR, symmetric eigendecomposition and SVD, on batches of row-major matrices.
//!
//! Every function takes contiguous arrays `[..batch, rows, cols]` of one floating or complex
//! dtype and fills contiguous outputs of that dtype (singular values, eigenvalues and
//! `log|det|` of complex matrices come out with zero imaginary parts; the caller keeps the real
//! part). Each matrix is copied into a column-major faer matrix (faer's
//! preferred layout; the copy is O(n^2) next to O(n^3) of work). Batches of small matrices run
//! in parallel with one sequential factorization each; a single or large matrix uses faer's own
//! parallelism across every core.

use faer::dyn_stack::{MemBuffer, MemStack};
use faer::linalg::{cholesky, evd, householder, lu, qr, svd};
use faer::traits::ComplexField;
use faer::{Conj, Mat, MatMut, MatRef, Par};
use num_complex::Complex;
use rayon::prelude::*;

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// A float or complex dtype faer factorizes (complex64/complex128 as `num_complex::Complex`,
/// the layout of ingot's complex elements).
pub(crate) trait LaElem: ComplexField + Copy + Send + Sync + bytemuck::Pod {
    /// The largest `e` with `2^e` and `2^-e` both normal numbers of the (real) element type.
    const SCALE_EXP: i32;
    /// The real number `v`.
    fn of(v: f64) -> Self;
    /// The absolute value (modulus), in f64.
    fn modulus(self) -> f64;
    /// `self / |self|`: the sign of a nonzero real number, the phase of a complex one.
    fn unit(self) -> Self;
}

impl LaElem for f32 {
    const SCALE_EXP: i32 = 120;
    fn of(v: f64) -> Self {
        v as f32
    }
    fn modulus(self) -> f64 {
        self.abs() as f64
    }
    fn unit(self) -> Self {
        if self < 0.0 {
            -1.0
        } else {
            1.0
        }
    }
}

impl LaElem for f64 {
    const SCALE_EXP: i32 = 1000;
    fn of(v: f64) -> Self {
        v
    }
    fn modulus(self) -> f64 {
        self.abs()
    }
    fn unit(self) -> Self {
        if self < 0.0 {
            -1.0
        } else {
            1.0
        }
    }
}

impl LaElem for Complex<f32> {
    const SCALE_EXP: i32 = 120;
    fn of(v: f64) -> Self {
        Complex::new(v as f32, 0.0)
    }
    fn modulus(self) -> f64 {
        (self.re as f64).hypot(self.im as f64)
    }
    fn unit(self) -> Self {
        let m = self.modulus();
        if m == 0.0 {
            Complex::new(1.0, 0.0)
        } else {
            Complex::new((self.re as f64 / m) as f32, (self.im as f64 / m) as f32)
        }
    }
}

impl LaElem for Complex<f64> {
    const SCALE_EXP: i32 = 1000;
    fn of(v: f64) -> Self {
        Complex::new(v, 0.0)
    }
    fn modulus(self) -> f64 {
        self.re.hypot(self.im)
    }
    fn unit(self) -> Self {
        let m = self.modulus();
        if m == 0.0 {
            Complex::new(1.0, 0.0)
        } else {
            Complex::new(self.re / m, self.im / m)
        }
    }
}

/// Runs `$body` with `$T` the element type of `$dt`.
macro_rules! la_dispatch {
    ($dt:expr, $op:expr, $T:ident => $body:expr) => {
        match $dt {
            DType::Float32 => {
                type $T = f32;
                $body
            }
            DType::Float64 => {
                type $T = f64;
                $body
            }
            DType::Complex64 => {
                type $T = Complex<f32>;
                $body
            }
            DType::Complex128 => {
                type $T = Complex<f64>;
                $body
            }
            d => Err(Error::UnsupportedDType {
                op: $op,
                dtype: d.to_string(),
            }),
        }
    };
}

/// The contiguous host elements of `a`.
pub(super) fn elems<T: LaElem>(a: &Array) -> Result<&[T]> {
    host(a)?;
    let p = a.buffer().host_ptr().ok_or_else(host_error)?;
    // SAFETY: `a` is contiguous host memory of `size` elements of `T` (checked by `host`).
    Ok(unsafe {
        std::slice::from_raw_parts(
            p.add(a.layout().offset() * a.dtype().size()) as *const T,
            a.size(),
        )
    })
}

/// The contiguous host elements of the output `a`.
#[allow(clippy::mut_from_ref)]
fn elems_mut<T: LaElem>(a: &Array) -> Result<&mut [T]> {
    host(a)?;
    a.check_writable("linalg")?;
    let p = a.buffer().host_ptr().ok_or_else(host_error)?;
    // SAFETY: as above; outputs are fresh arrays no other reference aliases while we write.
    Ok(unsafe {
        std::slice::from_raw_parts_mut(
            p.add(a.layout().offset() * a.dtype().size()) as *mut T,
            a.size(),
        )
    })
}

fn host_error() -> Error {
    Error::Device("internal: CPU linear algebra given non-host memory".into())
}

fn host(a: &Array) -> Result<()> {
    if !a.is_contiguous() || a.buffer().host_ptr().is_none() {
        return Err(Error::Value(
            "internal: CPU linear algebra needs contiguous host arrays".into(),
        ));
    }
    Ok(())
}

/// `(batch, rows, cols)` of `[..batch, rows, cols]`.
pub(super) fn dims(a: &Array) -> (usize, usize, usize) {
    let nd = a.ndim();
    let (m, n) = (a.shape()[nd - 2], a.shape()[nd - 1]);
    (a.shape()[..nd - 2].iter().product(), m, n)
}

/// Runs `f(b, par)` for every matrix `b` of a batch of `count` matrices of about `n x n`:
/// matrices in parallel (each sequential) when there are several small ones, else one at a time
/// with faer's parallelism.
pub(super) fn for_batch(
    count: usize,
    n: usize,
    f: impl Fn(usize, Par) -> Result<()> + Sync,
) -> Result<()> {
    let threads = rayon::current_num_threads();
    if count == 1 || (n >= 192 && count < 2 * threads) {
        let par = if n >= 64 && threads > 1 {
            Par::rayon(0)
        } else {
            Par::Seq
        };
        (0..count).try_for_each(|b| f(b, par))
    } else {
        (0..count).into_par_iter().try_for_each(|b| f(b, Par::Seq))
    }
}

/// Writes the faer matrix `m` into the row-major `out` slice (`rows x cols`).
fn store<T: LaElem>(out: &mut [T], m: MatRef<'_, T>) {
    MatMut::from_row_major_slice_mut(out, m.nrows(), m.ncols()).copy_from(m);
}

/// A column-major copy of the row-major matrix `b` of `a`.
fn load<T: LaElem>(a: &[T], b: usize, m: usize, n: usize) -> Mat<T> {
    MatRef::from_row_major_slice(&a[b * m * n..(b + 1) * m * n], m, n).to_owned()
}

/// One output slice per matrix of `out` (`count` of `per` elements each), for parallel writes.
pub(super) type Parts<'a, T> = Vec<std::sync::Mutex<&'a mut [T]>>;

pub(super) fn parts<T: LaElem>(out: &Array, count: usize, per: usize) -> Result<Parts<'_, T>> {
    let all = elems_mut::<T>(out)?;
    if per == 0 {
        return Ok((0..count)
            .map(|_| std::sync::Mutex::new(&mut [][..]))
            .collect());
    }
    Ok(all.chunks_mut(per).map(std::sync::Mutex::new).collect())
}

pub(super) fn part<'a, 'b, T>(
    p: &'a [std::sync::Mutex<&'b mut [T]>],
    b: usize,
) -> std::sync::MutexGuard<'a, &'b mut [T]> {
    p[b].lock().unwrap_or_else(|e| e.into_inner())
}

/// The LU factors of matrix `b` (`n x n`): the combined factor matrix, its row permutation
/// (forward and inverse) and the number of transpositions.
struct Lu<T: LaElem> {
    lu: Mat<T>,
    fwd: Vec<usize>,
    inv: Vec<usize>,
    transpositions: usize,
}

impl<T: LaElem> Lu<T> {
    fn new(a: Mat<T>, par: Par) -> Lu<T> {
        let n = a.nrows();
        let mut lu = a;
        let mut fwd = vec![0usize; n];
        let mut inv = vec![0usize; n];
        let mut mem = MemBuffer::new(
            lu::partial_pivoting::factor::lu_in_place_scratch::<usize, T>(
                n,
                n,
                par,
                Default::default(),
            ),
        );
        let (info, _) = lu::partial_pivoting::factor::lu_in_place(
            lu.as_mut(),
            &mut fwd,
            &mut inv,
            par,
            MemStack::new(&mut mem),
            Default::default(),
        );
        Lu {
            lu,
            fwd,
            inv,
            transpositions: info.transposition_count,
        }
    }

    /// True when a pivot is exactly zero (LAPACK's `info > 0`).
    fn singular(&self) -> bool {
        (0..self.lu.nrows()).any(|i| self.lu[(i, i)] == T::of(0.0))
    }

    fn perm(&self) -> faer::perm::PermRef<'_, usize> {
        // SAFETY: `fwd` and `inv` are the permutation and its inverse computed by faer.
        unsafe { faer::perm::PermRef::new_unchecked(&self.fwd, &self.inv, self.fwd.len()) }
    }

    /// Solves in place for the columns of `rhs`.
    fn solve(&self, rhs: MatMut<'_, T>, par: Par) {
        let n = self.lu.nrows();
        let mut mem = MemBuffer::new(lu::partial_pivoting::solve::solve_in_place_scratch::<
            usize,
            T,
        >(n, rhs.ncols(), par));
        lu::partial_pivoting::solve::solve_in_place_with_conj(
            self.lu.as_ref(),
            self.lu.as_ref(),
            self.perm(),
            Conj::No,
            rhs,
            par,
            MemStack::new(&mut mem),
        );
    }
}

fn singular() -> Error {
    Error::LinAlg("Singular matrix".into())
}

/// `out = a^-1 b` for `a: [B, n, n]`, `b, out: [B, n, k]`; a singular matrix is an error.
pub(crate) fn solve(a: &Array, b: &Array, out: &Array) -> Result<()> {
    la_dispatch!(a.dtype(), "solve", T => solve_t::<T>(a, b, out))
}

fn solve_t<T: LaElem>(a: &Array, b: &Array, out: &Array) -> Result<()> {
    let (count, n, _) = dims(a);
    let k = b.shape()[b.ndim() - 1];
    let (av, bv) = (elems::<T>(a)?, elems::<T>(b)?);
    let outs = parts::<T>(out, count, n * k)?;
    for_batch(count, n, |i, par| {
        let f = Lu::new(load(av, i, n, n), par);
        if f.singular() {
            return Err(singular());
        }
        let mut x = load(bv, i, n, k);
        f.solve(x.as_mut(), par);
        store(&mut part(&outs, i), x.as_ref());
        Ok(())
    })
}

/// `out = a^-1` for `a, out: [B, n, n]`; a singular matrix is an error.
pub(crate) fn inv(a: &Array, out: &Array) -> Result<()> {
    la_dispatch!(a.dtype(), "inv", T => inv_t::<T>(a, out))
}

fn inv_t<T: LaElem>(a: &Array, out: &Array) -> Result<()> {
    let (count, n, _) = dims(a);
    let av = elems::<T>(a)?;
    let outs = parts::<T>(out, count, n * n)?;
    for_batch(count, n, |i, par| {
        let f = Lu::new(load(av, i, n, n), par);
        if f.singular() {
            return Err(singular());
        }
        let mut x = Mat::<T>::identity(n, n);
        f.solve(x.as_mut(), par);
        store(&mut part(&outs, i), x.as_ref());
        Ok(())
    })
}

/// Determinants (`det`) and/or the sign and log of the absolute value (`slogdet`) of
/// `a: [B, n, n]` into `[B]` outputs of `a`'s dtype.
pub(crate) fn det(a: &Array, det: Option<&Array>, slog: Option<(&Array, &Array)>) -> Result<()> {
    la_dispatch!(a.dtype(), "det", T => det_t::<T>(a, det, slog))
}

fn det_t<T: LaElem>(a: &Array, det: Option<&Array>, slog: Option<(&Array, &Array)>) -> Result<()> {
    let (count, n, _) = dims(a);
    let av = elems::<T>(a)?;
    let d_out = det.map(|d| parts::<T>(d, count, 1)).transpose()?;
    let s_out = slog
        .map(|(s, l)| Ok::<_, Error>((parts::<T>(s, count, 1)?, parts::<T>(l, count, 1)?)))
        .transpose()?;
    for_batch(count, n, |i, par| {
        // faer's LU multiplies by each pivot's reciprocal: with entries near the underflow
        // threshold a singular matrix leaves subnormal residuals instead of zeros, whose
        // reciprocals overflow (a NaN determinant where LAPACK gives 0). The factorisation runs
        // on the matrix scaled by a power of two into the normal range (exact), and
        // det(a) = det(a / s) * s^n.
        let (scaled, s) = scaled_copy(&av[i * n * n..(i + 1) * n * n], n, n);
        let f = Lu::new(scaled.unwrap_or_else(|| load(av, i, n, n)), par);
        let perm_sign = if f.transpositions % 2 == 0 { 1.0 } else { -1.0 };
        let mut sign = T::of(perm_sign);
        let mut prod = T::of(perm_sign);
        let mut logabs = 0.0f64;
        for j in 0..n {
            let d = f.lu[(j, j)];
            prod *= d;
            sign *= d.unit();
            logabs += d.modulus().ln();
        }
        if s != 1.0 {
            for _ in 0..n {
                prod *= T::of(s);
            }
            logabs += n as f64 * s.ln();
        }
        if f.singular() {
            // faer divides by a zero pivot where LAPACK skips the column: the later factors may
            // hold NaN, the determinant is 0 all the same.
            sign = T::of(0.0);
            logabs = f64::NEG_INFINITY;
            prod = T::of(0.0);
        }
        if let Some(d) = &d_out {
            part(d, i)[0] = prod;
        }
        if let Some((s, l)) = &s_out {
            part(s, i)[0] = sign;
            part(l, i)[0] = T::of(logabs);
        }
        Ok(())
    })
}

/// The Cholesky factor of `a: [B, n, n]` (lower triangle read) into `out`: L, or L^T with
/// `upper`. A matrix that is not positive definite is an error.
pub(crate) fn cholesky(a: &Array, out: &Array, upper: bool) -> Result<()> {
    la_dispatch!(a.dtype(), "cholesky", T => cholesky_t::<T>(a, out, upper))
}

fn cholesky_t<T: LaElem>(a: &Array, out: &Array, upper: bool) -> Result<()> {
    let (count, n, _) = dims(a);
    let av = elems::<T>(a)?;
    let outs = parts::<T>(out, count, n * n)?;
    for_batch(count, n, |i, par| {
        let src = MatRef::from_row_major_slice(&av[i * n * n..(i + 1) * n * n], n, n);
        let mut l = Mat::<T>::zeros(n, n);
        l.copy_from_triangular_lower(src);
        let mut mem = MemBuffer::new(cholesky::llt::factor::cholesky_in_place_scratch::<T>(
            n,
            par,
            Default::default(),
        ));
        cholesky::llt::factor::cholesky_in_place(
            l.as_mut(),
            Default::default(),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| Error::LinAlg("Matrix is not positive definite".into()))?;
        for c in 0..n {
            for r in 0..c {
                l[(r, c)] = T::of(0.0);
            }
        }
        let mut o = part(&outs, i);
        if upper {
            MatMut::from_row_major_slice_mut(&mut o, n, n).copy_from(l.adjoint());
        } else {
            store(&mut o, l.as_ref());
        }
        Ok(())
    })
}

/// Householder QR of `a: [B, m, n]`: `q: [B, m, m or k]`, `r: [B, m or k, n]` (k = min(m, n),
/// `complete` for the square Q).
pub(crate) fn qr(a: &Array, q: &Array, r: &Array, complete: bool) -> Result<()> {
    la_dispatch!(a.dtype(), "qr", T => qr_t::<T>(a, q, r, complete))
}

fn qr_t<T: LaElem>(a: &Array, q: &Array, r: &Array, complete: bool) -> Result<()> {
    let (count, m, n) = dims(a);
    let k = m.min(n);
    let qc = if complete { m } else { k };
    let av = elems::<T>(a)?;
    let (qs, rs) = (parts::<T>(q, count, m * qc)?, parts::<T>(r, count, qc * n)?);
    for_batch(count, m.max(n), |i, par| {
        let mut f = load(av, i, m, n);
        let bs = qr::no_pivoting::factor::recommended_block_size::<T>(m, n);
        let mut coeff = Mat::<T>::zeros(bs, k);
        {
            let mut mem = MemBuffer::new(qr::no_pivoting::factor::qr_in_place_scratch::<T>(
                m,
                n,
                bs,
                par,
                Default::default(),
            ));
            qr::no_pivoting::factor::qr_in_place(
                f.as_mut(),
                coeff.as_mut(),
                par,
                MemStack::new(&mut mem),
                Default::default(),
            );
        }
        // R: the upper trapezoid of the first qc rows.
        let mut rr = Mat::<T>::zeros(qc, n);
        for c in 0..n {
            for row in 0..qc.min(c + 1).min(m) {
                rr[(row, c)] = f[(row, c)];
            }
        }
        store(&mut part(&rs, i), rr.as_ref());
        // The reflectors: unit lower trapezoid m x k.
        let mut basis = Mat::<T>::zeros(m, k);
        for c in 0..k {
            basis[(c, c)] = T::of(1.0);
            for row in c + 1..m {
                basis[(row, c)] = f[(row, c)];
            }
        }
        let mut qq = Mat::<T>::identity(m, qc);
        let mut mem = MemBuffer::new(
            householder::apply_block_householder_sequence_on_the_left_in_place_scratch::<T>(
                m, bs, qc,
            ),
        );
        householder::apply_block_householder_sequence_on_the_left_in_place_with_conj(
            basis.as_ref(),
            coeff.as_ref(),
            Conj::No,
            qq.as_mut(),
            par,
            MemStack::new(&mut mem),
        );
        store(&mut part(&qs, i), qq.as_ref());
        Ok(())
    })
}

/// For a matrix (`rows x cols`, row-major `a`) whose largest entry is beyond 1e15 or below
/// 1e-15, a copy scaled by a power of two to bring that entry near 1, and the factor that
/// scales singular values or eigenvalues back (vectors are unchanged); else `(None, 1)`.
/// Entries near the overflow (underflow) threshold make the iterations' norms inf (0) and
/// faer's SVD and eigensolver do not converge; LAPACK's drivers scale the same way.
pub(super) fn scaled_copy<T: LaElem>(a: &[T], rows: usize, cols: usize) -> (Option<Mat<T>>, f64) {
    let amax = a.iter().map(|v| v.modulus()).fold(0.0, f64::max);
    if !amax.is_finite() || amax == 0.0 || (1e-15..=1e15).contains(&amax) {
        return (None, 1.0);
    }
    let e = (amax.log2().round() as i32).clamp(-T::SCALE_EXP, T::SCALE_EXP);
    let f = T::of(2f64.powi(-e));
    let mut b = MatRef::from_row_major_slice(a, rows, cols).to_owned();
    for c in 0..cols {
        for r in 0..rows {
            b[(r, c)] *= f;
        }
    }
    (Some(b), 2f64.powi(e))
}

/// The matrix to factor: the scaled copy when [`scaled_copy`] made one, else `a` itself.
pub(super) fn source<'a, T: LaElem>(
    scaled: &'a Option<Mat<T>>,
    a: &'a [T],
    rows: usize,
    cols: usize,
) -> MatRef<'a, T> {
    match scaled {
        Some(b) => b.as_ref(),
        None => MatRef::from_row_major_slice(a, rows, cols),
    }
}

/// Eigenvalues (ascending, into `w: [B, n]`) and optionally eigenvectors (columns of
/// `v: [B, n, n]`) of the symmetric matrices `a: [B, n, n]` (lower triangle read).
pub(crate) fn eigh(a: &Array, w: &Array, v: Option<&Array>) -> Result<()> {
    la_dispatch!(a.dtype(), "eigh", T => eigh_t::<T>(a, w, v))
}

fn eigh_t<T: LaElem>(a: &Array, w: &Array, v: Option<&Array>) -> Result<()> {
    let (count, n, _) = dims(a);
    let av = elems::<T>(a)?;
    let ws = parts::<T>(w, count, n)?;
    let vs = v.map(|v| parts::<T>(v, count, n * n)).transpose()?;
    for_batch(count, n, |i, par| {
        let a = &av[i * n * n..(i + 1) * n * n];
        let (scaled, unscale) = scaled_copy(a, n, n);
        let src = source(&scaled, a, n, n);
        let mut s = vec![T::of(0.0); n];
        let mut u = vs.as_ref().map(|_| Mat::<T>::zeros(n, n));
        let compute = if u.is_some() {
            evd::ComputeEigenvectors::Yes
        } else {
            evd::ComputeEigenvectors::No
        };
        let mut mem = MemBuffer::new(evd::self_adjoint_evd_scratch::<T>(
            n,
            compute,
            par,
            Default::default(),
        ));
        evd::self_adjoint_evd(
            src,
            faer::diag::DiagMut::from_slice_mut(&mut s),
            u.as_mut().map(|u| u.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| Error::LinAlg("Eigenvalues did not converge".into()))?;
        if unscale != 1.0 {
            for v in &mut s {
                *v *= T::of(unscale);
            }
        }
        part(&ws, i).copy_from_slice(&s);
        if let (Some(vs), Some(u)) = (&vs, &u) {
            store(&mut part(vs, i), u.as_ref());
        }
        Ok(())
    })
}

/// Singular values (descending, into `s: [B, k]`) of `a: [B, m, n]` and optionally the vectors:
/// `u: [B, m, m or k]` and `vt: [B, n or k, n]` (`full` for the square ones).
pub(crate) fn svd(a: &Array, s: &Array, uv: Option<(&Array, &Array)>, full: bool) -> Result<()> {
    la_dispatch!(a.dtype(), "svd", T => svd_t::<T>(a, s, uv, full))
}

fn svd_t<T: LaElem>(a: &Array, s: &Array, uv: Option<(&Array, &Array)>, full: bool) -> Result<()> {
    let (count, m, n) = dims(a);
    let k = m.min(n);
    let (uc, vr) = if full { (m, n) } else { (k, k) };
    let av = elems::<T>(a)?;
    let ss = parts::<T>(s, count, k)?;
    let outs = uv
        .map(|(u, vt)| {
            Ok::<_, Error>((
                parts::<T>(u, count, m * uc)?,
                parts::<T>(vt, count, vr * n)?,
            ))
        })
        .transpose()?;
    let mode = match (&outs, full) {
        (None, _) => svd::ComputeSvdVectors::No,
        (Some(_), true) => svd::ComputeSvdVectors::Full,
        (Some(_), false) => svd::ComputeSvdVectors::Thin,
    };
    for_batch(count, m.max(n), |i, par| {
        let a = &av[i * m * n..(i + 1) * m * n];
        let (scaled, unscale) = scaled_copy(a, m, n);
        let src = source(&scaled, a, m, n);
        let mut sv = vec![T::of(0.0); k];
        let mut u = outs.as_ref().map(|_| Mat::<T>::zeros(m, uc));
        let mut v = outs.as_ref().map(|_| Mat::<T>::zeros(n, vr));
        let mut mem = MemBuffer::new(svd::svd_scratch::<T>(
            m,
            n,
            mode,
            mode,
            par,
            Default::default(),
        ));
        svd::svd(
            src,
            faer::diag::DiagMut::from_slice_mut(&mut sv),
            u.as_mut().map(|u| u.as_mut()),
            v.as_mut().map(|v| v.as_mut()),
            par,
            MemStack::new(&mut mem),
            Default::default(),
        )
        .map_err(|_| Error::LinAlg("SVD did not converge".into()))?;
        if unscale != 1.0 {
            for v in &mut sv {
                *v *= T::of(unscale);
            }
        }
        part(&ss, i).copy_from_slice(&sv);
        if let (Some((us, vts)), Some(u), Some(v)) = (&outs, &u, &v) {
            store(&mut part(us, i), u.as_ref());
            MatMut::from_row_major_slice_mut(&mut part(vts, i), vr, n).copy_from(v.adjoint());
        }
        Ok(())
    })
}
