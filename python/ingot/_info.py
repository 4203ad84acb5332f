"""``__array_namespace_info__``: what this array API implementation supports."""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

from . import _ingot
from ._dtypes import ALL_DTYPES, FLOATING, INTEGER, SIGNED, UNSIGNED, as_dtype, isdtype
from ._ingot import Device, DType


class Devices(tuple):
    """The tuple ``devices()`` returns; ``devices() + [None]`` (a list, as clients written for
    the 2024.12 revision add) gives a tuple too instead of raising."""

    def __add__(self, other: Any) -> tuple:
        return tuple(self) + tuple(other)


class Info:
    """Inspection API of the ingot namespace (the array API's ``__array_namespace_info__()``)."""

    def capabilities(self) -> Dict[str, Any]:
        """Optional features: boolean-mask indexing and functions whose output shape depends on
        the data (``nonzero``, ``unique_*``, ``repeat`` with array repeats) are supported; any
        number of dimensions."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": None}

    def default_device(self) -> Device:
        """The default device (``INGOT_DEVICE`` or the best available)."""
        return _ingot.default_device()

    def devices(self) -> Tuple[Device, ...]:
        """Every available device, as a tuple (2025.12; it was a list in 2024.12, and joining
        it with a list, as code written for 2024.12 does, still works)."""
        return Devices(_ingot.devices())

    def default_dtypes(self, *, device: Optional[Union[Device, str]] = None) -> Dict[str, Any]:
        """Default dtypes: float64 for real floating, complex128 for complex floating, int64 for
        integral and indexing."""
        return {
            "real floating": _ingot.float64,
            "complex floating": _ingot.complex128,
            "integral": _ingot.int64,
            "indexing": _ingot.int64,
        }

    def dtypes(
        self,
        *,
        device: Optional[Union[Device, str]] = None,
        kind: Optional[Union[str, tuple]] = None,
    ) -> Dict[str, DType]:
        """The array API dtypes that ``device`` (default: the default device) holds, by name,
        optionally only those of ``kind``. float64 and complex128 are left out on devices without
        them (Metal); float16 and bfloat16, extensions, are not listed (they are not array API
        dtypes, and NumPy's namespace leaves float16 out too)."""
        dev = _ingot.default_device() if device is None else Device(device)
        out = {}
        for d in ALL_DTYPES:
            if d in (_ingot.bfloat16, _ingot.float16) or (kind is not None and not isdtype(d, kind)):
                continue
            if d in (_ingot.float64, _ingot.complex128) and dev.kind == "metal":
                continue
            out[d.name] = d
        return out


def __array_namespace_info__() -> Info:
    """The array API inspection namespace."""
    return Info()


__all__ = ["Info", "__array_namespace_info__", "as_dtype", "FLOATING", "INTEGER", "SIGNED", "UNSIGNED"]
