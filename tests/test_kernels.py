"""User MSL kernels from Python: the seeds' kernels, the API forms, every bad-input case.

Runs on the default device (``INGOT_DEVICE``); on the CPU it needs a C++ compiler and is skipped
(with the reason) without one. Outputs are poisoned (NaN / 0xAB bytes) before each launch.
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

if ON_CPU and not (os.environ.get("INGOT_CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
    pytest.skip("no C++ compiler for CPU kernels (install g++ or set INGOT_CXX)", allow_module_level=True)

RNG = np.random.default_rng(int(os.environ.get("INGOT_TEST_SEED", "0") or 0) ^ 0x5EED)


def src(name: str) -> str:
    return (CORPUS / name).read_text()


def lib_of(name: str, **kw):
    return ingot.compile(src(name), device=DEVICE, file_name=name, **kw)


def poison(shape, dtype):
    a = np.empty(shape, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        a.fill(np.nan)
    else:
        a.view(np.uint8).fill(0xAB)
    return a


def dev(a):
    return ingot.asarray(a, device=DEVICE)


def host(a):
    return np.asarray(a.to_device("cpu")) if isinstance(a, ingot.Array) else np.asarray(a)


# ---------------------------------------------------------------------------------------- seeds


@pytest.mark.parametrize("n", [1, 7, 1024, 100_003])
def test_recipe_log_through_load(n):
    log = ingot.load(CORPUS / "log.metal", function_name="log_kernel", device=DEVICE)
    x = RNG.random(n).astype(np.float32) + np.float32(1e-3)
    out = log(x)
    assert isinstance(out, np.ndarray) and out.shape == x.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, np.log(x), rtol=2e-6, atol=1e-6)
    # ingot arrays in, ingot array out
    out2 = log(dev(x))
    assert isinstance(out2, ingot.Array)
    np.testing.assert_allclose(host(out2), np.log(x), rtol=2e-6, atol=1e-6)


def test_recipe_log_special_values():
    log = ingot.load(CORPUS / "log.metal", "log_kernel", device=DEVICE)
    x = np.array([0.0, -1.0, np.inf, 1.0, np.nan], np.float32)
    out = log(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(out, np.log(x))


@pytest.mark.parametrize("file,dtype", [("add2_uint8.metal", np.uint8), ("add2_float.metal", np.float32)])
def test_recipe_add2_in_place(file, dtype):
    add2 = ingot.load(CORPUS / file, "add2_kernel", device=DEVICE)
    if dtype == np.uint8:
        x = RNG.integers(0, 256, 1000, dtype=np.uint8)
    else:
        x = RNG.standard_normal(1000).astype(np.float32)
    want = (x + dtype(2)).astype(dtype)
    y = x.copy()
    r = add2(y)
    assert r is y
    np.testing.assert_array_equal(y, want)
    d = dev(x)
    r = add2(d)
    assert r is d
    np.testing.assert_array_equal(host(d), want)


def test_metalcompute_multiply_count_form():
    k = lib_of("multiply.metal")["multiply"]
    n = 12345
    a = RNG.standard_normal(n).astype(np.float32)
    b = RNG.standard_normal(n).astype(np.float32)
    c = dev(poison(n, np.float32))
    k(n, dev(a), dev(b), c)
    np.testing.assert_array_equal(host(c), a * b)
    # metalcompute style: array.array inputs, NumPy output written back
    from array import array

    c2 = poison(10, np.float32)
    k(10, array("f", range(10)), array("f", range(10, 20)), c2)
    np.testing.assert_array_equal(c2, np.arange(10, dtype=np.float32) * np.arange(10, 20, dtype=np.float32))


def test_count_runs_exactly_count_threads():
    k = lib_of("multiply.metal")["multiply"]
    a = np.ones(100, np.float32)
    c = dev(np.full(100, -7.0, np.float32))
    k(37, dev(a), dev(a), c)
    got = host(c)
    assert (got[:37] == 1).all() and (got[37:] == -7).all()


def test_mandelbrot_uniform_struct_uchar4():
    k = lib_of("mandelbrot.metal")["mandelbrot"]
    w, h, it = 67, 45, 64
    origin, step = (-2.0, -1.2), (3.0 / w, 2.4 / h)
    u = struct.pack("<ffffIII4x", *origin, *step, w, h, it)
    img = dev(poison((h, w, 4), np.uint8))
    k(img, u, grid=(w, h), threadgroup=(16, 16))
    # NumPy reference (float32 arithmetic as the kernel does it)
    ys, xs = np.mgrid[0:h, 0:w]
    cr = np.float32(origin[0]) + xs.astype(np.float32) * np.float32(step[0])
    ci = np.float32(origin[1]) + ys.astype(np.float32) * np.float32(step[1])
    zr = np.zeros_like(cr)
    zi = np.zeros_like(ci)
    n = np.zeros((h, w), np.uint32)
    active = np.ones((h, w), bool)
    for _ in range(it):
        active &= (zr * zr + zi * zi) <= 4
        if not active.any():
            break
        nzr = zr * zr - zi * zi + cr
        nzi = np.float32(2) * zr * zi + ci
        zr = np.where(active, nzr, zr)
        zi = np.where(active, nzi, zi)
        n += active
    t = n.astype(np.float32) / np.float32(it)
    want = np.stack(
        [(255 * t).astype(np.uint8), (255 * np.sqrt(t)).astype(np.uint8), (255 * (1 - t)).astype(np.uint8), np.full_like(n, 255, np.uint8)],
        -1,
    )
    want[n == it] = (0, 0, 0, 255)
    got = host(img)
    # Iteration counts may differ by one at the set's boundary from rounding; nearly all agree.
    assert (got == want).all(axis=-1).mean() > 0.99
    assert (got[..., 3] == 255).all()
    # numpy structured scalar for the struct
    dt = np.dtype([("origin", "<f4", 2), ("step", "<f4", 2), ("w", "<u4"), ("h", "<u4"), ("it", "<u4"), ("pad", "V4")])
    rec = np.zeros((), dt)[()]
    rec["origin"], rec["step"], rec["w"], rec["h"], rec["it"] = origin, step, w, h, it
    img2 = dev(poison((h, w, 4), np.uint8))
    k(img2, rec, grid=(w, h))
    np.testing.assert_array_equal(host(img2), got)


def test_threadgroup_reduction_with_barriers():
    k = lib_of("tg_reduce.metal")["tg_reduce"]
    n = 256 * 50 + 17
    x = RNG.standard_normal(n).astype(np.float32)
    g = -(-n // 256)
    part = dev(poison(g, np.float32))
    k(dev(x), part, n, groups=g, threadgroup=256)
    want = np.add.reduceat(np.pad(x, (0, g * 256 - n)).astype(np.float64), np.arange(0, g * 256, 256))
    np.testing.assert_allclose(host(part), want, rtol=1e-5, atol=1e-4)


def test_simd_sum_reduction():
    k = lib_of("simd_reduce.metal")["simd_reduce"]
    n = 64 * 5 + 21
    x = RNG.uniform(0.5, 1.5, n).astype(np.float32)
    outs = [dev(poison(n, np.float32)) for _ in range(4)]
    k(dev(x), *outs, grid=n, threadgroup=64)
    s, p, mn, mx = (host(o) for o in outs)
    for start in range(0, n, 32):
        seg = x[start : min(start + 32, n)]
        sl = slice(start, start + len(seg))
        np.testing.assert_allclose(s[sl], seg.sum(dtype=np.float64), rtol=1e-5)
        np.testing.assert_allclose(p[sl], np.prod(seg, dtype=np.float64), rtol=1e-4)
        assert (mn[sl] == seg.min()).all() and (mx[sl] == seg.max()).all()


def test_prefix_sum_block_scan():
    k = lib_of("block_scan.metal")["block_scan"]
    g = 9
    x = RNG.integers(0, 1000, g * 256).astype(np.uint32)
    out = dev(poison(g * 256, np.uint32))
    tot = dev(poison(g, np.uint32))
    k(dev(x), out, tot, groups=g, threadgroup=256)
    xs = x.reshape(g, 256)
    np.testing.assert_array_equal(host(out).reshape(g, 256), np.cumsum(xs, axis=1, dtype=np.uint32))
    np.testing.assert_array_equal(host(tot), xs.sum(axis=1, dtype=np.uint32))


def test_histogram_atomics_across_groups():
    k = lib_of("histogram_device.metal")["histogram_device"]
    n = 200_001
    data = RNG.integers(0, 256, n, dtype=np.uint8)
    bins = dev(np.zeros(256, np.uint32))
    k(dev(data), bins, n, groups=-(-n // 256), threadgroup=256)
    np.testing.assert_array_equal(host(bins), np.bincount(data, minlength=256).astype(np.uint32))


def _expected_builtins(grid, tg):
    dims = len(grid)
    grid = tuple(grid) + (1,) * (3 - dims)
    tg = tuple(tg) + (1,) * (3 - dims)
    groups = tuple(-(-g // t) for g, t in zip(grid, tg))
    z, y, x = np.meshgrid(*(np.arange(g) for g in grid[::-1]), indexing="ij")
    pos = np.stack([x, y, z], -1).reshape(-1, 3)
    grp = pos // np.array(tg)
    lpos = pos % np.array(tg)
    actual = np.minimum(np.array(tg), np.array(grid) - grp * np.array(tg))
    index = lpos[:, 0] + lpos[:, 1] * actual[:, 0] + lpos[:, 2] * actual[:, 0] * actual[:, 1]
    return pos, lpos, grp, actual, groups, grid, tg, index


@pytest.mark.parametrize("grid,tg", [((37, 11), (8, 4)), ((16, 16), (16, 16)), ((5, 70), (4, 32))])
def test_builtins_2d_nonuniform_edges(grid, tg):
    k = lib_of("builtins_2d.metal")["builtins_2d"]
    nthreads = grid[0] * grid[1]
    out = dev(poison(nthreads * 16, np.uint32))
    k(out, grid=grid, threadgroup=tg)
    got = host(out).reshape(-1, 16)
    pos, lpos, grp, actual, groups, g3, t3, index = _expected_builtins(grid, tg)
    np.testing.assert_array_equal(got[:, 0:2], pos[:, :2])
    np.testing.assert_array_equal(got[:, 2:4], lpos[:, :2])
    np.testing.assert_array_equal(got[:, 4:6], grp[:, :2])
    np.testing.assert_array_equal(got[:, 6:8], actual[:, :2])
    assert (got[:, 8:10] == groups[:2]).all() and (got[:, 10:12] == g3[:2]).all()
    assert (got[:, 12:14] == t3[:2]).all()
    np.testing.assert_array_equal(got[:, 14], index)
    np.testing.assert_array_equal(got[:, 15], index % 32 + 100 * (index // 32))


@pytest.mark.parametrize("grid,tg", [((9, 5, 3), (4, 2, 2)), ((33, 2, 5), (32, 1, 2))])
def test_builtins_3d_nonuniform_edges(grid, tg):
    k = lib_of("builtins_3d.metal")["builtins_3d"]
    nthreads = int(np.prod(grid))
    out = dev(poison(nthreads * 24, np.uint32))
    k(out, grid=grid, threadgroup=tg)
    got = host(out).reshape(-1, 24)
    pos, lpos, grp, actual, groups, g3, t3, index = _expected_builtins(grid, tg)
    np.testing.assert_array_equal(got[:, 0:3], pos)
    np.testing.assert_array_equal(got[:, 3:6], lpos)
    np.testing.assert_array_equal(got[:, 6:9], grp)
    np.testing.assert_array_equal(got[:, 9:12], actual)
    assert (got[:, 12:15] == groups).all() and (got[:, 15:18] == g3).all()
    np.testing.assert_array_equal(got[:, 18], index)
    np.testing.assert_array_equal(got[:, 19], index % 32)
    np.testing.assert_array_equal(got[:, 20], index // 32)
    np.testing.assert_array_equal(got[:, 21], -(-actual.prod(axis=1) // 32))
    assert (got[:, 22] == 32).all() and (got[:, 23] == 32).all()


# -------------------------------------------------------------------------------- API surface


def test_reflection_and_library():
    lib = lib_of("multiply.metal")
    assert lib.functions == ["multiply"]
    assert "multiply" in lib
    k = lib.function("multiply")
    ps = k.parameters
    assert [p.name for p in ps] == ["a", "b", "c", "id"]
    assert [p.kind for p in ps] == ["buffer", "buffer", "buffer", "builtin"]
    assert [p.index for p in ps[:3]] == [0, 1, 2]
    assert ps[0].dtype == ingot.float32 and ps[0].access == "read"
    assert ps[2].access == "read_write"
    assert ps[3].role == "thread_position_in_grid"
    assert ps[0]["name"] == "a" and ps[0].as_dict()["kind"] == "buffer"
    assert [p.name for p in k.arguments] == ["a", "b", "c"]


def test_time_returns_seconds():
    k = lib_of("multiply.metal")["multiply"]
    a = dev(np.ones(1 << 16, np.float32))
    c = dev(np.empty(1 << 16, np.float32))
    t = k.time(a, a, c, grid=1 << 16)
    assert 0 <= t < 5
    assert host(c)[0] == 1


def test_function_constants():
    s = src("function_constants.metal")
    k = ingot.compile(s, device=DEVICE, constants={"has_bias": True, "scale": 3.0})["scaled_bias"]
    x = RNG.standard_normal(100).astype(np.float32)
    b = RNG.standard_normal(100).astype(np.float32)
    out = dev(poison(100, np.float32))
    k(100, dev(x), out, dev(b))
    np.testing.assert_allclose(host(out), x * 3 + b, rtol=1e-6)
    k2 = ingot.compile(s, device=DEVICE, constants={0: False, 1: 0.5})["scaled_bias"]
    assert [p.name for p in k2.arguments] == ["x", "out"]
    k2(100, dev(x), out)
    np.testing.assert_allclose(host(out), x * 0.5, rtol=1e-6)


def test_float4_buffers_and_scalar():
    k = lib_of("vec_add_float4.metal")["vec_add_float4"]
    n = 50
    a = RNG.standard_normal((n, 4)).astype(np.float32)
    b = RNG.standard_normal((n, 4)).astype(np.float32)
    out = dev(poison((n, 4), np.float32))
    k(n, dev(a), dev(b), out, 1.5)
    w = (a + b) * np.float32(1.5)
    w[:, [0, 1]] = w[:, [1, 0]]
    w[:, 3] = (a * b).sum(axis=1)
    np.testing.assert_allclose(host(out), w, rtol=1e-5, atol=1e-5)


def test_numpy_noncontiguous_written_back():
    k = lib_of("add2_float.metal")["add2_kernel"]
    base = np.zeros(20, np.float32)
    view = base[::2]
    k(10, view)
    assert (base[::2] == 2).all() and (base[1::2] == 0).all()


# --------------------------------------------------------------------------------- bad input

BAD = """
#include <metal_stdlib>
using namespace metal;
kernel void f(device float* out [[buffer(0)]], constant uint& n [[buffer(1)]],
              const device int* idx [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) out[i] = float(idx[i]);
}
kernel void g(device float* x [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],
              uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    t[l] = x[i]; threadgroup_barrier(mem_flags::mem_threadgroup); x[i] = t[l] + 1;
}
"""


@pytest.fixture(scope="module")
def bad():
    return ingot.compile(BAD, device=DEVICE, file_name="bad.metal")


def _raises(match, fn, *a, **kw):
    with pytest.raises(ingot.KernelArgumentError, match=match):
        fn(*a, **kw)


def test_bad_arguments(bad):
    f = bad["f"]
    out = dev(np.zeros(4, np.float32))
    idx = dev(np.arange(4, dtype=np.int32))
    _raises("missing argument.*`idx`", f, 4, out, 4)
    _raises("too many", f, 4, out, 4, idx, idx)
    _raises("`idx`.*int32.*float64|`idx`.*expects int32", f, 4, out, 4, dev(np.zeros(4)))
    _raises("`n`.*out of range", f, 4, out, -1, idx)
    _raises("`n`.*out of range", f, 4, out, 2**40, idx)
    _raises("`n`.*integer", f, 4, out, 2.5, idx)
    ro = np.zeros(4, np.float32)
    ro.flags.writeable = False
    _raises("`out`.*read-only", f, 4, ro, 4, idx)
    _raises("`out`.*contiguous", f, 4, dev(np.zeros(8, np.float32))[::2], 4, idx)
    _raises("maximum", f, out, 4, idx, grid=4, threadgroup=2048)
    _raises("grid= .*groups=|not both", f, out, 4, idx, grid=4, groups=1)
    _raises("count", f, out, 4, idx)
    _raises("`n`.*bytes", f, 4, out, b"\x01\x02", idx)
    with pytest.raises(ingot.KernelArgumentError, match="available: f, g"):
        bad["nope"]
    # the process keeps working
    f(4, out, 4, idx)
    np.testing.assert_array_equal(host(out), [0, 1, 2, 3])


def test_missing_threadgroup_memory(bad):
    g = bad["g"]
    x = dev(np.zeros(64, np.float32))
    _raises("`t`.*threadgroup_memory", g, 64, x)
    _raises("no \\[\\[threadgroup\\(3\\)\\]\\]", g, 64, x, threadgroup_memory={0: 256, 3: 16})
    g(x, grid=64, threadgroup=32, threadgroup_memory={0: 32 * 4})
    assert (host(x) == 1).all()


@pytest.mark.skipif(not ON_CPU, reason="arrays on another device need a second device")
def test_array_on_another_device_message_names_parameter(bad):
    # Only the CPU exists here: the device check is covered by the Rust tests' error path.
    pass


def test_compile_error_maps_to_user_line():
    s = "#include <metal_stdlib>\nusing namespace metal;\n\nkernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n    x[i] = not_defined;\n}\n"
    lib = ingot.compile(s, device=DEVICE, file_name="user.metal")  # reflected, not compiled
    with pytest.raises(ingot.CompileError, match=r"user\.metal:5"):
        lib["k"]


def test_missing_function_constant():
    lib = ingot.compile(src("function_constants.metal"), device=DEVICE, constants={"has_bias": True})
    with pytest.raises(ingot.KernelArgumentError, match="scale"):
        lib["scaled_bias"]


def test_bad_math_mode_and_constants():
    with pytest.raises(ValueError):
        ingot.compile(src("multiply.metal"), device=DEVICE, math_mode="sloppy")
    with pytest.raises(ingot.KernelArgumentError):
        ingot.compile(src("multiply.metal"), device=DEVICE, constants={"nope": 1})


@pytest.mark.skipif(not ON_CPU, reason="INGOT_CXX is the CPU engine's compiler")
def test_missing_compiler_names_ingot_cxx(monkeypatch, tmp_path):
    monkeypatch.setenv("INGOT_CXX", "/nonexistent/c++")
    monkeypatch.setenv("INGOT_CACHE_DIR", str(tmp_path))
    # Reported where the library is asked for (the compiler is probed at compile time, before
    # any unit is compiled).
    with pytest.raises(ingot.CompileError, match="INGOT_CXX"):
        ingot.compile(src("multiply.metal") + "\n// fresh\n", device=DEVICE)["multiply"]


@pytest.mark.skipif(not ON_CPU, reason="the CPU engine's disk cache")
def test_corrupt_cache_entry_is_rebuilt(monkeypatch, tmp_path):
    monkeypatch.setenv("INGOT_CACHE_DIR", str(tmp_path))
    s = src("multiply.metal") + "\n// corrupt-cache test %d\n" % RNG.integers(1 << 30)
    ingot.compile(s, device=DEVICE)["multiply"]
    sos = list((tmp_path / "cpu").glob("*.so"))
    assert len(sos) == 1
    sos[0].write_bytes(b"garbage")
    s2 = s + "// and a second key\n"
    ingot.compile(s2, device=DEVICE)["multiply"]
    for so in (tmp_path / "cpu").glob("*.so"):
        so.write_bytes(b"\x7fELF truncated")
    k = ingot.compile(s2 + "//x\n", device=DEVICE)["multiply"]
    a = dev(np.ones(8, np.float32))
    c = dev(poison(8, np.float32))
    k(8, a, a, c)
    assert (host(c) == 1).all()
