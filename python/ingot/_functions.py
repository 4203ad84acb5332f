"""Elementwise functions, reductions, linear algebra and manipulation of the namespace.

Every function here converts its arguments and calls one native operation; the computation
(with broadcasting and array API promotion) happens in Rust with the GIL released.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Callable, Optional, Sequence, Tuple, Union

from . import _fuse, _ingot
from ._dtypes import as_dtype
from ._dtypes import isdtype as _isdtype
from ._ingot import Array

Axis = Optional[Union[int, Tuple[int, ...]]]
Operand = Union[Array, builtins.bool, int, float, complex]


def _check_array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def _unary(name: str, doc: str) -> Callable[[Array], Array]:
    def f(x: Array, /) -> Array:
        if type(x) is not Array and _fuse.is_traced(x):
            return _fuse.traced_unary(name, x)
        return _ingot.unary(name, _check_array(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + "\n\nElementwise, as NumPy; the result is a new array."
    return f


def _binary(name: str, doc: str) -> Callable[[Operand, Operand], Array]:
    def f(x1: Operand, x2: Operand, /) -> Array:
        if (type(x1) is not Array or type(x2) is not Array) and _fuse.is_traced(x1, x2):
            return _fuse.traced_binary(name, x1, x2)
        return _ingot.binary(name, x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (doc + "\n\nElementwise with broadcasting and array API type promotion; one operand"
                 " may be a Python scalar (weakly typed).")
    return f


abs = _unary("abs", "Absolute value.")
negative = _unary("negative", "Numerical negative.")
positive = _unary("positive", "Numerical positive (a copy).")
sign = _unary("sign", "Sign (-1, 0, 1; NaN for NaN).")
sqrt = _unary("sqrt", "Square root.")
square = _unary("square", "Square.")
exp = _unary("exp", "Exponential.")
expm1 = _unary("expm1", "exp(x) - 1, accurate near zero.")
log = _unary("log", "Natural logarithm.")
log1p = _unary("log1p", "log(1 + x), accurate near zero.")
log2 = _unary("log2", "Base-2 logarithm.")
log10 = _unary("log10", "Base-10 logarithm.")
sin = _unary("sin", "Sine.")
cos = _unary("cos", "Cosine.")
tan = _unary("tan", "Tangent.")
asin = _unary("asin", "Inverse sine.")
acos = _unary("acos", "Inverse cosine.")
atan = _unary("atan", "Inverse tangent.")
sinh = _unary("sinh", "Hyperbolic sine.")
cosh = _unary("cosh", "Hyperbolic cosine.")
tanh = _unary("tanh", "Hyperbolic tangent.")
asinh = _unary("asinh", "Inverse hyperbolic sine.")
acosh = _unary("acosh", "Inverse hyperbolic cosine.")
atanh = _unary("atanh", "Inverse hyperbolic tangent.")
floor = _unary("floor", "Round toward negative infinity.")
ceil = _unary("ceil", "Round toward positive infinity.")
trunc = _unary("trunc", "Round toward zero.")
logical_not = _unary("logical_not", "Logical NOT (bool result).")
bitwise_invert = _unary("bitwise_invert", "Bitwise NOT (bool and integers).")
isnan = _unary("isnan", "True where NaN.")
isinf = _unary("isinf", "True where infinite.")
isfinite = _unary("isfinite", "True where finite.")
reciprocal = _unary("reciprocal", "``1 / x`` (integers give a float).")
signbit = _unary("signbit", "True where the sign bit is set (``-0.0`` and negative NaNs included).")


def _complex_part(name: str, doc: str) -> Callable[[Array], Array]:
    def f(x: Array, /) -> Array:
        return _ingot.complex_part(name, _check_array(x, name))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc + "\n\nA new array (real inputs give a copy of themselves, or zeros for ``imag``)."
    return f


real = _complex_part("real", "The real part (float32 for complex64, float64 for complex128).")
imag = _complex_part("imag", "The imaginary part (float32 for complex64, float64 for complex128).")
conj = _complex_part("conj", "The complex conjugate.")


def round(x: Array, /, decimals: int = 0) -> Array:
    """Round half to even, as NumPy (``decimals`` must be 0)."""
    if decimals != 0:
        raise NotImplementedError("round: only decimals=0 is supported")
    if type(x) is not Array and _fuse.is_traced(x):
        return _fuse.traced_unary("round", x)
    return _ingot.unary("round", _check_array(x, "round"))


add = _binary("add", "Sum.")
subtract = _binary("subtract", "Difference.")
multiply = _binary("multiply", "Product.")
divide = _binary("divide", "True division (integers give float64).")
floor_divide = _binary("floor_divide", "Floor division (Python's ``//``).")
remainder = _binary("remainder", "Remainder with the sign of the divisor (Python's ``%``).")
pow = _binary("pow", "Power.")
maximum = _binary("maximum", "Elementwise maximum (NaN propagates).")
minimum = _binary("minimum", "Elementwise minimum (NaN propagates).")
atan2 = _binary("atan2", "Inverse tangent of x1 / x2 with the quadrant.")
bitwise_and = _binary("bitwise_and", "Bitwise AND.")
bitwise_or = _binary("bitwise_or", "Bitwise OR.")
bitwise_xor = _binary("bitwise_xor", "Bitwise XOR.")
bitwise_left_shift = _binary("bitwise_left_shift", "Left shift.")
bitwise_right_shift = _binary("bitwise_right_shift", "Right shift (arithmetic for signed integers).")
logical_and = _binary("logical_and", "Logical AND (bool result).")
logical_or = _binary("logical_or", "Logical OR (bool result).")
logical_xor = _binary("logical_xor", "Logical XOR (bool result).")
equal = _binary("equal", "x1 == x2.")
not_equal = _binary("not_equal", "x1 != x2.")
less = _binary("less", "x1 < x2.")
less_equal = _binary("less_equal", "x1 <= x2.")
greater = _binary("greater", "x1 > x2.")
greater_equal = _binary("greater_equal", "x1 >= x2.")
copysign = _binary("copysign", "The magnitude of ``x1`` with the sign of ``x2``.")
hypot = _binary("hypot", "``sqrt(x1**2 + x2**2)`` without undue overflow or underflow.")
logaddexp = _binary("logaddexp", "``log(exp(x1) + exp(x2))`` without undue overflow.")
nextafter = _binary("nextafter", "The next representable value after ``x1`` toward ``x2`` (in the dtype).")

# NumPy spellings.
absolute = abs
power = pow
arcsin, arccos, arctan, arctan2 = asin, acos, atan, atan2
arcsinh, arccosh, arctanh = asinh, acosh, atanh
bitwise_not = bitwise_invert
invert = bitwise_invert
left_shift, right_shift = bitwise_left_shift, bitwise_right_shift
true_divide = divide
mod = remainder
conjugate = conj


def where(condition: Array, x1: Operand, x2: Operand, /) -> Array:
    """``x1`` where ``condition`` is true, else ``x2`` (broadcast together; promoted dtype)."""
    if type(condition) is not Array and _fuse.is_traced(condition, x1, x2):
        return _fuse.traced_where(condition, x1, x2)
    _check_array(condition, "where")
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        # Two scalars (beyond the standard, which wants one array; NumPy allows it): the
        # default dtype of the higher kind, on the condition's device.
        x1 = _scalar_operand(x1, (x1, x2), condition.device)
    return _ingot.where_(condition, x1, x2)


def _scalar_operand(value: Any, scalars: tuple, device: Any) -> Array:
    """``value`` as a 0-d array of the default dtype of the highest kind among ``scalars``."""
    from ._info import __array_namespace_info__

    kinds = ["bool", "integral", "real floating", "complex floating"]
    rank = 0
    for v in scalars:
        if not isinstance(v, (builtins.bool, int, float, complex)):
            raise TypeError(f"where: expected arrays or Python scalars, got {type(v).__name__}")
        rank = builtins.max(rank, 0 if isinstance(v, builtins.bool) else
                            1 if isinstance(v, int) else 2 if isinstance(v, float) else 3)
    dtype = _ingot.bool if rank == 0 else \
        __array_namespace_info__().default_dtypes(device=device)[kinds[rank]]
    from ._creation import asarray

    return asarray(value, dtype=dtype, device=device)


def clip(x: Array, /, min: Optional[Operand] = None, max: Optional[Operand] = None) -> Array:
    """Clamps ``x`` to ``[min, max]`` (either may be None); the result keeps ``x``'s dtype.

    Python integer bounds of an integer array follow the values, not the dtype's wrap-around:
    a bound beyond the dtype's range clamps nothing on its side (``clip(uint8, -3, 300)`` is
    the array itself, as NumPy's), and one beyond the other side clamps to the dtype's limit.

    >>> import ingot
    >>> ingot.clip(ingot.asarray([1, 5, 9], dtype=ingot.uint8), -3, 7).tolist()
    [1, 5, 7]
    """
    _check_array(x, "clip")
    if _isdtype(x.dtype, "integral"):
        from ._dtypes import iinfo

        info = iinfo(x.dtype)
        if isinstance(min, int) and not isinstance(min, builtins.bool):
            min = None if min <= info.min else builtins.min(min, info.max)
        if isinstance(max, int) and not isinstance(max, builtins.bool):
            max = None if max >= info.max else builtins.max(max, info.min)
    return _ingot.clip(x, min, max)


# ---- reductions -----------------------------------------------------------------------------


def _reduce(name: str, x: Array, axis: Axis, keepdims: builtins.bool, correction: float = 0.0) -> Array:
    if type(x) is not Array and _fuse.is_traced(x):
        return x._reduce(name, axis, builtins.bool(keepdims), float(correction))  # type: ignore[attr-defined]
    return _ingot.reduce(name, _check_array(x, name), axis, builtins.bool(keepdims), float(correction))


def _with_dtype(name: str, x: Array, axis: Axis, dtype: Any, keepdims: builtins.bool) -> Array:
    if dtype is None:
        return _reduce(name, x, axis, keepdims)
    d = as_dtype(dtype)
    r = _reduce(name, _check_array(x, name).astype(d, copy=False), axis, keepdims)
    return r.astype(d, copy=False)


def sum(x: Array, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Array:
    """Sum over ``axis`` (all axes when None). Integers sum in int64/uint64, as NumPy."""
    return _with_dtype("sum", x, axis, dtype, keepdims)


def prod(x: Array, /, *, axis: Axis = None, dtype: Any = None, keepdims: builtins.bool = False) -> Array:
    """Product over ``axis`` (all axes when None). Integers multiply in int64/uint64."""
    return _with_dtype("prod", x, axis, dtype, keepdims)


def mean(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """Arithmetic mean over ``axis`` (integers give float64)."""
    return _reduce("mean", x, axis, keepdims)


def _correction(correction: float, ddof: Optional[float]) -> float:
    if ddof is not None:
        if correction != 0.0:
            raise ValueError("give either correction or ddof, not both")
        return float(ddof)
    return float(correction)


def var(
    x: Array,
    /,
    *,
    axis: Axis = None,
    correction: float = 0.0,
    keepdims: builtins.bool = False,
    ddof: Optional[float] = None,
) -> Array:
    """Variance over ``axis`` with ``correction`` (NumPy's ``ddof``) degrees of freedom removed."""
    return _reduce("var", x, axis, keepdims, _correction(correction, ddof))


def std(
    x: Array,
    /,
    *,
    axis: Axis = None,
    correction: float = 0.0,
    keepdims: builtins.bool = False,
    ddof: Optional[float] = None,
) -> Array:
    """Standard deviation over ``axis`` with ``correction`` degrees of freedom removed."""
    return _reduce("std", x, axis, keepdims, _correction(correction, ddof))


def min(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """Minimum over ``axis`` (NaN propagates; empty reductions raise ValueError)."""
    return _reduce("min", x, axis, keepdims)


def max(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """Maximum over ``axis`` (NaN propagates; empty reductions raise ValueError)."""
    return _reduce("max", x, axis, keepdims)


def argmin(x: Array, /, *, axis: Optional[int] = None, keepdims: builtins.bool = False) -> Array:
    """Index of the first minimum along ``axis`` (of the flattened array when None); int64."""
    if axis is not None and not isinstance(axis, int):
        raise TypeError("argmin: axis must be an integer or None")
    return _reduce("argmin", x, axis, keepdims)


def argmax(x: Array, /, *, axis: Optional[int] = None, keepdims: builtins.bool = False) -> Array:
    """Index of the first maximum along ``axis`` (of the flattened array when None); int64."""
    if axis is not None and not isinstance(axis, int):
        raise TypeError("argmax: axis must be an integer or None")
    return _reduce("argmax", x, axis, keepdims)


def all(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """True where every element along ``axis`` is nonzero."""
    return _reduce("all", x, axis, keepdims)


def any(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """True where some element along ``axis`` is nonzero."""
    return _reduce("any", x, axis, keepdims)


def cumsum(x: Array, /, axis: Optional[int] = None, dtype: Any = None) -> Array:
    """NumPy's ``cumsum``: cumulative sum along ``axis`` (of the flattened array when None)."""
    return _ingot.cumsum(_check_array(x, "cumsum"), axis, None if dtype is None else as_dtype(dtype))


def cumprod(x: Array, /, axis: Optional[int] = None, dtype: Any = None) -> Array:
    """NumPy's ``cumprod``: cumulative product along ``axis`` (of the flattened array when None)."""
    return _ingot.cumulative("cumprod", _check_array(x, "cumprod"), axis,
                             None if dtype is None else as_dtype(dtype))


def _cumulative(name: str, identity: int, x: Array, axis: Optional[int], dtype: Any,
                include_initial: builtins.bool) -> Array:
    what = "cumulative_sum" if name == "cumsum" else "cumulative_prod"
    _check_array(x, what)
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{what}: axis is required for arrays that are not 1-D")
        axis = 0
    if x.ndim == 0:
        raise ValueError(f"{what}: zero-dimensional arrays have no axis to accumulate along")
    r = _ingot.cumulative(name, x, axis, None if dtype is None else as_dtype(dtype))
    if not include_initial:
        return r
    ax = axis % x.ndim
    shape = list(r.shape)
    shape[ax] += 1
    out = _ingot.full(tuple(shape), identity, r.dtype, r.device)
    key = (slice(None),) * ax + (slice(1, None),)
    out[key] = r
    return out


def cumulative_sum(
    x: Array,
    /,
    *,
    axis: Optional[int] = None,
    dtype: Any = None,
    include_initial: builtins.bool = False,
) -> Array:
    """The array API's cumulative sum along ``axis`` (required unless ``x`` is 1-D);
    ``include_initial`` prepends a zero. Integers accumulate in int64/uint64 unless ``dtype``
    is given.

    >>> import ingot
    >>> ingot.cumulative_sum(ingot.asarray([1, 2, 3]), include_initial=True)
    Array([0, 1, 3, 6], dtype=int64)
    """
    return _cumulative("cumsum", 0, x, axis, dtype, include_initial)


def cumulative_prod(
    x: Array,
    /,
    *,
    axis: Optional[int] = None,
    dtype: Any = None,
    include_initial: builtins.bool = False,
) -> Array:
    """The array API's cumulative product along ``axis`` (required unless ``x`` is 1-D);
    ``include_initial`` prepends a one. Integers accumulate in int64/uint64 unless ``dtype``
    is given.

    >>> import ingot
    >>> ingot.cumulative_prod(ingot.asarray([1.0, 2.0, 3.0]))
    Array([1., 2., 6.], dtype=float64)
    """
    return _cumulative("cumprod", 1, x, axis, dtype, include_initial)


def count_nonzero(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """The number of nonzero elements along ``axis`` (all axes when None) as int64; NaN counts
    as nonzero.

    >>> import ingot
    >>> ingot.count_nonzero(ingot.asarray([[0, 1, 2], [3, 0, 0]]), axis=1)
    Array([2, 1], dtype=int64)
    """
    return _reduce("count_nonzero", x, axis, keepdims)


# ---- linear algebra and manipulation --------------------------------------------------------


def matmul(x1: Array, x2: Array, /) -> Array:
    """Matrix product (1-D operands as vectors, batch axes broadcast)."""
    return _ingot.matmul(_check_array(x1, "matmul"), _check_array(x2, "matmul"))


def matrix_transpose(x: Array, /) -> Array:
    """Swaps the last two axes (a view)."""
    return _check_array(x, "matrix_transpose").mT


def vecdot(x1: Array, x2: Array, /, *, axis: int = -1) -> Array:
    """Dot product of vectors along ``axis`` (broadcasting the other axes); the result has the
    promoted dtype of ``x1`` and ``x2``. ``axis`` counts from the end of the broadcast shape
    and must have the same length in both arrays.

    >>> import ingot
    >>> ingot.vecdot(ingot.asarray([[1, 2], [3, 4]]), ingot.asarray([1, 1]))
    Array([3, 7], dtype=int64)
    """
    return _ingot.vecdot(_check_array(x1, "vecdot"), _check_array(x2, "vecdot"), axis)


def tensordot(x1: Array, x2: Array, /, *, axes: Union[int, Tuple[Sequence[int], Sequence[int]]] = 2) -> Array:
    """Contraction over ``axes``: an integer ``n`` (the last ``n`` axes of ``x1`` with the first
    ``n`` of ``x2``) or two sequences of axes, paired in order. The result has the free axes of
    ``x1`` then those of ``x2``, and the promoted dtype.

    >>> import ingot
    >>> a = ingot.reshape(ingot.arange(6), (2, 3))
    >>> ingot.tensordot(a, a, axes=([1], [1]))
    Array([[ 5, 14],
           [14, 50]], dtype=int64)
    """
    if not isinstance(axes, int):
        try:
            first, second = axes
        except (TypeError, ValueError):
            raise TypeError("tensordot: axes must be an integer or a pair of axis sequences") from None
        axes = ([first] if isinstance(first, int) else list(first),
                [second] if isinstance(second, int) else list(second))
    return _ingot.tensordot(_check_array(x1, "tensordot"), _check_array(x2, "tensordot"), axes)


def permute_dims(x: Array, /, axes: Sequence[int]) -> Array:
    """Reorders the axes (a view)."""
    return _check_array(x, "permute_dims").permute_dims(list(axes))


def transpose(x: Array, /, axes: Optional[Sequence[int]] = None) -> Array:
    """NumPy's ``transpose``: reverses the axes, or permutes them by ``axes``."""
    return x.T if axes is None else permute_dims(x, axes)


def reshape(x: Array, /, shape: Sequence[int], *, copy: Optional[builtins.bool] = None) -> Array:
    """The same elements with a new shape (a view when the strides allow)."""
    return _check_array(x, "reshape").reshape(shape, copy=copy)


def astype(x: Array, dtype: Any, /, *, copy: builtins.bool = True, device: Any = None) -> Array:
    """``x`` converted to ``dtype`` with NumPy's conversion results (a copy unless ``copy=False``
    and nothing changes)."""
    if type(x) is not Array and _fuse.is_traced(x):
        return x.astype(dtype, copy=copy, device=device)  # type: ignore[attr-defined]
    _check_array(x, "astype")
    if device is not None:
        x = x.to_device(device)
    return x.astype(dtype, copy=copy)


def broadcast_to(x: Array, /, shape: Sequence[int]) -> Array:
    """``x`` broadcast to ``shape``: a read-only view, as NumPy's (writing raises ``ValueError``;
    copy it to write)."""
    return _check_array(x, "broadcast_to").broadcast_to(tuple(shape))


def broadcast_arrays(*arrays: Array) -> Tuple[Array, ...]:
    """The arrays broadcast against each other, as a tuple (2025.12): views, read-only where
    broadcasting repeats elements (an array that already has the shape comes back as a plain,
    writable view)."""
    shape = broadcast_shapes(*(_check_array(a, "broadcast_arrays").shape for a in arrays))
    return tuple(a[...] if a.shape == shape else a.broadcast_to(shape) for a in arrays)


def broadcast_shapes(*shapes: Sequence[int]) -> Tuple[int, ...]:
    """The shape that arrays of ``shapes`` broadcast to (``()`` for no shapes); ``ValueError``
    when they do not broadcast.

    >>> import ingot
    >>> ingot.broadcast_shapes((3, 1), (4,), (1, 1, 1))
    (1, 3, 4)
    """
    out: tuple = ()
    for i, s in enumerate(shapes):
        try:
            s = tuple(operator.index(d) for d in s)
        except TypeError:
            raise TypeError(f"broadcast_shapes: shape {i} is not a sequence of integers") from None
        out = _broadcast_shapes(out, s)
    return out


def _broadcast_shapes(a: tuple, b: tuple) -> tuple:
    n = builtins.max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for p, q in zip(a, b):
        if p != q and p != 1 and q != 1:
            raise ValueError(
                f"shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                f"between {a} and {b}")
        out.append(q if p == 1 else p)
    return tuple(out)


def expand_dims(x: Array, /, axis: Union[int, Tuple[int, ...]] = 0) -> Array:
    """Inserts axes of length 1 (a view). ``axis`` is a position, or a tuple of positions in the
    result (2025.12), each in ``[-M, M)`` for ``M = x.ndim + len(axis)`` and all distinct.

    >>> import ingot
    >>> ingot.expand_dims(ingot.asarray([1, 2]), 1).shape
    (2, 1)
    >>> ingot.expand_dims(ingot.zeros((3, 4)), (0, -1)).shape
    (1, 3, 4, 1)
    """
    _check_array(x, "expand_dims")
    if not isinstance(axis, (tuple, list)):
        return x.expand_dims(operator.index(axis))
    m = x.ndim + len(axis)
    positions = []
    for a in axis:
        a = operator.index(a)
        if not -m <= a < m:
            raise IndexError(f"axis {a} is out of bounds for array of dimension {m}")
        positions.append(a % m)
    if len(set(positions)) != len(positions):
        raise ValueError(f"expand_dims: repeated axis in {tuple(axis)}")
    out = x
    for p in sorted(positions):
        out = out.expand_dims(p)
    return out


def squeeze(x: Array, /, axis: Axis = None) -> Array:
    """Removes the length-1 axes ``axis`` (all of them when None) (a view)."""
    return _check_array(x, "squeeze").squeeze(axis)


def flip(x: Array, /, *, axis: Axis = None) -> Array:
    """Reverses the order of elements along ``axis`` (all axes when None) (a view)."""
    _check_array(x, "flip")
    axes = range(x.ndim) if axis is None else ((axis,) if isinstance(axis, int) else axis)
    key = [slice(None)] * x.ndim
    for a in axes:
        if not -x.ndim <= a < x.ndim:
            raise IndexError(f"axis {a} is out of bounds for array of dimension {x.ndim}")
        key[a % x.ndim] = slice(None, None, -1)
    return x[tuple(key)]


def concat(arrays: Sequence[Array], /, *, axis: Optional[int] = 0) -> Array:
    """Joins arrays along an existing axis (flattened first when ``axis`` is None)."""
    arrays = [_check_array(a, "concat") for a in arrays]
    if not arrays:
        raise ValueError("concat needs at least one array")
    if axis is None:
        arrays = [a.reshape(-1) for a in arrays]
        axis = 0
    first = arrays[0]
    nd = first.ndim
    if nd == 0:
        raise ValueError("concat: zero-dimensional arrays cannot be concatenated")
    if not -nd <= axis < nd:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {nd}")
    ax = axis % nd
    for a in arrays[1:]:
        if a.ndim != nd or builtins.any(a.shape[i] != first.shape[i] for i in range(nd) if i != ax):
            raise ValueError(f"concat: shapes {first.shape} and {a.shape} differ off the axis {ax}")
        if a.device != first.device:
            raise _ingot.DeviceMismatchError(f"concat: arrays on {first.device} and {a.device}")
    dtype = arrays[0].dtype
    for a in arrays[1:]:
        dtype = dtype._promote(a.dtype)
    shape = list(first.shape)
    shape[ax] = builtins.sum(a.shape[ax] for a in arrays)
    out = _ingot.empty(tuple(shape), dtype, first.device)
    start = 0
    for a in arrays:
        n = a.shape[ax]
        out[(slice(None),) * ax + (slice(start, start + n),)] = a
        start += n
    return out


def stack(arrays: Sequence[Array], /, *, axis: int = 0) -> Array:
    """Joins arrays of the same shape along a new axis."""
    arrays = [_check_array(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("stack needs at least one array")
    nd = arrays[0].ndim + 1
    if not -nd <= axis < nd:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {nd}")
    for a in arrays[1:]:
        if a.shape != arrays[0].shape:
            raise ValueError(f"stack: shapes {arrays[0].shape} and {a.shape} differ")
    return concat([a.expand_dims(axis % nd) for a in arrays], axis=axis % nd)


__all__ = [
    "abs",
    "absolute",
    "acos",
    "acosh",
    "add",
    "all",
    "any",
    "arccos",
    "arccosh",
    "arcsin",
    "arcsinh",
    "arctan",
    "arctan2",
    "arctanh",
    "argmax",
    "argmin",
    "asin",
    "asinh",
    "astype",
    "atan",
    "atan2",
    "atanh",
    "bitwise_and",
    "bitwise_invert",
    "bitwise_left_shift",
    "bitwise_not",
    "bitwise_or",
    "bitwise_right_shift",
    "bitwise_xor",
    "broadcast_arrays",
    "broadcast_shapes",
    "broadcast_to",
    "ceil",
    "clip",
    "concat",
    "conj",
    "conjugate",
    "copysign",
    "cos",
    "cosh",
    "count_nonzero",
    "cumprod",
    "cumsum",
    "cumulative_prod",
    "cumulative_sum",
    "divide",
    "equal",
    "exp",
    "expand_dims",
    "expm1",
    "flip",
    "floor",
    "floor_divide",
    "greater",
    "greater_equal",
    "hypot",
    "imag",
    "invert",
    "isfinite",
    "isinf",
    "isnan",
    "left_shift",
    "less",
    "less_equal",
    "log",
    "log10",
    "log1p",
    "log2",
    "logaddexp",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "matrix_transpose",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "mod",
    "multiply",
    "negative",
    "nextafter",
    "not_equal",
    "permute_dims",
    "positive",
    "pow",
    "power",
    "prod",
    "real",
    "reciprocal",
    "remainder",
    "reshape",
    "right_shift",
    "round",
    "sign",
    "signbit",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "squeeze",
    "stack",
    "std",
    "subtract",
    "sum",
    "tan",
    "tanh",
    "tensordot",
    "transpose",
    "true_divide",
    "trunc",
    "var",
    "vecdot",
    "where",
]
