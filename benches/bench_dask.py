"""Dask with ingot chunks on 1 and 2 devices (one worker process per device), side by side with
CuPy-backed Dask where CuPy is installed.

Usage:
    python benches/bench_dask.py --device cuda [--share-gb 8] [--out DIR]
    python benches/bench_dask.py --device cpu --quick          # smoke test, seconds

Two workloads over a dataset of ``1.5 * share`` bytes, ``share`` being the memory one GPU may
use for the run (default: a quarter of its memory), so one device never holds it all: chunks are
generated on the workers (random normal, on their device), consumed and freed as the graph
streams through them.

- reduction: ``(x * x).mean()`` and ``x.var(axis=0)`` of a tall array;
- blocked matmul: ``x.T @ x`` of the same array (per-chunk GEMMs summed over the chunks).

For each, the median of ``--rounds`` runs after one warm-up run (kernel compilation, worker
start-up) on 1 device and on 2, and the scaling efficiency ``t1 / (2 * t2)``. Results go to
``benches/results/dask-<device>-<date>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import statistics
import sys
import time

import numpy as np

import ingot
import ingot.dask

try:
    import dask
    import dask.array as da
    import distributed
except ImportError:  # pragma: no cover - the benchmark needs them
    sys.exit("bench_dask.py needs dask[array,distributed]")

try:
    import cupy
except Exception:  # pragma: no cover - optional
    cupy = None

# ---- chunk generators (run on the workers) ------------------------------------------------------


def ingot_block(seed, block_info=None):
    """A chunk of standard normal float32 values on the worker's device."""
    loc = block_info[None]["chunk-location"]
    shape = block_info[None]["chunk-shape"]
    g = ingot.random.default_rng(seed * 1_000_003 + loc[0])
    return g.standard_normal(shape, dtype=ingot.float32)


_CUPY_DEVICE = None


class CupyDevicePlugin(distributed.WorkerPlugin):
    """Pins a worker to one GPU for CuPy (the process-wide index its tasks select)."""

    def __init__(self, index):
        self.index = index
        self.name = f"cupy-device-{index}"

    def setup(self, worker):
        global _CUPY_DEVICE
        _CUPY_DEVICE = self.index


def cupy_block(seed, block_info=None):
    cupy.cuda.Device(_CUPY_DEVICE).use()  # the task thread's current CuPy device
    loc = block_info[None]["chunk-location"]
    shape = block_info[None]["chunk-shape"]
    g = cupy.random.default_rng(seed * 1_000_003 + loc[0])
    return g.standard_normal(shape, dtype=cupy.float32)


def cupy_cluster(indices):
    workers = {
        f"{i}-cupy-{i}": {"cls": distributed.Nanny,
                          "options": {"nthreads": 1, "plugins": (CupyDevicePlugin(i),)}}
        for i in indices
    }
    spec = distributed.SpecCluster(
        workers=workers,
        scheduler={"cls": distributed.Scheduler, "options": {"dashboard_address": None}},
        name="cupy")
    return distributed.Client(spec)


# ---- the workloads -----------------------------------------------------------------------------


def workloads(rows, cols, chunk_rows, block, meta):
    chunks = ((chunk_rows,) * (rows // chunk_rows), (cols,))

    def array(seed):
        return da.map_blocks(block, seed, chunks=chunks, dtype=np.float32, meta=meta)

    return {
        "reduction": lambda seed: [(array(seed) ** 2).mean(), array(seed).var(axis=0)],
        "blocked matmul": lambda seed: [array(seed).T @ array(seed)],
    }


def run(client, work, rounds):
    """Median seconds of ``rounds`` runs of ``work`` after a warm-up run; the last result."""
    out = dask.compute(*work(0))
    times = []
    for r in range(rounds):
        t0 = time.perf_counter()
        out = dask.compute(*work(r + 1))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def host_value(x):
    if isinstance(x, ingot.Array):
        return np.asarray(x.to_device("cpu"))
    if cupy is not None and isinstance(x, cupy.ndarray):
        return cupy.asnumpy(x)
    return np.asarray(x)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default=os.environ.get("INGOT_DEVICE", "cuda"), choices=["cuda", "cpu"])
    p.add_argument("--share-gb", type=float, default=None,
                   help="memory one device may use (default: a quarter of a GPU's memory; 0.02 on the CPU)")
    p.add_argument("--cols", type=int, default=2048)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quick", action="store_true", help="tiny sizes, one round (a smoke test)")
    p.add_argument("--no-cupy", action="store_true")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = p.parse_args()

    if args.device == "cuda":
        gpus = [str(d) for d in ingot.devices() if d.kind == "cuda"]
        if not gpus:
            sys.exit("no CUDA device (use --device cpu for the smoke test)")
        total = ingot.Device(gpus[0]).memory_info()["total"]
        share = (args.share_gb * 2**30) if args.share_gb else total / 4
        sets = [gpus[:1], gpus[:2]] if len(gpus) >= 2 else [gpus[:1]]
    else:
        share = (args.share_gb or 0.02) * 2**30
        sets = [["cpu"], ["cpu", "cpu"]]
    if args.quick:
        share = min(share, 4 * 2**20)
        args.cols = min(args.cols, 256)
        args.rounds = 1
    cols = args.cols
    row_bytes = cols * 4
    chunk_rows = max(64, int(share / 8 / row_bytes) // 64 * 64)  # 8 chunks fit one share
    nchunks = max(4, int(1.5 * share / (chunk_rows * row_bytes)))
    nchunks += nchunks % 2  # an even count spreads evenly on 2 devices
    rows = nchunks * chunk_rows
    dataset = rows * row_bytes
    print(f"dataset {dataset / 2**30:.2f} GiB float32 ({rows} x {cols}, {nchunks} chunks of "
          f"{chunk_rows} rows), memory share per device {share / 2**30:.2f} GiB")

    results = []
    for devices in sets:
        meta = ingot.empty((0, 0), dtype=ingot.float32, device=devices[0])
        with ingot.dask.cluster(devices=devices) as client:
            for name, work in workloads(rows, cols, chunk_rows, ingot_block, meta).items():
                t, out = run(client, work, args.rounds)
                results.append({"library": "ingot", "workload": name, "devices": len(devices),
                                "seconds": t, "check": float(np.sum(host_value(out[0])))})
                print(f"  ingot {name:15s} {len(devices)} device(s): {t * 1e3:9.1f} ms")
        if args.device == "cuda" and cupy is not None and not args.no_cupy:
            cmeta = cupy.empty((0, 0), dtype=cupy.float32)
            with cupy_cluster(range(len(devices))) as client:
                for name, work in workloads(rows, cols, chunk_rows, cupy_block, cmeta).items():
                    t, out = run(client, work, args.rounds)
                    results.append({"library": "cupy", "workload": name, "devices": len(devices),
                                    "seconds": t, "check": float(np.sum(host_value(out[0])))})
                    print(f"  cupy  {name:15s} {len(devices)} device(s): {t * 1e3:9.1f} ms")

    lines = ["| library | workload | 1 device (ms) | 2 devices (ms) | scaling efficiency |",
             "|---|---|---|---|---|"]
    for lib in ("ingot", "cupy"):
        for name in ("reduction", "blocked matmul"):
            t = {r["devices"]: r["seconds"] for r in results
                 if r["library"] == lib and r["workload"] == name}
            if 1 not in t:
                continue
            eff = f"{t[1] / (2 * t[2]):.2f}" if 2 in t else "-"
            two = f"{t[2] * 1e3:.1f}" if 2 in t else "-"
            lines.append(f"| {lib} | {name} | {t[1] * 1e3:.1f} | {two} | {eff} |")
    table = "\n".join(lines)
    print(table)

    os.makedirs(args.out, exist_ok=True)
    dev = "cpu" if args.device == "cpu" else ingot.Device("cuda:0").name().split()[1].lower()
    stem = os.path.join(args.out, f"dask-{dev}-{_dt.date.today().isoformat()}")
    meta_info = {"dataset_bytes": dataset, "share_bytes": share, "rows": rows, "cols": cols,
                 "chunk_rows": chunk_rows, "devices": sets[-1], "quick": args.quick,
                 "dask": dask.__version__, "distributed": distributed.__version__,
                 "cupy": getattr(cupy, "__version__", None)}
    with open(stem + ".json", "w") as f:
        json.dump({"meta": meta_info, "results": results}, f, indent=1)
    with open(stem + ".md", "w") as f:
        f.write(f"# Dask, 1 vs 2 devices ({dev})\n\n{json.dumps(meta_info)}\n\n{table}\n")
    print("wrote", stem + ".json")


if __name__ == "__main__":
    main()
