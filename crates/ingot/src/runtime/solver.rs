//! The arguments of the optional dense-solver capability ([`super::Runtime::solver`]): LAPACK's
//! factorizations on batches of column-major matrices in device memory (cuSOLVER on CUDA).
//!
//! Every job works in place on memory the caller allocated, in LAPACK's conventions: matrices
//! column-major, pivots 1-based (int64), `info` one int32 per matrix (0 on success; for LU the
//! 1-based index of the first zero pivot, for Cholesky the order of the first non-positive
//! minor, for eigh/svd the number of values that did not converge). The caller reads `info`.

use super::memory::Buffer;
use crate::dtype::DType;

/// A batch of `count` column-major `rows x cols` matrices: element `(i, j)` of matrix `b` is
/// element `offset + b * stride + i + j * ld` of the buffer (`ld >= rows`).
#[derive(Copy, Clone, Debug)]
pub struct Matrices<'a> {
    /// The memory.
    pub buffer: &'a Buffer,
    /// Elements before the first matrix.
    pub offset: usize,
    /// Rows of each matrix.
    pub rows: usize,
    /// Columns of each matrix.
    pub cols: usize,
    /// The leading dimension (elements between columns).
    pub ld: usize,
    /// Elements between matrices.
    pub stride: usize,
    /// Matrices in the batch.
    pub count: usize,
}

/// A batch of `count` vectors of `len` elements, vector `b` starting at `offset + b * stride`.
#[derive(Copy, Clone, Debug)]
pub struct Vectors<'a> {
    /// The memory.
    pub buffer: &'a Buffer,
    /// Elements before the first vector.
    pub offset: usize,
    /// Elements of each vector.
    pub len: usize,
    /// Elements between vectors.
    pub stride: usize,
}

/// Which algorithm computes an SVD.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum SvdDriver {
    /// The backend's choice.
    #[default]
    Default,
    /// Householder bidiagonalisation and QR iteration (LAPACK's `gesvd`).
    Qr,
    /// One-sided Jacobi rotations (cuSOLVER's `gesvdj`).
    Jacobi,
}

/// One factorization job.
#[derive(Copy, Clone, Debug)]
pub enum SolverJob<'a> {
    /// `a = P L U` in place (`getrf`); `pivots` (int64, 1-based) of `min(rows, cols)` each.
    Lu {
        a: Matrices<'a>,
        pivots: Vectors<'a>,
        info: Vectors<'a>,
    },
    /// `b = A^-1 b` in place from the factors of [`SolverJob::Lu`] (`getrs`, square `lu`).
    LuSolve {
        lu: Matrices<'a>,
        pivots: Vectors<'a>,
        b: Matrices<'a>,
    },
    /// The lower Cholesky factor in place (`potrf`, lower triangle read and written; the upper
    /// triangle is left as it was).
    Cholesky { a: Matrices<'a>, info: Vectors<'a> },
    /// Householder QR in place (`geqrf`): R on and above the diagonal, the reflectors below,
    /// their scalars in `tau` (`min(rows, cols)` each).
    Qr { a: Matrices<'a>, tau: Vectors<'a> },
    /// The first `a.cols` columns of Q in place (`orgqr`) from the first `k` reflectors stored
    /// in `a`'s columns and `tau` (`a.rows >= a.cols >= k`).
    QrQ {
        a: Matrices<'a>,
        tau: Vectors<'a>,
        k: usize,
    },
    /// The eigenvalues (ascending, into `w`) of the symmetric/Hermitian matrices of which the
    /// lower triangle of `a` is read; with `vectors`, `a` is overwritten by the eigenvectors (one
    /// per column) (`syevd`).
    Eigh {
        a: Matrices<'a>,
        w: Vectors<'a>,
        vectors: bool,
        info: Vectors<'a>,
    },
    /// `a = U diag(s) V^H` (`a.rows >= a.cols`; `a` is destroyed): singular values descending
    /// into `s`; with `uv`, the first `u.cols` columns of U into `u` (`a.cols` or `a.rows` of
    /// them) and the first `vt.rows` rows of V^H into `vt` (`a.cols`).
    Svd {
        a: Matrices<'a>,
        s: Vectors<'a>,
        uv: Option<(Matrices<'a>, Matrices<'a>)>,
        driver: SvdDriver,
        info: Vectors<'a>,
    },
}

/// A job on matrices of `dtype` (the real or complex floating dtype of every matrix; vectors of
/// eigenvalues and singular values hold the corresponding real dtype).
#[derive(Copy, Clone, Debug)]
pub struct Solver<'a> {
    /// The job.
    pub job: SolverJob<'a>,
    /// The matrices' dtype.
    pub dtype: DType,
}
