"""The Array object: attributes, conversions, repr, devices, NumPy interop."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ingot
from conftest import (ALL_DTYPES, DEVICE, ON_CPU, check_interpreter_alive, cpu_only, make,
                      needs_gpu, random_data, to_np)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_attributes(rng, dtype):
    x = make(random_data(rng, (2, 3, 4), dtype), dtype)
    assert x.shape == (2, 3, 4)
    assert x.ndim == 3 and x.size == 24 and len(x) == 2
    assert x.dtype == dtype and x.dtype is getattr(ingot, dtype)
    assert x.itemsize == x.dtype.itemsize and x.nbytes == 24 * x.itemsize
    assert x.device == DEVICE
    assert x.T.shape == (4, 3, 2) and x.mT.shape == (2, 4, 3)
    assert x.__array_namespace__() is ingot
    assert x.is_contiguous and not x[:, ::2].is_contiguous


def test_transposes_are_views(rng):
    a = random_data(rng, (3, 5), "float32")
    x = make(a)
    np.testing.assert_array_equal(to_np(x.T), a.T)
    np.testing.assert_array_equal(to_np(x.mT), a.T)
    assert x.T._shares_buffer(x)
    np.testing.assert_array_equal(to_np(ingot.matrix_transpose(x)), a.T)
    np.testing.assert_array_equal(to_np(ingot.permute_dims(make(random_data(rng, (2, 3, 4), "int8")), (2, 0, 1))).shape, (4, 2, 3))
    with pytest.raises(ValueError):
        make(np.arange(3)).mT


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8", "bfloat16", "float16"])
def test_scalar_conversions(dtype):
    one = ingot.asarray([1], device=DEVICE).astype(dtype)
    assert bool(one) is True
    assert int(one) == 1 and isinstance(int(one), int)
    assert float(one) == 1.0 and isinstance(float(one), float)
    item = one.item()
    assert item == 1
    assert isinstance(item, bool if dtype == "bool" else (float if "float" in dtype else int))


def test_index_protocol():
    i = ingot.asarray(2, dtype=ingot.int32, device=DEVICE)
    assert [10, 20, 30][i] == 30
    assert i.__index__() == 2
    with pytest.raises(TypeError):
        [1, 2][ingot.asarray(1.0, device=DEVICE)]


def test_size_conversions_of_bigger_arrays_raise(rng):
    x = make(random_data(rng, 3, "float32"))
    for f in (bool, int, float):
        with pytest.raises(ValueError):
            f(x)
    with pytest.raises(ValueError):
        x.item()
    with pytest.raises(TypeError):
        len(ingot.asarray(1.0))
    with pytest.raises(TypeError):
        iter(ingot.asarray(1.0))
    check_interpreter_alive()


def test_iteration_and_tolist(rng):
    a = random_data(rng, (3, 2), "int16")
    x = make(a)
    rows = list(x)
    assert len(rows) == 3
    for r, e in zip(rows, a):
        np.testing.assert_array_equal(to_np(r), e)
    assert x.tolist() == a.tolist()
    assert ingot.asarray(2.5).tolist() == 2.5
    assert make(np.zeros((0, 3), dtype=np.float32)).tolist() == []


def test_repr_and_str():
    x = ingot.asarray([1.0, 2.0], dtype=ingot.float32)
    suffix = "" if x.device.kind == "cpu" else f", device='{x.device}'"

    def want(text):  # NumPy's repr, plus the device for arrays that are not on the CPU
        return text[:-1] + suffix + ")"

    assert repr(x) == want("Array([1., 2.], dtype=float32)")
    assert repr(ingot.asarray([[1, 2], [3, 4]], dtype=ingot.int8)) == want(
        "Array([[1, 2],\n       [3, 4]], dtype=int8)")
    assert repr(ingot.asarray(True)) == want("Array(True, dtype=bool)")
    assert repr(ingot.zeros((0, 2), dtype=ingot.float32)) == want("Array([], shape=(0, 2), dtype=float32)")
    assert repr(ingot.asarray([0.5, 1.5], dtype=ingot.bfloat16)) == want("Array([0.5, 1.5], dtype=bfloat16)")
    assert str(ingot.asarray([1, 2], dtype=ingot.int32)) == "[1 2]"
    assert f"{ingot.asarray(2.5):.2f}" == "2.50"
    big = ingot.zeros(5000, dtype=ingot.float32)
    assert "..." in repr(big)


@pytest.mark.parametrize("dtype", [d for d in ALL_DTYPES if d != "bfloat16"])
def test_numpy_asarray_dtype_and_copy_arguments(rng, dtype):
    a = random_data(rng, (2, 3), dtype)
    x = make(a)
    n = np.asarray(x)
    assert n.dtype == dtype
    np.testing.assert_array_equal(n, a)
    np.testing.assert_array_equal(np.asarray(x, dtype=np.float64), a.astype(np.float64))
    c = np.array(x, copy=True)
    if ON_CPU:
        assert not np.shares_memory(c, np.asarray(x))
    np.testing.assert_array_equal(x.__array__(), a)
    np.testing.assert_array_equal(x.__array__(np.float64), a.astype(np.float64))
    np.testing.assert_array_equal(x.__array__(dtype=None, copy=True), a)


def test_bfloat16_converts_to_float32_for_numpy():
    x = ingot.asarray([1.5, -2.25, 3.0], dtype=ingot.bfloat16, device=DEVICE)
    n = np.asarray(x)
    assert n.dtype in (np.float32,) or n.dtype.name == "bfloat16"
    np.testing.assert_array_equal(n.astype(np.float32), [1.5, -2.25, 3.0])
    with pytest.raises(AttributeError):
        x.__array_interface__


@pytest.mark.skipif(DEVICE.kind != "cuda", reason="CUDA arrays only")
def test_cuda_arrays_are_copied_to_numpy(rng):
    a = random_data(rng, (3, 5), "float32")
    x = make(a)
    with pytest.raises(AttributeError):
        x.__array_interface__
    n1, n2 = np.asarray(x), np.asarray(x)
    np.testing.assert_array_equal(n1, a)
    assert not np.shares_memory(n1, n2)
    with pytest.raises(ValueError):
        x.__array__(copy=False)


@cpu_only
def test_numpy_views_of_ingot_arrays(rng):
    a = random_data(rng, (4, 6), "float64")
    x = make(a.copy())
    v = np.asarray(x[1:, ::-2])
    np.testing.assert_array_equal(v, a[1:, ::-2])
    v[0, 0] = 99.0
    assert float(x[1, 5]) == 99.0
    assert np.asarray(x).flags.writeable


def test_copy_astype_reshape(rng):
    a = random_data(rng, (3, 4), "float32")
    x = make(a)
    c = x.copy()
    assert not c._shares_buffer(x)
    np.testing.assert_array_equal(to_np(c), a)
    assert x.astype(ingot.float32, copy=False) is x
    assert x.astype("float32").dtype == ingot.float32
    r = x.reshape((4, 3))
    assert r._shares_buffer(x)
    np.testing.assert_array_equal(to_np(r), a.reshape(4, 3))
    np.testing.assert_array_equal(to_np(x.T.reshape(-1)), a.T.reshape(-1))
    assert not x.reshape((2, 6), copy=True)._shares_buffer(x)
    with pytest.raises(ValueError):
        x.T.reshape(-1, copy=False)
    with pytest.raises(ValueError):
        x.reshape((5, 3))
    with pytest.raises(ValueError):
        x.reshape((-1, -1))


@pytest.mark.parametrize("src", ALL_DTYPES)
@pytest.mark.parametrize("dst", ALL_DTYPES)
def test_astype_matches_numpy(rng, src, dst):
    if src in ("bfloat16",) or dst in ("bfloat16",):
        data = random_data(rng, 20, "bfloat16", -100, 100)
        x = make(data, "bfloat16").astype(dst)
        got = to_np(x)
        ref = data.astype(np.float32) if dst in ("bfloat16", "float32", "float64", "float16") else None
        if ref is not None:
            np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=1e-2)
        return
    # in-range values (out-of-range float->int casts are undefined in C and platform-specific in NumPy)
    lo, hi = (0, 100) if dst.startswith("uint") or src.startswith("uint") else (-100, 100)
    a = random_data(rng, 50, src, lo, hi)
    if src.startswith("float"):
        a[:3] = [np.nan, np.inf, -0.0] if dst.startswith("float") or dst == "bool" else a[:3]
    x = make(a).astype(dst)
    assert x.dtype == dst
    np.testing.assert_array_equal(to_np(x), a.astype(dst))


def test_integer_wrap_around_casts(rng):
    a = np.array([300, -1, 65537, -129, 2**40 + 5], dtype=np.int64)
    for dst in ("int8", "uint8", "int16", "uint16", "int32", "uint32"):
        np.testing.assert_array_equal(to_np(make(a).astype(dst)), a.astype(dst))


def test_pickle_round_trip(rng):
    a = random_data(rng, (3, 2), "int32")
    x = make(a)
    y = pickle.loads(pickle.dumps(x))
    assert y.dtype == x.dtype and y.device == x.device
    np.testing.assert_array_equal(to_np(y), a)


def test_devices():
    cpu = ingot.Device("cpu")
    assert repr(cpu) == "Device('cpu')" and str(cpu) == "cpu"
    assert cpu == "cpu" and cpu == ingot.Device("CPU") and hash(cpu) == hash(ingot.Device("cpu"))
    assert cpu in ingot.devices()
    assert ingot.devices()[-1] == cpu
    assert ingot.default_device() in ingot.devices()
    assert cpu.kind == "cpu" and cpu.index == 0 and cpu.is_available()
    assert isinstance(cpu.name(), str)
    assert cpu.memory_info()["total"] > 0
    assert ingot.Device("cuda:1") == "cuda:1" and ingot.Device("cuda") == ingot.Device("cuda:0")
    assert pickle.loads(pickle.dumps(cpu)) == cpu
    for bad in ("tpu", "cuda:x", "cpu:1", ""):
        with pytest.raises(ValueError):
            ingot.Device(bad)
    with pytest.raises(TypeError):
        ingot.Device(3)


def test_unavailable_device_raises_device_unavailable():
    missing = [d for d in ("cuda:7", "metal:5") if not ingot.Device(d).is_available()]
    for name in missing:
        with pytest.raises(ingot.DeviceUnavailableError):
            ingot.zeros(3, device=name)
        with pytest.raises(ingot.DeviceUnavailableError):
            ingot.asarray([1, 2]).to_device(name)
        with pytest.raises(ingot.DeviceError):
            ingot.Device(name).name()
    assert issubclass(ingot.DeviceUnavailableError, ingot.IngotError)
    check_interpreter_alive()


def test_to_device_same_device_is_identity(rng):
    x = make(random_data(rng, 4, "float32"))
    assert x.to_device(DEVICE) is x
    assert x.to_device(str(DEVICE)) is x


@needs_gpu
def test_to_device_round_trip(rng):
    a = random_data(rng, (5, 7), "float32")
    x = make(a)
    y = x.to_device("cpu").to_device(DEVICE)
    np.testing.assert_array_equal(to_np(y), a)


def test_exception_hierarchy():
    assert issubclass(ingot.KernelArgumentError, ingot.IngotError)
    assert issubclass(ingot.KernelArgumentError, TypeError)
    assert issubclass(ingot.KernelArgumentError, ValueError)
    assert issubclass(ingot.CompileError, ingot.IngotError)
    assert issubclass(ingot.DeviceMismatchError, ValueError)
    assert issubclass(ingot.UnsupportedError, NotImplementedError)
    assert ingot.IngotError.__module__ == "ingot"
    assert issubclass(ingot.IngotError, Exception)


def test_device_context_sets_the_thread_default(rng):
    import threading

    outer = ingot.default_device()
    with ingot.Device("cpu") as d:
        assert d == "cpu"
        assert ingot.default_device() == "cpu"
        x = ingot.asarray(rng.standard_normal(5))
        assert x.device == "cpu"
        seen = []
        # Another thread keeps its own current device.
        t = threading.Thread(target=lambda: seen.append(ingot.default_device()))
        t.start()
        t.join()
        assert seen == [outer]
        with ingot.Device(outer):
            assert ingot.default_device() == outer
        assert ingot.default_device() == "cpu"
    assert ingot.default_device() == outer


def test_device_context_rejects_absent_devices():
    before = ingot.default_device()
    with pytest.raises(ingot.DeviceUnavailableError):
        with ingot.Device("cuda:97"):
            pass
    assert ingot.default_device() == before
