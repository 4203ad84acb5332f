"""matmul, transposes and shape manipulation against NumPy."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import EPS, check_interpreter_alive, make, random_data, to_np

MATMUL_SHAPES = [((3, 4), (4, 5)), ((4,), (4, 2)), ((3, 4), (4,)), ((5,), (5,)),
                 ((2, 3, 4), (4, 6)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 7), (7, 1)),
                 ((0, 3), (3, 4)), ((3, 0), (0, 2)), ((64, 33), (33, 65))]


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int32", "int64", "uint8"])
def test_matmul_matches_numpy(rng, shapes, dtype):
    a = random_data(rng, shapes[0], dtype, 0 if dtype == "uint8" else -10, 10)
    b = random_data(rng, shapes[1], dtype, 0 if dtype == "uint8" else -10, 10)
    got = ingot.matmul(make(a), make(b))
    ref = np.matmul(a, b)
    assert got.shape == ref.shape and got.dtype == ref.dtype.name
    if dtype.startswith("float"):
        k = shapes[0][-1]
        bound = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
        tol = (k + 2) * EPS[dtype] * bound + (1e-6 if dtype != "float16" else 1e-2)
        err = np.abs(to_np(got).astype(np.float64) - np.matmul(a.astype(np.float64), b.astype(np.float64)))
        assert (err <= tol).all()
    else:
        np.testing.assert_array_equal(to_np(got), ref)


def test_matmul_operator(rng):
    a, b = random_data(rng, (3, 4), "float64"), random_data(rng, (4, 2), "float64")
    np.testing.assert_allclose(to_np(make(a) @ make(b)), a @ b, rtol=1e-12)
    np.testing.assert_allclose(to_np(make(a) @ b), a @ b, rtol=1e-12)


def test_matmul_of_transposed_and_strided_views(rng):
    a = random_data(rng, (6, 8), "float64")
    b = random_data(rng, (6, 5), "float64")
    x, y = make(a), make(b)
    np.testing.assert_allclose(to_np(x.T @ y), a.T @ b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(x[::-2].T @ y[::-2]), a[::-2].T @ b[::-2], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(ingot.matmul(x.mT, y)), a.T @ b, rtol=1e-12, atol=1e-12)


def test_matmul_mixed_dtypes(rng):
    a = random_data(rng, (3, 4), "int16")
    b = random_data(rng, (4, 2), "float32")
    got = ingot.matmul(make(a), make(b))
    assert got.dtype == ingot.float32
    np.testing.assert_allclose(to_np(got), a.astype(np.float32) @ b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("s1,s2", [((3, 4), (5, 2)), ((3,), (4,)), ((), (3,)), ((2, 3, 4), (3, 4, 5))])
def test_matmul_bad_shapes_raise_value_error(rng, s1, s2):
    with pytest.raises(ValueError):
        ingot.matmul(make(random_data(rng, s1, "float32")), make(random_data(rng, s2, "float32")))
    check_interpreter_alive()


def test_reshape_permute_broadcast_expand_squeeze(rng):
    a = random_data(rng, (2, 3, 4), "int32")
    x = make(a)
    np.testing.assert_array_equal(to_np(ingot.reshape(x, (4, -1))), a.reshape(4, -1))
    np.testing.assert_array_equal(to_np(ingot.reshape(x.T, (-1,))), a.T.reshape(-1))
    np.testing.assert_array_equal(to_np(ingot.permute_dims(x, (1, 2, 0))), a.transpose(1, 2, 0))
    np.testing.assert_array_equal(to_np(ingot.permute_dims(x, (-1, 0, 1))), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(to_np(ingot.transpose(x)), a.T)
    b = ingot.broadcast_to(make(a[:, :1, :]), (5, 2, 3, 4))
    np.testing.assert_array_equal(to_np(b), np.broadcast_to(a[:, :1, :], (5, 2, 3, 4)))
    np.testing.assert_array_equal(to_np(ingot.expand_dims(x, axis=-1)), np.expand_dims(a, -1))
    np.testing.assert_array_equal(to_np(ingot.expand_dims(x, axis=1)), np.expand_dims(a, 1))
    s = make(a[:1, :, None])
    np.testing.assert_array_equal(to_np(ingot.squeeze(s, axis=(0, 2))), a[0])
    np.testing.assert_array_equal(to_np(ingot.squeeze(s)), a[0])
    np.testing.assert_array_equal(to_np(ingot.flip(x, axis=1)), np.flip(a, 1))
    np.testing.assert_array_equal(to_np(ingot.flip(x)), np.flip(a))
    xs, ys = ingot.broadcast_arrays(make(a[:1]), make(a[0, :, :1]))
    assert xs.shape == ys.shape == (1, 3, 4)


def test_concat_and_stack(rng):
    a, b = random_data(rng, (2, 3), "float32"), random_data(rng, (4, 3), "float64")
    np.testing.assert_array_equal(to_np(ingot.concat([make(a), make(b)])), np.concatenate([a, b]))
    np.testing.assert_array_equal(to_np(ingot.concat([make(a), make(b)], axis=None)), np.concatenate([a, b], axis=None))
    np.testing.assert_array_equal(to_np(ingot.stack([make(a), make(a)], axis=1)), np.stack([a, a], axis=1))
    with pytest.raises(ValueError):
        ingot.concat([make(a), make(b)], axis=1)
    with pytest.raises(ValueError):
        ingot.stack([make(a), make(b)])


@pytest.mark.parametrize(
    "call,exc",
    [
        (lambda x: ingot.reshape(x, (5, 5)), ValueError),
        (lambda x: ingot.permute_dims(x, (0, 1)), ValueError),
        (lambda x: ingot.permute_dims(x, (0, 0, 1)), ValueError),
        (lambda x: ingot.permute_dims(x, (0, 1, 7)), IndexError),
        (lambda x: ingot.broadcast_to(x, (3, 3, 4)), ValueError),
        (lambda x: ingot.broadcast_to(x, (4,)), ValueError),
        (lambda x: ingot.expand_dims(x, axis=5), IndexError),
        (lambda x: ingot.squeeze(x, axis=0), ValueError),
        (lambda x: ingot.squeeze(x, axis=9), IndexError),
        (lambda x: ingot.flip(x, axis=4), IndexError),
        (lambda x: ingot.matrix_transpose(x[0, 0]), ValueError),
    ],
)
def test_bad_manipulations_raise(rng, call, exc):
    x = make(random_data(rng, (2, 3, 4), "float32"))
    with pytest.raises(exc):
        call(x)
    check_interpreter_alive()
