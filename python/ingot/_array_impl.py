"""Python-level methods of ``ingot.Array`` (the native class calls these).

Formatting goes through NumPy on a host copy of the data; bfloat16 (which has no NumPy dtype
unless ``ml_dtypes`` is installed) is shown and converted as float32.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from . import _ingot

_NP_COPY_KEYWORD = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def host_numpy(x: "_ingot.Array") -> np.ndarray:
    """The array as a NumPy array: a zero-copy view of CPU memory, or of a Metal array's shared
    memory (after its device's queued work has finished), where possible, else a host copy.

    bfloat16 becomes float32 (exactly: every bfloat16 value is a float32 value) unless
    ``ml_dtypes`` is installed, in which case it keeps its ``ml_dtypes.bfloat16`` dtype.
    """
    if x.dtype == _ingot.bfloat16:
        try:
            import ml_dtypes  # noqa: F401

            raw = np.frombuffer(x._tobytes(), dtype=np.uint16).reshape(x.shape)
            return raw.view(ml_dtypes.bfloat16)
        except ImportError:
            x = x.astype(_ingot.float32)
    view = _host_view(x)
    if view is not None:
        return view
    return np.frombuffer(x._tobytes(), dtype=x.dtype.name).reshape(x.shape).copy()


class _Interface:
    """Holds an array and exposes its ``__array_interface__`` (keeps the array alive)."""

    __slots__ = ("array", "__array_interface__")

    def __init__(self, array: "_ingot.Array") -> None:
        self.array = array
        self.__array_interface__ = array.__array_interface__


def _host_view(x: "_ingot.Array") -> Optional[np.ndarray]:
    """A NumPy view of ``x``'s memory without a copy, or None where there is none.

    CPU arrays, and Metal arrays (shared memory): reading a Metal array's interface waits for its
    device's queued work first. A build of the bindings without their ``metal`` feature has no
    interface for Metal arrays (None: the caller copies).
    """
    if x.device.kind not in ("cpu", "metal"):
        return None
    try:
        return np.asarray(_Interface(x))
    except AttributeError:
        return None


def array_to_numpy(x: "_ingot.Array", dtype: Any = None, copy: Optional[bool] = None) -> np.ndarray:
    """``Array.__array__(dtype=None, copy=None)``: NumPy 1.x and 2.x calling conventions."""
    a = host_numpy(x)
    if dtype is not None and a.dtype != np.dtype(dtype):
        return a.astype(dtype)
    if copy:
        return a.copy()
    if copy is False and (x.dtype == _ingot.bfloat16 or not isinstance(a.base, _Interface)):
        raise ValueError("cannot convert this array to NumPy without a copy")
    return a


def _prefix_suffix(x: "_ingot.Array") -> tuple:
    return "Array(", f", dtype={x.dtype.name}" + (
        "" if x.device.kind == "cpu" else f", device='{x.device}'") + ")"


def array_repr(x: "_ingot.Array") -> str:
    """``Array([1., 2.], dtype=float32)``, formatted by NumPy."""
    prefix, suffix = _prefix_suffix(x)
    a = host_numpy(x)
    if x.size == 0:
        body = f"[], shape={x.shape}" if x.ndim != 1 else "[]"
    else:
        body = np.array2string(a, separator=", ", prefix=prefix, threshold=1000)
    return prefix + body + suffix


def array_str(x: "_ingot.Array") -> str:
    """The elements as NumPy prints them."""
    return np.array2string(host_numpy(x), threshold=1000)


def array_format(x: "_ingot.Array", spec: str = "") -> str:
    """``format(x, spec)``: the element's format for 0-d arrays, else ``str(x)``."""
    if x.ndim == 0:
        return format(x.item(), spec)
    if spec:
        raise TypeError("unsupported format string passed to ingot.Array.__format__")
    return array_str(x)


def array_iter(x: "_ingot.Array") -> Iterator["_ingot.Array"]:
    """Iterates over the first axis (0-d arrays are not iterable)."""
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d array")
    return (x[i] for i in range(x.shape[0]))


def array_tolist(x: "_ingot.Array") -> Any:
    """Nested Python lists of Python scalars (a scalar for a 0-d array)."""
    if x.dtype == _ingot.bfloat16:
        x = x.astype(_ingot.float32)
    return host_numpy(x).tolist()


def array_namespace(x: "_ingot.Array", api_version: Optional[str] = None) -> Any:
    """The array API namespace (the ``ingot`` module)."""
    import ingot

    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12"):
        raise ValueError(f"unsupported array API version {api_version!r}")
    return ingot


def _rebuild(data: np.ndarray, dtype: str, device: str) -> "_ingot.Array":
    import ingot

    # The array lands on the unpickling thread's default device when that is of the array's
    # kind (a Dask worker pinned to cuda:1 receives a chunk from cuda:0), else on its own device.
    current = ingot.default_device()
    target = current if current.kind == device.split(":")[0] else device
    return ingot.asarray(data, dtype=dtype, device=target, copy=True)


def array_reduce(x: "_ingot.Array") -> tuple:
    """Pickle support: the data travels as a NumPy array, and comes back to a device of the same
    kind (the default device of the unpickling thread when it is of that kind)."""
    return (_rebuild, (np.array(host_numpy(x)), x.dtype.name, str(x.device)))
