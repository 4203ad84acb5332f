"""Dask arrays whose chunks are ingot arrays (``ingot.dask``), on the test device: creation,
elementwise operations, reductions, matmul, ``map_blocks`` with a user MSL kernel, rechunking,
pickling, the threaded scheduler and a two-process ``ingot.dask.cluster``. Every result is
compared with NumPy computing in float64 on the same random data."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import ingot

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
import ingot.dask  # noqa: E402  (registers ingot arrays with Dask)

from conftest import DEVICE  # noqa: E402

# Metal GPUs have no float64: the data is float32 there.
DTYPE = "float32" if DEVICE.kind == "metal" else "float64"
RTOL = 1e-4 if DTYPE == "float32" else 1e-10


def on_device(a: np.ndarray) -> ingot.Array:
    return ingot.asarray(a.astype(DTYPE), device=DEVICE)


def check(got, want, rtol=RTOL, atol=0.0):
    assert isinstance(got, ingot.Array), type(got)
    assert got.device == DEVICE, got.device
    np.testing.assert_allclose(np.asarray(got).astype(np.float64), want, rtol=rtol,
                               atol=atol + rtol * float(np.max(np.abs(want), initial=1.0)))


@pytest.fixture(autouse=True)
def threads():
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture
def data(rng):
    a = rng.standard_normal((37, 29)) * 10
    b = rng.standard_normal((37, 29)) * 3 + 1
    return a.astype(DTYPE).astype(np.float64), b.astype(DTYPE).astype(np.float64)


def test_chunks_and_meta_are_ingot_arrays(data):
    a, _ = data
    x = da.from_array(on_device(a), chunks=(10, 8), asarray=False)
    assert isinstance(x._meta, ingot.Array)
    assert x.dtype == DTYPE
    assert x.numblocks == (4, 4)
    block = x.blocks[1, 2].compute()
    assert isinstance(block, ingot.Array) and block.device == DEVICE
    np.testing.assert_array_equal(np.asarray(block), a[10:20, 16:24])
    check(x.compute(), a, rtol=0)


def test_elementwise(data):
    a, b = data
    x = da.from_array(on_device(a), chunks=(10, 8), asarray=False)
    y = da.from_array(on_device(b), chunks=(10, 8), asarray=False)
    got = (x * 2 + da.exp(y / 4) - abs(x) / (y * y + 1)) ** 2
    want = (a * 2 + np.exp(b / 4) - np.abs(a) / (b * b + 1)) ** 2
    check(got.compute(), want)
    check(da.maximum(x, y).compute(), np.maximum(a, b), rtol=0)
    check(da.where(x > y, x, -y).compute(), np.where(a > b, a, -b), rtol=0)
    check((x[::2, 3:] + 1.5).T.compute(), (a[::2, 3:] + 1.5).T, rtol=0)


@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reductions(data, axis):
    a, _ = data
    x = da.from_array(on_device(a), chunks=(10, 8), asarray=False)
    check(x.sum(axis=axis).compute(), a.sum(axis=axis))
    check(x.mean(axis=axis).compute(), a.mean(axis=axis))
    check(x.var(axis=axis).compute(), a.var(axis=axis))
    check(x.std(axis=axis, ddof=1).compute(), a.std(axis=axis, ddof=1))
    check(x.max(axis=axis).compute(), a.max(axis=axis), rtol=0)
    check(da.min(x, axis=axis).compute(), a.min(axis=axis), rtol=0)
    got = x.argmax(axis=axis).compute()
    assert isinstance(got, ingot.Array) and got.device == DEVICE
    np.testing.assert_array_equal(np.asarray(got), a.argmax(axis=axis))
    np.testing.assert_array_equal(np.asarray(x.argmin(axis=axis).compute()), a.argmin(axis=axis))


def test_reduction_tree_with_small_split_every(rng):
    a = rng.standard_normal(1000).astype(DTYPE).astype(np.float64)
    x = da.from_array(on_device(a), chunks=37, asarray=False)
    check(x.sum(split_every=2).compute(), a.sum())
    check(x.var(split_every=3).compute(), a.var())
    assert int(x.argmax(split_every=2).compute()) == int(a.argmax())


def test_matmul_and_tensordot(rng):
    a = rng.standard_normal((40, 33)).astype(DTYPE).astype(np.float64)
    b = rng.standard_normal((33, 21)).astype(DTYPE).astype(np.float64)
    x = da.from_array(on_device(a), chunks=(16, 10), asarray=False)
    y = da.from_array(on_device(b), chunks=(10, 8), asarray=False)
    check((x @ y).compute(), a @ b)
    check(da.tensordot(x, y, axes=1).compute(), a @ b)
    check(da.einsum("ij,jk->ik", x, y).compute(), a @ b)
    check((x @ x.T).mean().compute(), (a @ a.T).mean())


def test_rechunk(data):
    a, b = data
    x = da.from_array(on_device(a), chunks=(10, 8), asarray=False)
    r = x.rechunk((7, 13))
    assert r.chunks == ((7, 7, 7, 7, 7, 2), (13, 13, 3))
    check(r.compute(), a, rtol=0)
    y = da.from_array(on_device(b), chunks=(37, 29), asarray=False)
    check((r + y.rechunk((5, 29))).sum(axis=1).compute(), (a + b).sum(axis=1))
    check(da.concatenate([x, r], axis=0).compute(), np.concatenate([a, a]), rtol=0)


SAXPY = """
#include <metal_stdlib>
using namespace metal;
kernel void saxpy(device const SCALAR *x [[buffer(0)]], device SCALAR *y [[buffer(1)]],
                  constant SCALAR &alpha [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    y[i] = alpha * x[i] + y[i] * y[i];
}
"""


def _kernel_block(x: ingot.Array, alpha: float) -> ingot.Array:
    """One chunk through the user kernel: y = alpha * x + y * y with y = x + 1."""
    src = SAXPY.replace("SCALAR", "float" if x.dtype == ingot.float32 else "double")
    k = ingot.compile(src, device=x.device)["saxpy"]
    x = x.copy()  # the kernel reads a contiguous copy of the chunk (chunks can be views)
    y = x + 1
    k(x.size, x, y, alpha)
    return y


def test_map_blocks_with_user_kernel_and_meta(data):
    a, _ = data
    x = da.from_array(on_device(a), chunks=(10, 8), asarray=False)
    meta = ingot.empty((0,), dtype=DTYPE, device=DEVICE)
    y = x.map_blocks(_kernel_block, 0.5, dtype=DTYPE, meta=meta)
    assert isinstance(y._meta, ingot.Array)
    check(y.compute(), 0.5 * a + (a + 1) ** 2)
    check(y.sum(axis=0).compute(), (0.5 * a + (a + 1) ** 2).sum(axis=0))


def _make_block(seed: int, block_info=None) -> ingot.Array:
    """A chunk created where the task runs (on the default device there)."""
    loc = block_info[None]["chunk-location"]
    shape = block_info[None]["chunk-shape"]
    g = np.random.default_rng([seed, *loc])
    return ingot.asarray(g.standard_normal(shape).astype(DTYPE))


def _reference(seed: int, chunks) -> np.ndarray:
    rows = []
    for i, r in enumerate(chunks[0]):
        rows.append([np.random.default_rng([seed, i, j]).standard_normal((r, c)).astype(DTYPE)
                     for j, c in enumerate(chunks[1])])
    return np.block(rows).astype(np.float64)


def test_map_blocks_creating_chunks_and_from_delayed(rng):
    seed = int(rng.integers(2**31))
    chunks = ((12, 12, 5), (9, 9))
    meta = ingot.empty((0, 0), dtype=DTYPE, device=DEVICE)
    with ingot.Device(DEVICE):
        x = da.map_blocks(_make_block, seed, chunks=chunks, dtype=DTYPE, meta=meta)
        want = _reference(seed, chunks)
        check(x.compute(), want, rtol=0)
        check((x @ x.T).sum(axis=1).compute(), (want @ want.T).sum(axis=1))
    d = dask.delayed(on_device)(want[:5])
    y = da.from_delayed(d, shape=(5, 18), dtype=DTYPE, meta=meta)
    check(da.concatenate([y, y]).sum(axis=0).compute(), np.concatenate([want[:5]] * 2).sum(0))


def test_numpy_protocols_on_ingot_arrays(data):
    a, b = data
    x, y = on_device(a), on_device(b)
    got = np.add(np.exp(x / 8), y)
    check(got, np.exp(a / 8) + b)
    check(np.sum(x, axis=0, keepdims=True), a.sum(axis=0, keepdims=True))
    check(np.add.reduce(x, axis=1), a.sum(axis=1))
    check(np.concatenate([x, y], axis=1), np.concatenate([a, b], axis=1), rtol=0)
    check(np.tensordot(x, y, axes=([0], [0])), np.tensordot(a, b, axes=([0], [0])))
    check(np.full_like(x, 2.5, shape=(3, 1)), np.full((3, 1), 2.5), rtol=0)
    out = ingot.full(x.shape, float("nan"), dtype=DTYPE, device=DEVICE)
    assert np.multiply(x, 3, out=out) is out
    check(out, a * 3, rtol=0)
    # NumPy functions ingot has no kernel for run on a host copy; the result comes back.
    check(np.cumsum(x, axis=1), np.cumsum(a, axis=1))
    check(np.median(x, axis=0), np.median(a, axis=0))
    assert np.allclose(x, a)
    with pytest.raises(TypeError):
        np.empty_like(x, dtype=[("vals", "f8"), ("arg", "i8")])


def test_pickle_round_trip_to_the_same_device_kind(data):
    a, _ = data
    x = on_device(a)[3:, ::2]
    y = pickle.loads(pickle.dumps(x, protocol=5))
    assert isinstance(y, ingot.Array) and y.device.kind == DEVICE.kind
    np.testing.assert_array_equal(np.asarray(y), a[3:, ::2])


def test_compute_with_the_sync_scheduler_too(data):
    a, b = data
    x = da.from_array(on_device(a), chunks=(20, 20), asarray=False)
    with dask.config.set(scheduler="sync"):
        check((x - on_device(b)).mean(axis=0).compute(), (a - b).mean(axis=0))


# ---- dask.distributed: one worker process per device ---------------------------------------------

def _worker_device() -> str:
    return str(ingot.default_device())


def _chunk_devices(dask_worker) -> list:
    return sorted({str(v.device) for v in dask_worker.data.values() if isinstance(v, ingot.Array)})


def run_cluster(devices, rng):
    """What tests/test_multi_gpu.py runs on two GPUs, on ``devices``."""
    distributed = pytest.importorskip("distributed")
    import cloudpickle

    # Workers are other processes: they receive this module's functions by value.
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    seed = int(rng.integers(2**31))
    chunks = ((20, 20, 20, 7), (16, 16, 3))
    want = _reference(seed, chunks)
    meta = ingot.empty((0, 0), dtype=DTYPE, device=devices[0])
    with ingot.dask.cluster(devices=devices) as client:
        assert isinstance(client, distributed.Client)
        pinned = sorted(client.run(_worker_device).values())
        assert pinned == sorted(str(ingot.Device(d)) for d in devices)
        x = da.map_blocks(_make_block, seed, chunks=chunks, dtype=DTYPE, meta=meta)
        x = x.persist()
        distributed.wait(x)
        # Each worker holds its chunks on its own device.
        held = client.run(_chunk_devices)
        for addr, devs in held.items():
            assert devs in ([], [client.run(_worker_device, workers=[addr])[addr]]), (addr, devs)
        assert sum(1 for devs in held.values() if devs) == len(devices)
        total = x.sum().compute()
        assert isinstance(total, ingot.Array) and total.device.kind == ingot.Device(devices[0]).kind
        np.testing.assert_allclose(float(total), want.sum(), rtol=RTOL * 10)
        prod = (x @ x.T).mean(axis=0).compute()
        np.testing.assert_allclose(np.asarray(prod), (want @ want.T).mean(axis=0),
                                   rtol=RTOL * 10, atol=RTOL * 100)
        amax = x.argmax(axis=0).compute()
        np.testing.assert_array_equal(np.asarray(amax), want.argmax(axis=0))
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


@pytest.mark.skipif(DEVICE.kind != "cpu", reason="the CPU cluster; GPUs: tests/test_multi_gpu.py")
def test_two_process_cluster_on_the_cpu(rng):
    run_cluster(["cpu", "cpu"], rng)
