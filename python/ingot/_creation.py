"""Array creation functions of the namespace."""

from __future__ import annotations

import builtins
import math
import operator
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _ingot
from ._dtypes import as_dtype, bfloat16, complex128, float64, int64
from ._ingot import Array, Device, DType

Shape = Union[int, Sequence[int]]


def _device(device: Any) -> Optional[Device]:
    return None if device is None else Device(device)


def _python_default_dtype(value: Any) -> DType:
    if isinstance(value, builtins.bool):
        return _ingot.bool
    if isinstance(value, int):
        return int64
    if isinstance(value, float):
        return float64
    if isinstance(value, complex):
        return complex128
    raise TypeError(f"expected a Python bool, int, float or complex, got {type(value).__name__}")


def _numpy_from_python(obj: Any, dtype: Optional[DType]) -> np.ndarray:
    """Python scalars and (nested) sequences through NumPy, with NumPy's overflow checks."""
    np_dtype = None
    if dtype is not None and dtype != bfloat16:
        np_dtype = np.dtype(dtype.name)
    try:
        a = np.asarray(obj, dtype=np_dtype)
    except OverflowError:
        raise
    except (ValueError, TypeError) as e:
        raise type(e)(f"cannot convert {type(obj).__name__} to an ingot array: {e}") from None
    if a.dtype == object:
        if isinstance(obj, int) or (isinstance(obj, (list, tuple)) and any(isinstance(v, int) for v in obj)):
            raise OverflowError("Python integer out of range for every ingot dtype")
        raise TypeError(f"cannot convert {type(obj).__name__} to an ingot array (ragged or object data)")
    if (np_dtype is None and a.dtype.kind in "iu" and a.dtype != np.int64
            and a.dtype != np.uint64 and not _has_typed_leaf(obj)):
        # Python ints default to int64 on every platform (NumPy 1.x on Windows chose int32);
        # elements that carry a dtype (NumPy scalars, 0-d arrays) keep NumPy's result dtype.
        a = a.astype(np.int64)
    return a


def _has_typed_leaf(obj: Any) -> builtins.bool:
    """True when a (nested) sequence holds an element with a dtype of its own."""
    if isinstance(obj, (list, tuple)):
        return builtins.any(_has_typed_leaf(o) for o in obj)
    return isinstance(obj, (np.generic, np.ndarray, Array)) or hasattr(obj, "__array__")


def asarray(
    obj: Any,
    /,
    *,
    dtype: Any = None,
    device: Any = None,
    copy: Optional[builtins.bool] = None,
) -> Array:
    """Converts ``obj`` to an ingot array.

    ``obj`` may be an ingot array, a NumPy array or scalar, a Python scalar, a (nested) sequence,
    or anything NumPy can convert (buffer protocol, ``__array__``...). NumPy arrays on the CPU are
    wrapped without copying when the dtype is supported and the memory aligned (the ingot array
    then shares memory with the NumPy array, and is read-only when it is). On Metal, a
    C-contiguous NumPy array whose address is page-aligned and whose size is a multiple of the
    page size (16 KiB on Apple silicon; ``mmap.PAGESIZE``) is wrapped the same way; as Metal work
    is asynchronous, do not write the NumPy array while GPU work on the ingot array is queued,
    and call ``ingot.synchronize()`` before reading GPU results through the NumPy array. Other
    arrays are copied to a GPU. ``copy=True`` always copies, ``copy=False`` raises ``ValueError``
    when a copy would be needed, ``None`` copies only when needed. Python floats default to
    float64, ints to int64; Metal holds no float64, so give ``dtype`` (for example float32) to
    bring float64 data there.
    """
    d = None if dtype is None else as_dtype(dtype)
    dev = _device(device)
    if isinstance(obj, Array):
        x = obj
        copied = False
        if dev is not None and x.device != dev:
            if copy is False:
                raise ValueError("copy=False: moving to another device needs a copy")
            x, copied = x.to_device(dev), True
        if d is not None and x.dtype != d:
            if copy is False:
                raise ValueError("copy=False: changing the dtype needs a copy")
            x, copied = x.astype(d), True
        if copy and not copied:
            x = x.copy()
        return x
    if isinstance(obj, (np.ndarray, np.generic)):
        a = np.asarray(obj)
        from_python = False
    elif isinstance(obj, (builtins.bool, int, float, complex, list, tuple)):
        if copy is False:
            raise ValueError("copy=False: a Python scalar or sequence always needs a copy")
        if isinstance(obj, (builtins.bool, int, float, complex)) and d is None:
            d = _python_default_dtype(obj)
        a = _numpy_from_python(obj, d)
        from_python = True
    else:
        a = np.asarray(obj)
        from_python = False
    if a.dtype.byteorder == ">" or (a.dtype.byteorder == "<" and not np.little_endian):
        a = a.astype(a.dtype.newbyteorder("="))
    if a.dtype.kind in "USOMmV" and a.dtype.name != "bfloat16":
        what = f" (value {obj!r})" if a.ndim == 0 else ""
        raise TypeError(f"Unsupported data type {a.dtype}{what}: ingot arrays hold numbers and "
                        "booleans")
    needs_cast = d is not None and a.dtype.name != d.name
    if needs_cast and copy is False:
        raise ValueError("copy=False: changing the dtype needs a copy")
    if needs_cast:
        target = dev if dev is not None else Device(None)
        if target.kind == "metal":
            # Cast on the host, then one copy to the GPU: the source may be float64, which Metal
            # does not hold, and the result must not alias ``a`` while the cast is queued.
            return _ingot.from_numpy(a, device="cpu").astype(d).to_device(target)
    x = _ingot.from_numpy(a, copy=None if (needs_cast or from_python) else copy, device=dev)
    if needs_cast:
        x = x.astype(d)
    return x


def empty(shape: Shape, *, dtype: Any = None, device: Any = None) -> Array:
    """A new array with uninitialised contents (default dtype float64)."""
    return _ingot.empty(shape, as_dtype(dtype if dtype is not None else float64), _device(device))


def full(shape: Shape, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """A new array filled with ``fill_value`` (dtype from the value when not given)."""
    if isinstance(fill_value, Array):
        if dtype is None:
            dtype = fill_value.dtype
        fill_value = fill_value.item()
    elif isinstance(fill_value, np.generic):
        if dtype is None:
            dtype = fill_value.dtype
        fill_value = fill_value.item()
    d = as_dtype(dtype) if dtype is not None else _python_default_dtype(fill_value)
    return _ingot.full(shape, fill_value, d, _device(device))


def zeros(shape: Shape, *, dtype: Any = None, device: Any = None) -> Array:
    """A new array of zeros (default dtype float64)."""
    return _ingot.full(shape, 0, as_dtype(dtype if dtype is not None else float64), _device(device))


def ones(shape: Shape, *, dtype: Any = None, device: Any = None) -> Array:
    """A new array of ones (default dtype float64)."""
    return _ingot.full(shape, 1, as_dtype(dtype if dtype is not None else float64), _device(device))


def _like(x: Array, dtype: Any, device: Any) -> tuple:
    return (x.dtype if dtype is None else as_dtype(dtype)), (x.device if device is None else Device(device))


def empty_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """An uninitialised array with the shape (and by default dtype and device) of ``x``."""
    d, dev = _like(x, dtype, device)
    return _ingot.empty(x.shape, d, dev)


def zeros_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Zeros with the shape (and by default dtype and device) of ``x``."""
    d, dev = _like(x, dtype, device)
    return _ingot.full(x.shape, 0, d, dev)


def ones_like(x: Array, /, *, dtype: Any = None, device: Any = None) -> Array:
    """Ones with the shape (and by default dtype and device) of ``x``."""
    d, dev = _like(x, dtype, device)
    return _ingot.full(x.shape, 1, d, dev)


def full_like(x: Array, /, fill_value: Any, *, dtype: Any = None, device: Any = None) -> Array:
    """``fill_value`` everywhere, with the shape (and by default dtype and device) of ``x``."""
    d, dev = _like(x, dtype, device)
    if isinstance(fill_value, (Array, np.generic)):
        fill_value = fill_value.item()
    return _ingot.full(x.shape, fill_value, d, dev)


def arange(
    start: Union[int, float],
    /,
    stop: Optional[Union[int, float]] = None,
    step: Union[int, float] = 1,
    *,
    dtype: Any = None,
    device: Any = None,
) -> Array:
    """``start, start + step, ...`` below ``stop`` (int64 for integer arguments, else float64).

    The bounds may be Python, NumPy or 0-d array scalars. Integer arguments are exact over the
    whole int64 range; ``dtype`` may be any dtype, complex included (real values).

    >>> import ingot
    >>> ingot.arange(2**62, 2**62 + 3).tolist() == [2**62, 2**62 + 1, 2**62 + 2]
    True
    """
    if stop is None:
        start, stop = 0, start
    start, stop, step = (_arange_bound(v) for v in (start, stop, step))
    if step == 0:
        raise ValueError("arange: step must not be zero")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    d = (int64 if all_int else float64) if dtype is None else as_dtype(dtype)
    dev = _device(device)
    if d.kind == "complex floating":
        part = float64 if d == complex128 else _ingot.float32
        return arange(start, stop, step, dtype=part, device=device).astype(d)
    if all_int and builtins.max(abs(start), abs(stop), abs(step)) > 2**53:
        # float64 bounds would round: count in integers, then start + step * i in int64.
        n = builtins.max(0, -((start - stop) // step))
        for v in (start, start + step * (n - 1) if n else start):
            if not -(2**63) <= v < 2**63:
                raise OverflowError(f"arange: {v} is out of the int64 range")
        if n <= 1:
            return asarray([start][:n], dtype=int64, device=device).astype(d, copy=False)
        i = _ingot.arange(0.0, float(n), 1.0, int64, dev)
        return (i * step + start).astype(d, copy=False)
    return _ingot.arange(float(start), float(stop), float(step), d, dev)


def _arange_bound(v: Any) -> Union[int, float]:
    """A bound of ``arange`` as a Python int or float (0-d arrays and NumPy scalars too)."""
    if isinstance(v, (Array, np.ndarray)):
        if v.ndim != 0:
            raise TypeError("arange: the bounds must be scalars or 0-d arrays")
        v = v.item() if isinstance(v, np.ndarray) else v.to_device("cpu").item()
    elif isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, builtins.bool) or not isinstance(v, (int, float)):
        raise TypeError("arange arguments must be real numbers (ints or floats)")
    return v


def linspace(
    start: Union[int, float],
    stop: Union[int, float],
    /,
    num: int,
    *,
    dtype: Any = None,
    device: Any = None,
    endpoint: builtins.bool = True,
) -> Array:
    """``num`` evenly spaced values from ``start`` to ``stop`` (default dtype float64, complex128
    for complex ``start`` or ``stop``)."""
    if not isinstance(num, int) or isinstance(num, builtins.bool):
        raise TypeError("linspace: num must be an integer")
    if num < 0:
        raise ValueError(f"linspace: num must be non-negative, got {num}")
    is_complex = isinstance(start, complex) or isinstance(stop, complex)
    if dtype is None:
        dtype = complex128 if is_complex else float64
    d = as_dtype(dtype)
    if is_complex or d.kind == "complex floating":
        # Real and imaginary parts spaced apart, in the parts' real dtype.
        start, stop = complex(start), complex(stop)
        if not all(math.isfinite(v) for v in (start.real, start.imag, stop.real, stop.imag)):
            raise ValueError("linspace: start and stop must be finite")
        if d.kind != "complex floating":
            raise TypeError(f"linspace: complex start or stop needs a complex dtype, got {d}")
        part = float64 if d == complex128 else _ingot.float32
        dev = _device(device)
        re = _ingot.linspace(start.real, stop.real, num, builtins.bool(endpoint), part, dev)
        im = _ingot.linspace(start.imag, stop.imag, num, builtins.bool(endpoint), part, dev)
        return re.astype(d) + im.astype(d) * 1j
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise ValueError("linspace: start and stop must be finite")
    return _ingot.linspace(float(start), float(stop), num, builtins.bool(endpoint), d, _device(device))


def logspace(
    start: Union[int, float],
    stop: Union[int, float],
    /,
    num: int = 50,
    *,
    endpoint: builtins.bool = True,
    base: Union[int, float] = 10.0,
    dtype: Any = None,
    device: Any = None,
) -> Array:
    """NumPy's ``logspace``: ``base ** linspace(start, stop, num, endpoint=endpoint)`` (not in
    the array API standard; NumPy's and CuPy's users expect it). Default dtype float64.

    >>> import ingot
    >>> ingot.logspace(0, 3, 4).tolist()
    [1.0, 10.0, 100.0, 1000.0]
    """
    d = float64 if dtype is None else as_dtype(dtype)
    work = complex128 if d.kind == "complex floating" else float64
    if _device(device) is not None and _device(device).kind == "metal" and work == float64:
        work = _ingot.float32
    y = linspace(start, stop, num, endpoint=endpoint, dtype=work, device=device)
    from ._functions import pow as _pow

    return _pow(asarray(base, dtype=work, device=y.device), y).astype(d, copy=False)


def eye(
    n_rows: int,
    n_cols: Optional[int] = None,
    /,
    *,
    k: int = 0,
    dtype: Any = None,
    device: Any = None,
) -> Array:
    """A matrix with ones on diagonal ``k`` and zeros elsewhere (default dtype float64)."""
    m = n_rows if n_cols is None else n_cols
    for v in (n_rows, m):
        if not isinstance(v, int) or isinstance(v, builtins.bool):
            raise TypeError("eye: sizes must be integers")
        if v < 0:
            raise ValueError(f"eye: negative size {v}")
    d = as_dtype(dtype if dtype is not None else float64)
    return _ingot.eye(n_rows, m, k, d, _device(device))


def from_dlpack(x: Any, /, *, device: Any = None, copy: Optional[builtins.bool] = None) -> Array:
    """An ingot array viewing a DLPack producer's memory (PyTorch, CuPy, NumPy, JAX...) without
    copying, on the producer's device (CPU or CUDA). ``copy=True`` copies; ``device=`` moves."""
    a = _ingot.from_dlpack(x)
    if copy:
        a = a.copy()
    if device is not None:
        a = a.to_device(device)
    return a


def meshgrid(*arrays: Array, indexing: str = "xy") -> tuple:
    """Coordinate matrices from 1-D coordinate vectors: one array per input, each of shape
    ``(len(a0), len(a1), ...)`` for ``indexing="ij"``; ``"xy"`` swaps the first two lengths
    (Cartesian indexing). The results are new arrays.

    >>> import ingot
    >>> xs, ys = ingot.meshgrid(ingot.asarray([1, 2, 3]), ingot.asarray([4, 5]))
    >>> xs.shape
    (2, 3)
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    for a in arrays:
        if not isinstance(a, Array):
            raise TypeError(f"meshgrid: expected ingot arrays, got {type(a).__name__}")
        if a.ndim != 1:
            raise ValueError(f"meshgrid: inputs must be one-dimensional, got shape {a.shape}")
    if arrays:
        d0 = arrays[0].dtype
        for a in arrays[1:]:
            if a.dtype != d0:
                raise ValueError("meshgrid: every input must have the same dtype")
            if a.device != arrays[0].device:
                raise _ingot.DeviceMismatchError("meshgrid: inputs on different devices")
    n = len(arrays)
    lengths = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        lengths[0], lengths[1] = lengths[1], lengths[0]
    out = []
    for i, a in enumerate(arrays):
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        shape = [1] * n
        shape[pos] = a.shape[0]
        out.append(a.reshape(tuple(shape)).broadcast_to(tuple(lengths)).copy())
    return tuple(out)


def diag(v: Array, k: int = 0) -> Array:
    """NumPy's ``diag`` (not in the array API standard; SciPy calls it): of a 1-D array, a new
    square matrix with ``v`` on diagonal ``k`` and zeros elsewhere; of a 2-D array, a new 1-D
    array holding its diagonal ``k`` (a copy, never a view).

    >>> import ingot
    >>> ingot.diag(ingot.asarray([1, 2]), 1).tolist()
    [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    """
    if not isinstance(v, Array):
        raise TypeError(f"diag: expected an ingot array, got {type(v).__name__}")
    k = operator.index(k)
    if v.ndim == 2:
        from .linalg import diagonal

        return diagonal(v, offset=k).copy()
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + builtins.abs(k)
    from ._functions import concat, where

    pad = concat([v, zeros((builtins.abs(k),), dtype=v.dtype, device=v.device)])
    rows = _ingot.arange(0.0, float(n), 1.0, int64, v.device).reshape((n, 1))
    cols = _ingot.arange(0.0, float(n), 1.0, int64, v.device).reshape((1, n))
    on = _ingot.binary("equal", _ingot.binary("subtract", cols, rows), k)
    # row r holds v[r] at column r + k (k >= 0); column c holds v[c] at row c - k (k < 0)
    values = pad.reshape((n, 1)) if k >= 0 else pad.reshape((1, n))
    return where(on, values, False if v.dtype == _ingot.bool else 0)


def _triangle(x: Array, k: int, lower: builtins.bool) -> Array:
    name = "tril" if lower else "triu"
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{name}: the array needs at least two dimensions, got shape {x.shape}")
    n, m = x.shape[-2], x.shape[-1]
    k = builtins.max(builtins.min(operator.index(k), m + 1), -n - 1)
    rows = _ingot.arange(0.0, float(n), 1.0, int64, x.device).reshape((n, 1))
    cols = _ingot.arange(0.0, float(m), 1.0, int64, x.device).reshape((1, m))
    offset = _ingot.binary("subtract", cols, rows)
    keep = _ingot.binary("less_equal" if lower else "greater_equal", offset, int(k))
    zero = False if x.dtype == _ingot.bool else 0
    return _ingot.where_(keep, x, zero)


def tril(x: Array, /, *, k: int = 0) -> Array:
    """The lower triangle of the last two axes: elements on and below diagonal ``k`` kept (above
    the main diagonal for ``k > 0``), the rest zero.

    >>> import ingot
    >>> ingot.tril(ingot.ones((3, 3), dtype=ingot.int32))
    Array([[1, 0, 0],
           [1, 1, 0],
           [1, 1, 1]], dtype=int32)
    """
    return _triangle(x, k, True)


def triu(x: Array, /, *, k: int = 0) -> Array:
    """The upper triangle of the last two axes: elements on and above diagonal ``k`` kept, the
    rest zero.

    >>> import ingot
    >>> ingot.triu(ingot.ones((2, 3), dtype=ingot.int32), k=1)
    Array([[0, 1, 1],
           [0, 0, 1]], dtype=int32)
    """
    return _triangle(x, k, False)
