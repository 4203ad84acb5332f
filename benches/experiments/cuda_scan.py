"""1-D inclusive scan (cumsum) kernel shapes on CUDA (CuPy RawKernel), to choose `cumsum_tiles`.

Not a benchmark of ingot: three-pass reduce-then-scan variants (tile totals, a scan of the totals,
a rescan of each tile), each pass timed alone, against a plain copy, CuPy, PyTorch and ingot in one
run. Usage: INGOT_DEVICE=cuda python cuda_scan.py
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from _timing import sync_all, timeit  # noqa: E402

import cupy as cp
import numpy as np
import torch

try:
    import ingot as ig
except Exception:  # pragma: no cover - optional
    ig = None

N = 1 << 28


# Waits for every library the variants use.
SYNC = sync_all(cp.cuda.Device().synchronize, torch.cuda.synchronize, ig.synchronize if ig is not None else None)


def bench(fn, reps=10, rounds=5):
    return timeit(fn, SYNC, reps=reps, rounds=rounds, warmup=1)


SRC = r"""
#define TPB 256
__device__ __forceinline__ unsigned pad(unsigned i) { return i + i / 32; }

// Exclusive prefix over the 256 threads as ingot's group_exclusive: 16 threads scan 16 each.
__device__ float group_exclusive_serial(float v, float* tot) {
  unsigned lid = threadIdx.x;
  tot[lid] = v;
  __syncthreads();
  if (lid < 16) { float a = 0; for (int j = 0; j < 16; ++j) { a += tot[lid * 16 + j]; tot[lid * 16 + j] = a; } tot[256 + lid] = a; }
  __syncthreads();
  if (lid == 0) { float a = 0; for (int j = 0; j < 16; ++j) { float t = tot[256 + j]; tot[256 + j] = a; a += t; } }
  __syncthreads();
  float r = tot[256 + lid / 16];
  if (lid % 16) r += tot[lid - 1];
  return r;
}

// Exclusive prefix with warp shuffles: scan within warps, then the 8 warp totals.
__device__ float group_exclusive_shfl(float v, float* wt) {
  unsigned lid = threadIdx.x, lane = lid % 32, w = lid / 32;
  float x = v;
  for (int d = 1; d < 32; d <<= 1) { float o = __shfl_up_sync(0xffffffffu, x, d); if (lane >= d) x += o; }
  if (lane == 31) wt[w] = x;
  __syncthreads();
  if (w == 0) {
    float t = lane < 8 ? wt[lane] : 0.f;
    for (int d = 1; d < 8; d <<= 1) { float o = __shfl_up_sync(0xffffffffu, t, d); if (lane >= d) t += o; }
    if (lane < 8) wt[8 + lane] = t;
  }
  __syncthreads();
  return x - v + (w ? wt[8 + w - 1] : 0.f);
}

// ---- pass 0: tile totals
// ingot's: ITEMS scalar loads striped, group_exclusive for the total.
template <int ITEMS>
__device__ void p0_ours(const float* x, float* sums, unsigned long long n) {
  __shared__ float tot[272];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * ITEMS;
  float a = 0;
  for (int k = 0; k < ITEMS; ++k) { unsigned long long i = base + k * TPB + threadIdx.x; if (i < n) a += x[i]; }
  float ex = group_exclusive_serial(a, tot);
  if (threadIdx.x == TPB - 1) sums[blockIdx.x] = ex + a;
}
extern "C" __global__ void p0_ours16(const float* x, float* sums, unsigned long long n) { p0_ours<16>(x, sums, n); }
// float4 loads striped (full tiles), warp-shuffle reduction.
template <int V4>
__device__ void p0_vec(const float* x, float* sums, unsigned long long n) {
  __shared__ float wt[8];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * V4 * 4;
  float a = 0;
  if (base + TPB * V4 * 4 <= n) {
    const float4* xv = (const float4*)(x + base);
    float4 r[V4];
    for (int k = 0; k < V4; ++k) r[k] = xv[k * TPB + threadIdx.x];
    for (int k = 0; k < V4; ++k) a += (r[k].x + r[k].y) + (r[k].z + r[k].w);
  } else {
    for (int k = 0; k < V4 * 4; ++k) { unsigned long long i = base + k * TPB + threadIdx.x; if (i < n) a += x[i]; }
  }
  for (int d = 16; d; d >>= 1) a += __shfl_xor_sync(0xffffffffu, a, d);
  if (threadIdx.x % 32 == 0) wt[threadIdx.x / 32] = a;
  __syncthreads();
  if (threadIdx.x == 0) { float t = 0; for (int j = 0; j < 8; ++j) t += wt[j]; sums[blockIdx.x] = t; }
}
extern "C" __global__ void p0_vec4(const float* x, float* sums, unsigned long long n) { p0_vec<4>(x, sums, n); }
extern "C" __global__ void p0_vec8(const float* x, float* sums, unsigned long long n) { p0_vec<8>(x, sums, n); }

// ---- pass 1: rescan each tile from the scanned totals (sums inclusive)
// ingot's: scalar striped loads through padded shared memory, 16 per thread, serial group scan.
template <int ITEMS>
__device__ void p1_ours(const float* x, float* y, const float* sums, unsigned long long n) {
  __shared__ float sh[TPB * ITEMS + TPB * ITEMS / 32];
  __shared__ float tot[272];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * ITEMS;
  unsigned lid = threadIdx.x;
  for (int k = 0; k < ITEMS; ++k) { unsigned i = k * TPB + lid; sh[pad(i)] = base + i < n ? x[base + i] : 0.f; }
  __syncthreads();
  float v[ITEMS], a = 0;
  for (int j = 0; j < ITEMS; ++j) { a += sh[pad(lid * ITEMS + j)]; v[j] = a; }
  float p = group_exclusive_serial(a, tot);
  if (blockIdx.x) p += sums[blockIdx.x - 1];
  for (int j = 0; j < ITEMS; ++j) sh[pad(lid * ITEMS + j)] = p + v[j];
  __syncthreads();
  for (int k = 0; k < ITEMS; ++k) { unsigned i = k * TPB + lid; if (base + i < n) y[base + i] = sh[pad(i)]; }
}
extern "C" __global__ void p1_ours16(const float* x, float* y, const float* sums, unsigned long long n) { p1_ours<16>(x, y, sums, n); }
// The same with the warp-shuffle group scan.
template <int ITEMS>
__device__ void p1_shfl(const float* x, float* y, const float* sums, unsigned long long n) {
  __shared__ float sh[TPB * ITEMS + TPB * ITEMS / 32];
  __shared__ float wt[16];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * ITEMS;
  unsigned lid = threadIdx.x;
  for (int k = 0; k < ITEMS; ++k) { unsigned i = k * TPB + lid; sh[pad(i)] = base + i < n ? x[base + i] : 0.f; }
  __syncthreads();
  float v[ITEMS], a = 0;
  for (int j = 0; j < ITEMS; ++j) { a += sh[pad(lid * ITEMS + j)]; v[j] = a; }
  float p = group_exclusive_shfl(a, wt);
  if (blockIdx.x) p += sums[blockIdx.x - 1];
  __syncthreads();
  for (int j = 0; j < ITEMS; ++j) sh[pad(lid * ITEMS + j)] = p + v[j];
  __syncthreads();
  for (int k = 0; k < ITEMS; ++k) { unsigned i = k * TPB + lid; if (base + i < n) y[base + i] = sh[pad(i)]; }
}
extern "C" __global__ void p1_shfl16(const float* x, float* y, const float* sums, unsigned long long n) { p1_shfl<16>(x, y, sums, n); }
// Each thread loads its 16 consecutive elements as 4 float4 directly (L1 merges the lines).
extern "C" __global__ void p1_direct16(const float* x, float* y, const float* sums, unsigned long long n) {
  __shared__ float wt[16];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * 16;
  unsigned lid = threadIdx.x;
  bool full = base + TPB * 16 <= n;
  float v[16];
  if (full) {
    const float4* xv = (const float4*)(x + base) + lid * 4;
    for (int k = 0; k < 4; ++k) { float4 q = xv[k]; v[4*k] = q.x; v[4*k+1] = q.y; v[4*k+2] = q.z; v[4*k+3] = q.w; }
  } else {
    for (int j = 0; j < 16; ++j) { unsigned long long i = base + lid * 16 + j; v[j] = i < n ? x[i] : 0.f; }
  }
  float a = 0;
  for (int j = 0; j < 16; ++j) { a += v[j]; v[j] = a; }
  float p = group_exclusive_shfl(a, wt);
  if (blockIdx.x) p += sums[blockIdx.x - 1];
  if (full) {
    float4* yv = (float4*)(y + base) + lid * 4;
    for (int k = 0; k < 4; ++k) yv[k] = make_float4(p + v[4*k], p + v[4*k+1], p + v[4*k+2], p + v[4*k+3]);
  } else {
    for (int j = 0; j < 16; ++j) { unsigned long long i = base + lid * 16 + j; if (i < n) y[i] = p + v[j]; }
  }
}
// float4 striped loads into shared memory, 16 consecutive per thread from there, shuffle scan.
extern "C" __global__ void p1_vsmem16(const float* x, float* y, const float* sums, unsigned long long n) {
  __shared__ float sh[TPB * 16 + TPB * 16 / 32];
  __shared__ float wt[16];
  unsigned long long base = (unsigned long long)blockIdx.x * TPB * 16;
  unsigned lid = threadIdx.x;
  bool full = base + TPB * 16 <= n;
  if (full) {
    const float4* xv = (const float4*)(x + base);
    for (int k = 0; k < 4; ++k) {
      float4 q = xv[k * TPB + lid]; unsigned i = 4 * (k * TPB + lid);
      sh[pad(i)] = q.x; sh[pad(i + 1)] = q.y; sh[pad(i + 2)] = q.z; sh[pad(i + 3)] = q.w;
    }
  } else {
    for (int k = 0; k < 16; ++k) { unsigned i = k * TPB + lid; sh[pad(i)] = base + i < n ? x[base + i] : 0.f; }
  }
  __syncthreads();
  float v[16], a = 0;
  for (int j = 0; j < 16; ++j) { a += sh[pad(lid * 16 + j)]; v[j] = a; }
  float p = group_exclusive_shfl(a, wt);
  if (blockIdx.x) p += sums[blockIdx.x - 1];
  for (int j = 0; j < 16; ++j) sh[pad(lid * 16 + j)] = p + v[j];
  __syncthreads();
  if (full) {
    float4* yv = (float4*)(y + base);
    for (int k = 0; k < 4; ++k) {
      unsigned i = 4 * (k * TPB + lid);
      yv[k * TPB + lid] = make_float4(sh[pad(i)], sh[pad(i + 1)], sh[pad(i + 2)], sh[pad(i + 3)]);
    }
  } else {
    for (int k = 0; k < 16; ++k) { unsigned i = k * TPB + lid; if (base + i < n) y[base + i] = sh[pad(i)]; }
  }
}
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
x = cp.random.random(N, dtype=cp.float32) - 0.5
want = cp.cumsum(x.astype(cp.float64))
y = cp.empty_like(x)
t_copy = bench(lambda: cp.copyto(y, x))
print(f"copy {2 * 4 * N / t_copy / 1e12:.2f} TB/s ({t_copy * 1e6:.0f} us); ideal 3-pass time {1.5 * t_copy * 1e6:.0f} us")
u64 = np.uint64(N)
TILE = 4096
tiles = N // TILE
sums = cp.empty(tiles, cp.float32)
g = lambda name: mod.get_function(name)
for name, tile in (("p0_ours16", 4096), ("p0_vec4", 4096), ("p0_vec8", 8192)):
    nt = N // tile
    s = cp.empty(nt, cp.float32)
    t = bench(lambda: g(name)((nt,), (256,), (x, s, u64)))
    ok = bool(cp.allclose(s, x.reshape(nt, tile).sum(axis=1), atol=1e-2))
    print(f"{name:12s} {t * 1e6:7.0f} us  {4 * N / t / 1e12:5.2f} TB/s  {'ok' if ok else 'WRONG'}")
g("p0_vec4")((tiles,), (256,), (x, sums, u64))
scanned = cp.cumsum(sums)
t_small = bench(lambda: cp.cumsum(sums))
print(f"scan of {tiles} totals (cupy.cumsum) {t_small * 1e6:.0f} us")
for name in ("p1_ours16", "p1_shfl16", "p1_direct16", "p1_vsmem16"):
    y.fill(-7)
    g(name)((tiles,), (256,), (x, y, scanned, u64))
    err = float(cp.max(cp.abs(y.astype(cp.float64) - want)))
    t = bench(lambda: g(name)((tiles,), (256,), (x, y, scanned, u64)))
    print(f"{name:12s} {t * 1e6:7.0f} us  {8 * N / t / 1e12:5.2f} TB/s  max err {err:.3g}")
t = bench(lambda: cp.cumsum(x))
print(f"{'cupy':12s} {t * 1e6:7.0f} us")
tx = torch.as_tensor(x, device="cuda")
t = bench(lambda: torch.cumsum(tx, 0))
print(f"{'torch':12s} {t * 1e6:7.0f} us")
if ig is not None:
    xi = ig.asarray(cp.asnumpy(x))
    t = bench(lambda: ig.cumsum(xi))
    print(f"{'ingot':12s} {t * 1e6:7.0f} us")
