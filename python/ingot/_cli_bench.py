"""``python -m ingot bench``: ingot side by side with the libraries this machine has.

On the CPU ingot runs against NumPy; on a CUDA device against CuPy and PyTorch when they are
installed (NumPy on the host otherwise); on Metal against NumPy. The cases are those of
``benches/bench_cpu.py`` and ``benches/bench_cuda.py`` in small: elementwise arithmetic and
transcendental functions, reductions, a sort, a matrix product and a user MSL kernel (saxpy)
against the same expression in the other library. The full reports, with more sizes and the
linear-algebra cases, are those scripts in a clone of the repository: ``bench --full`` runs
them for the devices at hand.

Each case is warmed up, then timed as the median of several samples (each sample loops enough
calls to last a few milliseconds, and synchronises the device). Prints a progress bar (tqdm or
rich when installed), a table, and writes a bar chart PNG with matplotlib when it is installed.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

SAXPY = """
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(const device float* x [[buffer(0)]], const device float* y [[buffer(1)]],
                  device float* out [[buffer(2)]], constant float& a [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    out[i] = a * x[i] + y[i];
}
"""


def time_call(fn: Callable[[], Any], sync: Callable[[], None], samples: int, min_sample_s: float) -> float:
    """Median seconds per call: warm-up, calibrate a loop count, then ``samples`` samples."""
    for _ in range(2):
        fn()
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - t0, 1e-7)
    loops = max(1, int(min_sample_s / once))
    times = []
    for _ in range(samples):
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        sync()
        times.append((time.perf_counter() - t0) / loops)
    return statistics.median(times)


class _Library:
    """A library that ingot is compared with: how to make its arrays, run a case and sync."""

    def __init__(self, name: str, module: Any, asarray: Callable[[np.ndarray], Any], sync: Callable[[], None]):
        self.name, self.xp, self.asarray, self.sync = name, module, asarray, sync


def _others(device: Any) -> List[_Library]:
    libs = []
    if device.kind == "cuda":
        try:
            import cupy as cp

            libs.append(_Library("cupy", cp, cp.asarray, lambda: cp.cuda.Device().synchronize()))
        except Exception:  # noqa: BLE001 - an absent or broken optional library is skipped
            pass
        try:
            import torch

            if torch.cuda.is_available():
                libs.append(_Library("torch", torch, lambda a: torch.from_numpy(a).cuda(), torch.cuda.synchronize))
        except Exception:  # noqa: BLE001
            pass
    if not libs:
        libs.append(_Library("numpy", np, lambda a: a, lambda: None))
    return libs


def _cases(lib_name: str, xp: Any, arrs: Dict[str, Any]) -> Dict[str, Callable[[], Any]]:
    """The case name -> callable for one library (``xp`` is ingot, NumPy, CuPy or torch)."""
    a, b, m1, m2 = arrs["a"], arrs["b"], arrs["m1"], arrs["m2"]
    out: Dict[str, Callable[[], Any]] = {
        "add": lambda: a + b,
        "multiply": lambda: a * b,
        "exp": lambda: xp.exp(a),
        "sin": lambda: xp.sin(a),
        "sum": lambda: xp.sum(a),
        "max": lambda: xp.max(a),
        "argmax": lambda: xp.argmax(a),
        "matmul": lambda: m1 @ m2,
    }
    if lib_name == "torch":
        out["sort"] = lambda: xp.sort(a)[0]
    else:
        out["sort"] = lambda: xp.sort(a)
    if lib_name == "ingot":
        k, o = arrs["saxpy"], arrs["out"]
        out["saxpy (user kernel)"] = lambda: k(o.size, a, b, o, 2.5)
    else:
        out["saxpy (user kernel)"] = lambda: 2.5 * a + b
    return out


def _progress(total: int, desc: str) -> Tuple[Callable[[str], None], Callable[[], None]]:
    """A progress bar: tqdm, else rich, else a plain counter on stderr. Returns (step, close)."""
    try:
        from tqdm import tqdm

        bar = tqdm(total=total, desc=desc, unit="case", file=sys.stderr, leave=False)

        def step(label: str) -> None:
            bar.set_postfix_str(label)
            bar.update(1)

        return step, bar.close
    except ImportError:
        pass
    try:
        from rich.progress import Progress

        prog = Progress(transient=True, console=None)
        prog.start()
        task = prog.add_task(desc, total=total)
        return (lambda label: prog.update(task, advance=1, description=f"{desc}: {label}")), prog.stop
    except ImportError:
        pass
    count = [0]

    def plain(label: str) -> None:
        count[0] += 1
        print(f"[{count[0]}/{total}] {desc}: {label}", file=sys.stderr, flush=True)

    return plain, lambda: None


def run(devices: Sequence[Any], size: int, side: int, samples: int, min_sample_s: float,
        show_progress: bool = True) -> List[Dict[str, Any]]:
    """Times every case on every device; one row per (device, case, size)."""
    import ingot

    rng = np.random.default_rng()
    rows: List[Dict[str, Any]] = []
    for device in devices:
        others = _others(device)
        host = {
            "a": rng.uniform(-4, 4, size).astype(np.float32),
            "b": rng.uniform(-4, 4, size).astype(np.float32),
            "m1": rng.uniform(-1, 1, (side, side)).astype(np.float32),
            "m2": rng.uniform(-1, 1, (side, side)).astype(np.float32),
        }
        mine = {k: ingot.asarray(v, device=device, copy=True) for k, v in host.items()}
        mine["saxpy"] = ingot.compile(SAXPY, device=device)["saxpy"]
        mine["out"] = ingot.full((size,), float("nan"), dtype=ingot.float32, device=device)
        theirs = {o.name: {k: o.asarray(v) for k, v in host.items()} for o in others}
        ingot_cases = _cases("ingot", ingot, mine)
        names = list(ingot_cases)
        total = len(names) * (1 + len(others))
        step, close = _progress(total, f"bench on {device}") if show_progress else ((lambda s: None), (lambda: None))
        try:
            for name in names:
                n = side if name == "matmul" else size
                row: Dict[str, Any] = {"device": str(device), "case": name, "size": n}
                row["ingot_s"] = time_call(ingot_cases[name], ingot.synchronize, samples, min_sample_s)
                step(f"{name} ingot")
                for o in others:
                    f = _cases(o.name, o.xp, theirs[o.name])[name]
                    row[f"{o.name}_s"] = time_call(f, o.sync, samples, min_sample_s)
                    step(f"{name} {o.name}")
                best = min(row[f"{o.name}_s"] for o in others)
                row["speedup"] = best / row["ingot_s"]
                rows.append(row)
        finally:
            close()
    return rows


def format_table(rows: Sequence[Dict[str, Any]]) -> str:
    """The rows as a text table (milliseconds; speedup = fastest other library / ingot)."""
    libs = [k[:-2] for k in rows[0] if k.endswith("_s") and k != "ingot_s"] if rows else []
    for r in rows:
        for k in r:
            if k.endswith("_s") and k != "ingot_s" and k[:-2] not in libs:
                libs.append(k[:-2])
    headers = ["device", "case", "size", "ingot ms"] + [f"{lib} ms" for lib in libs] + ["speedup"]
    cells = []
    for r in rows:
        cells.append([r["device"], r["case"], f"{r['size']:,}", f"{r['ingot_s'] * 1e3:.4f}"]
                     + [f"{r[lib + '_s'] * 1e3:.4f}" if r.get(lib + "_s") is not None else "-" for lib in libs]
                     + [f"{r['speedup']:.2f}x"])
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = lambda vals: "  ".join(v.rjust(w) if i >= 2 else v.ljust(w) for i, (v, w) in enumerate(zip(vals, widths)))
    out = [line(headers), line(["-" * w for w in widths])] + [line(c) for c in cells]
    out.append("speedup: time of the fastest other library / ingot's time (above 1: ingot is faster)")
    return "\n".join(out)


def plot(rows: Sequence[Dict[str, Any]], path: str) -> Optional[str]:
    """Writes a bar chart of the speedups to ``path``; returns None, or why it could not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no chart (pip install matplotlib to get one)"
    labels = [f"{r['case']} ({r['device']})" for r in rows]
    values = [r["speedup"] for r in rows]
    fig, ax = plt.subplots(figsize=(8, 0.35 * len(rows) + 1.5))
    colors = ["tab:green" if v >= 1 else "tab:red" for v in values]
    ax.barh(range(len(rows)), values, color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("speedup of ingot (fastest other library's time / ingot's time)")
    ax.set_title("ingot bench")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def benches_dir() -> Optional[str]:
    """The repository's ``benches/`` folder when ingot runs from a clone (``maturin develop``)."""
    here = os.path.dirname(os.path.abspath(__file__))
    d = os.path.join(os.path.dirname(os.path.dirname(here)), "benches")
    return d if os.path.isfile(os.path.join(d, "bench_cpu.py")) else None


def run_full(devices: Sequence[Any]) -> int:
    """Runs the repository's full benchmark scripts for the devices' kinds (``--full``)."""
    import subprocess

    d = benches_dir()
    if d is None:
        print("--full runs benches/bench_cpu.py and benches/bench_cuda.py of a clone of the repository; "
              "this ingot is installed without them", file=sys.stderr)
        return 1
    rc = 0
    for device in devices:
        script = {"cpu": "bench_cpu.py", "cuda": "bench_cuda.py"}.get(device.kind)
        if script is None:
            print(f"no full benchmark script for {device}", file=sys.stderr)
            continue
        env = dict(os.environ, INGOT_DEVICE=str(device))
        print(f"== {script} on {device}", flush=True)
        rc |= subprocess.call([sys.executable, os.path.join(d, script)], cwd=d, env=env)
    return rc


def bench_main(args: Any) -> int:
    """``python -m ingot bench``."""
    import ingot

    if args.device:
        devices = [ingot.Device(args.device)]
    else:
        seen, devices = set(), []
        for d in ingot.devices():
            if d.kind not in seen:
                seen.add(d.kind)
                devices.append(d)
    if args.full:
        return run_full(devices)
    size = args.size or (1 << 16 if args.quick else 1 << 22)
    side = args.matrix_size or (max(16, min(256, int(size ** 0.5))) if args.quick else 1024)
    samples = 3 if args.quick else 7
    min_sample_s = 0.002 if args.quick else 0.01
    rows = run(devices, size, side, samples, min_sample_s, show_progress=not args.no_progress)
    print(format_table(rows))
    out_dir = args.out or os.getcwd()
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, f"ingot-bench-{dt.datetime.now().strftime('%Y%m%d-%H%M%S')}")
    with open(stem + ".json", "w", encoding="utf-8") as f:
        json.dump({"ingot": ingot.__version__, "numpy": np.__version__, "size": size, "matrix_size": side,
                   "samples": samples, "rows": rows}, f, indent=2)
    print(f"wrote {stem}.json")
    if not args.no_plot:
        why = plot(rows, stem + ".png")
        print(why if why else f"wrote {stem}.png")
    return 0


def add_arguments(p: Any) -> None:
    """The options of ``bench``."""
    p.add_argument("--quick", action="store_true", help="small sizes and few samples (seconds)")
    p.add_argument("--size", type=int, default=None, help="elements of the 1-D cases (default 2^22; --quick 2^16)")
    p.add_argument("--matrix-size", type=int, default=None, help="side of the matmul matrices")
    p.add_argument("--device", default=None, help="one device (cpu, cuda, cuda:1, metal); default: one of each kind")
    p.add_argument("--out", default=None, help="folder of the JSON and PNG results (default: the current folder)")
    p.add_argument("--no-plot", action="store_true", help="no PNG chart")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--full", action="store_true",
                   help="run the repository's full reports instead (benches/bench_cpu.py, benches/bench_cuda.py)")
