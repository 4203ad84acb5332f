"""A short tour of ingot on the default device (INGOT_DEVICE, else the best available).

Run: bash scripts/quickstart.sh   (or: python examples/quickstart.py with ingot installed)
"""
import time

import numpy as np

import ingot as ig

dev = ig.default_device()
print(f"ingot {ig.__version__}; devices: {ig.devices()}; default: {dev}")

# Arrays follow the Python array API: creation, broadcasting, promotion, reductions.
rng = np.random.default_rng()
host = rng.standard_normal((1000, 1000)).astype(np.float32)
a = ig.asarray(host)  # zero-copy on the CPU, one copy to a GPU
b = ig.exp(a) * 0.5 + ig.sin(a[::-1, :])  # views (negative steps) need no copy
col_mean = ig.mean(b, axis=0)
print("exp/sin/mean over 1e6 elements:", float(ig.sum(col_mean)), "(NumPy:",
      float(np.mean(np.exp(host) * 0.5 + np.sin(host[::-1, :]), axis=0).sum()), ")")

# Matrix products go to cuBLAS on CUDA, gemm on the CPU.
c = a @ a.T
ref = host.astype(np.float64) @ host.T.astype(np.float64)
err = np.linalg.norm(np.asarray(c) - ref) / np.linalg.norm(ref)
print(f"matmul 1000x1000 float32: relative error vs float64 NumPy {err:.1e}")

# Your own Metal Shading Language kernel, unchanged on every device.
lib = ig.compile("""
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(const device float *x [[buffer(0)]],
                  device float *y [[buffer(1)]],
                  constant float &alpha [[buffer(2)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = alpha * x[i] + y[i];
}
""")
saxpy = lib["saxpy"]
x = ig.asarray(rng.standard_normal(1_000_003).astype(np.float32))
y0 = rng.standard_normal(1_000_003).astype(np.float32)
y = ig.asarray(y0.copy())
t = time.perf_counter()
saxpy(x.size, x, y, 2.0)  # metalcompute's form: exactly x.size threads
ig.synchronize()
dt = time.perf_counter() - t
ok = np.allclose(np.asarray(y), 2.0 * np.asarray(x) + y0, rtol=1e-6, atol=1e-6)
print(f"saxpy kernel on {dev}: {'matches NumPy' if ok else 'MISMATCH'} ({dt * 1e3:.2f} ms incl. launch)")
print("parameters:", [(p.name, p.kind) for p in saxpy.parameters])
