"""Compilation per entry point, function constants given per function, and bad-entry isolation.

``ingot.compile`` only reflects a library; obtaining (or calling) one kernel compiles that
kernel's unit alone, once, cached in memory and on disk. Function constants follow Metal: a
library compiles without their values and each ``lib.function(name, constants=...)``
specialisation is compiled lazily and cached. One kernel that does not compile does not break
the others.
"""

from __future__ import annotations

import os
import uuid

import numpy as np
import pytest

import ingot

from conftest import DEVICE

CACHE_EXT = {"cpu": ".so", "cuda": ".cubin"}


def _salt() -> str:
    # A comment that makes the source new to the memory and disk caches.
    return f"// {uuid.uuid4().hex}\n"


def _cache_entries(root) -> set[str]:
    """The compiled units in the kernel cache under ``root`` (CPU and CUDA engines)."""
    ext = CACHE_EXT.get(DEVICE.kind)
    folder = os.path.join(root, DEVICE.kind)
    if ext is None or not os.path.isdir(folder):
        return set()
    return {n for n in os.listdir(folder) if n.endswith(ext) and not n.startswith(".")}


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("INGOT_CACHE_DIR", str(tmp_path))
    return str(tmp_path)


def _many_kernels(n: int) -> str:
    """``n`` plain kernels ``k_<i>``: out = a * i + 1, and a template instantiated 3 times."""
    lines = ["#include <metal_stdlib>", "using namespace metal;"]
    for i in range(n):
        lines.append(
            f"kernel void k_{i}(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],"
            f" uint i [[thread_position_in_grid]]) {{ out[i] = a[i] * {i}.0f + 1.0f; }}"
        )
    lines.append(
        "template <typename T> kernel void shift(device const T* a [[buffer(0)]],"
        " device T* out [[buffer(1)]], uint i [[thread_position_in_grid]]) { out[i] = a[i] + T(3); }"
    )
    for t in ["float", "int", "uint"]:
        lines.append(
            f'template [[host_name("shift_{t}")]] kernel void shift<{t}>(device const {t}*,'
            f" device {t}*, uint);"
        )
    return _salt() + "\n".join(lines) + "\n"


def _poisoned(n: int) -> np.ndarray:
    return np.full(n, np.nan, dtype=np.float32)


def test_compile_reflects_everything_and_compiles_nothing(cache_dir):
    lib = ingot.compile(_many_kernels(300), device=DEVICE)
    assert len(lib.functions) == 303
    assert lib.functions[0] == "k_0" and lib.functions[-1] == "shift_uint"
    assert lib.compiled_units == 0
    assert _cache_entries(cache_dir) == set()
    assert "k_299" in lib and "k_300" not in lib


def test_one_call_compiles_one_unit(cache_dir, rng):
    # A call with NumPy arguments on a GPU may compile the engine's own copy kernels into the
    # fresh cache folder once: a first call of another library makes that happen before.
    a = rng.standard_normal(1000).astype(np.float32)
    out = _poisoned(1000)
    ingot.compile(_many_kernels(1), device=DEVICE)["k_0"](1000, a, out)
    before = _cache_entries(cache_dir)
    lib = ingot.compile(_many_kernels(300), device=DEVICE)
    lib["k_137"](1000, a, out)
    np.testing.assert_allclose(out, a.astype(np.float64) * 137 + 1, rtol=1e-6, atol=1e-6)
    assert lib.compiled_units == 1
    on_disk = _cache_entries(cache_dir)
    if DEVICE.kind in CACHE_EXT:
        assert len(on_disk - before) == 1
    # Cached: calling again, or obtaining it again, compiles nothing more.
    out2 = _poisoned(1000)
    lib.function("k_137")(1000, a, out2)
    np.testing.assert_array_equal(out2, out)
    assert lib.compiled_units == 1
    assert _cache_entries(cache_dir) == on_disk
    # Another kernel is another unit.
    lib["k_5"](1000, a, out)
    np.testing.assert_allclose(out, a.astype(np.float64) * 5 + 1, rtol=1e-6, atol=1e-6)
    assert lib.compiled_units == 2
    if DEVICE.kind in CACHE_EXT:
        assert len(_cache_entries(cache_dir) - before) == 2


def test_instantiations_compile_alone(cache_dir, rng):
    lib = ingot.compile(_many_kernels(20), device=DEVICE)
    a = rng.integers(-1000, 1000, 257).astype(np.int32)
    out = np.full(257, -7777, dtype=np.int32)
    lib["shift_int"](257, a, out)
    np.testing.assert_array_equal(out, a + 3)
    assert lib.compiled_units == 1


def test_prepare_compiles_units_in_parallel(cache_dir, rng):
    lib = ingot.compile(_many_kernels(50), device=DEVICE)
    names = ["k_3", "k_17", "k_42", "shift_float"]
    kernels = lib.prepare(names)
    assert [k.name for k in kernels] == names
    assert lib.compiled_units == 4
    if DEVICE.kind in CACHE_EXT:
        assert len(_cache_entries(cache_dir)) == 4
    a = rng.standard_normal(300).astype(np.float32)
    for k, scale in zip(kernels[:3], [3, 17, 42]):
        out = _poisoned(300)
        k(300, a, out)
        np.testing.assert_allclose(out, a.astype(np.float64) * scale + 1, rtol=1e-6, atol=1e-6)
    out = _poisoned(300)
    kernels[3](300, a, out)
    np.testing.assert_allclose(out, a.astype(np.float64) + 3, rtol=1e-6, atol=1e-6)
    # Obtaining a prepared kernel compiles nothing more.
    lib["k_17"]
    assert lib.compiled_units == 4


FC_SOURCE = """
#include <metal_stdlib>
using namespace metal;
constant int FC_BASE = 10;
constant bool has_bias [[function_constant(0)]];
constant float scale [[function_constant(FC_BASE + 1)]];
constant int unroll [[function_constant(FC_BASE * 2 + 2)]];

kernel void axpb(device const float* a [[buffer(0)]],
                 device float* out [[buffer(1)]],
                 device const float* bias [[buffer(2), function_constant(has_bias)]],
                 uint i [[thread_position_in_grid]]) {
    out[i] = a[i] * scale + (has_bias ? bias[i] : 0.0f);
}

kernel void probe(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = is_function_constant_defined(unroll) ? unroll : -1;
}

kernel void repeat(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float s = 0.0f;
    for (int k = 0; k < unroll; ++k) { s += float(k); }
    out[i] = s;
}

kernel void plain(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = float(i) * 0.5f;
}
"""


def test_library_compiles_without_constant_values(rng):
    lib = ingot.compile(_salt() + FC_SOURCE, device=DEVICE)
    assert {c["name"]: c["index"] for c in lib.function_constants} == {
        "has_bias": 0,
        "scale": 11,
        "unroll": 22,
    }
    out = _poisoned(64)
    lib["plain"](64, out)
    np.testing.assert_array_equal(out, np.arange(64) * 0.5)


@pytest.mark.parametrize("bias", [True, False])
def test_specialisations_by_name_and_index(rng, bias):
    lib = ingot.compile(_salt() + FC_SOURCE, device=DEVICE)
    scale = float(rng.uniform(-4, 4))
    k = lib.function("axpb", constants={"has_bias": bias, 11: scale})
    n = 513
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = _poisoned(n)
    expect = a.astype(np.float64) * np.float32(scale)
    if bias:
        assert [p.name for p in k.arguments] == ["a", "out", "bias"]
        k(n, a, out, b)
        expect = expect + b
    else:
        assert [p.name for p in k.arguments] == ["a", "out"]
        k(n, a, out)
    np.testing.assert_allclose(out, expect, rtol=1e-6, atol=1e-5)


def test_each_specialisation_is_compiled_once():
    lib = ingot.compile(_salt() + FC_SOURCE, device=DEVICE)
    lib.function("repeat", constants={"unroll": 3})
    lib.function("repeat", constants={"unroll": 3})
    assert lib.compiled_units == 1
    lib.function("repeat", constants={22: 3})  # the same value by index: another key
    lib.function("repeat", constants={"unroll": 5})
    assert lib.compiled_units == 3
    for count in [0, 3, 5]:
        out = _poisoned(40)
        lib.function("repeat", constants={"unroll": count})(40, out)
        np.testing.assert_array_equal(out, np.full(40, sum(range(count)), dtype=np.float32))


def test_is_function_constant_defined():
    lib = ingot.compile(_salt() + FC_SOURCE, device=DEVICE)
    out = np.full(16, 12345, dtype=np.int32)
    lib["probe"](16, out)
    np.testing.assert_array_equal(out, np.full(16, -1))
    out = np.full(16, 12345, dtype=np.int32)
    lib.function("probe", constants={"unroll": 7})(16, out)
    np.testing.assert_array_equal(out, np.full(16, 7))


def test_missing_constants_are_named():
    lib = ingot.compile(_salt() + FC_SOURCE, device=DEVICE)
    with pytest.raises(ingot.KernelArgumentError) as e:
        lib.function("axpb")
    msg = str(e.value)
    assert "axpb" in msg and "has_bias" in msg and "scale" in msg
    assert "unroll" not in msg  # other kernels' constants are not required
    with pytest.raises(ingot.KernelArgumentError, match="scale"):
        lib.function("axpb", constants={"has_bias": False})
    with pytest.raises(ingot.KernelArgumentError, match="no function constant named `nope`"):
        lib.function("plain", constants={"nope": 1})
    with pytest.raises(TypeError):
        lib.function("plain", constants={"unroll": "three"})


def test_compile_time_constants_still_work(rng):
    lib = ingot.compile(
        _salt() + FC_SOURCE, device=DEVICE, constants={"has_bias": True, "scale": 2.0}
    )
    n = 100
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    out = _poisoned(n)
    lib["axpb"](n, a, out, b)
    np.testing.assert_allclose(out, a.astype(np.float64) * 2 + b, rtol=1e-6, atol=1e-6)
    # A function's values win over the library's.
    out = _poisoned(n)
    lib.function("axpb", constants={"has_bias": False})(n, a, out)
    np.testing.assert_allclose(out, a.astype(np.float64) * 2, rtol=1e-6)


BAD_SOURCE = """
#include <metal_stdlib>
using namespace metal;
kernel void good(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    out[i] = a[i] * 2.0f;
}
kernel void bad(device const float* a [[buffer(0)]], device float* out [[buffer(1)]],
                uint i [[thread_position_in_grid]]) {
    out[i] = no_such_function_anywhere(a[i]);
}
kernel void also_good(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = float(i);
}
"""


@pytest.mark.skipif(DEVICE.kind == "metal", reason="Metal compiles a library as a whole")
def test_a_bad_kernel_does_not_break_the_others(rng):
    lib = ingot.compile(_salt() + BAD_SOURCE, device=DEVICE)
    assert lib.functions == ["good", "bad", "also_good"]
    a = rng.standard_normal(77).astype(np.float32)
    out = _poisoned(77)
    lib["good"](77, a, out)
    np.testing.assert_array_equal(out, a * 2)
    with pytest.raises(ingot.CompileError) as e:
        lib["bad"]
    msg = str(e.value)
    assert "kernel `bad`" in msg and "no_such_function_anywhere" in msg
    out = _poisoned(77)
    lib["also_good"](77, out)
    np.testing.assert_array_equal(out, np.arange(77, dtype=np.float32))
    # The failure is not cached as a success: asking again raises again.
    with pytest.raises(ingot.CompileError):
        lib.function("bad")
