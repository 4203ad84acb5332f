"""Faults in user kernels: guard pages (default mode, CPU), checked mode (every backend that runs
translated code), barriers reached by part of a group, Ctrl-C and interpreter exit, the sandbox.

Checked-mode tests run on ``INGOT_DEVICE`` (CPU by default; CUDA on the device machine); the
guard-page, interrupt and sandbox tests are about the CPU's native code and run there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ingot
from conftest import DEVICE, ON_CPU

CPU = ingot.Device("cpu")


def host(a):
    return np.asarray(a.to_device(CPU))

SCALE = """
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float* x [[buffer(0)]], constant float& s [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    x[i] *= s;
}
"""

SHIFT = """
#include <metal_stdlib>
using namespace metal;
kernel void shift(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = x[i + 1];
}
"""


def poisoned(n, dtype=np.float32):
    return np.full(n, np.nan, dtype=dtype)


def assert_process_healthy(rng):
    """After a fault: kernels, ops and allocations still give correct results."""
    lib = ingot.compile(SCALE, device=CPU)
    for n in (8, 1000, 100_000):
        x = rng.standard_normal(n).astype(np.float32)
        want = x.astype(np.float64) * 1.5
        lib["scale"](x, 1.5, grid=(n,))
        np.testing.assert_allclose(x, want, rtol=1e-6)
    arrays = [rng.standard_normal(k * 977) for k in range(1, 60)]
    for a in arrays:
        got = float(ingot.sum(ingot.asarray(a, device=CPU) * 2.0))
        assert got == pytest.approx(float(np.sum(a * 2.0)), rel=1e-9, abs=1e-9)


# -- default mode: guard pages (CPU) ----------------------------------------------------------


def test_pydotcompute_reproduction_raises_instead_of_corrupting(rng):
    # The reproduction: CUDA's grid/block convention gives 8 groups of 8 threads = 64
    # threads over an 8-element array, after other kernel work.
    from ingot.compat.pydotcompute import default_backend as MetalBackend

    backend = MetalBackend()
    if backend.device.kind != "cpu":
        pytest.skip("the guard pages are the CPU's")
    k = backend.compile_kernel(SCALE, "scale")
    for _ in range(3):
        y = rng.standard_normal(8).astype(np.float32)
        want = y * 3.0
        assert backend.execute_kernel(k, (1,), (8,), y, 3.0).success
        np.testing.assert_allclose(y, want, rtol=1e-6)
    x = rng.standard_normal(8).astype(np.float32)
    r = backend.execute_kernel(k, (8,), (8,), x, 3.0)
    assert not r.success
    assert r.error.startswith("KernelFaultError"), r.error
    assert "scale" in r.error and "`x`" in r.error and "past the end" in r.error
    assert_process_healthy(rng)


def test_small_numpy_buffer_overrun_is_a_kernel_fault(rng):
    k = ingot.compile(SCALE, device=CPU)["scale"]
    for n in (1, 8, 13, 1000, 16_000):
        x = rng.standard_normal(n).astype(np.float32)
        with pytest.raises(ingot.KernelFaultError) as e:
            k(x, 2.0, grid=(n + 4096,))
        assert isinstance(e.value, ingot.DeviceError)
        assert "`x`" in str(e.value)
    assert_process_healthy(rng)


def test_large_buffer_overrun_hits_the_guard_page(rng):
    k = ingot.compile(SCALE, device=CPU)["scale"]
    for n in (16_384, 100_000, 1 << 20, 3_000_001):
        h = rng.standard_normal(n).astype(np.float32)
        x = ingot.asarray(h, device=CPU, copy=True)
        with pytest.raises(ingot.KernelFaultError) as e:
            k(x, 2.0, grid=(n + 2048,))
        assert "`x`" in str(e.value), str(e.value)
    assert_process_healthy(rng)


def test_reads_past_the_end_are_caught_and_in_bounds_results_kept(rng):
    k = ingot.compile(SHIFT, device=CPU)["shift"]
    x = rng.standard_normal(100).astype(np.float32)
    y = poisoned(100)
    with pytest.raises(ingot.KernelFaultError) as e:
        k(x, y, grid=(100,))
    assert "`x`" in str(e.value)
    # A correct launch afterwards works.
    y2 = poisoned(99)
    k(x, y2, grid=(99,))
    np.testing.assert_array_equal(y2, x[1:])


def test_correct_kernels_are_unchanged_by_the_guards(rng):
    # Aliasing arguments (the same array twice) and views run in place, with the same results.
    src = """
    #include <metal_stdlib>
    using namespace metal;
    kernel void axpy(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                     constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {
        y[i] = a * x[i] + y[i];
    }
    """
    k = ingot.compile(src, device=CPU)["axpy"]
    for n in (1, 7, 4096, 70_000):
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        want = (2.5 * x.astype(np.float64) + y).astype(np.float32)
        k(x, y, 2.5, grid=(n,))
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
        z = x.copy()
        k(z, z, 2.0, grid=(n,))
        np.testing.assert_allclose(z, 3.0 * x, rtol=1e-6)


# -- checked mode (INGOT_DEVICE) --------------------------------------------------------------


def test_checked_mode_names_kernel_parameter_index_length_and_thread(rng):
    k = ingot.compile(SCALE, device=DEVICE, checked=True)["scale"]
    x = ingot.asarray(rng.standard_normal(8).astype(np.float32), device=DEVICE)
    with pytest.raises(ingot.KernelFaultError) as e:
        k(x, 3.0, groups=(8,), threadgroup=(8,))
        ingot.synchronize()
    m = str(e.value)
    assert "kernel `scale`" in m and "parameter `x`" in m and "buffer(0)" in m, m
    assert "8 elements" in m and "(32 bytes)" in m, m
    # Threads 8..63 all write out of bounds; the first to get there is recorded: thread i wrote
    # element i.
    found = re.search(r"index (\d+) .*thread_position_in_grid \((\d+), 0, 0\)", m)
    assert found and found.group(1) == found.group(2) and 8 <= int(found.group(1)) < 64, m
    assert "out-of-bounds accesses in this launch" in m, m
    # Later calls work and compute the right thing.
    h = rng.standard_normal(8).astype(np.float32)
    want = h.astype(np.float64) * 3.0  # before the call: on the CPU, asarray(h) shares h
    x = ingot.asarray(h, device=DEVICE)
    k(x, 3.0, grid=(8,))
    np.testing.assert_allclose(host(x), want, rtol=1e-6)


def test_checked_mode_catches_reads_and_reports_the_first_thread(rng):
    k = ingot.compile(SHIFT, device=DEVICE, checked=True)["shift"]
    n = 1000
    x = ingot.asarray(rng.standard_normal(n).astype(np.float32), device=DEVICE)
    y = ingot.asarray(poisoned(n), device=DEVICE)
    with pytest.raises(ingot.KernelFaultError) as e:
        k(x, y, grid=(n,))
        ingot.synchronize()
    m = str(e.value)
    assert "parameter `x`" in m and f"index {n}" in m and f"{n} elements" in m, m
    assert f"thread_position_in_grid ({n - 1}, 0, 0)" in m, m


def test_checked_mode_via_environment_and_pydotcompute(rng, monkeypatch):
    from ingot.compat.pydotcompute import default_backend as MetalBackend

    monkeypatch.setenv("INGOT_CHECKED", "1")
    backend = MetalBackend()
    k = backend.compile_kernel(SCALE.replace("scale", "scale_env"), "scale_env")
    x = rng.standard_normal(8).astype(np.float32)
    r = backend.execute_kernel(k, (8,), (8,), x, 3.0)
    assert not r.success and r.error.startswith("KernelFaultError"), r.error
    assert "parameter `x`" in r.error and "8 elements" in r.error, r.error


def test_checked_threadgroup_memory(rng):
    src = """
    #include <metal_stdlib>
    using namespace metal;
    kernel void tg(device float* out [[buffer(0)]], constant uint& reach [[buffer(1)]],
                   threadgroup float* t [[threadgroup(0)]],
                   uint lid [[thread_position_in_threadgroup]], uint gid [[thread_position_in_grid]]) {
        t[lid] = float(gid);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        out[gid] = t[(lid + reach) % 64u];
    }
    """
    k = ingot.compile(src, device=DEVICE, checked=True)["tg"]
    out = ingot.asarray(poisoned(64), device=DEVICE)
    # lid + 1 == 32 for the last thread of each group reads past the 32-float allocation.
    with pytest.raises(ingot.KernelFaultError) as e:
        k(out, 1, grid=(64,), threadgroup=(32,), threadgroup_memory={0: 32 * 4})
        ingot.synchronize()
    m = str(e.value)
    assert "parameter `t`" in m and "threadgroup(0)" in m and "index 32" in m, m
    assert "32 elements" in m, m
    assert re.search(r"thread_position_in_grid \((31|63), 0, 0\)", m), m
    # Within bounds (reach 0) the results match.
    k(out, 0, grid=(64,), threadgroup=(32,), threadgroup_memory={0: 32 * 4})
    ingot.synchronize()
    got = host(out)
    np.testing.assert_array_equal(got, np.arange(64, dtype=np.float32))


CHECKED_FEATURES = """
#include <metal_stdlib>
using namespace metal;
struct P { float a; float b; };
float get(device const float* p, uint i) { return p[i]; }
device float* row_of(device float* base, uint r) { return base + r * 4; }
kernel void feat(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                 device atomic_uint* count [[buffer(2)]], constant P* ps [[buffer(3)]],
                 uint i [[thread_position_in_grid]]) {
    device const float4* x4 = (device const float4*)x;
    float4 v = x4[i];
    device float* r = row_of(out, i);
    const device float* end = x + 4 * (i + 1);
    float s = 0.0f;
    for (device const float* q = x + 4 * i; q < end; ++q) s += *q;
    r[0] = v.x + get(x, 4 * i + 1);
    r[1] = s;
    *(r + 2) = ps->a * v.z + ps[0].b;
    r[3] = float(i);
    atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
}
"""


@pytest.mark.parametrize("checked", [False, True])
def test_checked_and_unchecked_compute_the_same(rng, checked):
    # Pointer arithmetic, casts to vector pointers, helper functions taking and returning
    # pointers, struct pointers, atomics: the checked pointer behaves as a pointer.
    lib = ingot.compile(CHECKED_FEATURES, device=DEVICE, checked=checked)
    n = 257
    xh = rng.standard_normal(4 * n).astype(np.float32)
    x = ingot.asarray(xh, device=DEVICE)
    out = ingot.asarray(poisoned(4 * n), device=DEVICE)
    count = ingot.asarray(np.array([7], dtype=np.uint32), device=DEVICE)
    ps = ingot.asarray(np.array([1.5, -0.25], dtype=np.float32), device=DEVICE)
    lib["feat"](x, out, count, ps, grid=(n,))
    ingot.synchronize()
    got = host(out).reshape(n, 4)
    x4 = xh.astype(np.float64).reshape(n, 4)
    want = np.stack([x4[:, 0] + x4[:, 1], x4.sum(axis=1), 1.5 * x4[:, 2] - 0.25, np.arange(n)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert int(host(count)[0]) == 7 + n


def test_checked_mode_struct_pointer_past_the_end(rng):
    lib = ingot.compile(CHECKED_FEATURES, device=DEVICE, checked=True)
    n = 4
    x = ingot.asarray(rng.standard_normal(4 * n).astype(np.float32), device=DEVICE)
    out = ingot.asarray(poisoned(4 * n + 4), device=DEVICE)
    count = ingot.asarray(np.zeros(1, dtype=np.uint32), device=DEVICE)
    ps = ingot.asarray(np.array([1.5], dtype=np.float32), device=DEVICE)  # half a struct P
    with pytest.raises(ingot.KernelFaultError) as e:
        lib["feat"](x, out, count, ps, grid=(n,))
        ingot.synchronize()
    assert "parameter `ps`" in str(e.value) and "8-byte elements" in str(e.value), str(e.value)


DIVERGENT_BARRIERS = """
#include <metal_stdlib>
using namespace metal;
kernel void split(device float* x [[buffer(0)]], threadgroup float* t [[threadgroup(0)]],
                  uint lid [[thread_position_in_threadgroup]]) {
    if (lid < 16) {
        t[lid] = x[lid] + 1.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        x[lid] = t[0];
    } else {
        threadgroup_barrier(mem_flags::mem_threadgroup);
        x[lid] = t[1] * 2.0f;
    }
}
"""


@pytest.mark.skipif(not ON_CPU, reason="barrier divergence is detected by the CPU scheduler")
def test_threads_at_different_barriers_are_an_error_in_checked_mode(rng):
    k = ingot.compile(DIVERGENT_BARRIERS, device=CPU, checked=True)["split"]
    x = rng.standard_normal(32).astype(np.float32)
    with pytest.raises(ingot.KernelFaultError) as e:
        k(x, grid=(32,), threadgroup=(32,), threadgroup_memory={0: 32 * 4})
    assert "different barriers" in str(e.value)
    # Default mode never hangs on it either.
    k2 = ingot.compile(DIVERGENT_BARRIERS, device=CPU)["split"]
    k2(x, grid=(32,), threadgroup=(32,), threadgroup_memory={0: 32 * 4})


# -- interrupts and exit (CPU) ----------------------------------------------------------------

SPIN = """
#include <metal_stdlib>
using namespace metal;
kernel void spin(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float a = x[i];
    for (uint k = 0; k < 2000000u; ++k) a = a * 0.9999999f + 1e-7f;
    x[i] = a;
}
"""

CHILD_PRELUDE = f"""
import sys, threading, time
import numpy as np
import ingot
k = ingot.compile({SPIN!r}, device="cpu")["spin"]
x = np.ones(1 << 16, dtype=np.float32)
"""


def run_child(body, *, interrupt_after=None, timeout=120):
    env = dict(os.environ)
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD_PRELUDE + textwrap.dedent(body)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    started = p.stdout.readline()
    assert started.strip() == "STARTED", (started, p.stderr.read() if p.poll() is not None else "")
    t0 = time.monotonic()
    if interrupt_after is not None:
        time.sleep(interrupt_after)
        p.send_signal(2)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"the process did not stop: {out} {err}")
    return p.returncode, out, err, time.monotonic() - t0


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_a_long_kernel():
    rc, out, err, took = run_child(
        """
        print("STARTED", flush=True)
        t0 = time.monotonic()
        try:
            k(x, grid=(x.size,))
            print("FINISHED")
        except KeyboardInterrupt:
            print("INTERRUPTED", round(time.monotonic() - t0, 2))
        # The process goes on normally.
        y = np.arange(10, dtype=np.float32)
        print("SUM", float(ingot.sum(ingot.asarray(y))))
        """,
        interrupt_after=1.0,
    )
    assert rc == 0, err
    assert "INTERRUPTED" in out and "SUM 45.0" in out, (out, err)
    assert took < 30


FOREVER = """
#include <metal_stdlib>
using namespace metal;
kernel void forever(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float a = x[i];
    while (a != -1.0f) { a = a * 0.5f + 1.0f; }  // tends to 2, never -1
    x[i] = a;
}
"""


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_stops_an_endless_loop_in_checked_mode():
    # One thread in one threadgroup that never ends: only the checked loop's test of the stop
    # counter can end it.
    rc, out, err, took = run_child(
        f"""
        f = ingot.compile({FOREVER!r}, device="cpu", checked=True)["forever"]
        y = np.full(1, 3.0, dtype=np.float32)
        print("STARTED", flush=True)
        t0 = time.monotonic()
        try:
            f(y, grid=(1,))
            print("FINISHED")
        except KeyboardInterrupt:
            print("INTERRUPTED", round(time.monotonic() - t0, 2))
        print("SUM", float(ingot.sum(ingot.asarray(np.arange(10, dtype=np.float32)))))
        """,
        interrupt_after=1.0,
    )
    assert rc == 0, err
    assert "INTERRUPTED" in out and "SUM 45.0" in out, (out, err)
    assert took < 30


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_kernel_running_at_exit_does_not_hang_the_interpreter():
    rc, out, err, took = run_child(
        """
        t = threading.Thread(target=lambda: k(x, grid=(x.size,)))
        t.start()
        time.sleep(0.3)
        print("STARTED", flush=True)
        """,
    )
    assert took < 30, (out, err)


# -- sandbox (CPU) ----------------------------------------------------------------------------

SANDBOX_CASES = [
    ("kernel void f(device int* x [[buffer(0)]]) { asm volatile(\"nop\"); }", "inline assembly"),
    ("extern \"C\" int system(const char*);\nkernel void f(device int* x [[buffer(0)]]) { x[0] = 1; }", "extern"),
    ("#include <stdio.h>\nkernel void f(device int* x [[buffer(0)]]) { x[0] = 1; }", "stdio.h"),
    ("#include <cstdlib>\nkernel void f(device int* x [[buffer(0)]]) { x[0] = 1; }", "cstdlib"),
    ("#include \"../../../../etc/hostname\"\nkernel void f(device int* x [[buffer(0)]]) { x[0] = 1; }", ".."),
    ("kernel void f(device int* x [[buffer(0)]]) { x[0] = system(\"true\"); }", "host function"),
    ("kernel void f(device int* x [[buffer(0)]]) { x[0] = (int)(long)getenv(\"HOME\"); }", "host function"),
    ("#define CALL(f) f(0)\nkernel void f(device int* x [[buffer(0)]]) { CALL(exit); }", "host function"),
    ("__attribute__((constructor)) void boom() {}\nkernel void f(device int* x [[buffer(0)]]) { x[0] = 1; }", "constructor"),
    ("kernel void f(device int* x [[buffer(0)]]) { x[0] = __builtin_popcount(7); }", "builtin"),
]


@pytest.mark.parametrize("body,what", SANDBOX_CASES)
def test_sandbox_rejects_host_code(body, what):
    src = "#include <metal_stdlib>\nusing namespace metal;\n" + body
    with pytest.raises(ingot.CompileError) as e:
        ingot.compile(src, device=CPU, file_name="evil.metal")
    assert what in str(e.value) and "evil.metal:" in str(e.value), str(e.value)


def test_sandbox_allows_own_headers(tmp_path, rng):
    (tmp_path / "helpers.h").write_text("inline float twice(float v) { return 2.0f * v; }\n")
    src = '#include <metal_stdlib>\n#include "helpers.h"\nusing namespace metal;\n' \
          "kernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = twice(x[i]); }\n"
    k = ingot.compile(src, device=CPU, include_dirs=[str(tmp_path)])["f"]
    x = rng.standard_normal(10).astype(np.float32)
    want = 2 * x
    k(x, grid=(10,))
    np.testing.assert_allclose(x, want)
