"""MetalPy's API (``MetalPy``, ``MetalArray``) over ingot, on every ingot device.

A program written for MetalPy runs with its import line changed::

    from ingot.compat.metalpy import MetalPy, MetalArray   # was: from MetalPy import ...

    gpu = MetalPy()
    a = gpu.array([1.0, 2.0, 3.0, 4.0])
    b = gpu.array([5.0, 6.0, 7.0, 8.0])
    gpu.add(a, b).to_list()          # [6.0, 8.0, 10.0, 12.0]

Arrays are 1-D, float32 (``array('f')``, lists) or uint32 (``array('I')``, for ``gather``
indices), as in the original. Matrices are flat arrays with explicit ``rows, cols`` arguments;
``matmul(A, B, M, K, N)`` multiplies an ``M x K`` matrix by a ``K x N`` one. Every operation runs
through ingot's array operations on the default device (``INGOT_DEVICE``), and every input is
checked before anything runs: a wrong type is a ``TypeError``, a wrong length or index a
``ValueError`` (the original reads out of bounds instead). See docs/compat/metalpy.md.
"""

from __future__ import annotations

import array as _pyarray
import math
import numbers
from typing import Any, Optional, Union

import numpy as np

import ingot

__all__ = ["MetalPy", "MetalArray"]

_TYPECODES = {"f": ingot.float32, "I": ingot.uint32}
_NP_TYPECODES = {np.dtype(np.float32): "f", np.dtype(np.uint32): "I"}
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)

_GATHER_SOURCE = """
#include <metal_stdlib>
using namespace metal;
kernel void metalpy_gather(device const float *source [[buffer(0)]],
                           device const uint *indices [[buffer(1)]],
                           device float *out [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
    out[i] = source[indices[i]];
}
"""


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class MetalArray:
    """A 1-D float32 or uint32 array on an ingot device (MetalPy's GPU array).

    ``MetalArray(device, data)`` copies ``data`` (a list of numbers, an ``array('f')`` or
    ``array('I')``, or a float32/uint32 NumPy array) to ``device`` (``gpu.device``). The
    original's internal form ``MetalArray(device, None, length=n, buffer=b, typecode=t)`` wraps
    an existing ingot array ``b``.
    """

    def __init__(
        self,
        gpu_device: Any,
        data: Any,
        length: Optional[int] = None,
        buffer: Any = None,
        typecode: str = "f",
    ) -> None:
        self.gpu_device = gpu_device
        if buffer is not None:
            if not isinstance(buffer, ingot.Array):
                raise TypeError("MetalArray: buffer must be an ingot array")
            if typecode not in _TYPECODES:
                raise TypeError("MetalArray only supports typecodes 'f' (float32) and 'I' (uint32)")
            flat = ingot.reshape(buffer, (-1,))
            if flat.dtype != _TYPECODES[typecode]:
                flat = ingot.astype(flat, _TYPECODES[typecode])
            self.buffer = flat
            self.length = int(flat.shape[0]) if length is None else int(length)
            if self.length != flat.shape[0]:
                raise ValueError(f"MetalArray: length {length} does not match the buffer ({flat.shape[0]})")
            self.typecode = typecode
            return
        if isinstance(data, list):
            host = np.asarray(data, dtype=np.float32)
            if host.ndim != 1:
                raise TypeError("MetalArray expects a flat list of numbers")
            code = "f"
        elif isinstance(data, _pyarray.array):
            if data.typecode not in _TYPECODES:
                raise TypeError("MetalArray only supports array('f') or array('I').")
            code = data.typecode
            host = np.frombuffer(data, dtype=np.float32 if code == "f" else np.uint32)
        elif isinstance(data, np.ndarray):
            if data.dtype not in _NP_TYPECODES:
                raise TypeError("MetalArray only supports float32 or uint32 NumPy arrays.")
            code = _NP_TYPECODES[data.dtype]
            host = np.ascontiguousarray(data).reshape(-1)
        else:
            raise TypeError("MetalArray expects a list, array('f') or array('I').")
        self.typecode = code
        self.length = int(host.shape[0])
        # copy=True: the MetalArray owns its data (a later change to `data` does not show).
        self.buffer = ingot.asarray(host, dtype=_TYPECODES[code], device=_device_of(gpu_device), copy=True)

    def to_array(self) -> _pyarray.array:
        """The data as a new ``array.array`` ('f' or 'I')."""
        out = _pyarray.array(self.typecode)
        out.frombytes(self.to_numpy().tobytes())
        return out

    def to_list(self) -> list:
        """The data as a list of Python floats (or ints for a uint32 array)."""
        return self.to_array().tolist()

    def to_numpy(self) -> np.ndarray:
        """The data as a new NumPy array (an ingot extension)."""
        return np.array(self.buffer, copy=True)

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        return f"MetalArray(length={self.length}, typecode={self.typecode!r}, device={self.buffer.device})"


def _device_of(gpu_device: Any) -> Any:
    if gpu_device is None or isinstance(gpu_device, (ingot.Device, str)):
        return gpu_device
    return getattr(gpu_device, "device", None)


class MetalPy:
    """MetalPy's compute object: array creation and the 46 operations, on an ingot device.

    ``MetalPy(kernel_path=...)`` accepts the original's metallib path and ignores it: the
    operations are ingot's (no ``.metallib`` to build). ``device`` (an ingot extension) picks
    the device; the default is ingot's default device.
    """

    def __init__(self, kernel_path: str = "metal_kernels.metallib", device: Any = None) -> None:
        self.kernel_path = kernel_path
        self.device = ingot.Device(device) if device is not None else ingot.default_device()
        self.kernel_cache: dict = {}

    # ------------------------------------------------------------------ helpers

    def array(self, data: Any) -> MetalArray:
        """A new MetalArray holding ``data`` (list, ``array('f')``/``array('I')``) on this device."""
        return MetalArray(self.device, data)

    def _wrap(self, x: Any, typecode: str = "f") -> MetalArray:
        return MetalArray(self.device, None, buffer=x, typecode=typecode)

    def _float(self, name: str, *arrays: Any) -> None:
        for a in arrays:
            if not isinstance(a, MetalArray):
                raise TypeError(f"Error: {name}() expects MetalArray inputs.")
            if a.typecode != "f":
                raise TypeError(f"Error: {name}() expects float32 MetalArray inputs (array('f')).")

    def _same_length(self, name: str, *arrays: MetalArray) -> None:
        n = arrays[0].length
        for a in arrays[1:]:
            if a.length != n:
                raise ValueError(f"{name}: all MetalArrays must have equal length for elementwise ops.")

    def _unary(self, name: str, a: Any, fn: Any) -> MetalArray:
        self._float(name, a)
        return self._wrap(fn(a.buffer))

    def _binary(self, name: str, a: Any, b: Any, fn: Any) -> MetalArray:
        self._float(name, a, b)
        self._same_length(name, a, b)
        return self._wrap(fn(a.buffer, b.buffer))

    @staticmethod
    def _scalar(name: str, what: str, v: Any) -> float:
        if not _is_scalar(v):
            raise TypeError(f"{name}() expects '{what}' as a scalar float.")
        return float(v)

    def _matrix(self, name: str, A: Any, rows: int, cols: int) -> Any:
        self._float(name, A)
        for v, what in ((rows, "rows"), (cols, "cols")):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
                raise TypeError(f"{name}: {what} must be a non-negative int")
        if A.length != rows * cols:
            raise ValueError(
                f"{name}: A.length must equal rows * cols (expected {rows * cols}, got {A.length})."
            )
        return ingot.reshape(A.buffer, (rows, cols))

    def _flat(self, x: Any, typecode: str = "f") -> MetalArray:
        return self._wrap(ingot.reshape(x, (-1,)), typecode)

    # ------------------------------------------------------------------ elementwise math

    def add(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``a + b`` elementwise (equal lengths)."""
        return self._binary("add", a, b, ingot.add)

    def subtract(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``a - b`` elementwise (equal lengths). ``sub`` is the original's name."""
        return self._binary("subtract", a, b, ingot.subtract)

    sub = subtract

    def multiply(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``a * b`` elementwise (equal lengths)."""
        return self._binary("multiply", a, b, ingot.multiply)

    def divide(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``a / b`` elementwise (equal lengths; IEEE division, x/0 is inf or nan)."""
        return self._binary("divide", a, b, ingot.divide)

    def negate(self, a: MetalArray) -> MetalArray:
        """``-a``."""
        return self._unary("negate", a, ingot.negative)

    def abs(self, a: MetalArray) -> MetalArray:
        """``|a|``."""
        return self._unary("abs", a, ingot.abs)

    def pow(self, a: MetalArray, b: float) -> MetalArray:
        """``a ** b`` for a scalar exponent ``b``."""
        self._float("pow", a)
        e = self._scalar("pow", "b", b)
        return self._wrap(ingot.pow(a.buffer, e))

    def square(self, a: MetalArray) -> MetalArray:
        """``a * a``."""
        return self._unary("square", a, ingot.square)

    def sqrt(self, a: MetalArray) -> MetalArray:
        """Square root (nan below zero)."""
        return self._unary("sqrt", a, ingot.sqrt)

    def exp(self, a: MetalArray) -> MetalArray:
        """``e ** a``."""
        return self._unary("exp", a, ingot.exp)

    def log(self, a: MetalArray) -> MetalArray:
        """Natural logarithm."""
        return self._unary("log", a, ingot.log)

    def sin(self, a: MetalArray) -> MetalArray:
        """Sine (radians)."""
        return self._unary("sin", a, ingot.sin)

    def cos(self, a: MetalArray) -> MetalArray:
        """Cosine (radians)."""
        return self._unary("cos", a, ingot.cos)

    def tan(self, a: MetalArray) -> MetalArray:
        """Tangent (radians)."""
        return self._unary("tan", a, ingot.tan)

    def asin(self, a: MetalArray) -> MetalArray:
        """Arc sine."""
        return self._unary("asin", a, ingot.asin)

    def atan2(self, y: MetalArray, x: MetalArray) -> MetalArray:
        """``atan2(y, x)`` elementwise (quadrant-aware arc tangent of ``y / x``)."""
        return self._binary("atan2", y, x, ingot.atan2)

    def floor(self, a: MetalArray) -> MetalArray:
        """Largest integer not above each element."""
        return self._unary("floor", a, ingot.floor)

    def ceil(self, a: MetalArray) -> MetalArray:
        """Smallest integer not below each element."""
        return self._unary("ceil", a, ingot.ceil)

    def round(self, a: MetalArray) -> MetalArray:
        """Rounds to the nearest integer, halves away from zero (Metal's ``round``, not NumPy's
        round-half-to-even)."""
        self._float("round", a)
        x = a.buffer
        t = ingot.trunc(x)
        frac = ingot.abs(x - t)  # exact in float32
        step = ingot.where(frac >= 0.5, ingot.sign(x), ingot.zeros_like(x))
        return self._wrap(t + step)

    def sign(self, a: MetalArray) -> MetalArray:
        """-1, 0 or 1 by the sign of each element."""
        return self._unary("sign", a, ingot.sign)

    def clip(self, a: MetalArray, low: float, high: float) -> MetalArray:
        """Each element limited to ``[low, high]``."""
        self._float("clip", a)
        lo = self._scalar("clip", "low", low)
        hi = self._scalar("clip", "high", high)
        return self._wrap(ingot.clip(a.buffer, lo, hi))

    def _cyclic(self, name: str, a: Any, b: Any) -> Any:
        self._float(name, a, b)
        if b.length == 0:
            raise ValueError(f"{name} requires b.length > 0 for broadcasting.")
        n, m = a.length, b.length
        if n == 0:
            return b.buffer[:0]
        reps = -(-n // m)
        tiled = ingot.broadcast_to(ingot.reshape(b.buffer, (1, m)), (reps, m))
        return ingot.reshape(tiled, (reps * m,))[:n]

    def broadcast_add(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``out[i] = a[i] + b[i % len(b)]``: ``b`` repeats cyclically over ``a`` (as the
        original: the result has ``a``'s length)."""
        bb = self._cyclic("broadcast_add", a, b)
        return self._wrap(ingot.add(a.buffer, bb))

    def broadcast_multiply(self, a: MetalArray, b: MetalArray) -> MetalArray:
        """``out[i] = a[i] * b[i % len(b)]`` (``b`` repeats cyclically over ``a``)."""
        bb = self._cyclic("broadcast_multiply", a, b)
        return self._wrap(ingot.multiply(a.buffer, bb))

    # ------------------------------------------------------------------ activations

    def relu(self, a: MetalArray) -> MetalArray:
        """``max(a, 0)``."""
        return self._unary("relu", a, lambda x: ingot.maximum(x, 0.0))

    def leaky_relu(self, a: MetalArray, alpha: float = 0.01) -> MetalArray:
        """``a`` where positive, ``alpha * a`` elsewhere."""
        self._float("leaky_relu", a)
        al = self._scalar("leaky_relu", "alpha", alpha)
        x = a.buffer
        return self._wrap(ingot.where(x > 0.0, x, x * al))

    @staticmethod
    def _sigmoid(x: Any) -> Any:
        return 1.0 / (1.0 + ingot.exp(-x))

    def sigmoid(self, a: MetalArray) -> MetalArray:
        """``1 / (1 + exp(-a))``."""
        return self._unary("sigmoid", a, self._sigmoid)

    def tanh(self, a: MetalArray) -> MetalArray:
        """Hyperbolic tangent."""
        return self._unary("tanh", a, ingot.tanh)

    def softplus(self, a: MetalArray) -> MetalArray:
        """``log(1 + exp(a))``, computed without overflow for large ``a``."""
        return self._unary(
            "softplus", a, lambda x: ingot.maximum(x, 0.0) + ingot.log1p(ingot.exp(-ingot.abs(x)))
        )

    def swish(self, a: MetalArray) -> MetalArray:
        """``a * sigmoid(a)`` (SiLU)."""
        return self._unary("swish", a, lambda x: x * self._sigmoid(x))

    def gelu(self, a: MetalArray) -> MetalArray:
        """GELU, tanh approximation: ``0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))``."""
        return self._unary(
            "gelu",
            a,
            lambda x: 0.5 * x * (1.0 + ingot.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))),
        )

    # ------------------------------------------------------------------ reductions

    def _reduce_input(self, name: str, a: Any) -> Any:
        self._float(name, a)
        if a.length == 0:
            raise ValueError(f"{name} cannot reduce an empty array (N=0).")
        return a.buffer

    def sum(self, a: MetalArray) -> float:
        """The sum of the elements, as a Python float."""
        return float(ingot.sum(self._reduce_input("sum", a)))

    def product(self, a: MetalArray) -> float:
        """The product of the elements, as a Python float (float32 accumulation)."""
        return float(ingot.prod(self._reduce_input("product", a)))

    def max(self, a: MetalArray) -> float:
        """The largest element, as a Python float."""
        return float(ingot.max(self._reduce_input("max", a)))

    def min(self, a: MetalArray) -> float:
        """The smallest element, as a Python float."""
        return float(ingot.min(self._reduce_input("min", a)))

    def mean(self, a: MetalArray) -> float:
        """The arithmetic mean, as a Python float."""
        return float(ingot.mean(self._reduce_input("mean", a)))

    def argmax(self, a: MetalArray) -> tuple:
        """``(index, value)`` of the largest element (the first one on ties)."""
        x = self._reduce_input("argmax", a)
        i = int(ingot.argmax(x))
        return i, float(x[i])

    def argmin(self, a: MetalArray) -> tuple:
        """``(index, value)`` of the smallest element (the first one on ties)."""
        x = self._reduce_input("argmin", a)
        i = int(ingot.argmin(x))
        return i, float(x[i])

    # ------------------------------------------------------------------ linear algebra

    def hadamard(self, A: MetalArray, B: MetalArray, rows: int, cols: int) -> MetalArray:
        """Elementwise product of two ``rows x cols`` matrices."""
        a = self._matrix("hadamard", A, rows, cols)
        b = self._matrix("hadamard", B, rows, cols)
        return self._flat(ingot.multiply(a, b))

    def matmul(self, A: MetalArray, B: MetalArray, M: int, K: int, N: int) -> MetalArray:
        """``A @ B`` for ``A`` of ``M x K`` and ``B`` of ``K x N`` (row-major, flat); the result
        is ``M x N``. The argument order is the original code's ``(A, B, M, K, N)``."""
        a = self._matrix("matmul", A, M, K)
        b = self._matrix("matmul", B, K, N)
        return self._flat(ingot.matmul(a, b))

    def transpose(self, A: MetalArray, rows: int, cols: int) -> MetalArray:
        """The ``cols x rows`` transpose of a ``rows x cols`` matrix."""
        a = self._matrix("transpose", A, rows, cols)
        return self._flat(ingot.matrix_transpose(a))

    def row_sum(self, A: MetalArray, rows: int, cols: int) -> MetalArray:
        """The sum of each row (``rows`` values)."""
        return self._wrap(ingot.sum(self._matrix("row_sum", A, rows, cols), axis=1))

    def col_sum(self, A: MetalArray, rows: int, cols: int) -> MetalArray:
        """The sum of each column (``cols`` values)."""
        return self._wrap(ingot.sum(self._matrix("col_sum", A, rows, cols), axis=0))

    def row_scale(self, A: MetalArray, s: MetalArray, rows: int, cols: int) -> MetalArray:
        """Row ``i`` multiplied by ``s[i]`` (``len(s) == rows``)."""
        a = self._matrix("row_scale", A, rows, cols)
        self._float("row_scale", s)
        if s.length != rows:
            raise ValueError(f"row_scale: s.length ({s.length}) must equal rows ({rows}).")
        return self._flat(a * ingot.reshape(s.buffer, (rows, 1)))

    def col_scale(self, A: MetalArray, s: MetalArray, rows: int, cols: int) -> MetalArray:
        """Column ``j`` multiplied by ``s[j]`` (``len(s) == cols``)."""
        a = self._matrix("col_scale", A, rows, cols)
        self._float("col_scale", s)
        if s.length != cols:
            raise ValueError(f"col_scale: s.length ({s.length}) must equal cols ({cols}).")
        return self._flat(a * ingot.reshape(s.buffer, (1, cols)))

    # ------------------------------------------------------------------ miscellaneous

    def slice(self, a: MetalArray, start: int, end: int) -> MetalArray:
        """A new array holding ``a[start:end]`` (``0 <= start <= end <= len(a)``)."""
        if not isinstance(a, MetalArray):
            raise TypeError("slice expects a MetalArray as input.")
        for v in (start, end):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool):
                raise TypeError("slice expects 'start' and 'end' to be ints.")
        start, end = int(start), int(end)
        if start < 0 or end < 0:
            raise ValueError("slice expects non-negative indexing.")
        if start > end:
            raise ValueError(f"slice requires start <= end (got {start}, {end}).")
        if end > a.length:
            raise ValueError(f"slice: end={end} out of bounds for array of length {a.length}.")
        part = a.buffer[start:end]
        return self._wrap(ingot.asarray(part, copy=True), a.typecode)

    def gather(self, source: MetalArray, index_arr: MetalArray) -> MetalArray:
        """``out[i] = source[index_arr[i]]``; ``index_arr`` is a uint32 MetalArray
        (``array('I')``) of in-range indices (checked: an index out of range is a ValueError)."""
        self._float("gather", source)
        if not isinstance(index_arr, MetalArray):
            raise TypeError("gather expects a MetalArray 'index_arr' for indices.")
        if index_arr.typecode != "I":
            raise TypeError("gather expects index_arr to be an array('I') MetalArray (uint32 indices).")
        if index_arr.length == 0:
            raise ValueError("gather requires index_arr.length > 0.")
        top = int(ingot.max(index_arr.buffer))
        if top >= source.length:
            raise ValueError(f"gather: index {top} out of range for a source of length {source.length}.")
        kernel = self._gather_kernel()
        out = ingot.empty((index_arr.length,), dtype=ingot.float32, device=self.device)
        if kernel is not None:
            kernel(index_arr.length, source.buffer, index_arr.buffer, out)
        else:
            # No user-kernel support in this ingot build: index on the host.
            host = np.asarray(source.buffer)[np.asarray(index_arr.buffer)]
            out = ingot.asarray(host, device=self.device)
        return self._wrap(out)

    def _gather_kernel(self) -> Any:
        if "gather" not in self.kernel_cache:
            compile_ = getattr(ingot, "compile", None) or getattr(ingot._ingot, "compile", None)
            self.kernel_cache["gather"] = (
                compile_(_GATHER_SOURCE, device=self.device)["metalpy_gather"] if compile_ else None
            )
        return self.kernel_cache["gather"]
