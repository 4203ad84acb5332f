"""Real upstream GPU kernels on ingot's CPU engine, next to the NumPy operation doing the same job.

The kernels are not part of this repository: pass the folders you fetched (any subset):

    python benches/bench_real_kernels.py --mlx ~/src/mlx --candle ~/src/candle \
        --llmswift ~/src/llm.swift [--samples 5] [--quick] [--device cpu|cuda]

Each case compiles the upstream ``.metal`` file unchanged, launches the kernel with its upstream
dispatch (grid, threadgroup size, arguments and function constants as the library's host code
sets them), checks the output against NumPy in float64 once (outputs poisoned with NaN first),
then times both. Reported per case: the engine mode the kernel got (``work-item loops``,
``fibers``, ``loop``), the median time of the kernel and of NumPy, the ratio NumPy time / kernel
time (above 1: the kernel is faster) and the kernel's bandwidth (bytes it must move / time).
The summary gives the median ratio, the slowest case and the reductions with barriers.

Writes ``benches/results/real-kernels-<device>-<date>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import statistics
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _timing import timeit  # noqa: E402

import ingot as ig  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
# Entry point -> its CPU engine mode, from each Source's translation.
MODES: Dict[str, str] = {}


@dataclass
class Case:
    suite: str
    name: str
    kernel: str  # the entry point, for the mode line
    run: Callable[[], None]  # one launch (outputs preallocated)
    numpy: Callable[[], None]  # NumPy doing the same job
    check: Callable[[], None]  # raises when the kernel's output is wrong
    nbytes: int  # bytes the job must read and write
    barrier_reduction: bool = False
    extra: Dict[str, str] = field(default_factory=dict)


def _modes(lib_text: str) -> Dict[str, str]:
    out = {}
    for line in lib_text.splitlines():
        if line.startswith("// ingot cpu engine: "):
            name, mode = line[len("// ingot cpu engine: "):].split(": ", 1)
            out[name] = mode
    return out


class Source:
    """One upstream .metal file: compiled once, its CPU engine modes read from the translation."""

    def __init__(self, path: Path, include_dirs: List[Path], constants=None):
        self.path = path
        text = path.read_text()
        self.lib = ig.compile(text, include_dirs=[str(d) for d in include_dirs],
                              file_name=str(path))
        try:
            tr = ig.translate(text, target="cpu", include_dirs=[str(d) for d in include_dirs],
                              file_name=str(path), constants=constants or {})
            self.modes = _modes(tr.text)
            MODES.update(self.modes)
        except Exception as e:  # the mode is informative; the benchmark still runs
            self.modes = {}
            print(f"  (mode lines unavailable for {path.name}: {e})")

    def function(self, name, constants=None):
        return self.lib.function(name, constants=constants) if constants else self.lib.function(name)


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def _close(got, want, rtol=2e-4, atol=2e-5):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol)


def _softmax64(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_softmax(x, out):
    np.subtract(x, x.max(-1, keepdims=True), out=out)
    np.exp(out, out=out)
    np.divide(out, out.sum(-1, keepdims=True), out=out)


def mlx_cases(root: Path, rng, quick: bool) -> List[Case]:
    kdir = root / "mlx" / "backend" / "metal" / "kernels"
    inc = [root]
    cases: List[Case] = []
    rows = 256 if quick else 2048

    # softmax: block (axis <= 4096) and looped (axis > 4096), as softmax.cpp dispatches them.
    sm = Source(kdir / "softmax.metal", inc)
    for axis, looped in ((1024, False), (8192, True)):
        name = ("looped_" if looped else "block_") + "softmax_float32"
        k = sm.function(name)
        x = _f32(rng, rows // (8 if looped else 1), axis)
        n_rows = x.shape[0]
        if looped:
            tg = k.max_total_threads_per_threadgroup
        else:
            tg = 32 * (((axis + 3) // 4 + 31) // 32)
        xi = ig.asarray(x)
        out = ig.asarray(np.full_like(x, np.nan))
        ref = np.empty_like(x)

        def run(k=k, xi=xi, out=out, axis=axis, n=n_rows, tg=tg):
            k(xi, out, axis, grid=(n * tg,), threadgroup=(tg,))

        cases.append(Case("MLX", f"softmax ({'looped' if looped else 'block'}) {n_rows}x{axis}",
                          name, run, lambda x=x, ref=ref: _np_softmax(x, ref),
                          lambda out=out, x=x: _close(out, _softmax64(x)), 2 * x.nbytes,
                          barrier_reduction=True))

    # rms_norm (has_w = true), rms_single_row for axis <= 4096.
    rms = Source(kdir / "rms_norm.metal", inc, constants={"has_w": True})
    axis = 4096
    k = rms.function("rmsfloat32", constants={"has_w": True})
    x = _f32(rng, rows, axis)
    w = _f32(rng, axis)
    tg = 32 * (((axis + 3) // 4 + 31) // 32)
    xi, wi = ig.asarray(x), ig.asarray(w)
    out = ig.asarray(np.full_like(x, np.nan))
    eps = 1e-5
    ref = np.empty_like(x)

    def rms_np(x=x, w=w, ref=ref):
        np.multiply(x, 1 / np.sqrt((x * x).mean(-1, keepdims=True) + eps), out=ref)
        np.multiply(ref, w, out=ref)

    def rms_check(out=out, x=x, w=w):
        x64 = x.astype(np.float64)
        _close(out, x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps) * w)

    cases.append(Case("MLX", f"rms_norm {rows}x{axis}", "rmsfloat32",
                      lambda: k(xi, wi, out, eps, axis, 1, grid=(rows * tg,), threadgroup=(tg,)),
                      rms_np, rms_check, 2 * x.nbytes, barrier_reduction=True))

    # layer_norm (has_w = true): layer_norm_single_row, 8 reads a thread, axis <= 6656.
    ln = Source(kdir / "layer_norm.metal", inc, constants={"has_w": True})
    axis = 4096
    k2 = ln.function("layer_normfloat32", constants={"has_w": True})
    b = _f32(rng, axis)
    tg2 = 32 * (((axis + 7) // 8 + 31) // 32)
    bi = ig.asarray(b)
    out2 = ig.asarray(np.full_like(x, np.nan))
    ref2 = np.empty_like(x)

    def ln_np(x=x, w=w, b=b, ref=ref2):
        mu = x.mean(-1, keepdims=True)
        np.subtract(x, mu, out=ref)
        np.multiply(ref, 1 / np.sqrt((ref * ref).mean(-1, keepdims=True) + eps), out=ref)
        np.multiply(ref, w, out=ref)
        np.add(ref, b, out=ref)

    def ln_check(out=out2, x=x, w=w, b=b):
        x64 = x.astype(np.float64)
        mu = x64.mean(-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
        _close(out, (x64 - mu) / np.sqrt(var + eps) * w + b)

    cases.append(Case("MLX", f"layer_norm {rows}x{axis}", "layer_normfloat32",
                      lambda: k2(xi, wi, bi, out2, eps, axis, 1, 1, grid=(rows * tg2,),
                                 threadgroup=(tg2,)),
                      ln_np, ln_check, 2 * x.nbytes, barrier_reduction=True))

    # Reductions: all_reduce (two passes, as reduce.cpp's all_reduce_dispatch) and
    # row_reduce_simple (rows of 4096, out grid rows / N_WRITES).
    red = Source(kdir / "reduce.metal", inc)
    n = (1 << 22) if quick else (1 << 24)
    v = _f32(rng, n)
    vi = ig.asarray(v)
    n_rows = 1024 * 4 if v.nbytes > (1 << 26) else 32 * 4
    tg2nd = 1024 if v.nbytes > (1 << 26) else 32
    row_size = (n + n_rows - 1) // n_rows
    tg = min((row_size + 3) // 4, 1024)
    tg = 32 * ((tg + 31) // 32)
    ka = red.function("all_reduce_sumfloat32")
    inter = ig.asarray(np.full(n_rows, np.nan, np.float32))
    total = ig.asarray(np.full(1, np.nan, np.float32))

    def all_run():
        ka(vi, inter, n, row_size, grid=(tg, n_rows, 1), threadgroup=(tg, 1, 1))
        ka(inter, total, n_rows, n_rows, grid=(tg2nd,), threadgroup=(tg2nd,))

    cases.append(Case("MLX", f"all_reduce sum {n}", "all_reduce_sumfloat32", all_run,
                      lambda: v.sum(),
                      lambda: _close(total, v.astype(np.float64).sum(), rtol=1e-4, atol=1e-2),
                      v.nbytes, barrier_reduction=True))

    rsz = 4096
    m = v.reshape(-1, rsz)
    kr = red.function("row_reduce_simple_sumfloat32")
    rout = ig.asarray(np.full(m.shape[0], np.nan, np.float32))
    tgr = min(1024, 32 * (((rsz + 3) // 4 + 31) // 32))
    ngroups = (m.shape[0] + 3) // 4
    rref = np.empty(m.shape[0], np.float32)
    cases.append(Case("MLX", f"row_reduce_simple sum {m.shape[0]}x{rsz}",
                      "row_reduce_simple_sumfloat32",
                      lambda: kr(vi, rout, rsz, m.shape[0], grid=(tgr, ngroups, 1),
                                 threadgroup=(tgr, 1, 1)),
                      lambda: m.sum(1, out=rref),
                      lambda: _close(rout, m.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3),
                      v.nbytes, barrier_reduction=True))
    return cases


def candle_cases(root: Path, rng, quick: bool) -> List[Case]:
    path = root / "candle-metal-kernels" / "src" / "metal_src" / "reduce.metal"
    src = Source(path, [path.parent])
    rows, cols = (256, 4096) if quick else (2048, 4096)
    x = _f32(rng, rows, cols)
    xi = ig.asarray(x)
    cases: List[Case] = []

    def width(k, work):
        return min(k.max_total_threads_per_threadgroup, 1 << max(0, (work // 2 - 1).bit_length()))

    k = src.function("softmax_f32")
    out = ig.asarray(np.full_like(x, np.nan))
    ref = np.empty_like(x)
    wd = width(k, cols)
    cases.append(Case("candle", f"softmax {rows}x{cols}", "softmax_f32",
                      lambda: k(x.size, cols, xi, out, groups=(rows,), threadgroup=(wd,)),
                      lambda: _np_softmax(x, ref), lambda: _close(out, _softmax64(x)),
                      2 * x.nbytes, barrier_reduction=True))

    k2 = src.function("rmsnorm_f32")
    alpha = _f32(rng, cols)
    ai = ig.asarray(alpha)
    out2 = ig.asarray(np.full_like(x, np.nan))
    eps = 1e-5
    ref2 = np.empty_like(x)

    def rms_np():
        np.multiply(x, 1 / np.sqrt((x * x).mean(-1, keepdims=True) + eps), out=ref2)
        np.multiply(ref2, alpha, out=ref2)

    def rms_check():
        x64 = x.astype(np.float64)
        _close(out2, x64 / np.sqrt((x64 * x64).mean(-1, keepdims=True) + eps) * alpha)

    cases.append(Case("candle", f"rmsnorm {rows}x{cols}", "rmsnorm_f32",
                      lambda: k2(x.size, cols, xi, out2, ai, eps, groups=(rows,),
                                 threadgroup=(wd,)),
                      rms_np, rms_check, 2 * x.nbytes, barrier_reduction=True))

    # fast_sum: contiguous rows reduced to one value each.
    k3 = src.function("fast_sum_f32")
    out3 = ig.asarray(np.full(rows, np.nan, np.float32))
    shape = np.array([rows, cols], np.uint32)
    ref3 = np.empty(rows, np.float32)
    cases.append(Case("candle", f"fast_sum {rows}x{cols}", "fast_sum_f32",
                      lambda: k3(x.size, 2, shape, cols, xi, out3, groups=(rows,),
                                 threadgroup=(wd,)),
                      lambda: x.sum(1, out=ref3),
                      lambda: _close(out3, x.astype(np.float64).sum(1), rtol=1e-4, atol=1e-3),
                      x.nbytes, barrier_reduction=True))
    return cases


def llmswift_cases(root: Path, rng, quick: bool) -> List[Case]:
    path = root / "dev" / "metal" / "DefaultLibrary.metal"
    src = Source(path, [path.parent])
    cases: List[Case] = []
    B, T, C = (4, 64, 768) if quick else (8, 256, 768)
    BT = B * T

    # softmax_forward_kernel4: a threadgroup of 64 per row, SIMD-group reductions through
    # threadgroup memory (softmax_forward4's dispatch).
    V = 8192
    x = _f32(rng, BT, V)
    xi = ig.asarray(x)
    out = ig.asarray(np.full_like(x, np.nan))
    ref = np.empty_like(x)
    k = src.function("softmax_forward_kernel4")
    bs = 64
    cases.append(Case("llm.swift", f"softmax (kernel4) {BT}x{V}", "softmax_forward_kernel4",
                      lambda: k(out, xi, BT, V, V, grid=(BT * bs,), threadgroup=(bs,),
                                threadgroup_memory={0: 4 * bs}),
                      lambda: _np_softmax(x, ref), lambda: _close(out, _softmax64(x)),
                      2 * x.nbytes, barrier_reduction=True))

    # layernorm_forward_kernel1: one thread a row.
    inp = _f32(rng, BT, C)
    w, b = _f32(rng, C), _f32(rng, C)
    outl = ig.asarray(np.full_like(inp, np.nan))
    mean = ig.asarray(np.full(BT, np.nan, np.float32))
    rstd = ig.asarray(np.full(BT, np.nan, np.float32))
    ii, wi, bi = ig.asarray(inp), ig.asarray(w), ig.asarray(b)
    kl = src.function("layernorm_forward_kernel1")
    refl = np.empty_like(inp)

    def ln_np():
        mu = inp.mean(-1, keepdims=True)
        np.subtract(inp, mu, out=refl)
        np.multiply(refl, 1 / np.sqrt((refl * refl).mean(-1, keepdims=True) + 1e-5), out=refl)
        np.multiply(refl, w, out=refl)
        np.add(refl, b, out=refl)

    def ln_check():
        x64 = inp.astype(np.float64)
        mu = x64.mean(-1, keepdims=True)
        var = ((x64 - mu) ** 2).mean(-1, keepdims=True)
        _close(outl, (x64 - mu) / np.sqrt(var + 1e-5) * w + b)

    cases.append(Case("llm.swift", f"layernorm (kernel1) {BT}x{C}", "layernorm_forward_kernel1",
                      lambda: kl(outl, mean, rstd, ii, wi, bi, BT, C, grid=(BT,), threadgroup=(64,)),
                      ln_np, ln_check, 2 * inp.nbytes))

    # attention_forward1: query-key, causal softmax and value kernels (one thread an output,
    # a row, an output row), against NumPy's batched matmuls and softmax.
    NH, Ta = 12, (64 if quick else 256)
    qkv = _f32(rng, B, Ta, 3 * C)
    qi = ig.asarray(qkv)
    hs = C // NH
    pre = ig.asarray(np.full((B, NH, Ta, Ta), np.nan, np.float32))
    att = ig.asarray(np.full((B, NH, Ta, Ta), np.nan, np.float32))
    outa = ig.asarray(np.full((B, Ta, C), np.nan, np.float32))
    kq = src.function("attention_query_key_kernel1")
    ks = src.function("attention_softmax_kernel1")
    kv = src.function("attention_value_kernel1")

    def att_run():
        kq(pre, qi, B, Ta, C, NH, grid=(B * NH * Ta * Ta,), threadgroup=(256,))
        ks(att, pre, B, Ta, NH, grid=(B * Ta * NH,), threadgroup=(256,))
        kv(outa, att, qi, B, Ta, C, NH, grid=(B * Ta * NH,), threadgroup=(256,))

    causal = np.tril(np.ones((Ta, Ta), bool))

    def heads(x, dtype):
        q, k, v = np.split(x.astype(dtype), 3, axis=-1)
        return [a.reshape(B, Ta, NH, hs).transpose(0, 2, 1, 3) for a in (q, k, v)]

    def att_np(dtype=np.float32):
        q, k, v = heads(qkv, dtype)
        p = q @ k.transpose(0, 1, 3, 2) * dtype(1 / np.sqrt(hs))
        p = np.where(causal, p, -np.inf)
        p = np.exp(p - p.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        return (p @ v).transpose(0, 2, 1, 3).reshape(B, Ta, C)

    cases.append(Case("llm.swift", f"attention (forward1) B{B} T{Ta} C{C} NH{NH}",
                      "attention_softmax_kernel1", att_run, att_np,
                      lambda: _close(outa, att_np(np.float64), rtol=1e-3, atol=1e-4),
                      qkv.nbytes * 2 + 3 * B * NH * Ta * Ta * 4 + B * Ta * C * 4))

    # matmul_forward_kernel1: one thread an output (the naive kernel), against NumPy's matmul.
    OC = 768 if quick else 3072
    wt = _f32(rng, OC, C)
    wti = ig.asarray(wt)
    outm = ig.asarray(np.full((BT, OC), np.nan, np.float32))
    km = src.function("matmul_forward_kernel1")
    refm = np.empty((BT, OC), np.float32)
    cases.append(Case("llm.swift", f"matmul (kernel1) {BT}x{C}x{OC}", "matmul_forward_kernel1",
                      lambda: km(outm, ii, wti, BT, C, OC, grid=(BT * OC,), threadgroup=(256,)),
                      lambda: np.matmul(inp, wt.T, out=refm),
                      lambda: _close(outm, inp.astype(np.float64) @ wt.T.astype(np.float64),
                                     rtol=1e-3, atol=1e-3),
                      inp.nbytes + wt.nbytes + BT * OC * 4,
                      extra={"flops": str(2 * BT * C * OC)}))
    return cases


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mlx", type=Path)
    ap.add_argument("--candle", type=Path)
    ap.add_argument("--llmswift", type=Path)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--device", default=None, help="cpu (default) or cuda")
    ap.add_argument("--out", type=Path, default=RESULTS)
    a = ap.parse_args(argv)
    if a.device:
        ig.set_default_device(a.device)
    dev = ig.default_device()
    rng = np.random.default_rng()
    cases: List[Case] = []
    for flag, fn in ((a.mlx, mlx_cases), (a.candle, candle_cases), (a.llmswift, llmswift_cases)):
        if flag is None:
            continue
        try:
            cases += fn(flag.expanduser().resolve(), rng, a.quick)
        except Exception as e:
            print(f"{fn.__name__}: {type(e).__name__}: {e}")
    if not cases:
        ap.error("give at least one of --mlx, --candle, --llmswift")
    def sync():
        ig.synchronize()

    rows = []
    for c in cases:
        row = {"suite": c.suite, "case": c.name, "kernel": c.kernel,
               "mode": MODES.get(c.kernel, "?")}
        try:
            c.run()
            sync()
            c.check()
            t_k = timeit(c.run, sync, reps=max(1, a.samples), rounds=3, warmup=1)
            t_n = timeit(c.numpy, lambda: None, reps=max(1, a.samples), rounds=3, warmup=1)
            row.update(kernel_ms=t_k * 1e3, numpy_ms=t_n * 1e3, ratio=t_n / t_k,
                       gbps=c.nbytes / t_k / 1e9, barrier_reduction=c.barrier_reduction)
            row.update(c.extra)
        except Exception as e:
            row.update(error=f"{type(e).__name__}: {str(e)[:300]}")
        print(json.dumps(row))
        rows.append(row)
    ok = [r for r in rows if "ratio" in r]
    summary = {}
    if ok:
        ratios = [r["ratio"] for r in ok]
        red = [r["ratio"] for r in ok if r.get("barrier_reduction")]
        summary = {
            "median_ratio": statistics.median(ratios),
            "min_ratio": min(ratios),
            "min_case": min(ok, key=lambda r: r["ratio"])["case"],
            "reductions_min_ratio": min(red) if red else None,
        }
    meta = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "device": str(dev),
        "cpu": platform.processor() or platform.machine(),
        "cores": os.cpu_count(),
        "numpy": np.__version__,
        "ingot": getattr(ig, "__version__", "?"),
        "engine": os.environ.get("INGOT_CPU_ENGINE", "default"),
    }
    a.out.mkdir(parents=True, exist_ok=True)
    stem = f"real-kernels-{dev.kind}{os.cpu_count()}-{dt.date.today().isoformat()}"
    (a.out / f"{stem}.json").write_text(json.dumps({"meta": meta, "summary": summary, "rows": rows},
                                                   indent=1))
    lines = [f"# Real upstream kernels on ingot ({dev.kind}) - {meta['date']}", "",
             f"{meta['cpu']}, {meta['cores']} cores, NumPy {meta['numpy']}, engine "
             f"{meta['engine']}. Median of {a.samples} calls x 3 rounds.", "",
             "| suite | case | CPU engine mode | kernel ms | NumPy ms | NumPy / kernel | GB/s |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        mode = r["mode"].split(" (")[0] if dev.kind == "cpu" else dev.kind
        if "ratio" in r:
            lines.append(f"| {r['suite']} | {r['case']} | {mode} | {r['kernel_ms']:.3f} | "
                         f"{r['numpy_ms']:.3f} | {r['ratio']:.2f} | {r['gbps']:.2f} |")
        else:
            lines.append(f"| {r['suite']} | {r['case']} | {mode} | error: {r['error']} | | | |")
    if summary:
        lines += ["", f"median ratio {summary['median_ratio']:.2f}, slowest "
                      f"{summary['min_ratio']:.2f} ({summary['min_case']}), reductions with "
                      f"barriers at least {summary['reductions_min_ratio']:.2f}"]
    (a.out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
