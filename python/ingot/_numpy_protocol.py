"""NumPy's dispatch protocols on ``ingot.Array``: ``__array_ufunc__`` (NEP 13) and
``__array_function__`` (NEP 18).

``numpy.exp(x)``, ``numpy.sum(x, axis=0)``, ``numpy.concatenate([x, y])`` on ingot arrays run on
the arrays' device and return ingot arrays. This is what lets libraries written against NumPy's
API, Dask above all (it calls NumPy functions on every chunk), use ingot arrays as they are.

Each NumPy function either has an ingot implementation here (the ones Dask calls on chunks:
elementwise ufuncs and their ``reduce``, reductions, concatenation, stacking, shape functions,
``tensordot``, ``where``, the ``*_like`` creators...) or runs on a host copy: the ingot arguments
become NumPy arrays, NumPy computes, and array results come back as ingot arrays on the
arguments' device. Results are the same either way; only the speed differs. NumPy operands mixed
with ingot arrays are copied to the ingot arrays' device.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable, Dict, Optional

import numpy as np

from . import _ingot

Array = _ingot.Array

# The ingot dtypes that have a NumPy dtype of the same name (bfloat16 has none).
_INGOT_DTYPE_NAMES = frozenset(d.name for d in (
    _ingot.bool, _ingot.int8, _ingot.int16, _ingot.int32, _ingot.int64, _ingot.uint8,
    _ingot.uint16, _ingot.uint32, _ingot.uint64, _ingot.float16, _ingot.float32, _ingot.float64))


def _ns() -> Any:
    import ingot

    return ingot


# ---- moving values between NumPy and ingot -------------------------------------------------------


def _find_device(obj: Any) -> Optional[Any]:
    """The device of the first ingot array in ``obj`` (nested in lists, tuples and dicts)."""
    if isinstance(obj, Array):
        return obj.device
    if isinstance(obj, (list, tuple)):
        for o in obj:
            d = _find_device(o)
            if d is not None:
                return d
    if isinstance(obj, dict):
        return _find_device(list(obj.values()))
    return None


def _to_host(obj: Any) -> Any:
    """``obj`` with every ingot array replaced by a NumPy array of its values."""
    if isinstance(obj, Array):
        return np.asarray(obj)
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(_to_host(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_host(v) for k, v in obj.items()}
    return obj


def _to_device(obj: Any, device: Any) -> Any:
    """``obj`` with every NumPy array of an ingot dtype replaced by an ingot array on
    ``device`` (other values, structured arrays included, are left as they are)."""
    if isinstance(obj, np.ndarray) and obj.dtype.name in _INGOT_DTYPE_NAMES:
        return _ns().asarray(obj, device=device, copy=True)
    if isinstance(obj, (list, tuple)):
        items = [_to_device(o, device) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else type(obj)(items)
    return obj


def _operand(x: Any, device: Any) -> Any:
    """An operand for an ingot function: ingot arrays as they are, NumPy arrays copied to
    ``device``, NumPy scalars as Python scalars."""
    if isinstance(x, np.ndarray):
        return _ns().asarray(x, device=device, copy=True)
    if isinstance(x, np.generic):
        return x.item()
    return x


def _on_host(func: Callable, args: tuple, kwargs: dict) -> Any:
    """``func(*args, **kwargs)`` computed by NumPy on host copies; array results come back to
    the device of the first ingot argument."""
    device = _find_device((args, kwargs))
    out = kwargs.get("out")
    kw = {k: v for k, v in kwargs.items() if k != "out"}
    r = func(*_to_host(args), **_to_host(kw))
    if out is not None:
        return _write_out(out, _to_device(r, device))
    return _to_device(r, device)


def _write_out(out: Any, result: Any) -> Any:
    """Stores ``result`` into the ``out=`` array(s) and returns them, as NumPy does."""
    if isinstance(out, tuple):
        if len(out) == 1:
            return _write_out(out[0], result)
        for o, r in zip(out, result):
            _write_out(o, r)
        return out
    if isinstance(out, np.ndarray):
        out[...] = np.asarray(result)
    else:
        out[...] = result
    return out


# ---- __array_ufunc__ ----------------------------------------------------------------------------

# NumPy ufunc names whose ingot function has another name (the others have the same name).
_UFUNC_NAMES = {
    "absolute": "abs",
    "fabs": "abs",
    "power": "pow",
    "true_divide": "divide",
    "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
    "arccos": "acos",
    "arcsin": "asin",
    "arctan": "atan",
    "arccosh": "acosh",
    "arcsinh": "asinh",
    "arctanh": "atanh",
    "arctan2": "atan2",
    "conjugate": "positive",
}

# ufunc.reduce of these ufuncs is an ingot reduction.
_REDUCTIONS = {
    "add": "sum",
    "multiply": "prod",
    "maximum": "max",
    "minimum": "min",
    "logical_and": "all",
    "logical_or": "any",
}


def _ingot_ufunc(ufunc: np.ufunc) -> Optional[Callable]:
    name = _UFUNC_NAMES.get(ufunc.__name__, ufunc.__name__)
    f = getattr(_ns(), name, None)
    return f if callable(f) and not isinstance(f, type) else None


def array_ufunc(self: Array, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
    """``Array.__array_ufunc__``: ``ufunc(...)`` and ``ufunc.reduce`` of ingot arrays on their
    device, other methods and ufuncs ingot has no function for on host copies."""
    kinds = (Array, np.ndarray, np.generic, int, float, builtins.bool)
    if not builtins.all(isinstance(x, kinds) for x in inputs):
        return NotImplemented
    out = kwargs.pop("out", None)
    if out is not None and not builtins.all(isinstance(o, (Array, np.ndarray)) for o in out):
        return NotImplemented
    device = _find_device((inputs, out))
    foreign = builtins.any(isinstance(x, np.ndarray) and x.dtype.name not in _INGOT_DTYPE_NAMES
                           for x in inputs)
    result = NotImplemented if foreign else _ufunc_on_device(ufunc, method, inputs, dict(kwargs),
                                                                 device)
    if result is NotImplemented:
        f = getattr(ufunc, method)
        host = f(*_to_host(inputs), **_to_host(kwargs))
        result = _to_device(host, device)
    if out is not None:
        return _write_out(out, result)
    return result


def _ufunc_on_device(ufunc: np.ufunc, method: str, inputs: tuple, kwargs: dict, device: Any) -> Any:
    dtype = kwargs.pop("dtype", None)
    if kwargs.pop("casting", "same_kind") != "same_kind" or kwargs.pop("order", "K") != "K":
        return NotImplemented
    kwargs.pop("subok", None)
    if kwargs.get("where", True) is not True:
        return NotImplemented
    kwargs.pop("where", None)
    if method == "__call__" and not kwargs:
        f = _ingot_ufunc(ufunc)
        if f is None:
            return NotImplemented
        ops = [_operand(x, device) for x in inputs]
        if dtype is not None:
            # NumPy's dtype= is the computation's dtype: the inputs are cast to it.
            ops = [_ns().astype(o, dtype) if isinstance(o, Array) else o for o in ops]
        return f(*ops)
    if method == "reduce" and ufunc.__name__ in _REDUCTIONS and len(inputs) == 1:
        x = _operand(inputs[0], device)
        if not isinstance(x, Array) or kwargs.get("initial", None) is not None:
            return NotImplemented
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        kwargs.pop("initial", None)
        if kwargs:
            return NotImplemented
        return _reduce(_REDUCTIONS[ufunc.__name__], x, axis, dtype, keepdims)
    return NotImplemented


# ---- __array_function__ ---------------------------------------------------------------------------

_FUNCTIONS: Dict[Callable, Callable] = {}


def _implements(*names: str) -> Callable[[Callable], Callable]:
    """Registers an ingot implementation of the NumPy functions ``numpy.<name>``."""

    def register(impl: Callable) -> Callable:
        for name in names:
            f = getattr(np, name, None)
            if f is not None:
                _FUNCTIONS[f] = impl
        return impl

    return register


def array_function(self: Array, func: Callable, types: tuple, args: tuple, kwargs: dict) -> Any:
    """``Array.__array_function__``: NumPy functions of ingot arrays (and NumPy arrays mixed
    with them) on the ingot arrays' device."""
    if not builtins.all(issubclass(t, (Array, np.ndarray)) for t in types):
        return NotImplemented
    impl = _FUNCTIONS.get(func)
    if impl is not None:
        r = impl(*args, **kwargs)
        if r is not NotImplemented:
            return r
    return _on_host(func, args, kwargs)


def _reduce(name: str, x: Array, axis: Any, dtype: Any, keepdims: Any, **extra: Any) -> Array:
    """The ingot reduction ``name`` with NumPy's ``dtype=`` (the accumulation and result dtype)."""
    if isinstance(axis, list):
        axis = tuple(axis)
    f = getattr(_ns(), name)
    if dtype is not None and name in ("sum", "prod"):
        return f(x, axis=axis, dtype=dtype, keepdims=builtins.bool(keepdims))
    if dtype is not None and name in ("mean", "var", "std"):
        x = _ns().astype(x, dtype)
    r = f(x, axis=axis, keepdims=builtins.bool(keepdims), **extra)
    if dtype is not None and r.dtype != dtype:
        r = _ns().astype(r, dtype)
    return r


def _finish(r: Any, out: Any) -> Any:
    return _write_out(out, r) if out is not None else r


def _plain(kwargs: dict) -> bool:
    """No ``where=`` mask and no ``initial=`` value (those run on the host)."""
    return kwargs.pop("where", True) is True and kwargs.pop("initial", None) is None and not kwargs


def _with_dtype(name: str) -> Callable:
    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: Any = False,
             **kwargs: Any) -> Any:
        if not isinstance(a, Array) or not _plain(kwargs):
            return NotImplemented
        return _finish(_reduce(name, a, axis, dtype, keepdims), out)

    return impl


def _without_dtype(name: str) -> Callable:
    def impl(a: Any, axis: Any = None, out: Any = None, keepdims: Any = False,
             **kwargs: Any) -> Any:
        if not isinstance(a, Array) or not _plain(kwargs):
            return NotImplemented
        return _finish(_reduce(name, a, axis, None, keepdims), out)

    return impl


def _with_ddof(name: str) -> Callable:
    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, ddof: Any = 0,
             keepdims: Any = False, **kwargs: Any) -> Any:
        correction = kwargs.pop("correction", None)
        if kwargs.pop("mean", None) is not None:
            return NotImplemented
        if not isinstance(a, Array) or not _plain(kwargs):
            return NotImplemented
        c = float(ddof if correction is None else correction)
        return _finish(_reduce(name, a, axis, dtype, keepdims, correction=c), out)

    return impl


def _arg(name: str) -> Callable:
    def impl(a: Any, axis: Any = None, out: Any = None, *, keepdims: Any = False) -> Any:
        if not isinstance(a, Array):
            return NotImplemented
        return _finish(getattr(_ns(), name)(a, axis=axis, keepdims=builtins.bool(keepdims)), out)

    return impl


def _cumulative(name: str) -> Callable:
    def impl(a: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        if not isinstance(a, Array):
            return NotImplemented
        return _finish(getattr(_ns(), name)(a, axis=axis, dtype=dtype), out)

    return impl


for _name in ("sum", "prod", "mean"):
    _implements(_name)(_with_dtype(_name))
for _name, _np_names in (("max", ("max", "amax")), ("min", ("min", "amin")),
                         ("all", ("all",)), ("any", ("any",))):
    _implements(*_np_names)(_without_dtype(_name))
for _name in ("var", "std"):
    _implements(_name)(_with_ddof(_name))
for _name in ("argmax", "argmin"):
    _implements(_name)(_arg(_name))
for _name in ("cumsum", "cumprod"):
    _implements(_name)(_cumulative(_name))


# ---- joining, shapes and indexing ----------------------------------------------------------------


def _arrays(seq: Any) -> Optional[list]:
    """The members of ``seq`` as ingot arrays on the device of its first ingot array."""
    seq = list(seq)
    device = _find_device(seq)
    if device is None:
        return None
    return [x if isinstance(x, Array) else _ns().asarray(x, device=device, copy=True) for x in seq]


def _with_result_dtype(r: Array, dtype: Any) -> Array:
    return r if dtype is None or r.dtype == dtype else _ns().astype(r, dtype)


@_implements("concatenate", "concat")
def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, *, dtype: Any = None,
                 casting: str = "same_kind") -> Any:
    xs = _arrays(arrays)
    if xs is None:
        return NotImplemented
    if axis is None:
        xs = [x.ravel() for x in xs]
        axis = 0
    return _finish(_with_result_dtype(_ns().concat(xs, axis=axis), dtype), out)


@_implements("stack")
def _stack(arrays: Any, axis: int = 0, out: Any = None, *, dtype: Any = None,
           casting: str = "same_kind") -> Any:
    xs = _arrays(arrays)
    if xs is None:
        return NotImplemented
    return _finish(_with_result_dtype(_ns().stack(xs, axis=axis), dtype), out)


@_implements("expand_dims")
def _expand_dims(a: Any, axis: Any) -> Any:
    if not isinstance(a, Array):
        return NotImplemented
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    ndim = a.ndim + len(axes)
    shape = iter(a.shape)
    normalized = {ax % ndim if -ndim <= ax < ndim else ax for ax in axes}
    if len(normalized) != len(axes) or builtins.any(not 0 <= ax < ndim for ax in normalized):
        raise ValueError(f"expand_dims: invalid axis {axis!r} for an array of {a.ndim} dimensions")
    return a.reshape(tuple(1 if i in normalized else next(shape) for i in range(ndim)))


@_implements("squeeze")
def _squeeze(a: Any, axis: Any = None) -> Any:
    return a.squeeze(axis) if isinstance(a, Array) else NotImplemented


@_implements("reshape")
def _reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None,
             copy: Optional[bool] = None) -> Any:
    if not isinstance(a, Array) or order != "C":
        return NotImplemented
    return a.reshape(shape if shape is not None else newshape, copy=copy)


@_implements("ravel")
def _ravel(a: Any, order: str = "C") -> Any:
    return a.ravel() if isinstance(a, Array) and order == "C" else NotImplemented


@_implements("transpose", "permute_dims")
def _transpose(a: Any, axes: Any = None) -> Any:
    if not isinstance(a, Array):
        return NotImplemented
    return a.permute_dims(tuple(range(a.ndim))[::-1] if axes is None else tuple(axes))


@_implements("moveaxis")
def _moveaxis(a: Any, source: Any, destination: Any) -> Any:
    return _ns().moveaxis(a, source, destination) if isinstance(a, Array) else NotImplemented


@_implements("broadcast_to")
def _broadcast_to(array: Any, shape: Any, subok: bool = False) -> Any:
    return array.broadcast_to(shape) if isinstance(array, Array) else NotImplemented


@_implements("where")
def _where(condition: Any, *xy: Any) -> Any:
    if len(xy) != 2:
        return NotImplemented
    device = _find_device((condition, xy))
    c, x, y = (_operand(v, device) for v in (condition, *xy))
    if not isinstance(c, Array):
        c = _ns().asarray(c, device=device)
    if not isinstance(x, Array) and not isinstance(y, Array):
        # `numpy.where(mask, 1, 0)`: two scalars take NumPy's result dtype (int64 for Python
        # ints, the scalars' own dtype for NumPy scalars).
        dt = np.result_type(*xy)
        if dt.name not in _INGOT_DTYPE_NAMES and dt.kind != "c":
            return NotImplemented
        x = _ns().asarray(x, dtype=dt.name, device=device)
        y = _ns().asarray(y, dtype=dt.name, device=device)
    return _ns().where(_ns().astype(c, _ingot.bool, copy=False), x, y)


@_implements("clip")
def _clip(a: Any, a_min: Any = None, a_max: Any = None, out: Any = None, **kwargs: Any) -> Any:
    if not isinstance(a, Array) or not _plain(kwargs):
        return NotImplemented
    lo, hi = (_operand(v, a.device) for v in (a_min, a_max))
    return _finish(_ns().clip(a, lo, hi), out)


@_implements("round", "around")
def _round(a: Any, decimals: int = 0, out: Any = None) -> Any:
    return _finish(_ns().round(a, decimals=decimals), out) if isinstance(a, Array) else NotImplemented


@_implements("tensordot")
def _tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    xs = _arrays((a, b))
    if xs is None:
        return NotImplemented
    if not isinstance(axes, int):
        axes = tuple((ax,) if isinstance(ax, int) else tuple(ax) for ax in axes)
    return _ns().tensordot(xs[0], xs[1], axes=axes)


@_implements("dot")
def _dot(a: Any, b: Any, out: Any = None) -> Any:
    xs = _arrays((a, b))
    if xs is None or xs[0].ndim == 0 or xs[1].ndim == 0 or xs[1].ndim > 2:
        return NotImplemented
    return _finish(_ns().matmul(xs[0], xs[1]), out)


@_implements("take")
def _take(a: Any, indices: Any, axis: Any = None, out: Any = None, mode: str = "raise") -> Any:
    if not isinstance(a, Array) or mode != "raise":
        return NotImplemented
    idx = _operand(indices, a.device)
    if not isinstance(idx, Array):
        return NotImplemented
    return _finish(_ns().take(a, idx, axis=axis), out)


@_implements("copy")
def _copy(a: Any, order: str = "K", subok: bool = False) -> Any:
    return a.copy() if isinstance(a, Array) else NotImplemented


@_implements("shape")
def _shape(a: Any) -> Any:
    return a.shape


@_implements("ndim")
def _ndim(a: Any) -> Any:
    return a.ndim


@_implements("size")
def _size(a: Any, axis: Any = None) -> Any:
    return a.size if axis is None else a.shape[axis]


@_implements("result_type")
def _result_type(*arrays_and_dtypes: Any) -> Any:
    return np.result_type(*(np.dtype(x.dtype) if isinstance(x, Array) else x
                            for x in arrays_and_dtypes))


# ---- creation ------------------------------------------------------------------------------------


def _check_plain_dtype(dtype: Any) -> None:
    """Raises TypeError for dtypes ingot arrays cannot have (structured, object, complex...).

    Callers such as Dask catch the TypeError and use another representation."""
    if dtype is None or isinstance(dtype, _ingot.DType):
        return
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"ingot arrays have no dtype {dtype!r}") from None
    if d.name not in _INGOT_DTYPE_NAMES:
        raise TypeError(f"ingot arrays have no dtype {d} (structured, object and complex dtypes"
                        " are not supported)")


def _like(fill: Optional[str]) -> Callable:
    def impl(prototype: Any, *args: Any, dtype: Any = None, order: str = "K", subok: bool = True,
             shape: Any = None, device: Any = None) -> Any:
        if not isinstance(prototype, Array):
            return NotImplemented
        value = None
        if fill == "full":
            value, args = args[0], args[1:]
        if args:
            dtype = args[0]
        _check_plain_dtype(dtype)
        shape = prototype.shape if shape is None else ((shape,) if isinstance(shape, int) else tuple(shape))
        dtype = prototype.dtype if dtype is None else dtype
        # NumPy's own device= only knows "cpu": the result stays on the prototype's device.
        device = prototype.device if device is None or device == "cpu" else device
        ns = _ns()
        if fill == "full":
            if isinstance(value, np.generic):
                value = value.item()
            if isinstance(value, (np.ndarray, Array)):
                out = ns.empty(shape, dtype=dtype, device=device)
                out[...] = _operand(value, device)
                return out
            return ns.full(shape, value, dtype=dtype, device=device)
        return getattr(ns, fill or "empty")(shape, dtype=dtype, device=device)

    return impl


_implements("empty_like")(_like(None))
_implements("zeros_like")(_like("zeros"))
_implements("ones_like")(_like("ones"))
_implements("full_like")(_like("full"))
