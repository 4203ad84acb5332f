"""pydotcompute's backend API (``MetalBackend``, ``CUDABackend``, ``CPUBackend``, ``UnifiedBuffer``)
over ingot.

A program written for pydotcompute's Metal backend changes its imports::

    from ingot.compat.pydotcompute import MetalBackend, UnifiedBuffer   # the Metal GPU
    from ingot.compat.pydotcompute import default_backend as MetalBackend  # any device ingot has
    from ingot.compat.pydotcompute import mx                              # was: import mlx.core as mx

Device arrays are ``ingot.Array`` objects (the original returns MLX arrays); ``mx`` is the ingot
namespace plus MLX's ``eval``/``array`` spellings, so ``mx.add``, ``mx.exp``, ``mx.sum`` ... keep
working. Kernels are Python functions over ingot arrays or MSL source strings (compiled with
``ingot.compile``). See docs/compat/pydotcompute.md for every difference from the original.
"""

from __future__ import annotations

import enum
import gc
import threading
import time
import types
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

import ingot

__all__ = [
    "Backend",
    "BackendNotAvailableError",
    "BackendType",
    "BufferNotAllocatedError",
    "BufferState",
    "BufferSyncError",
    "CPUBackend",
    "CUDABackend",
    "KernelExecutionResult",
    "MetalBackend",
    "MetalError",
    "PyDotComputeError",
    "UnifiedBuffer",
    "default_backend",
    "get_elementwise_kernel",
    "get_matrix_multiply_kernel",
    "get_vector_add_kernel",
    "mx",
]


# ---------------------------------------------------------------------------------- errors


class PyDotComputeError(Exception):
    """Base class of this module's errors."""


class BackendNotAvailableError(PyDotComputeError):
    """The backend's device does not exist on this machine."""


class MetalError(PyDotComputeError):
    """A device operation failed (allocation, transfer)."""


class BufferNotAllocatedError(PyDotComputeError):
    """A UnifiedBuffer was used before ``allocate()``."""

    def __init__(self, message: str = "buffer is not allocated: call allocate() first") -> None:
        super().__init__(message)


class BufferSyncError(PyDotComputeError):
    """Copying a UnifiedBuffer between host and device failed."""

    def __init__(self, direction: str, cause: BaseException) -> None:
        super().__init__(f"buffer sync {direction} failed: {cause}")
        self.direction = direction
        self.cause = cause


# ---------------------------------------------------------------------------------- types


class BackendType(enum.Enum):
    """The kind of device a backend runs on."""

    CPU = "cpu"
    CUDA = "cuda"
    METAL = "metal"


@dataclass
class KernelExecutionResult:
    """What ``execute_kernel`` reports: whether the kernel ran, its device time in milliseconds,
    the error message when it failed, and (an ingot extension) the kernel's return value."""

    success: bool
    execution_time_ms: float = 0.0
    error: Optional[str] = None
    output: Any = None


_NP_TO_INGOT = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float16): "float16",
    np.dtype(np.float64): "float64",
    np.dtype(np.int32): "int32",
    np.dtype(np.int64): "int64",
    np.dtype(np.int16): "int16",
    np.dtype(np.int8): "int8",
    np.dtype(np.uint32): "uint32",
    np.dtype(np.uint64): "uint64",
    np.dtype(np.uint16): "uint16",
    np.dtype(np.uint8): "uint8",
    np.dtype(np.bool_): "bool",
}


def _device_dtype(dtype: Any, kind: str) -> Any:
    """The ingot dtype that holds NumPy ``dtype`` on a device of ``kind`` (the seed's table:
    float64 becomes float32 on Metal only)."""
    dt = np.dtype(dtype)
    name = _NP_TO_INGOT.get(dt)
    if name is None:
        raise TypeError(f"unsupported dtype {dt} (supported: {', '.join(sorted(set(_NP_TO_INGOT.values())))})")
    if name == "float64" and kind == "metal":
        name = "float32"
    return getattr(ingot, name)


def _to_numpy(x: Any) -> np.ndarray:
    if isinstance(x, ingot.Array):
        return np.array(x.to_device("cpu"), copy=True) if x.device.kind != "cpu" else np.array(x, copy=True)
    return np.array(x, copy=True)


def _sync(device: Any) -> None:
    sync = getattr(ingot, "synchronize", None) or getattr(ingot._ingot, "synchronize", None)
    if sync is not None:  # releases the GIL while waiting
        sync(device)
    else:
        device.synchronize()


# ---------------------------------------------------------------------------------- backends


class Backend(ABC):
    """The interface every backend implements."""

    @property
    @abstractmethod
    def backend_type(self) -> BackendType:
        """The kind of device."""

    @property
    @abstractmethod
    def is_available(self) -> bool:
        """Whether the device exists on this machine."""

    @property
    @abstractmethod
    def device_count(self) -> int:
        """How many devices of this kind exist."""

    @property
    @abstractmethod
    def device_id(self) -> int:
        """The index of this backend's device."""

    @abstractmethod
    def allocate(self, shape: tuple, dtype: Any) -> Any:
        """An uninitialised device array."""

    @abstractmethod
    def allocate_zeros(self, shape: tuple, dtype: Any) -> Any:
        """A zero-filled device array."""

    @abstractmethod
    def free(self, array: Any) -> None:
        """Drops an array from the allocation registry."""

    @abstractmethod
    def copy_to_device(self, host_array: np.ndarray) -> Any:
        """A device copy of a NumPy array."""

    @abstractmethod
    def copy_to_host(self, device_array: Any) -> np.ndarray:
        """A NumPy copy of a device array (waits for pending work)."""

    @abstractmethod
    def synchronize(self) -> None:
        """Waits for all queued work on the device."""

    @abstractmethod
    def execute_kernel(self, kernel: Callable[..., Any], grid_size: tuple, block_size: tuple,
                       *args: Any, **kwargs: Any) -> KernelExecutionResult:
        """Runs a kernel and reports its device time."""

    @abstractmethod
    def compile_kernel(self, func: Any, signature: Optional[str] = None) -> Callable[..., Any]:
        """Prepares a kernel (Python function or MSL source) for this device."""


def _kinds_available(kind: str) -> list:
    return [d for d in ingot.devices() if d.kind == kind]


class _IngotBackend(Backend):
    _kind = "cpu"
    _type = BackendType.CPU

    def __init__(self, device_id: int = 0) -> None:
        devs = _kinds_available(self._kind)
        if not devs:
            raise BackendNotAvailableError(f"{type(self).__name__}: no {self._kind} device on this machine")
        if not isinstance(device_id, int) or not 0 <= device_id < len(devs):
            raise BackendNotAvailableError(
                f"{type(self).__name__}: device_id {device_id!r} out of range ({len(devs)} device(s))"
            )
        self._device_id = device_id
        self._device = ingot.Device(f"{self._kind}:{device_id}" if self._kind == "cuda" else self._kind)
        self._lock = threading.Lock()
        self._buffers: dict = {}
        self._allocated = 0
        self._peak_allocated = 0

    # properties ---------------------------------------------------------------

    @property
    def backend_type(self) -> BackendType:
        """This backend's BackendType."""
        return self._type

    @property
    def is_available(self) -> bool:
        """True: an instance only exists when its device does (see ``available()``)."""
        return self._device.is_available()

    @classmethod
    def available(cls) -> bool:
        """Whether this kind of device exists here, without constructing a backend."""
        return bool(_kinds_available(cls._kind))

    @property
    def device_count(self) -> int:
        """How many devices of this kind exist."""
        return len(_kinds_available(self._kind))

    @property
    def device_id(self) -> int:
        """The index of this backend's device."""
        return self._device_id

    @property
    def device(self) -> Any:
        """The ingot device (an ingot extension)."""
        return self._device

    # memory -------------------------------------------------------------------

    def _register(self, arr: Any) -> Any:
        nbytes = int(arr.size) * arr.dtype.itemsize if hasattr(arr.dtype, "itemsize") else 0
        with self._lock:
            self._buffers[id(arr)] = (arr, nbytes)
            self._allocated += nbytes
            self._peak_allocated = max(self._peak_allocated, self._allocated)
        return arr

    def _shape(self, shape: Any) -> tuple:
        return (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)

    def allocate(self, shape: tuple, dtype: Any) -> Any:
        """An uninitialised ingot array of ``shape`` on the device (dtype by the seed's table),
        tracked in the registry until ``free``."""
        try:
            arr = ingot.empty(self._shape(shape), dtype=_device_dtype(dtype, self._kind), device=self._device)
        except ingot.IngotError as e:
            raise MetalError(f"allocation of {shape} {np.dtype(dtype)} failed: {e}") from e
        return self._register(arr)

    def allocate_zeros(self, shape: tuple, dtype: Any) -> Any:
        """A zero-filled ingot array of ``shape`` on the device, tracked until ``free``."""
        try:
            arr = ingot.zeros(self._shape(shape), dtype=_device_dtype(dtype, self._kind), device=self._device)
        except ingot.IngotError as e:
            raise MetalError(f"allocation of {shape} {np.dtype(dtype)} failed: {e}") from e
        return self._register(arr)

    def free(self, array: Any) -> None:
        """Removes ``array`` from the registry; its memory returns to the device pool once no
        Python reference remains. Freeing an untracked array does nothing."""
        with self._lock:
            entry = self._buffers.pop(id(array), None)
            if entry is not None:
                self._allocated -= entry[1]

    def copy_to_device(self, host_array: Any) -> Any:
        """A device copy of ``host_array`` (NumPy array, list, scalar or ingot array)."""
        if isinstance(host_array, ingot.Array):
            return host_array.to_device(self._device) if host_array.device != self._device else ingot.asarray(host_array, copy=True)
        host = np.asarray(host_array)
        return ingot.asarray(host, dtype=_device_dtype(host.dtype, self._kind), device=self._device, copy=True)

    def copy_to_host(self, device_array: Any) -> np.ndarray:
        """A NumPy copy of ``device_array`` (waits for the work that produces it)."""
        return _to_numpy(device_array)

    def synchronize(self) -> None:
        """Waits for all queued work on the device; device errors surface here."""
        _sync(self._device)

    def get_memory_info(self) -> dict:
        """``allocated`` (bytes in the registry), ``buffer_count`` (registered arrays),
        ``cache_memory`` (bytes held by the device pool), ``peak_memory`` (the device's peak
        bytes in use), plus ingot's ``used``/``total``/``free`` for the whole device."""
        info = dict(self._device.memory_info())
        with self._lock:
            allocated, count = self._allocated, len(self._buffers)
        return {
            "allocated": allocated,
            "buffer_count": count,
            "cache_memory": int(info.get("pool", 0)),
            "peak_memory": int(max(info.get("peak", 0), self._peak_allocated)),
            "used": int(info.get("used", 0)),
            "total": int(info.get("total", 0)),
            "free": int(info.get("free", 0)),
        }

    def clear_cache(self) -> None:
        """Returns cached device memory: collects unreferenced arrays, then empties the pool
        where ingot exposes it."""
        gc.collect()
        self.synchronize()
        empty = getattr(self._device, "empty_cache", None)
        if empty is not None:
            empty()

    # kernels ------------------------------------------------------------------

    def _args_to_device(self, args: tuple) -> list:
        return [self.copy_to_device(a) if isinstance(a, np.ndarray) else a for a in args]

    def execute_kernel(self, kernel: Callable[..., Any], grid_size: tuple, block_size: tuple,
                       *args: Any, **kwargs: Any) -> KernelExecutionResult:
        """Runs ``kernel`` and times it on the device.

        * An MSL kernel (from ``compile_kernel(source)`` / ``ingot.compile``) is launched with
          ``groups=grid_size`` threadgroups of ``threadgroup=block_size`` threads (CUDA's
          grid/block convention) and timed by ``kernel.time`` (device time).
        * A Python function over ingot arrays is called with ``args`` (NumPy arrays are copied to
          the device first) between two device synchronisations; ``grid_size``/``block_size`` are
          ignored, as in the original. Its return value is ``result.output``.

        Failures are reported in the result (``success=False``, ``error``), never raised.
        """
        try:
            if isinstance(kernel, _MSLKernel):
                kernel = kernel.kernel
            if _is_msl_kernel(kernel):
                grid = tuple(grid_size) if not isinstance(grid_size, int) else (grid_size,)
                block = tuple(block_size) if not isinstance(block_size, int) else (block_size,)
                seconds = kernel.time(*args, groups=grid, threadgroup=block, **kwargs)
                return KernelExecutionResult(True, seconds * 1e3, None, None)
            dev_args = self._args_to_device(args)
            self.synchronize()
            t0 = time.perf_counter()
            out = kernel(*dev_args, **kwargs)
            self.synchronize()
            ms = (time.perf_counter() - t0) * 1e3
            return KernelExecutionResult(True, ms, None, out)
        except Exception as e:  # noqa: BLE001 - reported to the caller, as the original does
            return KernelExecutionResult(False, 0.0, f"{type(e).__name__}: {e}", None)

    def compile_kernel(self, func: Any, signature: Optional[str] = None) -> Callable[..., Any]:
        """A callable kernel for this device.

        ``func`` is either a Python function over ingot arrays (the result accepts NumPy
        arrays, copied to the device, and returns the function's ingot result), or MSL source
        text: it is compiled with ``ingot.compile`` and ``signature`` names the kernel (optional
        when the source holds one). The MSL kernel is called as ``k(count, *args)`` or
        ``k(*args, grid=..., threadgroup=...)``; NumPy arguments bound to writable parameters get
        the results.
        """
        if isinstance(func, str):
            compile_ = getattr(ingot, "compile", None) or getattr(ingot._ingot, "compile")
            lib = compile_(func, device=self._device)
            names = list(lib.functions)
            if signature is None:
                if len(names) != 1:
                    raise ValueError(
                        f"compile_kernel: the source defines {len(names)} kernels ({', '.join(names)}); "
                        "name one with signature="
                    )
                signature = names[0]
            return _MSLKernel(lib.function(signature))
        if not callable(func):
            raise TypeError(f"compile_kernel expects a Python function or MSL source, got {type(func).__name__}")
        backend = self

        def compiled(*args: Any, **kwargs: Any) -> Any:
            return func(*backend._args_to_device(args), **kwargs)

        compiled.__name__ = getattr(func, "__name__", "kernel")
        compiled.__doc__ = getattr(func, "__doc__", None)
        compiled.__wrapped__ = func  # type: ignore[attr-defined]
        return compiled

    def __repr__(self) -> str:
        return f"{type(self).__name__}(device={self._device})"


def _is_msl_kernel(k: Any) -> bool:
    kernel_type = getattr(ingot._ingot, "Kernel", None)
    return kernel_type is not None and isinstance(k, kernel_type)


class _MSLKernel:
    """An MSL kernel compiled by ``compile_kernel``: calls go to the ingot kernel."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.__name__ = kernel.name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.kernel(*args, **kwargs)

    def time(self, *args: Any, **kwargs: Any) -> float:
        """The kernel's device time in seconds (``ingot.Kernel.time``)."""
        return self.kernel.time(*args, **kwargs)

    @property
    def parameters(self) -> Any:
        """The kernel's reflected parameters."""
        return self.kernel.parameters

    def __repr__(self) -> str:
        return f"<compiled MSL kernel {self.kernel.name!r} on {self.kernel.device}>"


class MetalBackend(_IngotBackend):
    """The Apple GPU through ingot's Metal runtime. Constructing it where no Metal device exists
    raises BackendNotAvailableError (``default_backend()`` picks whatever device there is)."""

    _kind = "metal"
    _type = BackendType.METAL


class CUDABackend(_IngotBackend):
    """An NVIDIA GPU (``device_id`` = CUDA ordinal) through ingot's CUDA runtime."""

    _kind = "cuda"
    _type = BackendType.CUDA


class CPUBackend(_IngotBackend):
    """The host CPU through ingot's CPU runtime (always available)."""

    _kind = "cpu"
    _type = BackendType.CPU


_BACKENDS = {"metal": MetalBackend, "cuda": CUDABackend, "cpu": CPUBackend}


def default_backend(device_id: int = 0) -> Backend:
    """The backend of ingot's default device (``INGOT_DEVICE``, else the best available).

    ``from ingot.compat.pydotcompute import default_backend as MetalBackend`` runs a program
    written for the Metal backend on any machine.
    """
    kind = ingot.default_device().kind
    index = ingot.default_device().index if kind == "cuda" and device_id == 0 else device_id
    return _BACKENDS[kind](index)


# ---------------------------------------------------------------------------------- kernels


def _on_device(*xs: Any) -> list:
    dev = next((x.device for x in xs if isinstance(x, ingot.Array)), None)
    return [x if isinstance(x, ingot.Array) else ingot.asarray(np.asarray(x), device=dev) for x in xs]


def get_vector_add_kernel() -> Optional[Callable[..., Any]]:
    """``kernel(a, b)`` -> ``a + b`` (ingot arrays; NumPy inputs are copied to the device)."""

    def vector_add(a: Any, b: Any) -> Any:
        a, b = _on_device(a, b)
        return ingot.add(a, b)

    return vector_add


def get_matrix_multiply_kernel() -> Optional[Callable[..., Any]]:
    """``kernel(A, B)`` -> ``A @ B``."""

    def matrix_multiply(A: Any, B: Any) -> Any:
        A, B = _on_device(A, B)
        return ingot.matmul(A, B)

    return matrix_multiply


_ELEMENTWISE = {
    "add": (2, ingot.add),
    "sub": (2, ingot.subtract),
    "mul": (2, ingot.multiply),
    "div": (2, ingot.divide),
    "sqrt": (1, ingot.sqrt),
    "exp": (1, ingot.exp),
    "log": (1, ingot.log),
    "sin": (1, ingot.sin),
    "cos": (1, ingot.cos),
    "abs": (1, ingot.abs),
    "square": (1, ingot.square),
    "negative": (1, ingot.negative),
}


def get_elementwise_kernel(operation: str) -> Optional[Callable[..., Any]]:
    """The kernel for ``operation`` (add, sub, mul, div: two inputs; sqrt, exp, log, sin, cos,
    abs, square, negative: one), or None for an unknown operation."""
    entry = _ELEMENTWISE.get(operation)
    if entry is None:
        return None
    arity, fn = entry

    def elementwise(*xs: Any) -> Any:
        if len(xs) != arity:
            raise TypeError(f"{operation} kernel takes {arity} input(s), got {len(xs)}")
        return fn(*_on_device(*xs))

    elementwise.__name__ = f"{operation}_kernel"
    return elementwise


# ---------------------------------------------------------------------------------- mx


def _mx_eval(*arrays: Any) -> None:
    """MLX's ``eval``: waits until the given arrays are computed (ingot runs eagerly; this
    synchronises their devices)."""
    devices = {a.device for a in arrays if isinstance(a, ingot.Array)} or {ingot.default_device()}
    for d in devices:
        _sync(d)


def _make_mx() -> types.ModuleType:
    m = types.ModuleType("ingot.compat.pydotcompute.mx", "The ingot namespace with MLX spellings (eval, array).")
    for name in dir(ingot):
        if not name.startswith("_"):
            setattr(m, name, getattr(ingot, name))
    m.eval = _mx_eval  # type: ignore[attr-defined]
    m.array = lambda data, dtype=None: ingot.asarray(data, dtype=dtype)  # type: ignore[attr-defined]
    m.bool_ = ingot.bool  # type: ignore[attr-defined]
    return m


mx = _make_mx()


# ---------------------------------------------------------------------------------- buffers


class BufferState(enum.Enum):
    """Which copy of a UnifiedBuffer holds the current data."""

    UNINITIALIZED = "uninitialized"
    HOST_ONLY = "host_only"
    DEVICE_ONLY = "device_only"
    SYNCHRONIZED = "synchronized"
    HOST_DIRTY = "host_dirty"
    DEVICE_DIRTY = "device_dirty"


class UnifiedBuffer:
    """A host NumPy array and a device ingot array with lazy, state-tracked synchronisation.

    ``.host`` is the NumPy array (brought up to date from the device when the device copy is
    newer), ``.device`` and ``.metal`` are the same device array (on ``device``, default ingot's
    default device; brought up to date from the host when the host copy is newer). After
    writing one side in place, call ``mark_host_dirty()`` or ``mark_device_dirty()`` /
    ``mark_metal_dirty()``: the other side is refreshed on its next access. Unlike the original,
    results written on the device (Metal included) do flow back to ``.host``.
    """

    def __init__(self, shape: Any, dtype: Any = np.float32, *, pinned: bool = False, device: Any = None) -> None:
        self._shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
        self._dtype = np.dtype(dtype)
        self._pinned = pinned
        self._ingot_device = ingot.Device(device) if device is not None else ingot.default_device()
        self._device_dtype = _device_dtype(self._dtype, self._ingot_device.kind)
        self._state = BufferState.UNINITIALIZED
        self._host_data: Optional[np.ndarray] = None
        self._device_data: Any = None

    # properties ---------------------------------------------------------------

    @property
    def shape(self) -> tuple:
        """The buffer's shape."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The host dtype."""
        return self._dtype

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def nbytes(self) -> int:
        """Host bytes."""
        return self.size * self._dtype.itemsize

    @property
    def state(self) -> BufferState:
        """The synchronisation state."""
        return self._state

    @property
    def is_allocated(self) -> bool:
        """Whether ``allocate()`` has run (and ``free()`` has not)."""
        return self._state != BufferState.UNINITIALIZED

    # lifecycle ----------------------------------------------------------------

    def allocate(self, *, host: bool = True, device: bool = True) -> "UnifiedBuffer":
        """Allocates zero-filled storage: the host array when ``host``, else the device array.
        The device copy of a host-allocated buffer is made on first device access. Returns self."""
        if host or not device:
            self._host_data = np.zeros(self._shape, dtype=self._dtype)
            self._device_data = None
            self._state = BufferState.HOST_ONLY
        else:
            self._host_data = None
            self._device_data = self._new_device(zeros=True)
            self._state = BufferState.DEVICE_ONLY
        return self

    def free(self) -> None:
        """Drops both copies; the buffer is UNINITIALIZED again."""
        self._host_data = None
        self._device_data = None
        self._state = BufferState.UNINITIALIZED

    def _require(self) -> None:
        if self._state == BufferState.UNINITIALIZED:
            raise BufferNotAllocatedError()

    def _new_device(self, zeros: bool = False) -> Any:
        make = ingot.zeros if zeros else ingot.empty
        return make(self._shape, dtype=self._device_dtype, device=self._ingot_device)

    # access -------------------------------------------------------------------

    @property
    def host(self) -> np.ndarray:
        """The host NumPy array, refreshed from the device when the device copy is newer."""
        self._require()
        if self._state in (BufferState.DEVICE_DIRTY, BufferState.DEVICE_ONLY) or self._host_data is None:
            self._sync_device_to_host()
        return self._host_data  # type: ignore[return-value]

    @property
    def device(self) -> Any:
        """The device ingot array, refreshed from the host when the host copy is newer."""
        self._require()
        if self._state in (BufferState.HOST_DIRTY, BufferState.HOST_ONLY) or self._device_data is None:
            self._sync_host_to_device()
        return self._device_data

    @property
    def metal(self) -> Any:
        """The device array (the same one as ``.device``: ingot has one accelerator copy)."""
        return self.device

    def _sync_host_to_device(self) -> None:
        if self._host_data is None:
            return
        try:
            self._device_data = ingot.asarray(
                self._host_data, dtype=self._device_dtype, device=self._ingot_device, copy=True
            )
        except Exception as e:  # noqa: BLE001
            raise BufferSyncError("host->device", e) from e
        self._state = BufferState.SYNCHRONIZED

    def _sync_device_to_host(self) -> None:
        if self._device_data is None:
            return
        try:
            data = _to_numpy(self._device_data).astype(self._dtype, copy=False).reshape(self._shape)
            if self._host_data is None:
                self._host_data = np.empty(self._shape, dtype=self._dtype)
            np.copyto(self._host_data, data)
        except Exception as e:  # noqa: BLE001
            raise BufferSyncError("device->host", e) from e
        self._state = BufferState.SYNCHRONIZED

    def sync_to_device(self) -> None:
        """Copies the host data to the device now."""
        self._require()
        self._sync_host_to_device()

    def sync_to_host(self) -> None:
        """Copies the device data to the host now."""
        self._require()
        self._sync_device_to_host()

    def synchronize(self) -> None:
        """Copies whichever side is dirty to the other."""
        if self._state == BufferState.HOST_DIRTY:
            self._sync_host_to_device()
        elif self._state == BufferState.DEVICE_DIRTY:
            self._sync_device_to_host()

    def mark_host_dirty(self) -> None:
        """The host copy was modified: the device copy is refreshed on next access."""
        self._require()
        self._state = BufferState.HOST_DIRTY

    def mark_device_dirty(self) -> None:
        """The device copy was modified: the host copy is refreshed on next access."""
        self._require()
        self._state = BufferState.DEVICE_DIRTY

    def mark_metal_dirty(self) -> None:
        """The Metal (device) copy was modified: the host copy is refreshed on next access."""
        self.mark_device_dirty()

    def set_device(self, array: Any) -> None:
        """Makes ``array`` (a computed result of the buffer's shape) the device copy and marks
        the device dirty (an ingot extension: MLX-style code computes new arrays)."""
        self._require()
        arr = array if isinstance(array, ingot.Array) else ingot.asarray(np.asarray(array))
        if tuple(arr.shape) != self._shape:
            raise ValueError(f"set_device: shape {tuple(arr.shape)} does not match the buffer's {self._shape}")
        if arr.device != self._ingot_device:
            arr = arr.to_device(self._ingot_device)
        if arr.dtype != self._device_dtype:
            arr = ingot.astype(arr, self._device_dtype)
        self._device_data = arr
        self._state = BufferState.DEVICE_DIRTY

    # data ---------------------------------------------------------------------

    def copy_from(self, data: Any) -> None:
        """Copies ``data`` into the host array (allocating if needed) and marks the host dirty."""
        if self._state == BufferState.UNINITIALIZED:
            self.allocate()
        host = self.host
        np.copyto(host, np.asarray(data))
        self._state = BufferState.HOST_DIRTY

    def copy_to(self, data: np.ndarray) -> None:
        """Copies the buffer's current data into ``data``."""
        np.copyto(data, self.host)

    def to_numpy(self) -> np.ndarray:
        """A copy of the current data."""
        return self.host.copy()

    def zeros(self) -> "UnifiedBuffer":
        """Fills with zeros (host side, marked dirty). Returns self."""
        return self.fill(0)

    def fill(self, value: Any) -> "UnifiedBuffer":
        """Fills with ``value`` (host side, marked dirty). Returns self."""
        if self._state == BufferState.UNINITIALIZED:
            self.allocate()
        self.host.fill(value)
        self._state = BufferState.HOST_DIRTY
        return self

    def __len__(self) -> int:
        return self._shape[0]

    def __getitem__(self, key: Any) -> Any:
        return self.host[key]

    def __setitem__(self, key: Any, value: Any) -> None:
        self.host[key] = value
        self._state = BufferState.HOST_DIRTY

    def __repr__(self) -> str:
        return (
            f"UnifiedBuffer(shape={self._shape}, dtype={self._dtype}, state={self._state.name}, "
            f"device={self._ingot_device})"
        )
