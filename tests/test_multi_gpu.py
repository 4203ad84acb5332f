"""Two GPUs in one process and one Dask worker per GPU. Skipped unless two CUDA devices are
visible (the device machine's ``nvidia-h100-x2``); the same Dask checks run on two CPU workers in
tests/test_dask.py."""

from __future__ import annotations

import numpy as np
import pytest

import ingot

GPUS = [d for d in ingot.devices() if d.kind == "cuda"]
pytestmark = pytest.mark.skipif(len(GPUS) < 2, reason="needs two CUDA devices")


def test_devices_lists_both_gpus_and_the_cpu():
    names = [str(d) for d in ingot.devices()]
    assert "cuda:0" in names and "cuda:1" in names and names[-1] == "cpu"


def test_to_device_between_gpus(rng):
    a = rng.standard_normal((513, 257))
    x = ingot.asarray(a, device="cuda:0")
    y = x.to_device("cuda:1")
    assert y.device == ingot.Device("cuda:1")
    np.testing.assert_array_equal(np.asarray(y.to_device("cpu")), a)
    v = x[5:400:3, ::-2].to_device("cuda:1")
    np.testing.assert_array_equal(np.asarray(v.to_device("cpu")), a[5:400:3, ::-2])
    # Work queued on cuda:0 before the copy is seen by it; work after it on cuda:1 sees the copy.
    z = ingot.exp(x / 50).to_device("cuda:1") * 2
    np.testing.assert_allclose(np.asarray(z.to_device("cpu")), np.exp(a / 50) * 2, rtol=1e-12)
    with pytest.raises(ingot.DeviceMismatchError):
        x + y


def test_current_device_context(rng):
    a = rng.standard_normal(100)
    with ingot.Device("cuda:1"):
        x = ingot.asarray(a)
        assert x.device == ingot.Device("cuda:1")
        with ingot.Device("cuda:0"):
            assert ingot.zeros(3).device == ingot.Device("cuda:0")
        y = x * 3
    assert y.device == ingot.Device("cuda:1")
    np.testing.assert_allclose(np.asarray(y.to_device("cpu")), a * 3, rtol=1e-15)


def test_dask_cluster_one_worker_per_gpu(rng):
    pytest.importorskip("distributed")
    from test_dask import run_cluster

    run_cluster(["cuda:0", "cuda:1"], rng)
