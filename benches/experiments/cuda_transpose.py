"""Transpose-copy kernel shapes on CUDA (CuPy RawKernel), to choose `copy_transpose`'s shape.

Not a benchmark of ingot: it compares ways of writing a float32 transpose (tile size, work per
thread, index arithmetic, vector width) against a plain copy, CuPy, PyTorch and ingot's current
kernel in one run. Usage: INGOT_DEVICE=cuda python cuda_transpose.py [side]
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

SIDE = int(sys.argv[1]) if len(sys.argv) > 1 else 16384


# Waits for every library the variants use.
SYNC = sync_all(cp.cuda.Device().synchronize, torch.cuda.synchronize, ig.synchronize if ig is not None else None)


def bench(fn, reps=10, rounds=5):
    return timeit(fn, SYNC, reps=reps, rounds=rounds, warmup=1)


# Every kernel: out (C x R, row-major) = transpose of in (R x C, row-major).
SRC = r"""
// The textbook shape: 32x32 tile, 32x8 threads, 2-D grid, 32-bit indices.
extern "C" __global__ void t32(const float* in, float* out, int R, int C) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y0 = blockIdx.y * 32;
  for (int j = threadIdx.y; j < 32; j += 8) if (x < C && y0 + j < R) tile[j][threadIdx.x] = in[(long)(y0 + j) * C + x];
  __syncthreads();
  int ox = blockIdx.y * 32 + threadIdx.x, oy0 = blockIdx.x * 32;
  for (int j = threadIdx.y; j < 32; j += 8) if (ox < R && oy0 + j < C) out[(long)(oy0 + j) * R + ox] = tile[threadIdx.x][j];
}
// As ingot's: 1-D grid of blocks split by div/mod, 64-bit strides as parameters.
extern "C" __global__ void t32_lin(const float* in, float* out, long long R, long long C, long long s_r, long long s_c,
                                   long long d_r, long long d_c, unsigned gx) {
  __shared__ float tile[32][33];
  unsigned b = blockIdx.x, bx = b % gx, by = b / gx;
  unsigned lx = threadIdx.x % 32, ly = threadIdx.x / 32;
  unsigned long long r0 = (unsigned long long)by * 32, c0 = (unsigned long long)bx * 32;
  for (unsigned k = ly; k < 32; k += 8) {
    unsigned long long r = r0 + lx, c = c0 + k;
    if (r < R && c < C) tile[k][lx] = in[(long long)r * s_r + (long long)c * s_c];
  }
  __syncthreads();
  for (unsigned k = ly; k < 32; k += 8) {
    unsigned long long r = r0 + k, c = c0 + lx;
    if (r < R && c < C) out[(long long)r * d_r + (long long)c * d_c] = tile[lx][k];
  }
}
// 64x64 tile, 32x8 threads, each thread 16 elements.
extern "C" __global__ void t64(const float* in, float* out, int R, int C) {
  __shared__ float tile[64][65];
  int bx = blockIdx.x * 64, by = blockIdx.y * 64;
  for (int j = threadIdx.y; j < 64; j += 8)
    for (int i = threadIdx.x; i < 64; i += 32)
      if (bx + i < C && by + j < R) tile[j][i] = in[(long)(by + j) * C + bx + i];
  __syncthreads();
  for (int j = threadIdx.y; j < 64; j += 8)
    for (int i = threadIdx.x; i < 64; i += 32)
      if (by + i < R && bx + j < C) out[(long)(bx + j) * R + by + i] = tile[i][j];
}
// 64x64 tile, 32x8 threads, float2 along both fast axes.
extern "C" __global__ void t64v2(const float* in, float* out, int R, int C) {
  __shared__ float tile[64][65];
  int bx = blockIdx.x * 64, by = blockIdx.y * 64;
  bool full = bx + 64 <= C && by + 64 <= R;
  for (int j = threadIdx.y; j < 64; j += 8) {
    if (full) {
      float2 v = *(const float2*)&in[(long)(by + j) * C + bx + 2 * threadIdx.x];
      tile[j][2 * threadIdx.x] = v.x; tile[j][2 * threadIdx.x + 1] = v.y;
    } else {
      for (int i = 2 * threadIdx.x; i < 2 * threadIdx.x + 2; ++i)
        if (bx + i < C && by + j < R) tile[j][i] = in[(long)(by + j) * C + bx + i];
    }
  }
  __syncthreads();
  for (int j = threadIdx.y; j < 64; j += 8) {
    if (full) {
      float2 v = make_float2(tile[2 * threadIdx.x][j], tile[2 * threadIdx.x + 1][j]);
      *(float2*)&out[(long)(bx + j) * R + by + 2 * threadIdx.x] = v;
    } else {
      for (int i = 2 * threadIdx.x; i < 2 * threadIdx.x + 2; ++i)
        if (by + i < R && bx + j < C) out[(long)(bx + j) * R + by + i] = tile[i][j];
    }
  }
}
// 32x32 tile, 32x8 threads, each block loops over 4 tiles down the rows (fewer blocks).
extern "C" __global__ void t32x4(const float* in, float* out, int R, int C) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x;
  for (int t = 0; t < 4; ++t) {
    int y0 = (blockIdx.y * 4 + t) * 32;
    for (int j = threadIdx.y; j < 32; j += 8) if (x < C && y0 + j < R) tile[j][threadIdx.x] = in[(long)(y0 + j) * C + x];
    __syncthreads();
    int ox = y0 + threadIdx.x, oy0 = blockIdx.x * 32;
    for (int j = threadIdx.y; j < 32; j += 8) if (ox < R && oy0 + j < C) out[(long)(oy0 + j) * R + ox] = tile[threadIdx.x][j];
    __syncthreads();
  }
}
// 32x32 tile, 32x32 threads (one element per thread).
extern "C" __global__ void t32f(const float* in, float* out, int R, int C) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  if (x < C && y < R) tile[threadIdx.y][threadIdx.x] = in[(long)y * C + x];
  __syncthreads();
  int ox = blockIdx.y * 32 + threadIdx.x, oy = blockIdx.x * 32 + threadIdx.y;
  if (ox < R && oy < C) out[(long)oy * R + ox] = tile[threadIdx.x][threadIdx.y];
}
"""
mod = cp.RawModule(code=SRC, options=("-std=c++17",))
R = C = SIDE
x = cp.random.random((R, C), dtype=cp.float32)
want = cp.ascontiguousarray(x.T)
out = cp.empty((C, R), cp.float32)
nbytes = 2 * 4 * R * C
t_copy = bench(lambda: cp.copyto(out, want))
print(f"side {SIDE}: copy {nbytes / t_copy / 1e12:.2f} TB/s ({t_copy * 1e6:.0f} us)")


def run(name, launch):
    out.fill(-1)
    launch()
    ok = bool(cp.array_equal(out, want))
    t = bench(launch)
    print(f"{name:12s} {t * 1e6:8.0f} us  {nbytes / t / 1e12:5.2f} TB/s  {t_copy / t * 100:5.1f}% of copy  {'ok' if ok else 'WRONG'}")


i32 = np.int32
run("t32", lambda: mod.get_function("t32")(((C + 31) // 32, (R + 31) // 32), (32, 8), (x, out, i32(R), i32(C))))
gx = (R + 31) // 32
# t32_lin: its R is the source-fast axis: the source viewed as the C x R transpose of `x`.
run("t32_lin", lambda: mod.get_function("t32_lin")((gx * ((C + 31) // 32),), (256,),
    (x, out, np.int64(C), np.int64(R), np.int64(1), np.int64(C), np.int64(R), np.int64(1), np.uint32(gx))))
run("t64", lambda: mod.get_function("t64")(((C + 63) // 64, (R + 63) // 64), (32, 8), (x, out, i32(R), i32(C))))
run("t64v2", lambda: mod.get_function("t64v2")(((C + 63) // 64, (R + 63) // 64), (32, 8), (x, out, i32(R), i32(C))))
run("t32x4", lambda: mod.get_function("t32x4")(((C + 31) // 32, (R + 127) // 128), (32, 8), (x, out, i32(R), i32(C))))
run("t32f", lambda: mod.get_function("t32f")(((C + 31) // 32, (R + 31) // 32), (32, 32), (x, out, i32(R), i32(C))))
t = bench(lambda: x.T.copy())
print(f"{'cupy':12s} {t * 1e6:8.0f} us  {nbytes / t / 1e12:5.2f} TB/s  {t_copy / t * 100:5.1f}% of copy")
tx = torch.as_tensor(x, device="cuda")
t = bench(lambda: tx.t().contiguous())
print(f"{'torch':12s} {t * 1e6:8.0f} us  {nbytes / t / 1e12:5.2f} TB/s  {t_copy / t * 100:5.1f}% of copy")
if ig is not None:
    xi = ig.asarray(cp.asnumpy(x))
    t = bench(lambda: xi.T.copy())
    print(f"{'ingot':12s} {t * 1e6:8.0f} us  {nbytes / t / 1e12:5.2f} TB/s  {t_copy / t * 100:5.1f}% of copy")
