#!/usr/bin/env python3
"""Runs the pytest suite split over several processes (one group of test files each) and
prints one summary.

For machines with many cores and a time limit per command (the CUDA device runs: NVRTC compiles
are CPU-bound, so eight processes finish the suite several times sooner than one). Usage:

    INGOT_DEVICE=cuda python3 scripts/test_split.py [--jobs 8] [--logs DIR] [tests/test_x.py ...]

Each group's log is written to DIR (default: a temporary folder); the exit status is 0 when
every group passed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def groups(files: list[Path], jobs: int) -> list[list[Path]]:
    """Greedy balance by file size (a rough proxy for a file's running time)."""
    out: list[list[Path]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for f in sorted(files, key=lambda p: -p.stat().st_size):
        k = load.index(min(load))
        out[k].append(f)
        load[k] += f.stat().st_size
    return [g for g in out if g]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--logs", default=None)
    ap.add_argument("files", nargs="*")
    args = ap.parse_args()
    root = Path(__file__).resolve().parent.parent
    files = [Path(f) for f in args.files] or sorted((root / "tests").glob("test_*.py"))
    logs = Path(args.logs or tempfile.mkdtemp(prefix="ingot-tests-"))
    logs.mkdir(parents=True, exist_ok=True)
    procs = []
    t0 = time.time()
    for k, g in enumerate(groups(files, args.jobs)):
        log = open(logs / f"group{k}.log", "w")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE", *map(str, g)]
        procs.append((k, subprocess.Popen(cmd, cwd=root, stdout=log, stderr=subprocess.STDOUT), log))
    status = 0
    totals: dict[str, int] = {}
    failed: list[str] = []
    for k, p, log in procs:
        rc = p.wait()
        log.close()
        text = (logs / f"group{k}.log").read_text(errors="replace")
        for n, what in re.findall(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)", text.splitlines()[-1] if text else ""):
            totals[what] = totals.get(what, 0) + int(n)
        failed += [l for l in text.splitlines() if l.startswith(("FAILED ", "ERROR "))]
        if rc not in (0, 5):
            status = 1
    for l in failed:
        print(l)
    summary = ", ".join(f"{n} {w}" for w, n in sorted(totals.items()))
    print(f"== {summary} in {time.time() - t0:.0f} s ({len(procs)} processes; logs in {logs})")
    return status


if __name__ == "__main__":
    sys.exit(main())
