"""Set functions: ``unique_all``, ``unique_counts``, ``unique_inverse``, ``unique_values`` and
``isin``.

``unique_*`` sort the flattened array (a radix sort), mark where each distinct value starts and
compact those positions; the number of distinct values is read back from the device (one
number). Every NaN is a distinct value (NaNs compare unequal) and ``-0.0`` equals ``+0.0``; the
values come out sorted (complex numbers by real part, then imaginary part, as NumPy's).
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Union

from . import _ingot
from ._ingot import Array
from ._sorting import _operand_like


def _check_array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def _unique(x: Array, name: str, index: builtins.bool = True, inverse: builtins.bool = True,
            counts: builtins.bool = True) -> tuple:
    """``(values, indices, inverse, counts)`` of ``x`` (unrequested parts None)."""
    _check_array(x, name)
    # Complex values in NumPy's order ([R + Rj, R + nanj, nan + Rj, nan + nanj]) on every device.
    return _ingot.unique(x, index, inverse, counts)


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result."""

    values: Array
    indices: Array
    inverse_indices: Array
    counts: Array


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result."""

    values: Array
    counts: Array


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result."""

    values: Array
    inverse_indices: Array


def unique_all(x: Array, /) -> UniqueAllResult:
    """The distinct values of ``x`` (sorted), the index of each one's first occurrence in the
    flattened ``x``, the inverse (``x``'s shape: the position of each element's value in
    ``values``) and the counts; indices int64.

    >>> import ingot
    >>> u = ingot.unique_all(ingot.asarray([3, 1, 3, 2, 1]))
    >>> u.values, u.indices, u.counts
    (Array([1, 2, 3], dtype=int64), Array([1, 3, 0], dtype=int64), Array([2, 1, 2], dtype=int64))
    >>> u.inverse_indices
    Array([2, 0, 2, 1, 0], dtype=int64)
    """
    v, i, inv, c = _unique(x, "unique_all")
    return UniqueAllResult(v, i, inv, c)


def unique_counts(x: Array, /) -> UniqueCountsResult:
    """The distinct values of ``x`` (sorted) and how often each occurs (int64).

    >>> import ingot
    >>> ingot.unique_counts(ingot.asarray([2.0, 1.0, 2.0]))
    UniqueCountsResult(values=Array([1., 2.], dtype=float64), counts=Array([1, 2], dtype=int64))
    """
    v, _, _, c = _unique(x, "unique_counts", False, False, True)
    return UniqueCountsResult(v, c)


def unique_inverse(x: Array, /) -> UniqueInverseResult:
    """The distinct values of ``x`` (sorted) and, for every element of ``x`` (same shape), the
    index of its value in them (int64): ``values[inverse_indices]`` rebuilds ``x``.

    >>> import ingot
    >>> ingot.unique_inverse(ingot.asarray([[5, 3], [3, 5]])).inverse_indices
    Array([[1, 0],
           [0, 1]], dtype=int64)
    """
    v, _, inv, _ = _unique(x, "unique_inverse", False, True, False)
    return UniqueInverseResult(v, inv)


def unique_values(x: Array, /) -> Array:
    """The distinct values of ``x``, sorted (each NaN distinct, ``-0.0 == 0.0``).

    >>> import ingot
    >>> ingot.unique_values(ingot.asarray([3, 1, 3, 2, 1]))
    Array([1, 2, 3], dtype=int64)
    """
    return _unique(x, "unique_values", False, False, False)[0]


def isin(x1: Union[Array, int], x2: Union[Array, int], /, *, invert: builtins.bool = False) -> Array:
    """Whether each element of ``x1`` equals some element of ``x2`` (bool, ``x1``'s shape); the
    complement when ``invert``. The dtypes are promoted together; NaN is in no set. One of the
    two may be a Python scalar.

    >>> import ingot
    >>> ingot.isin(ingot.asarray([1, 2, 3, 4]), ingot.asarray([4, 2]))
    Array([False,  True, False,  True], dtype=bool)
    """
    if not isinstance(x1, Array) and not isinstance(x2, Array):
        raise TypeError("isin: at least one argument must be an ingot array")
    if not isinstance(x1, Array):
        x1 = _operand_like(x1, x2, "isin")
    elif not isinstance(x2, Array):
        x2 = _operand_like(x2, x1, "isin")
    return _ingot.isin(x1, x2, builtins.bool(invert))


__all__ = ["UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "isin", "unique_all",
           "unique_counts", "unique_inverse", "unique_values"]
