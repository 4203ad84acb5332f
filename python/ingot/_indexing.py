"""Indexing functions: ``take``, ``take_along_axis``, ``nonzero``.

The same machinery serves ``x[indices]`` and ``x[mask]`` (``Array.__getitem__`` and
``__setitem__``): gathers and scatters on the array's device, out-of-range indices raising
``IndexError``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from . import _ingot
from ._dtypes import isdtype
from ._ingot import Array


def _check_array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def take(x: Array, indices: Array, /, *, axis: Optional[int] = None) -> Array:
    """The elements of ``x`` at ``indices`` (an integer array; negative values count from the
    end) along ``axis``; ``axis`` may be None only for 1-D ``x`` (the array API's rule; NumPy's
    flattening is kept for other shapes). Out-of-range indices raise ``IndexError``.

    >>> import ingot
    >>> x = ingot.asarray([[10, 20, 30], [40, 50, 60]])
    >>> ingot.take(x, ingot.asarray([2, 0]), axis=1)
    Array([[30, 10],
           [60, 40]], dtype=int64)
    """
    _check_array(x, "take")
    _check_array(indices, "take")
    return _ingot.take(x, indices, axis)


def take_along_axis(x: Array, indices: Array, /, *, axis: int = -1) -> Array:
    """``x`` gathered along ``axis`` at ``indices``, which has ``x``'s number of dimensions and
    broadcasts with it along the other axes (``take_along_axis(x, argsort(x), axis)`` sorts).

    >>> import ingot
    >>> x = ingot.asarray([[3, 1, 2], [9, 7, 8]])
    >>> ingot.take_along_axis(x, ingot.argsort(x, axis=1), axis=1)
    Array([[1, 2, 3],
           [7, 8, 9]], dtype=int64)
    """
    _check_array(x, "take_along_axis")
    _check_array(indices, "take_along_axis")
    return _ingot.take_along_axis(x, indices, axis)


def nonzero(x: Array, /) -> Tuple[Array, ...]:
    """The coordinates of the nonzero elements of ``x`` (NaN counts as nonzero), one int64
    array per axis, in row-major order; ``x`` must have at least one dimension.

    >>> import ingot
    >>> ingot.nonzero(ingot.asarray([[0, 1], [2, 0]]))
    (Array([0, 1], dtype=int64), Array([1, 0], dtype=int64))
    """
    _check_array(x, "nonzero")
    if isdtype(x.dtype, "complex floating"):
        # A complex element is nonzero when either part is (NaN parts count): x != 0.
        x = x != 0
    return _ingot.nonzero(x)


__all__ = ["nonzero", "take", "take_along_axis"]
