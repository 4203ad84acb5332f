"""ingot: array computing on CPU, CUDA and Metal, following the Python array API standard.

``import ingot as xp`` gives an array API namespace::

    >>> import ingot
    >>> x = ingot.asarray([1.0, 2.0, 3.0])
    >>> ingot.sum(ingot.exp(x) * 2)

Arrays live on a device (``ingot.Device("cpu")``, ``"cuda:0"``, ``"metal"``); the default one is
chosen by ``INGOT_DEVICE`` or the best available. NumPy arrays convert without copying on the CPU
(``ingot.asarray(np_array)``, ``numpy.asarray(ingot_array)``).
"""

from __future__ import annotations

from . import _ingot
from ._ingot import (
    Array,
    CompileError,
    Device,
    DeviceError,
    DeviceMismatchError,
    DeviceUnavailableError,
    DType,
    IngotError,
    KernelArgumentError,
    KernelFaultError,
    LinAlgError,
    UnsupportedError,
    __version__,
    default_device,
    devices,
    synchronize,
    set_default_device,
)
from ._dtypes import (
    bfloat16,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._creation import (
    arange,
    asarray,
    diag,
    empty,
    empty_like,
    eye,
    from_dlpack,
    full,
    full_like,
    linspace,
    logspace,
    meshgrid,
    ones,
    ones_like,
    tril,
    triu,
    zeros,
    zeros_like,
)
from ._functions import *  # noqa: F401,F403  (the elementwise, reduction and manipulation functions)
from ._functions import __all__ as _functions_all  # noqa: F401
from ._info import __array_namespace_info__
from ._manipulation import diff, moveaxis, repeat, roll, tile, unstack
from ._indexing import nonzero, take, take_along_axis
from ._sets import isin, unique_all, unique_counts, unique_inverse, unique_values
from ._sorting import argsort, searchsorted, sort
from ._kernels import Kernel, KernelParameter, Library, compile, load
from ._ingot import Translation, translate
from . import linalg, random
from ._fuse import ElementwiseKernel, ReductionKernel, elementwise_kernel, fuse, reduction_kernel
from . import nn
from . import fft

__array_api_version__ = "2025.12"

e = 2.718281828459045
pi = 3.141592653589793
inf = float("inf")
nan = float("nan")
newaxis = None


def _register_shutdown() -> None:
    # A CPU kernel still running when the interpreter exits stops between threadgroups instead of
    # keeping the process alive. threading's exit hooks run before non-daemon threads are joined
    # (a thread inside a kernel would otherwise be waited for); atexit is the fallback.
    import atexit
    import threading

    hook = getattr(threading, "_register_atexit", None)
    try:
        if hook is not None:
            hook(_ingot._shutdown)
            return
    except RuntimeError:
        pass
    atexit.register(_ingot._shutdown)


_register_shutdown()

from ._examples import attach as _attach_examples

# Every public function's docstring carries an example (tests/test_docstrings.py runs them).
_attach_examples(__import__("sys").modules[__name__])
