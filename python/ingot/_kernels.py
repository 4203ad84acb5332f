"""User MSL kernels: ``compile``, ``Library``, ``Kernel`` and the recipe helper ``load``.

``compile(source)`` returns a :class:`Library`; ``lib["name"]`` (or ``lib.function("name")``) a
:class:`Kernel`. A kernel is called in the metalcompute form ``kernel(count, *args)`` (a 1-D grid
of exactly ``count`` threads) or as ``kernel(*args, grid=..., threadgroup=...)`` /
``kernel(*args, groups=..., threadgroup=...)`` with 1- to 3-D shapes, plus
``threadgroup_memory={index: nbytes}`` for ``[[threadgroup(n)]]`` parameters.

Arguments bind to the kernel's buffer and ``constant T&`` parameters in buffer-index order:

* ``ingot.Array``: bound as a buffer and written in place.
* NumPy arrays (and ``array.array``, memoryviews, anything NumPy converts): on the CPU a
  C-contiguous, aligned array is used in place without a copy, and on Metal one whose memory is
  also page-aligned and a whole number of pages (the call then waits for the kernel, so the NumPy
  array holds the results when it returns); otherwise the data is copied to the device and, for a
  writable parameter, the results are copied back into the NumPy array after the launch. A
  read-only NumPy array given to a writable parameter is an error.
* Python and NumPy scalars for ``constant T&``: converted to ``T`` with a range check.
* ``bytes``/``bytearray``/``memoryview``, NumPy structured scalars, ctypes structures for
  ``constant Struct&``: the raw bytes, checked against ``sizeof(Struct)``.
"""

from __future__ import annotations

import os
from typing import Any, Callable

import numpy as np

from . import _ingot
from ._ingot import Kernel, KernelParameter, Library, compile

__all__ = ["compile", "load", "Library", "Kernel", "KernelParameter"]


def _elements(x: Any) -> tuple[tuple[int, ...], int]:
    if isinstance(x, _ingot.Array):
        shape = tuple(x.shape)
    else:
        shape = tuple(np.shape(x))
    n = 1
    for s in shape:
        n *= s
    return shape, n


def load(
    path: str | os.PathLike[str],
    function_name: str,
    *,
    device: Any = None,
    constants: dict[Any, Any] | None = None,
    math_mode: str = "precise",
) -> Callable[..., Any]:
    """Loads kernel ``function_name`` from the ``.metal`` file at ``path`` as a Python function.

    The returned ``f(*inputs)`` works for any array size: it binds ``inputs`` to the kernel's
    first parameters, allocates every remaining *writable* buffer parameter (shaped like the first
    input; dtype from the parameter, or the first input's dtype for byte/struct pointers), runs one
    thread per element of the first input (per vector for a ``float4*``-style parameter), and
    returns the allocated output (a tuple when there are several). When nothing was allocated (an
    in-place kernel such as ``add2``), it returns the writable inputs it modified in place (the one
    input itself when there is one). Outputs are NumPy arrays when the first input is a NumPy
    array (or list), ingot arrays otherwise.

    >>> log = load("log.metal", function_name="log_kernel")   # doctest: +SKIP
    >>> out = log(np.random.random(10).astype(np.float32))    # doctest: +SKIP
    """
    path = os.fspath(path)
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lib = compile(
        source,
        device=device,
        constants=constants,
        math_mode=math_mode,
        include_dirs=[os.path.dirname(os.path.abspath(path))],
        file_name=path,
    )
    kernel = lib.function(function_name)
    params = kernel.arguments

    def run(*inputs: Any) -> Any:
        if not inputs:
            raise TypeError(f"{function_name}() needs at least one input array")
        if len(inputs) > len(params):
            names = ", ".join(p.name for p in params)
            raise TypeError(
                f"{function_name}() takes at most {len(params)} arguments ({names}), got {len(inputs)}"
            )
        first = inputs[0]
        if isinstance(first, (list, tuple)):
            first = np.asarray(first)
            inputs = (first,) + tuple(inputs[1:])
        shape, n = _elements(first)
        as_numpy = not isinstance(first, _ingot.Array)
        args = list(inputs)
        outputs = []
        for p in params[len(inputs):]:
            if p.kind != "buffer" or p.access != "read_write":
                raise TypeError(
                    f"{function_name}(): parameter `{p.name}` ({p.type_name}) is an input: pass it"
                )
            dtype = p.dtype if p.dtype is not None else first.dtype
            if as_numpy:
                out = np.empty(shape, dtype=np.dtype(str(dtype)))
            else:
                out = _ingot.empty(shape, dtype=dtype, device=kernel.device)
            args.append(out)
            outputs.append(out)
        count = n
        p0 = params[0]
        if p0.lanes > 1 and p0.kind == "buffer" and p0.dtype is not None:
            count = n // p0.lanes
        kernel(count, *args)
        if outputs:
            return outputs[0] if len(outputs) == 1 else tuple(outputs)
        written = [a for a, p in zip(inputs, params) if p.kind == "buffer" and p.access == "read_write"]
        if not written:
            return None
        return written[0] if len(written) == 1 else tuple(written)

    run.__name__ = function_name
    run.__doc__ = f"The MSL kernel `{function_name}` from {path}."
    run.kernel = kernel  # type: ignore[attr-defined]
    return run
