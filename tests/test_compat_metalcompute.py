"""ingot.compat.metalcompute: the seed's example programs and metalcompute's API.

The seed's programs run with ``import metalcompute as mc`` changed to
``import ingot.compat.metalcompute as mc`` (their kernel strings completed where the blog post
cut them). Beyond the original: exactly ``count`` threads run (outputs past ``count`` are
poisoned and must stay untouched), the GIL is released while a kernel runs, and many calls grow
neither time nor memory.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from array import array

import numpy as np
import pytest

import ingot

pytestmark = pytest.mark.skipif(
    not hasattr(ingot._ingot, "compile"), reason="the MSL kernel API (ingot.compile) is not in this build"
)

import ingot.compat.metalcompute as mc  # noqa: E402

HELLO = """
#include <metal_stdlib>;
using namespace metal;
kernel void helloABC(const device float *A [[buffer(0)]],
                       const device float *B [[buffer(1)]],
                       device float *C [[buffer(2)]],
                       uint id [[thread_position_in_grid]]) {
    C[id] = A[id] * B[id];
}
"""


def test_seed_hello_world():
    count = 10
    dev = mc.Device()
    helloABC = dev.kernel(HELLO).function("helloABC")
    A = array("f", range(10))  # 0..9
    B = array("f", range(10, 20))  # 10...19
    C = dev.buffer(count * 4)
    C_view = memoryview(C).cast("f")
    helloABC(count, A, B, C)
    assert C_view[1] == 11.0
    assert list(C_view) == [float(i * (i + 10)) for i in range(10)]


def test_seed_pipelined_calls(rng):
    count = 200_000
    dev = mc.Device()
    helloABC = dev.kernel(HELLO).function("helloABC")
    a = rng.uniform(-10, 10, count).astype(np.float32)
    b = rng.uniform(-10, 10, count).astype(np.float32)
    A, B = array("f", a.tobytes()), array("f", b.tobytes())
    C = dev.buffer(count * 4)
    np.frombuffer(C, dtype=np.float32)[:] = np.nan  # poison
    [helloABC(count, A, B, C) for _ in range(100)][-1]
    np.testing.assert_array_equal(np.frombuffer(C, dtype=np.float32), a * b)


def _unrolled_source(reps):
    k = """
#include <metal_stdlib>;
using namespace metal;
kernel void helloABC(const device float *A [[buffer(0)]],
                       const device float *B [[buffer(1)]],
                       device float *C [[buffer(2)]],
                       uint id [[thread_position_in_grid]]) {
    float Ai = A[id];
    float Bi = B[id];
    float ABi = Ai * Bi;
    float D = Ai;
    float E = Bi;
    float F = Ai+Bi;
    float G = Ai-Bi;
"""
    k += reps * """
    D += Ai * G;
    E += Bi * F;
    F += Ai * E;
    G += Bi * D;
"""
    k += """
    C[id] = D + E + F + G;
}
"""
    return k


def test_seed_unrolled_kernel(rng):
    count = 4096
    dev = mc.Device()
    helloABC = dev.kernel(_unrolled_source(400)).function("helloABC")
    a = rng.uniform(-0.05, 0.05, count).astype(np.float32)
    b = rng.uniform(-0.05, 0.05, count).astype(np.float32)
    C = dev.buffer(count * 4)
    np.frombuffer(C, dtype=np.float32)[:] = np.nan
    helloABC(count, array("f", a.tobytes()), array("f", b.tobytes()), C).wait()
    D, E, F, G = a.copy(), b.copy(), a + b, a - b
    for _ in range(400):
        D = D + a * G
        E = E + b * F
        F = F + a * E
        G = G + b * D
    np.testing.assert_allclose(np.frombuffer(C, dtype=np.float32), D + E + F + G, rtol=1e-4, atol=1e-5)


# -------------------------------------------------------------------------- devices and buffers


def test_devices():
    devs = mc.get_devices()
    assert len(devs) == len(ingot.devices()) >= 1
    for i, d in enumerate(devs):
        assert isinstance(d.deviceName, str) and d.deviceName
        assert isinstance(d.recommendedWorkingSetSize, int) and d.recommendedWorkingSetSize >= 0
        assert isinstance(d.maxTransferRate, int) and d.maxTransferRate >= 0
        assert d.hasUnifiedMemory == (d.device.kind in ("cpu", "metal"))
        assert d["deviceName"] == d.deviceName
        dev = mc.Device(i)
        assert dev.deviceName == d.deviceName and dev.device == d.device
    cpu = [d for d in devs if d.device.kind == "cpu"][0]
    assert cpu.recommendedWorkingSetSize > 0
    assert mc.Device().device == ingot.default_device()
    with pytest.raises(mc.error):
        mc.Device(len(devs))


def test_buffers(rng):
    dev = mc.Device()
    z = dev.buffer(16)
    assert len(z) == 16 and bytes(z) == bytes(16)
    v = np.frombuffer(z, dtype=np.float32)
    v[:] = [1, 2, 3, 4]
    assert memoryview(z).cast("f").tolist() == [1.0, 2.0, 3.0, 4.0]
    src = rng.standard_normal(5).astype(np.float32)
    c = dev.buffer(src)
    src[:] = 0  # a copy, not a view
    assert np.frombuffer(c, np.float32).tolist() != [0.0] * 5
    assert bytes(dev.buffer(array("i", [1, 2]))) == array("i", [1, 2]).tobytes()
    assert bytes(dev.buffer(b"abc")) == b"abc"
    with pytest.raises(mc.error):
        dev.buffer(-1)
    with pytest.raises(mc.error):
        dev.buffer("text")


# -------------------------------------------------------------------------- semantics

COUNTED = """
#include <metal_stdlib>
using namespace metal;
kernel void mark(device uint *out [[buffer(0)]],
                 device atomic_uint *ran [[buffer(1)]],
                 uint id [[thread_position_in_grid]]) {
    out[id] = id;
    atomic_fetch_add_explicit(ran, 1u, memory_order_relaxed);
}
"""


@pytest.mark.parametrize("count", [1, 31, 1000, 1025, 100_003])
def test_exactly_count_threads(count):
    dev = mc.Device()
    fn = dev.kernel(COUNTED).function("mark")
    pad = 4096
    out = dev.buffer((count + pad) * 4)
    view = np.frombuffer(out, dtype=np.uint32)
    view[:] = 0xDEADBEEF  # poison, including the tail the kernel must not reach
    ran = dev.buffer(4)
    fn(count, out, ran).wait()
    assert np.frombuffer(ran, dtype=np.uint32)[0] == count
    np.testing.assert_array_equal(view[:count], np.arange(count, dtype=np.uint32))
    assert (view[count:] == 0xDEADBEEF).all()


MIXED = """
#include <metal_stdlib>
using namespace metal;
kernel void mix(device const float *a [[buffer(0)]],
                device const int *b [[buffer(1)]],
                device const float *c [[buffer(2)]],
                device float *out [[buffer(3)]],
                device float *out2 [[buffer(4)]],
                uint id [[thread_position_in_grid]]) {
    out[id] = a[id] + float(b[id]) * c[id];
    out2[id] = -out[id];
}
"""


def test_argument_kinds(rng):
    n = 1000
    dev = mc.Device()
    fn = dev.kernel(MIXED).function("mix")
    a = rng.uniform(-5, 5, n).astype(np.float32)
    b = rng.integers(-50, 50, n).astype(np.int32)
    c = rng.uniform(-5, 5, n).astype(np.float32)
    out = dev.buffer(n * 4)
    np.frombuffer(out, np.float32)[:] = np.nan
    out2 = np.full(n, np.nan, dtype=np.float32)
    # array.array, bytes, a NumPy array, an mc buffer, a NumPy array written in place
    h = fn(n, array("f", a.tobytes()), b.tobytes(), c, out, out2)
    del h
    want = a + b.astype(np.float32) * c
    np.testing.assert_array_equal(np.frombuffer(out, np.float32), want)
    np.testing.assert_array_equal(out2, -want)
    # NumPy arrays of another dtype are taken as raw bytes, as metalcompute does
    out3 = np.full(n, np.nan, dtype=np.float32)
    fn(n, a.view(np.uint32), b, c.view(np.int32), out, out3).wait()
    np.testing.assert_array_equal(out3, -want)


def test_ingot_arrays_as_buffers(rng):
    n = 777
    dev = mc.Device()
    fn = dev.kernel(HELLO).function("helloABC")
    a = rng.uniform(-3, 3, n).astype(np.float32)
    b = rng.uniform(-3, 3, n).astype(np.float32)
    A = ingot.asarray(a, device=dev.device)
    B = ingot.asarray(b, device=dev.device)
    C = ingot.full((n,), float("nan"), dtype=ingot.float32, device=dev.device)
    fn(n, A, B, C).wait()
    np.testing.assert_array_equal(np.asarray(C.to_device("cpu")), a * b)


def test_errors():
    dev = mc.Device()
    with pytest.raises(mc.error) as e:
        dev.kernel("kernel void broken(device float *x [[buffer(0)]]) { x[0] = ; }")
    assert isinstance(e.value, ingot.CompileError)
    lib = dev.kernel(HELLO)
    with pytest.raises(mc.error):
        lib.function("nope")
    fn = lib.function("helloABC")
    A = array("f", [1.0] * 4)
    C = dev.buffer(16)
    with pytest.raises(mc.error):
        fn(4, A, A)  # a missing buffer
    with pytest.raises(mc.error):
        fn(4, A, A, C, C)  # an extra one
    with pytest.raises(mc.error):
        fn(4, A, A, b"\0" * 16)  # read-only bytes for the output
    with pytest.raises(mc.error):
        fn("4", A, A, C)
    with pytest.raises(mc.error):
        fn(-1, A, A, C)
    with pytest.raises(mc.error):
        fn(4, A, A, dev.buffer(2))  # less than one float
    # the library still works afterwards
    fn(4, A, A, C).wait()
    assert memoryview(C).cast("f").tolist() == [1.0] * 4


HEAVY = """
#include <metal_stdlib>
using namespace metal;
kernel void heavy(device float *x [[buffer(0)]], constant uint &iters [[buffer(1)]],
                  uint id [[thread_position_in_grid]]) {
    float v = x[id];
    for (uint i = 0; i < iters; i++) { v = sin(v) + 0.5f; }
    x[id] = v;
}
"""


def test_gil_released_while_running():
    dev = mc.Device()
    fn = dev.kernel(HEAVY).function("heavy")
    n = 1 << 14
    x = dev.buffer(n * 4)
    iters = 200
    # grow the work until one call takes at least 0.3 s
    while True:
        t0 = time.perf_counter()
        fn(n, x, np.uint32(iters)).wait()
        dt = time.perf_counter() - t0
        if dt >= 0.3 or iters > 10**6:
            break
        iters *= max(2, int(0.4 / max(dt, 1e-3)))
    done = threading.Event()

    def run():
        fn(n, x, np.uint32(iters)).wait()
        done.set()

    t = threading.Thread(target=run)
    last = time.perf_counter()
    worst = 0.0
    t.start()
    while not done.is_set():
        now = time.perf_counter()
        worst = max(worst, now - last)
        last = now
    t.join()
    # With the GIL held for the whole call this thread would stall for about dt.
    assert worst < 0.5 * dt, (worst, dt)


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_many_calls_flat_time_and_memory():
    dev = mc.Device()
    fn = dev.kernel(HELLO).function("helloABC")
    A = dev.buffer(array("f", range(64)))
    B = dev.buffer(array("f", range(64)))
    C = dev.buffer(64 * 4)
    for _ in range(200):
        fn(64, A, B, C)
    # size a batch to about 0.3 s
    t0 = time.perf_counter()
    for _ in range(200):
        fn(64, A, B, C)
    per_call = (time.perf_counter() - t0) / 200
    batch = max(200, min(20_000, int(0.3 / per_call)))
    gc.collect()
    rss0 = _rss()
    times = []
    for _ in range(6):
        t0 = time.perf_counter()
        for _ in range(batch):
            fn(64, A, B, C)
        times.append(time.perf_counter() - t0)
    gc.collect()
    grown = _rss() - rss0
    assert grown < 8 * 2**20, f"RSS grew by {grown} bytes over {6 * batch} calls"
    assert min(times[3:]) < 2.0 * max(min(times[:3]), 1e-6), times
    assert memoryview(C).cast("f")[3] == 9.0


SCALE = """
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float *x [[buffer(0)]], constant float &s [[buffer(1)]],
                  constant uint &n [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    if (i < n) x[i] *= s;
}
"""


def test_constants_as_buffers_or_scalars(rng):
    dev = mc.Device()
    fn = dev.kernel(SCALE).function("scale")
    data = rng.uniform(1, 2, 8).astype(np.float32)
    x = dev.buffer(data)
    # metalcompute programs pass constants as one-element buffers
    fn(8, x, array("f", [2.0]), array("I", [5])).wait()
    want = data.copy()
    want[:5] *= 2.0
    np.testing.assert_array_equal(np.frombuffer(x, np.float32), want)
    fn(8, x, dev.buffer(array("f", [-1.5])), np.uint32(8)).wait()
    np.testing.assert_array_equal(np.frombuffer(x, np.float32), want * np.float32(-1.5))
    with pytest.raises(mc.error):
        fn(8, x, array("d", [2.0]), 8)  # 8 bytes for a 4-byte float
