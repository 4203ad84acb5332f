"""metalcompute's API over ingot: MSL kernels from Python on every ingot device.

A metalcompute program runs with its import line changed::

    import ingot.compat.metalcompute as mc          # was: import metalcompute as mc
    from array import array

    dev = mc.Device()
    helloABC = dev.kernel(source).function("helloABC")
    A = array('f', range(10)); B = array('f', range(10, 20))
    C = dev.buffer(10 * 4)
    helloABC(10, A, B, C)
    memoryview(C).cast('f')[1]      # 11.0

Differences from the original (docs/compat/metalcompute.md): exactly ``count`` threads run
(metalcompute rounds the grid up to whole threadgroups, so kernels without a bounds check wrote
past the end of their buffers); arguments are checked against the kernel's parameters before
anything runs, and errors are ``mc.error`` subclasses (which are also the matching ingot
exception); the GIL is released while the device works; a call's handle holds no device
resources, so any number of calls neither slows down nor grows memory.
"""

from __future__ import annotations

import array as _pyarray
from dataclasses import dataclass
from typing import Any, Optional, Union

import numpy as np

import ingot
from ingot import _ingot

__all__ = ["Buffer", "Device", "DeviceInfo", "Function", "Kernel", "Run", "error", "get_devices"]


class error(Exception):
    """metalcompute's exception: compile errors, bad arguments and device failures."""


def _subclass(base: type) -> type:
    try:
        return type(f"{base.__name__}", (error, base), {"__module__": __name__})
    except TypeError:  # an exception type that does not take a second base
        return type(f"{base.__name__}", (error,), {"__module__": __name__})


CompileError = _subclass(ingot.CompileError)
KernelArgumentError = _subclass(ingot.KernelArgumentError)
DeviceError = _subclass(ingot.IngotError)


def _wrap_error(e: BaseException) -> error:
    if isinstance(e, error):
        return e
    if isinstance(e, ingot.CompileError):
        cls = CompileError
    elif isinstance(e, (ingot.KernelArgumentError, TypeError, ValueError, OverflowError)):
        cls = KernelArgumentError
    else:
        cls = DeviceError
    return cls(str(e))


@dataclass(frozen=True)
class DeviceInfo:
    """A device record, with metalcompute's field names.

    ``recommendedWorkingSetSize`` is the device's memory (RAM for the CPU), ``maxTransferRate``
    the host-device copy rate in bytes per second, 0 where memory is unified (CPU, Apple GPU)
    or where ingot cannot tell (CUDA), ``hasUnifiedMemory`` True for the CPU and Apple GPUs.
    """

    deviceName: str
    recommendedWorkingSetSize: int
    maxTransferRate: int
    hasUnifiedMemory: bool
    device: Any = None

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


def _info(d: Any) -> DeviceInfo:
    try:
        total = int(d.memory_info().get("total", 0))
    except ingot.IngotError:
        total = 0
    unified = d.kind in ("cpu", "metal")
    return DeviceInfo(
        deviceName=d.name(),
        recommendedWorkingSetSize=total,
        maxTransferRate=0,
        hasUnifiedMemory=unified,
        device=d,
    )


def get_devices() -> list:
    """Records for every available device: GPUs first, the CPU last (``Device(i)`` picks
    ``get_devices()[i]``)."""
    return [_info(d) for d in ingot.devices()]


def _synchronize(device: Any) -> None:
    sync = getattr(ingot, "synchronize", None) or getattr(_ingot, "synchronize", None)
    if sync is not None:
        sync(device)
    else:
        device.synchronize()


class Buffer(bytearray):
    """A host buffer of bytes: writable through ``memoryview(buf)`` / ``np.frombuffer(buf, ...)``
    and passable to kernels. On a GPU device the bytes go to the device for each call and the
    results come back into the buffer when the call returns."""

    def __repr__(self) -> str:
        return f"<metalcompute Buffer of {len(self)} bytes>"


class Run:
    """The handle of one kernel call; ``wait()`` (or dropping the handle) waits for it.

    Calls with host buffers are complete when the call returns (results are copied back then);
    calls that pass ingot arrays are queued on the device, and ``wait`` synchronises it.
    """

    __slots__ = ("_device", "_pending")

    def __init__(self, device: Any, pending: bool) -> None:
        self._device = device
        self._pending = pending

    def wait(self) -> None:
        """Waits until the call has finished on the device (releases the GIL meanwhile)."""
        if self._pending:
            self._pending = False
            try:
                _synchronize(self._device)
            except ingot.IngotError as e:
                raise _wrap_error(e) from e

    def __del__(self) -> None:
        try:
            self.wait()
        except Exception:  # noqa: BLE001 - nowhere to raise from a finaliser
            pass


def _as_buffer_arg(arg: Any, param: Any, fn_name: str, np_dtype: Optional[np.dtype] = None) -> Any:
    """A NumPy view of ``arg``'s bytes typed as ``param``'s pointee (zero-copy), or ``arg``."""
    if isinstance(arg, ingot.Array):
        return arg
    if isinstance(arg, np.ndarray):
        if np_dtype is not None and arg.dtype != np_dtype:
            if not arg.flags.c_contiguous:
                raise KernelArgumentError(f"{fn_name}: argument for `{param.name}` must be contiguous")
            return arg.reshape(-1).view(np.uint8).view(np_dtype)
        return arg
    if isinstance(arg, (bytes, bytearray, memoryview, _pyarray.array)) or _has_buffer(arg):
        mv = memoryview(arg)
        if not mv.c_contiguous:
            raise KernelArgumentError(f"{fn_name}: a buffer argument must be contiguous")
        raw = np.frombuffer(mv.cast("B"), dtype=np.uint8)
        if param is None or param.kind != "buffer":
            return bytes(raw) if param is not None and param.kind != "buffer" else raw
        dtype = np_dtype if np_dtype is not None else np.dtype(np.uint8)
        n = raw.nbytes // dtype.itemsize
        if n == 0 and raw.nbytes:
            raise KernelArgumentError(
                f"{fn_name}: buffer for `{param.name}` has {raw.nbytes} bytes, less than one {dtype}"
            )
        return raw[: n * dtype.itemsize].view(dtype)
    return arg


def _has_buffer(x: Any) -> bool:
    if isinstance(x, (int, float, complex, str, bool)) or x is None:
        return False
    try:
        memoryview(x)
    except TypeError:
        return False
    return True


class Function:
    """One kernel function of a compiled library, called as ``fn(count, *buffers)``."""

    def __init__(self, kernel: Any, device: Any) -> None:
        self.kernel = kernel
        self._device = device
        self._params = list(kernel.arguments)
        # the NumPy dtype a byte buffer is viewed as, per parameter (None: raw bytes / not a buffer)
        self._np_dtypes = [
            np.dtype(str(p.dtype)) if p.kind == "buffer" and p.dtype is not None else None for p in self._params
        ]
        self.name = kernel.name

    def __call__(self, count: int, *args: Any) -> Run:
        """Runs exactly ``count`` threads (1-D grid) over ``args`` (metalcompute buffers,
        ``array.array``, bytes, NumPy arrays, ingot arrays, scalars for ``constant T&``) and
        returns the call's handle."""
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)):
            raise KernelArgumentError(f"{self.name}: the first argument is the thread count (an int), got {type(count).__name__}")
        if count < 0 or count >= 2**32:
            raise KernelArgumentError(f"{self.name}: thread count {count} out of range 0..2^32")
        if len(args) != len(self._params):
            names = ", ".join(p.name for p in self._params)
            raise KernelArgumentError(
                f"{self.name}: takes {len(self._params)} buffer/constant arguments ({names}), got {len(args)}"
            )
        converted = []
        pending = False
        for a, p, dt in zip(args, self._params, self._np_dtypes):
            if isinstance(a, bytes) and p.kind == "buffer" and p.access == "read_write":
                raise KernelArgumentError(
                    f"{self.name}: `{p.name}` is written by the kernel; pass a writable buffer, not bytes"
                )
            c = _as_buffer_arg(a, p, self.name, dt)
            pending = pending or isinstance(c, ingot.Array)
            converted.append(c)
        if count == 0:
            return Run(self._device, False)
        try:
            self.kernel(int(count), *converted)
        except (ingot.IngotError, TypeError, ValueError, OverflowError) as e:
            raise _wrap_error(e) from e
        return Run(self._device, pending)

    def __repr__(self) -> str:
        return f"<metalcompute Function {self.name!r} on {self._device}>"


class Kernel:
    """A compiled MSL library; ``function(name)`` gives a callable kernel."""

    def __init__(self, library: Any, device: Any) -> None:
        self.library = library
        self._device = device

    def function(self, name: str) -> Function:
        """The kernel function ``name`` (mc.error when the library has none of that name)."""
        try:
            return Function(self.library.function(name), self._device)
        except (ingot.IngotError, KeyError, ValueError) as e:
            raise _wrap_error(e) from e

    @property
    def functions(self) -> list:
        """The kernel names in the library."""
        return list(self.library.functions)


class Device:
    """A compute device: ``Device()`` is ingot's default device, ``Device(i)`` is
    ``get_devices()[i]``."""

    def __init__(self, index: int = -1) -> None:
        if index == -1 or index is None:
            d = ingot.default_device()
        else:
            devs = ingot.devices()
            if not isinstance(index, int) or not 0 <= index < len(devs):
                raise error(f"no device {index!r} ({len(devs)} device(s): see get_devices())")
            d = devs[index]
        self.device = d
        info = _info(d)
        self.deviceName = info.deviceName
        self.recommendedWorkingSetSize = info.recommendedWorkingSetSize
        self.maxTransferRate = info.maxTransferRate
        self.hasUnifiedMemory = info.hasUnifiedMemory

    def kernel(self, source: str) -> Kernel:
        """Compiles MSL ``source`` for this device (mc.error with the compiler's message on
        failure)."""
        compile_ = getattr(ingot, "compile", None) or getattr(_ingot, "compile")
        try:
            lib = compile_(source, device=self.device)
            # metalcompute compiles the whole library here (Metal's newLibraryWithSource), so
            # errors surface at kernel(); ingot compiles per function, so prepare them all.
            prepare = getattr(lib, "prepare", None)
            if prepare is not None:
                prepare(list(lib.functions))
            return Kernel(lib, self.device)
        except (ingot.IngotError, TypeError, ValueError) as e:
            raise _wrap_error(e) from e

    def buffer(self, data: Union[int, Any]) -> Buffer:
        """A new buffer: ``buffer(nbytes)`` zero-filled, or ``buffer(obj)`` holding a copy of
        the bytes of any buffer-protocol object (array.array, bytes, NumPy array, ...)."""
        if isinstance(data, bool):
            raise error("buffer() takes a size in bytes or a buffer object")
        if isinstance(data, (int, np.integer)):
            if data < 0:
                raise error(f"buffer size must be >= 0, got {data}")
            return Buffer(int(data))
        try:
            mv = memoryview(data)
        except TypeError:
            raise error(f"buffer() takes a size in bytes or a buffer object, got {type(data).__name__}") from None
        return Buffer(mv.cast("B") if mv.c_contiguous else mv.tobytes())

    def __repr__(self) -> str:
        return f"<metalcompute Device {self.deviceName!r} ({self.device})>"
