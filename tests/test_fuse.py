"""ingot.fuse, elementwise_kernel, reduction_kernel and ingot.nn against NumPy (float64) and
against the same function run op by op, on the default device (the CPU in CI)."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from ingot import _fuse, nn

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL = ["bool"] + INTS + FLOATS


def dev():
    return ingot.default_device()


def supported(name):
    return not (name == "float64" and str(dev()).startswith("metal"))


def rand(rng, shape, dtype):
    if dtype == "bool":
        a = rng.random(shape) < 0.5
        return ingot.asarray(a, device=dev()), a
    if dtype in INTS:
        info = np.iinfo(dtype)
        lo, hi = max(int(info.min), -10), min(int(info.max), 11)
        a = rng.integers(lo, hi, size=shape).astype(dtype)
        return ingot.asarray(a, device=dev()), a
    a = rng.standard_normal(shape)
    x = ingot.asarray(a.astype(np.float32 if dtype == "bfloat16" else dtype), device=dev())
    if dtype == "bfloat16":
        x = x.astype(ingot.bfloat16)
    return x, to_np(x).astype(np.float64)


def to_np(x):
    if x.dtype == ingot.bfloat16:
        x = x.astype(ingot.float32)
    return np.asarray(ingot.asarray(x).to_device("cpu") if not str(x.device).startswith("cpu") else x)


def poison(shape, dtype):
    """Leaves freed blocks full of a sentinel where the next allocations come from."""
    for _ in range(3):
        p = ingot.full(shape, 77, dtype=ingot.uint8 if dtype == "bool" else getattr(ingot, dtype),
                       device=dev())
        del p


def tol(dtype):
    return {"float16": 4e-3, "bfloat16": 3e-2, "float32": 2e-6, "float64": 1e-12}.get(dtype, 0)


def check(got, want, dtype, scale=1.0):
    g = to_np(got).astype(np.float64)
    w = np.asarray(want, dtype=np.float64)
    assert g.shape == w.shape, (g.shape, w.shape)
    t = tol(dtype)
    np.testing.assert_allclose(g, w, rtol=t * 8 * scale, atol=t * 8 * scale, equal_nan=True)


@pytest.fixture
def rng():
    return np.random.default_rng()


# ---- elementwise chains ---------------------------------------------------------------------------


def chain(kind):
    if kind == "float":
        return lambda x, y: ingot.sqrt(x * x + y * y) * 0.5 - ingot.exp(-ingot.abs(x)) + ingot.tanh(y)
    if kind == "int":
        return lambda x, y: (x * 3 + y) // 2 - ingot.abs(y) + (x % 7)
    return lambda x, y: ingot.logical_xor(x, y) | ~y


def np_chain(kind, x, y, dtype):
    if kind == "float":
        return np.sqrt(x * x + y * y) * 0.5 - np.exp(-np.abs(x)) + np.tanh(y)
    if kind == "int":
        xi, yi = x.astype(np.int64), y.astype(np.int64)
        r = (xi * 3 + yi) // 2 - np.abs(yi) + (xi % 7)
        return r.astype(dtype)  # wraps as the dtype does
    return np.logical_xor(x, y) | ~y


@pytest.mark.parametrize("dtype", ALL)
def test_elementwise_chain_every_dtype(rng, dtype):
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    kind = "float" if dtype in FLOATS else ("int" if dtype in INTS else "bool")
    if kind == "int" and dtype.startswith("uint"):
        f = lambda x, y: (x * 3 + y) // 2 + (x % 7)  # noqa: E731
        npf = lambda x, y: ((x.astype(np.int64) * 3 + y) // 2 + (x.astype(np.int64) % 7)).astype(dtype)  # noqa: E731
    else:
        f = chain(kind)
        npf = lambda x, y: np_chain(kind, x, y, dtype)  # noqa: E731
    fused = ingot.fuse(f)
    for shape in [(1000,), (37, 29), (3, 5, 7, 2)]:
        x, xn = rand(rng, shape, dtype)
        y, yn = rand(rng, shape, dtype)
        poison(shape, dtype)
        got = fused(x, y)
        assert fused.is_fused(x, y)
        eager = f(x, y)
        assert got.dtype == eager.dtype and got.shape == eager.shape
        check(got, to_np(eager), dtype)
        if kind == "float":
            check(got, npf(xn, yn), dtype, scale=4)
        elif kind == "int":
            np.testing.assert_array_equal(to_np(got), npf(xn, yn))
        else:
            np.testing.assert_array_equal(to_np(got), npf(xn, yn))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_broadcasting_and_where(rng, dtype):
    if not supported(dtype):
        pytest.skip("no float64 on this device")

    def f(x, y, z):
        return ingot.where(x > y, x * y + z, z - 2)

    fused = ingot.fuse(f)
    for sx, sy, sz in [((4, 1, 5), (3, 1), (5,)), ((6, 7), (1, 7), (6, 1)), ((8,), (1,), ()),
                       ((2, 3, 4, 5), (3, 1, 5), (2, 1, 1, 1))]:
        x, xn = rand(rng, sx, dtype)
        y, yn = rand(rng, sy, dtype)
        z, zn = rand(rng, sz, dtype)
        poison(np.broadcast_shapes(sx, sy, sz), dtype)
        got = fused(x, y, z)
        assert fused.is_fused(x, y, z)
        want = np.where(xn > yn, xn * yn + zn, zn - 2)
        check(got, to_np(f(x, y, z)), dtype)
        if dtype in FLOATS:
            check(got, want, dtype, scale=4)
        else:
            np.testing.assert_array_equal(to_np(got), want.astype(dtype))


@pytest.mark.parametrize("dtype", ["float32", "int32", "float16"])
def test_gpu_kernel_forms_on_the_cpu_engine(rng, monkeypatch, dtype):
    # The CPU engine runs any MSL kernel with GPU launch semantics, so CI checks the generated
    # GPU forms too: the four-elements-per-thread elementwise kernel (its full-group path with
    # hoisted loads and its tail loop, with a broadcast row and a broadcast scalar) and the
    # threadgroup / one-thread-per-line reductions.
    if not str(dev()).startswith("cpu"):
        pytest.skip("on GPUs these are the kernels every other test runs")
    monkeypatch.setattr(_fuse, "_FORMS_OVERRIDE", "cuda")

    def f(x, b, s):
        return ingot.where(x > b, x * b + s, x - s * 2)

    for shape in [(5, 1031), (2048,), (3, 7)]:
        fused = ingot.fuse(f)
        x, xn = rand(rng, shape, dtype)
        b, bn = rand(rng, shape[-1:], dtype)
        s, sn = rand(rng, (1,), dtype)
        poison(shape, dtype)
        got = fused(x, b, s)
        assert fused.is_fused(x, b, s)
        want = np.where(xn > bn, xn * bn + sn, xn - sn * 2)
        if dtype in FLOATS:
            check(got, want, dtype, scale=4)
        else:
            np.testing.assert_array_equal(to_np(got), want.astype(dtype))
    x, xn = rand(rng, (9, 2500), dtype)
    long, ln = rand(rng, (5 * 4096 + 17,), dtype)  # splits into parts: the final kernel runs
    for v, vn, axis, name in [(x, xn, 1, "sum"), (x, xn, 0, "sum"), (x, xn, None, "max"),
                              (x, xn, 1, "argmax"), (x, xn, (0, 1), "mean"),
                              (long, ln, None, "sum"), (long, ln, None, "argmax"),
                              (long, ln, None, "mean")]:
        if dtype == "int32" and name == "mean":
            continue
        xn = vn
        got = ingot.fuse(lambda v: getattr(ingot, name)(v + v, axis=axis))(v)
        want = np_reduce(name, xn + xn, axis, False)
        if name == "argmax":
            np.testing.assert_array_equal(to_np(got), want)
        else:
            check(got, want, dtype, scale=64)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int32", "uint8"])
def test_square_is_a_multiply(rng, monkeypatch, dtype):
    # x ** 2 with a constant 2 is generated as x * x: the same values as the eager pow.
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    sources = []
    real = _fuse._Problem.source
    monkeypatch.setattr(_fuse._Problem, "source",
                        lambda self, pre, name: sources.append(real(self, pre, name)) or sources[-1])
    x, xn = rand(rng, (3, 1100), dtype)
    y, yn = rand(rng, (1100,), dtype)
    f = ingot.fuse(lambda a, b: (a - b) ** 2 + a ** 2.0 if dtype in FLOATS else (a - b) ** 2)
    got = f(x, y)
    assert f.is_fused(x, y)
    assert "bop_pow" not in sources[-1][-3000:] and "bop_multiply" in sources[-1]
    eager = (x - y) ** 2 + x ** 2.0 if dtype in FLOATS else (x - y) ** 2
    if dtype in FLOATS:
        check(got, to_np(eager), dtype)  # a fused multiply-add may round once less
        check(got, (xn - yn) ** 2 + xn ** 2, dtype, scale=4)
        s = ingot.fuse(lambda a, b: ingot.sum((a - b) ** 2, axis=1))(x, y)
        check(s, ((xn - yn) ** 2).sum(axis=1), dtype, scale=64)
    else:
        np.testing.assert_array_equal(to_np(got), to_np(eager))
        want = (xn.astype(np.int64) - yn) ** 2
        np.testing.assert_array_equal(to_np(got), want.astype(dtype) if dtype == "int32" else
                                      ((xn - yn).astype(np.uint8) ** 2).astype(np.uint8))


def test_type_promotion_casts_and_scalars(rng):
    a, an = rand(rng, (50,), "int8")
    b, bn = rand(rng, (50,), "float32")
    c, cn = rand(rng, (50,), "int32")

    def f(a, b, c):
        return (a + b) * 2 + (c / 4) + c.astype(ingot.float32) - ingot.astype(a, ingot.int64) * 3

    fused = ingot.fuse(f)
    got = fused(a, b, c)
    want = f(a, b, c)
    assert got.dtype == want.dtype == ingot.float64
    check(got, to_np(want), "float64")
    ref = (an.astype(np.float64) + bn) * 2 + cn / 4 + cn - an * 3
    np.testing.assert_allclose(to_np(got), ref, rtol=1e-6, atol=1e-5)  # float32 cancellation
    # Python scalars of every kind, weakly typed; comparison and bool results.
    g = ingot.fuse(lambda x: ((x * 3 - 1.5) > 0) & (x != 2))
    x, xn = rand(rng, (64,), "float16")
    np.testing.assert_array_equal(to_np(g(x)), to_np(((x * 3 - 1.5) > 0) & (x != 2)))


REDUCTIONS = ["sum", "mean", "var", "std", "max", "min", "argmax", "argmin", "prod"]


def np_reduce(name, v, axis, keepdims):
    if name in ("argmax", "argmin"):
        return getattr(np, name)(v, axis=axis, keepdims=keepdims)
    return getattr(np, name)(v, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "float16"])
def test_reductions_over_axes(rng, name, dtype):
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    if dtype == "int32" and name in ("var", "std"):
        pytest.skip("var/std of integers: not defined by the array API")
    fn = getattr(ingot, name)
    shape = (6, 33, 70)
    axes_list = [None, 0, 1, 2, -1] if name in ("argmax", "argmin") else [None, 0, 2, (0, 2), (1, 2)]
    for axis in axes_list:
        for keepdims in (False, True):
            def f(x, y, axis=axis, keepdims=keepdims):
                return fn(x * 0.5 + y if dtype in FLOATS else x * 2 + y, axis=axis, keepdims=keepdims)

            fused = ingot.fuse(f)
            x, xn = rand(rng, shape, dtype)
            y, yn = rand(rng, (70,), dtype)
            if name == "prod" and dtype in FLOATS:
                # Factors near 1 (x * 0.5 + y within 0.1% of it): a product of 13,860 of them
                # stays far from float16's overflow and underflow, where the eager and fused
                # orders of multiplication could end in inf * 0 on one side only.
                x = x * 0.001 + 1
                y = y * 0.001 + 0.5
            got = fused(x, y)
            assert fused.is_fused(x, y), (name, axis)
            eager = f(x, y)
            assert got.dtype == eager.dtype and got.shape == eager.shape, (name, axis, keepdims)
            if name in ("argmax", "argmin"):
                np.testing.assert_array_equal(to_np(got), to_np(eager))
                continue
            rt = tol(dtype) or 1e-12
            if name in ("sum", "mean", "prod"):
                rt *= 64
            if name in ("var", "std"):
                rt *= 256
            e = to_np(eager).astype(np.float64)
            g = to_np(got).astype(np.float64)
            np.testing.assert_allclose(g, e, rtol=rt, atol=rt * np.abs(e).max(initial=1.0))
    # A whole-array reduction long enough to split into parts, against NumPy float64.
    big, bn = rand(rng, (3 * 65536 + 17,), "float32")
    if name not in ("prod",):
        g = ingot.fuse(lambda v: fn(v * 2.0))(big)
        w = np_reduce(name, bn * 2.0, None, False)
        if name in ("argmax", "argmin"):
            assert int(to_np(g)) == int(w)
        else:
            # float32 accumulation: the error scales with sum(|x|), not with a cancelled total.
            scale = np.abs(bn * 2.0).sum() / (bn.size if name == "mean" else 1)
            atol = 4 * np.finfo(np.float32).eps * scale if name in ("sum", "mean") else 0.0
            np.testing.assert_allclose(float(to_np(g)), float(w), rtol=1e-4, atol=atol)


def test_var_std_corrections_and_specials(rng):
    x, xn = rand(rng, (40, 300), "float32")
    for corr in (0, 1):
        g = ingot.fuse(lambda v: ingot.var(v + 1000.0, axis=1, correction=corr))(x)
        np.testing.assert_allclose(to_np(g), np.var(xn + 1000.0, axis=1, ddof=corr), rtol=2e-3)
        g = ingot.fuse(lambda v: ingot.std(v, axis=0, correction=corr))(x)
        np.testing.assert_allclose(to_np(g), np.std(xn, axis=0, ddof=corr), rtol=1e-4)
        # The built-in single-kernel var/std (the GPU path; composed on the CPU).
        np.testing.assert_allclose(to_np(ingot.var(x, axis=1, correction=corr)),
                                   np.var(xn, axis=1, ddof=corr), rtol=1e-4)
    # correction 2 is not fused but gives the same result (eager fallback).
    f2 = ingot.fuse(lambda v: ingot.var(v, correction=2))
    np.testing.assert_allclose(float(to_np(f2(x))), np.var(xn, ddof=2), rtol=1e-4)
    assert not f2.is_fused(x)
    nan = ingot.asarray(np.array([1.0, np.nan, 3.0], dtype=np.float32))
    assert np.isnan(float(to_np(ingot.fuse(lambda v: ingot.std(v * 1.0))(nan))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_std_of_lone_nan_and_infinity(dtype):
    # One element per slice: Welford's m2 stays 0 for a NaN or an infinity; NumPy says NaN.
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    cases = [np.array(np.nan), np.array([np.inf]), np.array([[1.0], [np.nan], [-np.inf], [2.0]]),
             np.array([[np.nan, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])]
    for a in cases:
        a = a.astype(dtype)
        x = ingot.asarray(a, device=dev())
        axis = 1 if a.ndim == 2 else None
        for name in ("var", "std"):
            with np.errstate(invalid="ignore"):
                want = getattr(np, name)(a.astype(np.float64), axis=axis)
            got = getattr(ingot, name)(x, axis=axis)
            np.testing.assert_array_equal(to_np(got), want.astype(dtype))
            fused = ingot.fuse(lambda v, name=name: getattr(ingot, name)(v * 1.0, axis=axis))(x)
            np.testing.assert_array_equal(to_np(fused), want.astype(dtype))


# ---- caches, fallbacks, overhead -----------------------------------------------------------------


def test_cache_hits_and_shape_classes(rng):
    f = ingot.fuse(lambda x, y: ingot.exp(x) * y + 1)
    x, _ = rand(rng, (100,), "float32")
    y, _ = rand(rng, (100,), "float32")
    f(x, y)
    libs = len(_fuse._LIBS)
    plans = len(f._plans)
    f(x, y)
    assert len(f._plans) == plans and len(_fuse._LIBS) == libs
    # Another size of the same shape class: a new launch plan, the same compiled kernel.
    x2, xn2 = rand(rng, (12345,), "float32")
    y2, yn2 = rand(rng, (12345,), "float32")
    got = f(x2, y2)
    assert len(_fuse._LIBS) == libs and len(f._plans) == plans + 1
    np.testing.assert_allclose(to_np(got), np.exp(xn2) * yn2 + 1, rtol=1e-5, atol=1e-6)
    # A new dtype is a new kernel.
    f(x.astype(ingot.float16), y.astype(ingot.float16))
    assert len(_fuse._LIBS) == libs + 1


def test_unsupported_constructs_fall_back(rng):
    x, xn = rand(rng, (30,), "float32")

    def control_flow(v):
        if float(ingot.sum(v)) > 0:  # needs a value: not traceable
            return v * 2
        return v * 3

    def slicing(v):
        return v[1:] + 1

    def after_reduction(v):
        return v - ingot.max(v)

    def returns_input(v):
        return v

    for fn in (control_flow, slicing, after_reduction, returns_input):
        fused = ingot.fuse(fn)
        assert not fused.is_fused(x)
        np.testing.assert_array_equal(to_np(fused(x)), to_np(fn(x)))
    np.testing.assert_allclose(to_np(ingot.fuse(after_reduction)(x)), xn - xn.max(), rtol=1e-6)


def test_results_are_fresh_arrays(rng):
    f = ingot.fuse(lambda x: x * 2 + 1)
    x, xn = rand(rng, (256,), "float32")
    a = f(x)
    y, yn = rand(rng, (256,), "float32")
    b = f(y)
    np.testing.assert_allclose(to_np(a), xn * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(to_np(b), yn * 2 + 1, rtol=1e-6)


SCALE_SRC = """
#include <metal_stdlib>
using namespace metal;
kernel void scale(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                  constant float& a [[buffer(2)]], constant uint& n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = a * x[i];
}
"""


def test_prepared_call_fixes_dispatch_and_scalars(rng):
    k = ingot.compile(SCALE_SRC, device=dev())["scale"]
    call = k._prepare((1000,), ingot.float32, 2.5, 1000, grid=(1000,))
    outs = []
    for _ in range(3):
        poison((1000,), "float32")
        x, xn = rand(rng, (1000,), "float32")
        outs.append(call(x))
        np.testing.assert_allclose(to_np(outs[-1]), 2.5 * xn, rtol=1e-6)
        assert outs[-1].shape == (1000,) and outs[-1].dtype == ingot.float32
    assert outs[0] is not outs[1]
    with pytest.raises(TypeError, match="ingot arrays"):
        call(np.ones(1000, dtype=np.float32))
    with pytest.raises(ingot.KernelArgumentError, match="grid= or groups="):
        k._prepare((1000,), ingot.float32, 2.5, 1000)
    with pytest.raises(TypeError, match="Python scalars"):
        k._prepare((1000,), ingot.float32, [2.5], 1000, grid=(1000,))


def test_warm_calls_are_kept_per_signature(rng):
    # Warm calls on arrays only go through Rust's table of prepared calls: each shape, dtype and
    # layout must still get its own kernel, and other arguments the general path.
    f = ingot.fuse(lambda a, b: a * b + a)
    cases = [((5,), "float32"), ((5,), "float64"), ((2, 3), "float32"), ((3, 2), "float32"),
             ((6,), "int32"), ((5,), "float32")]
    for shape, dtype in cases:
        if not supported(dtype):
            continue
        for _ in range(3):
            x, xn = rand(rng, shape, dtype)
            y, yn = rand(rng, shape, dtype)
            poison(shape, dtype)
            got = f(x, y)
            assert got.dtype == x.dtype and got.shape == shape
            check(got, xn * yn + xn, dtype)
    x, xn = rand(rng, (4, 6), "float32")
    y, yn = rand(rng, (6, 4), "float32")
    for _ in range(3):
        poison((6, 4), "float32")
        check(f(x.T, y), xn.T * yn + xn.T, "float32")
        check(f(x, 2.0), xn * 2.0 + xn, "float32")
        check(f(x, b=y.T), xn * yn.T + xn, "float32")


def test_fused_functions_call_through_rust(rng):
    # A fused function is a FastCalls (Rust) subclass: warm calls on arrays never enter Python;
    # keywords, scalars and new signatures reach `_call`; the wrapper keeps fn's metadata.
    def mul_add(a, b):
        """doc of mul_add"""
        return a * b + a

    f = ingot.fuse(mul_add)
    assert isinstance(f, ingot._ingot.FastCalls)
    assert f.__name__ == "mul_add" and f.__doc__ == "doc of mul_add" and f.__wrapped__ is mul_add
    for _ in range(3):
        x, xn = rand(rng, (7, 3), "float32")
        y, yn = rand(rng, (7, 3), "float32")
        poison((7, 3), "float32")
        check(f(x, y), xn * yn + xn, "float32")
        check(f(a=x, b=y), xn * yn + xn, "float32")
        check(f(x, b=3), xn * 3 + xn, "float32")
    with pytest.raises(TypeError):
        f(x)


def test_prepared_call_checks_its_arguments(rng):
    k = ingot.compile(SCALE_SRC, device=dev())["scale"]
    call = k._prepare((1000,), ingot.float32, 2.5, 1000, grid=(1000,))
    x, xn = rand(rng, (1000,), "float32")
    with pytest.raises(TypeError, match="takes 1 arrays, got 2"):
        call(x, x)
    with pytest.raises(TypeError, match="too many trailing arguments"):
        k._prepare((1000,), ingot.float32, 2.5, 1000, 7, 8, grid=(1000,))
    with pytest.raises(ingot.KernelArgumentError, match="out of range"):
        k._prepare((1000,), ingot.float32, 2.5, -1, grid=(1000,))
    np.testing.assert_allclose(to_np(call(x)), 2.5 * xn, rtol=1e-6)


# ---- user kernels -----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_elementwise_kernel(rng, dtype):
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    hyp = ingot.elementwise_kernel("T x, T y", "T z", "z = sqrt(x * x + y * y);", "hyp")
    x, xn = rand(rng, (20, 30), dtype)
    y, yn = rand(rng, (30,), dtype)
    poison((20, 30), dtype)
    z = hyp(x, y)
    assert z.dtype == x.dtype and z.shape == (20, 30)
    check(z, np.sqrt(xn * xn + yn * yn), dtype, scale=4)
    # Composes with fuse: one kernel.
    f = ingot.fuse(lambda a, b: hyp(a, b) * 2 + 1)
    assert f.is_fused(x, y)
    check(f(x, y), 2 * np.sqrt(xn * xn + yn * yn) + 1, dtype, scale=8)
    # A concrete type converts its argument; a scalar argument takes the parameter's type.
    scale = ingot.elementwise_kernel("float32 x, float32 s", "float32 z", "z = x * s;", "scale")
    i, iv = rand(rng, (40,), "int32")
    np.testing.assert_allclose(to_np(scale(i, 0.5)), iv * 0.5, rtol=1e-6)


def test_elementwise_kernel_errors(rng):
    with pytest.raises(ValueError):
        ingot.elementwise_kernel("T x y", "T z", "z = x;")
    k = ingot.elementwise_kernel("T x", "T z", "z = x + 1;", "inc")
    with pytest.raises(TypeError):
        k()
    with pytest.raises(TypeError):
        k(1.0)


def test_reduction_kernel(rng):
    l2 = ingot.reduction_kernel("T x", "T y", "x * x", "a + b", "y = sqrt(a);", "0", "l2")
    x, xn = rand(rng, (50, 80), "float32")
    poison((50,), "float32")
    np.testing.assert_allclose(to_np(l2(x, axis=1)), np.sqrt((xn * xn).sum(axis=1)), rtol=1e-5)
    np.testing.assert_allclose(float(to_np(l2(x))), np.sqrt((xn * xn).sum()), rtol=1e-5)
    g = l2(x, axis=0, keepdims=True)
    assert g.shape == (1, 80)
    np.testing.assert_allclose(to_np(g), np.sqrt((xn * xn).sum(axis=0, keepdims=True)), rtol=1e-5)
    mx = ingot.reduction_kernel("T x", "T y", "x", "max(a, b)", "", "-INFINITY", "mx")
    f = ingot.fuse(lambda v: mx(ingot.abs(v) * 2, axis=1))
    assert f.is_fused(x)
    np.testing.assert_allclose(to_np(f(x)), np.abs(xn).max(axis=1) * 2, rtol=1e-6)


# ---- ingot.nn -----------------------------------------------------------------------------------


def np_logsumexp(v, axis, keepdims=False):
    m = np.max(v, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    r = np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        r = np.squeeze(r, axis=axis) if axis is not None else r.reshape(())
    return r


@pytest.mark.parametrize("kernel", [False, True])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_softmax_family(rng, monkeypatch, kernel, dtype):
    if not supported(dtype):
        pytest.skip("no float64 on this device")
    if kernel:
        monkeypatch.setattr(nn, "_FORCE_KERNEL", True)
    x, xn = rand(rng, (7, 300), dtype)
    x3, x3n = rand(rng, (4, 5, 6), dtype)
    t = (tol(dtype) or 1e-12) * 16
    for axis in (-1, 0):
        e = np.exp(xn - xn.max(axis=axis, keepdims=True))
        np.testing.assert_allclose(to_np(nn.softmax(x, axis=axis)).astype(np.float64),
                                   e / e.sum(axis=axis, keepdims=True), rtol=t, atol=t)
        np.testing.assert_allclose(to_np(nn.log_softmax(x, axis=axis)).astype(np.float64),
                                   xn - np_logsumexp(xn, axis, True), rtol=t, atol=t * 10)
    for axis, kd in [(None, False), (1, False), ((0, 2), True), (-1, True)]:
        np.testing.assert_allclose(to_np(nn.logsumexp(x3, axis=axis, keepdims=kd)).astype(np.float64),
                                   np_logsumexp(x3n, axis, kd), rtol=t, atol=t * 10)
    special = ingot.asarray(np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf],
                                      [np.inf, 0.0, 1.0], [np.nan, 0.0, 1.0]], dtype=np.float32))
    lse = to_np(nn.logsumexp(special, axis=1))
    assert np.isclose(lse[0], np.log(1 + np.e)) and lse[1] == -np.inf and lse[2] == np.inf
    assert np.isnan(lse[3])


@pytest.mark.parametrize("k", [1, 255, 8192, 8193, 20000])
def test_softmax_row_lengths_either_side_of_the_register_path(rng, monkeypatch, k):
    # Rows up to 8192 values are held in registers; longer ones take the online pass. A row of
    # three +inf / -inf / NaN cases rides along at each length.
    monkeypatch.setattr(nn, "_FORCE_KERNEL", True)
    xn = rng.standard_normal((5, k)) * 4
    xn[1, k // 2] = 60.0  # one dominant value
    xn[2, :] = -np.inf
    xn[3, k - 1] = np.inf
    xn[4, 0] = np.nan
    x = ingot.asarray(xn.astype(np.float32), device=dev())
    xs = xn.astype(np.float32).astype(np.float64)
    poison((5, k), "float32")
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        m = np.max(xs, axis=1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0)
        e = np.exp(xs - m)
        want_sm = e / e.sum(axis=1, keepdims=True)
        want_lse = (np.log(e.sum(axis=1, keepdims=True)) + m)[:, 0]
        want_lsm = xs - want_lse[:, None]
    t = 2e-6 * 16
    np.testing.assert_allclose(to_np(nn.softmax(x, axis=1)), want_sm, rtol=t, atol=t, equal_nan=True)
    np.testing.assert_allclose(to_np(nn.logsumexp(x, axis=1)), want_lse, rtol=t, atol=t, equal_nan=True)
    got = to_np(nn.log_softmax(x, axis=1))
    np.testing.assert_allclose(got[[0, 1]], want_lsm[[0, 1]], rtol=t, atol=t * 10)
    assert np.isnan(got[4]).all() and np.isnan(to_np(nn.softmax(x, axis=1))[4]).all()
