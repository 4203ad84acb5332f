"""sort, argsort (stable, descending), searchsorted against NumPy: every dtype, NaN/inf/-0.0,
duplicates, empty and 0-d arrays, sizes around the GPU tile edges, every axis.

Under INGOT_DEVICE=cuda these run the GPU kernels; on the CPU, INGOT_CPU_OPS=kernels runs the
same kernels on the CPU kernel engine."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import ALL_DTYPES, make, needs_gpu, to_bf16_exact, to_np

SIZES = [1, 2, 31, 33, 1023, 1025, 2048, 2049, 4097, 100003]


def _values(rng, shape, dtype, duplicates=True):
    """Random data with duplicates, and NaN, +-inf, +-0.0 for floats."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        hi = 20 if duplicates else info.max
        lo = 0 if dtype.startswith("u") else (-20 if duplicates else info.min)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    a = rng.integers(-30, 30, size=shape).astype(np.float64) / 4 if duplicates else rng.standard_normal(shape)
    flat = a.reshape(-1)
    k = flat.size
    if k:
        pick = rng.random(k)
        flat[pick < 0.05] = np.nan
        flat[(pick >= 0.05) & (pick < 0.07)] = np.inf
        flat[(pick >= 0.07) & (pick < 0.09)] = -np.inf
        flat[(pick >= 0.09) & (pick < 0.12)] = -0.0
    if dtype == "bfloat16":
        return to_bf16_exact(a.astype(np.float32))
    return a.astype(dtype)


def _ref_argsort(a, axis, descending):
    """NumPy's stable argsort, and the array API's descending (the reversed order, ties kept)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    flipped = np.flip(a, axis=axis)
    r = np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - r


def _assert_sorted_values(got, a, axis, descending):
    # kind="stable": NumPy 2.4's default float16 sort (x86-simd-sort on AVX-512) returned unsorted
    # arrays on the machine these tests were written on.
    want = np.sort(a, axis=axis, kind="stable")
    if descending:
        want = np.flip(want, axis=axis)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("n", SIZES)
def test_sort_and_argsort_1d(rng, dtype, n):
    a = _values(rng, (n,), dtype)
    x = make(a, dtype)
    for descending in (False, True):
        i = ingot.argsort(x, descending=descending)
        assert i.dtype == ingot.int64
        np.testing.assert_array_equal(to_np(i), _ref_argsort(a, -1, descending),
                                      err_msg=f"argsort {dtype} n={n} descending={descending}")
        s = ingot.sort(x, descending=descending)
        assert s.dtype == x.dtype
        _assert_sorted_values(to_np(s), a, -1, descending)


@pytest.mark.parametrize("dtype", ["float32", "int16", "uint64", "float64", "bool"])
@pytest.mark.parametrize("shape,axis", [((7, 300), -1), ((300, 7), 0), ((3, 4, 5), 1), ((40, 3000), 1),
                                        ((3000, 3), 0), ((0, 5), 1), ((5, 0), 1), ((1000, 2), 1)])
def test_sort_along_any_axis(rng, dtype, shape, axis):
    a = _values(rng, shape, dtype)
    x = make(a, dtype)
    for descending in (False, True):
        np.testing.assert_array_equal(to_np(ingot.argsort(x, axis=axis, descending=descending)),
                                      _ref_argsort(a, axis, descending))
        _assert_sorted_values(to_np(ingot.sort(x, axis=axis, descending=descending)), a, axis, descending)


def test_sort_of_strided_views_and_full_range_integers(rng):
    a = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=(50, 120), dtype=np.int64)
    x = make(a)[::2, ::-3]
    np.testing.assert_array_equal(to_np(ingot.sort(x, axis=0)), np.sort(a[::2, ::-3], axis=0, kind="stable"))
    np.testing.assert_array_equal(to_np(ingot.argsort(x)), np.argsort(a[::2, ::-3], kind="stable"))
    u = rng.integers(0, 2**64 - 1, size=5000, dtype=np.uint64)
    np.testing.assert_array_equal(to_np(ingot.sort(make(u))), np.sort(u, kind="stable"))


def test_signed_zeros_keep_their_sign_and_order():
    a = np.array([0.0, -0.0, 1.0, -0.0, 0.0, -1.0])
    x = make(a)
    s = to_np(ingot.sort(x))
    assert np.signbit(s).sum() == np.signbit(a).sum()
    np.testing.assert_array_equal(s, np.sort(a, kind="stable"))
    # argsort: -0.0 and 0.0 are equal, so they keep their original order.
    np.testing.assert_array_equal(to_np(ingot.argsort(x)), [5, 0, 1, 3, 4, 2])


def test_sort_errors():
    with pytest.raises((ValueError, IndexError)):
        ingot.sort(make(np.float64(1.0)))
    with pytest.raises((ValueError, IndexError)):
        ingot.argsort(make(np.zeros(3)), axis=1)
    with pytest.raises(TypeError):
        ingot.sort([1, 2, 3])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "uint32", "int64", "float16"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_matches_numpy(rng, dtype, side):
    for m in (0, 1, 37, 5000):
        s = np.sort(_values(rng, (m,), dtype), kind="stable")
        v = _values(rng, (4, 33), dtype)
        got = ingot.searchsorted(make(s), make(v), side=side)
        assert got.dtype == ingot.int64 and got.shape == v.shape
        np.testing.assert_array_equal(to_np(got), np.searchsorted(s, v, side=side))


def test_searchsorted_with_sorter_scalars_and_promotion(rng):
    a = rng.standard_normal(100)
    order = np.argsort(a)
    v = rng.standard_normal(20)
    got = ingot.searchsorted(make(a), make(v), sorter=make(order))
    np.testing.assert_array_equal(to_np(got), np.searchsorted(a, v, sorter=order))
    s = make(np.array([1, 3, 3, 7]))
    assert int(ingot.searchsorted(s, 3)) == 1
    assert int(ingot.searchsorted(s, 3, side="right")) == 3
    np.testing.assert_array_equal(to_np(ingot.searchsorted(s, make(np.array([2.5, 7.0])))), [1, 3])
    with pytest.raises(ValueError):
        ingot.searchsorted(make(np.zeros((2, 2))), make(np.zeros(3)))
    with pytest.raises(ValueError):
        ingot.searchsorted(s, 1, side="middle")


@needs_gpu
def test_radix_sort_beyond_one_scan_chunk(rng):
    """More than 4096 radix tiles (2^24 keys, too slow for the CPU kernel engine), NaNs and
    many repeated keys: values and the stable order."""
    n = 4096 * 4096 + 4096 * 3 + 5
    a = rng.integers(-1000, 1000, size=n).astype(np.float32) / 8
    a[rng.integers(0, n, size=1000)] = np.nan
    x = make(a)
    np.testing.assert_array_equal(to_np(ingot.sort(x)), np.sort(a, kind="stable"))
    np.testing.assert_array_equal(to_np(ingot.argsort(x)), np.argsort(a, kind="stable"))

def _complex_values(rng, shape, dtype):
    """Complex values with repeated parts and every NaN class (R + nanj, nan + Rj, nan + nanj),
    infinities and signed zeros in either part."""
    out = np.empty(shape, dtype=dtype)
    out.real = _values(rng, shape, "float64")
    out.imag = _values(rng, shape, "float64")
    return out


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_complex_searchsorted_matches_numpy(rng, dtype, side):
    for m in (0, 1, 37, 3000):
        s = np.sort(_complex_values(rng, (m,), dtype))
        v = _complex_values(rng, (4, 33), dtype)
        got = ingot.searchsorted(make(s), make(v), side=side)
        assert got.dtype == ingot.int64 and got.shape == v.shape
        np.testing.assert_array_equal(to_np(got), np.searchsorted(s, v, side=side))
    a = _complex_values(rng, (50,), dtype)
    order = np.argsort(a, kind="stable")
    v = _complex_values(rng, (7,), dtype)
    got = ingot.searchsorted(make(a), make(v), side=side, sorter=make(order))
    np.testing.assert_array_equal(to_np(got), np.searchsorted(a, v, side=side, sorter=order))
    # A real array searched for complex values, and the reverse: promoted together.
    r = np.sort(_values(rng, (40,), "float64"))
    np.testing.assert_array_equal(
        to_np(ingot.searchsorted(make(r), make(v), side=side)),
        np.searchsorted(r.astype(dtype), v, side=side),
    )


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_isin_matches_numpy(rng, dtype):
    a = _complex_values(rng, (5, 40), dtype)
    for m in (0, 1, 300):
        b = _complex_values(rng, (m,), dtype)
        for invert in (False, True):
            got = ingot.isin(make(a), make(b), invert=invert)
            assert got.dtype == ingot.bool and got.shape == a.shape
            np.testing.assert_array_equal(to_np(got), np.isin(a, b, invert=invert))
