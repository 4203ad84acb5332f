"""User-kernel benchmark on the CPU engine: ingot MSL kernels against NumPy in the same run.

* metalcompute's multiply kernel (``c[i] = a[i] * b[i]``, float32) at 1e7 and 1e8 elements,
  launched as ``kernel(n, a, b, c)`` on ingot arrays, against NumPy's ``np.multiply(a, b, out=c)``
  (ratio = NumPy time / kernel time; above 1 means the kernel is faster);
* a threadgroup-reduction kernel (tree reduction with threadgroup memory and barriers) on the
  work-item loop engine and with fibers forced (``INGOT_CPU_ENGINE=fibers``), and its throughput
  in GB/s, against ``np.add.reduceat`` of the same blocks;
* first compile time of a new kernel (new process; the precompiled prelude already in the
  cache, as after any first use), the one-time prelude precompile (fresh cache folder), cached
  load time (a new process whose disk cache holds the kernel; target < 5 ms), and an in-process
  (memory) cache hit.

Writes ``benches/results/kernels-cpu-<date>.json`` and ``.md``.

    python benches/bench_kernels.py [--samples 7] [--max-size 1e8]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import ingot

RESULTS = Path(__file__).resolve().parent / "results"
CORPUS = Path(__file__).resolve().parent.parent / "crates" / "ingot-msl" / "tests" / "kernels"

REDUCE = """
#include <metal_stdlib>
using namespace metal;
kernel void block_sum(device const float* in [[buffer(0)]], device float* partial [[buffer(1)]],
                      constant uint& n [[buffer(2)]], threadgroup float* shared [[threadgroup(0)]],
                      uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]], uint tg [[threads_per_threadgroup]]) {
    // Each thread first sums a strip of 16 elements (grid-stride inside the group's block).
    uint base = group * tg * 16;
    float acc = 0.0f;
    for (uint k = 0; k < 16; ++k) {
        uint i = base + k * tg + lid;
        acc += i < n ? in[i] : 0.0f;
    }
    shared[lid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = tg / 2; s > 0; s >>= 1) {
        if (lid < s) shared[lid] += shared[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) partial[group] = shared[0];
}
"""


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def median_time(fn, samples: int) -> float:
    fn()
    ts = []
    for _ in range(samples):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def subprocess_compile_time(source: str, cache_dir: str, repeats: int = 1, name: str = "multiply") -> float:
    """Seconds for ingot.compile(source) and obtaining kernel `name` (which compiles it, or
    loads it from the disk cache) in a new Python process (import excluded)."""
    code = (
        "import sys, time, ingot\n"
        "src = sys.stdin.read()\n"
        f"t = time.perf_counter(); ingot.compile(src, device='cpu').function({name!r}); print(time.perf_counter() - t)\n"
    )
    env = dict(os.environ, INGOT_CACHE_DIR=cache_dir)
    out = []
    for _ in range(repeats):
        r = subprocess.run([sys.executable, "-c", code], input=source, capture_output=True, text=True, env=env, check=True)
        out.append(float(r.stdout.strip().splitlines()[-1]))
    return statistics.median(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=7)
    ap.add_argument("--max-size", type=float, default=1e8)
    args = ap.parse_args()
    rows = []
    results = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "ingot": ingot.__version__,
        "multiply": [],
    }

    mul_src = (CORPUS / "multiply.metal").read_text()
    k = ingot.compile(mul_src, device="cpu")["multiply"]
    rng = np.random.default_rng(0)
    for n in (int(1e7), int(1e8)):
        if n > args.max_size:
            continue
        a_np = rng.standard_normal(n, dtype=np.float32)
        b_np = rng.standard_normal(n, dtype=np.float32)
        c_np = np.empty_like(a_np)
        a, b, c = ingot.asarray(a_np), ingot.asarray(b_np), ingot.empty((n,), dtype=ingot.float32)
        t_k = median_time(lambda: k(n, a, b, c), args.samples)
        t_np = median_time(lambda: np.multiply(a_np, b_np, out=c_np), args.samples)
        assert np.array_equal(np.asarray(c), c_np)
        r = {"n": n, "kernel_s": t_k, "numpy_s": t_np, "ratio": t_np / t_k, "kernel_GBps": 12 * n / t_k / 1e9}
        results["multiply"].append(r)
        rows.append(f"| multiply kernel(n, a, b, c) | {n:.0e} | {t_k * 1e3:.2f} ms | {t_np * 1e3:.2f} ms | {t_np / t_k:.2f} |")
        del a_np, b_np, c_np, a, b, c

    # Threadgroup reduction (barriers + threadgroup memory), in each CPU engine mode.
    n = int(min(args.max_size, 1e8) // 4)
    tg = 256
    per_group = tg * 16
    groups = -(-n // per_group)
    x_np = rng.standard_normal(n, dtype=np.float32)
    x = ingot.asarray(x_np)
    idx = np.arange(0, n, per_group)
    t_rn = median_time(lambda: np.add.reduceat(x_np, idx), args.samples)
    want = np.add.reduceat(x_np.astype(np.float64), idx)
    results["reduction"] = {"n": n, "threads_per_group": tg, "groups": groups, "numpy_reduceat_s": t_rn}
    for engine in ("work-items", "fibers"):
        if engine == "fibers":
            os.environ["INGOT_CPU_ENGINE"] = "fibers"
        red = ingot.compile(REDUCE + f"// {engine}\n", device="cpu")["block_sum"]
        os.environ.pop("INGOT_CPU_ENGINE", None)
        part = ingot.empty((groups,), dtype=ingot.float32)
        run = lambda: red(x, part, n, groups=groups, threadgroup=tg, threadgroup_memory={0: tg * 4})
        t_r = median_time(run, args.samples)
        np.testing.assert_allclose(np.asarray(part), want, rtol=1e-3, atol=1e-2)
        results["reduction"][engine] = {"kernel_s": t_r, "kernel_GBps": 4 * n / t_r / 1e9,
                                        "threads_per_s": groups * tg / t_r, "ratio": t_rn / t_r}
        rows.append(f"| threadgroup reduction ({engine}), {groups} groups x {tg} | {n:.1e} | {t_r * 1e3:.2f} ms ({4 * n / t_r / 1e9:.2f} GB/s) | {t_rn * 1e3:.2f} ms (reduceat) | {t_rn / t_r:.2f} |")

    # Compile and cached load, each in a new process.
    with tempfile.TemporaryDirectory() as d:
        # The first kernel in a fresh cache also precompiles the prelude (once per compiler,
        # flags and prelude); a new kernel after that pays its own compile only.
        pch = subprocess_compile_time(mul_src + f"\n// warm {time.time_ns()}\n", d)
        src = mul_src + f"\n// bench {time.time_ns()}\n"
        first = subprocess_compile_time(src, d)
        cached = subprocess_compile_time(src, d, repeats=5)
    t0 = time.perf_counter()
    for _ in range(100):
        ingot.compile(mul_src, device="cpu")
    memory_hit = (time.perf_counter() - t0) / 100
    results["compile"] = {"first_compile_s": first, "first_compile_with_prelude_precompile_s": pch,
                          "cached_load_new_process_s": cached, "memory_hit_s": memory_hit}
    md = [
        f"# CPU user kernels — {results['date']}",
        "",
        f"{results['cpu']} ({results['cores']} cores), NumPy {results['numpy']}, ingot {results['ingot']}. Median of {args.samples} runs.",
        "",
        "| case | n | ingot kernel | NumPy | ratio (NumPy / kernel) |",
        "|---|---|---|---|---|",
        *rows,
        "",
        f"- first compile of a new kernel (new process, prelude precompiled): {first * 1e3:.0f} ms (target <= 300 ms)",
        f"- first kernel in an empty cache (new process, includes the one-time prelude precompile): {pch * 1e3:.0f} ms",
        f"- cached load (new process, disk cache): {cached * 1e3:.2f} ms (target < 5 ms)",
        f"- in-process cache hit: {memory_hit * 1e6:.0f} us",
    ]
    print("\n".join(md))
    RESULTS.mkdir(exist_ok=True)
    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d")
    (RESULTS / f"kernels-cpu-{stamp}.json").write_text(json.dumps(results, indent=2) + "\n")
    (RESULTS / f"kernels-cpu-{stamp}.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
