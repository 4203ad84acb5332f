"""``python -m ingot check | translate | bench`` run as a user runs them: in a subprocess.

The kernels are written to a temporary folder; each test checks the exit status and what the
command prints (tables, the caret under the faulty column, the JSON report's schema, the
translations' entry points, the benchmark's table and chart).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

GOOD = """#include <metal_stdlib>
using namespace metal;
constant bool use_bias [[function_constant(0)]];
kernel void axpy(const device float* x [[buffer(0)]],
                 device float* y [[buffer(1)]],
                 constant float& a [[buffer(2)]],
                 threadgroup float* scratch [[threadgroup(0)]],
                 uint i [[thread_position_in_grid]]) {
    y[i] = a * x[i] + (use_bias ? BIAS : 0.0f);
}
[[max_total_threads_per_threadgroup(128)]]
kernel void count(device atomic_uint* n [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(n, 1u, memory_order_relaxed);
}
"""

# Line 5 uses a name that does not exist: the C++ compiler (CPU) rejects it at column 12.
BAD_NAME = """#include <metal_stdlib>
using namespace metal;
kernel void broken(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float v = x[i];
    x[i] = v * undefined_scale;
}
"""

# An unbalanced brace: the translator itself rejects it, for every target.
BAD_SYNTAX = """#include <metal_stdlib>
using namespace metal;
kernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    x[i] = 1.0f;
}}
"""


def run_cli(*args, env=None, timeout=600):
    e = dict(os.environ)
    e.setdefault("INGOT_PROGRESS", "0")
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "ingot", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=e)


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, src in (("good.metal", GOOD), ("bad_name.metal", BAD_NAME), ("bad_syntax.metal", BAD_SYNTAX)):
        p = tmp_path / name
        p.write_text(src)
        out[name] = p
    return out


GOOD_ARGS = ("-D", "BIAS=1.5f", "--constant", "use_bias=true")


def test_check_accepts_a_good_kernel_and_prints_its_tables(files):
    r = run_cli("check", files["good.metal"], *GOOD_ARGS)
    assert r.returncode == 0, r.stdout + r.stderr
    out = r.stdout
    assert "cuda translation" in out and "cpu translation" in out and "cpu compile" in out
    assert "kernel axpy" in out and "kernel count" in out
    # The parameter table: index, role, dtype and access of each parameter.
    rows = {line.split()[1]: line.split() for line in out.splitlines()
            if line.strip().startswith(("0 ", "1 ", "2 ", "- "))}
    assert rows["x"][2:6] == ["0", "buffer", "float32", "read"], rows["x"]
    assert rows["y"][2:6] == ["1", "buffer", "float32", "read_write"], rows["y"]
    assert rows["a"][2:6] == ["2", "bytes", "float32", "read"], rows["a"]
    assert rows["scratch"][2:4] == ["0", "threadgroup"], rows["scratch"]
    assert "dynamic: scratch [[threadgroup(0)]]" in out
    assert "use_bias (bool, index 0) = true" in out
    assert "declared: 128" in out
    assert out.rstrip().splitlines()[-1].startswith("ok: 2 kernel(s)")


def test_check_reports_the_users_line_and_a_caret(files):
    r = run_cli("check", files["bad_name.metal"])
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    path = str(files["bad_name.metal"])
    # The CPU's diagnostic (g++ gives a column; NVRTC's, shown too where CUDA is present, has none).
    head = [i for i, line in enumerate(lines)
            if line.startswith(f"{path}:5:") and ": error: " in line and "[cpu compile]" in line]
    assert head, r.stdout
    i = head[0]
    column = int(lines[i].split(":")[2])
    assert "undefined_scale" in lines[i]
    assert "[cpu compile]" in lines[i]
    assert lines[i + 1] == " 5 |     x[i] = v * undefined_scale;"
    caret = lines[i + 2]
    assert caret.startswith("   | ") and caret.endswith("^")
    assert caret.index("^") - len("   | ") == column - 1
    assert BAD_NAME.splitlines()[4][column - 1:].startswith("undefined_scale")
    assert "FAILED" in lines[-1]


def test_check_merges_one_error_of_every_target(files):
    r = run_cli("check", files["bad_syntax.metal"])
    assert r.returncode == 1, r.stdout + r.stderr
    errors = [line for line in r.stdout.splitlines() if ": error: " in line and ":5:" in line]
    assert len(errors) == 1, r.stdout
    assert "cuda translation" in errors[0] and "cpu translation" in errors[0]


def test_check_json_schema(files, monkeypatch):
    monkeypatch.delenv("INGOT_CPU_ENGINE", raising=False)
    r = run_cli("check", files["good.metal"], *GOOD_ARGS, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert set(rep) == {"file", "ok", "targets", "kernels", "function_constants", "diagnostics"}
    assert rep["ok"] is True and rep["diagnostics"] == []
    assert {t["name"] for t in rep["targets"]} >= {"cuda translation", "cpu translation", "cpu compile"}
    for t in rep["targets"]:
        assert set(t) == {"name", "kind", "target", "device", "ok", "seconds"}
        assert t["kind"] in ("translation", "compile") and isinstance(t["seconds"], float)
    axpy, count = rep["kernels"]
    assert set(axpy) == {"name", "file", "line", "parameters", "threadgroup_memory", "function_constants",
                         "max_total_threads_per_threadgroup", "cpu_engine"}
    assert axpy["cpu_engine"] == "work-item loops"  # it has threadgroup memory
    assert (axpy["name"], axpy["line"]) == ("axpy", 4)
    p = {q["name"]: q for q in axpy["parameters"]}
    assert set(p["x"]) == {"name", "index", "role", "dtype", "access", "type", "position"}
    assert (p["y"]["index"], p["y"]["role"], p["y"]["dtype"], p["y"]["access"]) == (1, "buffer", "float32", "read_write")
    assert p["i"]["role"] == "builtin (thread_position_in_grid)" and p["i"]["index"] is None
    assert axpy["threadgroup_memory"] == {"dynamic": [{"name": "scratch", "index": 0}], "static_declarations": 0}
    assert rep["function_constants"] == [{"name": "use_bias", "type": "bool", "index": 0, "line": 3, "value": True}]
    assert count["max_total_threads_per_threadgroup"]["declared"] == 128
    assert count["max_total_threads_per_threadgroup"]["cpu"] <= 128
    assert count["parameters"][0]["dtype"] == "uint32"

    bad = json.loads(run_cli("check", files["bad_name.metal"], "--json").stdout)
    assert bad["ok"] is False
    d = bad["diagnostics"][0]
    assert set(d) >= {"file", "line", "column", "severity", "message", "source_line", "targets"}
    assert (d["line"], d["severity"], d["source_line"]) == (5, "error", "    x[i] = v * undefined_scale;")


def test_defines_reach_the_preprocessor(files, tmp_path):
    src = tmp_path / "needs_define.metal"
    src.write_text("#ifndef TILE\n#error TILE must be defined\n#endif\n"
                   "kernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = TILE; }\n")
    without = run_cli("check", src)
    assert without.returncode == 1
    assert "TILE must be defined" in without.stdout
    with_define = run_cli("check", src, "-D", "TILE=4")
    assert with_define.returncode == 0, with_define.stdout
    t = run_cli("translate", src, "--target", "cpu", "-D", "TILE=4")
    assert t.returncode == 0 and "x[i] = 4;" in t.stdout


def test_include_dirs(tmp_path):
    inc = tmp_path / "include"
    inc.mkdir()
    (inc / "scale.h").write_text("inline float scale_of(float v) { return v * 3.0f; }\n")
    src = tmp_path / "k" / "uses_header.metal"
    src.parent.mkdir()
    src.write_text('#include <metal_stdlib>\n#include "scale.h"\nusing namespace metal;\n'
                   "kernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = scale_of(x[i]); }\n")
    assert run_cli("check", src).returncode == 1
    r = run_cli("check", src, "-I", inc)
    assert r.returncode == 0, r.stdout


def test_translate_both_targets(files):
    cuda = run_cli("translate", files["good.metal"], "--target", "cuda", *GOOD_ARGS)
    assert cuda.returncode == 0, cuda.stderr
    assert "__global__" in cuda.stdout and "axpy" in cuda.stdout
    assert "#define INGOT_TARGET_CUDA 1" in cuda.stdout
    cpu = run_cli("translate", files["good.metal"], "--target", "cpu", *GOOD_ARGS)
    assert cpu.returncode == 0, cpu.stderr
    assert "ingot_cpu_axpy" in cpu.stdout and "ingot_cpu_count" in cpu.stdout
    assert "#define INGOT_TARGET_CPU 1" in cpu.stdout and "__global__" not in cpu.stdout
    bad = run_cli("translate", files["bad_syntax.metal"], "--target", "cpu")
    assert bad.returncode == 1 and bad.stdout == ""
    assert f"{files['bad_syntax.metal']}:5:" in bad.stderr and "^" in bad.stderr
    usage = run_cli("translate", files["good.metal"], "--target", "opencl")
    assert usage.returncode == 2 and "invalid choice" in usage.stderr


def test_check_usage_errors(tmp_path):
    assert run_cli("check", tmp_path / "missing.metal").returncode == 1
    r = run_cli("check", tmp_path / "missing.metal", "--constant", "novalue")
    assert r.returncode == 1 and "NAME=VALUE" in r.stderr


def _bench(tmp_path, env=None):
    out = tmp_path / "results"
    r = run_cli("bench", "--quick", "--size", "4096", "--matrix-size", "32", "--device", "cpu", "--out", out,
                env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return r, out


def test_bench_quick_on_the_cpu(tmp_path):
    r, out = _bench(tmp_path)
    lines = r.stdout.splitlines()
    header = lines[0].split()
    assert header[:4] == ["device", "case", "size", "ingot"] and "numpy" in header
    cases = {line.split()[1] for line in lines[2:] if line.startswith("cpu ")}
    assert {"add", "exp", "sum", "sort", "matmul", "saxpy"} <= cases, r.stdout
    rep = json.loads(next(out.glob("ingot-bench-*.json")).read_text())
    assert len(rep["rows"]) >= 9
    for row in rep["rows"]:
        assert row["ingot_s"] > 0 and row["numpy_s"] > 0
        assert row["speedup"] == pytest.approx(row["numpy_s"] / row["ingot_s"])
    # Progress: a bar or a counter on stderr, never on stdout.
    assert r.stderr.strip() and "[1/" not in r.stdout
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "matplotlib is not installed" in r.stdout
    else:
        png = next(out.glob("ingot-bench-*.png"))
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bench_without_matplotlib_says_so(tmp_path):
    shim = tmp_path / "shim" / "matplotlib"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("raise ImportError('matplotlib hidden by the test')\n")
    path = os.pathsep.join([str(shim.parent), os.environ.get("PYTHONPATH", "")])
    r, out = _bench(tmp_path, env={"PYTHONPATH": path})
    assert "matplotlib is not installed: no chart (pip install matplotlib to get one)" in r.stdout
    assert not list(out.glob("*.png"))


def test_info_still_works():
    r = run_cli("info")
    assert r.returncode == 0 and "devices:" in r.stdout and "cpu" in r.stdout


def test_diagnostics_of_one_entrys_compile_keep_their_location():
    # On CUDA an entry compiles alone and its error starts with the entry's name.
    from ingot._cli_check import parse_diagnostics

    for msg in ("kernel `scale`: k.metal:5: error: identifier \"s2\" is undefined\n    x[i] = s2;\n",
                "kernel `scale`: k.metal(5): error: identifier \"s2\" is undefined"):
        (d,) = parse_diagnostics(msg)
        assert (d["file"], d["line"], d["severity"]) == ("k.metal", 5, "error"), d
        assert d["message"] == 'identifier "s2" is undefined'
