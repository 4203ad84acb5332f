"""Dtype objects, promotion and dtype queries of the array API namespace."""

from __future__ import annotations

from typing import Any, NamedTuple, Union

from . import _ingot
from ._ingot import DType

bool = _ingot.bool
int8 = _ingot.int8
int16 = _ingot.int16
int32 = _ingot.int32
int64 = _ingot.int64
uint8 = _ingot.uint8
uint16 = _ingot.uint16
uint32 = _ingot.uint32
uint64 = _ingot.uint64
float16 = _ingot.float16
bfloat16 = _ingot.bfloat16
float32 = _ingot.float32
float64 = _ingot.float64
complex64 = _ingot.complex64
complex128 = _ingot.complex128

_builtin_bool = type(True)

ALL_DTYPES = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
              float16, bfloat16, float32, float64, complex64, complex128)
SIGNED = (int8, int16, int32, int64)
UNSIGNED = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED + UNSIGNED
FLOATING = (float16, bfloat16, float32, float64)
COMPLEX = (complex64, complex128)
NUMERIC = INTEGER + FLOATING + COMPLEX


def as_dtype(dtype: Any) -> DType:
    """Converts a dtype argument (an ingot dtype, a name, a NumPy dtype, ``float``...) to a DType."""
    return DType(dtype)


class finfo_object(NamedTuple):
    """Machine limits of a floating-point dtype (the array API's ``finfo`` result)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    smallest_subnormal: float
    dtype: DType


class iinfo_object(NamedTuple):
    """Range of an integer dtype (the array API's ``iinfo`` result)."""

    bits: int
    max: int
    min: int
    dtype: DType


def _dtype_of(x: Any) -> DType:
    from ._ingot import Array

    if isinstance(x, Array):
        return x.dtype
    return as_dtype(x)


def finfo(type: Any, /) -> finfo_object:
    """Machine limits of a floating-point dtype (or of an array's dtype); a complex dtype gives
    the limits of its parts (``finfo(complex64).dtype`` is float32, as the standard says)."""
    d = _dtype_of(type)
    bits, eps, mx, mn, normal, sub = d._finfo()
    if d == complex64:
        d = float32
    elif d == complex128:
        d = float64
    return finfo_object(bits, eps, mx, mn, normal, sub, d)


def iinfo(type: Any, /) -> iinfo_object:
    """Range of an integer dtype (or of an array's dtype)."""
    d = _dtype_of(type)
    bits, mn, mx = d._iinfo()
    return iinfo_object(bits, mx, mn, d)


def result_type(*arrays_and_dtypes: Any) -> DType:
    """The dtype that arrays, dtypes and Python scalars promote to (array API rules; Python
    scalars are weak: they take the dtype of the arrays when of a compatible kind)."""
    from ._ingot import Array

    dtypes = []
    scalars = []
    for x in arrays_and_dtypes:
        if isinstance(x, Array):
            dtypes.append(x.dtype)
        elif isinstance(x, (_builtin_bool, int, float, complex)):
            scalars.append(x)
        else:
            dtypes.append(as_dtype(x))
    if not dtypes:
        raise ValueError("result_type needs at least one array or dtype")
    r = dtypes[0]
    for d in dtypes[1:]:
        r = r._promote(d)
    for s in scalars:
        r = _ingot.scalar_dtype(r, s)
    return r


def can_cast(from_: Any, to: Any, /) -> _builtin_bool:
    """Whether ``from_`` (a dtype or array) casts to ``to`` under the promotion rules."""
    f = _dtype_of(from_)
    t = as_dtype(to)
    return f._promote(t) == t


_KINDS = {
    "bool": (bool,),
    "signed integer": SIGNED,
    "unsigned integer": UNSIGNED,
    "integral": INTEGER,
    "real floating": FLOATING,
    "complex floating": COMPLEX,
    "numeric": NUMERIC,
}

KindSpec = Union[DType, str, tuple]


def isdtype(dtype: Any, kind: KindSpec) -> _builtin_bool:
    """Whether ``dtype`` is of ``kind``: a dtype, a kind name (``"integral"``, ``"real floating"``...)
    or a tuple of these."""
    d = as_dtype(dtype)
    if isinstance(kind, tuple):
        return any(isdtype(d, k) for k in kind)
    if isinstance(kind, str):
        if kind not in _KINDS:
            raise ValueError(f"unknown dtype kind {kind!r}")
        return d in _KINDS[kind]
    return d == as_dtype(kind)
