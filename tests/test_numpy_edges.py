"""The NumPy edges that real clients (SciPy's own suite) hit (issue #35), each against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ingot

from conftest import DEVICE, ON_CPU, make, to_np

POISON = -7777.0


# ---- numpy.where dispatching to ingot ------------------------------------------------------------

@pytest.mark.parametrize("x,y", [(1, 0), (1.5, -2), (True, False), (np.int32(3), np.int32(-4)),
                                 (np.float32(0.5), 2), (1, 2.5)])
def test_numpy_where_with_two_scalars(rng, x, y):
    c = rng.random((4, 5)) < 0.5
    got = np.where(make(c), x, y)
    want = np.where(c, x, y)
    assert isinstance(got, ingot.Array)
    assert got.dtype == want.dtype.name
    np.testing.assert_array_equal(to_np(got), want)


def test_numpy_where_with_one_array(rng):
    c = rng.random(6) < 0.5
    v = rng.normal(size=6)
    got = np.where(make(c), make(v), 0)
    np.testing.assert_array_equal(to_np(got), np.where(c, v, 0))


# ---- Array.view(dtype) --------------------------------------------------------------------------

VIEWS = [("float32", "int32"), ("float32", "uint16"), ("float64", "float32"), ("int8", "int32"),
         ("uint8", "float64"), ("float64", "complex128"), ("complex64", "float32"),
         ("int64", "uint8"), ("float16", "int16"), ("bool", "uint8")]


@pytest.mark.parametrize("src,dst", VIEWS, ids=[f"{a}-{b}" for a, b in VIEWS])
def test_view_reinterprets_bytes_like_numpy(rng, src, dst):
    a = rng.integers(0, 256, size=(3, 16), dtype=np.uint8).view(src)
    if np.dtype(src).kind == "b":
        a = rng.random((3, 16)) < 0.5
    if np.dtype(src).kind in "fc":
        a = rng.normal(size=a.shape).astype(src)
    x = ingot.asarray(a, device=DEVICE, copy=True)
    v = x.view(dst)
    want = a.view(dst)
    assert v.shape == want.shape and v.dtype == dst
    np.testing.assert_array_equal(to_np(v).view(np.uint8), want.view(np.uint8))
    # the view shares memory: writes through it change x as they change a
    if v.writable:
        v[1] = 0
        want[1] = 0
        np.testing.assert_array_equal(to_np(x).view(np.uint8), a.view(np.uint8))


def test_view_of_strided_and_transposed_arrays(rng):
    a = rng.normal(size=(4, 6)).astype(np.float32)
    x = ingot.asarray(a, device=DEVICE, copy=True)
    # same size: any layout
    np.testing.assert_array_equal(to_np(x.T.view("int32")), a.T.view(np.int32))
    np.testing.assert_array_equal(to_np(x[::2, 1::2].view("uint32")), a[::2, 1::2].view(np.uint32))
    # another size with a contiguous last axis and aligned rows
    np.testing.assert_array_equal(to_np(x[::2].view("float64")), a[::2].view(np.float64))
    np.testing.assert_array_equal(to_np(x.view()), a)


def test_view_errors_follow_numpy(rng):
    x = make(rng.normal(size=(3, 5)).astype(np.float32))
    with pytest.raises(ValueError, match="last axis must be contiguous"):
        x.T.view("float64")
    with pytest.raises(ValueError, match="must be a divisor"):
        x.view("float64")
    with pytest.raises(ValueError, match="0d array"):
        x[0, 0].view("float64")
    with pytest.raises(ValueError, match="read-only"):
        ingot.broadcast_to(x[0], (2, 5)).view("int32")[0, 0] = 1


# ---- asarray of NumPy scalars and 0-d arrays ----------------------------------------------------

@pytest.mark.parametrize("make_items", [
    lambda: [np.int32(1), np.int32(2)],
    lambda: [np.int16(-1), np.int16(7), np.int16(3)],
    lambda: [np.uint8(200), np.uint8(5)],
    lambda: [[np.int32(1)], [np.int32(5)]],
    lambda: [np.asarray(4, dtype=np.int32), np.asarray(9, dtype=np.int32)],
    lambda: [ingot.asarray(3, dtype="int32"), ingot.asarray(-8, dtype="int32")],
    lambda: [np.float32(1.5), np.float32(2)],
    lambda: [1, 2, 3],
])
def test_asarray_keeps_numpy_scalar_dtypes(make_items):
    items = make_items()
    host = [np.asarray(i.to_device("cpu")) if isinstance(i, ingot.Array) else i for i in items]
    want = np.asarray(host)
    got = ingot.asarray(items, device=DEVICE)
    assert got.dtype == want.dtype.name, (got.dtype, want.dtype)
    np.testing.assert_array_equal(to_np(got), want)


# ---- arange ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    (np.int64(5),), (np.int32(2), np.int32(9)), (ingot.asarray(3), ingot.asarray(11), ingot.asarray(2)),
    (np.asarray(7),), (np.float64(0.5), 4), (2**62, 2**62 + 10), (-(2**62) - 5, -(2**62) + 5, 3),
    (2**62 + 10, 2**62, -3), (2**63 - 3, 2**63 - 1), (10, 0, -1), (0, 0), (5, 1),
])
def test_arange_bounds_like_numpy(args):
    host = [np.asarray(a.to_device("cpu")) if isinstance(a, ingot.Array) else a for a in args]
    want = np.arange(*host)
    got = ingot.arange(*args, device=DEVICE)
    assert got.shape == want.shape
    if want.dtype.kind in "iu":
        assert got.dtype == "int64"
        assert to_np(got).tolist() == want.tolist()
    else:
        np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.skipif(DEVICE.kind == "metal", reason="Metal holds no complex128")
def test_arange_complex_dtype():
    got = ingot.arange(1, 7, 2, dtype="complex128", device=DEVICE)
    want = np.arange(1, 7, 2, dtype=np.complex128)
    assert got.dtype == "complex128"
    np.testing.assert_array_equal(to_np(got), want)


def test_arange_refuses_arrays_and_bools():
    with pytest.raises(TypeError):
        ingot.arange(ingot.asarray([1, 2]))
    with pytest.raises(TypeError):
        ingot.arange(True)


# ---- logspace ----------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [dict(), dict(num=7), dict(num=5, base=2.0), dict(num=4, endpoint=False),
                                dict(num=6, dtype="float32"), dict(num=1), dict(num=0)])
def test_logspace_like_numpy(rng, kw):
    start, stop = (float(v) for v in rng.uniform(-3, 3, size=2))
    want = np.logspace(start, stop, **kw)
    got = ingot.logspace(start, stop, device=DEVICE, **kw)
    assert got.shape == want.shape and got.dtype == want.dtype.name
    np.testing.assert_allclose(to_np(got), want, rtol=1e-6 if want.dtype == np.float32 else 1e-13)


# ---- functions SciPy calls beyond the standard, and 2025.12 additions ---------------------------

@pytest.mark.parametrize("x,y", [(1.5, 0), (True, False), (2, -3), (1, 2j)])
def test_namespace_where_with_two_python_scalars(rng, x, y):
    if DEVICE.kind == "metal" and isinstance(x, float) or isinstance(y, complex) and DEVICE.kind == "metal":
        pytest.skip("Metal's default float is float32")
    c = rng.random((3, 4)) < 0.5
    got = ingot.where(make(c), x, y)
    want = np.where(c, x, y)
    assert got.dtype == want.dtype.name
    np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.parametrize("k", [0, 1, -2, 3])
def test_diag_like_numpy(rng, k):
    v = rng.normal(size=4)
    d = ingot.diag(make(v), k)
    np.testing.assert_array_equal(to_np(d), np.diag(v, k))
    m = rng.normal(size=(4, 5))
    x = make(m)
    got = ingot.diag(x, k)
    np.testing.assert_array_equal(to_np(got), np.diag(m, k))
    got[...] = POISON  # a copy: the matrix is unchanged
    np.testing.assert_array_equal(to_np(x), m)
    with pytest.raises(ValueError):
        ingot.diag(make(np.zeros((2, 2, 2))))


def test_string_data_is_refused_with_a_clear_error():
    with pytest.raises(TypeError, match="Unsupported data type.*'a duck'"):
        ingot.asarray("a duck", device=DEVICE)
    with pytest.raises(TypeError, match="Unsupported data type"):
        ingot.asarray(np.array(["x", "y"]), device=DEVICE)


def test_devices_is_a_tuple_that_joins_lists():
    d = ingot.__array_namespace_info__().devices()
    assert isinstance(d, tuple) and DEVICE in d
    assert (d + [None])[-1] is None and len(d + [None]) == len(d) + 1


@pytest.mark.parametrize("shape,axis", [((3, 4), (0, 2)), ((3, 4), (-1, 0)), ((2,), (1, -1, 0)),
                                        ((), (0,)), ((3, 4), 1), ((5,), ())])
def test_expand_dims_with_tuples_like_numpy(rng, shape, axis):
    a = rng.normal(size=shape)
    x = ingot.asarray(a, device=DEVICE, copy=True)
    got = ingot.expand_dims(x, axis)
    want = np.expand_dims(a, axis)
    assert got.shape == want.shape
    np.testing.assert_array_equal(to_np(got), want)
    # a view: writes reach x, as NumPy's reach a
    if a.size:
        got[(0,) * got.ndim] = POISON
        want[(0,) * want.ndim] = POISON
        np.testing.assert_array_equal(to_np(x), a)


def test_expand_dims_errors():
    x = make(np.zeros((2, 3)))
    with pytest.raises(IndexError):
        ingot.expand_dims(x, (0, 4))
    with pytest.raises(ValueError, match="repeated"):
        ingot.expand_dims(x, (1, -3))


@pytest.mark.parametrize("shapes", [[], [(3,)], [(3, 1), (4,)], [(2, 1, 5), (1, 3, 1), (5,)], [(0, 1), (1, 4)]])
def test_broadcast_shapes_like_numpy(shapes):
    assert ingot.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_refuses_mismatches():
    with pytest.raises(ValueError, match="shape mismatch"):
        ingot.broadcast_shapes((2, 3), (4,))
    r = ingot.broadcast_arrays(make(np.zeros((2, 1))), make(np.zeros(3)))
    assert isinstance(r, tuple) and [a.shape for a in r] == [(2, 3), (2, 3)]
    m = ingot.meshgrid(make(np.arange(3.0)), make(np.arange(2.0)))
    assert isinstance(m, tuple)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "uint32", "int64"])
@pytest.mark.parametrize("bounds", [(-3, 300), (-200, 5), (2, 2**40), (None, -(2**40)), (2**40, None), (1, 7)])
def test_clip_with_python_int_bounds_beyond_the_dtype(rng, dtype, bounds):
    info = np.iinfo(dtype)
    a = rng.integers(max(info.min, -100), min(info.max, 100), size=20, endpoint=True).astype(dtype)
    got = to_np(ingot.clip(make(a), *bounds))
    lo, hi = bounds
    want = a.astype(object)
    if lo is not None:
        want = np.maximum(want, lo)
    if hi is not None:
        want = np.minimum(want, hi)
    want = np.clip(want, info.min, info.max).astype(dtype)  # the value, kept in the dtype
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.dtype(dtype)


@pytest.mark.parametrize("dst,src", [("float32", "int16"), ("float64", "float32"), ("int64", "int8"),
                                     ("complex128", "float64"), ("float32", "bool")])
def test_setitem_promotes_array_values_to_the_target_dtype(rng, dst, src):
    """2025.12: an array value is promoted to the target's dtype, which never changes."""
    if DEVICE.kind == "metal" and "64" in dst and dst != "int64":
        pytest.skip("Metal holds no float64")
    x = make(np.full(6, -7, dtype=dst))
    v = rng.integers(0, 2, size=3).astype(src) if src == "bool" else rng.integers(-9, 9, size=3).astype(src)
    x[1:4] = make(v)
    want = np.full(6, -7, dtype=dst)
    want[1:4] = v
    assert x.dtype == dst
    np.testing.assert_array_equal(to_np(x), want)
