"""Compatibility layers: the APIs of metalcompute, MetalPy and pydotcompute over ingot.

Programs written for those packages run on every ingot device (CPU, CUDA, Metal) with only the
import line changed::

    import ingot.compat.metalcompute as mc              # was: import metalcompute as mc
    from ingot.compat.metalpy import MetalPy            # was: from MetalPy import MetalPy
    from ingot.compat.pydotcompute import MetalBackend  # was: from pydotcompute.backends.metal ...

The modules are imported lazily (``ingot.compat.metalpy`` is only loaded when used).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["metalcompute", "metalpy", "pydotcompute"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
