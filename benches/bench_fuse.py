"""Fusion and user kernels (issue 15) side by side, in one run.

Usage:
    python benches/bench_fuse.py                          # CPU: ingot vs NumPy, n = 10^7
    INGOT_DEVICE=cuda python benches/bench_fuse.py        # CUDA: vs cupy.fuse, torch.compile, n = 2^28
    ... [--n N] [--quick] [--out DIR]

Cases: fused chains (``sqrt(a*a + b*b)``, a tanh-GELU, one with a broadcast operand), a fused
reduction (``sum((a - b)**2)``), built-in var/std (one pass), row softmax/logsumexp (``ingot.nn``),
``elementwise_kernel``, a translated user MSL kernel (metalcompute's ``C[id] = A[id] * B[id]``)
against the same kernel in CUDA C launched by CuPy's RawKernel, the warm-call overhead of a
fused function against one built-in op, and (CPU) small matmuls against NumPy.

For each case: median seconds of each contender, the ratio best-peer / ingot (above 1.0: ingot
is faster), and on GPUs ingot's bandwidth as a fraction of the device's measured copy bandwidth.
Results are printed and written to DIR/fuse-<device>-<date>.json.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import ingot as ig  # noqa: E402
from ingot import nn  # noqa: E402
from _timing import timeit  # noqa: E402

try:
    import cupy as cp
except Exception:  # pragma: no cover - optional
    cp = None
try:
    import torch
except Exception:  # pragma: no cover - optional
    torch = None

C0 = 0.7978845608028654


def gelu_ig(x):
    return 0.5 * x * (1.0 + ig.tanh(C0 * (x + 0.044715 * x * x * x)))


def gelu_np(x):
    return 0.5 * x * (1.0 + np.tanh(C0 * (x + 0.044715 * x * x * x)))


def hypot_ig(a, b):
    return ig.sqrt(a * a + b * b)


def bcast_ig(x, b):
    return ig.exp(x - b) * b + 1.0


def sqdiff_ig(a, b):
    return ig.sum((a - b) * (a - b))


MUL_MSL = """
#include <metal_stdlib>
using namespace metal;
kernel void mul(const device float* A [[buffer(0)]], const device float* B [[buffer(1)]],
                device float* C [[buffer(2)]], uint id [[thread_position_in_grid]]) {
  C[id] = A[id] * B[id];
}
"""
MUL_CUDA = r"""
extern "C" __global__ void mul(const float* A, const float* B, float* C, unsigned int n) {
  unsigned int id = blockIdx.x * blockDim.x + threadIdx.x;
  if (id < n) C[id] = A[id] * B[id];
}
"""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=0, help="elements (default 2^28 on GPUs, 10^7 on the CPU)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = ap.parse_args()
    dev = ig.default_device()
    gpu = not str(dev).startswith("cpu")
    cuda = str(dev).startswith("cuda")
    n = args.n or ((1 << 28) if gpu else 10**7)
    if args.quick:
        n //= 16
    rng = np.random.default_rng(0)
    rows = []
    sync_ig = ig.synchronize
    sync_cp = (lambda: cp.cuda.Device().synchronize()) if (cuda and cp is not None) else None
    sync_th = (lambda: torch.cuda.synchronize()) if (cuda and torch is not None and torch.cuda.is_available()) else None
    reps = 10 if gpu else 3

    def t(fn, sync):
        return timeit(fn, sync, reps=reps, rounds=5, warmup=2)

    copy_bw = None
    an = rng.standard_normal(n, dtype=np.float32)
    bn = rng.standard_normal(n, dtype=np.float32)
    a, b = ig.asarray(an, device=dev), ig.asarray(bn, device=dev)
    if gpu:
        tc = t(lambda: a.astype(ig.float32, copy=True), sync_ig)
        copy_bw = 2 * 4 * n / tc

    def record(case, nbytes, t_ig, peers, note=""):
        peers = {k: v for k, v in peers.items() if v is not None}
        best = min(peers.values()) if peers else None
        row = {"case": case, "ingot_s": t_ig, "peers_s": peers,
               "ratio": (best / t_ig) if best else None, "note": note}
        if copy_bw and nbytes:
            row["bw_fraction"] = nbytes / t_ig / copy_bw
        rows.append(row)
        ps = " ".join(f"{k}={v * 1e3:.3f}ms" for k, v in peers.items())
        r = f"{row['ratio']:.2f}x" if row["ratio"] else "-"
        bw = f" bw={row['bw_fraction']:.2f}" if "bw_fraction" in row else ""
        print(f"{case:<34} ingot={t_ig * 1e3:.3f}ms {ps} ratio={r}{bw} {note}", flush=True)

    def torch_compiled(fn):
        if sync_th is None:
            return None
        try:
            return torch.compile(fn)
        except Exception:
            return None

    # ---- fused elementwise chains
    cases = [
        ("sqrt(a*a+b*b) f32", hypot_ig, lambda x, y: np.sqrt(x * x + y * y), (a, b), (an, bn), 12 * n),
        ("tanh-GELU f32", lambda x, _y: gelu_ig(x), lambda x, _y: gelu_np(x), (a, b), (an, bn), 8 * n),
    ]
    cols = 4096
    nrows = n // cols
    xb, xbn = a[: nrows * cols].reshape((nrows, cols)), an[: nrows * cols].reshape((nrows, cols))
    vb = rng.standard_normal(cols, dtype=np.float32)
    cases.append(("exp(x - b) * b + 1 (b: row) f32", bcast_ig, lambda x, y: np.exp(x - y) * y + 1.0,
                  (xb, ig.asarray(vb, device=dev)), (xbn, vb), 8 * n))
    for name, f, fnp, iargs, nargs, nbytes in cases:
        fused = ig.fuse(f)
        fused(*iargs)
        assert fused.is_fused(*iargs), name
        t_fused = t(lambda: fused(*iargs), sync_ig)
        t_unfused = t(lambda: f(*iargs), sync_ig)
        peers = {}
        if not gpu:
            peers["numpy"] = t(lambda: fnp(*nargs), lambda: None)
        else:
            if sync_cp is not None:
                cargs = [cp.asarray(x) for x in nargs]
                def cupy_case(x, y, name=name):
                    return fnp_cp(name, x, y)

                # cupy.fuse names the kernel after the function: a lambda is not a valid name.
                cf = cp.fuse(cupy_case)
                peers["cupy.fuse"] = t(lambda: cf(*cargs), sync_cp)
            if sync_th is not None:
                targs = [torch.from_numpy(np.ascontiguousarray(x)).cuda() for x in nargs]
                tf = torch_compiled(lambda x, y: fnp_th(name, x, y))
                if tf is not None:
                    tf(*targs)
                    peers["torch.compile"] = t(lambda: tf(*targs), sync_th)
        record(name, nbytes, t_fused, peers, f"(ingot unfused {t_unfused * 1e3:.3f}ms)")

    # ---- a fused reduction
    fr = ig.fuse(sqdiff_ig)
    fr(a, b)
    peers = {}
    if not gpu:
        peers["numpy"] = t(lambda: np.sum((an - bn) * (an - bn)), lambda: None)
    elif sync_th is not None:
        ta, tb = torch.from_numpy(an).cuda(), torch.from_numpy(bn).cuda()
        tf = torch_compiled(lambda x, y: torch.sum((x - y) * (x - y)))
        if tf is not None:
            tf(ta, tb)
            peers["torch.compile"] = t(lambda: tf(ta, tb), sync_th)
    record("sum((a-b)^2) fused f32", 8 * n, t(lambda: fr(a, b), sync_ig), peers)

    # ---- var / std (built-in, one pass)
    peers = {}
    if not gpu:
        peers["numpy"] = t(lambda: np.var(an), lambda: None)
    elif sync_th is not None:
        ta = torch.from_numpy(an).cuda()
        peers["torch"] = t(lambda: torch.var(ta, unbiased=False), sync_th)
    record("var f32 (whole array)", 4 * n, t(lambda: ig.var(a), sync_ig), peers)
    peers = {}
    if not gpu:
        peers["numpy"] = t(lambda: np.std(xbn, axis=1), lambda: None)
    elif sync_th is not None:
        tx = torch.from_numpy(np.ascontiguousarray(xbn)).cuda()
        peers["torch"] = t(lambda: torch.std(tx, dim=1, unbiased=False), sync_th)
    record("std rows f32", 4 * n, t(lambda: ig.std(xb, axis=1), sync_ig), peers)

    # ---- softmax / logsumexp over rows
    side = 8192 if gpu else 2048
    sn = rng.standard_normal((side, side), dtype=np.float32)
    s = ig.asarray(sn, device=dev)
    peers = {}
    if not gpu:
        def np_softmax(v):
            e = np.exp(v - v.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)
        peers["numpy"] = t(lambda: np_softmax(sn), lambda: None)
    elif sync_th is not None:
        ts = torch.from_numpy(sn).cuda()
        peers["torch.softmax"] = t(lambda: torch.softmax(ts, dim=1), sync_th)
    record(f"softmax rows {side}x{side} f32", 8 * side * side, t(lambda: nn.softmax(s, axis=1), sync_ig), peers)
    peers = {}
    if gpu and sync_th is not None:
        peers["torch.logsumexp"] = t(lambda: torch.logsumexp(ts, dim=1), sync_th)
    record(f"logsumexp rows {side}x{side} f32", 4 * side * side,
           t(lambda: nn.logsumexp(s, axis=1), sync_ig), peers)

    # ---- user kernels
    ek = ig.elementwise_kernel("T x, T y", "T z", "z = sqrt(x * x + y * y);", "hyp")
    ek(a, b)
    peers = {}
    if not gpu:
        peers["numpy"] = t(lambda: np.sqrt(an * an + bn * bn), lambda: None)
    elif sync_cp is not None:
        cek = cp.ElementwiseKernel("T x, T y", "T z", "z = sqrt(x * x + y * y)", "hyp")
        ca, cb = cp.asarray(an), cp.asarray(bn)
        peers["cupy.ElementwiseKernel"] = t(lambda: cek(ca, cb), sync_cp)
    record("elementwise_kernel hypot f32", 12 * n, t(lambda: ek(a, b), sync_ig), peers)

    lib = ig.compile(MUL_MSL, device=dev)
    mul = lib["mul"]
    c = ig.empty((n,), dtype=ig.float32, device=dev)
    peers = {}
    if not gpu:
        peers["numpy"] = t(lambda: np.multiply(an, bn), lambda: None)
    elif sync_cp is not None:
        raw = cp.RawKernel(MUL_CUDA, "mul")
        ca, cb, cc = cp.asarray(an), cp.asarray(bn), cp.empty(n, dtype=cp.float32)
        grid = ((n + 255) // 256,)
        peers["cupy.RawKernel (CUDA C)"] = t(lambda: raw(grid, (256,), (ca, cb, cc, np.uint32(n))), sync_cp)
    record("user MSL C[id]=A[id]*B[id]", 12 * n, t(lambda: mul(n, a, b, c), sync_ig), peers)

    # ---- warm-call overhead: a fused function against one built-in op, small arrays
    sa = ig.asarray(rng.standard_normal(1000, dtype=np.float32), device=dev)
    sb = ig.asarray(rng.standard_normal(1000, dtype=np.float32), device=dev)
    fo = ig.fuse(lambda x, y: x * y + x)
    fo(sa, sb)
    one = timeit(lambda: sa * sb, sync_ig, reps=2000, rounds=7, warmup=50)
    fused_t = timeit(lambda: fo(sa, sb), sync_ig, reps=2000, rounds=7, warmup=50)
    record("warm call: fused vs one op (1000)", 0, fused_t, {"one built-in op": one},
           "(target: ratio >= 0.67, i.e. fused <= 1.5x one op)")

    # ---- CPU matmul
    # Every ingot product first, NumPy's after: OpenBLAS's threads keep spinning for a while after
    # each of its calls, and ingot's threads timed between them ran up to 20x slower (512: 6.5 ms
    # interleaved, 0.26 ms alone, on 16 cores).
    if not gpu:
        mm = {}
        for m in (256, 512, 1024):
            xn_ = rng.standard_normal((m, m), dtype=np.float32)
            yn_ = rng.standard_normal((m, m), dtype=np.float32)
            xi, yi = ig.asarray(xn_), ig.asarray(yn_)
            mm[m] = (xn_, yn_, t(lambda: xi @ yi, sync_ig))
        for m, (xn_, yn_, t_ig) in mm.items():
            record(f"matmul {m} f32", 0, t_ig, {"numpy": t(lambda: xn_ @ yn_, lambda: None)})

    os.makedirs(args.out, exist_ok=True)
    name = str(dev).replace(":", "")
    path = os.path.join(args.out, f"fuse-{name}-{_dt.date.today().isoformat()}.json")
    meta = {"device": str(dev), "n": n, "host": platform.node(), "copy_bw": copy_bw}
    if cuda and torch is not None and torch.cuda.is_available():
        meta["gpu"] = torch.cuda.get_device_name()
    with open(path, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print("wrote", path)
    return 0


def fnp_cp(name, x, y):
    if name.startswith("sqrt"):
        return cp.sqrt(x * x + y * y)
    if name.startswith("tanh"):
        return 0.5 * x * (1.0 + cp.tanh(C0 * (x + 0.044715 * x * x * x)))
    return cp.exp(x - y) * y + 1.0


def fnp_th(name, x, y):
    if name.startswith("sqrt"):
        return torch.sqrt(x * x + y * y)
    if name.startswith("tanh"):
        return 0.5 * x * (1.0 + torch.tanh(C0 * (x + 0.044715 * x * x * x)))
    return torch.exp(x - y) * y + 1.0


if __name__ == "__main__":
    sys.exit(main())
