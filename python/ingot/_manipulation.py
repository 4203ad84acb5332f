"""Shape manipulation composed from views, copies and native ops: ``moveaxis``, ``repeat``,
``roll``, ``tile``, ``unstack``, ``diff``.

Every function here stays on the array's device: the data never visits the host (``repeat`` with
an array of repeats reads one number, the output length, back from the device).
"""

from __future__ import annotations

import builtins
import operator
from typing import Any, Optional, Sequence, Tuple, Union

from . import _ingot
from ._dtypes import isdtype
from ._ingot import Array


def _check_array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    return x


def _axis(a: Any, ndim: int, name: str) -> int:
    try:
        a = operator.index(a)
    except TypeError:
        raise TypeError(f"{name}: axes must be integers, got {type(a).__name__}") from None
    if not -ndim <= a < ndim:
        raise ValueError(f"{name}: axis {a} is out of bounds for array of dimension {ndim}")
    return a % ndim


def _axes(a: Union[int, Sequence[int]], ndim: int, name: str) -> list:
    items = [a] if isinstance(a, int) else list(a)
    out = [_axis(v, ndim, name) for v in items]
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {tuple(items)}")
    return out


def moveaxis(
    x: Array,
    source: Union[int, Tuple[int, ...]],
    destination: Union[int, Tuple[int, ...]],
    /,
) -> Array:
    """Moves the axes ``source`` to the positions ``destination`` (a view); the other axes keep
    their order.

    >>> import ingot
    >>> ingot.moveaxis(ingot.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    _check_array(x, "moveaxis")
    src = _axes(source, x.ndim, "moveaxis")
    dst = _axes(destination, x.ndim, "moveaxis")
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of axes")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.permute_dims(order)


def repeat(x: Array, repeats: Union[int, Array], /, *, axis: Optional[int] = None) -> Array:
    """Repeats each element of ``x`` along ``axis`` (of the flattened array when None):
    ``repeats`` times when an integer, or ``repeats[i]`` times for element ``i`` when an integer
    array (of length 1, broadcast, or of the axis's length).

    >>> import ingot
    >>> ingot.repeat(ingot.asarray([1, 2, 3]), 2)
    Array([1, 1, 2, 2, 3, 3], dtype=int64)
    >>> ingot.repeat(ingot.asarray([[1, 2], [3, 4]]), ingot.asarray([1, 2]), axis=0)
    Array([[1, 2],
           [3, 4],
           [3, 4]], dtype=int64)
    """
    _check_array(x, "repeat")
    if axis is None:
        x = x.reshape(-1)
        axis = 0
    if x.ndim == 0:
        raise ValueError("repeat: a zero-dimensional array needs axis=None")
    ax = _axis(axis, x.ndim, "repeat")
    n = x.shape[ax]
    if isinstance(repeats, Array):
        if not isdtype(repeats.dtype, "integral"):
            raise TypeError(f"repeat: repeats must have an integer dtype, got {repeats.dtype}")
        if repeats.ndim > 1:
            raise ValueError("repeat: repeats must be an integer or a 1-D array")
        if repeats.ndim == 1 and repeats.shape[0] == 1:
            repeats = repeats[0]
        if repeats.ndim == 0:
            return repeat(x, operator.index(repeats), axis=ax)
        if repeats.shape[0] != n:
            raise ValueError(f"repeat: {repeats.shape[0]} repeats for an axis of length {n}")
        r = repeats.astype(_ingot.int64)
        if n and builtins.bool(_ingot.reduce("any", _ingot.binary("less", r, 0))):
            raise ValueError("repeat: repeats must not be negative")
        ends = _ingot.cumsum(r)
        total = int(ends[-1]) if n else 0
        positions = _ingot.arange(0.0, float(total), 1.0, _ingot.int64, x.device)
        source = _ingot.searchsorted(ends, positions, "right", None)
        return _ingot.take(x, source, ax)
    try:
        k = operator.index(repeats)
    except TypeError:
        raise TypeError("repeat: repeats must be an integer or an integer array") from None
    if k < 0:
        raise ValueError("repeat: repeats must not be negative")
    shape = list(x.shape)
    expanded = x.expand_dims(ax + 1)
    target = tuple(shape[: ax + 1]) + (k,) + tuple(shape[ax + 1:])
    shape[ax] = n * k
    return _fresh(expanded.broadcast_to(target).reshape(tuple(shape)), x)


def roll(
    x: Array,
    /,
    shift: Union[int, Tuple[int, ...]],
    *,
    axis: Optional[Union[int, Tuple[int, ...]]] = None,
) -> Array:
    """Shifts the elements by ``shift`` along ``axis`` (of the flattened array when None, then
    reshaped back); elements past the end come back at the start.

    >>> import ingot
    >>> ingot.roll(ingot.asarray([1, 2, 3, 4]), 1)
    Array([4, 1, 2, 3], dtype=int64)
    """
    _check_array(x, "roll")
    if axis is None:
        if not isinstance(shift, int):
            raise ValueError("roll: shift must be an integer when axis is None")
        return roll(x.reshape(-1), shift, axis=0).reshape(x.shape)
    shifts = [shift] if isinstance(shift, int) else list(shift)
    axes = [axis] if isinstance(axis, int) else list(axis)
    if len(shifts) == 1 and len(axes) > 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError("roll: shift and axis must have the same length")
    total = {}
    for s, a in zip(shifts, axes):
        ax = _axis(a, x.ndim, "roll")
        total[ax] = total.get(ax, 0) + operator.index(s)
    out = x
    for ax, s in total.items():
        n = out.shape[ax]
        if n == 0 or s % n == 0:
            continue
        s %= n
        pre = (slice(None),) * ax
        parts = [out[pre + (slice(n - s, None),)], out[pre + (slice(0, n - s),)]]
        out = _concat(parts, ax)
    return out.copy() if out._shares_buffer(x) else out


def _concat(parts: list, axis: int) -> Array:
    from ._functions import concat

    return concat(parts, axis=axis)


def tile(x: Array, repetitions: Tuple[int, ...], /) -> Array:
    """``x`` repeated ``repetitions[i]`` times along axis ``i`` (the shorter of the shape and
    ``repetitions`` is padded with leading ones).

    >>> import ingot
    >>> ingot.tile(ingot.asarray([1, 2]), (2, 2))
    Array([[1, 2, 1, 2],
           [1, 2, 1, 2]], dtype=int64)
    """
    _check_array(x, "tile")
    reps = [operator.index(r) for r in repetitions]
    if builtins.any(r < 0 for r in reps):
        raise ValueError("tile: repetitions must not be negative")
    nd = builtins.max(x.ndim, len(reps))
    reps = [1] * (nd - len(reps)) + reps
    shape = [1] * (nd - x.ndim) + list(x.shape)
    # (1, s0, 1, s1, ...) broadcast to (r0, s0, r1, s1, ...), then merged pairwise.
    inter = []
    for s in shape:
        inter += [1, s]
    target = []
    for r, s in zip(reps, shape):
        target += [r, s]
    out = x.reshape(tuple(inter)).broadcast_to(tuple(target))
    return _fresh(out.reshape(tuple(r * s for r, s in zip(reps, shape))), x)


def _fresh(out: Array, x: Array) -> Array:
    """``out`` as an array of its own: a copy when it still views ``x``'s memory (a reshaped
    broadcast, or ``x`` itself), so that writing the result never changes ``x``, as NumPy's
    ``tile`` and ``repeat`` guarantee."""
    return out.copy() if out._shares_buffer(x) else out


def unstack(x: Array, /, *, axis: int = 0) -> Tuple[Array, ...]:
    """The slices of ``x`` along ``axis``, as a tuple of views.

    >>> import ingot
    >>> [a.shape for a in ingot.unstack(ingot.zeros((2, 3)), axis=1)]
    [(2,), (2,), (2,)]
    """
    _check_array(x, "unstack")
    if x.ndim == 0:
        raise ValueError("unstack: a zero-dimensional array has no axis")
    ax = _axis(axis, x.ndim, "unstack")
    pre = (slice(None),) * ax
    return tuple(x[pre + (i,)] for i in range(x.shape[ax]))


def diff(
    x: Array,
    /,
    *,
    axis: int = -1,
    n: int = 1,
    prepend: Optional[Array] = None,
    append: Optional[Array] = None,
) -> Array:
    """The ``n``-th forward difference along ``axis`` (``x[i + 1] - x[i]``; for bool arrays
    ``x[i + 1] != x[i]``), after joining ``prepend`` and ``append`` to ``x`` along that axis.

    >>> import ingot
    >>> ingot.diff(ingot.asarray([1, 4, 9, 16]))
    Array([3, 5, 7], dtype=int64)
    """
    _check_array(x, "diff")
    if x.ndim == 0:
        raise ValueError("diff: zero-dimensional arrays have no axis")
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: order n must not be negative, got {n}")
    ax = _axis(axis, x.ndim, "diff")
    parts = []
    for extra in (prepend, x, append):
        if extra is None:
            continue
        if not isinstance(extra, Array):
            raise TypeError("diff: prepend and append must be ingot arrays")
        parts.append(extra)
    if len(parts) > 1:
        x = _concat(parts, ax)
    pre = (slice(None),) * ax
    for _ in range(n):
        if x.shape[ax] == 0:
            break
        hi, lo = x[pre + (slice(1, None),)], x[pre + (slice(None, -1),)]
        name = "not_equal" if x.dtype == _ingot.bool else "subtract"
        x = _ingot.binary(name, hi, lo)
    return x


__all__ = ["diff", "moveaxis", "repeat", "roll", "tile", "unstack"]
