"""unique_*, isin, nonzero, take, take_along_axis, repeat with array repeats, and indexing with
integer arrays and boolean masks (reading and assignment), against NumPy.

Under INGOT_DEVICE=cuda these run the GPU kernels; on the CPU, INGOT_CPU_OPS=kernels runs the
same kernels on the CPU kernel engine."""

from __future__ import annotations

import os

import numpy as np
import pytest

import ingot
from conftest import ALL_DTYPES, DEVICE, NUMPY_DTYPES, ON_CPU, check_interpreter_alive, make, to_bf16_exact, to_np


def _values(rng, shape, dtype, spread=20):
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith(("int", "uint")):
        lo = 0 if dtype.startswith("u") else -spread
        return rng.integers(lo, spread, size=shape, endpoint=True).astype(dtype)
    a = rng.integers(-spread, spread, size=shape).astype(np.float64) / 2
    flat = a.reshape(-1)
    if flat.size:
        pick = rng.random(flat.size)
        flat[pick < 0.05] = np.nan
        flat[(pick >= 0.05) & (pick < 0.07)] = np.inf
        flat[(pick >= 0.07) & (pick < 0.1)] = -0.0
    if dtype == "bfloat16":
        return to_bf16_exact(a.astype(np.float32))
    return a.astype(dtype)


def _np_unique(a):
    """NumPy's unique with every NaN distinct (equal_nan=False), inverse in a's shape."""
    return np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(1,), (0,), (33,), (4097,), (30, 70), (2, 3, 4), ()])
def test_unique_all_matches_numpy(rng, dtype, shape):
    a = _values(rng, shape, dtype)
    x = make(a, dtype)
    u = ingot.unique_all(x)
    vals, idx, inv, counts = _np_unique(a.reshape(-1) if a.ndim == 0 else a)
    np.testing.assert_array_equal(to_np(u.values), vals)
    np.testing.assert_array_equal(to_np(u.indices), idx)
    np.testing.assert_array_equal(to_np(u.counts), counts)
    assert u.inverse_indices.shape == x.shape
    np.testing.assert_array_equal(to_np(u.inverse_indices).reshape(-1), inv.reshape(-1))
    for r in (u.indices, u.inverse_indices, u.counts):
        assert r.dtype == ingot.int64
    # The others agree with unique_all.
    np.testing.assert_array_equal(to_np(ingot.unique_values(x)), vals)
    c = ingot.unique_counts(x)
    np.testing.assert_array_equal(to_np(c.values), vals)
    np.testing.assert_array_equal(to_np(c.counts), counts)
    i = ingot.unique_inverse(x)
    np.testing.assert_array_equal(to_np(i.inverse_indices).reshape(-1), inv.reshape(-1))
    # values[inverse] rebuilds x (NaN where x is NaN).
    rebuilt = to_np(u.values)[to_np(u.inverse_indices)] if x.size else np.zeros(shape)
    if x.size:
        np.testing.assert_array_equal(rebuilt.reshape(shape), a.astype(rebuilt.dtype))


@pytest.mark.parametrize("n,spread", [(100_003, 2), (60_000, 7), (250_000, 40_000)])
def test_unique_counts_over_many_tiles(rng, n, spread):
    """Values repeated over several whole compaction tiles (tiles where no value starts), few
    repeats, and many values: counts (and the rest) as NumPy's."""
    a = rng.integers(-spread, spread, size=n).astype(np.float32)
    x = make(a)
    c = ingot.unique_counts(x)
    vals, counts = np.unique(a, return_counts=True)
    np.testing.assert_array_equal(to_np(c.values), vals)
    np.testing.assert_array_equal(to_np(c.counts), counts)
    u = ingot.unique_all(x)
    vals, idx, inv, counts = _np_unique(a)
    np.testing.assert_array_equal(to_np(u.values), vals)
    np.testing.assert_array_equal(to_np(u.indices), idx)
    np.testing.assert_array_equal(to_np(u.counts), counts)
    np.testing.assert_array_equal(to_np(u.inverse_indices), inv)


def test_unique_nan_and_signed_zero():
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, -0.0])
    u = ingot.unique_all(make(a))
    v = to_np(u.values)
    assert v.size == 4 and v[0] == 0.0 and v[1] == 1.0 and np.isnan(v[2:]).all()
    np.testing.assert_array_equal(to_np(u.counts), [3, 1, 1, 1])
    np.testing.assert_array_equal(to_np(u.indices), [1, 4, 0, 3])


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_isin_matches_numpy(rng, dtype):
    for n, m in ((0, 3), (5, 0), (40, 7), (3000, 5000)):
        a = _values(rng, (n,), dtype)
        b = _values(rng, (m,), dtype)
        for invert in (False, True):
            got = ingot.isin(make(a), make(b), invert=invert)
            assert got.dtype == ingot.bool and got.shape == a.shape
            np.testing.assert_array_equal(to_np(got), np.isin(a, b, invert=invert))


def test_isin_scalars_and_promotion():
    x = make(np.array([1, 2, 3]))
    np.testing.assert_array_equal(to_np(ingot.isin(x, 2)), [False, True, False])
    assert builtin_bool(ingot.isin(3, x))
    got = ingot.isin(make(np.array([1.5, 2.0])), x)
    np.testing.assert_array_equal(to_np(got), [False, True])


def builtin_bool(a):
    return bool(a)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", [(1,), (0,), (4097,), (33, 31), (2, 3, 5)])
def test_nonzero_matches_numpy(rng, dtype, shape):
    a = _values(rng, shape, dtype, spread=2)
    got = ingot.nonzero(make(a))
    want = np.nonzero(a)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == ingot.int64
        np.testing.assert_array_equal(to_np(g), w)
    with pytest.raises(ValueError):
        ingot.nonzero(make(np.float32(1.0)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_take_matches_numpy(rng, dtype):
    a = _values(rng, (5, 6, 7), dtype, spread=100)
    x = make(a, dtype)
    ref = a.astype(np.float32) if dtype == "bfloat16" else a
    for axis in (0, 1, 2, -1):
        n = a.shape[axis]
        idx = rng.integers(-n, n, size=9)
        np.testing.assert_array_equal(to_np(ingot.take(x, make(idx), axis=axis)), np.take(ref, idx, axis=axis))
    idx = rng.integers(0, a.size, size=(3, 4)).astype(np.int32)
    np.testing.assert_array_equal(to_np(ingot.take(x.reshape(-1), make(idx))), np.take(ref.reshape(-1), idx))
    with pytest.raises(IndexError):
        ingot.take(x, make(np.array([0, 5])), axis=0)
    with pytest.raises(IndexError):
        ingot.take(x, make(np.array([-6])), axis=0)
    check_interpreter_alive()


@pytest.mark.parametrize("dtype", ["float32", "int64", "uint8", "bool", "float16"])
def test_take_along_axis_matches_numpy(rng, dtype):
    a = _values(rng, (6, 7, 5), dtype, spread=50)
    x = make(a)
    for axis in (0, 1, 2):
        i = ingot.argsort(x, axis=axis)
        np.testing.assert_array_equal(to_np(ingot.take_along_axis(x, i, axis=axis)),
                                      np.take_along_axis(a, to_np(i), axis=axis))
    idx = rng.integers(-7, 7, size=(1, 4, 5))
    np.testing.assert_array_equal(to_np(ingot.take_along_axis(x, make(idx), axis=1)),
                                  np.take_along_axis(a, np.where(idx < 0, idx + 7, idx), axis=1))
    with pytest.raises(IndexError):
        ingot.take_along_axis(x, make(np.full((6, 1, 5), 7)), axis=1)
    with pytest.raises(ValueError):
        ingot.take_along_axis(x, make(np.zeros((6, 1), np.int64)), axis=1)


def test_repeat_with_array_repeats(rng):
    a = rng.standard_normal((4, 5))
    x = make(a)
    for axis in (0, 1):
        r = rng.integers(0, 4, size=a.shape[axis])
        np.testing.assert_array_equal(to_np(ingot.repeat(x, make(r), axis=axis)), np.repeat(a, r, axis=axis))
    r = rng.integers(0, 3, size=a.size)
    np.testing.assert_array_equal(to_np(ingot.repeat(x, make(r))), np.repeat(a, r))
    np.testing.assert_array_equal(to_np(ingot.repeat(x, make(np.array([2])), axis=1)), np.repeat(a, 2, axis=1))
    with pytest.raises(ValueError):
        ingot.repeat(x, make(np.array([1, -1, 0, 0])), axis=0)
    with pytest.raises(ValueError):
        ingot.repeat(x, make(np.array([1, 2])), axis=0)


# ---- __getitem__ / __setitem__ -----------------------------------------------------------------

KEYS = [
    lambda r: np.array([0, 3, -1, 2]),
    lambda r: [1, 1, 0],
    lambda r: (slice(None), np.array([[0, 2], [5, 1]])),
    lambda r: (np.array([1, 2]), np.array([0, 4])),
    lambda r: (np.array([1, 2]), slice(1, 4), np.array([[0], [3]])),
    lambda r: (0, slice(None), np.array([3, 1])),
    lambda r: (slice(None), 2, np.array([3, 1])),
    lambda r: (None, np.array([1]), Ellipsis, slice(None, None, -2)),
    lambda r: (Ellipsis, np.array([0, 0, 3])),
    lambda r: np.array([], dtype=np.int64),
    lambda r: r.random((4, 6, 5)) < 0.5,
    lambda r: r.random((4, 6)) < 0.5,
    lambda r: (slice(None), r.random((6,)) < 0.5),
    lambda r: (np.array([True, False, False, True]), slice(None), np.array([1, 0])),
    lambda r: np.True_,
    lambda r: False,
]


@pytest.mark.parametrize("k", range(len(KEYS)))
@pytest.mark.parametrize("dtype", ["float64", "int16", "bool"])
def test_advanced_indexing_reads_like_numpy(rng, k, dtype):
    a = _values(rng, (4, 6, 5), dtype, spread=100)
    key = KEYS[k](rng)
    x = make(a)
    want = a[key]
    got = x[key]
    assert got.shape == want.shape
    np.testing.assert_array_equal(to_np(got), want)
    # The same key on a strided view.
    v = a[::-1, 1:, ::2]
    key_v = KEYS[k](np.random.default_rng(k))
    try:
        want_v = v[key_v]
    except IndexError:
        with pytest.raises(IndexError):
            make(a)[::-1, 1:, ::2][key_v]
        return
    np.testing.assert_array_equal(to_np(make(a)[::-1, 1:, ::2][key_v]), want_v)


# Keys that name some positions twice (key 0: -1 is 3): NumPy keeps the last value, as the
# native CPU backend does; GPU kernels keep one of them, so those cases assign arrays only on the
# native backend.
DUPLICATES = {0, 1, 8}
NATIVE = ON_CPU and os.environ.get("INGOT_CPU_OPS") != "kernels"


@pytest.mark.parametrize("k", range(len(KEYS)))
def test_advanced_indexing_assigns_like_numpy(rng, k):
    a = rng.standard_normal((4, 6, 5))
    key = KEYS[k](rng)
    shape = a[key].shape
    values = [7.5, rng.standard_normal(shape), rng.standard_normal(shape[-1:]) if shape else 1.0]
    if k in DUPLICATES and not NATIVE:
        values = values[:1]
    for value in values:
        want = a.copy()
        want[key] = value
        x = make(a)
        x[key] = value if np.isscalar(value) else make(np.asarray(value))
        np.testing.assert_array_equal(to_np(x), want)


def test_indexing_errors_are_index_errors(rng):
    x = make(rng.standard_normal((3, 4)))
    with pytest.raises(IndexError):
        x[np.array([0, 3])]
    with pytest.raises(IndexError):
        x[make(np.array([1.5]))]
    with pytest.raises(IndexError):
        x[make(np.array([True, False]))]
    with pytest.raises(IndexError):
        x["a"]
    with pytest.raises(IndexError):
        x[np.array([0]), np.array([0]), np.array([0])]
    with pytest.raises(IndexError):
        x[np.array([-4])] = 1.0
    check_interpreter_alive()


def test_masked_assignment_with_scalar_and_broadcast(rng):
    a = rng.standard_normal((50, 3))
    m = a[:, 0] > 0
    x = make(a)
    x[make(m)] = 0.0
    want = a.copy()
    want[m] = 0.0
    np.testing.assert_array_equal(to_np(x), want)
    row = rng.standard_normal(3)
    x[make(~m)] = make(row)
    want[~m] = row
    np.testing.assert_array_equal(to_np(x), want)
    b = make(a.copy())
    b[b > 0] = -1
    w = a.copy()
    w[w > 0] = -1
    np.testing.assert_array_equal(to_np(b), w)


def _complex_values(rng, shape, dtype):
    """Complex values from a small grid (many repeats), with NaN parts and signed zeros."""
    re = rng.integers(-3, 4, size=shape).astype(np.float64) / 2
    im = rng.integers(-2, 3, size=shape).astype(np.float64) / 2
    pick = rng.random(shape)
    re = np.where((pick < 0.05) | ((pick >= 0.14) & (pick < 0.16)), np.nan, re)
    im = np.where((pick >= 0.05) & (pick < 0.1), -0.0, im)
    im = np.where((pick >= 0.1) & (pick < 0.16), np.nan, im)
    z = np.empty(shape, dtype=np.complex128)
    z.real, z.imag = re, im
    return z.astype(dtype)


def _no_c128_on_metal(dtype):
    if DEVICE.kind == "metal" and dtype == "complex128":
        pytest.skip("no complex128 on Metal")


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(1,), (37,), (20, 30), (3, 2500)])
def test_sort_and_argsort_of_complex_match_numpy(rng, dtype, shape):
    # NumPy's order: [R + Rj, R + nanj, nan + Rj, nan + nanj], each class by its non-NaN parts;
    # -0 equals +0; argsort stable. Descending: the reverse, ties in their original order.
    _no_c128_on_metal(dtype)
    a = _complex_values(rng, shape, dtype)
    x = make(a)
    for axis in range(len(shape)):
        np.testing.assert_array_equal(to_np(ingot.sort(x, axis=axis)), np.sort(a, axis=axis))
        want = np.argsort(a, axis=axis, kind="stable")
        np.testing.assert_array_equal(to_np(ingot.argsort(x, axis=axis)), want)
        flipped = np.flip(a, axis=axis)
        n = shape[axis]
        down = n - 1 - np.flip(np.argsort(flipped, axis=axis, kind="stable"), axis=axis)
        np.testing.assert_array_equal(to_np(ingot.argsort(x, axis=axis, descending=True)), down)
        np.testing.assert_array_equal(to_np(ingot.sort(x, axis=axis, descending=True)),
                                      np.take_along_axis(a, down, axis=axis))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("shape", [(1,), (0,), (37,), (20, 30), ()])
def test_unique_of_complex_matches_numpy(rng, dtype, shape):
    _no_c128_on_metal(dtype)
    a = _complex_values(rng, shape, dtype)
    x = make(a)
    u = ingot.unique_all(x)
    flat = a.reshape(-1)
    # NumPy sorts complex numbers by real part, then imaginary part, and (like ingot) keeps every
    # NaN apart; compare the non-NaN values exactly and count the NaNs.
    vals, idx, inv, counts = np.unique(flat, return_index=True, return_inverse=True, return_counts=True,
                                       equal_nan=False)
    got = to_np(u.values)
    assert u.values.dtype == x.dtype and u.inverse_indices.shape == x.shape
    finite = ~np.isnan(vals)
    np.testing.assert_array_equal(got[: finite.sum()], vals[finite])
    assert np.isnan(got[finite.sum():]).all() and got.size == vals.size
    np.testing.assert_array_equal(to_np(u.counts)[: finite.sum()], counts[finite])
    # Each value's index points at an element equal to it, its first occurrence.
    gi = to_np(u.indices)
    for v, i in zip(got[: finite.sum()], gi[: finite.sum()]):
        assert flat[i] == v and not np.any(flat[:i] == v)
    if flat.size:
        rebuilt = got[to_np(u.inverse_indices).reshape(-1)]
        same = (rebuilt == flat) | (np.isnan(rebuilt) & np.isnan(flat))
        assert same.all()
    np.testing.assert_array_equal(to_np(ingot.unique_values(x)), got)
    np.testing.assert_array_equal(to_np(ingot.unique_counts(x).counts), to_np(u.counts))


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_nonzero_and_integer_indexing_of_complex(rng, dtype):
    _no_c128_on_metal(dtype)
    a = _complex_values(rng, (6, 7), dtype)
    a[rng.random(a.shape) < 0.4] = 0
    x = make(a)
    got = ingot.nonzero(x)
    for g, w in zip(got, np.nonzero(a)):
        np.testing.assert_array_equal(to_np(g), w)
    idx = rng.integers(-6, 6, size=9)
    np.testing.assert_array_equal(to_np(x[make(idx)]), a[idx])
    np.testing.assert_array_equal(to_np(ingot.take(x, make(idx), axis=0)), a[idx])
    y = make(np.full((6, 7), 99 + 99j, dtype=dtype))
    val = _complex_values(rng, (9, 7), dtype)
    uniq = np.unique(idx % 6, return_index=True)[1]
    y[make(idx[uniq])] = make(val[uniq])
    want = np.full((6, 7), 99 + 99j, dtype=dtype)
    want[idx[uniq]] = val[uniq]
    np.testing.assert_array_equal(to_np(y), want)
    # Masks, take_along_axis, an ellipsis before the array, and assignment of a broadcast scalar.
    mask = np.abs(a) > 0.5
    np.testing.assert_array_equal(to_np(x[make(mask)]), a[mask])
    cols = rng.integers(0, 7, size=(6, 3))
    np.testing.assert_array_equal(to_np(ingot.take_along_axis(x, make(cols), axis=1)),
                                  np.take_along_axis(a, cols, axis=1))
    np.testing.assert_array_equal(to_np(x[..., make(idx % 7)]), a[..., idx % 7])
    z = make(a.copy())
    z[make(mask)] = 3 - 2j
    w = a.copy()
    w[mask] = 3 - 2j
    np.testing.assert_array_equal(to_np(z), w)
