"""``python -m ingot check`` and ``python -m ingot translate``.

``check FILE.metal`` translates the file for every target (CUDA C++ and host C++, even where the
device is absent), compiles it on every available device (one per kind: Metal, CUDA, CPU),
prints one table per entry point (parameters, threadgroup memory, function constants, maximum
threads per threadgroup) and every diagnostic with its file, line, column, the source line and a
caret. It exits with 0 when every target accepted the file and 1 otherwise, so it serves in CI.
``--json`` prints the same as one JSON object (schema in :func:`run_check`).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from typing import Any, Dict, List, Optional, Sequence

TARGETS = ("cuda", "cpu")

# `file:line:col: error: message` (ingot-msl, g++, clang, Metal) and `file(line): error: message`
# (NVRTC).
_DIAG = re.compile(
    r"^(?P<file>[^\s:(][^:(]*?):(?P<line>\d+):(?:(?P<col>\d+):)?\s*(?P<sev>fatal error|error|warning|note):\s*(?P<msg>.*)$"
)
_ENTRY_PREFIX = re.compile(r"^kernel `[^`]*`:\s*")
_DIAG_NVRTC = re.compile(r"^(?P<file>[^\s(][^(]*?)\((?P<line>\d+)\):\s*(?P<sev>error|warning|note):\s*(?P<msg>.*)$")


def parse_value(text: str) -> Any:
    """A ``--constant`` value: ``true``/``false``, an integer, or a float."""
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    try:
        return int(t, 0)
    except ValueError:
        pass
    try:
        return float(t.rstrip("fF") if not t.lower().startswith(("inf", "nan")) else t)
    except ValueError:
        raise ValueError(f"--constant value {text!r} is not true, false, an integer or a number") from None


def split_pairs(items: Sequence[str], what: str, need_value: bool) -> Dict[str, str]:
    """``NAME=VALUE`` strings as a dict (``NAME`` alone gives ``""`` unless a value is needed)."""
    out: Dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not name or (need_value and not sep):
            raise ValueError(f"{what} {item!r} is not NAME=VALUE")
        out[name.strip()] = value
    return out


def parse_diagnostics(message: str) -> List[Dict[str, Any]]:
    """The located diagnostics of a compiler message (errors and warnings; notes are attached
    to the diagnostic before them). Lines that name no location are kept in ``detail``."""
    diags: List[Dict[str, Any]] = []
    for raw in message.splitlines():
        # An error raised by one entry's compile starts with that entry: `kernel `k`: file:5: ...`.
        text = _ENTRY_PREFIX.sub("", raw.strip())
        m = _DIAG.match(text) or _DIAG_NVRTC.match(text)
        if m is None:
            if diags and raw.strip() and not raw.lstrip().startswith(("|", "^")) and not re.match(r"^\s*\d+\s*\|", raw):
                diags[-1].setdefault("detail", []).append(raw.rstrip())
            continue
        sev = m.group("sev").replace("fatal error", "error")
        d = {
            "file": m.group("file"),
            "line": int(m.group("line")),
            "column": int(m.group("col")) if m.groupdict().get("col") else None,
            "severity": sev,
            "message": m.group("msg").strip(),
        }
        if sev == "note" and diags:
            diags[-1].setdefault("notes", []).append(d)
        else:
            diags.append(d)
    return diags


class _Sources:
    """Reads lines of the user's files (the checked file and headers) for the caret display."""

    def __init__(self, main_path: str, main_name: str, include_dirs: Sequence[str]):
        self.main_path = main_path
        self.main_name = main_name
        self.dirs = [os.path.dirname(os.path.abspath(main_path))] + list(include_dirs)
        self.cache: Dict[str, Optional[List[str]]] = {}

    def _path(self, file: str) -> Optional[str]:
        if file in (self.main_name, self.main_path):
            return self.main_path
        if os.path.isabs(file):
            return file if os.path.isfile(file) else None
        for d in self.dirs:
            p = os.path.join(d, file)
            if os.path.isfile(p):
                return p
        return None

    def line(self, file: str, line: int) -> Optional[str]:
        path = self._path(file)
        if path is None:
            return None
        if path not in self.cache:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    self.cache[path] = f.read().splitlines()
            except OSError:
                self.cache[path] = None
        lines = self.cache[path]
        if lines is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]


def _param_rows(params: Sequence[Any]) -> List[Dict[str, Any]]:
    rows = []
    for p in params:
        rows.append({
            "name": p.name,
            "index": p.index,
            "role": p.kind if p.kind != "builtin" else f"builtin ({p.role})",
            "dtype": "any" if p.any_dtype else (str(p.dtype) if p.dtype is not None else "-"),
            "access": p.access,
            "type": p.type_name,
            "position": p.position,
        })
    return rows


def _collect(message: str, label: str, into: List[Dict[str, Any]], sources: _Sources) -> None:
    diags = parse_diagnostics(message)
    if not diags:
        # A message without a location (no compiler found, device failure...): kept whole.
        diags = [{"file": None, "line": None, "column": None, "severity": "error",
                  "message": message.strip()}]
    for d in diags:
        for existing in into:
            if all(existing.get(k) == d.get(k) for k in ("file", "line", "column", "severity", "message")):
                if label not in existing["targets"]:
                    existing["targets"].append(label)
                break
        else:
            d["targets"] = [label]
            d["source_line"] = sources.line(d["file"], d["line"]) if d["file"] and d["line"] else None
            into.append(d)


def run_check(path: str, include_dirs: Sequence[str] = (), defines: Optional[Dict[str, str]] = None,
              constants: Optional[Dict[str, Any]] = None, devices: Optional[Sequence[Any]] = None,
              math_mode: str = "precise") -> Dict[str, Any]:
    """Checks the MSL file at ``path``; returns the report ``--json`` prints::

        {"file": str, "ok": bool,
         "targets": [{"name": "cuda translation" | "cpu translation" | "<device> compile",
                      "kind": "translation" | "compile", "target": str, "device": str | None,
                      "ok": bool, "seconds": float}],
         "kernels": [{"name", "file", "line",
                      "parameters": [{"name", "index", "role", "dtype", "access", "type", "position"}],
                      "threadgroup_memory": {"dynamic": [{"name", "index"}], "static_declarations": int},
                      "function_constants": [{"name", "type", "index", "line", "value"}],
                      "max_total_threads_per_threadgroup": {"declared": int | None, "<device>": int},
                      "cpu_engine": "loop ..." | "work-item loops" | "fibers (why)" | None}],
         "function_constants": [...same as above...],
         "diagnostics": [{"file", "line", "column", "severity", "message", "source_line",
                          "targets": [str], "notes"?: [...], "detail"?: [str]}]}
    """
    import ingot

    with open(path, encoding="utf-8") as f:
        source = f.read()
    file_name = path
    dirs = [os.path.dirname(os.path.abspath(path))] + [os.fspath(d) for d in include_dirs]
    defines = dict(defines or {})
    constants = dict(constants or {})
    sources = _Sources(path, file_name, dirs)
    options = dict(include_dirs=dirs, defines=defines, constants=constants, file_name=file_name,
                   math_mode=math_mode)
    report: Dict[str, Any] = {"file": path, "ok": True, "targets": [], "kernels": [],
                              "function_constants": [], "diagnostics": []}
    reflection = None
    cpu_modes: Dict[str, Any] = {}
    for target in TARGETS:
        label = f"{target} translation"
        t0 = time.perf_counter()
        try:
            tr = ingot.translate(source, target, **options)
            ok = True
            if target == "cpu":
                cpu_modes = {e["name"]: e.get("cpu_mode") for e in tr.entries}
            if reflection is None:
                reflection = tr
        except (ingot.CompileError, ingot.KernelArgumentError) as e:
            ok = False
            _collect(str(e), label, report["diagnostics"], sources)
        report["targets"].append({"name": label, "kind": "translation", "target": target, "device": None,
                                  "ok": ok, "seconds": time.perf_counter() - t0})
    if devices is None:
        seen = set()
        devices = []
        for d in ingot.devices():
            if d.kind not in seen:
                seen.add(d.kind)
                devices.append(d)
    max_threads: Dict[str, Dict[str, int]] = {}
    for dev in devices:
        label = f"{dev} compile"
        t0 = time.perf_counter()
        ok = True
        try:
            lib = ingot.compile(source, device=dev, **options)
            for name in lib.functions:
                k = lib.function(name)
                max_threads.setdefault(name, {})[str(dev)] = k.max_total_threads_per_threadgroup
        except (ingot.CompileError, ingot.KernelArgumentError, ingot.DeviceError) as e:
            ok = False
            _collect(str(e), label, report["diagnostics"], sources)
        report["targets"].append({"name": label, "kind": "compile", "target": dev.kind, "device": str(dev),
                                  "ok": ok, "seconds": time.perf_counter() - t0})
    constants_table = []
    if reflection is not None:
        for c in reflection.function_constants:
            value = constants.get(c["name"], constants.get(str(c["index"])) if c["index"] is not None else None)
            constants_table.append({**c, "value": value})
        for e in reflection.entries:
            params = e["parameters"]
            report["kernels"].append({
                "name": e["name"],
                "file": e["file"],
                "line": e["line"],
                "parameters": _param_rows(params),
                "threadgroup_memory": {
                    "dynamic": [{"name": p.name, "index": p.index} for p in params if p.kind == "threadgroup"],
                    "static_declarations": e["static_threadgroup_decls"],
                },
                "function_constants": constants_table,
                "max_total_threads_per_threadgroup": {"declared": e["max_total_threads_per_threadgroup"],
                                                      **max_threads.get(e["name"], {})},
                "cpu_engine": cpu_modes.get(e["name"]),
            })
    report["function_constants"] = constants_table
    report["ok"] = all(t["ok"] for t in report["targets"]) and not any(
        d["severity"] == "error" for d in report["diagnostics"])
    return report


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> List[str]:
    cells = [[("-" if v is None else str(v)) for v in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    fmt = "  ".join("{:<%d}" % w for w in widths)
    out = [fmt.format(*headers).rstrip(), fmt.format(*["-" * w for w in widths]).rstrip()]
    out += [fmt.format(*r).rstrip() for r in cells]
    return out


def format_diagnostic(d: Dict[str, Any]) -> List[str]:
    """A diagnostic as a compiler prints it: location, message, the source line and a caret."""
    where = ", ".join(d["targets"])
    if d["file"] is None:
        return [f"error: [{where}] {d['message']}"]
    loc = f"{d['file']}:{d['line']}" + (f":{d['column']}" if d["column"] else "")
    out = [f"{loc}: {d['severity']}: {d['message']}  [{where}]"]
    src = d.get("source_line")
    if src is not None:
        num = str(d["line"])
        out.append(f" {num} | {src}")
        if d["column"]:
            # The caret under the column (tabs kept so that it lines up in a terminal).
            pad = "".join(c if c == "\t" else " " for c in src[: d["column"] - 1])
            out.append(f" {' ' * len(num)} | {pad}^")
    for n in d.get("notes", []):
        nloc = f"{n['file']}:{n['line']}" + (f":{n['column']}" if n["column"] else "")
        out.append(f"{nloc}: note: {n['message']}")
    for line in d.get("detail", [])[:20]:
        out.append(f"    {line.strip()}")
    return out


def format_report(r: Dict[str, Any]) -> str:
    """The human-readable report of :func:`run_check`."""
    out: List[str] = [f"ingot check {r['file']}", ""]
    out += _table(["target", "result", "time"],
                  [[t["name"], "ok" if t["ok"] else "FAILED", f"{t['seconds']:.2f} s"] for t in r["targets"]])
    for k in r["kernels"]:
        out += ["", f"kernel {k['name']}  ({k['file']}:{k['line']})"]
        params = k["parameters"]
        out += ["  " + line for line in _table(
            ["#", "parameter", "index", "role", "dtype", "access", "type"],
            [[p["position"], p["name"], p["index"], p["role"], p["dtype"], p["access"], p["type"]] for p in params])]
        tg = k["threadgroup_memory"]
        dyn = ", ".join(f"{d['name']} [[threadgroup({d['index']})]]" for d in tg["dynamic"]) or "none"
        out.append(f"  threadgroup memory: dynamic: {dyn}; static declarations: {tg['static_declarations']}")
        if k.get("cpu_engine"):
            out.append(f"  cpu engine: {k['cpu_engine']}")
        fcs = k["function_constants"]
        if fcs:
            items = ", ".join(
                f"{c['name']} ({c['type']}, index {c['index'] if c['index'] is not None else '-'}) = "
                + ("unset" if c["value"] is None else str(c["value"]).lower() if isinstance(c["value"], bool) else str(c["value"]))
                for c in fcs)
            out.append(f"  function constants: {items}")
        else:
            out.append("  function constants: none")
        mt = dict(k["max_total_threads_per_threadgroup"])
        declared = mt.pop("declared")
        per_dev = ", ".join(f"{d}: {v}" for d, v in mt.items()) or "no device compiled it"
        out.append(f"  max threads per threadgroup: {per_dev} (declared: {declared if declared is not None else 'none'})")
    if r["diagnostics"]:
        out.append("")
        for d in r["diagnostics"]:
            out += format_diagnostic(d)
    errors = sum(1 for d in r["diagnostics"] if d["severity"] == "error")
    failed = [t["name"] for t in r["targets"] if not t["ok"]]
    out.append("")
    if r["ok"]:
        out.append(f"ok: {len(r['kernels'])} kernel(s), every target accepted {r['file']}")
    else:
        out.append(f"FAILED: {errors} error(s); failed: {', '.join(failed) or 'none'}")
    return "\n".join(out)


def check_main(args: Any) -> int:
    """``python -m ingot check``."""
    try:
        defines = split_pairs(args.define, "-D", need_value=False)
        constants = {k: parse_value(v) for k, v in split_pairs(args.constant, "--constant", True).items()}
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if not os.path.isfile(args.file):
        print(f"error: {args.file}: no such file", file=sys.stderr)
        return 1
    report = run_check(args.file, include_dirs=args.include, defines=defines, constants=constants,
                       math_mode="fast" if args.fast_math else "precise")
    if args.json:
        print(json.dumps(report, indent=2, default=str))
    else:
        print(format_report(report))
    return 0 if report["ok"] else 1


def translate_main(args: Any) -> int:
    """``python -m ingot translate``: prints the translation of FILE for ``--target``."""
    import ingot

    try:
        defines = split_pairs(args.define, "-D", need_value=False)
        constants = {k: parse_value(v) for k, v in split_pairs(args.constant, "--constant", True).items()}
        with open(args.file, encoding="utf-8") as f:
            source = f.read()
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    dirs = [os.path.dirname(os.path.abspath(args.file))] + list(args.include)
    try:
        t = ingot.translate(source, args.target, include_dirs=dirs, defines=defines, constants=constants,
                            file_name=args.file, math_mode="fast" if args.fast_math else "precise")
    except (ingot.CompileError, ingot.KernelArgumentError) as e:
        sources = _Sources(args.file, args.file, dirs)
        diags: List[Dict[str, Any]] = []
        _collect(str(e), f"{args.target} translation", diags, sources)
        for d in diags:
            print("\n".join(format_diagnostic(d)), file=sys.stderr)
        return 1
    sys.stdout.write(t.text)
    return 0


def add_arguments(check: Any, translate: Any) -> None:
    """The options of the two sub-commands."""
    for p in (check, translate):
        p.add_argument("file", help="the .metal file")
        p.add_argument("-I", dest="include", action="append", default=[], metavar="DIR",
                       help="a folder searched by #include (repeatable; the file's folder is always searched)")
        p.add_argument("-D", dest="define", action="append", default=[], metavar="NAME[=VALUE]",
                       help="define a macro before the file (repeatable)")
        p.add_argument("--constant", action="append", default=[], metavar="NAME=VALUE",
                       help="a function constant's value (repeatable): true, false, an integer or a number")
        p.add_argument("--fast-math", action="store_true", help="math_mode='fast'")
    check.add_argument("--json", action="store_true", help="print the report as JSON")
    translate.add_argument("--target", required=True, choices=TARGETS, help="cuda or cpu")

