#!/usr/bin/env python3
"""Run a few corpus kernels on an NVIDIA GPU (or on the CPU) and compare with NumPy references.

This checks the preludes' semantics (active-lane SIMD-group functions in partial and divergent
SIMD-groups, quads, half, atomics, simdgroup_matrix) without the ingot runtime, following the
wrapper ABI of ABI.md: CUDA kernel(const ingot::launch L, buffers..., bytes...), CPU
ingot_cpu_<name>(const ingot::launch*, void* const* args, group_begin, group_end).

Usage:
    INGOT_MSL_EMIT_CUDA=DIR cargo test -p ingot-msl --test corpus corpus_translates
    python3 crates/ingot-msl/tests/cuda_run_check.py DIR           # GPU: needs cupy, cuda-python
    INGOT_MSL_EMIT_CPU=DIR cargo test -p ingot-msl --test corpus corpus_translates
    python3 crates/ingot-msl/tests/cuda_run_check.py DIR --cpu     # CPU: needs numpy and g++
"""
import ctypes
import os
import sys

import subprocess

import numpy as np

CPU = "--cpu" in sys.argv
if CPU:
    xp = np
else:
    import cupy as cp

    xp = cp
    try:
        from cuda.bindings import driver as cu, nvrtc
    except ImportError:  # older cuda-python
        from cuda import cuda as cu, nvrtc


def host(a):
    return a if CPU else a.get()


class Launch(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint32 * 3) for n in ("grid", "tg", "groups", "origin", "region", "block")] + [
        ("exact", ctypes.c_uint32),
        ("tgmem_offset", ctypes.c_uint32 * 8),
        ("tgmem_size", ctypes.c_uint32 * 8),
    ]


def headers(include):
    out = []
    for root, _, files in os.walk(include):
        for f in files:
            p = os.path.join(root, f)
            out.append((os.path.relpath(p, include).replace(os.sep, "/").encode(), open(p, "rb").read()))
    return out


def compile_cubin(path, hdrs):
    src = open(path, "rb").read()
    err, prog = nvrtc.nvrtcCreateProgram(src, os.path.basename(path).encode(), len(hdrs), [h[1] for h in hdrs], [h[0] for h in hdrs])
    opts = [b"-std=c++17", b"-arch=sm_90", b"-default-device"]
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(opts), opts)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, n = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * n
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise RuntimeError(log.decode())
    _, n = nvrtc.nvrtcGetCUBINSize(prog)
    cubin = b" " * n
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    return cubin


class Kernel:
    def __init__(self, folder, file, name, hdrs):
        self.cubin = compile_cubin(os.path.join(folder, file), hdrs)
        err, self.mod = cu.cuModuleLoadData(self.cubin)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        err, self.fn = cu.cuModuleGetFunction(self.mod, name.encode())
        assert err == cu.CUresult.CUDA_SUCCESS, err

    def __call__(self, args, grid=None, groups=None, tg=(64, 1, 1), tgmem=()):
        L, ngroups, tg, off = make_launch(grid, groups, tg, tgmem)
        holders = [L]
        for a in args:
            if isinstance(a, cp.ndarray):
                holders.append(ctypes.c_uint64(a.data.ptr))
            else:
                holders.append(scalar_holder(a))
        ptrs = (ctypes.c_void_p * len(holders))(*[ctypes.addressof(h) for h in holders])
        nblocks = ngroups[0] * ngroups[1] * ngroups[2]
        nthreads = tg[0] * tg[1] * tg[2]
        (err,) = cu.cuLaunchKernel(self.fn, nblocks, 1, 1, nthreads, 1, 1, off, 0, ctypes.addressof(ptrs), 0)
        assert err == cu.CUresult.CUDA_SUCCESS, err
        cp.cuda.runtime.deviceSynchronize()


def scalar_holder(a):
    if isinstance(a, np.void):
        return ctypes.create_string_buffer(a.tobytes(), len(a.tobytes()))
    if isinstance(a, np.generic):
        return np.ctypeslib.as_ctypes(np.array(a))
    raise TypeError(a)


def make_launch(grid, groups, tg, tgmem):
    L = Launch()
    tg = tuple(tg) + (1,) * (3 - len(tg))
    if grid is not None:
        grid = tuple(grid) + (1,) * (3 - len(grid))
        ngroups = tuple((g + t - 1) // t for g, t in zip(grid, tg))
        L.exact = 1
    else:
        ngroups = tuple(groups) + (1,) * (3 - len(groups))
        grid = tuple(g * t for g, t in zip(ngroups, tg))
    for d in range(3):
        L.grid[d], L.tg[d], L.groups[d] = grid[d], tg[d], ngroups[d]
        L.origin[d], L.region[d], L.block[d] = 0, ngroups[d], tg[d]
    off = 0
    for i, size in enumerate(tgmem):
        L.tgmem_offset[i], L.tgmem_size[i] = off, size
        off += size
    return L, ngroups, tg, off


class CpuKernel:
    """A CPU translation compiled with g++ into a shared object and called through ctypes."""

    def __init__(self, folder, file, name, hdrs):
        src = os.path.join(folder, file.replace(".cu", ".cpp"))
        so = src + ".so"
        cmd = ["g++", "-std=c++17", "-O2", "-fPIC", "-shared", "-I", os.path.join(folder, "include"), src, "-o", so]
        subprocess.run(cmd, check=True)
        self.lib = ctypes.CDLL(so)
        self.fn = getattr(self.lib, "ingot_cpu_" + name)
        self.fn.restype = ctypes.c_int
        self.fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
        self.lib.ingot_cpu_last_error.restype = ctypes.c_char_p

    def __call__(self, args, grid=None, groups=None, tg=(64, 1, 1), tgmem=()):
        L, ngroups, tg, off = make_launch(grid, groups, tg, tgmem)
        holders = []
        ptrs = []
        for a in args:
            if isinstance(a, np.ndarray):
                ptrs.append(a.ctypes.data)
            else:
                h = scalar_holder(a)
                holders.append(h)
                ptrs.append(ctypes.addressof(h))
        arr = (ctypes.c_void_p * max(1, len(ptrs)))(*ptrs)
        rc = self.fn(ctypes.addressof(L), ctypes.addressof(arr), 0, ngroups[0] * ngroups[1] * ngroups[2])
        assert rc == 0, self.lib.ingot_cpu_last_error()


def simd_groups(n_threads, tg):
    """Yield (group_start, lanes) for each 32-lane SIMD-group of a 1-D dispatchThreads launch."""
    for g0 in range(0, n_threads, tg):
        real = min(tg, n_threads - g0)
        for s0 in range(0, real, 32):
            yield g0 + s0, min(32, real - s0)


def main():
    global Kernel
    folder = sys.argv[1]
    if CPU:
        Kernel = CpuKernel
    else:
        xp.zeros(1)  # the runtime makes the device's primary context current on this thread
        cu.cuInit(0)
    hdrs = [] if CPU else headers(os.path.join(folder, "include"))
    rng = np.random.default_rng(1)
    results = []

    def check(name, ok, detail=""):
        results.append((name, ok))
        print("%-28s %s %s" % (name, "PASS" if ok else "FAIL", detail))

    # simd_reduce: partial last group (grid 80, tg 64 -> SIMD-groups of 32, 32, 16)
    k = Kernel(folder, "simd_reduce.cu", "simd_reduce", hdrs)
    n = 80
    x = rng.uniform(0.5, 1.5, n).astype(np.float32)
    outs = [xp.full(n, np.nan, np.float32) for _ in range(4)]
    k([xp.asarray(x)] + outs, grid=(n,), tg=(64,))
    s, p, mn, mx = [host(o) for o in outs]
    ok = True
    for start, lanes in simd_groups(n, 64):
        seg = x[start:start + lanes]
        ok &= np.allclose(s[start:start + lanes], seg.sum(), rtol=1e-5)
        ok &= np.allclose(p[start:start + lanes], np.prod(seg), rtol=1e-4)
        ok &= np.all(mn[start:start + lanes] == seg.min()) and np.all(mx[start:start + lanes] == seg.max())
    check("simd_reduce (partial)", ok)

    # simd_divergent: lanes < limit form one active set, the others another
    k = Kernel(folder, "simd_divergent.cu", "simd_divergent", hdrs)
    n, limit = 128, 20
    x = rng.uniform(-1, 1, n).astype(np.float32)
    a, b, c = [xp.full(n, np.nan, np.float32) for _ in range(3)]
    k([xp.asarray(x), a, b, c, np.uint32(limit)], groups=(2,), tg=(64,))
    a, b, c = host(a), host(b), host(c)
    ok = True
    for s0 in range(0, n, 32):
        seg = x[s0:s0 + 32]
        for l in range(32):
            i = s0 + l
            if l < limit:
                ok &= np.isclose(a[i], seg[:limit].sum(), rtol=1e-5)
                ok &= b[i] == l
                ok &= c[i] == (seg[l + 1] if l + 1 < limit else 0.0)
            else:
                ok &= a[i] == seg[limit:].max() and b[i] == -1 and c[i] == 0
    check("simd_divergent", bool(ok))

    # simd_prefix: grid 80, tg 96 -> SIMD-groups of 32, 32, 16
    k = Kernel(folder, "simd_prefix.cu", "simd_prefix", hdrs)
    n = 80
    x = rng.uniform(0, 1, n).astype(np.float32)
    y = rng.uniform(0.9, 1.1, n).astype(np.float32)
    kk = rng.integers(0, 100, n).astype(np.uint32)
    outs = [xp.full(n, np.nan, np.float32) for _ in range(4)] + [xp.zeros(n, np.uint32)]
    k([xp.asarray(x), xp.asarray(y), xp.asarray(kk)] + outs, grid=(n,), tg=(96,))
    inc, exc, pin, pex, iexc = [host(o) for o in outs]
    ok = True
    for start, lanes in simd_groups(n, 96):
        sl = slice(start, start + lanes)
        ok &= np.allclose(inc[sl], np.cumsum(x[sl]), rtol=1e-5)
        ok &= np.allclose(exc[sl], np.concatenate([[0], np.cumsum(x[sl])[:-1]]), rtol=1e-5, atol=1e-6)
        ok &= np.allclose(pin[sl], np.cumprod(y[sl]), rtol=1e-4)
        ok &= np.allclose(pex[sl], np.concatenate([[1], np.cumprod(y[sl])[:-1]]), rtol=1e-4)
        ok &= np.array_equal(iexc[sl], np.concatenate([[0], np.cumsum(kk[sl])[:-1]]).astype(np.uint32))
    check("simd_prefix (partial)", bool(ok))

    # simd_shuffles: full groups of 64
    k = Kernel(folder, "simd_shuffles.cu", "simd_shuffles", hdrs)
    n = 128
    x = rng.uniform(0, 1, n).astype(np.float32)
    r = xp.full(n * 8, np.nan, np.float32)
    k([xp.asarray(x), r], groups=(2,), tg=(64,))
    r = host(r).reshape(n, 8)
    want = np.zeros((n, 8), np.float32)
    for i in range(n):
        l, b0 = i % 32, i - i % 32
        want[i] = [x[b0 + (l * 5) % 32], x[i + 3] if l + 3 < 32 else x[i], x[i - 2] if l >= 2 else x[i],
                   x[b0 + (l ^ 5)], x[b0 + 7], x[b0], x[b0 + (l + 1) % 32], l]
    check("simd_shuffles", bool(np.array_equal(r, want)))

    # simd_vote: grid 80, tg 64 (partial SIMD-group of 16)
    k = Kernel(folder, "simd_vote.cu", "simd_vote_kernel", hdrs)
    n = 80
    x = rng.uniform(-1, 1, n).astype(np.float32)
    outs = [xp.full(n, 7, np.uint32) for _ in range(5)]
    k([xp.asarray(x)] + outs, grid=(n,), tg=(64,))
    bal, al, an, fi, ma = [host(o) for o in outs]
    ok = True
    for start, lanes in simd_groups(n, 64):
        p = x[start:start + lanes] > 0
        bits = sum(1 << j for j in range(lanes) if p[j])
        ok &= np.all(bal[start:start + lanes] == bits)
        ok &= np.all(al[start:start + lanes] == int(p.all())) and np.all(an[start:start + lanes] == int(p.any()))
        ok &= fi[start] == 1 and np.all(fi[start + 1:start + lanes] == 0)
        ok &= np.all(ma[start:start + lanes] == (1 << lanes) - 1)
    check("simd_vote (partial)", bool(ok))

    # quad_ops
    k = Kernel(folder, "quad_ops.cu", "quad_ops", hdrs)
    n = 64
    x = rng.uniform(0, 1, n).astype(np.float32)
    o = xp.full(n * 5, np.nan, np.float32)
    k([xp.asarray(x), o], groups=(2,), tg=(32,))
    o = host(o).reshape(n, 5)
    want = np.zeros((n, 5), np.float32)
    for i in range(n):
        q, b0 = i % 4, i - i % 4
        want[i] = [x[b0:b0 + 4].sum(), x[b0 + 3 - q], x[b0 + (q ^ 1)], x[b0], x[b0:i + 1].sum()]
    check("quad_ops", bool(np.allclose(o, want, rtol=1e-6)))

    # half_scale and bfloat_ops
    k = Kernel(folder, "half_scale.cu", "half_scale", hdrs)
    n = 1000
    xh = rng.uniform(-10, 10, n).astype(np.float16)
    y = xp.zeros(n, np.float16)
    z = xp.zeros(n, np.float32)
    k([xp.asarray(xh), y, z, np.float32(0.37)], grid=(n,), tg=(128,))
    f = xh.astype(np.float32) * np.float32(0.37)
    ok = np.array_equal(host(z), f) and np.array_equal(host(y), (f.astype(np.float16) + np.float16(1.0)))
    check("half_scale", bool(ok))

    # histogram with device atomics
    k = Kernel(folder, "histogram_device.cu", "histogram_device", hdrs)
    n = 100000
    data = rng.integers(0, 256, n).astype(np.uint8)
    bins = xp.zeros(256, np.uint32)
    k([xp.asarray(data), bins, np.uint32(n)], groups=((n + 255) // 256,), tg=(256,))
    check("histogram_device", bool(np.array_equal(host(bins), np.bincount(data, minlength=256))))

    # block_scan (simd prefix + threadgroup memory + barriers)
    k = Kernel(folder, "block_scan.cu", "block_scan", hdrs)
    ng = 4
    v = rng.integers(0, 10, ng * 256).astype(np.uint32)
    out = xp.zeros(ng * 256, np.uint32)
    tot = xp.zeros(ng, np.uint32)
    k([xp.asarray(v), out, tot], groups=(ng,), tg=(256,))
    want = np.concatenate([np.cumsum(v[g * 256:(g + 1) * 256]) for g in range(ng)]).astype(np.uint32)
    check("block_scan", bool(np.array_equal(host(out), want) and np.array_equal(host(tot), v.reshape(ng, 256).sum(1))))

    # simdgroup_matrix GEMM and Apple's lane layout
    k = Kernel(folder, "simdgroup_matmul.cu", "simdgroup_matmul", hdrs)
    M, N, K = 16, 24, 32
    A = rng.integers(-4, 5, (M, K)).astype(np.float32)
    B = rng.integers(-4, 5, (K, N)).astype(np.float32)
    C = xp.full(M * N, np.nan, np.float32)
    lay = xp.full(64, np.nan, np.float32)
    dims = np.array([M, N, K], np.uint32).view(np.dtype([("M", "<u4"), ("N", "<u4"), ("K", "<u4")]))[0]
    k([xp.asarray(A), xp.asarray(B), C, lay, dims], groups=(N // 8, M // 8), tg=(32,))
    want_lay = np.zeros(64, np.float32)
    for l in range(32):
        fm = (l >> 4 & 1) * 4 + (l >> 1 & 3)
        fn = (l >> 3 & 1) * 4 + (l & 1) * 2
        want_lay[2 * l:2 * l + 2] = A[fm, fn:fn + 2]
    check("simdgroup_matmul", bool(np.array_equal(host(C).reshape(M, N), A @ B) and np.array_equal(host(lay), want_lay)))

    k = Kernel(folder, "simdgroup_matrix_tg.cu", "simdgroup_matrix_tg", hdrs)
    X = rng.uniform(-1, 1, (8, 8)).astype(np.float16)
    Y = rng.uniform(-1, 1, (8, 8)).astype(np.float16)
    o = xp.full(64, np.nan, np.float32)
    k([xp.asarray(X), xp.asarray(Y), o], groups=(1,), tg=(32,))
    want = (X.astype(np.float32).T @ Y.astype(np.float32) + np.eye(8, dtype=np.float32)).T
    check("simdgroup_matrix_tg", bool(np.allclose(host(o).reshape(8, 8), want, rtol=1e-5, atol=1e-5)))

    # builtins in 2-D with non-uniform edges (dispatchThreads): the CPU engine runs edge groups with
    # their real size; a CUDA host splits such grids into regions (not done here: uniform groups).
    k = Kernel(folder, "builtins_2d.cu", "builtins_2d", hdrs)
    gw, gh, tx, ty = (37, 11, 8, 4) if CPU else (32, 12, 8, 4)
    out = xp.full(gw * gh * 16, 12345, np.uint32)
    k([out], grid=(gw, gh), tg=(tx, ty))
    out = host(out).reshape(gh, gw, 16)
    ok = True
    for y in range(gh):
        for x in range(gw):
            gx, gy = x // tx, y // ty
            bw, bh = min(tx, gw - gx * tx), min(ty, gh - gy * ty)
            lx, ly = x - gx * tx, y - gy * ty
            idx = ly * bw + lx
            want = [x, y, lx, ly, gx, gy, bw, bh, -(-gw // tx), -(-gh // ty), gw, gh, tx, ty, idx, idx % 32 + 100 * (idx // 32)]
            ok &= list(out[y, x]) == want
    check("builtins_2d (edges)" if CPU else "builtins_2d", bool(ok))

    # early return before a barrier
    k = Kernel(folder, "early_return_barrier.cu", "early_return_barrier", hdrs)
    active = 100
    x = rng.uniform(0, 1, 256).astype(np.float32)
    out = xp.full(256, -1.0, np.float32)
    k([xp.asarray(x), out, np.uint32(active)], groups=(2,), tg=(128,))
    out = host(out)
    want = np.full(256, -1.0, np.float32)
    for g in range(2):
        for l in range(active):
            want[g * 128 + l] = x[g * 128 + (l + 1) % active] * 2
    check("early_return_barrier", bool(np.array_equal(out, want)))

    # dynamic threadgroup memory with a partial last group
    k = Kernel(folder, "dynamic_tgmem.cu", "reverse_in_group", hdrs)
    n, T = 150, 64
    x = rng.uniform(0, 1, n).astype(np.float32)
    out = xp.zeros(n, np.float32)
    sums = xp.zeros(3, np.float32)
    k([xp.asarray(x), out, sums], grid=(n,), tg=(T,), tgmem=(T * 4,))
    want = np.concatenate([x[g:g + T][::-1] for g in range(0, n, T)])
    ws = np.array([x[g:g + T].sum() for g in range(0, n, T)], np.float32)
    check("dynamic_tgmem (partial)", bool(np.array_equal(host(out), want) and np.allclose(host(sums), ws, rtol=1e-5)))

    # threadgroup atomics + device atomics
    k = Kernel(folder, "histogram_threadgroup.cu", "histogram_threadgroup", hdrs)
    n = 5000
    data = rng.integers(0, 1 << 20, n).astype(np.uint32)
    bins = xp.zeros(64, np.uint32)
    k([xp.asarray(data), bins, np.uint32(n)], groups=(-(-n // 128),), tg=(128,))
    check("histogram_threadgroup", bool(np.array_equal(host(bins), np.bincount(data % 64, minlength=64))))

    # softmax rows (simd_max/simd_sum + threadgroup combine)
    k = Kernel(folder, "softmax_row.cu", "softmax_row", hdrs)
    rows, cols = 5, 300
    x = rng.normal(0, 3, (rows, cols)).astype(np.float32)
    out = xp.zeros(rows * cols, np.float32)
    k([xp.asarray(x), out, np.uint32(cols)], groups=(rows,), tg=(128,))
    e = np.exp(x - x.max(1, keepdims=True))
    check("softmax_row", bool(np.allclose(host(out).reshape(rows, cols), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-7)))

    # tiled matmul (2-D groups, two threadgroup tiles)
    k = Kernel(folder, "matmul_tiled.cu", "matmul_tiled", hdrs)
    M, N, K = 37, 29, 45
    A = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    B = rng.uniform(-1, 1, (K, N)).astype(np.float32)
    C = xp.zeros(M * N, np.float32)
    dims = np.array([M, N, K], np.uint32).view(np.dtype([("M", "<u4"), ("N", "<u4"), ("K", "<u4")]))[0]
    k([xp.asarray(A), xp.asarray(B), C, dims], groups=(-(-N // 16), -(-M // 16)), tg=(16, 16))
    check("matmul_tiled", bool(np.allclose(host(C).reshape(M, N), A @ B, rtol=1e-4, atol=1e-5)))

    failed = sum(1 for _, ok in results if not ok)
    print("%d of %d passed" % (len(results) - failed, len(results)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
