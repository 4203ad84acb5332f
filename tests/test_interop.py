"""DLPack and ``__cuda_array_interface__``: zero-copy exchange with NumPy on the CPU and with
PyTorch and CuPy on CUDA (those tests skip, with the reason, without a CUDA test device or
without the library), including producer tensors that start at odd addresses."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import DEVICE, cpu_only, make, random_data, to_np

on_cuda = pytest.mark.skipif(DEVICE.kind != "cuda", reason="needs INGOT_DEVICE=cuda")


def _torch():
    return pytest.importorskip("torch", reason="PyTorch is not installed")


def _cupy():
    return pytest.importorskip("cupy", reason="CuPy is not installed")


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


# ---- CPU: NumPy ------------------------------------------------------------------------------


@cpu_only
def test_dlpack_device_of_cpu_arrays(rng):
    x = make(random_data(rng, (3, 4), "float32"))
    assert x.__dlpack_device__() == (1, 0)


@cpu_only
@pytest.mark.parametrize("dtype", ["float32", "int16", "uint8", "float64", "bool"])
def test_numpy_reads_ingot_arrays_without_copy(rng, dtype):
    a = random_data(rng, (5, 7), dtype)
    x = make(a)
    n = np.from_dlpack(x)
    np.testing.assert_array_equal(n, a)
    assert _address(n) == x.__array_interface__["data"][0]


@cpu_only
def test_ingot_views_numpy_memory_and_sees_writes(rng):
    a = random_data(rng, (6, 8), "float32")
    x = ingot.from_dlpack(a)
    np.testing.assert_array_equal(to_np(x), a)
    a[2, 3] = 1234.5
    assert float(x[2, 3]) == 1234.5


@cpu_only
def test_strided_and_offset_numpy_producers(rng):
    base = random_data(rng, (9, 12), "float64")
    for view in (base[1:, ::2], base[::-1, 3:], base.T, base[2:7, 5]):
        x = ingot.from_dlpack(view)
        assert x.shape == view.shape
        np.testing.assert_array_equal(to_np(x), view)
        np.testing.assert_allclose(to_np(x + 1.0), view + 1.0)


@cpu_only
def test_from_dlpack_copy_and_device_options(rng):
    a = random_data(rng, (4, 4), "float32")
    x = ingot.from_dlpack(a, copy=True)
    a[0, 0] = -777.0
    assert float(x[0, 0]) != -777.0


# ---- CUDA: PyTorch and CuPy -------------------------------------------------------------------


@on_cuda
def test_dlpack_device_of_cuda_arrays(rng):
    x = make(random_data(rng, (3, 4), "float32"))
    assert x.__dlpack_device__() == (2, DEVICE.index or 0)


@on_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "int64", "uint8", "bool"])
def test_torch_tensors_become_ingot_arrays_without_copy(rng, dtype):
    torch = _torch()
    a = random_data(rng, (64, 33), dtype)
    t = torch.from_numpy(a).cuda()
    x = ingot.from_dlpack(t)
    assert x.device == DEVICE and x.shape == (64, 33)
    np.testing.assert_array_equal(to_np(x), a)
    assert x.__cuda_array_interface__["data"][0] == t.data_ptr()
    # A write through PyTorch shows in the ingot array (same memory).
    if dtype != "bool":
        t.fill_(3)
        torch.cuda.synchronize()
        np.testing.assert_array_equal(to_np(x), np.full(a.shape, 3, dtype=a.dtype))


@on_cuda
def test_torch_reads_ingot_arrays_without_copy(rng):
    torch = _torch()
    a = random_data(rng, (40, 50), "float32")
    x = make(a)
    t = torch.from_dlpack(x)
    assert t.is_cuda and tuple(t.shape) == a.shape
    assert t.data_ptr() == x.__cuda_array_interface__["data"][0]
    np.testing.assert_array_equal(t.cpu().numpy(), a)


@on_cuda
def test_cupy_exchange_both_ways(rng):
    cp = _cupy()
    a = random_data(rng, (30, 20), "float64")
    x = make(a)
    via_interface = cp.asarray(x)  # __cuda_array_interface__
    via_dlpack = cp.from_dlpack(x)
    for c in (via_interface, via_dlpack):
        assert c.data.ptr == x.__cuda_array_interface__["data"][0]
        np.testing.assert_array_equal(cp.asnumpy(c), a)
    c = cp.asarray(random_data(rng, (30, 20), "float32"))
    y = ingot.from_dlpack(c)
    np.testing.assert_array_equal(to_np(y), cp.asnumpy(c))


@on_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int16"])
def test_ops_on_producer_tensors_at_odd_addresses(rng, dtype):
    """A slice of a PyTorch tensor starts one element into its allocation: vectorised kernels
    must see the real address (a misaligned vector access would be a device fault)."""
    torch = _torch()
    n = 1 << 16
    a = random_data(rng, (n + 1,), dtype)
    t = torch.from_numpy(a).cuda()[1:]
    assert t.data_ptr() % 16 != 0
    x = ingot.from_dlpack(t)
    ref = a[1:].astype(np.float64)
    np.testing.assert_allclose(to_np(x + x).astype(np.float64), ref + ref, rtol=1e-3)
    np.testing.assert_allclose(float(ingot.sum(x.astype("float64"))), ref.sum(), rtol=1e-9)
    np.testing.assert_array_equal(to_np(x.astype("float32")), a[1:].astype(np.float32))
    assert int(ingot.argmax(x)) == int(np.argmax(a[1:]))
    # A transposed copy of a 2-D producer view at an odd address.
    m = random_data(rng, (257, 130), dtype)
    tm = torch.from_numpy(m).cuda()[:, 1:]
    xm = ingot.from_dlpack(tm)
    np.testing.assert_array_equal(to_np(xm.T.copy()), m[:, 1:].T)
    np.testing.assert_array_equal(to_np(xm.copy()), m[:, 1:])
