"""Basic indexing and assignment against NumPy, and every bad index."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ingot
from conftest import DEVICE, check_interpreter_alive, make, random_data, to_np

shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=6)


@st.composite
def shape_and_key(draw):
    shape = draw(shapes)
    key = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return shape, key


@given(shape_and_key(), st.integers(0, 2**32 - 1))
def test_getitem_matches_numpy(sk, seed):
    shape, key = sk
    a = random_data(np.random.default_rng(seed), shape, "int32")
    x = make(a)
    expected = a[key]
    got = x[key]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(to_np(got), expected)
    assert got._shares_buffer(x)


@given(shape_and_key(), st.integers(0, 2**32 - 1), st.sampled_from(["scalar", "array", "numpy", "broadcast"]))
def test_setitem_matches_numpy(sk, seed, kind):
    shape, key = sk
    rng = np.random.default_rng(seed)
    a = random_data(rng, shape, "float32")
    x = make(a.copy())
    target_shape = a[key].shape
    if kind == "scalar":
        value = float(rng.uniform(-5, 5))
        v = value
    else:
        vshape = target_shape if kind != "broadcast" else tuple(1 for _ in target_shape[-1:]) + ()
        v = random_data(rng, vshape, "float32")
        value = make(v) if kind != "numpy" else v
    expected = a.copy()
    expected[key] = v
    x[key] = value
    np.testing.assert_array_equal(to_np(x), expected)


def test_negative_steps_and_nested_views(rng):
    a = random_data(rng, (7, 9), "float64")
    x = make(a)
    for key in [(slice(None, None, -1),), (slice(None, None, -2), slice(8, 1, -3)),
                (Ellipsis, slice(None, None, -1)), (None, 3, slice(None, None, -4)),
                (slice(-2, -8, -2), Ellipsis, None)]:
        np.testing.assert_array_equal(to_np(x[key]), a[key])
    np.testing.assert_array_equal(to_np(x[::-1][1:5:2][::-1]), a[::-1][1:5:2][::-1])


def test_huge_slice_bounds_are_clamped(rng):
    a = random_data(rng, 10, "int16")
    x = make(a)
    for key in [slice(-2**70, 2**70), slice(2**70, -2**70, -1), slice(None, None, 2**65),
                slice(None, None, -(2**65)), slice(3, 2**63)]:
        np.testing.assert_array_equal(to_np(x[key]), a[key])


def test_integer_like_indices(rng):
    a = random_data(rng, (4, 5), "int64")
    x = make(a)
    assert int(x[np.int64(2), np.int8(-1)]) == a[2, -1]
    assert int(x[ingot.asarray(3, device=DEVICE)][1]) == a[3, 1]
    assert x[True if False else 1].shape == (5,)


def test_setitem_converts_like_numpy(rng):
    x = make(np.array([1, 2, 3, 4], dtype=np.int32))
    x[0] = 2.9
    x[1] = True
    x[2:] = make(np.array([7.5, -8.5]))
    assert x.tolist() == [2, 1, 7, -8]
    b = make(np.array([0.5, 0.0, 2.0]))
    m = make(np.zeros(3, dtype=bool))
    m[:] = b
    assert m.tolist() == [True, False, True]


@pytest.mark.parametrize(
    "key,exc",
    [
        (10, IndexError),
        (-11, IndexError),
        ((0, 0), IndexError),
        ((Ellipsis, Ellipsis), IndexError),
        ("a", IndexError),
        (1.5, IndexError),
        ([0, 10], IndexError),
        (np.array([0.5, 1.0]), IndexError),
        (np.array([True] * 3), IndexError),
        (np.array([-11]), IndexError),
        (slice(None, None, 0), ValueError),
        (slice("a", None), TypeError),
        (2**70, IndexError),
    ],
)
def test_bad_indices_raise(rng, key, exc):
    x = make(random_data(rng, 10, "float32"))
    with pytest.raises(exc):
        x[key]
    with pytest.raises(exc):
        x[key] = 1.0
    check_interpreter_alive()


def test_integer_array_and_mask_indexing_read_like_numpy(rng):
    ref = random_data(rng, (3, 4), "float32")
    x = make(ref)
    mask = ref > 0.5
    for key in (mask, np.array([0, 2]), [2, 0, 2], True, (slice(None), np.array([3, -1]))):
        np.testing.assert_array_equal(to_np(x[key]), ref[key])
    np.testing.assert_array_equal(to_np(x[make(mask)]), ref[mask])
    check_interpreter_alive()


@pytest.mark.parametrize(
    "value,exc",
    [
        (np.ones((2, 3)), ValueError),
        ("text", (TypeError, ValueError)),
        ([[1, 2], [3]], (TypeError, ValueError)),
        (2**80, OverflowError),
    ],
)
def test_bad_assigned_values_raise(rng, value, exc):
    x = make(random_data(rng, (4, 5), "int32"))
    with pytest.raises(exc):
        x[1:3, :] = value
    check_interpreter_alive()


def test_int_out_of_range_assignment_raises_overflow(rng):
    x = make(random_data(rng, 4, "int8"))
    with pytest.raises(OverflowError):
        x[0] = 300
    with pytest.raises(OverflowError):
        make(random_data(rng, 4, "uint16"))[1] = -1
