"""ingot.linalg against NumPy: every function of the extension, batched, float32/float64 (and
float16/integers converted as NumPy converts them), edge cases and errors, plus hypothesis
property tests. Runs on the test device (INGOT_DEVICE): faer on the CPU, cuSOLVER on CUDA.

Outputs come from the device's caching pool; ``poison`` fills freed blocks of the outputs' sizes
with NaN first, so an element an implementation forgets to write shows as NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import array_api as xa

import ingot
from conftest import DEVICE, check_interpreter_alive, make, to_np

la = ingot.linalg
TOL = {"float32": dict(rtol=2e-4, atol=2e-4), "float64": dict(rtol=1e-9, atol=1e-9)}


def poison(*arrays_like):
    """Fills and frees pool blocks of the sizes of the given NumPy arrays (NaN), a few each."""
    keep = []
    for a in arrays_like:
        n = max(1, int(np.prod(a.shape)))
        for _ in range(3):
            keep.append(ingot.full((n,), float("nan"), dtype=ingot.float64, device=DEVICE))
            keep.append(ingot.full((max(1, n // 2),), float("nan"), dtype=ingot.float64, device=DEVICE))
    del keep


def well_conditioned(rng, shape, dtype="float64"):
    """Random square matrices with a dominant diagonal (condition numbers of a few)."""
    n = shape[-1]
    a = rng.normal(size=shape) + 2 * math.sqrt(n) * np.eye(n)
    return a.astype(dtype)


def spd(rng, shape, dtype="float64"):
    a = rng.normal(size=shape)
    n = shape[-1]
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def close(got, ref, dtype="float64", scale=1.0):
    tol = TOL[dtype]
    np.testing.assert_allclose(to_np(got).astype(np.float64), np.asarray(ref, dtype=np.float64),
                               rtol=tol["rtol"] * scale, atol=tol["atol"] * scale)


DTYPES = ["float32", "float64"]


# ---- solve, inv, det, slogdet -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sa,sb", [((4, 4), (4,)), ((5, 5), (5, 3)), ((2, 3, 3), (3,)),
                                   ((2, 1, 3, 3), (4, 3, 2)), ((3, 3), (2, 3, 1)), ((1, 1), (1,))])
def test_solve_matches_numpy(rng, dtype, sa, sb):
    a = well_conditioned(rng, sa, dtype)
    b = rng.normal(size=sb).astype(dtype)
    ref = np.linalg.solve(a.astype(np.float64), b.astype(np.float64))
    poison(ref)
    got = la.solve(make(a), make(b))
    assert got.shape == ref.shape and got.dtype == dtype
    close(got, ref, dtype, scale=10)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (3, 3), (2, 5, 5), (2, 3, 4, 4), (64, 64), (0, 3, 3)])
def test_inv_det_slogdet_match_numpy(rng, dtype, shape):
    a = well_conditioned(rng, shape, dtype)
    a64 = a.astype(np.float64)
    poison(a)
    inv = la.inv(make(a))
    assert inv.shape == shape and inv.dtype == dtype
    close(inv, np.linalg.inv(a64), dtype, scale=10)
    d = la.det(make(a))
    assert d.shape == shape[:-2] and d.dtype == dtype
    # In the input dtype, as NumPy's (large float32 determinants overflow to inf in both).
    close(d, np.linalg.det(a), dtype, scale=100)
    s, l = la.slogdet(make(a))
    rs, rl = np.linalg.slogdet(a64)
    np.testing.assert_array_equal(to_np(s), rs)
    close(l, rl, dtype, scale=10)


def test_singular_matrices():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(la.LinAlgError, match="Singular"):
        la.inv(make(a))
    with pytest.raises(ValueError):
        la.solve(make(a), make(np.ones(2)))
    assert float(to_np(la.det(make(a)))) == 0.0
    s, l = la.slogdet(make(np.stack([a, np.eye(2)])))
    assert to_np(s).tolist() == [0.0, 1.0] and to_np(l)[0] == -np.inf and to_np(l)[1] == 0.0
    assert issubclass(ingot.LinAlgError, ValueError) and la.LinAlgError is ingot.LinAlgError
    check_interpreter_alive()


def test_integer_and_half_inputs_follow_numpy_conversions(rng):
    a = np.array([[4, 1], [2, 3]], dtype=np.int32)
    got = la.inv(make(a))
    assert got.dtype == ingot.float64
    close(got, np.linalg.inv(a), "float64")
    h = well_conditioned(rng, (3, 3), "float16")
    got = la.inv(make(h))
    assert got.dtype == ingot.float16
    np.testing.assert_allclose(to_np(got).astype(np.float64), np.linalg.inv(h.astype(np.float64)), rtol=3e-3, atol=3e-3)
    b = make(h).astype("bfloat16")
    assert la.det(b).dtype == ingot.bfloat16


def test_shape_errors():
    with pytest.raises(ValueError):
        la.inv(make(np.ones((2, 3))))
    with pytest.raises(ValueError):
        la.det(make(np.ones(3)))
    with pytest.raises(ValueError):
        la.solve(make(np.eye(3)), make(np.ones((4, 2))))
    with pytest.raises(TypeError):
        la.inv(np.eye(2))
    check_interpreter_alive()


# ---- cholesky -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 6, 6), (100, 100)])
def test_cholesky_matches_numpy(rng, dtype, shape):
    a = spd(rng, shape, dtype)
    # Only the lower triangle is read: garbage above it changes nothing.
    junk = a + np.triu(rng.normal(size=shape), 1).astype(dtype)
    ref = np.linalg.cholesky(a.astype(np.float64))
    poison(ref)
    got = la.cholesky(make(junk))
    close(got, ref, dtype, scale=10)
    up = la.cholesky(make(junk), upper=True)
    close(up, np.swapaxes(ref, -1, -2), dtype, scale=10)


def test_cholesky_not_positive_definite():
    with pytest.raises(la.LinAlgError, match="positive definite"):
        la.cholesky(make(np.array([[1.0, 2.0], [2.0, 1.0]])))
    check_interpreter_alive()


# ---- qr -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 2), (2, 2, 7), (1, 1), (70, 40)])
@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_factors(rng, dtype, shape, mode):
    a = rng.normal(size=shape).astype(dtype)
    rq, rr = np.linalg.qr(a.astype(np.float64), mode=mode)
    poison(rq, rr)
    q, r = la.qr(make(a), mode=mode)
    assert q.shape == rq.shape and r.shape == rr.shape and q.dtype == dtype
    qn, rn = to_np(q).astype(np.float64), to_np(r).astype(np.float64)
    scale = 20
    np.testing.assert_allclose(qn @ rn, a, **{k: v * scale for k, v in TOL[dtype].items()})
    eye = np.eye(qn.shape[-1])
    np.testing.assert_allclose(np.swapaxes(qn, -1, -2) @ qn, np.broadcast_to(eye, qn.shape[:-2] + eye.shape),
                               **{k: v * scale for k, v in TOL[dtype].items()})
    assert np.all(np.tril(rn, -1) == 0)
    # |R| agrees with LAPACK's up to the signs of its rows.
    np.testing.assert_allclose(np.abs(rn), np.abs(rr), **{k: v * scale for k, v in TOL[dtype].items()})


# ---- eigh -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (3, 4, 4), (80, 80)])
def test_eigh_matches_numpy(rng, dtype, shape):
    a = rng.normal(size=shape)
    a = ((a + np.swapaxes(a, -1, -2)) / 2).astype(dtype)
    rw = np.linalg.eigvalsh(a.astype(np.float64))
    poison(a, rw)
    w, v = la.eigh(make(a))
    close(w, rw, dtype, scale=20)
    close(la.eigvalsh(make(a)), rw, dtype, scale=20)
    vn, wn = to_np(v).astype(np.float64), to_np(w).astype(np.float64)
    tol = {k: x * 50 for k, x in TOL[dtype].items()}
    np.testing.assert_allclose(a @ vn, vn * wn[..., None, :], **tol)
    np.testing.assert_allclose(np.swapaxes(vn, -1, -2) @ vn, np.broadcast_to(np.eye(shape[-1]), shape), **tol)


def test_eigh_reads_the_lower_triangle(rng):
    a = rng.normal(size=(4, 4))
    sym = np.tril(a) + np.tril(a, -1).T
    close(la.eigvalsh(make(a)), np.linalg.eigvalsh(sym, UPLO="L"), "float64")


# ---- svd ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (7, 3), (3, 7), (2, 5, 4), (2, 3, 6), (1, 1), (60, 45)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_factors(rng, dtype, shape, full):
    a = rng.normal(size=shape).astype(dtype)
    ru, rs, rvh = np.linalg.svd(a.astype(np.float64), full_matrices=full)
    poison(ru, rs, rvh)
    u, s, vh = la.svd(make(a), full_matrices=full)
    assert (u.shape, s.shape, vh.shape) == (ru.shape, rs.shape, rvh.shape)
    close(s, rs, dtype, scale=20)
    close(la.svdvals(make(a)), rs, dtype, scale=20)
    un, sn, vn = (to_np(x).astype(np.float64) for x in (u, s, vh))
    k = sn.shape[-1]
    tol = {kk: x * 50 for kk, x in TOL[dtype].items()}
    recon = (un[..., :, :k] * sn[..., None, :]) @ vn[..., :k, :]
    np.testing.assert_allclose(recon, a, **tol)
    for m in (un, np.swapaxes(vn, -1, -2)):
        np.testing.assert_allclose(np.swapaxes(m, -1, -2) @ m, np.broadcast_to(np.eye(m.shape[-1]), m.shape[:-2] + (m.shape[-1],) * 2), **tol)


@pytest.mark.parametrize("driver", ["gesvd", "gesvdj"])
def test_svd_drivers(rng, driver):
    a = rng.normal(size=(2, 9, 6))
    u, s, vh = la.svd(make(a), full_matrices=False, driver=driver)
    np.testing.assert_allclose(to_np(s), np.linalg.svd(a, compute_uv=False), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError):
        la.svd(make(a), driver="gesvda")


# ---- pinv, matrix_rank, norms ---------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4)])
def test_pinv_and_rank(rng, dtype, shape):
    a = rng.normal(size=shape)
    # Make the last row a combination of the others: rank deficient.
    a[..., -1, :] = a[..., 0, :] + a[..., 1, :]
    a = a.astype(dtype)
    rp = np.linalg.pinv(a.astype(np.float64), rtol=max(shape[-2:]) * np.finfo(dtype).eps)
    poison(rp)
    close(la.pinv(make(a)), rp, dtype, scale=200)
    np.testing.assert_array_equal(to_np(la.matrix_rank(make(a))), np.linalg.matrix_rank(a))
    full_rank = rng.normal(size=shape).astype(dtype)
    np.testing.assert_array_equal(to_np(la.matrix_rank(make(full_rank))), np.linalg.matrix_rank(full_rank))
    # A large rtol drops every singular value but the largest.
    assert (to_np(la.matrix_rank(make(full_rank), rtol=0.999)) == 1).all()
    close(la.pinv(make(a), rtol=0.5), np.linalg.pinv(a.astype(np.float64), rtol=0.5), dtype, scale=200)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf])
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norm(rng, ord, keepdims):
    a = rng.normal(size=(3, 4, 5))
    ref = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    got = la.matrix_norm(make(a), ord=ord, keepdims=keepdims)
    assert got.shape == ref.shape
    close(got, ref, "float64", scale=10)
    assert la.matrix_norm(make(a.astype(np.float32)), ord=ord).dtype == ingot.float32


@pytest.mark.parametrize("ord", [2, 1, 0, np.inf, -np.inf, 3, 0.5, -1])
@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), (1,)])
def test_vector_norm(rng, ord, axis):
    a = rng.normal(size=(3, 4, 5))
    a[0, 0, :2] = 0.0
    for keepdims in (False, True):
        ref = np.linalg.vector_norm(a, ord=ord, axis=axis, keepdims=keepdims)
        got = la.vector_norm(make(a), ord=ord, axis=axis, keepdims=keepdims)
        assert got.shape == ref.shape
        close(got, ref, "float64", scale=10)
    i = np.arange(12).reshape(3, 4)
    close(la.vector_norm(make(i)), np.linalg.vector_norm(i), "float64")


# ---- matrix_power, trace, diagonal, outer, cross, tensordot, vecdot -------------------------------

@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 5, 8])
def test_matrix_power(rng, n):
    a = well_conditioned(rng, (2, 4, 4)) / 5
    close(la.matrix_power(make(a), n), np.linalg.matrix_power(a, n), "float64", scale=100)
    i = rng.integers(-3, 4, size=(3, 3))
    if n >= 0:
        got = la.matrix_power(make(i), n)
        np.testing.assert_array_equal(to_np(got), np.linalg.matrix_power(i, n))
    else:
        with pytest.raises(TypeError):
            la.matrix_power(make(i), n)


@pytest.mark.parametrize("offset", [0, 1, -1, 3, -4, 10])
def test_trace_and_diagonal(rng, offset):
    a = rng.normal(size=(2, 4, 5))
    for x in (a, a[:, ::-1, ::2], np.swapaxes(a, -1, -2)):
        got = la.diagonal(make(x), offset=offset)
        np.testing.assert_array_equal(to_np(got), np.diagonal(x, offset=offset, axis1=-2, axis2=-1))
        close(la.trace(make(x), offset=offset), np.trace(x, offset=offset, axis1=-2, axis2=-1), "float64")
    i = rng.integers(-5, 5, size=(3, 3)).astype(np.int32)
    t = la.trace(make(i), offset=offset)
    assert t.dtype == ingot.int64
    np.testing.assert_array_equal(to_np(t), np.trace(i, offset=offset))
    t = la.trace(make(i), offset=offset, dtype=ingot.float32)
    assert t.dtype == ingot.float32


def test_outer_and_cross(rng):
    x, y = rng.normal(size=4), rng.normal(size=3)
    close(la.outer(make(x), make(y)), np.outer(x, y), "float64")
    a, b = rng.normal(size=(5, 3)), rng.normal(size=(2, 1, 3))
    close(la.cross(make(a), make(b)), np.cross(a, b), "float64")
    a2, b2 = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    close(la.cross(make(a2), make(b2), axis=-2), np.cross(a2, b2, axis=-2), "float64")
    i1, i2 = rng.integers(-9, 9, size=(4, 3)), rng.integers(-9, 9, size=(4, 3))
    np.testing.assert_array_equal(to_np(la.cross(make(i1), make(i2))), np.cross(i1, i2))
    with pytest.raises(ValueError):
        la.cross(make(rng.normal(size=(4, 2))), make(rng.normal(size=(4, 2))))
    with pytest.raises(ValueError):
        la.outer(make(a), make(y))
    check_interpreter_alive()


@pytest.mark.parametrize("axes", [0, 1, 2, ([1, 0], [0, 1]), ([2], [0]), ([-1, 0], [1, 2])])
def test_tensordot(rng, axes):
    a = rng.normal(size=(3, 4, 5))
    b = {0: (2, 3), 1: (5, 2), 2: (4, 5, 2), 3: (4, 3, 6)}
    if axes == 0:
        bb = rng.normal(size=b[0])
    elif axes == 1:
        bb = rng.normal(size=b[1])
    elif axes == 2:
        bb = rng.normal(size=b[2])
    elif axes == ([1, 0], [0, 1]):
        bb = rng.normal(size=b[3])
    elif axes == ([2], [0]):
        bb = rng.normal(size=(5, 7))
    else:
        bb = rng.normal(size=(2, 5, 3))
    ref = np.tensordot(a, bb, axes=axes)
    got = la.tensordot(make(a), make(bb), axes=axes)
    assert got.shape == ref.shape
    close(got, ref, "float64")
    i, j = rng.integers(-5, 5, size=(2, 3)), rng.integers(-5, 5, size=(3, 4))
    np.testing.assert_array_equal(to_np(la.tensordot(make(i), make(j), axes=1)), np.tensordot(i, j, axes=1))
    with pytest.raises(ValueError):
        la.tensordot(make(a), make(rng.normal(size=(6, 5))), axes=1)


@pytest.mark.parametrize("s1,s2,axis", [((5,), (5,), -1), ((3, 5), (5,), -1), ((2, 1, 4), (3, 4), -1),
                                        ((4, 3), (4, 3), 0), ((4, 3), (4, 3), -2), ((2, 4, 3), (4, 1), -2)])
def test_vecdot(rng, s1, s2, axis):
    a, b = rng.normal(size=s1), rng.normal(size=s2)
    ref = np.vecdot(a, b, axis=axis)
    got = la.vecdot(make(a), make(b), axis=axis)
    assert got.shape == ref.shape
    close(got, ref, "float64")
    i, j = rng.integers(-5, 5, size=s1).astype(np.int32), rng.integers(-5, 5, size=s2).astype(np.int32)
    gi = la.vecdot(make(i), make(j), axis=axis)
    assert gi.dtype == ingot.int32
    np.testing.assert_array_equal(to_np(gi), np.vecdot(i, j, axis=axis))


def test_vecdot_does_not_broadcast_the_contracted_axis(rng):
    with pytest.raises(ValueError):
        la.vecdot(make(rng.normal(size=(3, 4))), make(rng.normal(size=(3, 1))))
    check_interpreter_alive()


def test_matmul_and_matrix_transpose_are_the_namespace_ones(rng):
    a, b = rng.normal(size=(2, 3)), rng.normal(size=(3, 4))
    close(la.matmul(make(a), make(b)), a @ b, "float64")
    np.testing.assert_array_equal(to_np(la.matrix_transpose(make(a))), a.T)


def test_empty_matrices():
    z = make(np.zeros((0, 0)))
    assert la.inv(z).shape == (0, 0)
    assert float(to_np(la.det(z))) == 1.0
    q, r = la.qr(make(np.zeros((3, 0))), mode="complete")
    assert q.shape == (3, 3) and r.shape == (3, 0)
    np.testing.assert_array_equal(to_np(q), np.eye(3))
    u, s, vh = la.svd(make(np.zeros((2, 0))))
    assert u.shape == (2, 2) and s.shape == (0,) and vh.shape == (0, 0)
    assert la.solve(make(np.zeros((2, 0, 0))), make(np.zeros((2, 0, 3)))).shape == (2, 0, 3)
    assert la.eigvalsh(make(np.zeros((4, 0, 0)))).shape == (4, 0)


# ---- property tests (hypothesis.extra.array_api over NumPy, float64) -----------------------------

xps = xa.make_strategies_namespace(np, api_version="2023.12")
# No subnormals: GPU solvers (cuSOLVER) flush them to zero, so a matrix of 5e-324s is a zero
# matrix there and NumPy's results for it are rounding artefacts.
finite = dict(min_value=-10.0, max_value=10.0, allow_nan=False, allow_infinity=False,
              allow_subnormal=False)


@st.composite
def matrices(draw, square=True):
    batch = draw(xa_shapes(max_dims=2))
    m = draw(st.integers(1, 6))
    n = m if square else draw(st.integers(1, 6))
    return draw(xps.arrays(dtype=np.float64, shape=batch + (m, n), elements=finite))


def xa_shapes(max_dims):
    return xps.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=3)


@given(matrices())
def test_property_solve_recovers_the_solution(a):
    a = a + (10 * a.shape[-1] + 1) * np.eye(a.shape[-1])
    x = np.ones(a.shape[:-1] + (2,))
    b = a @ x
    np.testing.assert_allclose(to_np(la.solve(make(a), make(b))), np.linalg.solve(a, b), rtol=1e-9, atol=1e-9)


@given(matrices())
def test_property_det_and_slogdet_match_numpy(a):
    ref = np.linalg.det(a)
    np.testing.assert_allclose(to_np(la.det(make(a))), ref, rtol=1e-8, atol=1e-8 * np.abs(a).max() ** a.shape[-1] + 1e-12)
    s, l = la.slogdet(make(a))
    rs, rl = np.linalg.slogdet(a)
    # Numerically singular matrices' logs are rounding noise: compare the well-conditioned ones.
    with np.errstate(all="ignore"):
        ok = (rs != 0) & (np.linalg.cond(a) < 1e6)
    np.testing.assert_array_equal(to_np(s)[ok], rs[ok])
    np.testing.assert_allclose(to_np(l)[ok], rl[ok], rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("v", [1e-300, 9.49643867e-296, 1e-310, 5e-324, 1e300])
def test_det_of_singular_matrices_with_extreme_entries(v):
    # Equal rows: singular at any scale, det 0 by hand and by NumPy. Near the underflow threshold
    # an LU that multiplies by the pivots' reciprocals leaves subnormal residuals whose
    # reciprocals overflow: the determinant came out NaN, slogdet (-1, +inf or NaN). slogdet of a
    # singular matrix is (0, -inf) or, as NumPy's, rounding noise: a log far below the underflow
    # threshold (its exponential is the determinant, 0). Both the CPU and the device paths scale
    # each matrix by a power of two before the LU.
    a = np.full((2, 3, 3), v)
    assert np.linalg.det(a).tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(to_np(la.det(make(a))), np.zeros(2))
    s, l = (to_np(p) for p in la.slogdet(make(a)))
    assert np.isin(s, [-1.0, 0.0, 1.0]).all()
    assert ((l == -np.inf) | (l < math.log(np.finfo(np.float64).tiny) - 100)).all(), l


@pytest.mark.parametrize("scale", [1e-150, 1e-250, 1e120])
def test_det_of_nonsingular_matrices_with_extreme_entries(scale):
    rng = np.random.default_rng()
    a = (rng.standard_normal((3, 3)) + 3 * np.eye(3)) * scale
    ref_s, ref_l = np.linalg.slogdet(a)
    np.testing.assert_allclose(to_np(la.det(make(a))), np.linalg.det(a), rtol=1e-10, atol=0)
    s, l = la.slogdet(make(a))
    assert to_np(s) == ref_s
    np.testing.assert_allclose(to_np(l), ref_l, rtol=1e-12)


@given(matrices(square=False))
def test_property_svdvals_and_norms_match_numpy(a):
    np.testing.assert_allclose(to_np(la.svdvals(make(a))), np.linalg.svd(a, compute_uv=False), rtol=1e-9, atol=1e-9)
    for ord in ("fro", "nuc", 2, 1, np.inf):
        np.testing.assert_allclose(to_np(la.matrix_norm(make(a), ord=ord)), np.linalg.matrix_norm(a, ord=ord),
                                   rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(to_np(la.pinv(make(a))) @ a @ np.zeros(a.shape[-1]), 0, atol=1e-9)


@given(matrices())
def test_property_eigh_matches_numpy(a):
    s = (a + np.swapaxes(a, -1, -2)) / 2
    np.testing.assert_allclose(to_np(la.eigvalsh(make(s))), np.linalg.eigvalsh(s), rtol=1e-9, atol=1e-9)


@given(matrices(square=False), st.sampled_from(["reduced", "complete"]))
def test_property_qr_reconstructs(a, mode):
    q, r = la.qr(make(a), mode=mode)
    np.testing.assert_allclose(to_np(q) @ to_np(r), a, rtol=1e-9, atol=1e-9)


# ---- complex matrices (CPU: faer; CUDA: cuSOLVER) -------------------------------------------------

CTOL = {"complex64": dict(rtol=2e-4, atol=2e-4), "complex128": dict(rtol=1e-9, atol=1e-9)}
on_cpu_only = pytest.mark.skipif(DEVICE.kind != "cpu", reason="the CPU's scaling of extreme matrices")


def cdtypes():
    return [d for d in ("complex64", "complex128") if not (DEVICE.kind == "metal" and d == "complex128")]


def crand(rng, shape, dtype):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


def cclose(got, ref, dtype):
    np.testing.assert_allclose(to_np(got).astype(np.complex128), np.asarray(ref, dtype=np.complex128),
                               **CTOL[dtype])


@pytest.mark.parametrize("dtype", cdtypes())
@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (3, 5, 5), (40, 40)])
def test_complex_solve_inv_det_slogdet(rng, dtype, shape):
    n = shape[-1]
    # Diagonally dominant with unit diagonal: well conditioned, |det| far inside complex64's range.
    a = (crand(rng, shape, "complex128") / (3 * math.sqrt(n)) + np.eye(n)).astype(dtype)
    b = crand(rng, shape[:-1] + (3,), dtype)
    ref, rb = a.astype(np.complex128), b.astype(np.complex128)
    poison(a, a, b)
    x = la.solve(make(a), make(b))
    assert x.dtype == getattr(ingot, dtype)
    cclose(x, np.linalg.solve(ref, rb), dtype)
    cclose(la.inv(make(a)), np.linalg.inv(ref), dtype)
    d = la.det(make(a))
    assert d.dtype == getattr(ingot, dtype)
    want_d = np.linalg.det(ref)
    np.testing.assert_allclose(to_np(d).astype(np.complex128), want_d, rtol=CTOL[dtype]["rtol"])
    sign, logabs = la.slogdet(make(a))
    ws, wl = np.linalg.slogdet(ref)
    assert sign.dtype == getattr(ingot, dtype)
    assert logabs.dtype == (ingot.float32 if dtype == "complex64" else ingot.float64)
    cclose(sign, ws, dtype)
    np.testing.assert_allclose(to_np(logabs), wl, **CTOL[dtype])


@pytest.mark.parametrize("dtype", cdtypes())
@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6), (2, 5, 4)])
def test_complex_qr_svd_pinv_rank(rng, dtype, shape):
    a = crand(rng, shape, dtype)
    ref = a.astype(np.complex128)
    real = ingot.float32 if dtype == "complex64" else ingot.float64
    poison(a, a, a)
    q, r = la.qr(make(a))
    qn, rn = to_np(q).astype(np.complex128), to_np(r).astype(np.complex128)
    cclose(q @ r, ref, dtype)
    k = min(shape[-2:])
    np.testing.assert_allclose(np.conj(np.swapaxes(qn, -1, -2)) @ qn, np.broadcast_to(np.eye(k), qn.shape[:-2] + (k, k)),
                               **CTOL[dtype])
    assert np.allclose(np.tril(rn, -1), 0)
    u, s, vh = la.svd(make(a), full_matrices=False)
    assert s.dtype == real and u.dtype == getattr(ingot, dtype)
    np.testing.assert_allclose(to_np(s), np.linalg.svd(ref, compute_uv=False), **CTOL[dtype])
    us = to_np(u).astype(np.complex128) * to_np(s).astype(np.float64)[..., None, :]
    np.testing.assert_allclose(us @ to_np(vh).astype(np.complex128), ref, **CTOL[dtype])
    m, n = shape[-2:]
    for driver in (None, "gesvd", "gesvdj"):
        u, s, vh = la.svd(make(a), full_matrices=True, driver=driver)
        assert u.shape == shape[:-2] + (m, m) and vh.shape == shape[:-2] + (n, n)
        un, vn = to_np(u).astype(np.complex128), to_np(vh).astype(np.complex128)
        for w in (un, vn):
            eye = np.broadcast_to(np.eye(w.shape[-1]), w.shape)
            np.testing.assert_allclose(np.conj(np.swapaxes(w, -1, -2)) @ w, eye, **CTOL[dtype])
        sigma = np.zeros(shape, np.complex128)
        idx = np.arange(k)
        sigma[..., idx, idx] = to_np(s)
        np.testing.assert_allclose(un @ sigma @ vn, ref, **CTOL[dtype])
    sv = la.svdvals(make(a))
    assert sv.dtype == real
    np.testing.assert_allclose(to_np(sv), np.linalg.svd(ref, compute_uv=False), **CTOL[dtype])
    cclose(la.pinv(make(a)), np.linalg.pinv(ref), dtype)
    assert np.array_equal(to_np(la.matrix_rank(make(a))), np.linalg.matrix_rank(ref))
    for ord_ in ("fro", "nuc", 2, 1, np.inf):
        got = la.matrix_norm(make(a), ord=ord_)
        assert got.dtype == real
        np.testing.assert_allclose(to_np(got), np.linalg.norm(ref, ord=ord_, axis=(-2, -1)), **CTOL[dtype])
    for ord_ in (2, 1, 3, 0, np.inf):
        got = la.vector_norm(make(a), ord=ord_, axis=-1)
        assert got.dtype == real
        np.testing.assert_allclose(to_np(got), np.linalg.norm(ref, ord=ord_, axis=-1), **CTOL[dtype])


@pytest.mark.parametrize("dtype", cdtypes())
@pytest.mark.parametrize("shape", [(1, 1), (5, 5), (2, 4, 4)])
def test_complex_cholesky_eigh(rng, dtype, shape):
    g = crand(rng, shape, "complex128")
    n = shape[-1]
    h = (g @ np.conj(np.swapaxes(g, -1, -2)) + n * np.eye(n)).astype(dtype)
    ref = h.astype(np.complex128)
    poison(h, h)
    l = la.cholesky(make(h))
    cclose(l, np.linalg.cholesky(ref), dtype)
    u = la.cholesky(make(h), upper=True)
    cclose(u, np.conj(np.swapaxes(np.linalg.cholesky(ref), -1, -2)), dtype)
    w, v = la.eigh(make(h))
    real = ingot.float32 if dtype == "complex64" else ingot.float64
    assert w.dtype == real and v.dtype == getattr(ingot, dtype)
    np.testing.assert_allclose(to_np(w), np.linalg.eigvalsh(ref), **CTOL[dtype])
    vn = to_np(v).astype(np.complex128)
    np.testing.assert_allclose(ref @ vn, vn * to_np(w).astype(np.float64)[..., None, :],
                               rtol=CTOL[dtype]["rtol"] * 10, atol=CTOL[dtype]["atol"] * 10 * n)
    np.testing.assert_allclose(to_np(la.eigvalsh(make(h))), np.linalg.eigvalsh(ref), **CTOL[dtype])


def test_complex_empty_matrices():
    z = ingot.zeros((2, 0, 0), dtype=ingot.complex64)
    assert la.det(z).dtype == ingot.complex64 and to_np(la.det(z)).tolist() == [1, 1]
    s, l = la.slogdet(z)
    assert s.dtype == ingot.complex64 and l.dtype == ingot.float32
    assert la.svdvals(z).dtype == ingot.float32 and la.svdvals(z).shape == (2, 0)
    assert la.cholesky(z).shape == (2, 0, 0)


@pytest.mark.parametrize("dtype,big", [("float32", 3e37), ("float32", 1e19), ("float64", 1e306),
                                       ("complex64", 1.3e19), ("complex128", 1e300)])
@on_cpu_only
def test_svd_of_entries_near_the_dtype_limits(rng, dtype, big):
    # Sums of squares of such entries overflow: the CPU scales the matrix by a power of two
    # first, as LAPACK does (NumPy gives the values; faer alone did not converge).
    a = rng.uniform(-1, 1, size=(5, 4)) * big
    if dtype.startswith("complex"):
        a = a + 1j * rng.uniform(-1, 1, size=(5, 4)) * big
    a = a.astype(dtype)
    ref = a.astype(np.complex128 if dtype.startswith("complex") else np.float64)
    poison(a, a)
    s = to_np(la.svdvals(make(a))).astype(np.float64)
    want = np.linalg.svd(ref, compute_uv=False)
    rtol = 1e-4 if dtype in ("float32", "complex64") else 1e-9
    np.testing.assert_allclose(s, want, rtol=rtol)
    assert int(to_np(la.matrix_rank(make(a)))) == np.linalg.matrix_rank(ref)
    p = to_np(la.pinv(make(a)))
    assert np.all(np.isfinite(p))


@on_cpu_only
@pytest.mark.parametrize("scale", [1e-310, 1e-200, 1e200, 1e300])
def test_eigh_of_entries_near_the_dtype_limits(rng, scale):
    # faer's eigensolver did not converge for subnormal entries (hypothesis found 2.2e-313);
    # the CPU scales such matrices by a power of two first.
    a = rng.uniform(0.5, 1.0, size=(4, 4))
    s = (a + a.T) / 2 * scale
    poison(s, s)
    want = np.linalg.eigvalsh(s)
    np.testing.assert_allclose(to_np(la.eigvalsh(make(s))), want, rtol=1e-6 if scale < 1e-300 else 1e-9,
                               atol=0)
    w, v = la.eigh(make(s))
    vn = to_np(v)
    np.testing.assert_allclose(vn.T @ vn, np.eye(4), atol=1e-9)
