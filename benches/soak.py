"""Soak: many kernel launches in a row, with latency and memory watched for drift.

    python benches/soak.py [--launches 100000] [--device cpu]

Runs a small user kernel (y = a*x + 1 on 4096 floats) ``launches`` times, interleaved with a
small array op every 10th launch, and reports per block of 10% of the launches the median launch
latency and the process's resident memory. "Flat" means the last block's median latency is within
2x of the first block's (after warm-up) and resident memory grows by less than 64 MiB.
Results of a run are recorded in ``benches/results/soak.md``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

import ingot

SRC = """
#include <metal_stdlib>
using namespace metal;
kernel void soak_affine(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                        constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + 1.0f;
}
"""


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(launches: int = 100_000, device: str = "cpu", report: bool = True) -> dict:
    k = ingot.compile(SRC, device=device)["soak_affine"]
    n = 4096
    rng = np.random.default_rng()
    xh = rng.standard_normal(n).astype(np.float32)
    x = ingot.asarray(xh, device=device)
    y = ingot.asarray(np.full(n, np.nan, dtype=np.float32), device=device)
    for _ in range(200):  # warm-up
        k(x, y, 0.5, grid=(n,))
    ingot.synchronize()
    block = max(1, launches // 10)
    rows = []
    rss0 = rss_mb()
    times = []
    for i in range(launches):
        t0 = time.perf_counter()
        k(x, y, 0.5, grid=(n,))
        if i % 10 == 0:
            z = x * 2.0 + 1.0
            del z
        times.append(time.perf_counter() - t0)
        if len(times) == block:
            ingot.synchronize()
            rows.append((i + 1, statistics.median(times) * 1e6, rss_mb()))
            times = []
    ingot.synchronize()
    got = np.asarray(ingot.asarray(y, device="cpu"))
    np.testing.assert_allclose(got, 0.5 * xh.astype(np.float64) + 1.0, rtol=1e-6)
    first, last = rows[0], rows[-1]
    result = {
        "launches": launches,
        "device": device,
        "first_median_us": first[1],
        "last_median_us": last[1],
        "latency_ratio": last[1] / first[1],
        "rss_start_mb": rss0,
        "rss_end_mb": last[2],
        "rss_growth_mb": last[2] - rss0,
        "rows": rows,
    }
    if report:
        print(f"soak: {launches} launches of a 4096-element kernel on {device}")
        print(f"{'launches':>10} {'median us':>10} {'rss MiB':>9}")
        for done, med, rss in rows:
            print(f"{done:>10} {med:>10.2f} {rss:>9.1f}")
        print(
            f"latency last/first block: {result['latency_ratio']:.2f}x; "
            f"rss growth: {result['rss_growth_mb']:.1f} MiB"
        )
    return result


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--launches", type=int, default=100_000)
    ap.add_argument("--device", default="cpu")
    a = ap.parse_args()
    r = run(a.launches, a.device)
    ok = r["latency_ratio"] < 2.0 and r["rss_growth_mb"] < 64
    raise SystemExit(0 if ok else 1)
