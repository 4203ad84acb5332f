"""Array creation: asarray from every source, zero-copy NumPy interop, constants and ranges."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import (ALL_DTYPES, DEVICE, NUMPY_DTYPES, check_interpreter_alive, cpu_only, make,
                      random_data, to_np)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_from_numpy_round_trips(rng, dtype):
    a = random_data(rng, (3, 5), dtype)
    x = ingot.asarray(a, device=DEVICE)
    assert x.dtype == dtype and x.shape == (3, 5) and x.device == DEVICE
    np.testing.assert_array_equal(to_np(x), a)


@cpu_only
@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_asarray_from_numpy_is_zero_copy(rng, dtype):
    a = random_data(rng, (4, 6), dtype)
    x = ingot.asarray(a)
    assert np.shares_memory(np.asarray(x), a)
    b = np.asarray(x)
    assert np.shares_memory(b, a)
    assert b.base is not None


@cpu_only
@pytest.mark.parametrize("view", ["rev", "step", "transpose", "rev2d", "offset"])
def test_asarray_of_numpy_views_is_zero_copy(rng, view):
    base = random_data(rng, (6, 8), "float32")
    a = {"rev": base[::-1], "step": base[:, ::3], "transpose": base.T,
         "rev2d": base[::-2, ::-3], "offset": base[2:5, 1:7]}[view]
    x = ingot.asarray(a)
    assert x.shape == a.shape
    assert x.strides == a.strides
    np.testing.assert_array_equal(to_np(x), a)
    assert np.shares_memory(np.asarray(x), base)


@cpu_only
def test_unaligned_numpy_is_copied(rng):
    raw = np.zeros(4 * 10 + 1, dtype=np.uint8)
    a = raw[1:].view(np.float32)
    a[:] = random_data(rng, 10, "float32")
    assert not a.flags.aligned
    x = ingot.asarray(a)
    np.testing.assert_array_equal(to_np(x), a)
    assert not np.shares_memory(np.asarray(x), raw)
    with pytest.raises(ValueError):
        ingot.asarray(a, copy=False)


@cpu_only
def test_numpy_keeps_ingot_memory_alive(rng):
    a = random_data(rng, 1000, "float64")
    x = ingot.asarray(a, copy=True)
    n = np.asarray(x)
    del x
    np.testing.assert_array_equal(n, a)
    v = np.asarray(ingot.asarray(a)[::-1])
    np.testing.assert_array_equal(v, a[::-1])


@cpu_only
def test_writes_through_shared_memory(rng):
    a = random_data(rng, 8, "int32", 1, 50)
    x = ingot.asarray(a)
    x[2] = 77
    assert a[2] == 77
    a[3] = -5
    assert int(x[3]) == -5


@cpu_only
def test_read_only_numpy_input_cannot_be_written(rng):
    a = random_data(rng, 5, "float32")
    a.flags.writeable = False
    x = ingot.asarray(a)
    assert not x.writable
    with pytest.raises(ValueError):
        x[0] = 1.0
    with pytest.raises(ValueError):
        x += 1.0
    assert not np.asarray(x).flags.writeable
    check_interpreter_alive()


def test_copy_true_copies(rng):
    a = random_data(rng, (3, 4), "float32")
    x = ingot.asarray(a, copy=True, device=DEVICE)
    a[0, 0] = 123.0
    assert to_np(x)[0, 0] != 123.0
    y = ingot.asarray(x, copy=True)
    assert not y._shares_buffer(x)
    assert ingot.asarray(x) is x


def test_copy_false_raises_when_a_copy_is_needed(rng):
    with pytest.raises(ValueError):
        ingot.asarray([1, 2], copy=False)
    x = make(random_data(rng, 3, "float32"))
    with pytest.raises(ValueError):
        ingot.asarray(x, dtype=ingot.float64, copy=False)
    assert ingot.asarray(x, copy=False) is x


@pytest.mark.parametrize(
    "obj,dtype,values",
    [
        (1.5, "float64", 1.5),
        (7, "int64", 7),
        (True, "bool", True),
        ([1.0, 2.5], "float64", [1.0, 2.5]),
        ([[1, 2], [3, 4]], "int64", [[1, 2], [3, 4]]),
        ([True, False], "bool", [True, False]),
        ((1, 2.5), "float64", [1.0, 2.5]),
        ([], "float64", []),
    ],
)
def test_asarray_from_python(obj, dtype, values):
    x = ingot.asarray(obj, device=DEVICE)
    assert x.dtype == dtype
    assert x.tolist() == values


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_asarray_with_dtype(dtype):
    x = ingot.asarray([1, 2, 3], dtype=dtype, device=DEVICE)
    assert x.dtype == dtype
    assert x.tolist() == ([True] * 3 if dtype == "bool" else [1, 2, 3])


def test_asarray_from_numpy_scalars_and_other_objects():
    assert ingot.asarray(np.float32(2.5)).dtype == ingot.float32
    assert ingot.asarray(np.int16(3)).tolist() == 3
    x = ingot.asarray(memoryview(np.arange(4, dtype=np.int32)))
    assert x.tolist() == [0, 1, 2, 3]


def test_asarray_of_big_endian_data_converts():
    a = np.arange(5, dtype=">i4")
    assert ingot.asarray(a).tolist() == [0, 1, 2, 3, 4]


# Complex values became holdable with complex64/complex128 (#14); a mixed list of a complex and a
# string still is not.
@pytest.mark.parametrize("obj", [[1, [2, 3]], "text", [1 + 2j, "x"], {"a": 1}, np.array(["x"])])
def test_asarray_rejects_what_it_cannot_hold(obj):
    with pytest.raises((TypeError, ValueError)):
        ingot.asarray(obj)
    check_interpreter_alive()


def test_python_int_out_of_range_for_the_dtype():
    with pytest.raises(OverflowError):
        ingot.asarray(300, dtype=ingot.int8)
    with pytest.raises(OverflowError):
        ingot.asarray(2**80)
    with pytest.raises(OverflowError):
        ingot.full(3, 300, dtype=ingot.uint8)
    with pytest.raises(OverflowError):
        ingot.full(3, -1, dtype=ingot.uint32)
    check_interpreter_alive()


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_zeros_ones_full_empty(dtype):
    shape = (2, 3)
    z = ingot.zeros(shape, dtype=dtype, device=DEVICE)
    o = ingot.ones(shape, dtype=dtype, device=DEVICE)
    f = ingot.full(shape, 1 if dtype in ("bool",) else 7, dtype=dtype, device=DEVICE)
    e = ingot.empty(shape, dtype=dtype, device=DEVICE)
    for x in (z, o, f, e):
        assert x.shape == shape and x.dtype == dtype and x.device == DEVICE
    np.testing.assert_array_equal(to_np(z), np.zeros(shape))
    np.testing.assert_array_equal(to_np(o), np.ones(shape))
    np.testing.assert_array_equal(to_np(f), np.full(shape, 1 if dtype == "bool" else 7))


def test_default_dtypes_of_creation():
    assert ingot.zeros(3).dtype == ingot.float64
    assert ingot.full(3, 1).dtype == ingot.int64
    assert ingot.full(3, 1.5).dtype == ingot.float64
    assert ingot.full(3, True).dtype == ingot.bool
    assert ingot.arange(3).dtype == ingot.int64
    assert ingot.arange(3.0).dtype == ingot.float64
    assert ingot.eye(2).dtype == ingot.float64
    assert ingot.zeros((0, 3)).shape == (0, 3)
    assert ingot.zeros(()).shape == ()


def test_like_functions(rng):
    x = make(random_data(rng, (2, 5), "int16"))
    for f in (ingot.zeros_like, ingot.ones_like, ingot.empty_like):
        y = f(x)
        assert y.shape == x.shape and y.dtype == x.dtype and y.device == x.device
    assert ingot.full_like(x, 3).tolist() == [[3] * 5] * 2
    assert ingot.ones_like(x, dtype=ingot.float32).dtype == ingot.float32
    assert to_np(ingot.zeros_like(x)).sum() == 0


@pytest.mark.parametrize(
    "args,kwargs",
    [((5,), {}), ((2, 9), {}), ((1, 10, 3), {}), ((10, 1, -2), {}), ((0.5, 3.0, 0.25), {}),
     ((-3, 3), {"dtype": "float32"}), ((5, 1), {}), ((0, 1, 0.1), {})],
)
def test_arange_matches_numpy(args, kwargs):
    x = ingot.arange(*args, device=DEVICE, **kwargs)
    n = np.arange(*args, **kwargs)
    assert x.dtype == n.dtype.name
    np.testing.assert_allclose(to_np(x), n, rtol=1e-12)


@pytest.mark.parametrize("args", [(0, 1, 5), (-2.5, 7.0, 11), (3, -3, 4), (1, 2, 1), (0, 1, 0)])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_matches_numpy(args, endpoint):
    x = ingot.linspace(*args[:2], num=args[2], endpoint=endpoint, device=DEVICE)
    n = np.linspace(*args[:2], num=args[2], endpoint=endpoint)
    np.testing.assert_allclose(to_np(x), n, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n,m,k", [(3, None, 0), (3, 5, 1), (4, 2, -1), (3, 3, 5), (0, 2, 0), (2, 4, -3)])
def test_eye_matches_numpy(n, m, k):
    x = ingot.eye(n, m, k=k, dtype=ingot.int32, device=DEVICE)
    np.testing.assert_array_equal(to_np(x), np.eye(n, m, k=k, dtype=np.int32))


@pytest.mark.parametrize(
    "call",
    [
        lambda: ingot.zeros(-1),
        lambda: ingot.zeros((2, -3)),
        lambda: ingot.arange(0, 10, 0),
        lambda: ingot.linspace(0, 1, num=-1),
        lambda: ingot.eye(-2),
        lambda: ingot.zeros(3, device="nonsense"),
    ],
)
def test_bad_creation_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
    check_interpreter_alive()


@pytest.mark.parametrize("call", [lambda: ingot.zeros("3"), lambda: ingot.full(3, "x"),
                                  lambda: ingot.arange("a"), lambda: ingot.zeros(3, device=5)])
def test_bad_creation_argument_types_raise_type_error(call):
    with pytest.raises(TypeError):
        call()
    check_interpreter_alive()


def test_huge_allocation_raises_memory_error():
    with pytest.raises((MemoryError, ValueError)):
        ingot.empty((2**40, 2**30), dtype=ingot.float64, device=DEVICE)
    with pytest.raises(MemoryError):
        ingot.empty(2**50, dtype=ingot.uint8, device=DEVICE)
    check_interpreter_alive()
