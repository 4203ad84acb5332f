"""Elementwise functions and operators against NumPy: every dtype, broadcasting, promotion,
Python scalars, special values, integer wrap-around, strided inputs, in-place operators."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ingot
from conftest import (ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, NUMPY_DTYPES, ON_CPU,
                      assert_close, check_interpreter_alive, make, np_dtype, random_data, to_np)

# name: (numpy function, domain, accuracy kind, accepted dtype classes)
#   classes: "b" bool, "i" integers, "f" floats
UNARY = {
    "abs": (np.abs, None, "arith", "if"),
    "negative": (np.negative, None, "arith", "if"),
    "positive": (np.positive, None, "arith", "if"),
    "sign": (np.sign, None, "arith", "if"),
    "square": (np.square, None, "arith", "if"),
    "sqrt": (np.sqrt, (0.0, 100.0), "arith", "bif"),
    "exp": (np.exp, (-10.0, 10.0), "transcendental", "bif"),
    "expm1": (np.expm1, (-5.0, 5.0), "transcendental", "bif"),
    "log": (np.log, (0.01, 100.0), "transcendental", "bif"),
    "log1p": (np.log1p, (-0.9, 100.0), "transcendental", "bif"),
    "log2": (np.log2, (0.01, 100.0), "transcendental", "bif"),
    "log10": (np.log10, (0.01, 100.0), "transcendental", "bif"),
    "sin": (np.sin, (-10.0, 10.0), "transcendental", "bif"),
    "cos": (np.cos, (-10.0, 10.0), "transcendental", "bif"),
    "tan": (np.tan, (-1.4, 1.4), "transcendental", "bif"),
    "asin": (np.arcsin, (-1.0, 1.0), "transcendental", "bif"),
    "acos": (np.arccos, (-1.0, 1.0), "transcendental", "bif"),
    "atan": (np.arctan, (-10.0, 10.0), "transcendental", "bif"),
    "sinh": (np.sinh, (-5.0, 5.0), "transcendental", "bif"),
    "cosh": (np.cosh, (-5.0, 5.0), "transcendental", "bif"),
    "tanh": (np.tanh, (-5.0, 5.0), "transcendental", "bif"),
    "asinh": (np.arcsinh, (-10.0, 10.0), "composite", "bif"),
    "acosh": (np.arccosh, (1.0, 10.0), "composite", "bif"),
    "atanh": (np.arctanh, (-0.99, 0.99), "composite", "bif"),
    "floor": (np.floor, None, "arith", "if"),
    "ceil": (np.ceil, None, "arith", "if"),
    "round": (np.round, None, "arith", "if"),
    "trunc": (np.trunc, None, "arith", "if"),
    "logical_not": (np.logical_not, None, "arith", "bif"),
    "bitwise_invert": (np.invert, None, "arith", "bi"),
    "isnan": (np.isnan, None, "arith", "bif"),
    "isinf": (np.isinf, None, "arith", "bif"),
    "isfinite": (np.isfinite, None, "arith", "bif"),
}


def dtype_class(dtype: str) -> str:
    return "b" if dtype == "bool" else ("f" if dtype in FLOAT_DTYPES else "i")


def strided(x_np: np.ndarray, rng, dtype):
    """The same values as a negative-stride, non-contiguous ingot view (data placed in a bigger buffer)."""
    big = random_data(rng, (x_np.shape[0] * 2,) + x_np.shape[1:], dtype) if x_np.ndim else None
    if big is None:
        return make(x_np, dtype)
    big[::-2] = x_np
    view = make(big, dtype)[::-2]
    assert not view.is_contiguous or x_np.shape[0] <= 1
    return view


def reference(fn, a: np.ndarray, dtype: str, *more):
    """NumPy's result; floats computed in float64 (the reference) and checked against the
    result dtype's tolerance."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype in FLOAT_DTYPES:
            return fn(a.astype(np.float64), *[m.astype(np.float64) for m in more])
        return fn(a, *more)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_unary_matches_numpy(rng, name, dtype):
    fn, domain, kind, classes = UNARY[name]
    f = getattr(ingot, name)
    if dtype_class(dtype) not in classes:
        if name == "positive":
            assert f(make(random_data(rng, 4, dtype), dtype)).dtype == dtype  # ingot accepts bool
            return
        with pytest.raises(TypeError):
            f(make(random_data(rng, 4, dtype), dtype))
        return
    lo, hi = domain if domain else (None, None)
    if dtype in INT_DTYPES and domain is not None:
        lo, hi = max(0, int(np.ceil(lo))) if dtype.startswith("u") else int(np.ceil(lo)), int(hi)
        if lo > hi:
            lo = hi
    shape = tuple(rng.integers(1, 6, size=rng.integers(0, 4)))
    a = random_data(rng, shape, dtype, lo, hi)
    if dtype in INT_DTYPES and name in ("log", "log2", "log10") and a.size:
        a = np.where(a == 0, 1, a).astype(dtype)
    for x in (make(a, dtype), strided(a, rng, dtype)):
        got = f(x)
        ref = reference(fn, a, dtype)
        if dtype != "bfloat16":
            assert got.dtype == np.asarray(reference(fn, a, dtype) if dtype not in FLOAT_DTYPES else fn(a)).dtype.name, name
        out_dtype = got.dtype.name
        assert_close(got, np.asarray(ref), out_dtype if out_dtype in FLOAT_DTYPES else dtype, kind, msg=name)


SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 0.5, -0.5, 1.5, -2.5, 1e30, -1e30]


@pytest.mark.parametrize("name", [n for n, v in UNARY.items() if "f" in v[3]])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_unary_special_values(name, dtype):
    fn = UNARY[name][0]
    a = np.array(SPECIAL, dtype=dtype)
    with np.errstate(all="ignore"):
        expected = fn(a)
    got = to_np(getattr(ingot, name)(make(a)))
    np.testing.assert_allclose(got, expected, rtol=4 * np.finfo(dtype).eps, equal_nan=True, err_msg=name)
    zeros = expected == 0
    np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros]), err_msg=f"{name}: sign of zero")


def test_round_is_half_to_even():
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 2.4999, 3.5000001], dtype=np.float32)
    np.testing.assert_array_equal(to_np(ingot.round(make(a))), np.round(a))


BINARY = {
    "add": (np.add, "bif"),
    "subtract": (np.subtract, "if"),
    "multiply": (np.multiply, "bif"),
    "divide": (np.divide, "bif"),
    "floor_divide": (np.floor_divide, "if"),
    "remainder": (np.remainder, "if"),
    "pow": (np.power, "if"),
    "maximum": (np.maximum, "bif"),
    "minimum": (np.minimum, "bif"),
    "atan2": (np.arctan2, "bif"),
    "bitwise_and": (np.bitwise_and, "bi"),
    "bitwise_or": (np.bitwise_or, "bi"),
    "bitwise_xor": (np.bitwise_xor, "bi"),
    "bitwise_left_shift": (np.left_shift, "i"),
    "bitwise_right_shift": (np.right_shift, "i"),
    "logical_and": (np.logical_and, "bif"),
    "logical_or": (np.logical_or, "bif"),
    "logical_xor": (np.logical_xor, "bif"),
    "equal": (np.equal, "bif"),
    "not_equal": (np.not_equal, "bif"),
    "less": (np.less, "bif"),
    "less_equal": (np.less_equal, "bif"),
    "greater": (np.greater, "bif"),
    "greater_equal": (np.greater_equal, "bif"),
}

BROADCASTS = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((1,), (2, 3)), ((), (3,)),
              ((4, 1), (1, 5)), ((0, 3), (3,)), ((2, 3), ())]


def binary_inputs(rng, name, dtype, shapes):
    s1, s2 = shapes
    a = random_data(rng, s1, dtype)
    b = random_data(rng, s2, dtype)
    if dtype in INT_DTYPES:
        bits = np.iinfo(dtype).bits
        if name in ("bitwise_left_shift", "bitwise_right_shift"):
            b = rng.integers(0, bits, size=s2).astype(dtype)
        elif name == "pow":
            a = random_data(rng, s1, dtype, -5 if dtype[0] == "i" else 0, 5)
            b = rng.integers(0, 6, size=s2).astype(dtype)
        elif name in ("floor_divide", "remainder", "divide"):
            b = np.where(b == 0, 3, b).astype(dtype)
    elif dtype in FLOAT_DTYPES and name == "pow":
        a = random_data(rng, s1, dtype, 0.1, 5.0)
        b = random_data(rng, s2, dtype, -3.0, 3.0)
    elif dtype in FLOAT_DTYPES and name in ("floor_divide", "remainder", "divide"):
        b = np.where(np.abs(b) < 0.1, 1.5, b).astype(np_dtype(dtype))
    return a, b


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_binary_matches_numpy(rng, name, dtype):
    fn, classes = BINARY[name]
    f = getattr(ingot, name)
    if dtype_class(dtype) not in classes:
        with pytest.raises(TypeError):
            f(make(random_data(rng, 3, dtype), dtype), make(random_data(rng, 3, dtype), dtype))
        return
    shapes = BROADCASTS[rng.integers(len(BROADCASTS))]
    a, b = binary_inputs(rng, name, dtype, shapes)
    x, y = make(a, dtype), make(b, dtype)
    got = f(x, y)
    if dtype != "bfloat16":
        with np.errstate(all="ignore"):
            assert got.dtype == fn(a, b).dtype.name, name
    kind = "transcendental" if name in ("pow", "atan2") else "arith"
    ref = reference(fn, a, dtype, b)
    out = got.dtype.name
    assert_close(got, np.asarray(ref), out if out in FLOAT_DTYPES else dtype, kind, msg=name)
    # the same through strided, negative-stride views
    if a.ndim and b.ndim:
        assert_close(f(strided(a, rng, dtype), strided(b, rng, dtype)), np.asarray(ref),
                     out if out in FLOAT_DTYPES else dtype, kind, msg=name + " (strided)")


OPERATORS = {
    "add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
    "divide": operator.truediv, "floor_divide": operator.floordiv, "remainder": operator.mod,
    "pow": operator.pow, "bitwise_and": operator.and_, "bitwise_or": operator.or_,
    "bitwise_xor": operator.xor, "bitwise_left_shift": operator.lshift,
    "bitwise_right_shift": operator.rshift, "equal": operator.eq, "not_equal": operator.ne,
    "less": operator.lt, "less_equal": operator.le, "greater": operator.gt,
    "greater_equal": operator.ge,
}


@pytest.mark.parametrize("name", sorted(OPERATORS))
@pytest.mark.parametrize("dtype", ["int32", "uint8", "float32", "float64", "bool"])
def test_operators_with_arrays_and_python_scalars(rng, name, dtype):
    op, fn, classes = OPERATORS[name], BINARY[name][0], BINARY[name][1]
    if dtype_class(dtype) not in classes:
        return
    a, b = binary_inputs(rng, name, dtype, ((3, 4), (4,)))
    x, y = make(a), make(b)
    with np.errstate(all="ignore"):
        assert_close(op(x, y), op(a, b), op(a, b).dtype.name, "transcendental", msg=name)
        scalar = b.flat[0].item()
        for s in (scalar, True) if dtype == "bool" else (scalar, type(scalar)(2)):
            assert_close(op(x, s), op(a, s), op(a, s).dtype.name, "transcendental", msg=f"{name} scalar")
            if name not in ("bitwise_left_shift", "bitwise_right_shift", "pow"):
                r = op(s, x)
                e = op(s, a)
                assert_close(r, e, e.dtype.name, "transcendental", msg=f"{name} reflected")
        # NumPy arrays on the right convert (zero-copy on the CPU)
        assert_close(op(x, b), op(a, b), op(a, b).dtype.name, "transcendental", msg=name)


@pytest.mark.parametrize("dtype", ["float32", "int16", "bool", "uint32"])
def test_unary_operators(rng, dtype):
    a = random_data(rng, (2, 5), dtype)
    x = make(a)
    if dtype != "bool":
        np.testing.assert_array_equal(to_np(-x), -a)
        np.testing.assert_array_equal(to_np(abs(x)), abs(a))
    if dtype != "bool":
        np.testing.assert_array_equal(to_np(+x), +a)
    if dtype != "float32":
        np.testing.assert_array_equal(to_np(~x), ~a)


@pytest.mark.parametrize("d1", ALL_DTYPES)
@pytest.mark.parametrize("d2", ALL_DTYPES)
def test_mixed_dtype_promotion(rng, d1, d2):
    a, b = random_data(rng, (2, 3), d1, 0, 50), random_data(rng, (3,), d2, 0, 50)
    x, y = make(a, d1), make(b, d2)
    r = ingot.add(x, y)
    assert r.dtype == ingot.result_type(d1, d2)
    c = ingot.less(x, y)
    assert c.dtype == ingot.bool
    np.testing.assert_array_equal(to_np(c), a.astype(np.float64) < b.astype(np.float64))
    if "bfloat16" not in (d1, d2):
        np.testing.assert_allclose(to_np(r).astype(np.float64), (a + b).astype(np.float64), rtol=1e-3)


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=4, max_side=5), st.integers(0, 2**32 - 1),
       st.sampled_from(["add", "multiply", "maximum", "less", "atan2"]),
       st.sampled_from(["float32", "int64", "float64"]))
def test_random_broadcasting(shapes, seed, name, dtype):
    rng = np.random.default_rng(seed)
    (s1, s2), out_shape = shapes.input_shapes, shapes.result_shape
    a, b = random_data(rng, s1, dtype), random_data(rng, s2, dtype)
    got = getattr(ingot, name)(make(a), make(b))
    assert got.shape == out_shape
    fn = BINARY[name][0]
    ref = reference(fn, a, dtype, b)
    out = got.dtype.name
    assert_close(got, np.asarray(ref), out if out in FLOAT_DTYPES else dtype, "transcendental")


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_integer_wrap_around(rng, dtype):
    info = np.iinfo(dtype)
    a = rng.integers(info.min, info.max, size=64, endpoint=True, dtype=dtype)
    b = rng.integers(info.min, info.max, size=64, endpoint=True, dtype=dtype)
    with np.errstate(all="ignore"):
        for name in ("add", "subtract", "multiply"):
            np.testing.assert_array_equal(to_np(getattr(ingot, name)(make(a), make(b))),
                                          BINARY[name][0](a, b), err_msg=name)
        np.testing.assert_array_equal(to_np(-make(a)), -a)
        np.testing.assert_array_equal(to_np(ingot.abs(make(a))), np.abs(a))
        edge = np.array([info.min, info.max, info.min + 1], dtype=dtype)
        np.testing.assert_array_equal(to_np(make(edge) + 1), edge + dtype_one(dtype))


def dtype_one(dtype):
    return np.array(1, dtype=dtype)


@pytest.mark.parametrize("name", ["add", "multiply", "maximum", "minimum", "divide", "less", "equal", "atan2", "pow"])
def test_binary_special_values(name):
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -2.0], dtype=np.float32)
    a, b = np.meshgrid(v, v)
    fn = BINARY[name][0]
    with np.errstate(all="ignore"):
        expected = fn(a, b)
    got = to_np(getattr(ingot, name)(make(a), make(b)))
    np.testing.assert_allclose(got, expected, rtol=4 * 2**-23, equal_nan=True, err_msg=name)
    if expected.dtype.kind == "f" and name not in ("maximum", "minimum"):  # the sign of max(0, -0) is unspecified
        z = expected == 0
        np.testing.assert_array_equal(np.signbit(got[z]), np.signbit(expected[z]), err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8"])
def test_where_and_clip(rng, dtype):
    c = rng.random((3, 4)) < 0.5
    a, b = random_data(rng, (3, 4), dtype), random_data(rng, (4,), dtype)
    np.testing.assert_array_equal(to_np(ingot.where(make(c), make(a), make(b))), np.where(c, a, b))
    np.testing.assert_array_equal(to_np(ingot.where(make(c), make(a), 7)), np.where(c, a, np.array(7, dtype)))
    lo, hi = (10, 50) if dtype != "float32" else (-2.5, 3.5)
    x = make(a)
    got = ingot.clip(x, lo, hi)
    assert got.dtype == dtype and not got._shares_buffer(x)
    np.testing.assert_array_equal(to_np(got), np.clip(a, lo, hi))
    np.testing.assert_array_equal(to_np(ingot.clip(x, max=hi)), np.minimum(a, np.array(hi, dtype)))
    np.testing.assert_array_equal(to_np(ingot.clip(x)), a)
    np.testing.assert_array_equal(to_np(x.clip(lo, hi)), np.clip(a, lo, hi))


def test_clip_keeps_nan():
    a = np.array([np.nan, -5.0, 5.0, 0.5], dtype=np.float32)
    np.testing.assert_array_equal(to_np(ingot.clip(make(a), -1.0, 1.0)), np.clip(a, -1.0, 1.0))


@pytest.mark.parametrize("name,op", [("add", operator.iadd), ("subtract", operator.isub),
                                     ("multiply", operator.imul), ("divide", operator.itruediv),
                                     ("floor_divide", operator.ifloordiv), ("remainder", operator.imod),
                                     ("pow", operator.ipow)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_in_place_operators_write_into_the_same_buffer(rng, name, op, dtype):
    if name == "divide" and dtype == "int32":
        return
    a, b = binary_inputs(rng, name, dtype, ((3, 4), (4,)))
    x = make(a.copy())
    before = x
    if ON_CPU:
        view = np.asarray(x)
    with np.errstate(all="ignore"):
        x2 = op(x, make(b))
        expected = op(a.copy(), b)
    assert x2 is before
    assert_close(x2, expected, dtype, "transcendental", msg=name)
    if ON_CPU:
        assert_close(x2, view, dtype, msg="the NumPy view sees the write")
    x3 = op(x2, 2)
    assert x3 is before


def test_in_place_follows_numpy_casting(rng):
    i = make(np.array([1, 2, 3], dtype=np.int32))
    with pytest.raises(TypeError):
        i += 1.5
    with pytest.raises(TypeError):
        i /= 2
    i += 1
    i += make(np.array([1, 1, 1], dtype=np.int64))  # same kind: allowed, as NumPy
    assert i.tolist() == [3, 4, 5]
    f = make(np.array([1.0, 2.0], dtype=np.float32))
    f += make(np.array([0.5, 0.5], dtype=np.float64))
    assert f.dtype == ingot.float32 and f.tolist() == [1.5, 2.5]
    b = make(np.array([True, False]))
    with pytest.raises(TypeError):
        b += 1
    with pytest.raises(ValueError):
        f += make(np.ones((2, 2), dtype=np.float32))
    bits = make(np.array([1, 2], dtype=np.uint8))
    bits <<= 2
    bits |= 1
    assert bits.tolist() == [5, 9]
    check_interpreter_alive()


def test_in_place_with_overlapping_views(rng):
    a = random_data(rng, 10, "float64")
    x = make(a.copy())
    x[1:] += x[:-1]
    e = a.copy()
    e[1:] += a[:-1].copy()
    np.testing.assert_array_equal(to_np(x), e)


def test_python_int_out_of_range_in_operations():
    x = make(np.array([1, 2], dtype=np.int8))
    with pytest.raises(OverflowError):
        x + 300
    with pytest.raises(OverflowError):
        make(np.array([1], dtype=np.uint8)) - (-1)
    with pytest.raises(OverflowError):
        x * 2**70
    check_interpreter_alive()


@pytest.mark.parametrize("name", ["add", "less", "bitwise_and"])
def test_incompatible_shapes_raise_value_error(rng, name):
    with pytest.raises(ValueError):
        getattr(ingot, name)(make(random_data(rng, (3, 4), "int32")), make(random_data(rng, (5,), "int32")))
    check_interpreter_alive()


def test_unsupported_operands():
    x = make(np.array([1.0, 2.0]))
    with pytest.raises(TypeError):
        x + "a"
    with pytest.raises(TypeError):
        x + [1, 2]
    with pytest.raises(TypeError):
        ingot.add(1, 2)
    with pytest.raises(TypeError):
        ingot.exp([1.0, 2.0])
    with pytest.raises(TypeError):
        pow(x, 2, 3)
    assert (x == "a") is False
    assert (x != None) is True  # noqa: E711
    check_interpreter_alive()


def test_empty_and_zero_dimensional(rng):
    e = make(np.zeros((0, 3), dtype=np.float32))
    assert (e + 1).shape == (0, 3)
    assert ingot.exp(e).shape == (0, 3)
    z = make(np.array(2.0, dtype=np.float32))
    assert (z * make(np.array([1.0, 3.0], dtype=np.float32))).tolist() == [2.0, 6.0]
    assert float(ingot.sqrt(z * 2)) == 2.0
    assert (z + 1).shape == ()
