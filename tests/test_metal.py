"""Metal-specific behaviour: zero-copy NumPy views, batching, the pipeline cache, float64 refusal.

These run only with ``INGOT_DEVICE=metal`` on a Mac (the whole suite also runs there under that
setting). The Metal backend has not yet run on Apple hardware: these tests are its first check.
The zero-copy tests need the extension built with the bindings' ``metal`` feature
(``maturin develop --release --features metal``).
"""

from __future__ import annotations

import gc
import mmap
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
        ingot.compile("kernel void f(device float* x [[buffer(0)]]) { x[0] = nope; }", device=DEV)["f"]


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


# ---- NumPy <-> Metal without copies -----------------------------------------------------------

PAGE = mmap.PAGESIZE  # 16 KiB on Apple silicon


def _data_ptr(obj) -> int:
    return obj.__array_interface__["data"][0]


def _page_aligned(nbytes: int, dtype, offset: int = 0) -> np.ndarray:
    """A 1-D NumPy array of ``nbytes`` bytes whose data starts ``offset`` bytes after a page
    boundary (over-allocation, then a slice; the slice keeps the allocation alive)."""
    raw = np.empty(nbytes + 2 * PAGE, dtype=np.uint8)
    start = (-raw.ctypes.data) % PAGE + offset
    a = raw[start:start + nbytes].view(dtype)
    assert (a.ctypes.data - offset) % PAGE == 0
    return a


def _fill(rng, a: np.ndarray) -> np.ndarray:
    """Fills ``a`` in place with fresh random values of its dtype; returns a copy."""
    if a.dtype == np.bool_:
        a[...] = rng.random(a.shape) < 0.5
    elif a.dtype.kind in "iu":
        info = np.iinfo(a.dtype)
        a[...] = rng.integers(max(info.min, -1000), min(info.max, 1000), size=a.shape, dtype=a.dtype)
    else:
        a[...] = rng.standard_normal(a.shape).astype(a.dtype)
    return a.copy()


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32", "int64", "uint8", "bool"])
def test_page_aligned_numpy_array_is_used_without_copy(rng, dtype):
    a = _page_aligned(2 * PAGE, dtype).reshape(4, -1)
    expected = _fill(rng, a)
    x = ingot.asarray(a, device=DEV)
    assert x.device == ingot.Device(DEV)
    assert x.dtype == dtype and x.shape == a.shape and x.writable
    assert _data_ptr(x) == a.ctypes.data, "the Metal buffer is the NumPy memory"
    np.testing.assert_array_equal(np.asarray(x), expected)
    # copy=False succeeds; copy=True does not alias.
    y = ingot.asarray(a, device=DEV, copy=False)
    assert _data_ptr(y) == a.ctypes.data
    z = ingot.asarray(a, device=DEV, copy=True)
    assert _data_ptr(z) != a.ctypes.data
    np.testing.assert_array_equal(np.asarray(z), expected)
    # A write through NumPy is seen by ingot (no GPU work is queued); the copy keeps its values.
    before = expected.copy()
    a[0, 0] = a[1, 1]
    expected[0, 0] = expected[1, 1]
    assert x[0, 0].item() == expected[0, 0]
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(np.asarray(z), before)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_gpu_writes_into_a_wrapped_numpy_array(rng, dtype):
    a = _page_aligned(3 * PAGE, dtype)
    expected = _fill(rng, a)
    b = rng.standard_normal(a.shape).astype(np.float32) if dtype == "float32" else \
        rng.integers(-1000, 1000, size=a.shape, dtype=np.int32)
    x = ingot.asarray(a, device=DEV)
    x += ingot.asarray(b, device=DEV)  # queued on the GPU, writes the NumPy memory
    ingot.synchronize(DEV)
    np.testing.assert_array_equal(a, expected + b)
    x *= 3
    # np.asarray synchronises before exposing the memory.
    np.testing.assert_array_equal(np.asarray(x), (expected + b) * 3)
    np.testing.assert_array_equal(a, (expected + b) * 3)


def test_mmap_backed_numpy_array_is_wrapped(rng):
    mm = mmap.mmap(-1, 4 * PAGE)
    a = np.frombuffer(mm, dtype=np.float32)
    assert a.flags.writeable and a.ctypes.data % PAGE == 0
    expected = _fill(rng, a)
    x = ingot.asarray(a, device=DEV)
    assert _data_ptr(x) == a.ctypes.data
    np.testing.assert_allclose(np.asarray(ingot.exp(x)), np.exp(expected), rtol=2e-6, atol=0)
    x += 1
    ingot.synchronize(DEV)
    np.testing.assert_array_equal(a, expected + np.float32(1))
    # The ingot array keeps the NumPy array (and so the mapping) alive.
    del a, mm
    gc.collect()
    np.testing.assert_array_equal(np.asarray(x), expected + np.float32(1))


def test_read_only_page_aligned_array_is_wrapped_read_only(rng):
    a = _page_aligned(PAGE, np.float32)
    expected = _fill(rng, a)
    a.flags.writeable = False
    x = ingot.asarray(a, device=DEV)
    assert not x.writable
    assert _data_ptr(x) == a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x * 2), expected * 2)
    with pytest.raises(ValueError):
        x += 1
    np.testing.assert_array_equal(a, expected)


def test_kernel_uses_a_page_aligned_numpy_argument_in_place(rng):
    k = ingot.compile(ADD_ONE, device=DEV)["add_one"]
    a = _page_aligned(2 * PAGE, np.float32)
    expected = _fill(rng, a)
    k(a.size, a)  # the call synchronises: the NumPy array holds the result when it returns
    np.testing.assert_array_equal(a, expected + np.float32(1))
    a[:] = 0  # and may be written at once
    k(a.size, a)
    np.testing.assert_array_equal(a, np.ones_like(a))


def test_kernel_copies_an_unaligned_numpy_argument_and_writes_back(rng):
    k = ingot.compile(ADD_ONE, device=DEV)["add_one"]
    a = _page_aligned(2 * PAGE, np.float32, offset=4)
    expected = _fill(rng, a)
    k(a.size, a)
    np.testing.assert_array_equal(a, expected + np.float32(1))


@pytest.mark.parametrize("offset,nbytes", [(4, 2 * PAGE), (0, PAGE + 4), (0, 100)])
def test_unaligned_numpy_array_is_copied(rng, offset, nbytes):
    a = _page_aligned(nbytes, np.float32, offset=offset)
    expected = _fill(rng, a)
    x = ingot.asarray(a, device=DEV)
    assert _data_ptr(x) != a.ctypes.data
    np.testing.assert_array_equal(np.asarray(x), expected)
    a[:] = 0  # the ingot array holds its own copy
    np.testing.assert_array_equal(np.asarray(x), expected)
    np.testing.assert_array_equal(np.asarray(x + 1), expected + np.float32(1))
    with pytest.raises(ValueError, match="copy=False"):
        ingot.asarray(a, device=DEV, copy=False)


def test_non_contiguous_numpy_array_is_copied(rng):
    a = _page_aligned(4 * PAGE, np.float32).reshape(8, -1)
    expected = _fill(rng, a)
    x = ingot.asarray(a[:, ::2], device=DEV)
    np.testing.assert_array_equal(np.asarray(x), expected[:, ::2])
    a[:] = 0
    np.testing.assert_array_equal(np.asarray(x), expected[:, ::2])


def test_numpy_operand_of_an_operation_is_copied(rng):
    # An operand is read by queued GPU work: it is copied, so a later NumPy write cannot
    # change the result.
    a = rng.standard_normal(4 * PAGE // 4).astype(np.float32)
    b = _page_aligned(4 * PAGE, np.float32)
    bb = _fill(rng, b)
    x = ingot.asarray(a, device=DEV)
    r = x + b
    b[:] = 0
    np.testing.assert_array_equal(np.asarray(r), a + bb)


def test_asarray_with_a_dtype_does_not_alias(rng):
    a = _page_aligned(2 * PAGE, np.float32)
    expected = _fill(rng, a)
    x = ingot.asarray(a, dtype="float16", device=DEV)
    a[:] = 0
    assert x.dtype == ingot.float16
    np.testing.assert_array_equal(np.asarray(x), expected.astype(np.float16))


def test_numpy_view_of_a_metal_array_shares_memory(rng):
    a = rng.standard_normal((64, 300)).astype(np.float32)
    x = ingot.asarray(a, device=DEV)
    y = x * 2 + 1  # queued; np.asarray waits for it
    ref = a * 2 + 1
    v1 = np.asarray(y)
    v2 = np.asarray(y)
    assert np.shares_memory(v1, v2)
    assert _data_ptr(v1) == _data_ptr(y)
    np.testing.assert_array_equal(v1, ref)
    # Later GPU writes land in the same memory; reading the interface again synchronises.
    y += 1
    ref = ref + 1
    np.asarray(y)
    np.testing.assert_array_equal(v1, ref)
    # Views keep their strides and offsets.
    w = np.asarray(y[1:, ::3])
    assert np.shares_memory(w, v1)
    np.testing.assert_array_equal(w, ref[1:, ::3])
    # The NumPy view keeps the Metal buffer alive.
    del x, y
    gc.collect()
    np.testing.assert_array_equal(v1, ref)
    # __array__ with copy=False is allowed (a view), copy=True copies.
    z = ingot.asarray(a, device=DEV)
    assert np.shares_memory(z.__array__(copy=False), np.asarray(z))
    assert not np.shares_memory(z.__array__(copy=True), np.asarray(z))


def test_numpy_view_of_a_wrapped_array_is_the_numpy_memory(rng):
    a = _page_aligned(PAGE, np.int32)
    expected = _fill(rng, a)
    x = ingot.asarray(a, device=DEV)
    v = np.asarray(x)
    assert np.shares_memory(v, a)
    np.testing.assert_array_equal(v, expected)


def test_float64_numpy_array_is_refused_even_when_page_aligned(rng):
    a = _page_aligned(2 * PAGE, np.float64)
    expected = _fill(rng, a)
    for make in (lambda: ingot.asarray(a, device=DEV),
                 lambda: ingot.asarray(a, device=DEV, copy=False),
                 lambda: ingot._ingot.from_numpy(a, device=DEV)):
        with pytest.raises(TypeError, match="float64"):
            make()
    # With a dtype, float64 data is converted on the host and copied.
    x = ingot.asarray(a, dtype="float32", device=DEV)
    assert x.dtype == ingot.float32
    np.testing.assert_array_equal(np.asarray(x), expected.astype(np.float32))
    # A float64 kernel argument is refused too.
    k = ingot.compile(ADD_ONE, device=DEV)["add_one"]
    with pytest.raises((TypeError, ValueError)):
        k(a.size, a)
