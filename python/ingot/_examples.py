"""The examples of the namespace's functions whose docstrings are written by a template.

The elementwise functions (``_unary``/``_binary`` in ``_functions.py``), the reductions and the
functions of the other modules share a few docstring templates; their examples live here, one
per function, and :func:`attach` appends each to its function's docstring (``help(ingot.exp)``
shows it). A function whose own docstring already has an example keeps it.
``tests/test_docstrings.py`` runs every example as a doctest (``...`` stands for the remaining
digits of a float).
"""

from __future__ import annotations

from typing import Any, Dict

EXAMPLES: Dict[str, str] = {
    'conj': (
        '>>> x = ingot.asarray([1 + 2j, 3 - 4j])\n'
        '>>> ingot.conj(x).tolist()\n'
        '[(1-2j), (3+4j)]\n'
    ),
    'real': (
        '>>> x = ingot.asarray([1 + 2j, 3 - 4j])\n'
        '>>> ingot.real(x).tolist()\n'
        '[1.0, 3.0]\n'
    ),
    'imag': (
        '>>> x = ingot.asarray([1 + 2j, 3 - 4j])\n'
        '>>> ingot.imag(x).tolist()\n'
        '[2.0, -4.0]\n'
    ),
    'fuse': (
        '>>> @ingot.fuse\n'
        '... def hypot(a, b):\n'
        '...     return ingot.sqrt(a * a + b * b)\n'
        '>>> hypot(ingot.asarray([3.0, 5.0]), ingot.asarray([4.0, 12.0])).tolist()\n'
        '[5.0, 13.0]\n'
    ),
    'elementwise_kernel': (
        '>>> k = ingot.elementwise_kernel("T x, T y", "T z", "z = x * y + 1;")\n'
        '>>> k(ingot.asarray([1.0, 2.0]), ingot.asarray([3.0, 4.0])).tolist()\n'
        '[4.0, 9.0]\n'
    ),
    'reduction_kernel': (
        '>>> l2 = ingot.reduction_kernel("T x", "T y", "x * x", "a + b", "y = sqrt(a);", "0", "l2")\n'
        '>>> l2(ingot.asarray([[3.0, 4.0], [5.0, 12.0]]), axis=1).tolist()\n'
        '[5.0, 13.0]\n'
    ),
    'abs': (
        '>>> x = ingot.asarray([-1.5, 0.0, 2.0])\n'
        '>>> ingot.abs(x).tolist()\n'
        '[1.5, 0.0, 2.0]\n'
    ),
    'negative': (
        '>>> x = ingot.asarray([-1.5, 0.0, 2.0])\n'
        '>>> ingot.negative(x).tolist()\n'
        '[1.5, -0.0, -2.0]\n'
    ),
    'positive': (
        '>>> x = ingot.asarray([-1.5, 0.0, 2.0])\n'
        '>>> ingot.positive(x).tolist()\n'
        '[-1.5, 0.0, 2.0]\n'
    ),
    'sign': (
        '>>> x = ingot.asarray([-1.5, 0.0, 2.0])\n'
        '>>> ingot.sign(x).tolist()\n'
        '[-1.0, 0.0, 1.0]\n'
    ),
    'sqrt': (
        '>>> x = ingot.asarray([0.0, 1.0, 2.0, 4.0])\n'
        '>>> ingot.sqrt(x).tolist()\n'
        '[0.0, 1.0, 1.4142..., 2.0]\n'
    ),
    'square': (
        '>>> x = ingot.asarray([-1.5, 0.0, 3.0])\n'
        '>>> ingot.square(x).tolist()\n'
        '[2.25, 0.0, 9.0]\n'
    ),
    'exp': (
        ">>> x = ingot.asarray([0.0, 1.0, -float('inf')])\n"
        '>>> ingot.exp(x).tolist()\n'
        '[1.0, 2.7182..., 0.0]\n'
    ),
    'expm1': (
        '>>> x = ingot.asarray([0.0, 1e-10, 1.0])\n'
        '>>> ingot.expm1(x).tolist()\n'
        '[0.0, 1.0000..., 1.7182...]\n'
    ),
    'log': (
        '>>> x = ingot.asarray([1.0, 2.718281828459045, 0.0])\n'
        '>>> ingot.log(x).tolist()\n'
        '[0.0, 1.0, -inf]\n'
    ),
    'log1p': (
        '>>> x = ingot.asarray([0.0, 1e-10, 1.0])\n'
        '>>> ingot.log1p(x).tolist()\n'
        '[0.0, 9.9999..., 0.6931...]\n'
    ),
    'log2': (
        '>>> x = ingot.asarray([1.0, 8.0, 0.5])\n'
        '>>> ingot.log2(x).tolist()\n'
        '[0.0, 3.0, -1.0]\n'
    ),
    'log10': (
        '>>> x = ingot.asarray([1.0, 1000.0, 0.1])\n'
        '>>> ingot.log10(x).tolist()\n'
        '[0.0, 3.0, -1.0]\n'
    ),
    'sin': (
        '>>> x = ingot.asarray([0.0, 1.5707963267948966, 3.0])\n'
        '>>> ingot.sin(x).tolist()\n'
        '[0.0, 1.0, 0.1411...]\n'
    ),
    'cos': (
        '>>> x = ingot.asarray([0.0, 3.141592653589793, 1.0])\n'
        '>>> ingot.cos(x).tolist()\n'
        '[1.0, -1.0, 0.5403...]\n'
    ),
    'tan': (
        '>>> x = ingot.asarray([0.0, 0.7853981633974483])\n'
        '>>> ingot.tan(x).tolist()\n'
        '[0.0, 0.9999...]\n'
    ),
    'asin': (
        '>>> x = ingot.asarray([0.0, 1.0, 0.5])\n'
        '>>> ingot.asin(x).tolist()\n'
        '[0.0, 1.5707..., 0.5235...]\n'
    ),
    'acos': (
        '>>> x = ingot.asarray([1.0, 0.0, -1.0])\n'
        '>>> ingot.acos(x).tolist()\n'
        '[0.0, 1.5707..., 3.1415...]\n'
    ),
    'atan': (
        ">>> x = ingot.asarray([0.0, 1.0, float('inf')])\n"
        '>>> ingot.atan(x).tolist()\n'
        '[0.0, 0.7853..., 1.5707...]\n'
    ),
    'sinh': (
        '>>> x = ingot.asarray([0.0, 1.0])\n'
        '>>> ingot.sinh(x).tolist()\n'
        '[0.0, 1.1752...]\n'
    ),
    'cosh': (
        '>>> x = ingot.asarray([0.0, 1.0])\n'
        '>>> ingot.cosh(x).tolist()\n'
        '[1.0, 1.5430...]\n'
    ),
    'tanh': (
        ">>> x = ingot.asarray([0.0, 1.0, float('inf')])\n"
        '>>> ingot.tanh(x).tolist()\n'
        '[0.0, 0.7615..., 1.0]\n'
    ),
    'asinh': (
        '>>> x = ingot.asarray([0.0, 1.0])\n'
        '>>> ingot.asinh(x).tolist()\n'
        '[0.0, 0.8813...]\n'
    ),
    'acosh': (
        '>>> x = ingot.asarray([1.0, 2.0])\n'
        '>>> ingot.acosh(x).tolist()\n'
        '[0.0, 1.3169...]\n'
    ),
    'atanh': (
        '>>> x = ingot.asarray([0.0, 0.5])\n'
        '>>> ingot.atanh(x).tolist()\n'
        '[0.0, 0.5493...]\n'
    ),
    'floor': (
        '>>> x = ingot.asarray([-1.5, 0.5, 2.0])\n'
        '>>> ingot.floor(x).tolist()\n'
        '[-2.0, 0.0, 2.0]\n'
    ),
    'ceil': (
        '>>> x = ingot.asarray([-1.5, 0.5, 2.0])\n'
        '>>> ingot.ceil(x).tolist()\n'
        '[-1.0, 1.0, 2.0]\n'
    ),
    'trunc': (
        '>>> x = ingot.asarray([-1.5, 0.5, 2.0])\n'
        '>>> ingot.trunc(x).tolist()\n'
        '[-1.0, 0.0, 2.0]\n'
    ),
    'round': (
        '>>> x = ingot.asarray([0.5, 1.5, 2.5, -0.7])\n'
        '>>> ingot.round(x).tolist()\n'
        '[0.0, 2.0, 2.0, -1.0]\n'
    ),
    'logical_not': (
        '>>> x = ingot.asarray([True, False])\n'
        '>>> ingot.logical_not(x).tolist()\n'
        '[False, True]\n'
    ),
    'bitwise_invert': (
        '>>> x = ingot.asarray([0, 5, -1])\n'
        '>>> ingot.bitwise_invert(x).tolist()\n'
        '[-1, -6, 0]\n'
    ),
    'isnan': (
        ">>> x = ingot.asarray([1.0, float('nan'), float('inf')])\n"
        '>>> ingot.isnan(x).tolist()\n'
        '[False, True, False]\n'
    ),
    'isinf': (
        ">>> x = ingot.asarray([1.0, float('nan'), -float('inf')])\n"
        '>>> ingot.isinf(x).tolist()\n'
        '[False, False, True]\n'
    ),
    'isfinite': (
        ">>> x = ingot.asarray([1.0, float('nan'), float('inf')])\n"
        '>>> ingot.isfinite(x).tolist()\n'
        '[True, False, False]\n'
    ),
    'reciprocal': (
        '>>> x = ingot.asarray([1.0, 2.0, 4.0])\n'
        '>>> ingot.reciprocal(x).tolist()\n'
        '[1.0, 0.5, 0.25]\n'
    ),
    'signbit': (
        '>>> x = ingot.asarray([-1.0, -0.0, 0.0, 2.0])\n'
        '>>> ingot.signbit(x).tolist()\n'
        '[True, True, False, False]\n'
    ),
    'add': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([10, 20, 30])\n'
        '>>> ingot.add(a, b).tolist()\n'
        '[11, 22, 33]\n'
        '>>> ingot.add(a, 0.5).tolist()\n'
        '[1.5, 2.5, 3.5]\n'
    ),
    'subtract': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([10, 20, 30])\n'
        '>>> ingot.subtract(a, b).tolist()\n'
        '[-9, -18, -27]\n'
    ),
    'multiply': (
        '>>> a = ingot.asarray([1.5, 2.0])\n'
        '>>> b = ingot.asarray([2.0, -3.0])\n'
        '>>> ingot.multiply(a, b).tolist()\n'
        '[3.0, -6.0]\n'
    ),
    'divide': (
        '>>> a = ingot.asarray([1, 3])\n'
        '>>> b = ingot.asarray([2, 4])\n'
        '>>> ingot.divide(a, b).tolist()\n'
        '[0.5, 0.75]\n'
    ),
    'floor_divide': (
        '>>> a = ingot.asarray([7, -7])\n'
        '>>> b = ingot.asarray([2, 2])\n'
        '>>> ingot.floor_divide(a, b).tolist()\n'
        '[3, -4]\n'
    ),
    'remainder': (
        '>>> a = ingot.asarray([7, -7])\n'
        '>>> b = ingot.asarray([3, 3])\n'
        '>>> ingot.remainder(a, b).tolist()\n'
        '[1, 2]\n'
    ),
    'pow': (
        '>>> a = ingot.asarray([2.0, 3.0])\n'
        '>>> b = ingot.asarray([3.0, 0.5])\n'
        '>>> ingot.pow(a, b).tolist()\n'
        '[8.0, 1.7320...]\n'
    ),
    'maximum': (
        ">>> a = ingot.asarray([1.0, 5.0, float('nan')])\n"
        '>>> b = ingot.asarray([3.0, 2.0, 0.0])\n'
        '>>> ingot.maximum(a, b).tolist()\n'
        '[3.0, 5.0, nan]\n'
    ),
    'minimum': (
        ">>> a = ingot.asarray([1.0, 5.0, float('nan')])\n"
        '>>> b = ingot.asarray([3.0, 2.0, 0.0])\n'
        '>>> ingot.minimum(a, b).tolist()\n'
        '[1.0, 2.0, nan]\n'
    ),
    'atan2': (
        '>>> a = ingot.asarray([1.0, -1.0])\n'
        '>>> b = ingot.asarray([1.0, -1.0])\n'
        '>>> ingot.atan2(a, b).tolist()\n'
        '[0.7853..., -2.3561...]\n'
    ),
    'bitwise_and': (
        '>>> a = ingot.asarray([12, 10])\n'
        '>>> b = ingot.asarray([10, 6])\n'
        '>>> ingot.bitwise_and(a, b).tolist()\n'
        '[8, 2]\n'
    ),
    'bitwise_or': (
        '>>> a = ingot.asarray([12, 10])\n'
        '>>> b = ingot.asarray([10, 6])\n'
        '>>> ingot.bitwise_or(a, b).tolist()\n'
        '[14, 14]\n'
    ),
    'bitwise_xor': (
        '>>> a = ingot.asarray([12, 10])\n'
        '>>> b = ingot.asarray([10, 6])\n'
        '>>> ingot.bitwise_xor(a, b).tolist()\n'
        '[6, 12]\n'
    ),
    'bitwise_left_shift': (
        '>>> a = ingot.asarray([1, 3])\n'
        '>>> b = ingot.asarray([4, 1])\n'
        '>>> ingot.bitwise_left_shift(a, b).tolist()\n'
        '[16, 6]\n'
    ),
    'bitwise_right_shift': (
        '>>> a = ingot.asarray([16, -16])\n'
        '>>> b = ingot.asarray([2, 2])\n'
        '>>> ingot.bitwise_right_shift(a, b).tolist()\n'
        '[4, -4]\n'
    ),
    'logical_and': (
        '>>> a = ingot.asarray([True, True, False])\n'
        '>>> b = ingot.asarray([True, False, False])\n'
        '>>> ingot.logical_and(a, b).tolist()\n'
        '[True, False, False]\n'
    ),
    'logical_or': (
        '>>> a = ingot.asarray([True, True, False])\n'
        '>>> b = ingot.asarray([True, False, False])\n'
        '>>> ingot.logical_or(a, b).tolist()\n'
        '[True, True, False]\n'
    ),
    'logical_xor': (
        '>>> a = ingot.asarray([True, True, False])\n'
        '>>> b = ingot.asarray([True, False, False])\n'
        '>>> ingot.logical_xor(a, b).tolist()\n'
        '[False, True, False]\n'
    ),
    'equal': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([1, 0, 3])\n'
        '>>> ingot.equal(a, b).tolist()\n'
        '[True, False, True]\n'
    ),
    'not_equal': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([1, 0, 3])\n'
        '>>> ingot.not_equal(a, b).tolist()\n'
        '[False, True, False]\n'
    ),
    'less': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([2, 2, 2])\n'
        '>>> ingot.less(a, b).tolist()\n'
        '[True, False, False]\n'
    ),
    'less_equal': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([2, 2, 2])\n'
        '>>> ingot.less_equal(a, b).tolist()\n'
        '[True, True, False]\n'
    ),
    'greater': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([2, 2, 2])\n'
        '>>> ingot.greater(a, b).tolist()\n'
        '[False, False, True]\n'
    ),
    'greater_equal': (
        '>>> a = ingot.asarray([1, 2, 3])\n'
        '>>> b = ingot.asarray([2, 2, 2])\n'
        '>>> ingot.greater_equal(a, b).tolist()\n'
        '[False, True, True]\n'
    ),
    'copysign': (
        '>>> a = ingot.asarray([1.5, 2.0])\n'
        '>>> b = ingot.asarray([-1.0, 0.0])\n'
        '>>> ingot.copysign(a, b).tolist()\n'
        '[-1.5, 2.0]\n'
    ),
    'hypot': (
        '>>> a = ingot.asarray([3.0, 1e200])\n'
        '>>> b = ingot.asarray([4.0, 1e200])\n'
        '>>> ingot.hypot(a, b).tolist()\n'
        '[5.0, 1.4142...]\n'
    ),
    'logaddexp': (
        '>>> a = ingot.asarray([0.0, 1000.0])\n'
        '>>> b = ingot.asarray([0.0, 1000.0])\n'
        '>>> ingot.logaddexp(a, b).tolist()\n'
        '[0.6931..., 1000.6931...]\n'
    ),
    'nextafter': (
        '>>> a = ingot.asarray([1.0, 0.0])\n'
        '>>> b = ingot.asarray([2.0, 1.0])\n'
        '>>> ingot.nextafter(a, b).tolist()\n'
        '[1.0000..., 5e-324]\n'
    ),
    'where': (
        '>>> c = ingot.asarray([True, False, True])\n'
        '>>> ingot.where(c, ingot.asarray([1, 2, 3]), 0).tolist()\n'
        '[1, 0, 3]\n'
    ),
    'clip': (
        '>>> x = ingot.asarray([-2.0, 0.5, 3.0])\n'
        '>>> ingot.clip(x, 0.0, 1.0).tolist()\n'
        '[0.0, 0.5, 1.0]\n'
        '>>> ingot.clip(x, max=0.0).tolist()\n'
        '[-2.0, 0.0, 0.0]\n'
    ),
    'sum': (
        '>>> x = ingot.asarray([[1, 2, 3], [4, 5, 6]])\n'
        '>>> int(ingot.sum(x))\n'
        '21\n'
        '>>> ingot.sum(x, axis=0).tolist()\n'
        '[5, 7, 9]\n'
        '>>> ingot.sum(x, axis=1, keepdims=True).tolist()\n'
        '[[6], [15]]\n'
    ),
    'prod': (
        '>>> x = ingot.asarray([[1, 2, 3], [4, 5, 6]])\n'
        '>>> int(ingot.prod(x))\n'
        '720\n'
        '>>> ingot.prod(x, axis=1).tolist()\n'
        '[6, 120]\n'
    ),
    'mean': (
        '>>> x = ingot.asarray([[1.0, 2.0], [3.0, 5.0]])\n'
        '>>> float(ingot.mean(x))\n'
        '2.75\n'
        '>>> ingot.mean(x, axis=0).tolist()\n'
        '[2.0, 3.5]\n'
    ),
    'var': (
        '>>> x = ingot.asarray([1.0, 2.0, 3.0, 4.0])\n'
        '>>> float(ingot.var(x))\n'
        '1.25\n'
        '>>> float(ingot.var(x, correction=1))\n'
        '1.6666...\n'
    ),
    'std': (
        '>>> x = ingot.asarray([1.0, 3.0, 5.0, 7.0])\n'
        '>>> float(ingot.std(x))\n'
        '2.2360...\n'
        '>>> float(ingot.std(x, correction=1))\n'
        '2.5819...\n'
    ),
    'min': (
        '>>> x = ingot.asarray([[3, 1], [2, 4]])\n'
        '>>> int(ingot.min(x))\n'
        '1\n'
        '>>> ingot.min(x, axis=1).tolist()\n'
        '[1, 2]\n'
    ),
    'max': (
        '>>> x = ingot.asarray([[3, 1], [2, 4]])\n'
        '>>> int(ingot.max(x))\n'
        '4\n'
        '>>> ingot.max(x, axis=0).tolist()\n'
        '[3, 4]\n'
    ),
    'argmin': (
        '>>> x = ingot.asarray([[3, 1], [2, 4]])\n'
        '>>> int(ingot.argmin(x))\n'
        '1\n'
        '>>> ingot.argmin(x, axis=0).tolist()\n'
        '[1, 0]\n'
    ),
    'argmax': (
        '>>> x = ingot.asarray([[3, 1], [2, 4]])\n'
        '>>> int(ingot.argmax(x))\n'
        '3\n'
        '>>> ingot.argmax(x, axis=1).tolist()\n'
        '[0, 1]\n'
    ),
    'all': (
        '>>> x = ingot.asarray([[True, False], [True, True]])\n'
        '>>> bool(ingot.all(x))\n'
        'False\n'
        '>>> ingot.all(x, axis=0).tolist()\n'
        '[True, False]\n'
    ),
    'any': (
        '>>> x = ingot.asarray([[True, False], [False, False]])\n'
        '>>> bool(ingot.any(x))\n'
        'True\n'
        '>>> ingot.any(x, axis=1).tolist()\n'
        '[True, False]\n'
    ),
    'cumsum': (
        '>>> x = ingot.asarray([[1, 2], [3, 4]])\n'
        '>>> ingot.cumsum(x).tolist()\n'
        '[1, 3, 6, 10]\n'
        '>>> ingot.cumsum(x, axis=0).tolist()\n'
        '[[1, 2], [4, 6]]\n'
    ),
    'cumprod': (
        '>>> x = ingot.asarray([1, 2, 3, 4])\n'
        '>>> ingot.cumprod(x).tolist()\n'
        '[1, 2, 6, 24]\n'
    ),
    'matmul': (
        '>>> a = ingot.asarray([[1.0, 2.0], [3.0, 4.0]])\n'
        '>>> b = ingot.asarray([[1.0], [1.0]])\n'
        '>>> ingot.matmul(a, b).tolist()\n'
        '[[3.0], [7.0]]\n'
        '>>> (a @ a).tolist()\n'
        '[[7.0, 10.0], [15.0, 22.0]]\n'
    ),
    'matrix_transpose': (
        '>>> x = ingot.reshape(ingot.arange(6), (2, 3))\n'
        '>>> ingot.matrix_transpose(x).tolist()\n'
        '[[0, 3], [1, 4], [2, 5]]\n'
    ),
    'permute_dims': (
        '>>> x = ingot.zeros((2, 3, 4))\n'
        '>>> ingot.permute_dims(x, (2, 0, 1)).shape\n'
        '(4, 2, 3)\n'
    ),
    'transpose': (
        '>>> x = ingot.reshape(ingot.arange(6), (2, 3))\n'
        '>>> ingot.transpose(x).tolist()\n'
        '[[0, 3], [1, 4], [2, 5]]\n'
    ),
    'reshape': (
        '>>> x = ingot.arange(6)\n'
        '>>> ingot.reshape(x, (2, 3)).tolist()\n'
        '[[0, 1, 2], [3, 4, 5]]\n'
        '>>> ingot.reshape(x, (3, -1)).shape\n'
        '(3, 2)\n'
    ),
    'astype': (
        '>>> x = ingot.asarray([1.7, -2.2])\n'
        '>>> ingot.astype(x, ingot.int32).tolist()\n'
        '[1, -2]\n'
        '>>> ingot.astype(x, ingot.float32).dtype\n'
        'ingot.float32\n'
    ),
    'broadcast_to': (
        '>>> x = ingot.asarray([1, 2, 3])\n'
        '>>> ingot.broadcast_to(x, (2, 3)).tolist()\n'
        '[[1, 2, 3], [1, 2, 3]]\n'
    ),
    'broadcast_arrays': (
        '>>> a, b = ingot.broadcast_arrays(ingot.asarray([[1], [2]]), ingot.asarray([10, 20, 30]))\n'
        '>>> a.shape, b.shape\n'
        '((2, 3), (2, 3))\n'
        '>>> b.tolist()\n'
        '[[10, 20, 30], [10, 20, 30]]\n'
    ),
    'squeeze': (
        '>>> x = ingot.zeros((1, 3, 1))\n'
        '>>> ingot.squeeze(x, axis=(0, 2)).shape\n'
        '(3,)\n'
    ),
    'flip': (
        '>>> x = ingot.asarray([[1, 2], [3, 4]])\n'
        '>>> ingot.flip(x).tolist()\n'
        '[[4, 3], [2, 1]]\n'
        '>>> ingot.flip(x, axis=1).tolist()\n'
        '[[2, 1], [4, 3]]\n'
    ),
    'concat': (
        '>>> a = ingot.asarray([[1, 2]])\n'
        '>>> b = ingot.asarray([[3, 4]])\n'
        '>>> ingot.concat([a, b]).tolist()\n'
        '[[1, 2], [3, 4]]\n'
        '>>> ingot.concat([a, b], axis=1).tolist()\n'
        '[[1, 2, 3, 4]]\n'
    ),
    'stack': (
        '>>> a = ingot.asarray([1, 2])\n'
        '>>> b = ingot.asarray([3, 4])\n'
        '>>> ingot.stack([a, b]).tolist()\n'
        '[[1, 2], [3, 4]]\n'
        '>>> ingot.stack([a, b], axis=1).tolist()\n'
        '[[1, 3], [2, 4]]\n'
    ),
    'asarray': (
        '>>> x = ingot.asarray([1.0, 2.0])\n'
        '>>> x.dtype, x.shape\n'
        '(ingot.float64, (2,))\n'
        '>>> ingot.asarray(np.arange(3, dtype=np.int16)).dtype\n'
        'ingot.int16\n'
        '>>> ingot.asarray([1, 2], dtype=ingot.float32).tolist()\n'
        '[1.0, 2.0]\n'
    ),
    'empty': (
        '>>> x = ingot.empty((2, 3), dtype=ingot.float32)\n'
        '>>> x.shape, x.dtype\n'
        '((2, 3), ingot.float32)\n'
    ),
    'full': (
        '>>> ingot.full((2, 2), 7).tolist()\n'
        '[[7, 7], [7, 7]]\n'
        '>>> ingot.full(3, 0.5, dtype=ingot.float32).tolist()\n'
        '[0.5, 0.5, 0.5]\n'
    ),
    'zeros': (
        '>>> ingot.zeros((2, 2)).tolist()\n'
        '[[0.0, 0.0], [0.0, 0.0]]\n'
        '>>> ingot.zeros(3, dtype=ingot.int8).dtype\n'
        'ingot.int8\n'
    ),
    'ones': (
        '>>> ingot.ones((2, 3)).tolist()\n'
        '[[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]\n'
    ),
    'empty_like': (
        '>>> x = ingot.empty_like(ingot.asarray([1.0, 2.0, 3.0]))\n'
        '>>> x.shape, x.dtype\n'
        '((3,), ingot.float64)\n'
    ),
    'zeros_like': (
        '>>> ingot.zeros_like(ingot.asarray([[1, 2], [3, 4]])).tolist()\n'
        '[[0, 0], [0, 0]]\n'
    ),
    'ones_like': (
        '>>> ingot.ones_like(ingot.asarray([1.5, 2.5])).tolist()\n'
        '[1.0, 1.0]\n'
    ),
    'full_like': (
        '>>> ingot.full_like(ingot.asarray([1, 2, 3]), 9).tolist()\n'
        '[9, 9, 9]\n'
    ),
    'arange': (
        '>>> ingot.arange(5).tolist()\n'
        '[0, 1, 2, 3, 4]\n'
        '>>> ingot.arange(1.0, 2.0, 0.25).tolist()\n'
        '[1.0, 1.25, 1.5, 1.75]\n'
    ),
    'linspace': (
        '>>> ingot.linspace(0.0, 1.0, 5).tolist()\n'
        '[0.0, 0.25, 0.5, 0.75, 1.0]\n'
        '>>> ingot.linspace(0, 1, 4, endpoint=False).tolist()\n'
        '[0.0, 0.25, 0.5, 0.75]\n'
    ),
    'eye': (
        '>>> ingot.eye(3, dtype=ingot.int32).tolist()\n'
        '[[1, 0, 0], [0, 1, 0], [0, 0, 1]]\n'
        '>>> ingot.eye(2, 3, k=1).tolist()\n'
        '[[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]\n'
    ),
    'from_dlpack': (
        '>>> t = np.arange(4.0)\n'
        '>>> ingot.from_dlpack(t).tolist()\n'
        '[0.0, 1.0, 2.0, 3.0]\n'
    ),
    'linalg.cholesky': (
        '>>> a = ingot.asarray([[4.0, 2.0], [2.0, 3.0]])\n'
        '>>> L = ingot.linalg.cholesky(a)\n'
        '>>> L.tolist()\n'
        '[[2.0, 0.0], [1.0, 1.4142...]]\n'
        '>>> bool(ingot.all(ingot.abs(L @ L.T - a) < 1e-12))\n'
        'True\n'
    ),
    'linalg.cross': (
        '>>> ingot.linalg.cross(ingot.asarray([1.0, 0.0, 0.0]), ingot.asarray([0.0, 1.0, 0.0])).tolist()\n'
        '[0.0, 0.0, 1.0]\n'
    ),
    'linalg.det': (
        '>>> float(ingot.linalg.det(ingot.asarray([[1.0, 2.0], [3.0, 4.0]])))\n'
        '-2.0\n'
    ),
    'linalg.diagonal': (
        '>>> x = ingot.reshape(ingot.arange(9), (3, 3))\n'
        '>>> ingot.linalg.diagonal(x).tolist()\n'
        '[0, 4, 8]\n'
        '>>> ingot.linalg.diagonal(x, offset=1).tolist()\n'
        '[1, 5]\n'
    ),
    'linalg.eigh': (
        '>>> w, v = ingot.linalg.eigh(ingot.asarray([[2.0, 1.0], [1.0, 2.0]]))\n'
        '>>> w.tolist()\n'
        '[1.0, 3.0]\n'
        '>>> v.shape\n'
        '(2, 2)\n'
    ),
    'linalg.eigvalsh': (
        '>>> ingot.linalg.eigvalsh(ingot.asarray([[2.0, 0.0], [0.0, 3.0]])).tolist()\n'
        '[2.0, 3.0]\n'
    ),
    'linalg.inv': (
        '>>> ingot.linalg.inv(ingot.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()\n'
        '[[0.5, 0.0], [0.0, 0.25]]\n'
    ),
    'linalg.matmul': (
        '>>> ingot.linalg.matmul(ingot.asarray([[1, 2]]), ingot.asarray([[3], [4]])).tolist()\n'
        '[[11]]\n'
    ),
    'linalg.matrix_norm': (
        '>>> a = ingot.asarray([[3.0, 0.0], [0.0, 4.0]])\n'
        '>>> float(ingot.linalg.matrix_norm(a))\n'
        '5.0\n'
        '>>> float(ingot.linalg.matrix_norm(a, ord=1))\n'
        '4.0\n'
    ),
    'linalg.matrix_power': (
        '>>> ingot.linalg.matrix_power(ingot.asarray([[1, 1], [0, 1]]), 3).tolist()\n'
        '[[1, 3], [0, 1]]\n'
    ),
    'linalg.matrix_rank': (
        '>>> int(ingot.linalg.matrix_rank(ingot.asarray([[1.0, 2.0], [2.0, 4.0]])))\n'
        '1\n'
    ),
    'linalg.matrix_transpose': (
        '>>> ingot.linalg.matrix_transpose(ingot.asarray([[1, 2, 3]])).tolist()\n'
        '[[1], [2], [3]]\n'
    ),
    'linalg.outer': (
        '>>> ingot.linalg.outer(ingot.asarray([1, 2]), ingot.asarray([1, 10, 100])).tolist()\n'
        '[[1, 10, 100], [2, 20, 200]]\n'
    ),
    'linalg.pinv': (
        '>>> ingot.linalg.pinv(ingot.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()\n'
        '[[0.5, 0.0], [0.0, 0.0]]\n'
    ),
    'linalg.qr': (
        '>>> a = ingot.asarray([[3.0, 1.0], [4.0, 2.0]])\n'
        '>>> q, r = ingot.linalg.qr(a)\n'
        '>>> q.shape, r.shape\n'
        '((2, 2), (2, 2))\n'
        '>>> bool(ingot.all(ingot.abs(q @ r - a) < 1e-12))\n'
        'True\n'
    ),
    'linalg.slogdet': (
        '>>> sign, logabsdet = ingot.linalg.slogdet(ingot.asarray([[2.0, 0.0], [0.0, -3.0]]))\n'
        '>>> float(sign), float(logabsdet)\n'
        '(-1.0, 1.7917...)\n'
    ),
    'linalg.solve': (
        '>>> a = ingot.asarray([[3.0, 1.0], [1.0, 2.0]])\n'
        '>>> b = ingot.asarray([9.0, 8.0])\n'
        '>>> ingot.linalg.solve(a, b).tolist()\n'
        '[2.0, 3.0]\n'
    ),
    'linalg.svd': (
        '>>> u, s, vh = ingot.linalg.svd(ingot.asarray([[3.0, 0.0], [0.0, -2.0]]))\n'
        '>>> s.tolist()\n'
        '[3.0, 2.0]\n'
        '>>> u.shape, vh.shape\n'
        '((2, 2), (2, 2))\n'
    ),
    'linalg.svdvals': (
        '>>> ingot.linalg.svdvals(ingot.asarray([[3.0, 0.0], [0.0, -2.0]])).tolist()\n'
        '[3.0, 2.0]\n'
    ),
    'linalg.tensordot': (
        '>>> a = ingot.ones((2, 3))\n'
        '>>> b = ingot.ones((3, 4))\n'
        '>>> ingot.linalg.tensordot(a, b, axes=1).shape\n'
        '(2, 4)\n'
        '>>> float(ingot.linalg.tensordot(a, a, axes=2))\n'
        '6.0\n'
    ),
    'linalg.trace': (
        '>>> float(ingot.linalg.trace(ingot.asarray([[1.0, 2.0], [3.0, 4.0]])))\n'
        '5.0\n'
    ),
    'linalg.vecdot': (
        '>>> ingot.linalg.vecdot(ingot.asarray([[1.0, 2.0], [3.0, 4.0]]), ingot.asarray([1.0, 1.0])).tolist()\n'
        '[3.0, 7.0]\n'
    ),
    'linalg.vector_norm': (
        '>>> x = ingot.asarray([3.0, -4.0])\n'
        '>>> float(ingot.linalg.vector_norm(x))\n'
        '5.0\n'
        '>>> float(ingot.linalg.vector_norm(x, ord=1))\n'
        '7.0\n'
    ),
    'random.default_rng': (
        '>>> g = ingot.random.default_rng(42)\n'
        '>>> x = g.random(5)\n'
        '>>> x.shape, x.dtype\n'
        '((5,), ingot.float64)\n'
        '>>> bool(ingot.all((x >= 0) & (x < 1)))\n'
        'True\n'
        '>>> ingot.random.default_rng(42).random(5).tolist() == x.tolist()\n'
        'True\n'
    ),
    'finfo': (
        '>>> ingot.finfo(ingot.float32).eps\n'
        '1.1920...\n'
        '>>> ingot.finfo(ingot.float16).max\n'
        '65504.0\n'
    ),
    'iinfo': (
        '>>> ingot.iinfo(ingot.int8).min, ingot.iinfo(ingot.int8).max\n'
        '(-128, 127)\n'
    ),
    'result_type': (
        '>>> ingot.result_type(ingot.int8, ingot.uint8)\n'
        'ingot.int16\n'
        '>>> ingot.result_type(ingot.asarray([1.0], dtype=ingot.float32), 2.0)\n'
        'ingot.float32\n'
    ),
    'can_cast': (
        '>>> ingot.can_cast(ingot.int8, ingot.int16)\n'
        'True\n'
        '>>> ingot.can_cast(ingot.float64, ingot.float32)\n'
        'False\n'
    ),
    'isdtype': (
        ">>> ingot.isdtype(ingot.float32, 'real floating')\n"
        'True\n'
        ">>> ingot.isdtype(ingot.int32, ('bool', 'unsigned integer'))\n"
        'False\n'
    ),
    '__array_namespace_info__': (
        '>>> info = ingot.__array_namespace_info__()\n'
        ">>> info.default_dtypes()['integral']\n"
        'ingot.int64\n'
        ">>> 'float32' in info.dtypes()\n"
        'True\n'
    ),
}


def attach(namespace: Any) -> None:
    """Appends each example to the docstring of its function in ``namespace`` (the ``ingot``
    module; ``"linalg.solve"`` names ``ingot.linalg.solve``)."""
    for name, example in EXAMPLES.items():
        obj = namespace
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is None:
            continue
        doc = obj.__doc__ or ""
        if ">>>" in doc:
            continue
        indented = "".join("    " + line if line.strip() else line for line in example.splitlines(True))
        obj.__doc__ = doc.rstrip() + "\n\nExample::\n\n" + indented
