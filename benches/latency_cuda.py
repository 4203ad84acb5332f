"""Host-side latency breakdown on CUDA: where the microseconds of a small launch go.

Run on a machine with an NVIDIA GPU: `INGOT_DEVICE=cuda python benches/latency_cuda.py`.
Each line is the median over rounds of (loop of N calls + synchronize) / N, and for "enqueue"
lines the host time of 300 calls without waiting. CuPy and PyTorch run the same shapes in the
same process when installed. Prints a table; `--json PATH` saves it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import ingot as ig
from _timing import timeit

try:
    import cupy as cp
except Exception:  # pragma: no cover - optional
    cp = None
try:
    import torch
except Exception:  # pragma: no cover - optional
    torch = None


def per_call(fn, sync, reps=2000, rounds=7):
    return timeit(fn, sync, reps=reps, rounds=rounds, warmup=200)


def enqueue(fn, sync, reps=300, rounds=7):
    times = []
    for _ in range(rounds):
        sync()
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        times.append((time.perf_counter() - t0) / reps)
    sync()
    return statistics.median(times)


def ctypes_launch(raw, cx):
    """The driver's launch called from Python through ctypes (CuPy's compiled function): the
    floor a Python-level launch can reach, interpreter included. None when unavailable."""
    import ctypes

    try:
        lib = ctypes.CDLL("libcuda.so.1")
        func = ctypes.c_void_p(raw.kernel.ptr)
        stream = ctypes.c_void_p(cp.cuda.get_current_stream().ptr)
    except Exception as e:  # pragma: no cover - depends on the CuPy build
        print("ctypes floor unavailable:", e)
        return None
    x_ptr = ctypes.c_uint64(cx.data.ptr)
    s = ctypes.c_float(1.0)
    params = (ctypes.c_void_p * 2)(ctypes.addressof(x_ptr), ctypes.addressof(s))
    launch = lib.cuLaunchKernel
    u = ctypes.c_uint
    launch.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    launch.restype = ctypes.c_int
    rc = launch(func, 1, 1, 1, 32, 1, 1, 0, stream, params, None)
    if rc != 0:
        print("ctypes floor unavailable: cuLaunchKernel returned", rc)
        return None
    return lambda: launch(func, 1, 1, 1, 32, 1, 1, 0, stream, params, None)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = {}

    def rec(name, t):
        rows[name] = t
        print(f"{name:<44} {t * 1e6:8.2f} us")

    print("device:", ig.default_device())
    sync = ig.synchronize
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float *x [[buffer(0)]], constant float &s [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) { x[i] = x[i] * s; }
"""
    kern = ig.compile(src)["scale"]
    xs = ig.asarray(np.ones(32, np.float32))
    a, b = ig.asarray(np.ones(1, np.float32)), ig.asarray(np.ones(1, np.float32))
    rec("ingot: xs.size (a PyO3 getter)", per_call(lambda: xs.size, lambda: None, reps=20000))
    rec("ingot: kern(32, xs, 1.0)", per_call(lambda: kern(32, xs, 1.0), sync))
    rec("ingot: kern(xs, 1.0, grid=32)", per_call(lambda: kern(xs, 1.0, grid=32), sync))
    rec("ingot: enqueue kern(32, xs, 1.0)", enqueue(lambda: kern(32, xs, 1.0), sync))
    rec("ingot: a + b (1 element)", per_call(lambda: a + b, sync))
    rec("ingot: enqueue a + b", enqueue(lambda: a + b, sync))
    rec("ingot: synchronize() when idle", per_call(sync, lambda: None, reps=5000))
    if cp is not None:
        raw = cp.RawKernel(
            'extern "C" __global__ void k(float* x, float s){ x[threadIdx.x] *= s; }', "k"
        )
        cx = cp.ones(32, cp.float32)
        c1 = cp.ones(1, cp.float32)
        csync = cp.cuda.Device().synchronize
        s = np.float32(1.0)
        rec("cupy: RawKernel launch", per_call(lambda: raw((1,), (32,), (cx, s)), csync))
        rec("cupy: enqueue RawKernel", enqueue(lambda: raw((1,), (32,), (cx, s)), csync))
        rec("cupy: c1 + c1", per_call(lambda: c1 + c1, csync))
        floor = ctypes_launch(raw, cx)
        if floor is not None:
            rec("ctypes: bare cuLaunchKernel from Python", per_call(floor, csync))
            rec("ctypes: enqueue bare cuLaunchKernel", enqueue(floor, csync))
    if torch is not None:
        t1 = torch.ones(1, device="cuda")
        tsync = torch.cuda.synchronize
        rec("torch: t1 + t1", per_call(lambda: t1 + t1, tsync))
        rec("torch: enqueue t1 + t1", enqueue(lambda: t1 + t1, tsync))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
