"""Metal-specific behaviour: zero-copy NumPy views, batching, the pipeline cache, float64 refusal.

These run only with ``INGOT_DEVICE=metal`` on a Mac (the whole suite also runs there under that
setting). The Metal backend has not yet run on Apple hardware: these tests are its first check.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import ingot

ON_METAL = (os.environ.get("INGOT_DEVICE") or "").strip().lower().startswith("metal")

pytestmark = pytest.mark.skipif(
    not ON_METAL,
    reason="Metal tests run only with INGOT_DEVICE=metal (macOS with an Apple GPU)",
)

DEV = "metal"

ADD_ONE = """
#include <metal_stdlib>
using namespace metal;
kernel void add_one(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    x[i] = x[i] + 1.0f;
}
"""


def test_device_is_listed_and_named():
    d = ingot.Device(DEV)
    assert d.kind == "metal"
    assert d.is_available()
    assert d.name
    assert d in ingot.devices()
    info = d.memory_info()
    assert info["total"] > 0


def test_round_trip_and_numpy_view_after_synchronisation():
    x = np.arange(1000, dtype=np.float32)
    a = ingot.asarray(x, device=DEV)
    assert a.device == ingot.Device(DEV)
    b = a * 2 + 1
    ingot.Device(DEV).synchronize()
    view = np.asarray(b)
    np.testing.assert_array_equal(view, x * 2 + 1)


def test_many_kernel_launches_then_one_read():
    lib = ingot.compile(ADD_ONE, device=DEV)
    k = lib["add_one"]
    a = ingot.zeros(4096, dtype="float32", device=DEV)
    n = 200  # several command buffers (64 dispatches each by default)
    for _ in range(n):
        k(4096, a)
    np.testing.assert_array_equal(np.asarray(a), np.full(4096, n, dtype=np.float32))


def test_same_source_and_constants_reuse_the_pipeline():
    src = """
#include <metal_stdlib>
using namespace metal;
constant int K [[function_constant(0)]];
kernel void put(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = K; }
"""
    out = ingot.zeros(8, dtype="int32", device=DEV)
    ingot.compile(src, device=DEV, constants={"K": 5})["put"](8, out)
    np.testing.assert_array_equal(np.asarray(out), np.full(8, 5, dtype=np.int32))
    ingot.compile(src, device=DEV, constants={"K": 7})["put"](8, out)
    np.testing.assert_array_equal(np.asarray(out), np.full(8, 7, dtype=np.int32))


def test_float64_is_refused_with_a_clear_error():
    with pytest.raises((ingot.UnsupportedError, TypeError, ValueError)) as e:
        ingot.zeros(4, dtype="float64", device=DEV)
    assert "float64" in str(e.value)
    # Explicit conversion is the way in.
    a = ingot.asarray(np.array([1.5, 2.5]).astype(np.float32), device=DEV)
    np.testing.assert_array_equal(np.asarray(a), np.array([1.5, 2.5], dtype=np.float32))


def test_compile_error_is_a_compile_error():
    with pytest.raises(ingot.CompileError):
        ingot.compile("kernel void f(device float* x [[buffer(0)]]) { x[0] = nope; }", device=DEV)


def test_matmul_matches_numpy(rng):
    a = rng.standard_normal((3, 70, 33)).astype(np.float32)
    b = rng.standard_normal((33, 130)).astype(np.float32)
    got = np.asarray(ingot.matmul(ingot.asarray(a, device=DEV), ingot.asarray(b, device=DEV)))
    np.testing.assert_allclose(got, a @ b, rtol=1e-4, atol=1e-4)


def test_precise_math_by_default():
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void e(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
              uint i [[thread_position_in_grid]]) { y[i] = exp(x[i]); }
"""
    x = np.array([-np.inf, 0.0, np.nan, 1.0], dtype=np.float32)
    y = np.zeros(4, dtype=np.float32)
    xs = ingot.asarray(x, device=DEV)
    ys = ingot.asarray(y, device=DEV)
    ingot.compile(src, device=DEV)["e"](4, xs, ys)
    r = np.asarray(ys)
    assert r[0] == 0.0 and r[1] == 1.0 and np.isnan(r[2])
    np.testing.assert_allclose(r[3], np.float32(np.e), rtol=2e-7)
