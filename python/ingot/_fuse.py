"""Kernel fusion: ``ingot.fuse`` traces a function over ingot arrays into one generated MSL kernel.

How it works
------------
Calling a fused function with arrays of a new (shapes, dtypes, device) runs the Python function
once on *tracers*: stand-ins for the arrays that record each operation (elementwise functions and
operators of the namespace, ``where``, ``astype``, Python scalars, and one reduction at the end)
in a graph. Each node keeps the computation and result dtypes of the built-in op
(``_ingot._op_dtypes``), and the generated kernel computes each node with the built-in library's
own functors (``op_<name>``, ``bop_<name>``, ``cvt``, the ``red_<name>`` accumulators), so a
fused function gives the results of the same function run op by op.

The graph becomes MSL text for the array's device: on GPUs one thread per element (four per
thread, coalesced), a threadgroup per output (or per part of a long output, combined by a second
small kernel) for reductions; on the CPU one kernel "thread" per contiguous chunk whose inner loop
runs over contiguous pointers (the C++ compiler vectorises it) with chunks spread over all cores.
Broadcast operands are read through their own extents: the dimensions of the problem are
collapsed (adjacent dimensions in which every operand is present or broadcast alike merge into
one) and passed to the kernel as arguments, so the generated source depends on the graph, the
dtypes and the broadcast pattern only (its *shape class*), not on the sizes. The source is
compiled through ``ingot.compile`` (the translator and its memory and disk caches), and each
fused function keeps, per exact argument signature, the compiled kernel and its launch.

Anything the tracer cannot express (data-dependent Python control flow on array values,
indexing, manipulation functions, NumPy calls, a reduction that is not the last operation,
arrays captured from outside the arguments, empty arrays, ...) makes the fused function run the
Python function eagerly, op by op, for those arguments: same results, no fusion.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import math
import os
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _ingot
from ._ingot import Array

__all__ = ["fuse", "Traced", "elementwise_kernel", "reduction_kernel", "ElementwiseKernel",
           "ReductionKernel"]

# ---- dtypes ---------------------------------------------------------------------------------

_MSL = {
    "bool": "bool", "int8": "char", "int16": "short", "int32": "int", "int64": "long",
    "uint8": "uchar", "uint16": "ushort", "uint32": "uint", "uint64": "ulong",
    "float16": "half", "bfloat16": "bfloat", "float32": "float", "float64": "double",
}
_FROM_MSL = {v: k for k, v in _MSL.items()}
_FROM_MSL.update({"float": "float32", "int": "int32", "uint": "uint32"})


def _msl(dtype: Any) -> str:
    return _MSL[dtype.name]


def _is_square(n: "_Node") -> builtins.bool:
    """Whether binary node ``n`` is ``x ** 2`` with a constant 2, on a real dtype."""
    if n.name != "pow" or n.args[1].op != "const":
        return False
    v = n.args[1].extra
    if isinstance(v, builtins.bool) or not isinstance(v, (int, float)) or v != 2:
        return False
    return n.compute.name in ("float16", "bfloat16", "float32", "float64") or n.compute.name.startswith(("int", "uint"))


def _is_float(dtype: Any) -> builtins.bool:
    return dtype.name in ("float16", "bfloat16", "float32", "float64")


_LOCK = threading.Lock()
_DT_CACHE: Dict[Tuple[Any, ...], Any] = {}


def _op_dtypes(kind: str, name: str, a: Any, b: Any = None) -> Tuple[Any, Any]:
    key = (kind, name, a.name, None if b is None else b.name)
    r = _DT_CACHE.get(key)
    if r is None:
        r = _ingot._op_dtypes(kind, name, a, b)
        _DT_CACHE[key] = r
    return r


def _reduce_dtype(name: str, a: Any) -> Any:
    key = ("reduce", name, a.name)
    r = _DT_CACHE.get(key)
    if r is None:
        probe = _ingot.full((1,), 1, dtype=a, device="cpu")
        r = _ingot.reduce(name, probe, None, False, 0.0).dtype
        _DT_CACHE[key] = r
    return r


class _Untraceable(Exception):
    """Raised while tracing when the function does something a fused kernel cannot express."""


# ---- the graph --------------------------------------------------------------------------------


class _Node:
    """One value of the traced computation (``op`` names how it is computed)."""

    __slots__ = ("op", "name", "args", "dtype", "compute", "shape", "extra", "id")

    def __init__(self, op: str, name: str, args: Tuple["_Node", ...], dtype: Any, compute: Any,
                 shape: Tuple[int, ...], extra: Any = None) -> None:
        self.op = op
        self.name = name
        self.args = args
        self.dtype = dtype
        self.compute = compute
        self.shape = shape
        self.extra = extra
        self.id = -1


def _broadcast(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[int, ...]:
    n = builtins.max(len(a), len(b))
    a = (1,) * (n - len(a)) + a
    b = (1,) * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise _Untraceable(f"shapes {a} and {b} do not broadcast")
    return tuple(out)


class _Trace:
    """The state of one tracing run: the graph's inputs and whether the shapes were read."""

    def __init__(self, device: Any) -> None:
        self.device = device
        self.inputs: List[_Node] = []
        self.params: List[_Node] = []
        self.shape_read = False


def _scalar_kind(v: Any) -> Optional[str]:
    if isinstance(v, builtins.bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    return None


class Traced:
    """A stand-in for an ingot array while ``ingot.fuse`` traces a function.

    It supports what a fused kernel can compute: the elementwise functions and operators of the
    namespace, ``where``, ``astype``, Python scalars, and one reduction (``sum``, ``mean``,
    ``var``, ``std``, ``max``, ``min``, ``prod``, ``argmax``, ``argmin``) as the last operation.
    ``shape``, ``dtype``, ``ndim``, ``size`` and ``device`` can be read. Anything else raises
    an internal exception that makes the fused function run eagerly.
    """

    __slots__ = ("_node", "_trace")
    __array_priority__ = 1000

    def __init__(self, node: _Node, trace: _Trace) -> None:
        self._node = node
        self._trace = trace

    # -- properties
    @property
    def dtype(self) -> Any:
        return self._node.dtype

    @property
    def shape(self) -> Tuple[int, ...]:
        self._trace.shape_read = True
        return self._node.shape

    @property
    def ndim(self) -> int:
        return len(self._node.shape)

    @property
    def size(self) -> int:
        self._trace.shape_read = True
        return math.prod(self._node.shape)

    @property
    def device(self) -> Any:
        return self._trace.device

    def __array_namespace__(self, *, api_version: Optional[str] = None) -> Any:
        import ingot

        return ingot

    def __repr__(self) -> str:
        return f"Traced(shape={self._node.shape}, dtype={self._node.dtype})"

    # -- what cannot be traced
    def _stop(self, *_: Any, **__: Any) -> Any:
        raise _Untraceable("the value of a traced array was needed")

    __bool__ = __int__ = __float__ = __index__ = __len__ = __iter__ = _stop
    __getitem__ = __setitem__ = __array__ = __dlpack__ = _stop

    def __hash__(self) -> int:
        return id(self)

    # -- building nodes
    def _check_open(self) -> None:
        if self._node.op == "reduce":
            raise _Untraceable("only one reduction, as the last operation, is fused")

    def _unary(self, name: str) -> "Traced":
        self._check_open()
        n = self._node
        try:
            c, r = _op_dtypes("unary", name, n.dtype)
        except Exception as e:  # the eager op raises the same error
            raise _Untraceable(str(e)) from e
        return Traced(_Node("unary", name, (n,), r, c, n.shape), self._trace)

    def _operand(self, other: Any, like: Any) -> Optional[_Node]:
        if isinstance(other, Traced):
            if other._trace is not self._trace:
                raise _Untraceable("tracers of two fused calls were mixed")
            other._check_open()
            return other._node
        kind = _scalar_kind(other)
        if kind is None:
            return None
        try:
            d = _ingot.scalar_dtype(like, other)
        except Exception as e:
            raise _Untraceable(str(e)) from e
        return _Node("const", kind, (), d, d, (), other)

    def _binary(self, name: str, other: Any, reflected: builtins.bool = False) -> Any:
        self._check_open()
        o = self._operand(other, self._node.dtype)
        if o is None:
            raise _Untraceable(f"{name} with a {type(other).__name__} operand")
        a, b = (o, self._node) if reflected else (self._node, o)
        try:
            c, r = _op_dtypes("binary", name, a.dtype, b.dtype)
        except Exception as e:
            raise _Untraceable(str(e)) from e
        shape = _broadcast(a.shape, b.shape)
        return Traced(_Node("binary", name, (a, b), r, c, shape), self._trace)

    def astype(self, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> "Traced":
        self._check_open()
        if device is not None:
            raise _Untraceable("astype to another device")
        from ._dtypes import as_dtype

        d = as_dtype(dtype)
        n = self._node
        return Traced(_Node("cast", "astype", (n,), d, d, n.shape), self._trace)

    def _reduce(self, name: str, axis: Any, keepdims: builtins.bool, correction: float = 0.0,
                ) -> "Traced":
        self._check_open()
        n = self._node
        nd = len(n.shape)
        if axis is None:
            axes = tuple(range(nd))
        else:
            seq = (axis,) if isinstance(axis, int) else tuple(axis)
            try:
                axes = tuple(sorted({(a + nd) if a < 0 else a for a in seq}))
            except TypeError as e:
                raise _Untraceable("axis") from e
            if any(a < 0 or a >= nd for a in axes) or len(axes) != len(seq):
                raise _Untraceable("axis out of range")
        if name in ("argmax", "argmin") and axis is not None and not isinstance(axis, int):
            raise _Untraceable("argmax over several axes")
        if name in ("var", "std"):
            if correction not in (0.0, 1.0) or not _is_float(n.dtype):
                raise _Untraceable("var/std: correction 0 or 1 of a float array is fused")
            op = f"{name}_c{int(correction)}"
        else:
            op = name
        if builtins.any(n.shape[a] == 0 for a in axes) or not axes:
            raise _Untraceable("empty or no-op reduction")
        try:
            r = _reduce_dtype(name, n.dtype)
        except Exception as e:
            raise _Untraceable(str(e)) from e
        if keepdims:
            shape = tuple(1 if i in axes else s for i, s in enumerate(n.shape))
        else:
            shape = tuple(s for i, s in enumerate(n.shape) if i not in axes)
        return Traced(_Node("reduce", op, (n,), r, n.dtype, shape, (axes, None, None)), self._trace)

    # -- operators
    def __add__(self, o: Any) -> Any: return self._binary("add", o)
    def __radd__(self, o: Any) -> Any: return self._binary("add", o, True)
    def __sub__(self, o: Any) -> Any: return self._binary("subtract", o)
    def __rsub__(self, o: Any) -> Any: return self._binary("subtract", o, True)
    def __mul__(self, o: Any) -> Any: return self._binary("multiply", o)
    def __rmul__(self, o: Any) -> Any: return self._binary("multiply", o, True)
    def __truediv__(self, o: Any) -> Any: return self._binary("divide", o)
    def __rtruediv__(self, o: Any) -> Any: return self._binary("divide", o, True)
    def __floordiv__(self, o: Any) -> Any: return self._binary("floor_divide", o)
    def __rfloordiv__(self, o: Any) -> Any: return self._binary("floor_divide", o, True)
    def __mod__(self, o: Any) -> Any: return self._binary("remainder", o)
    def __rmod__(self, o: Any) -> Any: return self._binary("remainder", o, True)
    def __pow__(self, o: Any) -> Any: return self._binary("pow", o)
    def __rpow__(self, o: Any) -> Any: return self._binary("pow", o, True)
    def __and__(self, o: Any) -> Any: return self._binary("bitwise_and", o)
    def __rand__(self, o: Any) -> Any: return self._binary("bitwise_and", o, True)
    def __or__(self, o: Any) -> Any: return self._binary("bitwise_or", o)
    def __ror__(self, o: Any) -> Any: return self._binary("bitwise_or", o, True)
    def __xor__(self, o: Any) -> Any: return self._binary("bitwise_xor", o)
    def __rxor__(self, o: Any) -> Any: return self._binary("bitwise_xor", o, True)
    def __lshift__(self, o: Any) -> Any: return self._binary("bitwise_left_shift", o)
    def __rlshift__(self, o: Any) -> Any: return self._binary("bitwise_left_shift", o, True)
    def __rshift__(self, o: Any) -> Any: return self._binary("bitwise_right_shift", o)
    def __rrshift__(self, o: Any) -> Any: return self._binary("bitwise_right_shift", o, True)
    def __lt__(self, o: Any) -> Any: return self._binary("less", o)
    def __le__(self, o: Any) -> Any: return self._binary("less_equal", o)
    def __gt__(self, o: Any) -> Any: return self._binary("greater", o)
    def __ge__(self, o: Any) -> Any: return self._binary("greater_equal", o)
    def __eq__(self, o: Any) -> Any: return self._binary("equal", o)  # type: ignore[override]
    def __ne__(self, o: Any) -> Any: return self._binary("not_equal", o)  # type: ignore[override]
    def __neg__(self) -> Any: return self._unary("negative")
    def __pos__(self) -> Any: return self._unary("positive")
    def __abs__(self) -> Any: return self._unary("abs")
    def __invert__(self) -> Any: return self._unary("bitwise_invert")


# Entry points the namespace functions call when given a tracer (python/ingot/_functions.py).


def traced_unary(name: str, x: Any) -> Any:
    """``name(x)`` for a tracer; raises the tracing stop for anything else."""
    if isinstance(x, Traced):
        return x._unary(name)
    raise _Untraceable(f"{name} of a {type(x).__name__}")


def traced_binary(name: str, x1: Any, x2: Any) -> Any:
    """``name(x1, x2)`` where at least one operand is a tracer."""
    if isinstance(x1, Traced):
        return x1._binary(name, x2)
    if isinstance(x2, Traced):
        return x2._binary(name, x1, True)
    raise _Untraceable(name)


def traced_where(condition: Any, x1: Any, x2: Any) -> Any:
    """``where(condition, x1, x2)`` where some argument is a tracer."""
    t = next(a for a in (condition, x1, x2) if isinstance(a, Traced))
    trace = t._trace
    if not isinstance(condition, Traced):
        raise _Untraceable("where with a non-array condition")
    condition._check_open()
    a = t._operand(x1, x2.dtype if isinstance(x2, Traced) else t.dtype)
    b = t._operand(x2, x1.dtype if isinstance(x1, Traced) else t.dtype)
    if a is None or b is None:
        raise _Untraceable("where operands")
    if a.op == "const" and b.op == "const":
        raise _Untraceable("where of two scalars")
    _, r = _op_dtypes("binary", "add", a.dtype, b.dtype)
    shape = _broadcast(condition._node.shape, _broadcast(a.shape, b.shape))
    return Traced(_Node("where", "where", (condition._node, a, b), r, r, shape), trace)


def is_traced(*xs: Any) -> builtins.bool:
    """Whether any of ``xs`` is a tracer."""
    return builtins.any(isinstance(x, Traced) for x in xs)


# ---- literals -----------------------------------------------------------------------------------


def _float_literal(v: float, dtype: Any) -> str:
    import numpy as np

    t = _msl(dtype)
    if dtype.name == "float64":
        x = float(v)
    elif dtype.name == "float16":
        x = float(np.float16(v))
    elif dtype.name == "bfloat16":
        bits = int(np.array(np.float32(v)).view(np.uint32))
        if (bits & 0x7F800000) != 0x7F800000:
            bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
        x = float(np.array(bits, dtype=np.uint32).view(np.float32))
    else:
        x = float(np.float32(v))
    if math.isnan(x):
        return f"{t}(NAN)"
    if math.isinf(x):
        return f"{t}({'-' if x < 0 else ''}INFINITY)"
    suffix = "" if dtype.name == "float64" else "f"
    return f"{t}({x!r}{suffix})"


def _literal(value: Any, dtype: Any) -> str:
    t = _msl(dtype)
    if dtype.name == "bool":
        return "true" if value else "false"
    if _is_float(dtype):
        return _float_literal(float(value), dtype)
    return f"{t}(ulong(0x{int(value) & 0xFFFFFFFFFFFFFFFF:x}ul))"


def _cvt(expr: str, src: Any, dst: Any) -> str:
    if src == dst:
        return expr
    return f"cvt<{_msl(dst)}>({expr})"


_UNARY_PRED = {"isnan", "isinf", "isfinite", "signbit", "logical_not"}
_BINARY_PRED = {"equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                "logical_and", "logical_or", "logical_xor"}


# Branch-free float32 exp and tanh for the CPU's fused loops: the C library's expf/tanhf are
# calls the compiler cannot vectorise; these (Cephes' polynomials, Cody-Waite reduction, results
# within a few ulp, inf/NaN/underflow as the C library) compile to SIMD code inside the loops.
_CPU_MATH = """
inline float fz_exp(float x) {
  const float xc = x > 88.7228394f ? 88.7228394f : (x < -103.972084f ? -103.972084f : x);
  const float n = rint(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  const float z = r * r;
  float y = 1.9875691500e-4f;
  y = y * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * z + r + 1.0f;
  const int ni = int(n);
  const int n1 = ni >> 1;
  const int n2 = ni - n1;
  y = y * as_type<float>(uint(n1 + 127) << 23) * as_type<float>(uint(n2 + 127) << 23);
  y = x > 88.7228394f ? INFINITY : y;
  y = x < -103.972084f ? 0.0f : y;
  return x != x ? x : y;
}
inline float fz_tanh(float x) {
  const float a = fabs(x);
  const float s = x * x;
  float p = -5.70498872745e-3f;
  p = p * s + 2.06390887954e-2f;
  p = p * s - 5.37397155531e-2f;
  p = p * s + 1.33314422036e-1f;
  p = p * s - 3.33332819422e-1f;
  const float small = p * s * x + x;
  const float e = fz_exp(2.0f * (a > 44.0f ? 44.0f : a));
  const float big = 1.0f - 2.0f / (e + 1.0f);
  const float r = a < 0.625f ? small : (x < 0.0f ? -big : big);
  return x != x ? x : r;
}
"""
_CPU_VECTOR_OPS = {"exp", "tanh"}


# ---- code generation ------------------------------------------------------------------------------


class _Problem:
    """The traced graph presented as a kernel: collapsed dimensions, inputs, output."""

    def __init__(self, out: _Node, trace: _Trace, device_kind: str) -> None:
        self.out = out
        self.red = out if out.op == "reduce" else None
        self.root = out.args[0] if self.red is not None else out
        if self.root.op in ("input", "const"):
            if self.red is None:
                raise _Untraceable("the function returns an argument or a scalar")
        self.device_kind = device_kind
        # Topological order of the expression.
        order: List[_Node] = []
        seen: Dict[int, builtins.bool] = {}

        def visit(n: _Node) -> None:
            if id(n) in seen:
                return
            seen[id(n)] = True
            for a in n.args:
                visit(a)
            order.append(n)

        visit(self.root)
        self.order = order
        self.inputs = [n for n in trace.inputs if id(n) in seen]
        shape = self.root.shape if self.root.shape else (1,)
        nd = len(shape)
        axes = set(self.red.extra[0]) if self.red is not None else set()
        if self.red is not None and not self.root.shape:
            axes = {0}
        # Per original dim: (extent, reduced, presence per input); size-1 dims drop out.
        dims = []
        for d in range(nd):
            ext = shape[d]
            red = d in axes
            if ext == 1:
                continue
            pres = []
            for n in self.inputs:
                s = n.shape
                off = nd - len(s)
                pres.append(d >= off and s[d - off] == ext)
            dims.append([ext, red, tuple(pres)])
        if self.red is not None and not builtins.any(d[1] for d in dims):
            dims.append([1, True, tuple(False for _ in self.inputs)])
        if not dims:
            dims.append([1, False, tuple(False for _ in self.inputs)])
        merged: List[List[Any]] = []
        for d in dims:
            if merged and merged[-1][1] == d[1] and merged[-1][2] == d[2]:
                merged[-1][0] *= d[0]
            else:
                merged.append(list(d))
        self.extents = [d[0] for d in merged]
        self.reduced = [d[1] for d in merged]
        self.present = [tuple(d[2][k] for d in merged) for k in range(len(self.inputs))]
        total = math.prod(self.extents)
        self.n = total
        # 32-bit index math where it fits on GPUs; 64-bit on the CPU, where it is free and lets
        # the compiler prove the loops' addresses affine (vectorisation).
        self.index = "uint" if total < 2**31 and device_kind != "cpu" else "ulong"

    # -- the shape class: everything the generated source depends on
    def signature(self) -> str:
        parts = [self.device_kind, self.index, repr(self.reduced), repr(self.present)]
        for n in self.order:
            if n.op == "input":
                parts.append(f"in{self.inputs.index(n)}:{n.dtype.name}")
            elif n.op == "const":
                parts.append(f"c:{n.dtype.name}:{n.extra!r}")
            elif n.op == "custom":
                parts.append(f"custom:{n.name}:{n.dtype.name}:{n.extra[0]}")
            else:
                parts.append(f"{n.op}:{n.name}:{n.dtype.name}:{n.compute.name}")
            parts.append("(" + ",".join(str(self.order.index(a)) for a in n.args) + ")")
        if self.red is not None:
            parts.append(f"red:{self.red.name}:{self.red.dtype.name}:{self.red.extra[1]}")
        return "|".join(parts)

    def stride(self, k: int, d: int) -> str:
        """The stride of input k along collapsed dim d (it is present there)."""
        later = [f"e{j}" for j in range(d + 1, len(self.extents)) if self.present[k][j]]
        return "*".join(f"{self.index}({x})" for x in later) if later else f"{self.index}(1)"

    def offset(self, k: int, dims: Sequence[int]) -> str:
        terms = [f"c{d} * {self.stride(k, d)}" for d in dims if self.present[k][d]]
        return " + ".join(terms) if terms else f"{self.index}(0)"

    def coords(self, flat: str, dims: Sequence[int]) -> List[str]:
        """Statements computing c<d> for `dims` (C order) from the flat index `flat`."""
        I = self.index
        if len(dims) == 1:
            return [f"const {I} c{dims[0]} = {flat};"]
        out = [f"{I} r_{flat} = {flat};"]
        for d in reversed(dims[1:]):
            out.append(f"const {I} c{d} = r_{flat} % e{d}; r_{flat} /= e{d};")
        out.append(f"const {I} c{dims[0]} = r_{flat};")
        return out

    def body(self, loads: Dict[int, str]) -> Tuple[List[str], str]:
        """Statements computing the expression; loads maps input index -> load expression."""
        names: Dict[int, str] = {}
        stmts: List[str] = []
        for j, n in enumerate(self.order):
            v = f"v{j}"
            if n.op == "input":
                k = self.inputs.index(n)
                stmts.append(f"const {_msl(n.dtype)} {v} = {loads[k]};")
            elif n.op == "const":
                names[id(n)] = _literal(n.extra, n.dtype)
                continue
            elif n.op == "unary":
                (a,) = n.args
                x = _cvt(names[id(a)], a.dtype, n.compute)
                ret = "bool" if n.name in _UNARY_PRED else n.compute
                e = f"op_{n.name}::f<{_msl(n.compute)}>({x})"
                if (self.device_kind == "cpu" and n.name in _CPU_VECTOR_OPS
                        and n.compute.name == "float32"):
                    e = f"fz_{n.name}({x})"
                e = e if ret == "bool" else _cvt(e, n.compute, n.dtype)
                stmts.append(f"const {_msl(n.dtype)} {v} = {e};")
            elif n.op == "binary":
                a, b = n.args
                x = _cvt(names[id(a)], a.dtype, n.compute)
                y = _cvt(names[id(b)], b.dtype, n.compute)
                e = f"bop_{n.name}::f<{_msl(n.compute)}>({x}, {y})"
                if _is_square(n):
                    # x ** 2 as x * x (NumPy's fast path too): the same correctly rounded value,
                    # and a general pow per element made fused reductions compute-bound.
                    e = f"bop_multiply::f<{_msl(n.compute)}>({x}, {x})"
                if n.name not in _BINARY_PRED:
                    e = _cvt(e, n.compute, n.dtype)
                stmts.append(f"const {_msl(n.dtype)} {v} = {e};")
            elif n.op == "where":
                c, a, b = n.args
                cc = _cvt(names[id(c)], c.dtype, _ingot.bool)
                x = _cvt(names[id(a)], a.dtype, n.dtype)
                y = _cvt(names[id(b)], b.dtype, n.dtype)
                stmts.append(f"const {_msl(n.dtype)} {v} = {cc} ? {x} : {y};")
            elif n.op == "cast":
                (a,) = n.args
                stmts.append(f"const {_msl(n.dtype)} {v} = {_cvt(names[id(a)], a.dtype, n.dtype)};")
            elif n.op == "custom":
                fn = n.extra[0]
                args = ", ".join(names[id(a)] for a in n.args)
                stmts.append(f"{_msl(n.dtype)} {v}; {fn}({args}, {v});")
            else:
                raise _Untraceable(f"node {n.op}")
            names[id(n)] = v
        return stmts, names[id(self.root)]

    # -- kernels
    def helpers(self) -> str:
        defs: List[str] = []
        if self.device_kind == "cpu" and builtins.any(
                n.op == "unary" and n.name in _CPU_VECTOR_OPS for n in self.order):
            defs.append(_CPU_MATH)
        for n in self.order:
            if n.op == "custom" and n.extra[1] not in defs:
                defs.append(n.extra[1])
        if self.red is not None and self.red.extra[2] is not None:
            defs.append(self.red.extra[2])
        return "\n".join(defs)

    def _params(self, extra: Sequence[str]) -> List[str]:
        ps = []
        for k, n in enumerate(self.inputs):
            ps.append(f"device const {_msl(n.dtype)}* a{k} [[buffer({k})]]")
        b = len(self.inputs)
        ps.append(f"device {_msl(self.out.dtype)}* out [[buffer({b})]]")
        b += 1
        if self.red is not None:
            ps.append(f"device uchar* part [[buffer({b})]]")
            b += 1
        for name in list(extra) + [f"e{d}" for d in range(len(self.extents))]:
            ps.append(f"constant {self.index}& {name} [[buffer({b})]]")
            b += 1
        return ps

    def _loads_flat(self, flat: str) -> Dict[int, str]:
        loads = {}
        for k in range(len(self.inputs)):
            if builtins.all(self.present[k]):
                loads[k] = f"a{k}[{flat}]"
            elif not builtins.any(self.present[k]):
                loads[k] = f"a{k}[0]"
        return loads

    def _elementwise_gpu(self, name: str) -> str:
        I = self.index
        ps = self._params(["n"]) + ["uint lid [[thread_index_in_threadgroup]]",
                                    "uint gid [[threadgroup_position_in_grid]]"]
        loads = self._loads_flat("i")
        lines = [f"[[max_total_threads_per_threadgroup(256)]] kernel void {name}(" +
                 ",\n    ".join(ps) + ") {",
                 f"  const {I} base = {I}(gid) * {I}(1024) + {I}(lid);"]
        lines += self._elementwise_gpu_full_group()
        lines += ["  for (uint q = 0; q < 4u; ++q) {",
                 f"    const {I} i = base + {I}(q) * {I}(256);",
                 "    if (i >= n) return;"]
        if len(loads) < len(self.inputs):
            lines += ["    " + c for c in self.coords("i", range(len(self.extents)))]
            for k in range(len(self.inputs)):
                if k not in loads:
                    loads[k] = f"a{k}[{self.offset(k, range(len(self.extents)))}]"
        stmts, res = self.body(loads)
        lines += ["    " + x for x in stmts]
        lines += [f"    out[i] = {res};", "  }", "}"]
        return "\n".join(lines)

    def _elementwise_gpu_full_group(self) -> List[str]:
        """The path of a thread whose four elements are all in range (every group but the last).

        All loads of the four elements are issued before any arithmetic or store: the loop of
        the general path cannot hoist a later element's load above the previous element's range
        check, so it waits for memory once per element; here it waits once per thread.
        """
        I = self.index
        nd = len(self.extents)
        lines = [f"  if (base + {I}(768) < n) {{"]
        flat = self._loads_flat("i")
        lanes: List[Dict[int, str]] = [{} for _ in range(4)]
        for q in range(4):
            lines.append(f"    const {I} i{q} = base + {I}({q * 256});")
        for k, n in enumerate(self.inputs):
            t = _msl(n.dtype)
            if k in flat and not builtins.any(self.present[k]):
                lines.append(f"    const {t} s{k} = a{k}[0];")
                for q in range(4):
                    lanes[q][k] = f"s{k}"
                continue
            for q in range(4):
                if k in flat:
                    addr = f"i{q}"
                else:
                    rename = functools.partial(re.sub, r"\bc(\d+)\b", rf"c\g<1>_{q}")
                    if k == min(j for j in range(len(self.inputs)) if j not in flat):
                        lines += ["    " + rename(c) for c in self.coords(f"i{q}", range(nd))]
                    addr = rename(self.offset(k, range(nd)))
                lines.append(f"    const {t} l{k}_{q} = a{k}[{addr}];")
                lanes[q][k] = f"l{k}_{q}"
        for q in range(4):
            stmts, res = self.body(lanes[q])
            lines += ["    {"] + ["      " + x for x in stmts]
            lines += [f"      out[i{q}] = {res};", "    }"]
        lines += ["    return;", "  }"]
        return lines

    def _elementwise_cpu(self, name: str) -> str:
        I = self.index
        ps = self._params(["n", "ch"]) + ["uint gid [[threadgroup_position_in_grid]]"]
        lines = [f"kernel void {name}(" + ",\n    ".join(ps) + ") {",
                 f"  const {I} start = {I}(gid) * ch;",
                 "  const I_T end = (n - start < ch) ? n : start + ch;".replace("I_T", I)]
        loads = self._loads_flat("i")
        if len(loads) == len(self.inputs):
            stmts, res = self.body(loads)
            lines += [f"  for ({I} i = start; i < end; ++i) {{"] + ["    " + x for x in stmts]
            lines += [f"    out[i] = {res};", "  }", "}"]
            return "\n".join(lines)
        nd = len(self.extents)
        last = nd - 1
        outer = list(range(last))
        lines += [f"  const {I} nl = e{last};", f"  {I} i = start;", "  while (i < end) {",
                  f"    const {I} r = i / nl;", f"    const {I} j0 = i - r * nl;",
                  f"    const {I} j1 = (nl - j0 < end - i) ? nl : j0 + (end - i);"]
        if outer:
            lines += ["    " + c for c in self.coords("r", outer)]
        row_loads = {}
        for k, n in enumerate(self.inputs):
            lines.append(f"    device const {_msl(n.dtype)}* p{k} = a{k} + ({self.offset(k, outer)});")
            row_loads[k] = f"p{k}[j]" if self.present[k][last] else f"p{k}[0]"
        lines.append(f"    device {_msl(self.out.dtype)}* po = out + r * nl;")
        stmts, res = self.body(row_loads)
        lines += [f"    for ({I} j = j0; j < j1; ++j) {{"] + ["      " + x for x in stmts]
        lines += [f"      po[j] = {res};", "    }", "    i += j1 - j0;", "  }", "}"]
        return "\n".join(lines)

    def _op(self) -> str:
        red = self.red
        assert red is not None
        if red.extra[1] is not None:
            return red.extra[1]
        name = "sum" if red.name == "mean" else red.name
        return f"red_{name}<{_msl(self.root.dtype)}>"

    def _final(self, acc: str) -> str:
        red = self.red
        assert red is not None
        r = red.dtype
        if red.name == "mean":
            w = _ingot.float32 if r.name in ("float16", "bfloat16") else r
            s = f"FzOp::out<{_msl(w)}>({acc})"
            e = f"bop_divide::f<{_msl(w)}>({s}, {_cvt('K', _ingot.uint64, w)})"
            return _cvt(e, w, r)
        return f"FzOp::out<{_msl(r)}>({acc})"

    def _red_loop(self, kvar: str, indent: str, kept: List[int], rdims: List[int]) -> List[str]:
        """Statements accumulating element `kvar` of the row whose input bases are b<k>."""
        lines: List[str] = []
        loads: Dict[int, str] = {}
        if len(rdims) == 1:
            d = rdims[0]
            for k in range(len(self.inputs)):
                if self.present[k][d]:
                    loads[k] = f"a{k}[b{k} + {kvar} * {self.stride(k, d)}]"
                else:
                    loads[k] = f"a{k}[b{k}]"
        else:
            lines += [indent + c for c in self.coords(kvar, rdims)]
            for k in range(len(self.inputs)):
                loads[k] = f"a{k}[b{k} + {self.offset(k, rdims)}]"
        stmts, res = self.body(loads)
        lines += [indent + x for x in stmts]
        lines.append(f"{indent}acc = FzOp::comb(acc, FzOp::load({res}, ulong({kvar})));")
        return lines

    def _red_lanes4(self, kvar: str, d: int, ind: str) -> List[str]:
        """Accumulates elements kvar, kvar + 256, + 512, + 768 of the row (all in range): their
        loads issued before they are combined, in order (argmax keeps the first index)."""
        I = self.index
        lines: List[str] = []
        lanes: List[Dict[int, str]] = [{} for _ in range(4)]
        for k, n in enumerate(self.inputs):
            t = _msl(n.dtype)
            if not self.present[k][d]:
                lines.append(f"{ind}const {t} s{k} = a{k}[b{k}];")
                for q in range(4):
                    lanes[q][k] = f"s{k}"
                continue
            for q in range(4):
                idx = f"({kvar} + {I}({q * 256}))"
                lines.append(f"{ind}const {t} l{k}_{q} = a{k}[b{k} + {idx} * {self.stride(k, d)}];")
                lanes[q][k] = f"l{k}_{q}"
        for q in range(4):
            stmts, res = self.body(lanes[q])
            lines += [ind + "{"] + [ind + "  " + x for x in stmts]
            lines.append(f"{ind}  acc = FzOp::comb(acc, FzOp::load({res}, ulong({kvar} + {I}({q * 256}))));")
            lines.append(ind + "}")
        return lines

    def _bases(self, mvar: str, indent: str, kept: List[int]) -> List[str]:
        lines = []
        if kept:
            lines += [indent + c for c in self.coords(mvar, kept)]
        for k in range(len(self.inputs)):
            lines.append(f"{indent}const {self.index} b{k} = {self.offset(k, kept)};")
        return lines

    def _reduce_gpu(self, name: str) -> str:
        I = self.index
        nd = len(self.extents)
        kept = [d for d in range(nd) if not self.reduced[d]]
        rdims = [d for d in range(nd) if self.reduced[d]]
        out = []
        # one threadgroup per (output, part)
        ps = self._params(["M", "K", "P", "L"]) + ["uint lid [[thread_index_in_threadgroup]]",
                                                   "uint gid [[threadgroup_position_in_grid]]"]
        out += [f"[[max_total_threads_per_threadgroup(256)]] kernel void {name}_groups(" +
                ",\n    ".join(ps) + ") {",
                "  threadgroup FzOp::A sh[256];",
                f"  const {I} m = {I}(gid) / P;", f"  const {I} p = {I}(gid) - m * P;"]
        out += self._bases("m", "  ", kept)
        # Part p of an output takes blocks p, p + P, p + 2P... of 1024 elements (interleaved
        # parts stream through memory together, as the built-in reductions' grid-stride loops).
        out += ["  FzOp::A acc = FzOp::id();",
                f"  for ({I} kb = p * {I}(1024); kb < K; kb += P * {I}(1024)) {{",
                f"    const {I} kk = kb + {I}(lid);"]
        if len(rdims) == 1:
            out += [f"    if (kk + {I}(768) < K) {{"]
            out += self._red_lanes4("kk", rdims[0], "      ")
            out += ["      continue;", "    }"]
        out += ["    for (uint q = 0; q < 4u; ++q) {",
                f"      const {I} kq = kk + {I}(q) * {I}(256);", "      if (kq >= K) break;"]
        out += self._red_loop("kq", "      ", kept, rdims)
        out += ["    }", "  }", "  acc = group_combine<FzOp>(acc, sh, lid, 256u);",
                "  if (lid == 0u) {",
                f"    if (P == {I}(1)) out[m] = {self._final('acc')};",
                "    else ((device FzOp::A*)part)[gid] = acc;", "  }", "}"]
        # one thread per output
        ps = self._params(["M", "K", "P", "L"]) + ["uint tid [[thread_position_in_grid]]"]
        out += [f"kernel void {name}_lines(" + ",\n    ".join(ps) + ") {",
                f"  const {I} m = {I}(tid);", "  if (m >= M) return;"]
        out += self._bases("m", "  ", kept)
        out += ["  FzOp::A acc = FzOp::id();", f"  for ({I} kk = 0; kk < K; ++kk) {{"]
        out += self._red_loop("kk", "    ", kept, rdims)
        out += ["  }", f"  out[m] = {self._final('acc')};", "}"]
        out.append(self._final_kernel_gpu(name))
        return "\n".join(out)

    def _final_kernel_gpu(self, name: str) -> str:
        """Combines the P partial results of each output: one threadgroup per output (a single
        thread per output waited for each of up to 2112 partials in turn: 0.3 ms on an H100)."""
        I = self.index
        return "\n".join([
            f"[[max_total_threads_per_threadgroup(256)]] kernel void {name}_final(",
            "    device const uchar* part [[buffer(0)]],",
            f"    device {_msl(self.out.dtype)}* out [[buffer(1)]], constant {I}& M [[buffer(2)]],",
            f"    constant {I}& P [[buffer(3)]], constant {I}& K [[buffer(4)]],",
            "    uint lid [[thread_index_in_threadgroup]], uint gid [[threadgroup_position_in_grid]]) {",
            "  threadgroup FzOp::A sh[256];",
            f"  const {I} m = {I}(gid);",
            "  device const FzOp::A* pa = (device const FzOp::A*)part;",
            "  FzOp::A acc = FzOp::id();",
            f"  for ({I} p = {I}(lid); p < P; p += {I}(256)) acc = FzOp::comb(acc, pa[m * P + p]);",
            "  acc = group_combine<FzOp>(acc, sh, lid, 256u);",
            f"  if (lid == 0u) out[m] = {self._final('acc')};", "}"])

    def _final_kernel(self, name: str) -> str:
        I = self.index
        return "\n".join([
            f"kernel void {name}_final(device const uchar* part [[buffer(0)]],",
            f"    device {_msl(self.out.dtype)}* out [[buffer(1)]], constant {I}& M [[buffer(2)]],",
            f"    constant {I}& P [[buffer(3)]], constant {I}& K [[buffer(4)]],",
            "    uint tid [[thread_position_in_grid]]) {",
            f"  const {I} m = {I}(tid);", "  if (m >= M) return;",
            "  device const FzOp::A* pa = (device const FzOp::A*)part;",
            "  FzOp::A acc = FzOp::id();",
            f"  for ({I} p = 0; p < P; ++p) acc = FzOp::comb(acc, pa[m * P + p]);",
            f"  out[m] = {self._final('acc')};", "}"])

    def _reduce_cpu(self, name: str) -> str:
        I = self.index
        nd = len(self.extents)
        kept = [d for d in range(nd) if not self.reduced[d]]
        rdims = [d for d in range(nd) if self.reduced[d]]
        ps = self._params(["M", "K", "P", "L", "RB"]) + ["uint gid [[threadgroup_position_in_grid]]"]
        out = [f"kernel void {name}_cpu(" + ",\n    ".join(ps) + ") {",
               f"  const {I} blk = {I}(gid) / P;", f"  const {I} p = {I}(gid) - blk * P;",
               f"  const {I} m0 = blk * RB;", f"  const {I} m1 = (M - m0 < RB) ? M : m0 + RB;",
               f"  const {I} k0 = p * L;", f"  const {I} k1 = (K - k0 < L) ? K : k0 + L;",
               f"  for ({I} m = m0; m < m1; ++m) {{"]
        out += self._bases("m", "    ", kept)
        out += ["    FzOp::A acc = FzOp::id();", f"    for ({I} kk = k0; kk < k1; ++kk) {{"]
        out += self._red_loop("kk", "      ", kept, rdims)
        out += ["    }", f"    if (P == {I}(1)) out[m] = {self._final('acc')};",
                "    else ((device FzOp::A*)part)[m * P + p] = acc;", "  }", "}"]
        out.append(self._final_kernel(name))
        return "\n".join(out)

    def source(self, prelude: str, name: str) -> str:
        parts = [prelude, self.helpers()]
        if self.red is not None:
            parts.append(f"typedef {self._op()} FzOp;")
            if self.device_kind == "cpu":
                parts.append(self._reduce_cpu(name))
            else:
                parts.append(self._reduce_gpu(name))
        elif self.device_kind == "cpu":
            parts.append(self._elementwise_cpu(name))
        else:
            parts.append(self._elementwise_gpu(name))
        return "\n".join(parts) + "\n"


# ---- compiling and launching ------------------------------------------------------------------

_PRELUDES: Dict[str, str] = {}
_LIBS: Dict[Tuple[str, str], Any] = {}
_CORES = os.cpu_count() or 1


# Tests set this to "cuda" to generate the GPU forms of the kernels for the CPU device, whose
# engine runs any MSL kernel: CI then checks the GPU code generation without a GPU.
_FORMS_OVERRIDE: Optional[str] = None


def _device_kind(device: Any) -> str:
    if _FORMS_OVERRIDE is not None:
        return _FORMS_OVERRIDE
    s = str(device)
    return s.split(":")[0]


def _prelude(device: Any) -> str:
    key = str(device)
    p = _PRELUDES.get(key)
    if p is None:
        p = _ingot._kernel_source("functor", device)
        _PRELUDES[key] = p
    return p


def _library(problem: _Problem, device: Any) -> Tuple[Any, str]:
    sig = problem.signature()
    name = "fused_" + hashlib.blake2b(sig.encode(), digest_size=8).hexdigest()
    key = (str(device), sig)
    lib = _LIBS.get(key)
    if lib is None:
        src = problem.source(_prelude(device), name)
        lib = _ingot._compile_generated(src, device=device, file_name=f"ingot/fuse/{name}.metal")
        with _LOCK:
            _LIBS[key] = lib
    return lib, name


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _launcher(problem: _Problem, device: Any, picks: List[int]) -> Callable[[List[Any]], Any]:
    """The function running the compiled kernel(s) on the flattened argument list."""
    lib, name = _library(problem, device)
    cpu = problem.device_kind == "cpu"
    out_shape = problem.out.shape
    out_dtype = problem.out.dtype
    ext = list(problem.extents)
    empty = _ingot.empty
    if problem.red is None:
        n = problem.n
        if cpu:
            ch = builtins.max(4096, _cdiv(_cdiv(n, _CORES * 8), 64) * 64)
            k = lib.function(name)
            pre = [n, ch] + ext
            groups = (_cdiv(n, ch),)
            tg = (1,)
        else:
            k = lib.function(name)
            pre = [n] + ext
            groups = (_cdiv(n, 1024),)
            tg = (256,)

        # The dispatch and the trailing scalars are fixed: a warm call converts only the inputs.
        call = k._prepare(out_shape, out_dtype, *pre, groups=groups, threadgroup=tg)
        if picks == list(range(len(picks))):
            n_in = len(picks)
            run = lambda flat: call(*flat[:n_in])  # noqa: E731
            # The prepared call itself, for Fused's table of warm calls on arrays only.
            run._direct = (call, n_in)  # type: ignore[attr-defined]
            return run
        return lambda flat: call(*[flat[i] for i in picks])
    nd = len(ext)
    M = math.prod(ext[d] for d in range(nd) if not problem.reduced[d])
    K = math.prod(ext[d] for d in range(nd) if problem.reduced[d])
    final = lib.function(f"{name}_final")
    if cpu:
        tasks = _CORES * 4
        if M >= tasks:
            P, RB = 1, _cdiv(M, tasks)
        else:
            RB = 1
            P = builtins.max(1, builtins.min(_cdiv(tasks, M), _cdiv(K, 16384)))
        L = _cdiv(K, P)
        P = _cdiv(K, L)
        k = lib.function(f"{name}_cpu")
        pre = [M, K, P, L, RB] + ext
        groups, tg, grid = (_cdiv(M, RB) * P,), (1,), None
    else:
        inner_kept = not problem.reduced[-1]
        if K <= 64 or (inner_kept and M >= 2048):
            k = lib.function(f"{name}_lines")
            P, L = 1, K
            groups, tg, grid = None, (256,), (M,)
        else:
            k = lib.function(f"{name}_groups")
            P = 1 if M >= 1024 else builtins.max(1, builtins.min(_cdiv(2112, M), _cdiv(K, 4096)))
            L = _cdiv(K, P)
            P = _cdiv(K, L)
            groups, tg, grid = (M * P,), (256,), None
        pre = [M, K, P, L] + ext
    part_bytes = M * P * 32 if P > 1 else 32
    u8 = _ingot.uint8

    def run_red(flat: List[Any]) -> Any:
        out = empty(out_shape, dtype=out_dtype, device=device)
        part = empty((part_bytes,), dtype=u8, device=device)
        arrays = [flat[i] for i in picks]
        if grid is not None:
            k(*arrays, out, part, *pre, grid=grid, threadgroup=tg)
        else:
            k(*arrays, out, part, *pre, groups=groups, threadgroup=tg)
        if P > 1:
            if cpu:
                final(part, out, M, P, K, grid=(M,))
            else:
                final(part, out, M, P, K, groups=(M,), threadgroup=(256,))
        return out

    return run_red


_EAGER = object()


def _flatten(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[List[Any], Optional[tuple]]:
    """The arguments as one list, and the cache key of their signature (None: not fusable)."""
    flat = list(args)
    names = tuple(sorted(kwargs)) if kwargs else ()
    for kname in names:
        flat.append(kwargs[kname])
    key: List[Any] = [names]
    for a in flat:
        if type(a) is Array:
            key.append((a.shape, a.dtype, a.device))
        elif isinstance(a, (builtins.bool, int, float)):
            key.append((type(a), a))
        else:
            try:
                hash(a)
            except TypeError:
                return flat, None
            key.append(("static", type(a), a))
    return flat, tuple(key)


class Fused(_ingot.FastCalls):
    """A function traced into one generated kernel per argument signature (see ``ingot.fuse``).

    Calling it runs the base class's ``__call__`` (Rust): a warm call on arrays only is keyed
    and launched there, without a Python frame; every other call comes to ``_call``.
    """

    def __init__(self, fn: Callable[..., Any], *, strict: builtins.bool = False) -> None:
        self.fn = fn
        self._strict = strict
        self._plans: Dict[tuple, Any] = {}
        functools.update_wrapper(self, fn)

    def _call(self, *args: Any, **kwargs: Any) -> Any:
        flat, key = _flatten(args, kwargs)
        plan = self._plans.get(key) if key is not None else _EAGER
        if plan is None:
            plan = self._build(flat, args, kwargs)
            if len(self._plans) > 512:
                self._plans.clear()
            self._plans[key] = plan  # type: ignore[index]
        if plan is _EAGER:
            if self._strict:
                raise TypeError(f"{self.__name__}: these arguments cannot run as a generated kernel")
            return self.fn(*args, **kwargs)
        direct = getattr(plan, "_direct", None)
        if direct is not None and not kwargs and len(args) == direct[1]:
            self._fast_add(args, direct[0])
        return plan(flat)

    def is_fused(self, *args: Any, **kwargs: Any) -> builtins.bool:
        """Whether a call with these arguments runs as one generated kernel (tracing if needed)."""
        flat, key = _flatten(args, kwargs)
        if key is None:
            return False
        plan = self._plans.get(key)
        if plan is None:
            plan = self._build(flat, args, kwargs)
            self._plans[key] = plan
        return plan is not _EAGER

    def _build(self, flat: List[Any], args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Any:
        arrays = [i for i, a in enumerate(flat) if type(a) is Array]
        if not arrays:
            return _EAGER
        device = flat[arrays[0]].device
        if builtins.any(flat[i].device != device for i in arrays):
            return _EAGER
        if builtins.any(math.prod(flat[i].shape) == 0 for i in arrays):
            return _EAGER
        trace = _Trace(device)
        tflat = list(flat)
        for i in arrays:
            a = flat[i]
            node = _Node("input", "input", (), a.dtype, a.dtype, tuple(a.shape), i)
            trace.inputs.append(node)
            tflat[i] = Traced(node, trace)
        targs = tflat[: len(args)]
        tkwargs = dict(zip(sorted(kwargs), tflat[len(args):]))
        try:
            res = self.fn(*targs, **tkwargs)
            if not isinstance(res, Traced) or res._trace is not trace:
                raise _Untraceable("the function does not return one traced array")
            problem = _Problem(res._node, trace, _device_kind(device))
            picks = [n.extra for n in problem.inputs]
            return _launcher(problem, device, picks)
        except _Untraceable as e:
            if self._strict:
                raise TypeError(f"{self.__name__}: {e}") from None
            return _EAGER
        except Exception:
            if self._strict or os.environ.get("INGOT_FUSE_STRICT"):
                raise
            return _EAGER


def fuse(fn: Optional[Callable[..., Any]] = None) -> Any:
    """Fuses ``fn``, a function of ingot arrays, into one generated kernel per argument signature.

    ``@ingot.fuse`` (or ``ingot.fuse(fn)``) returns a function that computes what ``fn`` computes
    with the same results, in one kernel launch: elementwise functions and operators of the
    namespace with broadcasting and type promotion, ``where``, ``astype``, Python scalars, and
    optionally one reduction as the last operation (``sum``, ``prod``, ``mean``, ``var``,
    ``std`` with correction 0 or 1, ``max``, ``min``, ``argmax``, ``argmin``, over any axes,
    ``keepdims`` included). ``ingot.elementwise_kernel`` and ``ingot.reduction_kernel`` objects
    compose with it.

    The first call with arguments of a new signature (shapes, dtypes, device, the values of
    Python scalars and of any other non-array arguments) traces ``fn`` and generates MSL for the
    device's shape class, compiled through ``ingot.compile`` and cached in memory and on disk like
    any kernel; later calls of that signature launch the cached kernel directly. Python values
    ``fn`` reads from outside its arguments (globals, closures) are captured when it is traced.

    Unsupported constructs fall back to running ``fn`` eagerly, op by op (same results, no
    fusion) for that signature: Python control flow on array values, indexing, manipulation and
    linear algebra functions, arrays not passed as arguments, a reduction followed by more
    operations, several outputs, empty arrays, arrays on different devices.
    ``fused.is_fused(*args)`` tells whether a call runs as one kernel. Set ``INGOT_FUSE_STRICT=1``
    to raise instead of falling back when code generation or compilation fails.
    """
    if fn is None:
        return fuse
    return Fused(fn)


# ---- user elementwise and reduction kernels -----------------------------------------------------


def _parse_params(spec: str, what: str) -> List[Tuple[str, str]]:
    out = []
    for part in spec.split(","):
        words = part.split()
        if not words:
            continue
        if len(words) != 2 or not words[1].isidentifier():
            raise ValueError(f"{what}: expected 'TYPE name' items separated by commas, got {part!r}")
        out.append((words[0], words[1]))
    return out


def _concrete(t: str) -> Any:
    """The dtype a parameter type names, or None for a type placeholder such as ``T``."""
    if t in _MSL:
        return getattr(_ingot, t)
    if t in _FROM_MSL:
        return getattr(_ingot, _FROM_MSL[t])
    if not t.isidentifier():
        raise ValueError(f"{t!r} is neither a dtype nor a type placeholder")
    return None


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=6).hexdigest()


class _UserKernel:
    """What elementwise and reduction kernels share: parameters, type inference, conversion."""

    def __init__(self, in_params: str, out_params: str, name: str) -> None:
        if not name.isidentifier():
            raise ValueError(f"kernel name {name!r} is not an identifier")
        self.name = name
        self.inputs = _parse_params(in_params, name)
        self.outputs = _parse_params(out_params, name)
        if len(self.outputs) != 1:
            raise ValueError(f"{name}: exactly one output parameter is supported, got {out_params!r}")
        names = [n for _, n in self.inputs + self.outputs]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: parameter names repeat: {names}")
        self._fused = Fused(self._traced_call, strict=True)

    def _bind(self, args: Sequence[Any]) -> Tuple[Traced, Dict[str, Any], List[_Node]]:
        if len(args) != len(self.inputs):
            raise TypeError(f"{self.name}() takes {len(self.inputs)} inputs "
                            f"({', '.join(n for _, n in self.inputs)}), got {len(args)}")
        tracers = [a for a in args if isinstance(a, Traced)]
        if not tracers:
            raise TypeError(f"{self.name}(): at least one input must be an array")
        t0 = tracers[0]
        types: Dict[str, Any] = {}
        for (t, _), a in zip(self.inputs, args):
            if _concrete(t) is None and isinstance(a, Traced):
                types[t] = a.dtype if t not in types else _op_dtypes("binary", "add", types[t], a.dtype)[1]
        nodes: List[_Node] = []
        for (t, pname), a in zip(self.inputs, args):
            d = _concrete(t)
            if d is None:
                if t not in types:
                    raise TypeError(f"{self.name}(): the type {t} of `{pname}` is bound to no array")
                d = types[t]
            if isinstance(a, Traced):
                a._check_open()
                n = a._node
                if n.dtype != d:
                    n = _Node("cast", "astype", (n,), d, d, n.shape)
            elif _scalar_kind(a) is not None:
                n = _Node("const", _scalar_kind(a) or "", (), d, d, (), a)
            else:
                raise TypeError(f"{self.name}(): `{pname}` must be an array or a Python scalar")
            nodes.append(n)
        return t0, types, nodes

    def _type(self, t: str, types: Dict[str, Any]) -> Any:
        d = _concrete(t)
        if d is None:
            if t not in types:
                raise TypeError(f"{self.name}(): the output type {t} is bound to no input")
            d = types[t]
        return d

    def _custom(self, t0: Traced, types: Dict[str, Any], nodes: List[_Node], out_t: Any,
                out_name: str, body: str) -> _Node:
        params = [f"const {_msl(n.dtype)} {p}" for n, (_, p) in zip(nodes, self.inputs)]
        params.append(f"thread {_msl(out_t)}& {out_name}")
        typedefs = "".join(f"  typedef {_msl(d)} {t};\n" for t, d in sorted(types.items()))
        text = f"({', '.join(params)}) {{\n{typedefs}  {body}\n}}"
        fn = f"ek_{self.name}_{_digest(text)}"
        definition = f"inline void {fn}{text}"
        shape: Tuple[int, ...] = ()
        for n in nodes:
            shape = _broadcast(shape, n.shape)
        return _Node("custom", self.name, tuple(nodes), out_t, out_t, shape, (fn, definition))

    def _traced_call(self, *args: Any, **kwargs: Any) -> Any:
        return self(*args, **kwargs)


class ElementwiseKernel(_UserKernel):
    """An elementwise kernel from an MSL body (see ``ingot.elementwise_kernel``)."""

    def __init__(self, in_params: str, out_params: str, operation: str,
                 name: str = "elementwise") -> None:
        super().__init__(in_params, out_params, name)
        self.operation = operation

    def __call__(self, *args: Any) -> Any:
        if not is_traced(*args):
            return self._fused(*args)
        t0, types, nodes = self._bind(args)
        t, oname = self.outputs[0]
        out_t = self._type(t, types)
        node = self._custom(t0, types, nodes, out_t, oname, self.operation)
        return Traced(node, t0._trace)


class ReductionKernel(_UserKernel):
    """A reduction kernel from MSL expressions (see ``ingot.reduction_kernel``)."""

    def __init__(self, in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                 post_map_expr: str = "", identity: str = "0", name: str = "reduce",
                 reduce_type: Optional[str] = None) -> None:
        super().__init__(in_params, out_params, name)
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.reduce_type = reduce_type

    def __call__(self, *args: Any, axis: Any = None, keepdims: builtins.bool = False) -> Any:
        if not is_traced(*args):
            return self._fused(*args, axis=axis, keepdims=keepdims)
        t0, types, nodes = self._bind(args)
        t, oname = self.outputs[0]
        out_t = self._type(t, types)
        acc_t = self._type(self.reduce_type, types) if self.reduce_type else out_t
        mapped = self._custom(t0, types, nodes, acc_t, "_m", f"_m = {acc_t and _msl(acc_t)}({self.map_expr});")
        mt = Traced(mapped, t0._trace)
        # The axes as the built-in reductions take them.
        shaped = mt._reduce("sum", axis, keepdims)._node
        typedefs = "".join(f"  typedef {_msl(d)} {tn};\n" for tn, d in sorted(types.items()))
        post = self.post_map_expr.strip() or f"{oname} = cvt<O>(a);"
        text = (f" {{\n{typedefs}  typedef {_msl(acc_t)} A;\n"
                f"  static A id() {{ return A({self.identity}); }}\n"
                "  static A load(A x, ulong) { return x; }\n"
                f"  static A comb(A a, A b) {{ return A({self.reduce_expr}); }}\n"
                f"  template <class O> static O out(A a) {{ O {oname}; {post}; return {oname}; }}\n}};")
        struct = f"rk_{self.name}_{_digest(text)}"
        node = _Node("reduce", "custom", (mapped,), out_t, acc_t, shaped.shape,
                     (shaped.extra[0], struct, f"struct {struct}{text}"))
        return Traced(node, t0._trace)


def elementwise_kernel(in_params: str, out_params: str, operation: str,
                       name: str = "elementwise") -> ElementwiseKernel:
    """An elementwise kernel from an MSL statement, as CuPy's ``ElementwiseKernel``.

    ``in_params`` and ``out_params`` list ``TYPE name`` pairs separated by commas; ``TYPE`` is a
    dtype (``float32``, or the MSL name ``float``) or a placeholder such as ``T``, bound to the
    promoted dtype of the arrays given for it. ``operation`` is MSL that assigns the output from
    the inputs (one element each; placeholders are usable as types)::

        hypot = ingot.elementwise_kernel("T x, T y", "T z", "z = sqrt(x * x + y * y);", "hypot")
        z = hypot(a, b)                  # broadcasts; T = the dtype of a and b

    Inputs are arrays (broadcast together) or Python scalars (converted to the parameter's type);
    the output is a new array of the broadcast shape. One output parameter. Called inside a
    function given to ``ingot.fuse``, the kernel becomes part of the fused kernel. Runs on every
    device through the MSL translator (compiled once per dtypes and shape class, then cached).
    """
    return ElementwiseKernel(in_params, out_params, operation, name)


def reduction_kernel(in_params: str, out_params: str, map_expr: str, reduce_expr: str,
                     post_map_expr: str = "", identity: str = "0", name: str = "reduce",
                     reduce_type: Optional[str] = None) -> ReductionKernel:
    """A reduction kernel from MSL expressions, as CuPy's ``ReductionKernel``.

    ``map_expr`` computes the value of one element from the inputs (``TYPE name`` parameters as
    in ``elementwise_kernel``), ``reduce_expr`` combines two accumulated values ``a`` and ``b``,
    ``post_map_expr`` assigns the output from the result ``a`` (default: a conversion),
    ``identity`` is the accumulator's start value, ``reduce_type`` its type (default: the
    output's)::

        l2 = ingot.reduction_kernel("T x", "T y", "x * x", "a + b", "y = sqrt(a);", "0", "l2")
        l2(v, axis=1, keepdims=False)

    The call takes the inputs and ``axis`` (None: all axes) and ``keepdims``; it composes with
    ``ingot.fuse`` as the final reduction of a fused function.
    """
    return ReductionKernel(in_params, out_params, map_expr, reduce_expr, post_map_expr, identity,
                           name, reduce_type)
