"""moveaxis, repeat, roll, tile, unstack, diff, meshgrid, tril/triu, expand_dims, vecdot,
tensordot, count_nonzero, cumulative_prod and the inspection namespace, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import ALL_DTYPES, DEVICE, NUMPY_DTYPES, assert_close, make, random_data, to_np


def test_moveaxis_matches_numpy(rng):
    a = random_data(rng, (2, 3, 4, 5), "int32")
    x = make(a)
    for src, dst in [(0, -1), (-1, 0), ((0, 1), (2, 3)), ((3, 0), (0, 1)), (1, 1), ((), ())]:
        got = ingot.moveaxis(x, src, dst)
        np.testing.assert_array_equal(to_np(got), np.moveaxis(a, src, dst))
    with pytest.raises(ValueError):
        ingot.moveaxis(x, (0, 0), (1, 2))
    with pytest.raises(ValueError):
        ingot.moveaxis(x, 4, 0)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float32", "float64", "uint64"])
def test_repeat_with_an_integer(rng, dtype):
    a = random_data(rng, (3, 4), dtype)
    x = make(a)
    for k in (0, 1, 3):
        np.testing.assert_array_equal(to_np(ingot.repeat(x, k)), np.repeat(a, k))
        for ax in (0, 1, -1):
            np.testing.assert_array_equal(to_np(ingot.repeat(x, k, axis=ax)), np.repeat(a, k, axis=ax))
    with pytest.raises(ValueError):
        ingot.repeat(x, -1)


@pytest.mark.parametrize("shape,shift,axis", [((7,), 3, None), ((7,), -10, None), ((3, 4), 5, None),
                                              ((3, 4), 1, 0), ((3, 4), (1, -2), (0, 1)),
                                              ((3, 4), (2, 2), (1, 1)), ((2, 3, 4), 7, -1),
                                              ((0, 3), 1, 0), ((5,), 0, 0)])
def test_roll_matches_numpy(rng, shape, shift, axis):
    a = random_data(rng, shape, "float64")
    x = make(a)
    got = ingot.roll(x, shift, axis=axis)
    np.testing.assert_array_equal(to_np(got), np.roll(a, shift, axis=axis))
    assert not got._shares_buffer(x) or got.size == 0


@pytest.mark.parametrize("shape,reps", [((3,), (2,)), ((2, 3), (2, 1)), ((2, 3), (3,)), ((3,), (2, 2)),
                                        ((), (3,)), ((2, 0), (2, 2)), ((2, 3), (0, 1)), ((2,), ())])
def test_tile_matches_numpy(rng, shape, reps):
    a = random_data(rng, shape, "int16")
    np.testing.assert_array_equal(to_np(ingot.tile(make(a), reps)), np.tile(a, reps))


def test_unstack_gives_views_along_the_axis(rng):
    a = random_data(rng, (2, 3, 4), "float32")
    x = make(a)
    for ax in (0, 1, 2, -1):
        parts = ingot.unstack(x, axis=ax)
        assert isinstance(parts, tuple) and len(parts) == a.shape[ax]
        for i, p in enumerate(parts):
            np.testing.assert_array_equal(to_np(p), np.take(a, i, axis=ax))
    assert ingot.unstack(make(np.zeros((0, 2))), axis=0) == ()


@pytest.mark.parametrize("dtype", ["int64", "float32", "uint8", "bool"])
def test_diff_matches_numpy(rng, dtype):
    a = random_data(rng, (4, 6), dtype)
    x = make(a)
    for n in (0, 1, 2, 7):
        for ax in (0, 1, -1):
            np.testing.assert_array_equal(to_np(ingot.diff(x, axis=ax, n=n)), np.diff(a, n=n, axis=ax))
    p = random_data(rng, (4, 1), dtype)
    q = random_data(rng, (4, 2), dtype)
    np.testing.assert_array_equal(to_np(ingot.diff(x, prepend=make(p), append=make(q))),
                                  np.diff(a, prepend=p, append=q))
    with pytest.raises(ValueError):
        ingot.diff(make(np.float64(1.0)))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy(rng, indexing):
    vs = [random_data(rng, (n,), "float32") for n in (3, 4, 2)]
    for k in (0, 1, 2, 3):
        got = ingot.meshgrid(*[make(v) for v in vs[:k]], indexing=indexing)
        want = np.meshgrid(*vs[:k], indexing=indexing)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(to_np(g), w)
    with pytest.raises(ValueError):
        ingot.meshgrid(make(vs[0]), make(vs[1].astype(np.float64)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tril_triu_match_numpy(rng, dtype):
    a = random_data(rng, (2, 5, 4), dtype)
    x = make(a, dtype)
    ref = a.astype(np.float32) if dtype == "bfloat16" else a
    for k in (-6, -2, 0, 1, 3, 10):
        assert_close(ingot.tril(x, k=k), np.tril(ref, k), dtype)
        assert_close(ingot.triu(x, k=k), np.triu(ref, k), dtype)
    with pytest.raises(ValueError):
        ingot.tril(make(a[0, 0]))


def test_expand_dims_takes_axis_by_position(rng):
    a = random_data(rng, (2, 3), "int8")
    np.testing.assert_array_equal(to_np(ingot.expand_dims(make(a), 1)), np.expand_dims(a, 1))
    np.testing.assert_array_equal(to_np(ingot.expand_dims(make(a), -1)), np.expand_dims(a, -1))


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint8", "float32", "float64"])
def test_vecdot_keeps_the_promoted_dtype(rng, dtype):
    a = random_data(rng, (3, 1, 5), dtype, 0 if dtype.startswith("u") else -100, 100)
    b = random_data(rng, (4, 5), dtype, 0 if dtype.startswith("u") else -100, 100)
    got = ingot.vecdot(make(a), make(b))
    assert got.dtype == dtype
    want = np.sum(a.astype(np.float64) * b.astype(np.float64), axis=-1)
    if dtype.startswith(("int", "uint")):
        want = np.sum(a.astype(np.int64) * b.astype(np.int64), axis=-1).astype(dtype)
        np.testing.assert_array_equal(to_np(got), want)
    else:
        np.testing.assert_allclose(to_np(got), want, rtol=1e-5)
    got = ingot.vecdot(make(a), make(a), axis=-3)
    wide = np.int64 if dtype.startswith(("int", "uint")) else np.float64
    want = np.sum(a.astype(wide) ** 2, axis=0).astype(dtype)
    np.testing.assert_allclose(to_np(got).astype(np.float64), want.astype(np.float64), rtol=1e-5)
    with pytest.raises(ValueError):
        ingot.vecdot(make(a), make(random_data(rng, (4, 1), dtype)))


@pytest.mark.parametrize("s1,s2,axes", [((2, 3, 4), (3, 4, 5), 2), ((2, 3), (3, 2), 1), ((2, 3), (4,), 0),
                                        ((2, 3, 4), (4, 2, 3), ([0, 1], [1, 2])),
                                        ((3, 4), (4, 3), ((1, 0), (0, 1))), ((2, 0), (0, 3), 1),
                                        ((3,), (3,), ([0], [0]))])
@pytest.mark.parametrize("dtype", ["int16", "float64"])
def test_tensordot_matches_numpy(rng, s1, s2, axes, dtype):
    a = random_data(rng, s1, dtype)
    b = random_data(rng, s2, dtype)
    got = ingot.tensordot(make(a), make(b), axes=axes)
    want = np.tensordot(a, b, axes=axes)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(to_np(got), want, rtol=1e-12)


def test_tensordot_mixed_dtypes_and_errors(rng):
    a = random_data(rng, (2, 3), "int8")
    b = random_data(rng, (3, 2), "float32")
    got = ingot.tensordot(make(a), make(b), axes=1)
    assert got.dtype == ingot.float32
    np.testing.assert_allclose(to_np(got), np.tensordot(a.astype(np.float32), b, axes=1), rtol=1e-5)
    with pytest.raises(ValueError):
        ingot.tensordot(make(a), make(b), axes=([0], [0]))
    with pytest.raises(ValueError):
        ingot.tensordot(make(a), make(b), axes=3)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_count_nonzero_matches_numpy(rng, dtype):
    a = random_data(rng, (3, 700, 5), dtype)
    if dtype.startswith("float"):
        a[0, ::7, 1] = np.nan
    a[1] = 0
    x = make(a)
    for axis in (None, 0, 1, 2, (0, 2), (0, 1, 2)):
        for keepdims in (False, True):
            got = ingot.count_nonzero(x, axis=axis, keepdims=keepdims)
            assert got.dtype == ingot.int64
            np.testing.assert_array_equal(to_np(got), np.count_nonzero(a, axis=axis, keepdims=keepdims))
    big = (rng.random(100_003) < 0.3).astype(dtype)
    assert int(ingot.count_nonzero(make(big))) == np.count_nonzero(big)
    assert int(ingot.count_nonzero(make(np.zeros((0, 3), dtype)))) == 0


@pytest.mark.parametrize("dtype", ["int8", "int32", "uint16", "float32", "float64", "bool"])
def test_cumulative_prod_matches_numpy(rng, dtype):
    a = random_data(rng, (3, 41), dtype, 0 if dtype.startswith("u") else -3, 3)
    x = make(a)
    for ax in (0, 1, -1):
        got = ingot.cumulative_prod(x, axis=ax)
        want = np.cumprod(a, axis=ax)
        assert got.dtype == want.dtype.name
        if dtype.startswith("float"):
            np.testing.assert_allclose(to_np(got), want, rtol=1e-5)
        else:
            np.testing.assert_array_equal(to_np(got), want)
    got = ingot.cumulative_prod(x, axis=1, include_initial=True)
    want = np.concatenate([np.ones((3, 1), np.cumprod(a, axis=1).dtype), np.cumprod(a, axis=1)], axis=1)
    np.testing.assert_allclose(to_np(got).astype(np.float64), want.astype(np.float64), rtol=1e-5)
    got = ingot.cumulative_prod(x, axis=0, dtype=ingot.float64)
    np.testing.assert_allclose(to_np(got), np.cumprod(a.astype(np.float64), axis=0), rtol=1e-12)
    with pytest.raises(ValueError):
        ingot.cumulative_prod(x)


def test_cumulative_prod_long_lines_exercise_the_tiled_scan(rng):
    a = rng.uniform(0.999, 1.001, size=(2, 50_000))
    got = ingot.cumulative_prod(make(a), axis=1)
    np.testing.assert_allclose(to_np(got), np.cumprod(a, axis=1), rtol=1e-10)
    b = rng.integers(-1, 2, size=70_001).astype(np.int64)
    b[b == 0] = 1
    np.testing.assert_array_equal(to_np(ingot.cumulative_prod(make(b))), np.cumprod(b))


def test_inspection_dtypes_are_array_api_dtypes():
    info = ingot.__array_namespace_info__()
    names = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "float16", "complex64", "complex128"}
    d = info.dtypes(device=DEVICE)
    assert set(d) <= names and "bfloat16" not in d
    assert set(info.dtypes(kind="real floating", device=DEVICE)) <= {"float16", "float32", "float64"}
    for dt in d.values():
        ingot.empty(1, dtype=dt, device=DEVICE)
    caps = info.capabilities()
    assert caps["boolean indexing"] is True and caps["data-dependent shapes"] is True
