"""Arrays never alias silently (issue #35).

Every function that can hand back memory of its input is checked by writing through its result
and comparing the input with NumPy doing the same: a result either owns its memory (writing it
leaves the input as it was) or is a view exactly where NumPy's is one (writing it changes the
input exactly as NumPy's changes its input). Views that repeat elements (broadcasts) are
read-only, as NumPy's are, and writing them raises without touching anything.

The written value is a poison (never zero, never a value the random data holds), so a write that
lands on the wrong elements shows.
"""

from __future__ import annotations

import numpy as np
import pytest

import ingot

from conftest import DEVICE, ON_CPU, make, to_np

POISON = -7777.0


def fresh(rng, shape=(3, 4, 5)):
    """Random data and an ingot array of its own memory (never a wrap of ``a``'s: on the CPU
    that would make every write reach both and hide any aliasing)."""
    a = rng.uniform(-10, 10, size=shape)
    x = ingot.asarray(a, device=DEVICE, copy=True)
    assert not np.shares_memory(a, np.asarray(x.to_device("cpu"))) or not ON_CPU
    return a, x


def write_and_compare(x_np, x, r_np, r, what):
    """Writes the poison through ``r`` (ingot) and ``r_np`` (NumPy), then compares the inputs."""
    before = to_np(x).copy()
    np.testing.assert_array_equal(before, x_np, err_msg=f"{what}: input differs before the write")
    if r_np.flags.writeable:
        assert r.writable, f"{what}: NumPy's result is writable, ingot's is not"
        r[...] = POISON
        r_np[...] = POISON
    else:
        assert not r.writable or not r._shares_buffer(x), (
            f"{what}: NumPy's result is read-only, ingot's is a writable view of the input")
        if r.writable:
            r[...] = POISON
    np.testing.assert_array_equal(to_np(x), x_np, err_msg=f"{what}: the input after the write")


# (name, ingot call, NumPy call): functions whose result may be a view, as NumPy's may.
VIEWS = [
    ("reshape", lambda m, a: m.reshape(a, (4, 15)), None),
    ("reshape copy=False", lambda m, a: ingot.reshape(a, (60,), copy=False),
     lambda a: np.reshape(a, (60,))),
    ("reshape copy=True", lambda m, a: ingot.reshape(a, (60,), copy=True),
     lambda a: np.reshape(a, (60,)).copy()),
    ("permute_dims", lambda m, a: ingot.permute_dims(a, (2, 0, 1)),
     lambda a: np.transpose(a, (2, 0, 1))),
    ("permute_dims negative", lambda m, a: ingot.permute_dims(a, (-1, 0, 1)),
     lambda a: np.transpose(a, (2, 0, 1))),
    ("expand_dims", lambda m, a: m.expand_dims(a, 1), None),
    ("squeeze", lambda m, a: m.squeeze(m.expand_dims(a, 0), 0), None),
    ("moveaxis", lambda m, a: m.moveaxis(a, 0, -1), None),
    ("flip", lambda m, a: m.flip(a, axis=1), None),
    ("flip all", lambda m, a: m.flip(a), None),
    ("matrix_transpose", lambda m, a: ingot.matrix_transpose(a),
     lambda a: np.swapaxes(a, -1, -2)),
    (".T of a matrix", lambda m, a: a[0].T, None),
    ("basic index", lambda m, a: a[1, ::2, 1:4], None),
    ("basic index ellipsis", lambda m, a: a[..., 2], None),
    ("unstack", lambda m, a: (ingot.unstack(a, axis=1)[2]), lambda a: a[:, 2]),
    ("asarray copy=None", lambda m, a: m.asarray(a), None),
    ("asarray copy=True", lambda m, a: ingot.asarray(a, copy=True), lambda a: np.array(a, copy=True)),
    ("astype same copy=False", lambda m, a: m.astype(a, a.dtype, copy=False)
     if m is ingot else a.astype(a.dtype, copy=False), None),
    ("astype same copy=True", lambda m, a: ingot.astype(a, a.dtype, copy=True),
     lambda a: a.astype(a.dtype, copy=True)),
    ("copy", lambda m, a: a.copy(), None),
    ("tile", lambda m, a: m.tile(a, (2, 1, 1)), None),
    ("tile ones", lambda m, a: m.tile(a, (1, 1, 1)), None),
    ("tile of one axis", lambda m, a: m.tile(a[0, 0], (3,)), None),
    ("repeat", lambda m, a: m.repeat(a, 2, axis=1), None),
    ("repeat once", lambda m, a: m.repeat(a, 1, axis=0), None),
    ("roll", lambda m, a: m.roll(a, 2, axis=2), None),
    ("roll by zero", lambda m, a: m.roll(a, 0, axis=0), None),
    ("roll by a length", lambda m, a: m.roll(a, 5, axis=2), None),
    ("concat of one", lambda m, a: ingot.concat([a], axis=0), lambda a: np.concatenate([a])),
    ("stack of one", lambda m, a: m.stack([a]), None),
    ("positive", lambda m, a: m.positive(a), None),
    ("real of real", lambda m, a: ingot.real(a), lambda a: np.real(a).copy()),
    ("conj of real", lambda m, a: ingot.conj(a), lambda a: np.conj(a)),
    ("clip without bounds", lambda m, a: ingot.clip(a), lambda a: a.copy()),
    ("sort", lambda m, a: m.sort(a, axis=-1), None),
    ("where", lambda m, a: m.where(a > 0, a, a), None),
    ("sum over no axis", lambda m, a: m.sum(a, axis=()), None),
    ("diff n=0", lambda m, a: m.diff(a, n=0), None),
    ("tril", lambda m, a: m.tril(a, k=10), None),
    ("triu", lambda m, a: m.triu(a, k=-10), None),
    ("take", lambda m, a: m.take(a, m.asarray([0, 1, 2]), axis=0), None),
    ("broadcast_to same shape", lambda m, a: m.broadcast_to(a, a.shape), None),
    ("linalg.diagonal", lambda m, a: ingot.linalg.diagonal(a), lambda a: np.diagonal(a, axis1=-2, axis2=-1)),
    ("meshgrid of one", lambda m, a: m.meshgrid(a[0, 0])[0], None),
    ("abs", lambda m, a: m.abs(a), None),
    ("max over axis", lambda m, a: m.max(a, axis=0), None),
    ("nonzero-free round", lambda m, a: m.round(a), None),
]


@pytest.mark.parametrize("name,call,np_call", VIEWS, ids=[v[0] for v in VIEWS])
def test_writing_a_result_changes_the_input_exactly_as_numpy(rng, name, call, np_call):
    a, x = fresh(rng)
    r = call(ingot, x)
    r_np = np_call(a) if np_call is not None else call(np, a)
    assert r.shape == r_np.shape, name
    np.testing.assert_array_equal(to_np(r), r_np, err_msg=name)
    write_and_compare(a, x, r_np, r, name)


@pytest.mark.parametrize("make_view", [
    lambda x: ingot.broadcast_to(x[0], (4, 4, 5)),
    lambda x: ingot.broadcast_to(x[:, :1, :], (3, 6, 5)),
    lambda x: ingot.broadcast_arrays(x, x[:1])[1],
    lambda x: ingot.broadcast_to(x[0, 0, 0], (2, 3)),
    lambda x: ingot.broadcast_to(x, (2, 3, 4, 5)),
], ids=["broadcast_to", "broadcast_to middle", "broadcast_arrays", "broadcast 0-d", "leading"])
def test_broadcast_views_are_read_only(rng, make_view):
    a, x = fresh(rng)
    v = make_view(x)
    assert not v.writable
    # views of a read-only view stay read-only, reshaped or not
    for w in (v, v[0], v.T, ingot.reshape(v, (-1,)), ingot.permute_dims(v, tuple(range(v.ndim))[::-1])):
        if w._shares_buffer(x):
            assert not w.writable
            with pytest.raises(ValueError, match="read-only"):
                w[...] = POISON
    with pytest.raises(ValueError, match="assignment destination is read-only"):
        v[(0,) * v.ndim] = POISON
    np.testing.assert_array_equal(to_np(x), a)
    # the input itself stays writable, and a copy of the broadcast is writable and its own
    x[0, 0, 0] = 1.5
    a[0, 0, 0] = 1.5
    c = ingot.asarray(v, copy=True)
    assert c.writable and not c._shares_buffer(x)
    c[...] = POISON
    np.testing.assert_array_equal(to_np(x), a)


def test_broadcast_arrays_leaves_unbroadcast_arrays_writable(rng):
    a, x = fresh(rng)
    b, y = fresh(rng, (1, 4, 5))
    rx, ry = ingot.broadcast_arrays(x, y)
    assert not ry.writable
    # the array that needed no broadcasting is a plain view, written through as in NumPy
    rx[0, 0, 0] = POISON
    a[0, 0, 0] = POISON
    np.testing.assert_array_equal(to_np(x), a)
    np.testing.assert_array_equal(to_np(y), b)


def test_tile_of_eye_is_independent_of_its_input(rng):
    """The reported data loss: writing one copy of a tiled identity changed every copy and the
    identity itself."""
    e = ingot.eye(4, device=DEVICE)
    t = ingot.tile(e, (2, 1, 1))
    assert t.writable and not t._shares_buffer(e)
    k = int(rng.integers(0, 4))
    t[0, k, k] = POISON
    expect = np.tile(np.eye(4), (2, 1, 1))
    expect[0, k, k] = POISON
    np.testing.assert_array_equal(to_np(t), expect)
    np.testing.assert_array_equal(to_np(e), np.eye(4))


def test_read_only_views_refuse_in_place_operators(rng):
    a, x = fresh(rng)
    v = ingot.broadcast_to(x[0], (3, 4, 5))
    with pytest.raises(ValueError, match="read-only"):
        v += 1.0
    np.testing.assert_array_equal(to_np(x), a)


@pytest.mark.skipif(not ON_CPU, reason="NumPy sees ingot memory directly on the CPU only")
def test_numpy_sees_broadcasts_read_only(rng):
    a, x = fresh(rng)
    v = ingot.broadcast_to(x[0], (3, 4, 5))
    n = np.asarray(v)
    assert not n.flags.writeable
    np.testing.assert_array_equal(n, np.broadcast_to(a[0], (3, 4, 5)))
    # a plain view is seen writable, and writes land in the ingot array
    w = np.asarray(x[1])
    assert w.flags.writeable
    w[0, 0] = POISON
    a[1, 0, 0] = POISON
    np.testing.assert_array_equal(to_np(x), a)


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_kernel_refuses_a_read_only_view_for_a_written_parameter(rng, dtype):
    ctype = {"float32": "float", "int32": "int"}[dtype]
    src = f"""
    #include <metal_stdlib>
    using namespace metal;
    kernel void put(device {ctype}* out, uint i [[thread_position_in_grid]]) {{ out[i] = 3; }}
    """
    k = ingot.compile(src, device=DEVICE)["put"]
    a = rng.integers(1, 9, size=4).astype(dtype)
    x = ingot.asarray(a, device=DEVICE, copy=True)
    v = ingot.broadcast_to(x[:1], (4,))
    with pytest.raises((ValueError, ingot.KernelArgumentError), match="read-only"):
        k(v, grid=4)
    np.testing.assert_array_equal(to_np(x), a)


@pytest.mark.skipif(DEVICE.kind == "metal", reason="complex128 is not held on Metal")
def test_real_and_imag_attributes_like_numpy(rng):
    a = rng.normal(size=(3, 4)) + 1j * rng.normal(size=(3, 4))
    x = ingot.asarray(a, device=DEVICE, copy=True)
    re, im = x.real, x.imag
    np.testing.assert_array_equal(to_np(re), a.real)
    np.testing.assert_array_equal(to_np(im), a.imag)
    # views: writes reach the complex array, as NumPy's
    re[0, 0] = POISON
    im[1, 2] = POISON
    a.real[0, 0] = POISON
    a.imag[1, 2] = POISON
    np.testing.assert_array_equal(to_np(x), a)
    # of a real array: real is the array itself (a view), imag read-only zeros
    b, y = fresh(rng, (2, 5))
    np.testing.assert_array_equal(to_np(y.real), b)
    assert y.real._shares_buffer(y)
    z = y.imag
    assert not z.writable and not z._shares_buffer(y)
    np.testing.assert_array_equal(to_np(z), np.zeros_like(b))
    with pytest.raises(ValueError, match="read-only"):
        z[0, 0] = 1.0
