"""ingot on CUDA side by side with CuPy and PyTorch, in one run on one GPU.

Usage: INGOT_DEVICE=cuda python benches/bench_cuda.py [--quick] [--linalg-only | --no-linalg] [--out DIR]

For each case it prints the median time of ingot, CuPy and PyTorch, the ratio
(faster of CuPy/PyTorch time) / (ingot time) -- above 1.0 means ingot is faster -- and, for
memory-bound cases, ingot's bandwidth as a fraction of the measured device copy bandwidth.
Results go to benches/results/cuda-<device>-<date>.json and .md.

Timing: every framework's op is run `reps` times back to back after a warm-up, then the device
is synchronised; the median of `rounds` such blocks divided by `reps` is reported. Inputs are
random, never zeros; several input sets rotate where caches could flatter small sizes.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import sys
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


def _sync_ingot():
    ig.synchronize()


def _sync_cupy():
    cp.cuda.Device().synchronize()


def _sync_torch():
    torch.cuda.synchronize()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="smaller sizes")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--linalg-only", action="store_true", help="only the linalg and random cases")
    ap.add_argument("--no-linalg", action="store_true", help="skip the linalg and random cases")
    ap.add_argument("--fft-only", action="store_true", help="only the fft cases")
    ap.add_argument("--only", default="", help="comma-separated groups: elementwise, sort, linalg, fft, latency")
    args = ap.parse_args()

    dev = ig.default_device()
    if "cuda" not in str(dev):
        print(f"default device is {dev}; set INGOT_DEVICE=cuda", file=sys.stderr)
        return 2
    rng = np.random.default_rng()
    n = 1 << (24 if args.quick else 28)
    side = 4096 if args.quick else 16384
    rows = []

    def record(case, nbytes, t_ig, t_cp, t_th, flops=None):
        best = min(t for t in (t_cp, t_th) if t is not None) if (t_cp or t_th) else None
        row = {
            "case": case,
            "ingot_s": t_ig,
            "cupy_s": t_cp,
            "torch_s": t_th,
            "ratio_vs_best": (best / t_ig) if (best and t_ig) else None,
            "bytes": nbytes,
            "flops": flops,
        }
        rows.append(row)
        fmt = lambda t: f"{t * 1e6:10.1f}us" if t is not None else "         -"
        extra = ""
        if nbytes and t_ig:
            extra = f"  {nbytes / t_ig / 1e12:6.2f} TB/s"
        if flops and t_ig:
            extra = f"  {flops / t_ig / 1e12:6.1f} TFLOP/s"
        ratio = f"{row['ratio_vs_best']:.2f}x" if row["ratio_vs_best"] else "-"
        print(f"{case:34s} ingot {fmt(t_ig)}  cupy {fmt(t_cp)}  torch {fmt(t_th)}  ratio {ratio:>6}{extra}", flush=True)

    groups = set(args.only.split(",")) if args.only else {"elementwise", "sort", "linalg", "fft", "latency"}
    if args.linalg_only:
        groups = {"linalg"}
    if args.fft_only:
        groups = {"fft"}
    if args.no_linalg:
        groups.discard("linalg")
    if "elementwise" not in groups:
        n = 0
    copy_bw = None
    if "elementwise" in groups:
        copy_bw = elementwise_and_matmul(args, rng, n, side, record)
    if "sort" in groups:
        sort_and_select(rng, record)
    if "linalg" in groups:
        linalg_and_random(args, rng, record)
    if "fft" in groups:
        fft_cases(args, rng, record)
    if "latency" in groups:
        latency_cases(record)
    write(args, dev, n, copy_bw, rows)
    return 0


def elementwise_and_matmul(args, rng, n, side, record):
    """Elementwise ops, reductions, copies and matmul; returns the measured copy bandwidth."""
    # Copy bandwidth: the ceiling for memory-bound ops (bytes read + written).
    host = rng.random(n, dtype=np.float32) + 0.5
    th_a = torch.from_numpy(host).cuda() if torch else None
    th_b = torch.from_numpy(rng.random(n, dtype=np.float32) + 0.5).cuda() if torch else None
    copy_bw = None
    if torch:
        dst = torch.empty_like(th_a)
        t = timeit(lambda: dst.copy_(th_a), _sync_torch)
        copy_bw = 2 * n * 4 / t
        print(f"device copy bandwidth (torch copy_): {copy_bw / 1e12:.2f} TB/s")
        del dst
    a = ig.asarray(host)
    b = ig.asarray(rng.random(n, dtype=np.float32) + 0.5)
    ca = cp.asarray(host) if cp else None
    cb = cp.asarray(np.asarray(b)) if cp else None
    cond_h = rng.random(n) < 0.5
    cond = ig.asarray(cond_h)
    c_cond = cp.asarray(cond_h) if cp else None
    t_cond = torch.from_numpy(cond_h).cuda() if torch else None

    cases = [
        ("add f32", 12 * n, lambda: a + b, lambda: ca + cb, lambda: th_a + th_b),
        ("multiply f32", 12 * n, lambda: a * b, lambda: ca * cb, lambda: th_a * th_b),
        ("exp f32", 8 * n, lambda: ig.exp(a), lambda: cp.exp(ca), lambda: torch.exp(th_a)),
        ("sin f32", 8 * n, lambda: ig.sin(a), lambda: cp.sin(ca), lambda: torch.sin(th_a)),
        ("where f32", 13 * n, lambda: ig.where(cond, a, b), lambda: cp.where(c_cond, ca, cb),
         lambda: torch.where(t_cond, th_a, th_b)),
        ("astype f32->f16", 6 * n, lambda: a.astype(ig.float16), lambda: ca.astype(cp.float16),
         lambda: th_a.to(torch.float16)),
        ("sum f32 (all)", 4 * n, lambda: ig.sum(a), lambda: cp.sum(ca), lambda: torch.sum(th_a)),
        ("max f32 (all)", 4 * n, lambda: ig.max(a), lambda: cp.max(ca), lambda: torch.max(th_a)),
        ("argmax f32 (all)", 4 * n, lambda: ig.argmax(a), lambda: cp.argmax(ca), lambda: torch.argmax(th_a)),
        # Not targets of the issue, reported so that slow paths show.
        ("cumsum f32 (1-D)", 8 * n, lambda: ig.cumsum(a), lambda: cp.cumsum(ca),
         lambda: torch.cumsum(th_a, 0)),
    ]
    for name, nbytes, f_ig, f_cp, f_th in cases:
        try:
            t_ig = timeit(f_ig, _sync_ingot)
        except Exception as e:  # report and go on: one missing op must not hide the rest
            print(f"{name}: ingot failed: {type(e).__name__}: {e}")
            t_ig = None
        t_cp = timeit(f_cp, _sync_cupy) if cp else None
        t_th = timeit(f_th, _sync_torch) if torch else None
        record(name, nbytes, t_ig, t_cp, t_th)
    del a, b, ca, cb, th_a, th_b, cond, c_cond, t_cond

    m_host = rng.random((side, side), dtype=np.float32) + 0.5
    m = ig.asarray(m_host)
    cm = cp.asarray(m_host) if cp else None
    tm = torch.from_numpy(m_host).cuda() if torch else None
    for name, axis in (("sum rows (axis=1)", 1), ("sum columns (axis=0)", 0)):
        nbytes = 4 * side * side
        try:
            t_ig = timeit(lambda: ig.sum(m, axis=axis), _sync_ingot)
        except Exception as e:
            print(f"{name}: ingot failed: {type(e).__name__}: {e}")
            t_ig = None
        t_cp = timeit(lambda: cp.sum(cm, axis=axis), _sync_cupy) if cp else None
        t_th = timeit(lambda: torch.sum(tm, dim=axis), _sync_torch) if torch else None
        record(f"{name} {side}x{side}", nbytes, t_ig, t_cp, t_th)
    # A transposed copy (not a target): the strided path read one element per 32-byte sector.
    try:
        t_ig = timeit(lambda: m.T.copy(), _sync_ingot)
    except Exception as e:
        print(f"transpose copy: ingot failed: {type(e).__name__}: {e}")
        t_ig = None
    t_cp = timeit(lambda: cm.T.copy(), _sync_cupy) if cp else None
    t_th = timeit(lambda: tm.t().contiguous(), _sync_torch) if torch else None
    record(f"transpose copy {side}x{side}", 8 * side * side, t_ig, t_cp, t_th)
    # An elementwise op with a transposed operand (not a target).
    m2_host = rng.random((side, side), dtype=np.float32) + 0.5
    m2 = ig.asarray(m2_host)
    cm2 = cp.asarray(m2_host) if cp else None
    tm2 = torch.from_numpy(m2_host).cuda() if torch else None
    try:
        t_ig = timeit(lambda: m + m2.T, _sync_ingot)
    except Exception as e:
        print(f"add transposed: ingot failed: {type(e).__name__}: {e}")
        t_ig = None
    t_cp = timeit(lambda: cm + cm2.T, _sync_cupy) if cp else None
    t_th = timeit(lambda: tm + tm2.t(), _sync_torch) if torch else None
    record(f"add a + b.T {side}x{side}", 12 * side * side, t_ig, t_cp, t_th)
    del m, cm, tm, m2, cm2, tm2

    for size in ((2048, 4096) if args.quick else (4096, 8192)):
        for dt_name in ("float32", "float16"):
            x_h = (rng.random((size, size), dtype=np.float32) - 0.5).astype(dt_name)
            y_h = (rng.random((size, size), dtype=np.float32) - 0.5).astype(dt_name)
            x, y = ig.asarray(x_h), ig.asarray(y_h)
            tx = torch.from_numpy(x_h).cuda() if torch else None
            ty = torch.from_numpy(y_h).cuda() if torch else None
            cx = cp.asarray(x_h) if cp else None
            cy = cp.asarray(y_h) if cp else None
            flops = 2 * size ** 3
            try:
                t_ig = timeit(lambda: x @ y, _sync_ingot, reps=5, rounds=3)
            except Exception as e:
                print(f"matmul: ingot failed: {type(e).__name__}: {e}")
                t_ig = None
            t_cp = timeit(lambda: cx @ cy, _sync_cupy, reps=5, rounds=3) if cp else None
            t_th = timeit(lambda: tx @ ty, _sync_torch, reps=5, rounds=3) if torch else None
            record(f"matmul {size} {dt_name}", None, t_ig, t_cp, t_th, flops=flops)
            del x, y, tx, ty, cx, cy
    return copy_bw


def sort_and_select(rng, record):
    """Sorting and selection (issue #14: sort/argsort 2^24 float32 and unique >= 0.9x the faster
    of CuPy and PyTorch): 2^24 float32 whatever --quick says."""
    ns = 1 << 24
    s_host = rng.standard_normal(ns).astype(np.float32)
    # unique: 2^24 values drawn from 2^20 distinct ones.
    u_host = rng.integers(0, 1 << 20, ns).astype(np.float32)
    mask_h = rng.random(ns) < 0.5
    idx_h = rng.integers(0, ns, ns)
    sa, ua, sm, si = ig.asarray(s_host), ig.asarray(u_host), ig.asarray(mask_h), ig.asarray(idx_h)
    cs, cu, cmk, ci = ((cp.asarray(s_host), cp.asarray(u_host), cp.asarray(mask_h), cp.asarray(idx_h))
                       if cp else (None,) * 4)
    ts, tu, tmk, ti = ((torch.from_numpy(s_host).cuda(), torch.from_numpy(u_host).cuda(),
                        torch.from_numpy(mask_h).cuda(), torch.from_numpy(idx_h).cuda())
                       if torch else (None,) * 4)
    sa_sorted = ig.sort(sa[: 1 << 20])
    cs_sorted = cp.sort(cs[: 1 << 20]) if cp else None
    ts_sorted = torch.sort(ts[: 1 << 20])[0] if torch else None
    sort_cases = [
        ("sort f32 2^24", lambda: ig.sort(sa), lambda: cp.sort(cs), lambda: torch.sort(ts)[0]),
        ("argsort f32 2^24 (stable)", lambda: ig.argsort(sa), lambda: cp.argsort(cs),
         lambda: torch.argsort(ts, stable=True)),
        ("sort f32 2^24 descending", lambda: ig.sort(sa, descending=True), None,
         lambda: torch.sort(ts, descending=True)[0]),
        ("unique_values f32 2^24 (2^20 values)", lambda: ig.unique_values(ua), lambda: cp.unique(cu),
         lambda: torch.unique(tu)),
        ("unique_counts f32 2^24", lambda: ig.unique_counts(ua), lambda: cp.unique(cu, return_counts=True),
         lambda: torch.unique(tu, return_counts=True)),
        ("unique_inverse f32 2^24", lambda: ig.unique_inverse(ua), lambda: cp.unique(cu, return_inverse=True),
         lambda: torch.unique(tu, return_inverse=True)),
        # Not targets of the issue, reported so that slow paths show.
        ("nonzero (1-D, half set) 2^24", lambda: ig.nonzero(sm), lambda: cp.nonzero(cmk),
         lambda: torch.nonzero(tmk, as_tuple=True)),
        ("x[mask] f32 2^24", lambda: sa[sm], lambda: cs[cmk], lambda: ts[tmk]),
        ("take f32 2^24 (random)", lambda: ig.take(sa, si), lambda: cp.take(cs, ci), lambda: ts[ti]),
        ("searchsorted 2^24 in 2^20", lambda: ig.searchsorted(sa_sorted, ua),
         lambda: cp.searchsorted(cs_sorted, cu), lambda: torch.searchsorted(ts_sorted, tu)),
    ]
    for name, f_ig, f_cp, f_th in sort_cases:
        try:
            t_ig = timeit(f_ig, _sync_ingot)
        except Exception as e:
            print(f"{name}: ingot failed: {type(e).__name__}: {e}")
            t_ig = None
        t_cp = timeit(f_cp, _sync_cupy) if (cp and f_cp) else None
        t_th = timeit(f_th, _sync_torch) if (torch and f_th) else None
        record(name, None, t_ig, t_cp, t_th)
    del sa, ua, sm, si, cs, cu, cmk, ci, ts, tu, tmk, ti, sa_sorted, cs_sorted, ts_sorted


def fft_cases(args, rng, record):
    """fft of 2^24 complex64 values (issue #14: >= 0.9x CuPy), its inverse, and rfft of 2^24
    float32 values."""
    n = 1 << (20 if args.quick else 24)
    k = n.bit_length() - 1
    z_h = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    r_h = rng.standard_normal(n).astype(np.float32)
    z, r = ig.asarray(z_h), ig.asarray(r_h)
    cz, cr = (cp.asarray(z_h), cp.asarray(r_h)) if cp else (None, None)
    tz, tr = (torch.from_numpy(z_h).cuda(), torch.from_numpy(r_h).cuda()) if torch else (None, None)
    for name, nbytes, f_ig, f_cp, f_th in (
        (f"fft 2^{k} complex64", 16 * n, lambda: ig.fft.fft(z), lambda: cp.fft.fft(cz),
         lambda: torch.fft.fft(tz)),
        (f"ifft 2^{k} complex64", 16 * n, lambda: ig.fft.ifft(z), lambda: cp.fft.ifft(cz),
         lambda: torch.fft.ifft(tz)),
        (f"rfft 2^{k} float32", 8 * n, lambda: ig.fft.rfft(r), lambda: cp.fft.rfft(cr),
         lambda: torch.fft.rfft(tr)),
    ):
        t_ig = _try(f"{name} ingot", f_ig, _sync_ingot)
        t_cp = _try(f"{name} cupy", f_cp, _sync_cupy) if cp else None
        t_th = _try(f"{name} torch", f_th, _sync_torch) if torch else None
        record(name, nbytes, t_ig, t_cp, t_th)


def _try(label, fn, sync, **kw):
    """`timeit`, or None (printed) when the library fails: one failure must not hide the rest."""
    try:
        return timeit(fn, sync, **kw)
    except Exception as e:  # noqa: BLE001 - reported
        print(f"  {label}: {type(e).__name__}: {e}")
        return None


def linalg_and_random(args, rng, record):
    """solve, qr and svd of 4096 x 4096 matrices (the issue's targets: >= 0.8x the faster of CuPy
    and PyTorch), eigh and cholesky, and the random generators."""
    size = 1024 if args.quick else 4096
    slow = dict(reps=1, rounds=3, warmup=1)
    for dt_name in ("float32", "float64"):
        a_h = rng.standard_normal((size, size)).astype(dt_name) + size ** 0.5 * np.eye(size, dtype=dt_name)
        b_h = rng.standard_normal((size, size)).astype(dt_name)
        spd_h = (a_h @ a_h.T).astype(dt_name)
        a, b, spd = ig.asarray(a_h), ig.asarray(b_h), ig.asarray(spd_h)
        ca, cb, cspd = (cp.asarray(a_h), cp.asarray(b_h), cp.asarray(spd_h)) if cp else (None,) * 3
        ta, tb, tspd = ((torch.from_numpy(a_h).cuda(), torch.from_numpy(b_h).cuda(), torch.from_numpy(spd_h).cuda())
                        if torch else (None,) * 3)
        cases = [
            (f"solve {size} (B {size}x{size}) {dt_name}", 2 * size ** 3 * 4 / 3,
             lambda: ig.linalg.solve(a, b), lambda: cp.linalg.solve(ca, cb), lambda: torch.linalg.solve(ta, tb)),
            (f"qr {size} {dt_name}", 4 * size ** 3 * 2 / 3,
             lambda: ig.linalg.qr(a), lambda: cp.linalg.qr(ca), lambda: torch.linalg.qr(ta)),
            (f"svd {size} {dt_name}", None,
             lambda: ig.linalg.svd(a), lambda: cp.linalg.svd(ca), lambda: torch.linalg.svd(ta)),
            (f"svd {size} {dt_name} (ingot gesvd, torch gesvd)", None,
             lambda: ig.linalg.svd(a, driver="gesvd"), lambda: cp.linalg.svd(ca),
             lambda: torch.linalg.svd(ta, driver="gesvd")),
            (f"svdvals {size} {dt_name}", None,
             lambda: ig.linalg.svdvals(a), lambda: cp.linalg.svd(ca, compute_uv=False), lambda: torch.linalg.svdvals(ta)),
            (f"eigh {size} {dt_name}", None,
             lambda: ig.linalg.eigh(spd), lambda: cp.linalg.eigh(cspd), lambda: torch.linalg.eigh(tspd)),
            (f"cholesky {size} {dt_name}", size ** 3 / 3,
             lambda: ig.linalg.cholesky(spd), lambda: cp.linalg.cholesky(cspd), lambda: torch.linalg.cholesky(tspd)),
            (f"inv {size} {dt_name}", 2 * size ** 3,
             lambda: ig.linalg.inv(a), lambda: cp.linalg.inv(ca), lambda: torch.linalg.inv(ta)),
        ]
        for name, flops, f_ig, f_cp, f_th in cases:
            t_ig = _try(f"{name} ingot", f_ig, _sync_ingot, **slow)
            t_cp = _try(f"{name} cupy", f_cp, _sync_cupy, **slow) if cp else None
            t_th = _try(f"{name} torch", f_th, _sync_torch, **slow) if torch else None
            record(name, None, t_ig, t_cp, t_th, flops=flops)
        del a, b, spd, ca, cb, cspd, ta, tb, tspd

    # Random numbers, 2^26 values: ingot's Philox4x32-10 streams, CuPy's default_rng (cuRAND
    # XORWOW), PyTorch's CUDA generator (Philox4x32-10).
    n = 1 << (22 if args.quick else 26)
    g = ig.random.Generator(1)
    cg = cp.random.default_rng(1) if cp else None
    tgen = torch.Generator(device="cuda").manual_seed(1) if torch else None
    for dt_name in ("float32", "float64"):
        cdt = getattr(cp, dt_name) if cp else None
        tdt = getattr(torch, dt_name) if torch else None
        esize = np.dtype(dt_name).itemsize
        k = n.bit_length() - 1
        record(f"random uniform 2^{k} {dt_name}", esize * n,
               _try("ingot", lambda: g.random(n, dtype=dt_name), _sync_ingot),
               _try("cupy", lambda: cg.random(n, dtype=cdt), _sync_cupy) if cp else None,
               _try("torch", lambda: torch.rand(n, dtype=tdt, device="cuda", generator=tgen), _sync_torch)
               if torch else None)
        record(f"random normal 2^{k} {dt_name}", esize * n,
               _try("ingot", lambda: g.normal(size=n, dtype=dt_name), _sync_ingot),
               _try("cupy", lambda: cg.standard_normal(n, dtype=cdt), _sync_cupy) if cp else None,
               _try("torch", lambda: torch.randn(n, dtype=tdt, device="cuda", generator=tgen), _sync_torch)
               if torch else None)
    record(f"random integers [0, 1000) 2^{n.bit_length() - 1} int64", 8 * n,
           _try("ingot", lambda: g.integers(0, 1000, size=n), _sync_ingot),
           _try("cupy", lambda: cg.integers(0, 1000, size=n), _sync_cupy) if cp else None,
           _try("torch", lambda: torch.randint(0, 1000, (n,), device="cuda", generator=tgen), _sync_torch)
           if torch else None)
    m = 1 << 20
    record("random permutation 2^20", None,
           _try("ingot", lambda: g.permutation(m), _sync_ingot, reps=5),
           _try("cupy", lambda: cp.random.permutation(m), _sync_cupy, reps=5) if cp else None,
           _try("torch", lambda: torch.randperm(m, device="cuda", generator=tgen), _sync_torch, reps=5)
           if torch else None)


def latency_cases(record):
    """Small-op and user-kernel launch latency, NVRTC compile times."""
    # Small-op latency from Python: a 1-element add, result kept on the device.
    s1, s2 = ig.asarray(np.ones(1, np.float32)), ig.asarray(np.ones(1, np.float32))
    c1 = cp.ones(1, cp.float32) if cp else None
    t1 = torch.ones(1, device="cuda") if torch else None
    record(
        "small op (1-element add)",
        None,
        timeit(lambda: s1 + s2, _sync_ingot, reps=2000, rounds=5),
        timeit(lambda: c1 + c1, _sync_cupy, reps=2000, rounds=5) if cp else None,
        timeit(lambda: t1 + t1, _sync_torch, reps=2000, rounds=5) if torch else None,
    )

    # User-kernel launch latency, and NVRTC first compile vs warm load.
    src = """
#include <metal_stdlib>
using namespace metal;
kernel void scale_%d(device float *x [[buffer(0)]], constant float &s [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) { x[i] = x[i] * s; }
"""
    tag = int(time.time() * 1000) % 1000000
    t0 = time.perf_counter()
    lib = ig.compile(src % tag)
    first_compile = time.perf_counter() - t0
    kern = lib[f"scale_{tag}"]
    t0 = time.perf_counter()
    ig.compile(src % tag)
    warm = time.perf_counter() - t0
    xs = ig.asarray(np.ones(32, np.float32))
    t_launch = timeit(lambda: kern(32, xs, 1.0), _sync_ingot, reps=2000, rounds=5)
    t_cp_launch = None
    if cp:
        raw = cp.RawKernel(
            'extern "C" __global__ void k(float* x, float s){ x[threadIdx.x] *= s; }', "k"
        )
        cx = cp.ones(32, cp.float32)
        raw((1,), (32,), (cx, np.float32(1.0)))
        t_cp_launch = timeit(lambda: raw((1,), (32,), (cx, np.float32(1.0))), _sync_cupy, reps=2000, rounds=5)
    record("user kernel launch (32 threads)", None, t_launch, t_cp_launch, None)
    print(f"NVRTC first compile {first_compile * 1e3:.1f} ms; same source again {warm * 1e3:.3f} ms")
    latency_cases.compile = (first_compile, warm)


def write(args, dev, n, copy_bw, rows):
    first_compile, warm = getattr(latency_cases, "compile", (None, None))
    name = getattr(dev, "name", dev)
    meta = {
        "device": str(name() if callable(name) else name),
        "date": _dt.date.today().isoformat(),
        "host": platform.node(),
        "n_elementwise": n,
        "copy_bandwidth_Bps": copy_bw,
        "nvrtc_first_compile_s": first_compile,
        "compile_again_s": warm,
        "cases": rows,
    }
    if copy_bw:
        for r in rows:
            if r["bytes"] and r["ingot_s"]:
                r["fraction_of_copy_bw"] = r["bytes"] / r["ingot_s"] / copy_bw
    os.makedirs(args.out, exist_ok=True)
    stem = os.path.join(args.out, f"cuda-{_dt.date.today().isoformat()}")
    with open(stem + ".json", "w") as f:
        json.dump(meta, f, indent=2)
    with open(stem + ".md", "w") as f:
        f.write(f"# ingot on CUDA, {meta['date']}\n\nDevice: {meta['device']}. ")
        if copy_bw:
            f.write(f"Measured copy bandwidth: {copy_bw / 1e12:.2f} TB/s.")
        f.write("\n\n")
        f.write("| case | ingot | CuPy | PyTorch | best/ingot | ingot % of copy BW |\n|---|---|---|---|---|---|\n")
        for r in rows:
            us = lambda t: f"{t * 1e6:.1f} us" if t else "-"
            frac = f"{100 * r['fraction_of_copy_bw']:.0f}%" if r.get("fraction_of_copy_bw") else ""
            ratio = f"{r['ratio_vs_best']:.2f}" if r["ratio_vs_best"] else "-"
            f.write(f"| {r['case']} | {us(r['ingot_s'])} | {us(r['cupy_s'])} | {us(r['torch_s'])} | {ratio} | {frac} |\n")
    print(f"wrote {stem}.json and .md")


if __name__ == "__main__":
    sys.exit(main())
