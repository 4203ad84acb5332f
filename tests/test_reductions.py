"""Reductions and cumulative sums against NumPy: axes (int, tuple, negative), keepdims, every
dtype, NaN, ties, empty and 0-d arrays, bad axes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ingot
from conftest import (ALL_DTYPES, EPS, FLOAT_DTYPES, INT_DTYPES, check_interpreter_alive, make,
                      random_data, to_np)

REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "mean": np.mean, "var": np.var, "std": np.std,
    "min": np.min, "max": np.max, "all": np.all, "any": np.any,
}
ARG = {"argmin": np.argmin, "argmax": np.argmax}


def data_for(rng, name, shape, dtype):
    if name == "prod":
        if dtype in FLOAT_DTYPES:
            return random_data(rng, shape, dtype, 0.5, 1.5)
        return random_data(rng, shape, dtype, 1, 3)
    if name in ("all", "any"):
        return random_data(rng, shape, dtype, 0, 2) if dtype != "bool" else random_data(rng, shape, dtype)
    if name in ("min", "max", "argmin", "argmax") and dtype in INT_DTYPES:
        return random_data(rng, shape, dtype, 0, 5)  # ties: the first index must win
    return random_data(rng, shape, dtype)


def check_reduction(got, a, name, dtype, axis, keepdims, **kw):
    fn = REDUCTIONS.get(name) or ARG[name]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        floating = dtype in FLOAT_DTYPES and name in ("sum", "prod")
        if floating or name in ("mean", "var", "std"):
            if dtype not in FLOAT_DTYPES:
                dtype = "float64"  # integer means and variances are computed in float64
            ref = fn(a.astype(np.float64), axis=axis, keepdims=keepdims, **kw)
            scale = np.sum(np.abs(a.astype(np.float64)), axis=axis, keepdims=keepdims)
            n = max(1, a.size // max(1, np.size(ref)))
            if name in ("var", "std"):
                scale = np.abs(np.asarray(ref)) + EPS[dtype] * n
            if name == "prod":
                scale = np.abs(np.asarray(ref)) * n
            got_np = to_np(got).astype(np.float64)
            tol = 4 * EPS[dtype] if dtype != "bfloat16" else 1e-2
            assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
            err = np.abs(got_np - ref)
            bound = tol * np.abs(ref) + tol * scale + (1e-3 if dtype == "float16" else 0)
            bad = ~(err <= bound) & ~(np.isnan(got_np) & np.isnan(ref))
            assert not bad.any(), f"{name}: got {got_np[bad]} expected {np.asarray(ref)[bad]}"
        else:
            src = a.astype(np.float32) if dtype == "bfloat16" else a
            ref = fn(src, axis=axis, keepdims=keepdims, **kw)
            assert got.shape == np.shape(ref), (got.shape, np.shape(ref))
            np.testing.assert_array_equal(to_np(got), ref, err_msg=name)
    return ref


def result_dtype(name, dtype):
    if dtype == "bfloat16":
        return {"sum": "bfloat16", "prod": "bfloat16", "all": "bool", "any": "bool",
                "argmin": "int64", "argmax": "int64"}.get(name, "bfloat16")
    fn = REDUCTIONS.get(name) or ARG[name]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(fn(np.ones(2, dtype=dtype))).dtype.name


@pytest.mark.parametrize("name", sorted(REDUCTIONS) + sorted(ARG))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reductions_match_numpy(rng, name, dtype):
    f = getattr(ingot, name)
    shape = tuple(int(n) for n in rng.integers(1, 6, size=rng.integers(1, 4)))
    a = data_for(rng, name, shape, dtype)
    x = make(a, dtype)
    if dtype == "bool" and name in ("var", "std", "mean"):
        got = f(x)
        assert got.dtype == ingot.float64
        return
    nd = len(shape)
    axes = [None, int(rng.integers(-nd, nd))]
    if name not in ARG and nd > 1:
        axes.append(tuple(int(v) for v in rng.choice(nd, size=2, replace=False)))
    for axis in axes:
        for keepdims in (False, True):
            got = f(x, axis=axis, keepdims=keepdims)
            assert got.dtype == result_dtype(name, dtype), (name, got.dtype)
            check_reduction(got, a, name, dtype, axis, keepdims)
    # methods and a strided input
    v = make(a, dtype)[..., ::-1]
    check_reduction(getattr(v, name)(axis=-1), a[..., ::-1], name, dtype, -1, False)


@pytest.mark.parametrize("correction", [0, 1, 0.5])
def test_var_std_correction(rng, correction):
    a = random_data(rng, (4, 7), "float64")
    x = make(a)
    np.testing.assert_allclose(to_np(ingot.var(x, axis=1, correction=correction)), np.var(a, axis=1, ddof=correction), rtol=1e-12)
    np.testing.assert_allclose(to_np(ingot.std(x, correction=correction)), np.std(a, ddof=correction), rtol=1e-12)
    np.testing.assert_allclose(to_np(x.std(ddof=correction)), np.std(a, ddof=correction), rtol=1e-12)


@given(hnp.array_shapes(min_dims=1, max_dims=4, max_side=5), st.integers(0, 2**32 - 1),
       st.sampled_from(["sum", "max", "argmax", "mean", "any"]), st.booleans())
def test_random_axes(shape, seed, name, keepdims):
    rng = np.random.default_rng(seed)
    a = random_data(rng, shape, "float64")
    nd = len(shape)
    if name in ARG:
        axis = int(rng.integers(-nd, nd))
    else:
        k = int(rng.integers(0, nd + 1))
        axis = tuple(int(v) for v in rng.choice(nd, size=k, replace=False))
    got = getattr(ingot, name)(make(a), axis=axis, keepdims=keepdims)
    check_reduction(got, a, name, "float64", axis, keepdims)


@pytest.mark.parametrize("name", ["min", "max", "argmin", "argmax", "sum", "mean"])
def test_nan_handling(rng, name):
    a = random_data(rng, (3, 6), "float32")
    a[1, 2] = np.nan
    a[1, 4] = np.nan
    a[2, 0] = np.inf
    got = getattr(ingot, name)(make(a), axis=1)
    ref = (REDUCTIONS.get(name) or ARG[name])(a, axis=1)
    np.testing.assert_allclose(to_np(got), ref, rtol=1e-5, equal_nan=True)


def test_argmax_first_index_on_ties():
    a = np.array([[1, 3, 3, 0], [2, 2, 2, 2]], dtype=np.int32)
    assert ingot.argmax(make(a), axis=1).tolist() == [1, 0]
    assert ingot.argmin(make(a), axis=1).tolist() == [3, 0]
    assert int(ingot.argmax(make(a))) == 1


def test_empty_reductions():
    e = make(np.zeros((0, 3), dtype=np.float32))
    assert ingot.sum(e).tolist() == 0.0
    assert ingot.sum(e, axis=0).tolist() == [0.0, 0.0, 0.0]
    assert ingot.prod(e).tolist() == 1.0
    assert ingot.all(e).tolist() is True and ingot.any(e).tolist() is False
    assert np.isnan(float(ingot.mean(e)))
    assert ingot.max(e, axis=1).shape == (0,)
    for name in ("min", "max", "argmin", "argmax"):
        with pytest.raises(ValueError):
            getattr(ingot, name)(e)
    check_interpreter_alive()


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("shape", [(0, 0), (0, 0, 4), (3, 0, 2)])
def test_empty_reductions_of_every_empty_layout(rng, dtype, shape):
    # Fresh (0, 0) arrays have NumPy's strides (1, 1) and [0:0] views keep their parent's: the
    # GPU reduction once recursed forever on both (a crash Dask's meta computation hit).
    full = rng.standard_normal((5, 7, 4)[: len(shape)]).astype(dtype)
    views = [make(np.zeros(shape, dtype=dtype)),
             make(full)[tuple(slice(0, n) for n in shape)]]
    for x in views:
        assert x.shape == shape
        a = np.zeros(shape, dtype=dtype)
        for axis in [None, 0, -1, (0, 1)]:
            for keepdims in (False, True):
                got = ingot.sum(x, axis=axis, keepdims=keepdims)
                want = np.sum(a, axis=axis, keepdims=keepdims)
                assert got.shape == want.shape
                np.testing.assert_array_equal(to_np(got), want)
                np.testing.assert_array_equal(to_np(ingot.prod(x, axis=axis, keepdims=keepdims)),
                                              np.prod(a, axis=axis, keepdims=keepdims))
                np.testing.assert_array_equal(to_np(ingot.any(x, axis=axis, keepdims=keepdims)),
                                              np.any(a, axis=axis, keepdims=keepdims))
        got = ingot.sum(x, dtype=ingot.float64, keepdims=True)
        assert got.shape == (1,) * len(shape) and got.dtype == ingot.float64
        assert to_np(got).item() == 0.0
        if dtype != "int32":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                want = np.var(a, axis=(0, 1))
            np.testing.assert_array_equal(to_np(ingot.var(x, axis=(0, 1))), want)
            np.testing.assert_array_equal(to_np(ingot.mean(x, axis=(0, 1))), want)
        np.testing.assert_array_equal(to_np(ingot.cumulative_sum(x, axis=0)), np.cumsum(a, axis=0))
    check_interpreter_alive()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_pack_folds_of_the_gpu_reductions(rng, dtype):
    # The GPU reductions fold each 16-byte pack into one accumulator (PackFold in reduce.metal;
    # var/std take a pack's mean and squared deviations directly). Run the folds themselves
    # through the device's compiler against NumPy.
    from ingot import _ingot

    t = {"float32": "float", "float16": "half"}[dtype]
    n = 16 // np.dtype(dtype).itemsize
    src = _ingot._kernel_source("functor", ingot.default_device()) + f"""
kernel void folds(device const {t}* x [[buffer(0)]], device float* out [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {{
  Pack<{t}, {n}> p;
  for (int q = 0; q < {n}; ++q) p.v[q] = x[i * {n} + q];
  const auto m = PackFold<red_var_c1<{t}> >::f(p, 0);
  out[i * 5 + 0] = float(m.n);
  out[i * 5 + 1] = float(m.mean);
  out[i * 5 + 2] = float(m.m2);
  out[i * 5 + 3] = float(PackFold<red_sum<{t}> >::f(p, 0));
  out[i * 5 + 4] = float(PackFold<red_argmax<{t}> >::f(p, 7).i);
}}
"""
    k = ingot.compile(src, file_name="pack_folds.metal")["folds"]
    packs = 33
    a = (rng.standard_normal((packs, n)) * 3 + 5).astype(dtype)
    out = ingot.full((packs * 5,), -7.0, dtype=ingot.float32)
    k(ingot.asarray(a), out, grid=(packs,))
    got = np.asarray(out.to_device("cpu")).reshape(packs, 5)
    a64 = a.astype(np.float64)
    mean = a64.mean(axis=1)
    rt = 1e-6 if dtype == "float32" else 1e-3
    np.testing.assert_array_equal(got[:, 0], n)
    np.testing.assert_allclose(got[:, 1], mean, rtol=rt)
    np.testing.assert_allclose(got[:, 2], ((a64 - mean[:, None]) ** 2).sum(axis=1), rtol=rt * 50, atol=rt * 50)
    np.testing.assert_allclose(got[:, 3], a64.sum(axis=1), rtol=rt)
    np.testing.assert_array_equal(got[:, 4], 7 + np.argmax(a, axis=1))


@pytest.mark.parametrize("tg", [256, 64, 96, 40])
def test_group_combine_of_the_gpu_reductions(rng, tg):
    # group_combine (reduce.metal): a tree for power-of-two threadgroups; others (96, 40) once
    # lost elements in the tree and now combine in one thread.
    from ingot import _ingot

    src = _ingot._kernel_source("functor", ingot.default_device()) + """
kernel void combine(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint lid [[thread_index_in_threadgroup]], uint nl [[threads_per_threadgroup]],
                    uint gid [[threadgroup_position_in_grid]]) {
  threadgroup red_sum<float>::A s1[256];
  threadgroup red_argmax<float>::A s2[256];
  threadgroup red_var_c0<float>::A s3[256];
  const float v = x[gid * nl + lid];
  const float s = group_combine<red_sum<float> >(red_sum<float>::load(v, lid), s1, lid, nl);
  const auto a = group_combine<red_argmax<float> >(red_argmax<float>::load(v, lid), s2, lid, nl);
  const auto m = group_combine<red_var_c0<float> >(red_var_c0<float>::load(v, lid), s3, lid, nl);
  if (lid == 1u) {
    out[gid * 3 + 0] = s;
    out[gid * 3 + 1] = float(a.i);
    out[gid * 3 + 2] = red_var_c0<float>::out<float>(m);
  }
}
"""
    k = ingot.compile(src, file_name="group_combine.metal")["combine"]
    groups = 5
    a = rng.standard_normal((groups, tg)).astype(np.float32)
    out = ingot.full((groups * 3,), -7.0, dtype=ingot.float32)
    k(ingot.asarray(a), out, groups=(groups,), threadgroup=(tg,))
    got = np.asarray(out.to_device("cpu")).reshape(groups, 3)
    np.testing.assert_allclose(got[:, 0], a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[:, 1], np.argmax(a, axis=1))
    np.testing.assert_allclose(got[:, 2], a.astype(np.float64).var(axis=1), rtol=1e-5)


def test_simd_combine_of_the_gpu_reductions(rng):
    # simd_combine (reduce.metal): each SIMD group of 32 threads combines its own accumulators;
    # run through the device's compiler, one result per SIMD group against NumPy.
    from ingot import _ingot

    src = _ingot._kernel_source("functor", ingot.default_device()) + """
kernel void combine(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                    uint lid [[thread_index_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {
  threadgroup red_sum<float>::A s1[256];
  threadgroup red_argmax<float>::A s2[256];
  threadgroup red_var_c0<float>::A s3[256];
  const uint lane = lid & 31u;
  const float v = x[gid * 256u + lid];
  const float s = simd_combine<red_sum<float> >(red_sum<float>::load(v, lane), s1, lid);
  const auto a = simd_combine<red_argmax<float> >(red_argmax<float>::load(v, lane), s2, lid);
  const auto m = simd_combine<red_var_c0<float> >(red_var_c0<float>::load(v, lane), s3, lid);
  if (lane == 5u) {
    const uint row = gid * 8u + (lid >> 5);
    out[row * 3 + 0] = s;
    out[row * 3 + 1] = float(a.i);
    out[row * 3 + 2] = red_var_c0<float>::out<float>(m);
  }
}
"""
    k = ingot.compile(src, file_name="simd_combine.metal")["combine"]
    groups = 3
    a = rng.standard_normal((groups * 8, 32)).astype(np.float32)
    out = ingot.full((groups * 8 * 3,), -7.0, dtype=ingot.float32)
    k(ingot.asarray(a), out, groups=(groups,), threadgroup=(256,))
    got = np.asarray(out.to_device("cpu")).reshape(groups * 8, 3)
    np.testing.assert_allclose(got[:, 0], a.astype(np.float64).sum(axis=1), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(got[:, 1], np.argmax(a, axis=1))
    np.testing.assert_allclose(got[:, 2], a.astype(np.float64).var(axis=1), rtol=1e-5)


@pytest.mark.parametrize("k", [65, 256, 4099, 16384])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_many_rows_one_simd_group_each(rng, k, dtype):
    # 4,096 rows and more, of 65 to 16,384 elements: on GPUs one SIMD group reduces each row
    # (reduce_rows_simd), with pack loads when the rows start 16-byte aligned (k = 256, 16384).
    m = 4100 if k < 4000 else 4096
    a = random_data(rng, (m, k), dtype)
    x = make(a)
    for name in ("sum", "max", "var", "std"):
        check_reduction(getattr(ingot, name)(x, axis=1), a, name, dtype, 1, False)
    check_reduction(ingot.argmax(x, axis=1), a, "argmax", dtype, 1, False)
    # A view whose rows start one element in: scalar loads.
    check_reduction(ingot.sum(x[:, 1:], axis=1), a[:, 1:], "sum", dtype, 1, False)


def test_zero_dimensional_reductions():
    z = make(np.array(3.5, dtype=np.float32))
    assert float(ingot.sum(z)) == 3.5
    assert float(ingot.max(z)) == 3.5
    assert int(ingot.argmax(z)) == 0
    assert ingot.sum(z, keepdims=True).shape == ()


def test_sum_with_dtype(rng):
    a = random_data(rng, 10, "int8")
    assert ingot.sum(make(a), dtype=ingot.int16).dtype == ingot.int16
    assert ingot.sum(make(a), dtype=ingot.float64).dtype == ingot.float64
    assert int(ingot.sum(make(a), dtype=ingot.int32)) == int(a.astype(np.int32).sum())


def test_integer_sums_widen_and_wrap():
    a = np.full(300, 100, dtype=np.int8)
    assert int(ingot.sum(make(a))) == 30000
    u = np.array([2**63, 2**63, 5], dtype=np.uint64)
    assert int(ingot.sum(make(u))) == int(u.sum())


@pytest.mark.parametrize("dtype", ["int8", "int64", "uint16", "float32", "float64", "bool"])
def test_cumsum(rng, dtype):
    a = random_data(rng, (3, 5), dtype)
    x = make(a)
    with np.errstate(all="ignore"):
        for axis in (None, 0, 1, -1):
            got = ingot.cumsum(x, axis=axis)
            ref = np.cumsum(a, axis=axis)
            assert got.dtype == ref.dtype.name
            np.testing.assert_allclose(to_np(got), ref, rtol=1e-5 if dtype == "float32" else 1e-12)
        np.testing.assert_array_equal(to_np(ingot.cumulative_sum(x, axis=1)), np.cumsum(a, axis=1))
        inc = ingot.cumulative_sum(x, axis=0, include_initial=True)
        assert inc.shape == (4, 5)
        np.testing.assert_allclose(to_np(inc)[1:], np.cumsum(a, axis=0), rtol=1e-5)
        assert not to_np(inc)[0].any()
    with pytest.raises(ValueError):
        ingot.cumulative_sum(x)
    assert ingot.cumsum(x, dtype=ingot.float64).dtype == ingot.float64


@pytest.mark.parametrize("axis", [2, -3, (0, 0), (0, 5)])
def test_bad_axes_raise(rng, axis):
    x = make(random_data(rng, (3, 4), "float32"))
    with pytest.raises((IndexError, ValueError)):
        ingot.sum(x, axis=axis)
    check_interpreter_alive()


def test_bad_axis_types_raise_type_error(rng):
    x = make(random_data(rng, (3, 4), "float32"))
    with pytest.raises(TypeError):
        ingot.sum(x, axis="0")
    with pytest.raises(TypeError):
        ingot.argmax(x, axis=(0, 1))
    with pytest.raises((IndexError, ValueError)):
        ingot.cumsum(x, axis=3)
