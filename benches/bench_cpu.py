"""CPU benchmark: ingot against NumPy in the same process.

Times add, multiply, exp, sin, sum, max, argmax on float32 arrays of 1e3..1e8 elements,
sort/argsort/unique of 1e6 and 2^24 float32, matmul of 1024x1024 and 2048x2048 float32 matrices,
the linalg factorizations (solve, qr, svd, eigh, cholesky, inv; 1024 and 4096, float32 and
float64, against numpy.linalg) and the random generators. Each case is warmed up, then timed as the
median of several samples (each sample loops enough calls to last a few milliseconds). Prints a
table of medians and ratios (NumPy time / ingot time: above 1 means ingot is faster) and writes
``benches/results/cpu-<date>.json`` and ``cpu-<date>.md``.

    python benches/bench_cpu.py                # everything (1e8 only when memory allows)
    python benches/bench_cpu.py --max-size 1e6 --samples 5
    python benches/bench_cpu.py --linalg-only --linalg-sizes 1024
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import time
from pathlib import Path
from typing import Callable, Dict, List

import numpy as np

import ingot

RESULTS = Path(__file__).resolve().parent / "results"


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_commit() -> str:
    """The repository's HEAD commit (what the benchmark script sits in), or "unknown"."""
    import subprocess

    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              cwd=Path(__file__).parent, timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def available_memory() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 8 * 2**30


def time_call(fn: Callable[[], object], samples: int, min_sample_s: float = 0.005,
              warmup_s: float = 0.05) -> float:
    """Median seconds per call: warm-up, calibrate a loop count, then `samples` samples.

    The warm-up runs the call for at least `warmup_s` (and 3 times): on the 2-core VM this was
    measured on, the first milliseconds after a change of array size ran up to 1.5x slower
    (fresh memory, thread wake-ups), for either library."""
    t_end = time.perf_counter() + warmup_s
    for _ in range(3):
        fn()
    while time.perf_counter() < t_end:
        fn()
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    loops = max(1, int(min_sample_s / once))
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        times.append((time.perf_counter() - t0) / loops)
    return statistics.median(times)


def elementwise_cases(a_np, b_np, a, b) -> Dict[str, tuple]:
    return {
        "add": (lambda: np.add(a_np, b_np), lambda: ingot.add(a, b)),
        "multiply": (lambda: np.multiply(a_np, b_np), lambda: ingot.multiply(a, b)),
        "exp": (lambda: np.exp(a_np), lambda: ingot.exp(a)),
        "sin": (lambda: np.sin(a_np), lambda: ingot.sin(a)),
        "sum": (lambda: np.sum(a_np), lambda: ingot.sum(a)),
        "max": (lambda: np.max(a_np), lambda: ingot.max(a)),
        "argmax": (lambda: np.argmax(a_np), lambda: ingot.argmax(a)),
    }


def linalg_cases(n: int, rng, samples: int) -> List[dict]:
    """solve (B n x n), qr, svd, svdvals, eigh, cholesky, inv of n x n matrices, float32 and
    float64, against numpy.linalg (LAPACK through NumPy's BLAS, on every core)."""
    rows = []
    la = ingot.linalg
    for dtype in ("float32", "float64"):
        a_np = (rng.standard_normal((n, n)) + n ** 0.5 * np.eye(n)).astype(dtype)
        b_np = rng.standard_normal((n, n)).astype(dtype)
        spd_np = (a_np @ a_np.T).astype(dtype)
        a, b, spd = (ingot.asarray(x, copy=True) for x in (a_np, b_np, spd_np))
        cases = {
            "solve": (lambda: np.linalg.solve(a_np, b_np), lambda: la.solve(a, b)),
            "qr": (lambda: np.linalg.qr(a_np), lambda: la.qr(a)),
            "svd": (lambda: np.linalg.svd(a_np), lambda: la.svd(a)),
            "svdvals": (lambda: np.linalg.svd(a_np, compute_uv=False), lambda: la.svdvals(a)),
            "eigh": (lambda: np.linalg.eigh(spd_np), lambda: la.eigh(spd)),
            "cholesky": (lambda: np.linalg.cholesky(spd_np), lambda: la.cholesky(spd)),
            "inv": (lambda: np.linalg.inv(a_np), lambda: la.inv(a)),
        }
        s = max(3, samples // 2) if n <= 1024 else 3
        for name, (f_np, f_ig) in cases.items():
            t_np = time_call(f_np, s, min_sample_s=0.0, warmup_s=0.0)
            t_ig = time_call(f_ig, s, min_sample_s=0.0, warmup_s=0.0)
            op = f"{name} {dtype}"
            rows.append({"op": op, "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
            print(f"{op:>17} {n:>6,d}  numpy {t_np * 1e3:10.2f} ms  ingot {t_ig * 1e3:10.2f} ms  ratio {t_np / t_ig:6.2f}",
                  flush=True)
    return rows


def random_cases(rng, samples: int) -> List[dict]:
    """ingot.random's Philox4x32-10 against NumPy's default generator (PCG64) on 2^24 values."""
    n = 1 << 24
    g = ingot.random.Generator(1, device="cpu")
    r = np.random.default_rng(1)
    cases = {
        "random f64": (lambda: r.random(n), lambda: g.random(n)),
        "random f32": (lambda: r.random(n, dtype=np.float32), lambda: g.random(n, dtype="float32")),
        "normal f64": (lambda: r.standard_normal(n), lambda: g.normal(size=n)),
        "integers [0,1000)": (lambda: r.integers(0, 1000, n), lambda: g.integers(0, 1000, size=n)),
        "permutation 2^20": (lambda: r.permutation(1 << 20), lambda: g.permutation(1 << 20)),
    }
    rows = []
    for name, (f_np, f_ig) in cases.items():
        t_np, t_ig = time_call(f_np, samples), time_call(f_ig, samples)
        rows.append({"op": name, "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
        print(f"{name:>17} {n:>11,d}  numpy {t_np * 1e3:10.3f} ms  ingot {t_ig * 1e3:10.3f} ms  ratio {t_np / t_ig:6.2f}",
              flush=True)
    return rows


def fft_cases(rng, samples: int) -> List[dict]:
    """ingot.fft against numpy.fft (pocketfft) on 2^24 complex64 values (issue #14), and the
    real transform of 2^24 float32 values."""
    n = 1 << 24
    z_np = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex64)
    r_np = rng.standard_normal(n).astype(np.float32)
    z, r = ingot.asarray(z_np, copy=True), ingot.asarray(r_np, copy=True)
    cases = {
        "fft c64": (lambda: np.fft.fft(z_np), lambda: ingot.fft.fft(z)),
        "ifft c64": (lambda: np.fft.ifft(z_np), lambda: ingot.fft.ifft(z)),
        "rfft f32": (lambda: np.fft.rfft(r_np), lambda: ingot.fft.rfft(r)),
    }
    rows = []
    s = max(3, samples // 2)
    for name, (f_np, f_ig) in cases.items():
        t_np, t_ig = time_call(f_np, s), time_call(f_ig, s)
        rows.append({"op": name, "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
        print(f"{name:>17} {n:>11,d}  numpy {t_np * 1e3:10.3f} ms  ingot {t_ig * 1e3:10.3f} ms  ratio {t_np / t_ig:6.2f}",
              flush=True)
    return rows


def main(argv: List[str] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--max-size", type=float, default=1e8, help="largest element count (default 1e8)")
    p.add_argument("--samples", type=int, default=7, help="timed samples per case (median)")
    p.add_argument("--no-matmul", action="store_true")
    p.add_argument("--no-sort", action="store_true", help="skip sort/argsort/unique")
    p.add_argument("--only-sort", action="store_true", help="only sort/argsort/unique")
    p.add_argument("--linalg-sizes", default="1024,4096",
                   help="matrix sizes of the linalg cases (solve, qr, svd, ...), comma-separated; '' for none")
    p.add_argument("--linalg-only", action="store_true", help="only the linalg and random cases")
    p.add_argument("--fft-only", action="store_true", help="only the fft cases")
    p.add_argument("--no-write", action="store_true", help="print only")
    args = p.parse_args(argv)

    load_at_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    device = ingot.Device("cpu")
    rng = np.random.default_rng(0)
    sizes = [int(10**e) for e in range(3, 9) if 10**e <= args.max_size and not (args.only_sort or args.linalg_only)]
    # Four float32 arrays of the largest size live at once per library: keep well inside memory.
    while sizes and sizes[-1] * 4 * 8 > available_memory() // 2:
        sizes.pop()
    rows = []
    if args.fft_only:
        sizes = []
        args.no_sort = args.no_matmul = True
    for n in sizes:
        a_np = rng.uniform(-10, 10, n).astype(np.float32)
        b_np = rng.uniform(-10, 10, n).astype(np.float32)
        a = ingot.asarray(a_np, device=device, copy=True)
        b = ingot.asarray(b_np, device=device, copy=True)
        samples = args.samples if n < 10**8 else max(3, args.samples // 2)
        for name, (f_np, f_ig) in elementwise_cases(a_np, b_np, a, b).items():
            t_np = time_call(f_np, samples)
            t_ig = time_call(f_ig, samples)
            rows.append({"op": name, "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
            print(f"{name:>9} {n:>11,d}  numpy {t_np * 1e3:10.4f} ms  ingot {t_ig * 1e3:10.4f} ms  ratio {t_np / t_ig:6.2f}", flush=True)
        del a, b, a_np, b_np
    if not args.no_sort and not args.linalg_only:
        # Sorting and selection (issue #14): 2^24 float32 (and 1e6), NumPy's default kinds and
        # its stable argsort (ingot's sorts are always stable).
        for n in (10**6, 1 << 24):
            if n > args.max_size * 1.7:
                continue
            s_np = rng.standard_normal(n).astype(np.float32)
            u_np = rng.integers(0, max(n >> 4, 1), n).astype(np.float32)
            s_ig, u_ig = ingot.asarray(s_np, copy=True), ingot.asarray(u_np, copy=True)
            smp = max(3, args.samples // 2)
            for name, f_np, f_ig in (
                ("sort", lambda: np.sort(s_np), lambda: ingot.sort(s_ig)),
                ("argsort", lambda: np.argsort(s_np), lambda: ingot.argsort(s_ig)),
                ("argsort (stable)", lambda: np.argsort(s_np, kind="stable"), lambda: ingot.argsort(s_ig)),
                ("unique (n/16 values)", lambda: np.unique(u_np), lambda: ingot.unique_values(u_ig)),
                ("unique_counts", lambda: np.unique(u_np, return_counts=True), lambda: ingot.unique_counts(u_ig)),
            ):
                t_np = time_call(f_np, smp)
                t_ig = time_call(f_ig, smp)
                rows.append({"op": name, "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
                print(f"{name:>9} {n:>11,d}  numpy {t_np * 1e3:10.4f} ms  ingot {t_ig * 1e3:10.4f} ms  ratio {t_np / t_ig:6.2f}", flush=True)
            del s_ig, u_ig
    if not args.no_matmul and not (args.only_sort or args.linalg_only):
        # ingot's products first, NumPy's after: OpenBLAS's threads keep spinning for a while
        # after each of its calls, and ingot's threads measured beside them ran 2-4x slower
        # (1024: 8.9 ms interleaved, 1.95 ms alone, on 16 cores).
        mm = {}
        for n in (256, 512, 1024, 2048):
            a_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            b_np = rng.uniform(-1, 1, (n, n)).astype(np.float32)
            a, b = ingot.asarray(a_np, copy=True), ingot.asarray(b_np, copy=True)
            mm[n] = (a_np, b_np, time_call(lambda: ingot.matmul(a, b), max(3, args.samples // 2)))
        for n, (a_np, b_np, t_ig) in mm.items():
            t_np = time_call(lambda: a_np @ b_np, max(3, args.samples // 2))
            rows.append({"op": "matmul", "size": n, "numpy_s": t_np, "ingot_s": t_ig, "ratio": t_np / t_ig})
            print(f"{'matmul':>9} {n:>11,d}  numpy {t_np * 1e3:10.4f} ms  ingot {t_ig * 1e3:10.4f} ms  ratio {t_np / t_ig:6.2f}", flush=True)

    if not (args.only_sort or args.fft_only):
        for n in [int(x) for x in args.linalg_sizes.split(",") if x]:
            rows.extend(linalg_cases(n, rng, args.samples))
        rows.extend(random_cases(rng, args.samples))
    if not (args.only_sort or args.linalg_only):
        rows.extend(fft_cases(rng, args.samples))

    now = dt.datetime.now(dt.timezone.utc)
    meta = {
        "date": now.isoformat(timespec="seconds"),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "load_average_at_start": load_at_start,
        },
        "numpy": np.__version__,
        "git_commit": git_commit(),
        "ingot": ingot.__version__,
        "dtype": "float32 (linalg: as named)",
        "statistic": f"median of {args.samples} samples after warm-up (fewer for 1e8 and matmul)",
        "ratio": "numpy time / ingot time (above 1: ingot faster)",
    }
    md = [f"# CPU benchmark, {meta['date']}", "",
          f"{meta['machine']['cpu']}, {meta['machine']['cores']} cores; NumPy {np.__version__}; "
          f"ingot {ingot.__version__}; float32; {meta['statistic']}; "
          f"load average at start {load_at_start}.", "",
          "| op | size | NumPy (ms) | ingot (ms) | ratio NumPy/ingot |", "|---|---:|---:|---:|---:|"]
    for r in rows:
        md.append(f"| {r['op']} | {r['size']:,} | {r['numpy_s'] * 1e3:.4f} | {r['ingot_s'] * 1e3:.4f} | {r['ratio']:.2f} |")
    print()
    print("\n".join(md[4:]))
    if not args.no_write:
        RESULTS.mkdir(parents=True, exist_ok=True)
        stem = RESULTS / f"cpu-{now.strftime('%Y-%m-%d')}"
        stem.with_suffix(".json").write_text(json.dumps({"meta": meta, "results": rows}, indent=2) + "\n")
        stem.with_suffix(".md").write_text("\n".join(md) + "\n")
        print(f"\nwrote {stem}.json and {stem}.md")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
