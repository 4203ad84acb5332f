"""ingot arrays as the chunks of Dask arrays, and one Dask worker per GPU.

Importing this module (it needs ``dask[array]``; :func:`cluster` also needs ``distributed``)
registers ``ingot.Array`` with Dask: as a chunk type, in Dask's dispatch tables (concatenate,
tensordot, einsum, empty, take, divide, numel, percentile) and in its tokenizer. The rest of what
Dask calls on chunks goes through NumPy's protocols, which ingot arrays implement
(``ingot._numpy_protocol``). Then::

    import dask.array as da, ingot, ingot.dask
    x = da.from_array(ingot.asarray(data, device="cuda"), chunks=(4096, 4096))
    (x @ x.T).mean().compute()          # an ingot array on the chunks' device

Each chunk stays on the device of the array it came from (or, for ``map_blocks`` and
``from_delayed``, on the device its function created it on). With :func:`cluster`, each worker
process owns one device: the chunks it creates and the chunks it receives from other workers
live on its device, and results gathered to the client come back to the client's device of the
same kind.
"""

from __future__ import annotations

import logging
import math
import uuid
from typing import Any, Iterable, Optional, Sequence

import numpy as np
from dask.array.chunk_types import register_chunk_type
from dask.array.dispatch import (
    concatenate_lookup,
    divide_lookup,
    einsum_lookup,
    empty_lookup,
    nannumel_lookup,
    numel_lookup,
    percentile_lookup,
    take_lookup,
    tensordot_lookup,
    to_numpy_dispatch,
)
from dask.base import normalize_token

from . import _ingot
from . import _numpy_protocol as _proto

Array = _ingot.Array

__all__ = ["DevicePlugin", "cluster"]


def _ns() -> Any:
    import ingot

    return ingot


# ---- what Dask calls on chunks -------------------------------------------------------------------

register_chunk_type(Array)


def _install_numpy_dtype() -> None:
    """Makes ``dask_array.dtype`` a NumPy dtype when the chunks are ingot arrays.

    Dask takes an array's dtype from its meta (an ingot array, whose dtype is an ``ingot.DType``)
    and reads NumPy-only attributes of it (``dtype.type``, one-letter ``dtype.kind``). ingot
    dtypes convert to NumPy dtypes losslessly (``numpy.dtype(ingot.float32)``), so the Dask array
    reports that NumPy dtype; the chunks keep theirs. bfloat16 has no NumPy dtype unless
    ``ml_dtypes`` is installed, and stays an ``ingot.DType`` then.
    """
    from dask.array.core import Array as DaskArray

    base = DaskArray.dtype
    if getattr(base.fget, "_ingot", False):
        return

    def dtype(self: Any) -> Any:
        d = base.fget(self)
        if isinstance(d, _ingot.DType):
            try:
                return np.dtype(d)
            except (TypeError, AttributeError):
                return d
        return d

    dtype._ingot = True  # type: ignore[attr-defined]
    dtype.__doc__ = base.__doc__
    DaskArray.dtype = property(dtype)  # type: ignore[method-assign,assignment]


_install_numpy_dtype()


@concatenate_lookup.register(Array)
def _concatenate(arrays: Sequence[Any], axis: int = 0) -> Array:
    return _proto.array_function(arrays[0], np.concatenate, (Array,), (list(arrays),),
                                 {"axis": axis})


@tensordot_lookup.register(Array)
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Array:
    return _proto.array_function(a, np.tensordot, (Array,), (a, b), {"axes": axes})


@einsum_lookup.register(Array)
def _einsum(subscripts: str, *operands: Any, **kwargs: Any) -> Any:
    # ingot has no einsum kernel: NumPy contracts host copies, the result returns to the device.
    kwargs.pop("casting", None)
    kwargs.pop("order", None)
    return _proto.array_function(operands[0], np.einsum, (Array,), (subscripts, *operands), kwargs)


@empty_lookup.register(Array)
def _empty(shape: Any, dtype: Any = None, **kwargs: Any) -> Array:
    return _ns().empty(shape, dtype=np.float64 if dtype is None else dtype)


@take_lookup.register(Array)
def _take(a: Array, indices: Any, axis: Optional[int] = None) -> Any:
    return _proto.array_function(a, np.take, (Array,), (a, indices), {"axis": axis})


@divide_lookup.register(Array)
def _divide(x1: Any, x2: Any, out: Any = None, dtype: Any = None) -> Any:
    r = np.divide(x1, x2, out=out)
    return r if dtype is None or r.dtype == dtype else r.astype(dtype)


@numel_lookup.register(Array)
def _numel(x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = np.float64,
           **kwargs: Any) -> Any:
    """The element count of each reduced slice, as an array on ``x``'s device (a NumPy scalar
    when everything is reduced and dimensions are not kept, as for NumPy chunks)."""
    shape = x.shape
    axes = range(len(shape)) if axis is None else (
        [a % len(shape) for a in axis] if isinstance(axis, (tuple, list)) else [axis % len(shape)])
    count = math.prod(shape[a] for a in axes)
    if axis is None and not keepdims:
        return np.asarray(count, dtype=dtype)[()]
    new_shape = tuple(1 if d in axes else n for d, n in enumerate(shape) if keepdims or d not in axes)
    return _ns().full(new_shape, count, dtype=dtype, device=x.device)


@nannumel_lookup.register(Array)
def _nannumel(x: Array, axis: Any = None, keepdims: bool = False, dtype: Any = np.float64,
              **kwargs: Any) -> Array:
    ns = _ns()
    if isinstance(axis, list):
        axis = tuple(axis)
    return ns.sum(ns.astype(ns.logical_not(ns.isnan(x)), dtype), axis=axis, keepdims=keepdims)


@percentile_lookup.register(Array)
def _percentile(a: Array, q: Any, method: str = "linear") -> Any:
    # Dask merges the per-chunk percentiles with NumPy; they are small, so they stay on the host.
    from dask.array.percentile import _percentile as host_percentile

    return host_percentile(np.asarray(a), q, method)


@to_numpy_dispatch.register(Array)
def _to_numpy(x: Array, **kwargs: Any) -> np.ndarray:
    return np.asarray(x, **kwargs)


@normalize_token.register(Array)
def _token(x: Array) -> Any:
    # Hashing the elements would copy every array to the host. An ingot array is mutable and
    # has no content hash, so each tokenization names a new graph key (as Dask does for objects
    # it cannot hash deterministically).
    return ("ingot.Array", x.shape, str(x.dtype), str(x.device), uuid.uuid4().hex)


# ---- one worker per device -----------------------------------------------------------------------

try:
    import distributed as _distributed
    from distributed import WorkerPlugin as _WorkerPlugin
except ImportError:  # dask without distributed: chunks work, cluster() says what is missing
    _distributed = None
    _WorkerPlugin = object  # type: ignore[assignment,misc]


class DevicePlugin(_WorkerPlugin):  # type: ignore[misc,valid-type]
    """A ``distributed`` worker plugin that pins its worker to one ingot device.

    On setup it makes ``device`` the default device of the worker process
    (``ingot.set_default_device``): arrays its tasks create, and chunks it receives from other
    workers or the client, live on that device.
    """

    def __init__(self, device: Any) -> None:
        self.device = str(_ns().Device(device))
        self.name = f"ingot-device-{self.device}"

    def setup(self, worker: Any) -> None:
        _ns().set_default_device(self.device)

    def teardown(self, worker: Any) -> None:
        _ns().set_default_device(None)


def _default_devices() -> list:
    gpus = [d for d in _ns().devices() if d.kind != "cpu"]
    return [str(d) for d in gpus] or ["cpu"]


def cluster(devices: Optional[Iterable[Any]] = None, *, threads_per_worker: int = 1,
            memory_limit: Any = "auto", dashboard_address: Optional[str] = None,
            **client_kwargs: Any) -> Any:
    """Starts a local Dask cluster with one worker process per device and returns its client.

    ``devices`` lists the devices (``["cuda:0", "cuda:1"]``, or ``["cpu", "cpu"]`` for two CPU
    workers); the default is every GPU, or one CPU worker without a GPU. Each worker is a
    process of its own, pinned to its device by a :class:`DevicePlugin` (no
    ``CUDA_VISIBLE_DEVICES``: every process sees every device, and ingot picks its own).
    ``client.close()`` stops the cluster too (or use the client as a context manager).
    """
    if _distributed is None:
        raise ImportError("ingot.dask.cluster needs the 'distributed' package "
                          "(pip install 'dask[distributed]')")
    from distributed import Nanny, Scheduler, SpecCluster
    names = [str(_ns().Device(d)) for d in (devices if devices is not None else _default_devices())]
    if not names:
        raise ValueError("ingot.dask.cluster needs at least one device")
    workers = {
        f"{i}-{name}": {
            "cls": Nanny,
            "options": {
                "nthreads": threads_per_worker,
                "memory_limit": memory_limit,
                "plugins": (DevicePlugin(name),),
            },
        }
        for i, name in enumerate(names)
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": dashboard_address}}
    spec = SpecCluster(workers=workers, scheduler=scheduler, name="ingot",
                       silence_logs=logging.WARNING)
    try:
        return _ClusterClient(spec, **client_kwargs)
    except BaseException:
        spec.close()
        raise


if _distributed is not None:

    class _ClusterClient(_distributed.Client):
        """The client of a cluster started by :func:`cluster`: closing it stops the cluster."""

        def close(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().close(*args, **kwargs)
            finally:
                self.cluster.close()
