"""Compile time of one kernel from a large MSL library (compilation per entry point).

Usage: python benches/bench_lazy_compile.py FILE.metal KERNEL [KERNEL2 ...] [--device cpu]

For a library such as candle's ``binary.metal`` (648 kernels; not part of this repository:
fetch it separately) it measures, with an empty kernel cache (``INGOT_CACHE_DIR`` set to a new
temporary folder):

1. ``ingot.compile(source)``: reflection of every entry point, nothing compiled;
2. the first ``lib[KERNEL]``: translation of that kernel's unit and its compilation;
3. ``lib[KERNEL]`` again in the same process (memory cache);
4. in a new process: ``ingot.compile(source)`` + ``lib[KERNEL]`` with the disk cache warm;
5. ``lib.prepare([...])`` of the other kernels named, compiled in parallel.

Each kernel is also run once on a small input to show it works.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time


def _child(path: str, kernel: str, device: str) -> None:
    import ingot

    src = open(path, encoding="utf-8").read()
    t0 = time.perf_counter()
    lib = ingot.compile(src, device=device, file_name=path, include_dirs=[os.path.dirname(path)])
    t1 = time.perf_counter()
    lib[kernel]
    t2 = time.perf_counter()
    print(json.dumps({"compile": t1 - t0, "first_call": t2 - t1}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    path = os.path.abspath(a.file)
    if a.child:
        _child(path, a.kernels[0], a.device)
        return
    import ingot

    os.environ["INGOT_CACHE_DIR"] = tempfile.mkdtemp(prefix="ingot-lazy-bench-")
    src = open(path, encoding="utf-8").read()
    include = [os.path.dirname(path)]
    t0 = time.perf_counter()
    lib = ingot.compile(src, device=a.device, file_name=path, include_dirs=include)
    t_compile = time.perf_counter() - t0
    first = a.kernels[0]
    t0 = time.perf_counter()
    lib[first]
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    lib[first]
    t_again = time.perf_counter() - t0
    out = subprocess.run(
        [sys.executable, __file__, path, first, "--device", a.device, "--child"],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    child = json.loads(out.stdout.strip().splitlines()[-1])
    rest = a.kernels[1:]
    t_prepare = None
    if rest:
        t0 = time.perf_counter()
        lib.prepare(rest)
        t_prepare = time.perf_counter() - t0
    print(f"file: {a.file} ({len(lib.functions)} entry points), device {a.device}")
    print(f"ingot.compile (reflection only):        {t_compile * 1e3:9.1f} ms")
    print(f"first lib[{first!r}] (translate + compile): {t_first * 1e3:9.1f} ms")
    print(f"lib[{first!r}] again (memory cache):     {t_again * 1e3:9.3f} ms")
    print(
        f"new process, disk cache: compile {child['compile'] * 1e3:.1f} ms + "
        f"lib[{first!r}] {child['first_call'] * 1e3:.1f} ms = "
        f"{(child['compile'] + child['first_call']) * 1e3:.1f} ms"
    )
    if t_prepare is not None:
        print(f"lib.prepare({len(rest)} kernels) in parallel: {t_prepare * 1e3:9.1f} ms")
    print(f"units compiled by this library: {lib.compiled_units}")


if __name__ == "__main__":
    main()
