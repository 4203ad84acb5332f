"""Checked mode's cost: the same kernels compiled with and without ``checked=True``.

    python benches/bench_checked.py [--device cpu|cuda] [--reps 20]

Prints a table of the median time per launch (``kernel.time``, device time on GPUs) and the
checked/unchecked ratio. Results are recorded in ``docs/design/checked-mode.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ingot

KERNELS = """
#include <metal_stdlib>
using namespace metal;

kernel void saxpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + y[i];
}

kernel void blur(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                 constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (int k = -8; k <= 8; ++k) {
        int j = clamp(int(i) + k, 0, int(n) - 1);
        acc += x[j];
    }
    y[i] = acc * (1.0f / 17.0f);
}

kernel void gather(device const float* x [[buffer(0)]], device const uint* idx [[buffer(1)]],
                   device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = x[idx[i]];
}

kernel void matmul(device const float* A [[buffer(0)]], device const float* B [[buffer(1)]],
                   device float* C [[buffer(2)]], constant uint& n [[buffer(3)]],
                   threadgroup float* ta [[threadgroup(0)]], threadgroup float* tb [[threadgroup(1)]],
                   uint2 g [[thread_position_in_grid]], uint2 l [[thread_position_in_threadgroup]]) {
    float acc = 0.0f;
    for (uint t = 0; t < n; t += 16) {
        ta[l.y * 16 + l.x] = A[g.y * n + t + l.x];
        tb[l.y * 16 + l.x] = B[(t + l.y) * n + g.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < 16; ++k) acc += ta[l.y * 16 + k] * tb[k * 16 + l.x];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    C[g.y * n + g.x] = acc;
}
"""


def cases(device, rng):
    n = 1 << 22
    x = ingot.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    y = ingot.asarray(rng.standard_normal(n).astype(np.float32), device=device)
    yield "saxpy 4M (memory-bound)", "saxpy", (x, y, 2.0), dict(grid=(n,))
    m = 1 << 20
    xb = ingot.asarray(rng.standard_normal(m).astype(np.float32), device=device)
    yb = ingot.asarray(np.zeros(m, np.float32), device=device)
    yield "blur 1M, 17 taps (loads in a loop)", "blur", (xb, yb, m), dict(grid=(m,))
    idx = ingot.asarray(rng.integers(0, m, m).astype(np.uint32), device=device)
    yield "gather 1M (indirect)", "gather", (xb, idx, yb), dict(grid=(m,))
    s = 256
    A = ingot.asarray(rng.standard_normal(s * s).astype(np.float32), device=device)
    B = ingot.asarray(rng.standard_normal(s * s).astype(np.float32), device=device)
    C = ingot.asarray(np.zeros(s * s, np.float32), device=device)
    yield (
        "matmul 256 (threadgroup memory, barriers)",
        "matmul",
        (A, B, C, s),
        dict(grid=(s, s), threadgroup=(16, 16), threadgroup_memory={0: 1024, 1: 1024}),
    )


def median_time(k, args, kw, reps):
    k(*args, **kw)
    ingot.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        k(*args, **kw)
        ingot.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    plain = ingot.compile(KERNELS, device=a.device)
    checked = ingot.compile(KERNELS, device=a.device, checked=True)
    print(f"device {ingot.Device(a.device)}; median of {a.reps} launches (wall time incl. sync)")
    print(f"| kernel | unchecked | checked | ratio |\n|---|---:|---:|---:|")
    for title, name, args, kw in cases(a.device, rng):
        t0 = median_time(plain[name], args, kw, a.reps)
        t1 = median_time(checked[name], args, kw, a.reps)
        print(f"| {title} | {t0 * 1e3:.3f} ms | {t1 * 1e3:.3f} ms | {t1 / t0:.2f}x |")


if __name__ == "__main__":
    main()
