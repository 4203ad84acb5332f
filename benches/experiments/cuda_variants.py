"""Kernel-shape experiments on CUDA (CuPy RawKernel), to choose the built-in library's shapes.

Not a benchmark of ingot: it compares ways of writing the same memory-bound kernels (grid size,
work per thread, row split) against CuPy and PyTorch in one run. Usage: python cuda_variants.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _timing import sync_all, timeit  # noqa: E402

import cupy as cp
import numpy as np
import torch

N = 1 << 28
dev = cp.cuda.Device()
SMS = dev.attributes["MultiProcessorCount"]
print("device", cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "SMs", SMS)


# Waits for every library the variants use.
SYNC = sync_all(cp.cuda.Device().synchronize, torch.cuda.synchronize)


def bench(fn, reps=10, rounds=5):
    return timeit(fn, SYNC, reps=reps, rounds=rounds, warmup=1)


SRC = r"""
struct P16 { unsigned long long a, b; };
struct P512 { unsigned long long v[64]; };
extern "C" __global__ void tiny0(float* x) { if (threadIdx.x == 0 && x[0] == 12345.f) x[1] = 1.f; }
extern "C" __global__ void tiny16(float* x, P16 p) { if (threadIdx.x == 0 && p.a == 7) x[1] = 1.f; }
extern "C" __global__ void tiny512(float* x, P512 p) { if (threadIdx.x == 0 && p.v[3] == 7) x[1] = 1.f; }

struct __align__(16) F4 { float v[4]; };
extern "C" __global__ void add_gs2(const float* x, const float* y, float* z, unsigned long long n) {
  unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  const F4* xv = (const F4*)x; const F4* yv = (const F4*)y; F4* zv = (F4*)z;
  unsigned long long nv = n / 4, j = tid;
  for (; j + nt < nv; j += 2ull * nt) {
    F4 a0 = xv[j], a1 = xv[j + nt], b0 = yv[j], b1 = yv[j + nt], r0, r1;
    for (int k = 0; k < 4; ++k) { r0.v[k] = a0.v[k] + b0.v[k]; r1.v[k] = a1.v[k] + b1.v[k]; }
    zv[j] = r0; zv[j + nt] = r1;
  }
  for (; j < nv; j += nt) { F4 a = xv[j], b = yv[j], r; for (int k = 0; k < 4; ++k) r.v[k] = a.v[k] + b.v[k]; zv[j] = r; }
}
extern "C" __global__ void add_gs4(const float* x, const float* y, float* z, unsigned long long n) {
  unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  const F4* xv = (const F4*)x; const F4* yv = (const F4*)y; F4* zv = (F4*)z;
  unsigned long long nv = n / 4, j = tid;
  for (; j + 3ull * nt < nv; j += 4ull * nt) {
    F4 a[4], b[4], r[4];
    for (int u = 0; u < 4; ++u) { a[u] = xv[j + u * nt]; b[u] = yv[j + u * nt]; }
    for (int u = 0; u < 4; ++u) for (int k = 0; k < 4; ++k) r[u].v[k] = a[u].v[k] + b[u].v[k];
    for (int u = 0; u < 4; ++u) zv[j + u * nt] = r[u];
  }
  for (; j < nv; j += nt) { F4 a = xv[j], b = yv[j], r; for (int k = 0; k < 4; ++k) r.v[k] = a.v[k] + b.v[k]; zv[j] = r; }
}
// Block-contiguous chunks: each block owns U*blockDim packs, each thread U packs blockDim apart.
template <int U> __device__ void add_chunk_t(const float* x, const float* y, float* z, unsigned long long n) {
  const F4* xv = (const F4*)x; const F4* yv = (const F4*)y; F4* zv = (F4*)z;
  unsigned long long nv = n / 4;
  unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * U + threadIdx.x;
  F4 a[U], b[U], r[U];
  #pragma unroll
  for (int u = 0; u < U; ++u) { unsigned long long j = base + u * blockDim.x; if (j < nv) { a[u] = xv[j]; b[u] = yv[j]; } }
  #pragma unroll
  for (int u = 0; u < U; ++u) for (int k = 0; k < 4; ++k) r[u].v[k] = a[u].v[k] + b[u].v[k];
  #pragma unroll
  for (int u = 0; u < U; ++u) { unsigned long long j = base + u * blockDim.x; if (j < nv) zv[j] = r[u]; }
}
extern "C" __global__ void add_chunk1(const float* x, const float* y, float* z, unsigned long long n) { add_chunk_t<1>(x, y, z, n); }
extern "C" __global__ void add_chunk2(const float* x, const float* y, float* z, unsigned long long n) { add_chunk_t<2>(x, y, z, n); }
extern "C" __global__ void add_chunk4(const float* x, const float* y, float* z, unsigned long long n) { add_chunk_t<4>(x, y, z, n); }

extern "C" __global__ void sin_gs2(const float* x, float* z, unsigned long long n) {
  unsigned tid = blockIdx.x * blockDim.x + threadIdx.x, nt = gridDim.x * blockDim.x;
  const F4* xv = (const F4*)x; F4* zv = (F4*)z;
  unsigned long long nv = n / 4, j = tid;
  for (; j + nt < nv; j += 2ull * nt) {
    F4 a0 = xv[j], a1 = xv[j + nt], r0, r1;
    for (int k = 0; k < 4; ++k) { r0.v[k] = sinf(a0.v[k]); r1.v[k] = sinf(a1.v[k]); }
    zv[j] = r0; zv[j + nt] = r1;
  }
  for (; j < nv; j += nt) { F4 a = xv[j], r; for (int k = 0; k < 4; ++k) r.v[k] = sinf(a.v[k]); zv[j] = r; }
}
extern "C" __global__ void sin_chunk2(const float* x, float* z, unsigned long long n) {
  const F4* xv = (const F4*)x; F4* zv = (F4*)z;
  unsigned long long nv = n / 4;
  unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * 2 + threadIdx.x;
  F4 a[2], r[2];
  for (int u = 0; u < 2; ++u) { unsigned long long j = base + u * blockDim.x; if (j < nv) a[u] = xv[j]; }
  for (int u = 0; u < 2; ++u) for (int k = 0; k < 4; ++k) r[u].v[k] = sinf(a[u].v[k]);
  for (int u = 0; u < 2; ++u) { unsigned long long j = base + u * blockDim.x; if (j < nv) zv[j] = r[u]; }
}

// Column sums of an m x k (rows x cols) row-major matrix.
// cols_cur: the current shape: 32 columns x 8 row-lanes per 256-thread group, grid-stride over columns.
extern "C" __global__ void cols_cur(const float* x, float* out, unsigned long long rows, unsigned long long cols) {
  __shared__ float sh[256];
  unsigned lid = threadIdx.x, lane = lid & 31u, row = lid >> 5;
  for (unsigned long long c0 = (unsigned long long)blockIdx.x * 32ull; c0 < cols; c0 += (unsigned long long)gridDim.x * 32ull) {
    unsigned long long c = c0 + lane;
    float acc = 0.f;
    if (c < cols) { const float* p = x + c; for (unsigned long long k = row; k < rows; k += 8ull) acc += p[k * cols]; }
    sh[lid] = acc; __syncthreads();
    if (row == 0u && c < cols) { for (unsigned j = 1u; j < 8u; ++j) acc += sh[lane + 32u * j]; out[c] = acc; }
    __syncthreads();
  }
}
// cols_split: pass 1, block = 32 float4 lanes (128 columns) x 8 row-lanes; blockIdx.y = row slice.
// partial[slice][col].
extern "C" __global__ void cols_split(const float* x, float* partial, unsigned long long rows, unsigned long long cols, unsigned long long slice_rows) {
  __shared__ F4 sh[256];
  unsigned lid = threadIdx.x, lane = lid & 31u, row = lid >> 5;
  unsigned long long c4 = (unsigned long long)blockIdx.x * 32ull + lane;  // float4 column index
  unsigned long long r0 = (unsigned long long)blockIdx.y * slice_rows, r1 = min(rows, r0 + slice_rows);
  F4 acc = {{0.f, 0.f, 0.f, 0.f}}, acc1 = {{0.f, 0.f, 0.f, 0.f}};
  if (c4 * 4 < cols) {
    const F4* p = (const F4*)(x) + c4;
    unsigned long long cv = cols / 4;
    unsigned long long k = r0 + row;
    for (; k + 8 < r1; k += 16) { F4 a = p[k * cv], b = p[(k + 8) * cv]; for (int q = 0; q < 4; ++q) { acc.v[q] += a.v[q]; acc1.v[q] += b.v[q]; } }
    for (; k < r1; k += 8) { F4 a = p[k * cv]; for (int q = 0; q < 4; ++q) acc.v[q] += a.v[q]; }
    for (int q = 0; q < 4; ++q) acc.v[q] += acc1.v[q];
  }
  sh[lid] = acc; __syncthreads();
  if (row == 0u && c4 * 4 < cols) {
    for (unsigned j = 1u; j < 8u; ++j) for (int q = 0; q < 4; ++q) acc.v[q] += sh[lane + 32u * j].v[q];
    ((F4*)(partial + blockIdx.y * cols))[c4] = acc;
  }
}
extern "C" __global__ void cols_final(const float* partial, float* out, unsigned long long slices, unsigned long long cols) {
  unsigned long long c = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= cols) return;
  float acc = 0.f;
  for (unsigned long long s = 0; s < slices; ++s) acc += partial[s * cols + c];
  out[c] = acc;
}

// argmax, pass 1 per thread (value, index) then group combine. cur: element-wise comb.
struct AA { float v; long long i; };
__device__ AA comb(AA a, AA b) {
  if (a.i < 0) return b; if (b.i < 0) return a;
  bool an = a.v != a.v, bn = b.v != b.v;
  if (an || bn) { if (an && bn) return a.i <= b.i ? a : b; return an ? a : b; }
  if (b.v > a.v || (b.v == a.v && b.i < a.i)) return b;
  return a;
}
__device__ AA group_comb(AA acc, AA* sh) {
  unsigned lid = threadIdx.x;
  sh[lid] = acc; __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) { if (lid < s) sh[lid] = comb(sh[lid], sh[lid + s]); __syncthreads(); }
  return sh[0];
}
extern "C" __global__ void argmax_cur(const float* x, AA* part, unsigned long long n) {
  __shared__ AA sh[256];
  unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x, nt = (unsigned long long)gridDim.x * blockDim.x;
  const F4* xv = (const F4*)x; unsigned long long nv = n / 4, j = tid;
  AA acc = {0.f, -1}, acc1 = {0.f, -1};
  for (; j + nt < nv; j += 2 * nt) {
    F4 a = xv[j], b = xv[j + nt];
    for (int q = 0; q < 4; ++q) { AA l = {a.v[q], (long long)(j * 4 + q)}; acc = comb(acc, l); AA m = {b.v[q], (long long)((j + nt) * 4 + q)}; acc1 = comb(acc1, m); }
  }
  for (; j < nv; j += nt) { F4 a = xv[j]; for (int q = 0; q < 4; ++q) { AA l = {a.v[q], (long long)(j * 4 + q)}; acc = comb(acc, l); } }
  acc = comb(acc, acc1);
  acc = group_comb(acc, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}
// pack: per thread, the max of each pack (NaN wins) and the pack where the running best was set;
// the lane is found again at the end by reading that pack once more.
__device__ __forceinline__ float nmax(float a, float b) { return (a > b || a != a) ? a : b; }
extern "C" __global__ void argmax_pack(const float* x, AA* part, unsigned long long n) {
  __shared__ AA sh[256];
  unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x, nt = (unsigned long long)gridDim.x * blockDim.x;
  const F4* xv = (const F4*)x; unsigned long long nv = n / 4, j = tid;
  float best = __int_as_float(0xff800000); long long bj = -1;
  for (; j + nt < nv; j += 2 * nt) {
    F4 a = xv[j], b = xv[j + nt];
    float ma = nmax(nmax(a.v[0], a.v[1]), nmax(a.v[2], a.v[3]));
    float mb = nmax(nmax(b.v[0], b.v[1]), nmax(b.v[2], b.v[3]));
    if (ma > best || (ma != ma && best == best) || bj < 0) { best = ma; bj = j; }
    if (mb > best || (mb != mb && best == best)) { best = mb; bj = j + nt; }
  }
  for (; j < nv; j += nt) {
    F4 a = xv[j];
    float ma = nmax(nmax(a.v[0], a.v[1]), nmax(a.v[2], a.v[3]));
    if (ma > best || (ma != ma && best == best) || bj < 0) { best = ma; bj = j; }
  }
  AA acc = {0.f, -1};
  if (bj >= 0) {
    F4 a = xv[bj];
    for (int q = 0; q < 4; ++q) { bool hit = (best != best) ? (a.v[q] != a.v[q]) : (a.v[q] == best); if (hit) { acc.v = a.v[q]; acc.i = bj * 4 + q; break; } }
  }
  acc = group_comb(acc, sh);
  if (threadIdx.x == 0) part[blockIdx.x] = acc;
}
"""

def launch_latency():
    mod = cp.RawModule(code=SRC, options=("-std=c++17",))
    x = cp.ones(32, cp.float32)
    p16 = np.zeros(2, np.uint64).view(np.dtype((np.void, 16)))[0]
    p512 = np.zeros(64, np.uint64).view(np.dtype((np.void, 512)))[0]
    for name, args in (("tiny0", (x,)), ("tiny16", (x, p16)), ("tiny512", (x, p512))):
        k = mod.get_function(name)
        t = bench(lambda: [k((1,), (32,), args) for _ in range(200)], reps=5, rounds=5) / 200
        cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        for _ in range(300):
            k((1,), (32,), args)
        enq = (time.perf_counter() - t0) / 300
        cp.cuda.Device().synchronize()
        print(f"launch {name:8s} back-to-back {t * 1e6:6.2f} us/launch, enqueue only {enq * 1e6:6.2f} us")


try:
    launch_latency()
except Exception as e:  # keep the rest of the run
    print("launch latency experiment failed:", repr(e)[:300])
for fmad in (True, False):
    opts = ("-std=c++17",) + (() if fmad else ("--fmad=false",))
    mod = cp.RawModule(code=SRC, options=opts, name_expressions=None)
    tag = "fmad" if fmad else "nofmad"
    x = cp.random.random(N, dtype=cp.float32)
    y = cp.random.random(N, dtype=cp.float32)
    z = cp.empty_like(x)
    n = np.uint64(N)
    res = {}
    if fmad:
        tx, ty = torch.as_tensor(x, device="cuda"), torch.as_tensor(y, device="cuda")
        res["torch add"] = bench(lambda: tx + ty)
        res["cupy add"] = bench(lambda: x + y)
        res["torch copy"] = bench(lambda: tx.clone())
        res["torch sin"] = bench(lambda: torch.sin(tx))
        res["cupy sin"] = bench(lambda: cp.sin(x))
        for g in (SMS * 8, SMS * 16, SMS * 32, SMS * 64):
            k = mod.get_function("add_gs2")
            res[f"add gs2 g={g}"] = bench(lambda: k((g,), (256,), (x, y, z, n)))
            k4 = mod.get_function("add_gs4")
            res[f"add gs4 g={g}"] = bench(lambda: k4((g,), (256,), (x, y, z, n)))
        for u in (1, 2, 4):
            k = mod.get_function(f"add_chunk{u}")
            for tb in (128, 256, 512):
                g = (N // 4 + tb * u - 1) // (tb * u)
                res[f"add chunk{u} tb={tb}"] = bench(lambda: k((g,), (tb,), (x, y, z, n)))
        assert bool(cp.allclose(z, x + y))
    for g in (SMS * 8, SMS * 16, SMS * 32):
        k = mod.get_function("sin_gs2")
        res[f"sin gs2 g={g} {tag}"] = bench(lambda: k((g,), (256,), (x, z, n)))
    k = mod.get_function("sin_chunk2")
    res[f"sin chunk2 {tag}"] = bench(lambda: k(((N // 4 + 511) // 512,), (256,), (x, z, n)))
    if fmad:
        # column sums
        side = 16384
        m = cp.random.random((side, side), dtype=cp.float32)
        tm = torch.as_tensor(m, device="cuda")
        out = cp.empty(side, cp.float32)
        res["torch colsum"] = bench(lambda: tm.sum(0))
        res["cupy colsum"] = bench(lambda: m.sum(0))
        res["torch rowsum"] = bench(lambda: tm.sum(1))
        kc = mod.get_function("cols_cur")
        res["cols cur"] = bench(lambda: kc((side // 32,), (256,), (m, out, np.uint64(side), np.uint64(side))))
        ks, kf = mod.get_function("cols_split"), mod.get_function("cols_final")
        for slices in (8, 16, 32, 64, 128):
            part = cp.empty((slices, side), cp.float32)
            sr = side // slices

            def run():
                ks((side // 128, slices), (256,), (m, part, np.uint64(side), np.uint64(side), np.uint64(sr)))
                kf(((side + 255) // 256,), (256,), (part, out, np.uint64(slices), np.uint64(side)))

            res[f"cols split s={slices}"] = bench(run)
            ref = m.sum(0)
            assert bool(cp.allclose(out, ref, rtol=1e-4)), slices
        del m, tm
        # argmax
        tx = torch.as_tensor(x, device="cuda")
        res["torch argmax"] = bench(lambda: torch.argmax(tx))
        res["cupy argmax"] = bench(lambda: cp.argmax(x))
        dt = np.dtype([("v", np.float32), ("pad", np.int32), ("i", np.int64)])
        for name in ("argmax_cur", "argmax_pack"):
            for g in (SMS * 8, SMS * 16):
                part = cp.empty(g * 16, cp.uint8)
                k = mod.get_function(name)
                res[f"{name} g={g}"] = bench(lambda: k((g,), (256,), (x, part, n)))
                k((g,), (256,), (x, part, n))
                p = cp.asnumpy(part).view(dt)
                best = p[p["v"] == p["v"].max()]["i"].min()
                assert best == int(cp.argmax(x)), (name, best)
    gb = 3 * N * 4
    for key, t in res.items():
        bw = (2 * N * 4 if "sin" in key or "copy" in key else 3 * N * 4 if "add" in key else N * 4) / t
        print(f"{key:32s} {t * 1e6:9.1f} us  {bw / 1e12:6.2f} TB/s")
