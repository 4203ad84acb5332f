"""The array API's ``fft`` extension (``ingot.fft``).

Transforms over one axis (``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``) or several
(``fftn``, ``ifftn``, ``rfftn``, ``irfftn``), with the standard's ``n``/``s`` (truncate or
zero-pad), ``axis``/``axes`` and ``norm`` (``"backward"``, ``"ortho"``, ``"forward"``). On the CPU
they run on rustfft/realfft; arrays on other devices are transformed on the host and moved back.
complex64 and float32 inputs compute in single precision, everything else in double (real
inputs of ``fft`` are converted to complex first, as NumPy does).

>>> import ingot
>>> ingot.fft.fft(ingot.asarray([1.0, 0.0, 0.0, 0.0])).shape
(4,)
"""

from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

from . import _ingot
from ._ingot import Array

__all__ = [
    "fft",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfftn",
    "rfft",
    "rfftfreq",
    "rfftn",
]


def _array(x: Any, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"fft.{name}: expected an ingot array, got {type(x).__name__}")
    return x


def _n(n: Optional[int], name: str) -> Optional[int]:
    if n is None:
        return None
    if not isinstance(n, int) or isinstance(n, builtins.bool):
        raise TypeError(f"fft.{name}: n must be an integer")
    if n < 1:
        raise ValueError(f"fft.{name}: invalid number of data points {n}")
    return n


def _one(kind: str, x: Array, n: Optional[int], axis: int, norm: str) -> Array:
    return _ingot.fft_1d(kind, _array(x, kind), _n(n, kind), axis, norm)


def _many(kind: str, x: Array, s: Optional[Sequence[int]], axes: Optional[Sequence[int]], norm: str) -> Array:
    x = _array(x, kind)
    if s is not None:
        s = [_n(v, kind) for v in s]
    return _ingot.fft_nd(kind, x, s, None if axes is None else list(axes), norm)


def fft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The 1-D discrete Fourier transform along ``axis`` over ``n`` points."""
    return _one("fft", x, n, axis, norm)


def ifft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of ``fft``."""
    return _one("ifft", x, n, axis, norm)


def rfft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The 1-D transform of a real signal: the ``n // 2 + 1`` non-negative frequency terms."""
    return _one("rfft", x, n, axis, norm)


def irfft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of ``rfft``: ``n`` real points (default ``2 * (m - 1)``)."""
    return _one("irfft", x, n, axis, norm)


def hfft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The transform of a Hermitian-symmetric signal given by its non-negative frequency terms
    (a real result of ``n`` points, default ``2 * (m - 1)``)."""
    return _one("hfft", x, n, axis, norm)


def ihfft(x: Array, /, *, n: Optional[int] = None, axis: int = -1, norm: str = "backward") -> Array:
    """The inverse of ``hfft``: the ``n // 2 + 1`` non-negative frequency terms of a real signal."""
    return _one("ihfft", x, n, axis, norm)


def fftn(x: Array, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
         norm: str = "backward") -> Array:
    """The n-d transform over ``axes`` (all, or the last ``len(s)``) with sizes ``s``."""
    return _many("fftn", x, s, axes, norm)


def ifftn(x: Array, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
          norm: str = "backward") -> Array:
    """The inverse of ``fftn``."""
    return _many("ifftn", x, s, axes, norm)


def rfftn(x: Array, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
          norm: str = "backward") -> Array:
    """The n-d transform of a real signal (``rfft`` over the last of ``axes``)."""
    return _many("rfftn", x, s, axes, norm)


def irfftn(x: Array, /, *, s: Optional[Sequence[int]] = None, axes: Optional[Sequence[int]] = None,
           norm: str = "backward") -> Array:
    """The inverse of ``rfftn`` (the last axis gets ``2 * (m - 1)`` points unless ``s`` says)."""
    return _many("irfftn", x, s, axes, norm)


def _check_freq_args(n: int, d: float, name: str) -> None:
    if not isinstance(n, int) or isinstance(n, builtins.bool) or n < 1:
        raise ValueError(f"fft.{name}: n must be a positive integer, got {n!r}")
    if isinstance(d, builtins.bool) or not isinstance(d, (int, float)):
        raise TypeError(f"fft.{name}: d must be a Python float")


def fftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of ``fft``: ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``
    (default dtype float64)."""
    from ._creation import arange
    from ._functions import where

    _check_freq_args(n, d, "fftfreq")
    dt = dtype if dtype is not None else _ingot.float64
    k = arange(n, dtype=_ingot.int64, device=device)
    k = where(k < (n + 1) // 2, k, k - n)
    return k.astype(dt) * (1.0 / (d * n))


def rfftfreq(n: int, /, *, d: float = 1.0, dtype: Any = None, device: Any = None) -> Array:
    """The sample frequencies of ``rfft``: ``[0, 1, ..., n // 2] / (d * n)`` (default float64)."""
    from ._creation import arange

    _check_freq_args(n, d, "rfftfreq")
    dt = dtype if dtype is not None else _ingot.float64
    return arange(n // 2 + 1, dtype=_ingot.int64, device=device).astype(dt) * (1.0 / (d * n))


def _shift(x: Array, axes: Any, inverse: builtins.bool) -> Array:
    from ._manipulation import roll

    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int):
        axes = (axes,)
    axes = tuple(axes)
    shifts = tuple((-(x.shape[a] // 2)) if inverse else x.shape[a] // 2 for a in axes)
    if not axes:
        return x
    return roll(x, shifts, axis=axes)


def fftshift(x: Array, /, *, axes: Any = None) -> Array:
    """Moves the zero-frequency term to the centre along ``axes`` (all by default)."""
    return _shift(_array(x, "fftshift"), axes, False)


def ifftshift(x: Array, /, *, axes: Any = None) -> Array:
    """The inverse of ``fftshift``."""
    return _shift(_array(x, "ifftshift"), axes, True)
