"""ingot.compat.metalpy: MetalPy's API against NumPy.

The seed's example program and the original suite's checks (its tolerances: rtol=atol=1e-5 for
elementwise and matrix operations, 3e-4 for GELU against the exact erf form, rel 1e-5 for sum and
mean, rel 1e-3 for product, exact for max/min/argmax/argmin), on fresh random inputs of several
sizes rather than the original's 100 elements.
"""

from __future__ import annotations

import array
import math

import numpy as np
import pytest

import ingot
from ingot.compat.metalpy import MetalArray, MetalPy

SIZES = [1, 7, 100, 1000, 65_537]
MATS = [(1, 1), (7, 9), (33, 65), (128, 300)]
TOL = dict(rtol=1e-5, atol=1e-5)


@pytest.fixture(scope="module")
def gpu():
    return MetalPy()


def vec(rng, n, lo=0.0, hi=100.0):
    """Random float32 values in [lo, hi), never all zero."""
    return rng.uniform(lo, hi, n).astype(np.float32)


def close(got, want, **tol):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, **(tol or TOL))


# -------------------------------------------------------------------------- the seed's example


def test_seed_example(gpu):
    a = gpu.array([1.0, 2.0, 3.0, 4.0])
    b = gpu.array([5.0, 6.0, 7.0, 8.0])
    c = gpu.add(a, b)
    assert c.to_list() == [6.0, 8.0, 10.0, 12.0]
    result = gpu.relu(gpu.array([-2.0, -1.0, 0.0, 1.0, 2.0]))
    assert result.to_list() == [0.0, 0.0, 0.0, 1.0, 2.0]
    assert gpu.max(a) == 4.0
    assert gpu.sum(a) == 10.0
    # The seed multiplies 2000 x 2000 matrices; a smaller size keeps the CI run short.
    rng = np.random.default_rng()
    M = N = K = 200
    A_np, B_np = vec(rng, M * K, 0, 10), vec(rng, K * N, 0, 10)
    A, B = gpu.array(A_np.tolist()), gpu.array(B_np.tolist())
    C = gpu.matmul(A, B, M=M, N=N, K=K)
    close(C.to_array(), (A_np.reshape(M, K) @ B_np.reshape(K, N)).ravel(), rtol=1e-5, atol=1e-3)


def test_original_broadcast_example(gpu):
    a = gpu.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    b = gpu.array([10.0, 20.0])
    assert gpu.broadcast_add(a, b).to_list() == [11.0, 22.0, 13.0, 24.0, 15.0, 26.0]
    assert gpu.broadcast_multiply(a, b).to_list() == [10.0, 40.0, 30.0, 80.0, 50.0, 120.0]


def test_array_round_trip(gpu, rng):
    x = vec(rng, 33, -5, 5)
    g = gpu.array(x.tolist())
    assert g.length == 33 and g.typecode == "f"
    out = g.to_array()
    assert isinstance(out, array.array) and out.typecode == "f"
    assert np.array_equal(np.frombuffer(out, dtype=np.float32), x)
    idx = MetalArray(gpu.device, array.array("I", [4, 0, 2**32 - 1]))
    assert idx.typecode == "I" and idx.to_list() == [4, 0, 2**32 - 1]
    g2 = gpu.array(array.array("f", x.tobytes()))
    assert np.array_equal(np.asarray(g2.to_array(), dtype=np.float32), x)


# -------------------------------------------------------------------------- elementwise

BINARY = {
    "add": (lambda a, b: a + b, (0, 100), (0, 100)),
    "subtract": (lambda a, b: a - b, (0, 100), (0, 100)),
    "sub": (lambda a, b: a - b, (0, 100), (0, 100)),
    "multiply": (lambda a, b: a * b, (0, 100), (0, 100)),
    "divide": (lambda a, b: a / b, (0, 100), (1e-3, 100)),
    "atan2": (np.arctan2, (-50, 50), (-50, 50)),
}

UNARY = {
    "negate": (np.negative, (-50, 50)),
    "abs": (np.abs, (-50, 50)),
    "square": (np.square, (0, 100)),
    "sqrt": (np.sqrt, (1e-3, 100)),
    "exp": (np.exp, (-2, 2)),
    "log": (np.log, (1e-3, 100)),
    "sin": (np.sin, (-2, 2)),
    "cos": (np.cos, (-2, 2)),
    "tan": (np.tan, (-0.5, 0.5)),
    "asin": (np.arcsin, (-1, 1)),
    "floor": (np.floor, (-2, 2)),
    "ceil": (np.ceil, (-2, 2)),
    "sign": (np.sign, (-2, 2)),
    "round": (lambda a: np.where(np.abs(a - np.trunc(a)) >= 0.5, np.trunc(a) + np.sign(a), np.trunc(a)), (-2, 2)),
    "relu": (lambda a: np.maximum(a, 0.0), (-2, 2)),
    "sigmoid": (lambda a: 1.0 / (1.0 + np.exp(-a.astype(np.float64))), (-2, 2)),
    "tanh": (np.tanh, (-2, 2)),
    "softplus": (lambda a: np.log1p(np.exp(a.astype(np.float64))), (-2, 2)),
    "swish": (lambda a: a / (1.0 + np.exp(-a.astype(np.float64))), (-2, 2)),
}


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary(gpu, rng, name, n):
    ref, ra, rb = BINARY[name]
    a, b = vec(rng, n, *ra), vec(rng, n, *rb)
    got = getattr(gpu, name)(gpu.array(a.tolist()), gpu.array(b.tolist())).to_array()
    close(got, ref(a, b))


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(gpu, rng, name, n):
    ref, r = UNARY[name]
    a = vec(rng, n, *r)
    got = getattr(gpu, name)(gpu.array(a.tolist())).to_array()
    close(got, ref(a))


def test_round_halves_away_from_zero(gpu):
    a = [0.5, -0.5, 1.5, 2.5, -2.5, 0.49999997, -0.49999997, 3.0, -0.0]
    assert gpu.round(gpu.array(a)).to_list() == [1.0, -1.0, 2.0, 3.0, -3.0, 0.0, 0.0, 3.0, 0.0]


@pytest.mark.parametrize("n", SIZES)
def test_pow(gpu, rng, n):
    a = vec(rng, n, 0, 100) + np.float32(1e-3)
    e = float(rng.uniform(0.3, 3.0))
    close(gpu.pow(gpu.array(a.tolist()), e).to_array(), a.astype(np.float64) ** e)
    close(gpu.pow(gpu.array(a.tolist()), 2).to_array(), a.astype(np.float64) ** 2)


@pytest.mark.parametrize("n", SIZES)
def test_clip(gpu, rng, n):
    a = vec(rng, n, -2, 2)
    low, high = sorted(rng.uniform(-1.5, 1.5, 2).tolist())
    close(gpu.clip(gpu.array(a.tolist()), low, high).to_array(), np.clip(a, np.float32(low), np.float32(high)))


@pytest.mark.parametrize("n", SIZES)
def test_leaky_relu(gpu, rng, n):
    a = vec(rng, n, -2, 2)
    alpha = float(rng.uniform(0.01, 0.5))
    close(gpu.leaky_relu(gpu.array(a.tolist()), alpha=alpha).to_array(), np.where(a > 0, a, alpha * a))
    close(gpu.leaky_relu(gpu.array(a.tolist())).to_array(), np.where(a > 0, a, 0.01 * a))


@pytest.mark.parametrize("n", SIZES)
def test_gelu(gpu, rng, n):
    a = vec(rng, n, -2, 2)
    got = gpu.gelu(gpu.array(a.tolist())).to_array()
    x = a.astype(np.float64)
    exact = 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    close(got, exact, rtol=3e-4, atol=3e-4)  # the original suite's check against erf
    approx = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
    close(got, approx)  # the tanh approximation itself, tightly


@pytest.mark.parametrize("m", [1, 2, 3, 7, 100])
@pytest.mark.parametrize("n", [1, 6, 100, 1001, 65_537])
def test_broadcast_cyclic(gpu, rng, n, m):
    a, b = vec(rng, n), vec(rng, m, 1, 10)
    tiled = np.resize(b, n)  # cyclic repeat to a's length
    close(gpu.broadcast_add(gpu.array(a.tolist()), gpu.array(b.tolist())).to_array(), a + tiled)
    close(gpu.broadcast_multiply(gpu.array(a.tolist()), gpu.array(b.tolist())).to_array(), a * tiled)


# -------------------------------------------------------------------------- reductions


@pytest.mark.parametrize("n", SIZES)
def test_sum_mean(gpu, rng, n):
    a = vec(rng, n)
    ga = gpu.array(a.tolist())
    s, m = gpu.sum(ga), gpu.mean(ga)
    assert isinstance(s, float) and isinstance(m, float)
    assert math.isclose(s, float(np.sum(a, dtype=np.float64)), rel_tol=1e-5, abs_tol=1e-5)
    assert math.isclose(m, float(np.mean(a, dtype=np.float64)), rel_tol=1e-5, abs_tol=1e-5)


@pytest.mark.parametrize("n", SIZES)
def test_product(gpu, rng, n):
    if n <= 10:
        a = rng.integers(1, 101, n).astype(np.float32)  # the original suite's inputs
    else:
        a = rng.uniform(0.99, 1.01, n).astype(np.float32)  # stays in float32 range
    v = gpu.product(gpu.array(a.tolist()))
    assert isinstance(v, float)
    assert math.isclose(v, float(np.prod(a, dtype=np.float64)), rel_tol=1e-3, abs_tol=0.0)


@pytest.mark.parametrize("n", SIZES)
def test_max_min_arg(gpu, rng, n):
    a = vec(rng, n)
    ga = gpu.array(a.tolist())
    assert gpu.max(ga) == float(np.max(a))
    assert gpu.min(ga) == float(np.min(a))
    i, v = gpu.argmax(ga)
    assert isinstance(i, int) and isinstance(v, float)
    assert (i, v) == (int(np.argmax(a)), float(a[np.argmax(a)]))
    i, v = gpu.argmin(ga)
    assert (i, v) == (int(np.argmin(a)), float(a[np.argmin(a)]))


def test_arg_ties_take_first(gpu):
    a = gpu.array([1.0, 5.0, 0.0, 5.0, 0.0])
    assert gpu.argmax(a) == (1, 5.0)
    assert gpu.argmin(a) == (2, 0.0)


# -------------------------------------------------------------------------- linear algebra


@pytest.mark.parametrize("rows,cols", MATS)
def test_matrix_ops(gpu, rng, rows, cols):
    A, B = vec(rng, rows * cols, 0, 10), vec(rng, rows * cols, 0, 10)
    A2 = A.reshape(rows, cols)
    gA, gB = gpu.array(A.tolist()), gpu.array(B.tolist())
    close(gpu.hadamard(gA, gB, rows, cols).to_array(), (A2 * B.reshape(rows, cols)).ravel())
    close(gpu.transpose(gA, rows, cols).to_array(), A2.T.ravel())
    close(gpu.row_sum(gA, rows, cols).to_array(), A2.sum(axis=1, dtype=np.float64))
    close(gpu.col_sum(gA, rows, cols).to_array(), A2.sum(axis=0, dtype=np.float64))
    s_r, s_c = vec(rng, rows, 0, 3), vec(rng, cols, 0, 3)
    close(gpu.row_scale(gA, gpu.array(s_r.tolist()), rows, cols).to_array(), (s_r[:, None] * A2).ravel())
    close(gpu.col_scale(gA, gpu.array(s_c.tolist()), rows, cols).to_array(), (A2 * s_c[None, :]).ravel())


@pytest.mark.parametrize("M,K,N", [(5, 4, 6), (1, 1, 1), (1, 17, 3), (64, 33, 10), (130, 70, 129)])
def test_matmul(gpu, rng, M, K, N):
    A, B = vec(rng, M * K, 0, 10), vec(rng, K * N, 0, 10)
    got = gpu.matmul(gpu.array(A.tolist()), gpu.array(B.tolist()), M, K, N).to_array()
    assert len(got) == M * N
    want = A.reshape(M, K).astype(np.float64) @ B.reshape(K, N).astype(np.float64)
    close(got, want.ravel(), rtol=1e-5, atol=1e-5 * K)


# -------------------------------------------------------------------------- misc


@pytest.mark.parametrize("n", [1, 50, 1000, 65_537])
def test_slice(gpu, rng, n):
    a = vec(rng, n)
    start = int(rng.integers(0, n + 1))
    end = int(rng.integers(start, n + 1))
    got = gpu.slice(gpu.array(a.tolist()), start, end)
    assert got.length == end - start
    close(got.to_array(), a[start:end])


@pytest.mark.parametrize("n,m", [(40, 7), (1, 5), (1000, 1000), (65_537, 4097)])
def test_gather(gpu, rng, n, m):
    source = vec(rng, n)
    indices = rng.integers(0, n, m).astype(np.uint32)
    g_index = MetalArray(gpu.device, array.array("I", indices.tolist()))
    got = gpu.gather(gpu.array(source.tolist()), g_index).to_array()
    close(got, source[indices])


def test_original_gather_example(gpu, rng):
    source = vec(rng, 40)
    indices = np.array([0, 3, 7, 10, 10, 5, 39], dtype=np.uint32)
    g_index = MetalArray(gpu.device, array.array("I", indices.tolist()))
    close(gpu.gather(gpu.array(source.tolist()), g_index).to_array(), source[indices])


def test_results_do_not_alias_inputs(gpu, rng):
    a = vec(rng, 10)
    ga = gpu.array(a.tolist())
    s = gpu.slice(ga, 0, 10)
    t = gpu.transpose(ga, 2, 5)
    assert s.buffer is not ga.buffer
    close(ga.to_array(), a)
    close(t.to_array(), a.reshape(2, 5).T.ravel())


# -------------------------------------------------------------------------- bad inputs


def test_bad_inputs(gpu):
    a = gpu.array([1.0, 2.0, 3.0])
    b = gpu.array([1.0, 2.0])
    with pytest.raises(TypeError):
        gpu.add(a, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        gpu.exp([1.0])
    with pytest.raises(ValueError):
        gpu.add(a, b)
    with pytest.raises(TypeError):
        gpu.pow(a, "2")
    with pytest.raises(TypeError):
        gpu.clip(a, None, 1.0)
    with pytest.raises(TypeError):
        gpu.leaky_relu(a, alpha="x")
    with pytest.raises(TypeError):
        gpu.array(array.array("d", [1.0]))
    with pytest.raises(TypeError):
        gpu.array("abc")
    with pytest.raises(ValueError):
        gpu.broadcast_add(a, gpu.array([]))
    with pytest.raises(ValueError):
        gpu.sum(gpu.array([]))
    with pytest.raises(ValueError):
        gpu.argmax(gpu.array([]))
    with pytest.raises(ValueError):
        gpu.matmul(a, b, 2, 2, 1)
    with pytest.raises(ValueError):
        gpu.transpose(a, 2, 2)
    with pytest.raises(ValueError):
        gpu.row_scale(gpu.array([1.0] * 6), a, 2, 3)
    with pytest.raises(ValueError):
        gpu.col_scale(gpu.array([1.0] * 6), b, 2, 3)
    with pytest.raises(ValueError):
        gpu.slice(a, 2, 1)
    with pytest.raises(ValueError):
        gpu.slice(a, 0, 4)
    with pytest.raises(ValueError):
        gpu.slice(a, -1, 2)
    with pytest.raises(TypeError):
        gpu.slice(a, 0.5, 2)
    idx_f = gpu.array([0.0, 1.0])
    with pytest.raises(TypeError):
        gpu.gather(a, idx_f)
    with pytest.raises(ValueError):
        gpu.gather(a, MetalArray(gpu.device, array.array("I", [0, 3])))
    with pytest.raises(ValueError):
        gpu.gather(a, MetalArray(gpu.device, array.array("I", [])))
    with pytest.raises(TypeError):
        gpu.add(MetalArray(gpu.device, array.array("I", [1, 2, 3])), a)
    # the interpreter and the library still work
    assert gpu.add(a, a).to_list() == [2.0, 4.0, 6.0]
