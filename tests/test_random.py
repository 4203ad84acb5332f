"""ingot.random: the Philox4x32-10 stream against an independent NumPy implementation and
Random123's known answers, the same bits on every device, the distributions, NumPy's API."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import ingot
from conftest import DEVICE, ON_CPU, check_interpreter_alive, to_np

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85


def philox_blocks(seed: int, first: int, count: int) -> np.ndarray:
    """Words of blocks first..first+count-1 of the stream of seed: (count, 4) uint64 holding
    uint32 values (an independent NumPy implementation of Philox4x32-10)."""
    m = np.uint64(0xFFFFFFFF)
    b = np.arange(first, first + count, dtype=np.uint64)
    c = [b & m, b >> np.uint64(32), np.zeros(count, np.uint64), np.zeros(count, np.uint64)]
    k = [np.uint64(seed & 0xFFFFFFFF), np.uint64(seed >> 32)]
    for r in range(10):
        if r:
            k = [(k[0] + np.uint64(W0)) & m, (k[1] + np.uint64(W1)) & m]
        p0, p1 = np.uint64(M0) * c[0], np.uint64(M1) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k[0], p1 & m, (p0 >> np.uint64(32)) ^ c[3] ^ k[1], p0 & m]
    return np.stack(c, axis=1)


def test_known_answer_vector_and_raw_words():
    # Block 0 of seed 0 is Philox(counter 0, key 0), Random123's first philox4x32 10 vector;
    # integers over exactly 2**32 values are the raw words.
    g = ingot.random.Generator(0, device=DEVICE)
    words = to_np(g.integers(0, 2**32, size=4, dtype="uint32"))
    assert words.tolist() == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox_blocks(0, 0, 1)[0].tolist() == words.tolist()
    seed = 0x0123456789ABCDEF
    g = ingot.random.Generator(seed, position=2**32 - 2, device=DEVICE)
    got = to_np(g.integers(0, 2**32, size=19, dtype="uint32"))
    np.testing.assert_array_equal(got, philox_blocks(seed, 2**32 - 2, 5).reshape(-1)[:19])
    assert g.position == 2**32 + 3


def test_uniform_values_follow_the_stream_definition():
    seed = 987654321
    g = ingot.random.Generator(seed, device=DEVICE)
    w = philox_blocks(seed, 0, 8)
    got = to_np(g.random(7, dtype="float64"))
    x = (w[:, 0::2] | (w[:, 1::2] << np.uint64(32))).reshape(-1)[:7]
    np.testing.assert_array_equal(got, (x >> np.uint64(11)).astype(np.float64) * 2.0**-53)
    assert g.position == 4
    got = to_np(g.random(9, dtype="float32"))
    w = philox_blocks(seed, 4, 3).reshape(-1)[:9]
    np.testing.assert_array_equal(got, ((w >> np.uint64(8)).astype(np.float64) * 2.0**-24).astype(np.float32))


def test_normal_values_follow_box_muller_within_ulps():
    seed = 31337
    g = ingot.random.Generator(seed, device=DEVICE)
    got = to_np(g.normal(size=1001, dtype="float64"))
    w = philox_blocks(seed, 0, 501)
    a = (w[:, 0] | (w[:, 1] << np.uint64(32))) >> np.uint64(11)
    b = (w[:, 2] | (w[:, 3] << np.uint64(32))) >> np.uint64(11)
    u1 = (2.0**53 - a.astype(np.float64)) * 2.0**-53
    u2 = b.astype(np.float64) * 2.0**-53
    r = np.sqrt(-2.0 * np.log(u1))
    ref = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).reshape(-1)[:1001]
    np.testing.assert_allclose(got, ref, rtol=1e-14, atol=1e-14)
    g32 = ingot.random.Generator(seed, device=DEVICE)
    got32 = to_np(g32.normal(size=1001, dtype="float32")).astype(np.float64)
    w = philox_blocks(seed, 0, 251).reshape(-1, 2)
    u1 = (2.0**24 - (w[:, 0] >> np.uint64(8)).astype(np.float64)) * 2.0**-24
    u2 = (w[:, 1] >> np.uint64(8)).astype(np.float64) * 2.0**-24
    r = np.sqrt(-2.0 * np.log(u1))
    ref = np.stack([r * np.cos(2 * np.pi * u2), r * np.sin(2 * np.pi * u2)], axis=1).reshape(-1)[:1001]
    np.testing.assert_allclose(got32, ref, rtol=2e-6, atol=2e-6)


@pytest.mark.skipif(ON_CPU, reason="compares the test device's stream with the CPU's")
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_the_device_stream_equals_the_cpu_stream(dtype):
    if DEVICE.kind == "metal" and dtype == "float64":
        pytest.skip("no float64 on Metal")
    a, b = ingot.random.Generator(5, device="cpu"), ingot.random.Generator(5, device=DEVICE)
    for n in (1, 7, 100_003):
        assert to_np(a.random(n, dtype=dtype)).tobytes() == to_np(b.random(n, dtype=dtype)).tobytes()
        if DEVICE.kind != "metal":
            assert to_np(a.normal(size=n, dtype=dtype)).tobytes() == to_np(b.normal(size=n, dtype=dtype)).tobytes()
    for lo, hi in ((0, 6), (-(2**40), 2**40), (-(2**63), 2**63)):
        assert (to_np(a.integers(lo, hi, size=5000)) == to_np(b.integers(lo, hi, size=5000))).all()
    for n in (5, 5000):
        assert (to_np(a.permutation(n)) == to_np(b.permutation(n))).all()
    p = np.array([0.2, 0.0, 0.5, 0.3])
    assert (to_np(a.choice(4, 50, p=p)) == to_np(b.choice(4, 50, p=p))).all()


def test_same_seed_same_values_and_positions_resume():
    a = ingot.random.Generator(2024, device=DEVICE)
    b = ingot.random.Generator(2024, device=DEVICE)
    np.testing.assert_array_equal(to_np(a.random((3, 4))), to_np(b.random((3, 4))))
    pos = a.position
    x = to_np(a.normal(size=10))
    c = ingot.random.Generator(2024, position=pos, device=DEVICE)
    np.testing.assert_array_equal(to_np(c.normal(size=10)), x)
    assert not np.array_equal(to_np(ingot.random.Generator(2025, device=DEVICE).random(10)),
                              to_np(ingot.random.Generator(2024, device=DEVICE).random(10)))
    assert ingot.random.default_rng(a) is a
    assert 0 <= ingot.random.default_rng().seed < 2**64


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_random_uniform_normal_moments(dtype):
    if DEVICE.kind == "metal" and dtype == "float64":
        pytest.skip("no float64 on Metal")
    g = ingot.random.Generator(11, device=DEVICE)
    n = 100_000
    u = to_np(g.random(n, dtype=dtype)).astype(np.float64)
    assert g.random(3, dtype=dtype).dtype == dtype
    assert ((u >= 0) & (u < 1)).all()
    assert abs(u.mean() - 0.5) < 0.01 and abs(u.var() - 1 / 12) < 0.005
    v = to_np(g.uniform(-3.0, 5.0, size=n, dtype=dtype)).astype(np.float64)
    assert ((v >= -3) & (v <= 5)).all() and abs(v.mean() - 1.0) < 0.05
    z = to_np(g.normal(2.0, 3.0, size=n, dtype=dtype)).astype(np.float64)
    tol = 0.05 if dtype in ("float16", "bfloat16") else 0.03
    assert abs(z.mean() - 2.0) < tol * 3 and abs(z.std() - 3.0) < tol * 3
    # The normal histogram against the normal cdf (chi-square over 20 equal-probability bins).
    zs = np.sort((z - 2.0) / 3.0)
    edges = np.array([_norm_ppf((i + 1) / 20) for i in range(19)])
    counts = np.diff(np.concatenate([[0], np.searchsorted(zs, edges), [n]]))
    chi = ((counts - n / 20) ** 2 / (n / 20)).sum()
    limit = 60 if dtype in ("float32", "float64") else 400  # 19 dof; half/bfloat round values
    assert chi < limit, (chi, counts)


def _norm_ppf(q: float) -> float:
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(-mid / math.sqrt(2)) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def test_normal_and_uniform_broadcast_array_parameters(rng):
    g = ingot.random.Generator(3, device=DEVICE)
    loc = rng.normal(size=(4, 1))
    scale = rng.uniform(0.5, 2.0, size=3)
    z = g.normal(loc, scale)
    assert z.shape == (4, 3)
    z = g.normal(ingot.asarray(loc, device=DEVICE), 0.0, size=(4, 5))
    np.testing.assert_allclose(to_np(z), np.broadcast_to(loc, (4, 5)), rtol=1e-15)
    u = g.uniform(np.array([0.0, 10.0]), np.array([1.0, 11.0]), size=(1000, 2))
    un = to_np(u)
    assert ((un[:, 0] >= 0) & (un[:, 0] < 1)).all() and ((un[:, 1] >= 10) & (un[:, 1] < 11)).all()
    with pytest.raises(ValueError):
        g.normal(0.0, -1.0, size=3)
    with pytest.raises(ValueError):
        g.normal(0.0, np.array([1.0, -1.0]))
    check_interpreter_alive()


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64", "uint32", "uint64", "bool"])
def test_integers_range_dtype_and_uniformity(dtype):
    g = ingot.random.Generator(77, device=DEVICE)
    info = (0, 1) if dtype == "bool" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    lo, hi = (0, 2) if dtype == "bool" else (max(info[0], -3), min(info[1], 5) + 1)
    x = to_np(g.integers(lo, hi, size=60_000, dtype=dtype))
    assert x.dtype == np.dtype(dtype)
    vals = x.astype(np.int64)
    assert vals.min() == lo and vals.max() == hi - 1
    counts = np.bincount(vals - lo)
    e = len(vals) / (hi - lo)
    assert ((counts - e) ** 2 / e).sum() < 40, counts
    # The full range of the dtype with endpoint=True.
    full = to_np(g.integers(info[0], info[1], size=4000, dtype=dtype, endpoint=True)).astype(np.float64)
    assert full.min() >= info[0] and full.max() <= info[1]
    if dtype not in ("bool", "int8", "uint8"):
        span = float(info[1]) - float(info[0])
        assert abs((full.mean() - float(info[0])) / span - 0.5) < 0.05


def test_integers_bounds_and_errors():
    g = ingot.random.Generator(1, device=DEVICE)
    x = to_np(g.integers(5, size=1000))
    assert x.dtype == np.int64 and x.min() == 0 and x.max() == 4
    big = to_np(g.integers(-(2**62), 2**62, size=2000))
    assert big.min() < -(2**60) and big.max() > 2**60
    assert to_np(g.integers(7, 8, size=3)).tolist() == [7, 7, 7]
    with pytest.raises(ValueError):
        g.integers(5, 5)
    with pytest.raises(ValueError):
        g.integers(0, 300, dtype="uint8")
    with pytest.raises(ValueError):
        g.integers(-1, 3, dtype="uint16")
    with pytest.raises(TypeError):
        g.integers(0, 3, dtype="float32")
    with pytest.raises(TypeError):
        g.integers(0.5, 3)
    with pytest.raises(TypeError):
        g.random(3, dtype="int32")
    with pytest.raises(ValueError):
        ingot.random.Generator(-1)
    check_interpreter_alive()


def test_permutation_is_a_uniform_permutation():
    g = ingot.random.Generator(8, device=DEVICE)
    for n in (0, 1, 2, 17, 1000, 4097):
        p = to_np(g.permutation(n))
        assert p.dtype == np.int64 and sorted(p.tolist()) == list(range(n))
    counts = {}
    trials = 2400
    for _ in range(trials):
        key = tuple(to_np(g.permutation(4)).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert set(counts) == set(itertools.permutations(range(4)))
    e = trials / 24
    chi = sum((c - e) ** 2 / e for c in counts.values())
    assert chi < 60, chi  # 23 degrees of freedom


def test_permutation_and_shuffle_of_arrays(rng):
    a = rng.normal(size=(6, 5, 3))
    g = ingot.random.Generator(9, device=DEVICE)
    for axis in (0, 1, -1):
        x = ingot.asarray(a, device=DEVICE)
        p = to_np(g.permutation(x, axis=axis))
        np.testing.assert_array_equal(to_np(x), a)  # a copy
        moved = np.moveaxis(p, axis, 0)
        ref = np.moveaxis(a, axis, 0)
        # Each slice along the axis is a whole slice of the input.
        keys = sorted(s.tobytes() for s in moved)
        assert keys == sorted(s.tobytes() for s in ref)
    x = ingot.asarray(a.copy(), device=DEVICE)
    view = x[:, 1:4]
    g.shuffle(view, axis=1)
    got = to_np(x)
    np.testing.assert_array_equal(got[:, 0], a[:, 0])
    np.testing.assert_array_equal(got[:, 4], a[:, 4])
    assert sorted(s.tobytes() for s in np.moveaxis(got[:, 1:4], 1, 0)) == \
        sorted(s.tobytes() for s in np.moveaxis(a[:, 1:4], 1, 0))
    with pytest.raises(TypeError):
        g.shuffle(a)
    with pytest.raises(IndexError):
        g.permutation(ingot.asarray(a, device=DEVICE), axis=3)


def test_choice_uniform_weighted_with_and_without_replacement(rng):
    g = ingot.random.Generator(10, device=DEVICE)
    x = to_np(g.choice(5, size=20_000))
    assert x.min() == 0 and x.max() == 4
    counts = np.bincount(x, minlength=5)
    assert ((counts - 4000) ** 2 / 4000).sum() < 30
    p = np.array([0.1, 0.0, 0.5, 0.15, 0.25])
    x = to_np(g.choice(5, size=40_000, p=p))
    counts = np.bincount(x, minlength=5)
    assert counts[1] == 0
    e = p * 40_000
    assert (((counts - e) ** 2)[p > 0] / e[p > 0]).sum() < 30, counts
    s = to_np(g.choice(10, size=10, replace=False))
    assert sorted(s.tolist()) == list(range(10))
    s = to_np(g.choice(1000, size=(4, 5), replace=False))
    assert s.shape == (4, 5) and len(set(s.reshape(-1).tolist())) == 20
    # Weighted without replacement: zero-probability items never appear, the heaviest first most.
    firsts = [int(to_np(g.choice(5, size=4, replace=False, p=p))[0]) for _ in range(400)]
    assert 1 not in firsts and np.bincount(firsts, minlength=5).argmax() == 2
    picks = to_np(g.choice(5, size=4, replace=False, p=p))
    assert sorted(picks.tolist()) == [0, 2, 3, 4]
    # An array population, along an axis.
    a = rng.normal(size=(3, 7))
    c = to_np(g.choice(ingot.asarray(a, device=DEVICE), size=(2, 2), axis=1))
    assert c.shape == (3, 2, 2)
    for i in range(2):
        for j in range(2):
            assert any(np.array_equal(c[:, i, j], a[:, k]) for k in range(7))
    assert g.choice(ingot.asarray(a[0], device=DEVICE)).shape == ()


def test_choice_errors():
    g = ingot.random.Generator(12, device=DEVICE)
    with pytest.raises(ValueError):
        g.choice(3, size=4, replace=False)
    with pytest.raises(ValueError):
        g.choice(3, p=np.array([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError):
        g.choice(3, p=np.array([1.5, -0.5, 0.0]))
    with pytest.raises(ValueError):
        g.choice(3, p=np.array([0.5, 0.5]))
    with pytest.raises(ValueError):
        g.choice(3, size=3, replace=False, p=np.array([0.5, 0.5, 0.0]))
    with pytest.raises(ValueError):
        g.choice(0, size=2)
    assert g.choice(0, size=0).shape == (0,)
    check_interpreter_alive()
