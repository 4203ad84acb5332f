"""The ingot-msl kernel corpus on the default device.

Every corpus file compiles and every entry point resolves (``test_corpus_compiles``); the kernels
below run with fresh random inputs and poisoned outputs and match a NumPy reference written from
the file's header comment. (The seeds' kernels and the builtins kernels are in test_kernels.py.)
"""

from __future__ import annotations

import os
import pathlib
import shutil
import struct

import numpy as np
import pytest

import ingot

from conftest import DEVICE, ON_CPU

CORPUS = pathlib.Path(__file__).resolve().parent.parent / "crates" / "ingot-msl" / "tests" / "kernels"
FILES = sorted(p.name for p in CORPUS.glob("*.metal"))

if ON_CPU and not (os.environ.get("INGOT_CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
    pytest.skip("no C++ compiler for CPU kernels (install g++ or set INGOT_CXX)", allow_module_level=True)

RNG = np.random.default_rng()

# Files whose kernels need function constants to compile.
CONSTANTS = {
    "function_constants.metal": {"has_bias": True, "scale": 2.0},
    "function_constant_loop.metal": None,
    "layernorm.metal": {"has_weight": True},
}


def lib(name, **kw):
    return ingot.compile((CORPUS / name).read_text(), device=DEVICE, file_name=name, **kw)


def dev(a):
    return ingot.asarray(np.ascontiguousarray(a), device=DEVICE)


def host(a):
    return np.asarray(a.to_device("cpu"))


def poison(shape, dtype):
    a = np.empty(shape, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        a.fill(np.nan)
    else:
        a.view(np.uint8).fill(0xAB)
    return dev(a)


@pytest.mark.parametrize("name", FILES)
def test_corpus_compiles(name):
    text = (CORPUS / name).read_text()
    consts = CONSTANTS.get(name)
    if consts is None and "function_constant(" in text:
        # Give every function constant a value of its declared type.
        import re

        consts = {}
        for ty, cname in re.findall(r"constant\s+(\w+)\s+(\w+)\s*\[\[\s*function_constant", text):
            consts[cname] = True if ty == "bool" else (1.0 if ty in ("float", "half") else 1)
    try:
        lb = ingot.compile(text, device=DEVICE, file_name=name, constants=consts or None)
    except ingot.UnsupportedError as e:  # e.g. float64 on Metal
        pytest.skip(str(e))
    assert lb.functions
    for f in lb.functions:
        k = lb[f]
        assert k.name == f
        assert all(p.position is not None for p in k.arguments)


def test_atomic_ops():
    k = lib("atomic_ops.metal")["atomic_ops"]
    n = 1000
    x = RNG.integers(-1000, 1000, n).astype(np.int32)
    r = dev(np.array([0, 0, 2**31 - 1, -(2**31), -1, 0, 0, 0, 0], np.int32))
    u = dev(np.zeros(1, np.uint32))
    k(dev(x), r, u, n, grid=n, threadgroup=64)
    got = host(r)
    assert got[0] == x.sum() and got[1] == -x.sum()
    assert got[2] == x.min() and got[3] == x.max()
    assert got[4] == np.bitwise_and.reduce(x) and got[5] == np.bitwise_or.reduce(x)
    assert got[6] == np.bitwise_xor.reduce(x) and got[7] == n and got[8] in x
    assert host(u)[0] == x.astype(np.uint32).max()


@pytest.mark.parametrize("entry,dtype", [("axpy_f32", np.float32), ("axpy_f16", np.float16), ("axpy_i32", np.int32)])
def test_axpy_template_instantiations(entry, dtype):
    k = lib("axpy_template.metal")[entry]
    n = 300
    if dtype == np.int32:
        x = RNG.integers(-100, 100, n).astype(dtype)
        y = RNG.integers(-100, 100, n).astype(dtype)
        a, want = 3.0, 3 * x + y
    else:
        x = RNG.standard_normal(n).astype(dtype)
        y = RNG.standard_normal(n).astype(dtype)
        a = 1.5
        want = (np.float32(a) * x.astype(np.float32)).astype(dtype) + y if dtype == np.float16 else np.float32(a) * x + y
    yd = dev(y)
    k(n, dev(x), yd, a)
    np.testing.assert_allclose(host(yd).astype(np.float64), want.astype(np.float64), rtol=2e-3 if dtype == np.float16 else 1e-6, atol=1e-3 if dtype == np.float16 else 0)


def test_early_return_barrier():
    k = lib("early_return_barrier.metal")["early_return_barrier"]
    g, active = 5, 77
    x = RNG.standard_normal(g * 128).astype(np.float32)
    init = np.full(g * 128, -5.0, np.float32)
    out = dev(init)
    k(dev(x), out, active, groups=g, threadgroup=128)
    want = init.copy().reshape(g, 128)
    xs = x.reshape(g, 128) * 2
    want[:, :active] = xs[:, (np.arange(active) + 1) % active]
    np.testing.assert_array_equal(host(out), want.ravel())


def test_histogram_threadgroup():
    k = lib("histogram_threadgroup.metal")["histogram_threadgroup"]
    n = 50_000
    data = RNG.integers(0, 2**32, n, dtype=np.uint32)
    bins = dev(np.zeros(64, np.uint32))
    k(dev(data), bins, n, groups=-(-n // 128), threadgroup=128)
    np.testing.assert_array_equal(host(bins), np.bincount(data % 64, minlength=64))


def test_implicit_indices():
    k = lib("implicit_indices.metal")["implicit_indices"]
    assert [(p.name, p.index) for p in k.arguments] == [("a", 0), ("b", 1), ("out", 5), ("scale", 6), ("offset", 7)]
    n = 257
    a, b = (RNG.standard_normal(n).astype(np.float32) for _ in range(2))
    out = poison(n, np.float32)
    k(n, dev(a), dev(b), out, 2.0, 0.5)
    np.testing.assert_allclose(host(out), a * 2 + b + np.float32(0.5), rtol=1e-6, atol=1e-6)


def test_long_types():
    k = lib("long_types.metal")["long_types"]
    n = 100
    a = RNG.integers(0, 2**63, n, dtype=np.uint64)
    b = RNG.integers(0, 2**63, n, dtype=np.uint64)
    out, s, v = poison(n, np.uint64), poison(n, np.int64), poison((n, 2), np.uint64)
    k(n, dev(a), dev(b), out, s, v)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(host(out), a * b + (a >> np.uint64(3)))
    np.testing.assert_array_equal(host(s), a.astype(np.int64) - 2**40)
    np.testing.assert_array_equal(host(v), np.stack([a, b], 1) ^ np.uint64(0xFF))


def test_max_threads_bound_and_grid_stride():
    k = lib("max_threads.metal")["grid_stride_square"]
    assert k.max_total_threads_per_threadgroup == 256
    n = 10_000
    x = RNG.standard_normal(n).astype(np.float32)
    out = poison(n, np.float32)
    k(dev(x), out, n, grid=1000)  # default threadgroup respects the bound
    np.testing.assert_array_equal(host(out), x * x)
    with pytest.raises(ingot.KernelArgumentError, match="256"):
        k(dev(x), out, n, grid=1000, threadgroup=512)


def test_math_unary():
    k = lib("math_unary.metal")["math_unary"]
    n = 500
    x = RNG.uniform(1e-3, 10, n).astype(np.float32)
    o = poison(n * 12, np.float32)
    k(n, dev(x), o)
    got = host(o).reshape(n, 12).astype(np.float64)
    from math import erf

    xd = x.astype(np.float64)
    want = np.stack(
        [np.exp(xd), np.exp2(xd), np.log(xd), np.log2(xd), np.sqrt(xd), 1 / np.sqrt(xd), np.sin(xd), np.cos(xd), np.tanh(xd), np.abs(xd) ** 1.5, np.arctan2(xd, 2), np.array([erf(t) for t in xd])],
        1,
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_simd_shuffles():
    k = lib("simd_shuffles.metal")["simd_shuffles"]
    g = 3
    n = g * 64
    x = RNG.standard_normal(n).astype(np.float32)
    r = poison(n * 8, np.float32)
    k(dev(x), r, groups=g, threadgroup=64)
    got = host(r).reshape(n, 8)
    xs = x.reshape(-1, 32)
    lane = np.arange(32)
    want = np.stack(
        [
            xs[:, (lane * 5) % 32],
            np.where(lane + 3 < 32, xs[:, np.minimum(lane + 3, 31)], xs),
            np.where(lane >= 2, xs[:, np.maximum(lane - 2, 0)], xs),
            xs[:, lane ^ 5],
            np.repeat(xs[:, 7:8], 32, 1),
            np.repeat(xs[:, 0:1], 32, 1),
            xs[:, (lane + 1) % 32],
            np.broadcast_to(lane.astype(np.float32), xs.shape),
        ],
        -1,
    ).reshape(n, 8)
    np.testing.assert_array_equal(got, want)


def test_simd_vote_partial_group():
    k = lib("simd_vote.metal")["simd_vote_kernel"]
    n = 64 + 40
    x = RNG.standard_normal(n).astype(np.float32)
    outs = [poison(n, np.uint32) for _ in range(5)]
    k(dev(x), *outs, grid=n, threadgroup=64)
    ballot, all_, any_, first, mask = (host(o) for o in outs)
    for s in range(0, n, 32):
        seg = x[s : min(s + 32, n)] > 0
        m = len(seg)
        bits = int(sum(1 << i for i in range(m) if seg[i]))
        assert (ballot[s : s + m] == bits).all()
        assert (all_[s : s + m] == int(seg.all())).all() and (any_[s : s + m] == int(seg.any())).all()
        assert first[s] == 1 and (first[s + 1 : s + m] == 0).all()
        assert (mask[s : s + m] == ((1 << m) - 1 if m < 32 else 0xFFFFFFFF)).all()


def test_softmax_row():
    k = lib("softmax_row.metal")["softmax_row"]
    rows, cols = 7, 333
    x = RNG.standard_normal((rows, cols)).astype(np.float32) * 4
    out = poison((rows, cols), np.float32)
    k(dev(x), out, cols, groups=rows, threadgroup=128)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(host(out), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)


def test_transpose_tg():
    k = lib("transpose_tg.metal")["transpose_tg"]
    R, C = 45, 70
    x = RNG.standard_normal((R, C)).astype(np.float32)
    out = poison((C, R), np.float32)
    k(dev(x), out, R, C, groups=(-(-C // 32), -(-R // 32)), threadgroup=(32, 8))
    np.testing.assert_array_equal(host(out), x.T)


def test_uchar_image():
    k = lib("uchar_image.metal")["uchar_image"]
    w, h = 37, 19
    img = RNG.integers(0, 256, (h, w, 4), dtype=np.uint8)
    out, grey = poison((h, w, 4), np.uint8), poison((h, w), np.uint8)
    k(dev(img), out, grey, w, grid=(w, h), threadgroup=(16, 8))
    want = img.copy()
    want[..., :3] = 255 - img[..., :3]
    np.testing.assert_array_equal(host(out), want)
    g = (img[..., :3].astype(np.float32) / np.float32(255)) @ np.array([0.299, 0.587, 0.114], np.float32)
    assert np.abs(host(grey).astype(int) - (g * 255 + 0.5).astype(np.uint8).astype(int)).max() <= 1


def test_half_scale():
    k = lib("half_scale.metal")["half_scale"]
    n = 200
    x = RNG.standard_normal(n).astype(np.float16)
    y, z = poison(n, np.float16), poison(n, np.float32)
    k(n, dev(x), y, z, 0.75)
    np.testing.assert_allclose(host(z), x.astype(np.float32) * np.float32(0.75), rtol=1e-6)
    np.testing.assert_allclose(host(y).astype(np.float32), (x.astype(np.float32) * np.float32(0.75) + 1).astype(np.float16).astype(np.float32), rtol=1e-3, atol=1e-3)


def test_matmul_tiled_struct_dims():
    k = lib("matmul_tiled.metal")["matmul_tiled"]
    M, N, K = 37, 50, 29
    A = RNG.standard_normal((M, K)).astype(np.float32)
    B = RNG.standard_normal((K, N)).astype(np.float32)
    C = poison((M, N), np.float32)
    k(dev(A), dev(B), C, struct.pack("<III", M, N, K), groups=(-(-N // 16), -(-M // 16)), threadgroup=(16, 16))
    np.testing.assert_allclose(host(C), A @ B, rtol=1e-4, atol=1e-4)


def test_layernorm_with_gated_weight():
    rows, cols = 6, 100
    x = RNG.standard_normal((rows, cols)).astype(np.float32)
    w = RNG.standard_normal(cols).astype(np.float32)
    mean = x.mean(1, keepdims=True)
    var = ((x - mean) ** 2).mean(1, keepdims=True)
    base = (x - mean) / np.sqrt(var + 1e-5)
    k = lib("layernorm.metal", constants={"has_weight": True})["layernorm"]
    y = poison((rows, cols), np.float32)
    k(dev(x), y, cols, 1e-5, dev(w), groups=rows, threadgroup=32)
    np.testing.assert_allclose(host(y), base * w, rtol=1e-4, atol=1e-4)
    k2 = lib("layernorm.metal", constants={"has_weight": False})["layernorm"]
    y2 = poison((rows, cols), np.float32)
    k2(dev(x), y2, cols, 1e-5, groups=rows, threadgroup=32)
    np.testing.assert_allclose(host(y2), base, rtol=1e-4, atol=1e-4)


def test_dynamic_threadgroup_memory_partial_group():
    k = lib("dynamic_tgmem.metal")["reverse_in_group"]
    T, n = 64, 64 * 4 + 23
    x = RNG.standard_normal(n).astype(np.float32)
    g = -(-n // T)
    out, sums = poison(n, np.float32), poison(g, np.float32)
    k(dev(x), out, sums, grid=n, threadgroup=T, threadgroup_memory={0: T * 4})
    want = np.empty(n, np.float32)
    for i in range(g):
        seg = x[i * T : min((i + 1) * T, n)]
        want[i * T : i * T + len(seg)] = seg[::-1]
        np.testing.assert_allclose(host(sums)[i], seg.sum(dtype=np.float64), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(host(out), want)


def test_uniform_struct_layout():
    k = lib("uniform_struct.metal")["uniform_struct"]
    n = 150
    xin = RNG.standard_normal((n, 4)).astype(np.float32)
    scale, bias, gain = (1.5, -2.0, 0.5), (0.25, 0.5, 0.75), 3.0
    p = struct.pack("<3f4xI3ff12x", *scale, n, *bias, gain)
    assert len(p) == 48
    out = poison((n, 4), np.float32)
    k(dev(xin), out, p, groups=-(-n // 64), threadgroup=64)
    want = np.empty((n, 4), np.float32)
    want[:, :3] = (xin[:, :3] * np.array(scale, np.float32) + np.array(bias, np.float32)) * np.float32(gain)
    want[:, 3] = n
    np.testing.assert_allclose(host(out), want, rtol=1e-6, atol=1e-6)
    with pytest.raises(ingot.KernelArgumentError, match="48 bytes"):
        k(dev(xin), out, p[:40], groups=1, threadgroup=64)


def test_simd_prefix():
    k = lib("simd_prefix.metal")["simd_prefix"]
    n = 96 * 2 + 50
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.uniform(0.9, 1.1, n).astype(np.float32)
    kk = RNG.integers(0, 100, n).astype(np.uint32)
    outs = [poison(n, np.float32) for _ in range(4)] + [poison(n, np.uint32)]
    k(dev(x), dev(y), dev(kk), *outs, grid=n, threadgroup=96)
    inc, exc, pin, pex, iexc = (host(o) for o in outs)
    for s in range(0, n, 32):
        sl = slice(s, min(s + 32, n))
        cx, cy, ck = np.cumsum(x[sl], dtype=np.float64), np.cumprod(y[sl], dtype=np.float64), np.cumsum(kk[sl])
        np.testing.assert_allclose(inc[sl], cx, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(exc[sl], np.concatenate([[0], cx[:-1]]), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(pin[sl], cy, rtol=1e-5)
        np.testing.assert_allclose(pex[sl], np.concatenate([[1], cy[:-1]]), rtol=1e-5)
        np.testing.assert_array_equal(iexc[sl], np.concatenate([[0], ck[:-1]]))
