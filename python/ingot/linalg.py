"""The array API's ``linalg`` extension (``ingot.linalg``), batched over leading axes.

On the CPU the factorizations run on faer, on CUDA on cuSOLVER (cuBLAS for products), on devices
without a dense solver (Metal) on the host with a copy each way; the functions built on them
(norms, ``pinv``, ``matrix_rank``, ``trace``, ...) stay on the array's device. float16 and
bfloat16 are computed in float32; integer inputs are converted to float64 (float32 on Metal), as
NumPy does. A singular matrix (``solve``, ``inv``), a matrix that is not positive definite
(``cholesky``) or a factorization that does not converge raises ``LinAlgError`` (a
``ValueError``, as NumPy's).

>>> import ingot
>>> a = ingot.asarray([[4.0, 2.0], [2.0, 3.0]])
>>> ingot.linalg.cholesky(a).shape
(2, 2)
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Optional, Sequence, Tuple, Union

from . import _functions, _ingot
from ._ingot import Array, LinAlgError

__all__ = [
    "LinAlgError",
    "cholesky",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "matmul",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "matrix_transpose",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "trace",
    "vecdot",
    "vector_norm",
]


class EigResult(NamedTuple):
    """Result of :func:`eig`."""

    eigenvalues: Array
    eigenvectors: Array


class EighResult(NamedTuple):
    """Result of :func:`eigh`."""

    eigenvalues: Array
    eigenvectors: Array


class QRResult(NamedTuple):
    """Result of :func:`qr`."""

    Q: Array
    R: Array


class SlogdetResult(NamedTuple):
    """Result of :func:`slogdet`."""

    sign: Array
    logabsdet: Array


class SVDResult(NamedTuple):
    """Result of :func:`svd`."""

    U: Array
    S: Array
    Vh: Array


def _array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def _tolerance(rtol: Any, x: Array) -> Optional[Array]:
    if rtol is None:
        return None
    if isinstance(rtol, Array):
        return rtol
    from ._creation import asarray

    return asarray(float(rtol), device=x.device)


def cholesky(x: Array, /, *, upper: builtins.bool = False) -> Array:
    """The Cholesky factor of each symmetric positive-definite matrix: lower ``L`` with
    ``x = L @ L.mT`` (only the lower triangle of ``x`` is read), or ``U = L.mT`` with ``upper``.
    Raises LinAlgError for a matrix that is not positive definite."""
    return _ingot.linalg_cholesky(_array(x, "cholesky"), builtins.bool(upper))


def cross(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The cross product of 3-element vectors along ``axis`` (negative; other axes broadcast)."""
    return _ingot.linalg_cross(_array(x1, "cross"), _array(x2, "cross"), axis)


def det(x: Array, /) -> Array:
    """The determinant of each square matrix (0 for a singular one)."""
    return _ingot.linalg_det(_array(x, "det"))


def diagonal(x: Array, /, *, offset: int = 0) -> Array:
    """Diagonal ``offset`` of each matrix (0 the main one, > 0 above it, < 0 below): a
    read-only view, as NumPy's (copy it to write)."""
    return _ingot.linalg_diagonal(_array(x, "diagonal"), offset)


def eig(x: Array, /) -> EigResult:
    """Eigenvalues and right eigenvectors (columns) of each square matrix, symmetric or not
    (array API 2025.12): ``x @ v == v * w[..., None, :]``. Results are complex (complex64 for
    float32 input, complex128 for float64), also for real eigenvalues; the order is the
    solver's, not sorted; each eigenvector has norm 1 and its largest component real.

    >>> import ingot
    >>> w, v = ingot.linalg.eig(ingot.asarray([[2.0, 1.0], [0.0, 3.0]]))
    >>> sorted(ingot.real(w).tolist())
    [2.0, 3.0]
    """
    w, v = _ingot.linalg_eig(_array(x, "eig"))
    return EigResult(w, v)


def eigvals(x: Array, /) -> Array:
    """The eigenvalues of each square matrix, symmetric or not (complex; see :func:`eig`).

    >>> import ingot
    >>> w = ingot.linalg.eigvals(ingot.asarray([[0.0, -1.0], [1.0, 0.0]]))
    >>> sorted(ingot.imag(w).tolist())
    [-1.0, 1.0]
    """
    return _ingot.linalg_eigvals(_array(x, "eigvals"))


def eigh(x: Array, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors (columns) of each symmetric matrix (only the
    lower triangle is read)."""
    w, v = _ingot.linalg_eigh(_array(x, "eigh"))
    return EighResult(w, v)


def eigvalsh(x: Array, /) -> Array:
    """Eigenvalues (ascending) of each symmetric matrix (only the lower triangle is read)."""
    return _ingot.linalg_eigvalsh(_array(x, "eigvalsh"))


def inv(x: Array, /) -> Array:
    """The inverse of each square matrix. Raises LinAlgError for a singular one."""
    return _ingot.linalg_inv(_array(x, "inv"))


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product (as ``ingot.matmul``)."""
    return _ingot.matmul(_array(x1, "matmul"), _array(x2, "matmul"))


def matrix_norm(x: Array, /, *, keepdims: builtins.bool = False,
                ord: Optional[Union[int, float, str]] = "fro") -> Array:
    """The norm of each matrix: ``'fro'`` (default), ``'nuc'``, 1/-1 (max/min column sum of
    absolute values), inf/-inf (max/min row sum), 2/-2 (largest/smallest singular value)."""
    return _ingot.linalg_matrix_norm(_array(x, "matrix_norm"), "fro" if ord is None else ord,
                                     builtins.bool(keepdims))


def matrix_power(x: Array, n: int, /) -> Array:
    """Each square matrix raised to the integer power ``n`` (negative powers invert first)."""
    if not isinstance(n, int) or isinstance(n, builtins.bool):
        raise TypeError(f"matrix_power: the exponent must be an int, got {type(n).__name__}")
    return _ingot.linalg_matrix_power(_array(x, "matrix_power"), n)


def matrix_rank(x: Array, /, *, rtol: Optional[Union[float, Array]] = None,
                tol: Optional[float] = None) -> Array:
    """The rank of each matrix: singular values above ``rtol * max(S)`` (default rtol:
    ``max(M, N) * eps``). NumPy's absolute ``tol`` is accepted too."""
    x = _array(x, "matrix_rank")
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: give either rtol or tol, not both")
        s = svdvals(x)
        from ._functions import sum as _sum

        return _sum(s > tol, axis=-1)
    return _ingot.linalg_matrix_rank(x, _tolerance(rtol, x))


def matrix_transpose(x: Array, /) -> Array:
    """Swaps the last two axes (a view)."""
    return _array(x, "matrix_transpose").mT


def outer(x1: Array, x2: Array, /) -> Array:
    """The outer product of two vectors."""
    return _ingot.linalg_outer(_array(x1, "outer"), _array(x2, "outer"))


def pinv(x: Array, /, *, rtol: Optional[Union[float, Array]] = None) -> Array:
    """The Moore-Penrose pseudo-inverse of each matrix (singular values at or below
    ``rtol * max(S)`` are treated as zero; default rtol ``max(M, N) * eps``)."""
    x = _array(x, "pinv")
    return _ingot.linalg_pinv(x, _tolerance(rtol, x))


def qr(x: Array, /, *, mode: str = "reduced") -> QRResult:
    """The QR factorization of each matrix: ``mode='reduced'`` gives ``Q: (..., M, K)`` and
    ``R: (..., K, N)`` with ``K = min(M, N)``; ``'complete'`` a square Q."""
    q, r = _ingot.linalg_qr(_array(x, "qr"), mode)
    return QRResult(q, r)


def slogdet(x: Array, /) -> SlogdetResult:
    """The sign and the natural log of the absolute determinant of each square matrix
    (``(0, -inf)`` for a singular one)."""
    s, l = _ingot.linalg_slogdet(_array(x, "slogdet"))
    return SlogdetResult(s, l)


def solve(x1: Array, x2: Array, /) -> Array:
    """The solution of ``x1 @ x = x2`` for square ``x1``; ``x2`` is a stack of matrices
    ``(..., M, K)`` or a vector ``(M,)``; batch axes broadcast. Raises LinAlgError for a
    singular ``x1``."""
    return _ingot.linalg_solve(_array(x1, "solve"), _array(x2, "solve"))


def svd(x: Array, /, *, full_matrices: builtins.bool = True, driver: Optional[str] = None) -> SVDResult:
    """The singular value decomposition ``x = U @ diag(S) @ Vh`` (S descending). ``driver``
    ('gesvd' or 'gesvdj', as PyTorch's) picks the cuSOLVER algorithm on CUDA: the default tries
    Jacobi and redoes the matrices where it does not converge with QR iteration.

    Signs: each pair of singular vectors (a column of U and the row of Vh with it) is unique only
    up to a common sign (a common phase for complex matrices). On CUDA the signs are cuSOLVER's,
    on the CPU faer's; neither is guaranteed to equal LAPACK's (NumPy's) for every pair. All are
    valid decompositions; code that needs reproducible signs
    should fix them itself, as scikit-learn's ``svd_flip`` does (for example, make the largest
    component of each column of U positive)."""
    u, s, vh = _ingot.linalg_svd(_array(x, "svd"), builtins.bool(full_matrices), driver)
    return SVDResult(u, s, vh)


def svdvals(x: Array, /) -> Array:
    """The singular values (descending) of each matrix."""
    return _ingot.linalg_svdvals(_array(x, "svdvals"))


def tensordot(x1: Array, x2: Array, /, *,
              axes: Union[int, Tuple[Sequence[int], Sequence[int]]] = 2) -> Array:
    """Contraction of the last ``axes`` axes of ``x1`` with the first of ``x2``, or of the axes
    the pair of sequences names."""
    return _functions.tensordot(x1, x2, axes=axes)


def trace(x: Array, /, *, offset: int = 0, dtype: Any = None) -> Array:
    """The sum of diagonal ``offset`` of each matrix (integers sum in int64/uint64, as ``sum``;
    in ``dtype`` when given)."""
    return _ingot.linalg_trace(_array(x, "trace"), offset, dtype)


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """The dot product along ``axis`` (which must have the same length in both; the other axes
    broadcast)."""
    return _functions.vecdot(x1, x2, axis=axis)


def vector_norm(x: Array, /, *, axis: Optional[Union[int, Tuple[int, ...]]] = None,
                keepdims: builtins.bool = False, ord: Union[int, float] = 2) -> Array:
    """The ``ord``-norm over ``axis`` (all axes when None): inf/-inf the largest/smallest
    absolute value, 0 the count of nonzero elements, else ``sum(|x|**ord)**(1/ord)``."""
    return _ingot.linalg_vector_norm(_array(x, "vector_norm"), axis, builtins.bool(keepdims), float(ord))
