"""Sorting and searching: ``sort``, ``argsort``, ``searchsorted``.

Each function calls one native operation: a radix sort (bitonic in one threadgroup for rows of up
to 2048 elements) on GPUs, a parallel radix sort on the CPU; nothing visits the host.
"""

from __future__ import annotations

import builtins
from typing import Any, Literal, Optional, Union

from . import _ingot
from ._ingot import Array


def _check_array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def sort(x: Array, /, *, axis: int = -1, descending: builtins.bool = False,
         stable: builtins.bool = True) -> Array:
    """``x`` sorted along ``axis``: ascending with NaNs last, or ``descending`` (the reverse
    order: NaNs first). Equal elements keep their relative order (the sort is always stable,
    whatever ``stable`` says); ``-0.0`` and ``+0.0`` are equal.

    >>> import ingot
    >>> ingot.sort(ingot.asarray([3.0, float("nan"), -1.0, 2.0]))
    Array([-1.,  2.,  3., nan], dtype=float64)
    >>> ingot.sort(ingot.asarray([[3, 1], [0, 2]]), axis=0, descending=True)
    Array([[3, 2],
           [0, 1]], dtype=int64)
    """
    return _ingot.sort(_check_array(x, "sort"), int(axis), builtins.bool(descending))


def argsort(x: Array, /, *, axis: int = -1, descending: builtins.bool = False,
            stable: builtins.bool = True) -> Array:
    """The int64 indices that sort ``x`` along ``axis`` (see :func:`sort` for the order). Always
    stable: equal elements keep their original order, also when ``descending``.

    >>> import ingot
    >>> ingot.argsort(ingot.asarray([2, 1, 2, 0]))
    Array([3, 1, 0, 2], dtype=int64)
    >>> ingot.argsort(ingot.asarray([2, 1, 2, 0]), descending=True)
    Array([0, 2, 1, 3], dtype=int64)
    """
    return _ingot.argsort(_check_array(x, "argsort"), int(axis), builtins.bool(descending))


def _operand_like(v: Any, like: Array, name: str) -> Array:
    """``v`` as an array next to ``like``: arrays as they are, Python scalars weakly typed (the
    dtype ``like``'s kind gives them) on ``like``'s device."""
    if isinstance(v, Array):
        return v
    if isinstance(v, (builtins.bool, int, float)):
        d = _ingot.scalar_dtype(like.dtype, v)
        return _ingot.full((), v, d, like.device)
    raise TypeError(f"{name}: expected an ingot array or a Python scalar, got {type(v).__name__}")


def searchsorted(
    x1: Array,
    x2: Union[Array, int, float],
    /,
    *,
    side: Literal["left", "right"] = "left",
    sorter: Optional[Array] = None,
) -> Array:
    """The positions (int64, ``x2``'s shape) at which inserting each element of ``x2`` into the
    1-D ascending ``x1`` keeps it sorted: before equal elements (``side="left"``) or after them.
    ``sorter`` gives the indices that sort ``x1`` when it is not sorted itself. Values compare as
    :func:`sort` orders them (NaN last, ``-0.0 == 0.0``); the dtypes are promoted together.

    >>> import ingot
    >>> ingot.searchsorted(ingot.asarray([1.0, 2.0, 2.0, 5.0]), ingot.asarray([2.0, 9.0]))
    Array([1, 4], dtype=int64)
    >>> ingot.searchsorted(ingot.asarray([1, 2, 2, 5]), 2, side="right")
    Array(3, dtype=int64)
    """
    _check_array(x1, "searchsorted")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    x2 = _operand_like(x2, x1, "searchsorted")
    if sorter is not None:
        _check_array(sorter, "searchsorted")
    return _ingot.searchsorted(x1, x2, side, sorter)


__all__ = ["argsort", "searchsorted", "sort"]
