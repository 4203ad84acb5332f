"""ingot.compat.pydotcompute: the seed's MetalBackend examples and the Backend/UnifiedBuffer API.

The examples run with their imports changed to
``from ingot.compat.pydotcompute import default_backend as MetalBackend, ..., mx`` so that they
run on the default device (the CPU in CI, CUDA with INGOT_DEVICE=cuda).
"""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from ingot.compat import pydotcompute as pdc
from ingot.compat.pydotcompute import (
    BackendNotAvailableError,
    BackendType,
    BufferNotAllocatedError,
    BufferState,
    CPUBackend,
    CUDABackend,
    KernelExecutionResult,
    UnifiedBuffer,
    get_elementwise_kernel,
    get_matrix_multiply_kernel,
    get_vector_add_kernel,
    mx,
)
from ingot.compat.pydotcompute import MetalBackend as RealMetalBackend
from ingot.compat.pydotcompute import default_backend as MetalBackend

HAS_KERNELS = hasattr(ingot._ingot, "compile")
needs_kernels = pytest.mark.skipif(not HAS_KERNELS, reason="the MSL kernel API (ingot.compile) is not in this build")
KINDS = {d.kind for d in ingot.devices()}


def host(x):
    return np.asarray(x.to_device("cpu")) if isinstance(x, ingot.Array) else np.asarray(x)


# -------------------------------------------------------------------------- the seed's examples


def test_example_basic():
    backend = MetalBackend()
    a = backend.copy_to_device(np.array([1, 2, 3], dtype=np.float32))
    b = backend.copy_to_device(np.array([4, 5, 6], dtype=np.float32))
    c = mx.add(a, b)
    mx.eval(c)
    result = backend.copy_to_host(c)
    assert isinstance(result, np.ndarray)
    assert result.tolist() == [5.0, 7.0, 9.0]
    assert str(result) == "[5. 7. 9.]"


def test_example_prebuilt_kernels(rng):
    backend = MetalBackend()
    add_kernel = get_vector_add_kernel()
    a = backend.copy_to_device(np.array([1, 2, 3], dtype=np.float32))
    b = backend.copy_to_device(np.array([4, 5, 6], dtype=np.float32))
    result = add_kernel(a, b)
    assert backend.copy_to_host(result).tolist() == [5.0, 7.0, 9.0]

    matmul_kernel = get_matrix_multiply_kernel()
    A_np = rng.standard_normal((100, 100)).astype(np.float32)
    B_np = rng.standard_normal((100, 100)).astype(np.float32)
    A = backend.copy_to_device(A_np)
    B = backend.copy_to_device(B_np)
    C = matmul_kernel(A, B)
    np.testing.assert_allclose(backend.copy_to_host(C), A_np.astype(np.float64) @ B_np, rtol=1e-4, atol=1e-4)

    sqrt_kernel = get_elementwise_kernel("sqrt")
    data = backend.copy_to_device(np.array([1, 4, 9], dtype=np.float32))
    roots = sqrt_kernel(data)
    assert backend.copy_to_host(roots).tolist() == [1.0, 2.0, 3.0]


def test_example_custom_kernel():
    backend = MetalBackend()

    def gaussian_kernel(x):
        return mx.exp(mx.negative(mx.square(x)))

    compiled = backend.compile_kernel(gaussian_kernel)
    input_data = np.linspace(-3, 3, 100).astype(np.float32)
    output = compiled(input_data)
    result = backend.copy_to_host(output)
    np.testing.assert_allclose(result, np.exp(-(input_data.astype(np.float64) ** 2)), rtol=1e-6, atol=1e-7)


def test_example_timing(rng):
    backend = MetalBackend()

    def compute_kernel(a, b):
        return mx.sqrt(mx.add(mx.square(a), mx.square(b)))

    a_np = rng.standard_normal(10000).astype(np.float32)
    b_np = rng.standard_normal(10000).astype(np.float32)
    a = backend.copy_to_device(a_np)
    b = backend.copy_to_device(b_np)
    result = backend.execute_kernel(compute_kernel, (1,), (1,), a, b)
    assert result.success, result.error
    assert result.error is None
    assert result.execution_time_ms > 0.0
    msg = f"Execution time: {result.execution_time_ms:.3f}ms"
    assert msg.startswith("Execution time: ")
    np.testing.assert_allclose(host(result.output), np.hypot(a_np, b_np), rtol=1e-5)


def test_example_memory_management():
    backend = MetalBackend()
    info = backend.get_memory_info()
    for key in ("allocated", "buffer_count", "cache_memory", "peak_memory"):
        assert isinstance(info[key], int) and info[key] >= 0
    before = info["buffer_count"]
    arrays = [backend.allocate((1000,), np.float32) for _ in range(10)]
    after = backend.get_memory_info()
    assert after["buffer_count"] == before + 10
    assert after["allocated"] >= info["allocated"] + 10 * 4000
    assert after["peak_memory"] >= 10 * 4000
    assert f"Peak: {after['peak_memory'] / 1024:.1f} KB"
    for arr in arrays:
        backend.free(arr)
    final = backend.get_memory_info()
    assert final["buffer_count"] == before
    assert final["allocated"] == info["allocated"]
    backend.clear_cache()
    assert backend.get_memory_info()["buffer_count"] == before


def test_example_unified_buffer(rng):
    buffer = UnifiedBuffer((1000,), dtype=np.float32)
    buffer.allocate()
    data = rng.standard_normal(1000).astype(np.float32)
    buffer.host[:] = data
    buffer.mark_host_dirty()
    metal_array = buffer.metal
    assert isinstance(metal_array, ingot.Array)
    result = mx.sum(metal_array)
    mx.eval(result)
    assert abs(float(result) - float(data.astype(np.float64).sum())) < 1e-3
    buffer.mark_metal_dirty()
    assert buffer.state == BufferState.DEVICE_DIRTY
    np.testing.assert_array_equal(buffer.host, data)


# -------------------------------------------------------------------------- backends


def test_types():
    assert {t.name for t in BackendType} == {"METAL", "CUDA", "CPU"}
    r = KernelExecutionResult(success=True, execution_time_ms=1.5, error=None)
    assert (r.success, r.execution_time_ms, r.error) == (True, 1.5, None)
    assert KernelExecutionResult(False).execution_time_ms == 0.0


def test_availability():
    cpu = CPUBackend()
    assert cpu.is_available and cpu.backend_type == BackendType.CPU
    assert cpu.device_count == 1 and cpu.device_id == 0
    for cls, kind in ((RealMetalBackend, "metal"), (CUDABackend, "cuda")):
        assert cls.available() == (kind in KINDS)
        if kind in KINDS:
            b = cls()
            assert b.is_available and b.device_count >= 1
            with pytest.raises(BackendNotAvailableError):
                cls(b.device_count)
        else:
            with pytest.raises(BackendNotAvailableError):
                cls()
    with pytest.raises(BackendNotAvailableError):
        CPUBackend(1)
    b = MetalBackend()
    assert b.backend_type.value == ingot.default_device().kind


def test_dtype_table():
    for dt in [np.float32, np.float16, np.int32, np.int64, np.int16, np.int8, np.uint32, np.uint64,
               np.uint16, np.uint8, np.bool_]:
        for kind in ("cpu", "cuda", "metal"):
            assert pdc._device_dtype(dt, kind) == getattr(ingot, "bool" if dt is np.bool_ else np.dtype(dt).name)
    assert pdc._device_dtype(np.float64, "metal") == ingot.float32
    assert pdc._device_dtype(np.float64, "cpu") == ingot.float64
    assert pdc._device_dtype(np.float64, "cuda") == ingot.float64
    with pytest.raises(TypeError):
        pdc._device_dtype(np.complex64, "cpu")
    backend = MetalBackend()
    x = backend.copy_to_device(np.array([1.0, 2.0], dtype=np.float64))
    want = ingot.float32 if backend.backend_type == BackendType.METAL else ingot.float64
    assert x.dtype == want
    z = backend.allocate_zeros((3, 2), np.int16)
    assert z.shape == (3, 2) and z.dtype == ingot.int16 and backend.copy_to_host(z).tolist() == [[0, 0]] * 3
    backend.free(z)


def test_copy_round_trip(rng):
    backend = MetalBackend()
    for dt in [np.float32, np.int32, np.uint8, np.bool_]:
        a = (rng.standard_normal((5, 7)) * 10).astype(dt)
        d = backend.copy_to_device(a)
        a[...] = 0  # the device copy is independent of the host array
        back = backend.copy_to_host(d)
        assert back.dtype == dt and back.shape == (5, 7)
    x = rng.standard_normal(17).astype(np.float32)
    np.testing.assert_array_equal(backend.copy_to_host(backend.copy_to_device(x)), x)
    backend.synchronize()


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "sqrt", "exp", "log", "sin", "cos", "abs", "square", "negative"])
@pytest.mark.parametrize("n", [1, 100, 10_001])
def test_elementwise_kernels(rng, op, n):
    k = get_elementwise_kernel(op)
    a = rng.uniform(0.5, 5.0, n).astype(np.float32)
    b = rng.uniform(0.5, 5.0, n).astype(np.float32)
    ref = {
        "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b, "div": lambda: a / b,
        "sqrt": lambda: np.sqrt(a), "exp": lambda: np.exp(a), "log": lambda: np.log(a),
        "sin": lambda: np.sin(a), "cos": lambda: np.cos(a), "abs": lambda: np.abs(a - 2.5),
        "square": lambda: a * a, "negative": lambda: -a,
    }[op]()
    backend = MetalBackend()
    da, db = backend.copy_to_device(a), backend.copy_to_device(b)
    if op in ("add", "sub", "mul", "div"):
        got = k(da, db)
    elif op == "abs":
        got = k(backend.copy_to_device(a - 2.5))
    else:
        got = k(da)
    np.testing.assert_allclose(backend.copy_to_host(got), ref, rtol=2e-6, atol=1e-6)


def test_elementwise_unknown_and_arity():
    assert get_elementwise_kernel("tanh") is None
    assert get_elementwise_kernel("") is None
    with pytest.raises(TypeError):
        get_elementwise_kernel("add")(np.ones(3, np.float32))


def test_execute_kernel_reports_failure():
    backend = MetalBackend()

    def broken(a):
        raise RuntimeError("boom")

    r = backend.execute_kernel(broken, (1,), (1,), np.ones(3, np.float32))
    assert not r.success and "boom" in r.error
    r = backend.execute_kernel(lambda a, b: mx.add(a, b), (1,), (1,), np.ones(3, np.float32), np.ones(4, np.float32))
    assert not r.success and r.error


def test_compile_kernel_rejects_non_callables():
    with pytest.raises(TypeError):
        MetalBackend().compile_kernel(42)


MSL_SAXPY = """
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const float *x [[buffer(0)]],
                  device float *y [[buffer(1)]],
                  constant float &a [[buffer(2)]],
                  constant uint &n [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


@needs_kernels
@pytest.mark.parametrize("n", [1, 1000, 65_537])
def test_msl_kernel_compile_and_execute(rng, n):
    backend = MetalBackend()
    k = backend.compile_kernel(MSL_SAXPY, signature="saxpy")
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    want = 2.5 * x + y
    yd = backend.copy_to_device(y)
    blocks = (n + 255) // 256
    r = backend.execute_kernel(k, (blocks,), (256,), backend.copy_to_device(x), yd, 2.5, n)
    assert r.success, r.error
    assert r.execution_time_ms > 0.0
    np.testing.assert_allclose(backend.copy_to_host(yd), want, rtol=1e-6, atol=1e-6)
    # the source's only kernel is found without a signature; the metalcompute call form works
    k2 = backend.compile_kernel(MSL_SAXPY)
    y2 = y.copy()
    k2(n, x, y2, 2.5, n)
    np.testing.assert_allclose(y2, want, rtol=1e-6, atol=1e-6)


@needs_kernels
def test_msl_kernel_errors():
    backend = MetalBackend()
    with pytest.raises(ingot.CompileError):
        backend.compile_kernel("kernel void broken(device float *x [[buffer(0)]]) { x[0] = ; }")
    two = MSL_SAXPY + MSL_SAXPY.replace("saxpy", "saxpy2").replace("#include <metal_stdlib>", "")
    with pytest.raises(ValueError):
        backend.compile_kernel(two)
    k = backend.compile_kernel(MSL_SAXPY, "saxpy")
    r = backend.execute_kernel(k, (1,), (1,), np.ones(3, np.float64), np.ones(3, np.float32), 1.0, 3)
    assert not r.success and "x" in r.error


# -------------------------------------------------------------------------- UnifiedBuffer


def test_unified_buffer_states(rng):
    buf = UnifiedBuffer((4, 5), dtype=np.float32)
    assert buf.state == BufferState.UNINITIALIZED and not buf.is_allocated
    assert buf.shape == (4, 5) and buf.size == 20 and buf.nbytes == 80 and len(buf) == 4
    with pytest.raises(BufferNotAllocatedError):
        buf.host
    with pytest.raises(BufferNotAllocatedError):
        buf.device
    with pytest.raises(BufferNotAllocatedError):
        buf.mark_host_dirty()
    assert buf.allocate() is buf
    assert buf.state == BufferState.HOST_ONLY
    data = rng.standard_normal((4, 5)).astype(np.float32)
    buf.host[:] = data  # no mark needed: the device copy is made from the host on first access
    d = buf.device
    assert buf.state == BufferState.SYNCHRONIZED
    np.testing.assert_array_equal(host(d), data)
    buf.host[0, 0] = 42.0
    buf.mark_host_dirty()
    assert buf.state == BufferState.HOST_DIRTY
    assert host(buf.device)[0, 0] == 42.0 and buf.state == BufferState.SYNCHRONIZED
    buf.free()
    assert buf.state == BufferState.UNINITIALIZED


@pytest.mark.parametrize("mark", ["mark_device_dirty", "mark_metal_dirty"])
def test_device_results_flow_back_to_host(rng, mark):
    buf = UnifiedBuffer((1000,), dtype=np.float32).allocate()
    data = rng.standard_normal(1000).astype(np.float32)
    buf.host[:] = data
    buf.mark_host_dirty()
    dev = buf.metal if mark == "mark_metal_dirty" else buf.device
    dev *= 3.0  # in place, on the device
    getattr(buf, mark)()
    np.testing.assert_allclose(buf.host, data * 3.0, rtol=1e-6)
    assert buf.state == BufferState.SYNCHRONIZED
    # a newly computed result can become the device copy too
    buf.set_device(mx.add(buf.device, 1.0))
    np.testing.assert_allclose(buf.to_numpy(), data * 3.0 + 1.0, rtol=1e-6)


def test_unified_buffer_device_only_and_helpers(rng):
    buf = UnifiedBuffer(6, dtype=np.int32).allocate(host=False, device=True)
    assert buf.state == BufferState.DEVICE_ONLY
    assert buf.host.tolist() == [0] * 6
    buf.fill(7)
    assert buf.state == BufferState.HOST_DIRTY
    assert host(buf.device).tolist() == [7] * 6
    src = rng.integers(-100, 100, 6).astype(np.int32)
    buf.copy_from(src)
    buf.sync_to_device()
    assert host(buf.device).tolist() == src.tolist()
    out = np.empty(6, np.int32)
    buf.copy_to(out)
    assert out.tolist() == src.tolist()
    buf[2] = 5
    assert buf.state == BufferState.HOST_DIRTY and buf[2] == 5
    buf.synchronize()
    assert host(buf.device)[2] == 5
    assert buf.zeros().to_numpy().tolist() == [0] * 6


def test_unified_buffer_float64():
    buf = UnifiedBuffer((3,), dtype=np.float64).allocate()
    buf.host[:] = [1.5, 2.5, 3.5]
    buf.mark_host_dirty()
    d = buf.device
    want = ingot.float32 if d.device.kind == "metal" else ingot.float64
    assert d.dtype == want
    d += 1.0
    buf.mark_device_dirty()
    assert buf.host.dtype == np.float64 and buf.host.tolist() == [2.5, 3.5, 4.5]
