#!/usr/bin/env python3
"""Runs SciPy's and scikit-learn's own array API tests with ingot as the namespace (issue #35).

The suites are the installed packages' own tests (``--pyargs``), never copies; ingot joins their
hard-coded backend lists through the plugin ``scripts/clients/ingot_backend.py``. With
``--strict`` the same tests also run on array-api-strict, and a failure counts only when
array-api-strict passes the same test (the target: no failure the reference does not share).

    python scripts/client_suites.py                      # the CI selection (see CI_SCIPY)
    python scripts/client_suites.py --scipy all --sklearn --strict --jobs 14
    INGOT_DEVICE=cuda python scripts/client_suites.py --scipy all --sklearn

Exit status 1 when a counted failure remains. ``--json FILE`` writes the counts and the failing
test ids.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PLUGIN_DIR = os.path.join(ROOT, "scripts", "clients")

ALL_SCIPY = ["_lib", "special", "fft", "stats", "signal", "ndimage", "cluster", "integrate",
             "optimize", "differentiate", "interpolate", "spatial", "linalg", "constants"]
# What CI runs on 2 cores within its time limit: the modules whose array API tests take a few
# minutes at most (stats and signal, the largest, run on the device host and by hand).
CI_SCIPY = ["_lib", "fft", "ndimage", "cluster", "integrate", "differentiate", "interpolate",
            "spatial", "linalg", "constants", "optimize", "special"]


def run_pytest(args: list, backends: str, jobs: int, junit: str, cwd: str) -> tuple:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [PLUGIN_DIR, os.path.join(ROOT, "python")] + [p for p in [env.get("PYTHONPATH")] if p])
    env["INGOT_CLIENT_BACKENDS"] = backends
    env.setdefault("SCIPY_ARRAY_API", "1")
    cmd = [sys.executable, "-m", "pytest", "-p", "ingot_backend", "-q", "-p", "no:cacheprovider",
           "--tb=no", "-rN", f"--junitxml={junit}", *args]
    if jobs > 1:
        cmd += ["-n", str(jobs)]
    t = time.time()
    p = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    return p, time.time() - t


def outcomes(junit: str) -> dict:
    """test id -> passed / failed / error / skipped / xfailed, from the JUnit XML report."""
    import xml.etree.ElementTree as ET

    out = {}
    if not os.path.exists(junit):
        return out
    for case in ET.parse(junit).iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed"
            elif child.tag == "skipped":
                state = "xfailed" if "xfail" in (child.get("type") or "") else "skipped"
        out[tid] = state
    return out


def suite(name: str, args: list, jobs: int, strict: bool, tmp: str) -> dict:
    backends = "ingot,array_api_strict" if strict else "ingot"
    junit = os.path.join(tmp, f"{name.replace('.', '_')}.xml")
    p, secs = run_pytest(args, backends, jobs, junit, tmp)
    res = outcomes(junit)
    ours = {k: v for k, v in res.items() if re.search(r"[\[-]ingot[\]-]", k)}
    ref = {k: v for k, v in res.items() if re.search(r"[\[-]array_api_strict[\]-]", k)}
    failed = sorted(k for k, v in ours.items() if v == "failed")
    shared = [k for k in failed
              if ref.get(re.sub(r"([\[-])ingot([\]-])", r"\1array_api_strict\2", k)) == "failed"]
    counts = {s: sum(v == s for v in ours.values()) for s in ("passed", "failed", "skipped", "xfailed")}
    if not res:
        tail = (p.stdout + p.stderr)[-3000:]
        return {"name": name, "seconds": secs, "error": tail, "counted": ["<no report>"]}
    return {"name": name, "seconds": round(secs, 1), **counts,
            "failed_also_strict": len(shared) if strict else None,
            "counted": [k for k in failed if k not in shared]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scipy", default="ci", help="comma-separated SciPy modules, 'all', 'ci' or 'none'")
    ap.add_argument("--sklearn", action="store_true", help="also scikit-learn's array API tests")
    ap.add_argument("--strict", action="store_true", help="compare with array-api-strict")
    ap.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("-k", default=None, help="pytest -k expression (narrow a run)")
    ap.add_argument("--known", default=os.path.join(PLUGIN_DIR, "known_failures.txt"),
                    help="failures not counted (module and test id per line, with the reason)")
    a = ap.parse_args()
    mods = {"all": ALL_SCIPY, "ci": CI_SCIPY, "none": []}.get(a.scipy) or a.scipy.split(",")
    tmp = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"ingot-clients-{os.getpid()}")
    os.makedirs(tmp, exist_ok=True)
    extra = ["-k", a.k] if a.k else []
    results = []
    for m in mods:
        results.append(suite(f"scipy.{m}", ["--pyargs", f"scipy.{m}", "-m", "array_api_backends", *extra],
                             a.jobs, a.strict, tmp))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "counted"}), flush=True)
    if a.sklearn:
        # scikit-learn parametrizes its array API tests by namespace name; "ingot" selects ours.
        results.append(suite("sklearn", ["--pyargs", "sklearn", "-k", "ingot" + (f" and ({a.k})" if a.k else "")],
                             a.jobs, a.strict, tmp))
        print(json.dumps({k: v for k, v in results[-1].items() if k != "counted"}), flush=True)
    known = set()
    if a.known and os.path.exists(a.known):
        with open(a.known) as f:
            known = {tuple(line.split()[:2]) for line in f if line.strip() and not line.startswith("#")}
    for r in results:
        r["known"] = [t for t in r.get("counted", []) if (r["name"], t) in known]
        r["counted"] = [t for t in r.get("counted", []) if (r["name"], t) not in known]
    counted = [t for r in results for t in r.get("counted", [])]
    for t in (t for r in results for t in r["known"]):
        print("known (not counted):", t)
    for t in counted:
        print("FAILED", t)
    total = {s: sum(r.get(s) or 0 for r in results) for s in ("passed", "failed", "skipped", "xfailed")}
    print(f"total: {total}, counted failures: {len(counted)}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": os.environ.get("INGOT_DEVICE", "cpu"), "results": results,
                       "total": total}, f, indent=1)
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main())
