"""Random numbers: ``ingot.random.Generator``, NumPy's ``Generator`` API on Philox4x32-10.

The stream of a seed is the same on every device: ``Generator(42).normal(size=1000,
device="cuda")`` holds the same bits as the same call with ``device="cpu"``. A generator is a
seed (the 64-bit Philox key) and a position in the stream (in 128-bit blocks); every draw takes
whole blocks, so a draw never depends on the device or on how the values are split across GPU
threads. The stream's definition is in the documentation of ``ingot::ops::random`` (Rust).

Differences from NumPy's ``Generator`` (whose default bit generator is PCG64, and whose
``Philox`` is the 4x64 variant, so no stream coincides with NumPy's):

- ``size=None`` gives a 0-d array, not a Python scalar;
- every method takes ``dtype`` where it makes sense and ``device``;
- the seed is an int in [0, 2**64) used as the key (or None for fresh OS entropy);
- ``integers`` takes Python ints as bounds (NumPy also takes arrays of bounds).

>>> import ingot
>>> g = ingot.random.Generator(42)
>>> x = g.normal(size=(2, 3), dtype=ingot.float32)
>>> x.shape
(2, 3)
"""

from __future__ import annotations

import builtins
import secrets
from typing import Any, Optional, Sequence, Tuple, Union

from . import _ingot
from ._ingot import Array, Device

Size = Optional[Union[int, Sequence[int]]]


def _shape(size: Size) -> Tuple[int, ...]:
    if size is None:
        return ()
    if isinstance(size, int):
        return (size,)
    return tuple(int(s) for s in size)


def _ingot_device(device: Any) -> Device:
    if device is None:
        return _ingot.default_device()
    return device if isinstance(device, Device) else Device(device)


def _float_dtype(dtype: Any, device: Device) -> Any:
    from ._dtypes import as_dtype

    if dtype is None:
        # Apple GPUs have no float64.
        return _ingot.float32 if device.kind == "metal" else _ingot.float64
    d = as_dtype(dtype)
    if d not in (_ingot.float16, _ingot.bfloat16, _ingot.float32, _ingot.float64):
        raise TypeError(f"a floating-point dtype is required, got {d}")
    return d


def _param(value: Any, dtype: Any, device: Device) -> Any:
    """A distribution parameter: Python scalars stay scalars, anything else becomes an array."""
    if isinstance(value, (builtins.bool, int, float)):
        return float(value)
    from ._creation import asarray

    return asarray(value, device=device).astype(dtype, copy=False)


def _broadcast_size(size: Size, *params: Any) -> Tuple[int, ...]:
    shapes = [p.shape for p in params if isinstance(p, Array)]
    if size is not None:
        return _shape(size)
    from ._functions import _broadcast_shapes

    out: Tuple[int, ...] = ()
    for s in shapes:
        out = _broadcast_shapes(out, s)
    return out


class Generator:
    """A random generator on the counter-based Philox4x32-10 (NumPy's ``Generator`` API).

    ``seed``: an int in [0, 2**64), or None for fresh entropy from the OS. ``position``: where
    in the stream to start (in 128-bit blocks; a generator's ``position`` after some draws
    resumes it exactly). ``device``: the default device of the draws (default: ingot's).
    """

    def __init__(self, seed: Optional[int] = None, *, position: int = 0, device: Any = None):
        if seed is None:
            seed = secrets.randbits(64)
        if isinstance(seed, Generator):
            seed, position = seed.seed, seed.position
        if not isinstance(seed, int) or isinstance(seed, builtins.bool):
            raise TypeError(f"seed must be an int or None, got {type(seed).__name__}")
        if not 0 <= seed < 2**64:
            raise ValueError(f"seed must be in [0, 2**64), got {seed}")
        if not 0 <= position < 2**64:
            raise ValueError(f"position must be in [0, 2**64), got {position}")
        self._state = _ingot.Philox(seed, position)
        self._device = device

    @property
    def seed(self) -> int:
        """The seed: the 64-bit key of the stream."""
        return self._state.seed

    @property
    def position(self) -> int:
        """The position in the stream, in 128-bit blocks."""
        return self._state.position

    def __repr__(self) -> str:
        return f"Generator(Philox4x32-10, seed={self.seed}, position={self.position})"

    def _dev(self, device: Any, *arrays: Any) -> Device:
        for a in arrays:
            if isinstance(a, Array) and device is None:
                return a.device
        return _ingot_device(device if device is not None else self._device)

    def random(self, size: Size = None, dtype: Any = None, *, device: Any = None) -> Array:
        """Uniform floats in [0, 1) of shape ``size`` (float64 by default; float32 on Metal)."""
        dev = self._dev(device)
        return self._state.random(_shape(size), _float_dtype(dtype, dev), dev)

    def uniform(self, low: Any = 0.0, high: Any = 1.0, size: Size = None, dtype: Any = None, *,
                device: Any = None) -> Array:
        """Uniform floats in [low, high): ``low + (high - low) * random()``; ``low`` and ``high``
        may be arrays broadcast against ``size`` (their broadcast shape when ``size`` is None)."""
        dev = self._dev(device, low, high)
        d = _float_dtype(dtype, dev)
        lo, hi = _param(low, d, dev), _param(high, d, dev)
        u = self._state.random(_broadcast_size(size, lo, hi), d, dev)
        return lo + (hi - lo) * u

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Size = None, dtype: Any = None, *,
               device: Any = None) -> Array:
        """Normal floats ``loc + scale * z`` (Box-Muller); ``loc`` and ``scale`` may be arrays
        broadcast against ``size``. A negative ``scale`` raises ValueError."""
        dev = self._dev(device, loc, scale)
        d = _float_dtype(dtype, dev)
        mu, sigma = _param(loc, d, dev), _param(scale, d, dev)
        if isinstance(sigma, Array):
            from ._functions import any as _any

            if builtins.bool(_any(sigma < 0)):
                raise ValueError("normal: scale < 0")
        elif sigma < 0:
            raise ValueError("normal: scale < 0")
        z = self._state.normal(_broadcast_size(size, mu, sigma), d, dev)
        if isinstance(mu, float) and isinstance(sigma, float) and mu == 0.0 and sigma == 1.0:
            return z
        return mu + sigma * z

    def standard_normal(self, size: Size = None, dtype: Any = None, *, device: Any = None) -> Array:
        """Standard normal floats (``normal(0, 1)``)."""
        dev = self._dev(device)
        return self._state.normal(_shape(size), _float_dtype(dtype, dev), dev)

    def integers(self, low: int, high: Optional[int] = None, size: Size = None, dtype: Any = "int64",
                 endpoint: builtins.bool = False, *, device: Any = None) -> Array:
        """Integers uniform in [low, high) (``[low, high]`` with ``endpoint``), exactly uniform
        (Lemire's method with rejection). With one bound, it is ``high`` and ``low`` is 0."""
        if high is None:
            low, high = 0, low
        for name, v in (("low", low), ("high", high)):
            if not isinstance(v, int) or isinstance(v, builtins.bool):
                raise TypeError(f"integers: {name} must be a Python int, got {type(v).__name__}")
        if endpoint:
            high = high + 1
        from ._dtypes import as_dtype

        dev = self._dev(device)
        return self._state.integers(low, high, _shape(size), as_dtype(dtype), dev)

    def permutation(self, x: Union[int, Array], axis: int = 0, *, device: Any = None) -> Array:
        """A permuted ``range(x)`` (int64) for an int, else a shuffled copy of the array ``x``
        along ``axis``."""
        if isinstance(x, int) and not isinstance(x, builtins.bool):
            if x < 0:
                raise ValueError(f"permutation: negative length {x}")
            return self._state.permutation(x, self._dev(device))
        a = _as_array(x, self._dev(device))
        if a.ndim == 0:
            raise ValueError("permutation: x must be an integer or at least 1-dimensional")
        return self._state.permuted(a, _axis(axis, a.ndim))

    def shuffle(self, x: Array, axis: int = 0) -> None:
        """Shuffles the ingot array ``x`` in place along ``axis``."""
        if not isinstance(x, Array):
            raise TypeError(f"shuffle: expected an ingot array, got {type(x).__name__}")
        if x.ndim == 0:
            raise ValueError("shuffle: x must be at least 1-dimensional")
        self._state.shuffle(x, _axis(axis, x.ndim))

    def choice(self, a: Union[int, Array], size: Size = None, replace: builtins.bool = True,
               p: Any = None, axis: int = 0, shuffle: builtins.bool = True, *,
               device: Any = None) -> Array:
        """A random sample of ``range(a)`` (an int) or of the array ``a`` along ``axis``: with or
        without replacement, uniform or with probabilities ``p`` (non-negative, summing to 1).

        Without replacement the sample comes out in random order whatever ``shuffle`` says (it
        is accepted for NumPy compatibility)."""
        if isinstance(a, int) and not isinstance(a, builtins.bool):
            if a < 0:
                raise ValueError("choice: a must be a positive integer unless no samples are taken")
            dev = self._dev(device)
            pa = None if p is None else _as_array(p, dev)
            return self._state.choice(a, _shape(size), builtins.bool(replace), pa, dev)
        arr = _as_array(a, self._dev(device))
        if arr.ndim == 0:
            raise ValueError("choice: a must be 1-dimensional or an integer")
        ax = _axis(axis, arr.ndim)
        pa = None if p is None else _as_array(p, arr.device)
        idx = self._state.choice(arr.shape[ax], _shape(size), builtins.bool(replace), pa, arr.device)
        return _ingot.random_take(arr, idx, ax)


def _axis(axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _as_array(x: Any, device: Device) -> Array:
    if isinstance(x, Array):
        return x
    from ._creation import asarray

    return asarray(x, device=device)


def default_rng(seed: Optional[Union[int, Generator]] = None) -> Generator:
    """A ``Generator`` for ``seed`` (NumPy's ``default_rng``); a Generator is returned as it is."""
    if isinstance(seed, Generator):
        return seed
    return Generator(seed)


__all__ = ["Generator", "default_rng"]
