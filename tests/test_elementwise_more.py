"""copysign, hypot, logaddexp, nextafter, signbit, reciprocal against NumPy (every float dtype,
special values, broadcasting, integer inputs)."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import FLOAT_DTYPES, INT_DTYPES, assert_close, make, random_data, to_bf16_exact, to_np

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 1e-30, -3.5, 700.0, -700.0])


def _with_special(rng, n, dtype):
    a = random_data(rng, (n,), dtype, -30, 30)
    a = a.astype(np.float32 if dtype == "bfloat16" else dtype)
    sp = SPECIAL.astype(a.dtype)
    if dtype == "bfloat16":
        sp = to_bf16_exact(sp.astype(np.float32))
    a[: len(sp)] = sp
    rng.shuffle(a)
    return a


def _np_ref(name, a, b, dtype):
    """NumPy's result computed in float64 for the 16-bit types (then rounded as ingot does)."""
    f = getattr(np, name)
    if dtype in ("float16", "bfloat16"):
        with np.errstate(invalid="ignore"):
            r = f(a.astype(np.float64), b.astype(np.float64))
        return r.astype(np.float32) if dtype == "bfloat16" else r.astype(np.float16)
    with np.errstate(invalid="ignore"):
        return f(a, b)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("name", ["copysign", "hypot", "logaddexp"])
def test_float_binary_matches_numpy(rng, name, dtype):
    a = _with_special(rng, 1001, dtype)
    b = _with_special(rng, 1001, dtype)
    got = getattr(ingot, name)(make(a, dtype), make(b, dtype))
    assert got.dtype == dtype
    want = _np_ref(name, a, b, dtype)
    assert_close(got, want, dtype, "transcendental")


@pytest.mark.parametrize("name", ["copysign", "hypot", "logaddexp", "nextafter"])
def test_float_binary_broadcasting_and_scalars(rng, name):
    a = random_data(rng, (4, 1, 5), "float64")
    b = random_data(rng, (3, 1), "float64")
    # A few ulp of the inputs' magnitude as well: logaddexp(a, b) = max + log1p(exp(-|a - b|))
    # cancels near zero, where 2 ulp of the inputs are many ulp of the result (seen on CUDA).
    atol = 4e-16 * max(np.abs(a).max(), np.abs(b).max(), 3.0)
    got = getattr(ingot, name)(make(a), make(b))
    np.testing.assert_allclose(to_np(got), getattr(np, name)(a, b), rtol=4e-16, atol=atol)
    got = getattr(ingot, name)(make(a), -2.0)
    np.testing.assert_allclose(to_np(got), getattr(np, name)(a, -2.0), rtol=4e-16, atol=atol)
    got = getattr(ingot, name)(3, make(a))
    assert got.dtype == ingot.float64
    np.testing.assert_allclose(to_np(got), getattr(np, name)(3.0, a), rtol=4e-16, atol=atol)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_nextafter_is_exact(rng, dtype):
    a = _with_special(rng, 777, dtype)
    b = _with_special(rng, 777, dtype)
    b[::5] = a[::5]  # equal pairs
    b[1::7] = 0.0
    a[2::9] = 0.0
    got = to_np(ingot.nextafter(make(a), make(b)))
    # The array API standard: equal arguments give x2 (-0 toward +0 is +0). NumPy's float16 loop
    # returns x1 on some machines (x86 here) and x2 on others (the H200 hosts).
    want = np.where(a == b, b, np.nextafter(a, b))
    np.testing.assert_array_equal(got, want)
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    # Exact bits for non-NaN results (signed zeros and subnormals included).
    ibits = {"float16": np.uint16, "float32": np.uint32, "float64": np.uint64}[dtype]
    np.testing.assert_array_equal(got[~nan].view(ibits), want[~nan].view(ibits))


def test_nextafter_functor_of_the_gpu_kernels_on_signed_zeros():
    # The GPU kernels' bop_nextafter (binary.metal) run through the device's compiler: equal
    # arguments give y for every type (the array API standard), bit for bit.
    from ingot import _ingot

    src = _ingot._kernel_source("functor", ingot.default_device()) + """
kernel void na(device const half* x [[buffer(0)]], device const half* y [[buffer(1)]],
               device half* o [[buffer(2)]], device const float* xf [[buffer(3)]],
               device const float* yf [[buffer(4)]], device float* of [[buffer(5)]],
               uint i [[thread_position_in_grid]]) {
  o[i] = bop_nextafter::f(x[i], y[i]);
  of[i] = bop_nextafter::f(xf[i], yf[i]);
}
"""
    k = ingot.compile(src, file_name="nextafter_functor.metal")["na"]
    x = np.array([-0.0, 0.0, 1.0, -0.0, 2.0], dtype=np.float16)
    y = np.array([0.0, -0.0, 1.0, 1.0, -np.inf], dtype=np.float16)
    o = ingot.full((5,), 7.0, dtype=ingot.float16)
    of = ingot.full((5,), 7.0, dtype=ingot.float32)
    k(make(x, "float16"), make(y, "float16"), o, make(x.astype(np.float32), "float32"),
      make(y.astype(np.float32), "float32"), of, grid=(5,))
    want = np.array([0.0, -0.0, 1.0, 2.0**-24, np.nextafter(np.float16(2.0), np.float16(0.0))], np.float16)
    np.testing.assert_array_equal(to_np(o).view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(to_np(of).view(np.uint32),
                                  np.nextafter(x.astype(np.float32), y.astype(np.float32)).view(np.uint32))


def test_nextafter_bfloat16_steps_one_bfloat16_ulp():
    vals = np.array([1.0, -1.0, 0.0, -0.0, 3.0e38, 1e-38], dtype=np.float32)
    toward = np.array([2.0, 0.0, -1.0, 1.0, np.inf, 0.0], dtype=np.float32)
    got = to_np(ingot.nextafter(make(vals, "bfloat16"), make(toward, "bfloat16"))).view(np.uint32) >> 16
    bits = to_bf16_exact(vals).view(np.uint32) >> 16
    want = np.array([bits[0] + 1, bits[1] - 1, 0x8001, 0x0001, bits[4] + 1, bits[5] - 1], dtype=np.uint32)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_signbit_and_reciprocal_floats(rng, dtype):
    a = _with_special(rng, 513, dtype)
    s = ingot.signbit(make(a, dtype))
    assert s.dtype == ingot.bool
    np.testing.assert_array_equal(to_np(s), np.signbit(a))
    r = ingot.reciprocal(make(a, dtype))
    assert r.dtype == dtype
    with np.errstate(divide="ignore", over="ignore"):
        want = (1.0 / a.astype(np.float64)).astype(np.float32 if dtype == "bfloat16" else dtype)
    if dtype == "bfloat16":
        want = to_bf16_exact(want)
    assert_close(r, want, dtype)


@pytest.mark.parametrize("dtype", INT_DTYPES + ["bool"])
def test_signbit_and_reciprocal_integers(rng, dtype):
    a = random_data(rng, (65,), dtype)
    if dtype != "bool":
        a[0] = 0
    np.testing.assert_array_equal(to_np(ingot.signbit(make(a))), a < 0 if dtype != "bool" else np.zeros(65, bool))
    r = ingot.reciprocal(make(a))
    assert ingot.isdtype(r.dtype, "real floating")
    with np.errstate(divide="ignore"):
        want = 1.0 / a.astype(np.float64)
    np.testing.assert_allclose(to_np(r).astype(np.float64), want, rtol=1e-3)


def test_new_functions_reject_integer_only_misuse():
    with pytest.raises((TypeError, ValueError)):
        ingot.copysign("a", ingot.asarray([1.0]))
