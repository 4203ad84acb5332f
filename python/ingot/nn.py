"""``ingot.nn``: row-wise functions of neural-network code: ``softmax``, ``log_softmax``,
``logsumexp``.

They live here, not in the main namespace, because the array API standard has no such
functions: the main namespace stays the standard's (plus NumPy spellings), and what is ingot's
own goes in a named module, as ``ingot.linalg`` and ``ingot.random`` (the layout of
``torch.nn.functional`` / ``jax.nn``; ``logsumexp`` is also ``scipy.special.logsumexp``).

On GPUs each is one launch of a row kernel (MSL, compiled through the translator like any
kernel), one threadgroup per row. Rows of up to 8,192 values stay in the threads' registers: the
row is read once, its maximum and then its sum of ``exp(x - max)`` are reduced over the
threadgroup, and the output is written from the registers. Longer rows take an online pass (a
running maximum and a running sum rescaled when the maximum grows) and a second sweep that the
GPU's cache mostly serves. The arithmetic is in float32 for 16-
and 32-bit floats and float64 for float64. On the CPU they are compositions of the native
vectorised ops (max, subtract, exp, sum), which are at NumPy's speed there without a compile.
Integer inputs are converted to the default float dtype first.
"""

from __future__ import annotations

import builtins
import os
from typing import Any, Dict, Optional, Sequence, Tuple, Union

from . import _functions as F
from ._creation import full, zeros_like
from . import _ingot
from ._ingot import Array

__all__ = ["softmax", "log_softmax", "logsumexp"]

Axis = Optional[Union[int, Tuple[int, ...]]]

_SRC = """
#include <metal_stdlib>
using namespace metal;

// Running (maximum, sum of exp(x - maximum)) of one thread, then of the threadgroup.
inline void sm_push(thread C& m, thread C& s, C v) {
  if (v > m) {
    s = s * exp(m - v) + C(1);
    m = v;
  } else {
    s += (v == m) ? C(1) : exp(v - m);
  }
}
inline void sm_merge(thread C& m, thread C& s, C m2, C s2) {
  C mm = max(m, m2);
  if (mm == -C(INFINITY)) {
    s = s + s2;
  } else {
    s = s * (m == mm ? C(1) : exp(m - mm)) + s2 * (m2 == mm ? C(1) : exp(m2 - mm));
  }
  m = mm;
}

// The threadgroup's maximum / sum of one value per thread: a SIMD-group reduction, then every
// thread folds the SIMD groups' partials (at most 256 / SIMD width of them).
inline C group_max(C v, threadgroup C* part, uint sg, uint nsg, uint lane) {
  v = simd_max(v);
  if (lane == 0u) part[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  C r = part[0];
  for (uint i = 1u; i < nsg; ++i) r = max(r, part[i]);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return r;
}
inline C group_sum(C v, threadgroup C* part, uint sg, uint nsg, uint lane) {
  v = simd_sum(v);
  if (lane == 0u) part[sg] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  C r = part[0];
  for (uint i = 1u; i < nsg; ++i) r += part[i];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return r;
}

// Values of a row one thread keeps in registers: rows up to 256 * HELD are read from memory once
// (maximum, then the sum of exponentials, then the output from the registers); longer rows take
// the online pass and a second sweep that the cache mostly serves.
#define HELD 32u

// MODE 0: softmax, 1: log_softmax (rows of K written to out), 2: logsumexp (out[row]).
[[max_total_threads_per_threadgroup(256)]] kernel void softmax_rows(
    device const T* x [[buffer(0)]], device T* out [[buffer(1)]],
    constant ulong& M [[buffer(2)]], constant ulong& K [[buffer(3)]],
    constant uint& mode [[buffer(4)]],
    uint lid [[thread_index_in_threadgroup]], uint gid [[threadgroup_position_in_grid]],
    uint ng [[threadgroups_per_grid]], uint sg [[simdgroup_index_in_threadgroup]],
    uint nsg [[simdgroups_per_threadgroup]], uint lane [[thread_index_in_simdgroup]]) {
  threadgroup C sm[256];
  threadgroup C ss[256];
  for (ulong r = gid; r < M; r += ng) {
    device const T* xr = x + r * K;
    device T* o = out + r * K;
    if (K <= ulong(HELD) * 256ul) {
      C v[HELD];
      C lm = -C(INFINITY);
      for (uint j = 0u; j < HELD; ++j) {
        const ulong k = ulong(lid) + ulong(j) * 256ul;
        v[j] = k < K ? C(xr[k]) : -C(INFINITY);
        lm = max(lm, v[j]);
      }
      const C mx = group_max(lm, sm, sg, nsg, lane);
      // A row of infinities is shifted by 0 (as the composed form): -inf rows sum to 0, +inf to inf.
      const C shift = isfinite(mx) ? mx : C(0);
      C ls = C(0);
      for (uint j = 0u; j < HELD; ++j) ls += exp(v[j] - shift);
      const C sum = group_sum(ls, ss, sg, nsg, lane);
      if (mode == 2u) {
        if (lid == 0u) out[r] = T(shift + log(sum));
      } else if (mode == 1u) {
        const C sub = shift + log(sum);
        for (uint j = 0u; j < HELD; ++j) {
          const ulong k = ulong(lid) + ulong(j) * 256ul;
          if (k < K) o[k] = T(v[j] - sub);
        }
      } else {
        const C inv = C(1) / sum;
        for (uint j = 0u; j < HELD; ++j) {
          const ulong k = ulong(lid) + ulong(j) * 256ul;
          if (k < K) o[k] = T(exp(v[j] - shift) * inv);
        }
      }
      continue;
    }
    C m = -C(INFINITY), s = C(0);
    for (ulong k = lid; k < K; k += 256ul) sm_push(m, s, C(xr[k]));
    sm[lid] = m;
    ss[lid] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint h = 128u; h > 0u; h >>= 1) {
      if (lid < h) {
        C a = sm[lid], b = ss[lid];
        sm_merge(a, b, sm[lid + h], ss[lid + h]);
        sm[lid] = a;
        ss[lid] = b;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    const C mx = sm[0], sum = ss[0];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (mode == 2u) {
      if (lid == 0u) out[r] = T(mx + log(sum));
    } else if (mode == 1u) {
      const C sub = mx + log(sum);
      for (ulong k = lid; k < K; k += 256ul) o[k] = T(C(xr[k]) - sub);
    } else {
      const C inv = C(1) / sum;
      for (ulong k = lid; k < K; k += 256ul) o[k] = T(exp(C(xr[k]) - mx) * inv);
    }
  }
}
"""

_MSL = {"float16": ("half", "float"), "bfloat16": ("bfloat", "float"),
        "float32": ("float", "float"), "float64": ("double", "double")}
_KERNELS: Dict[Tuple[str, str], Any] = {}

# Tests set this to run the row kernel on the CPU too (it is what the GPUs run).
_FORCE_KERNEL = os.environ.get("INGOT_NN_KERNEL", "") == "1"


def _kernel(device: Any, dtype: Any) -> Any:
    key = (str(device), dtype.name)
    k = _KERNELS.get(key)
    if k is None:
        t, c = _MSL[dtype.name]
        src = f"typedef {t} T;\ntypedef {c} C;\n" + _SRC
        lib = _ingot.compile(src, device=device, file_name="ingot/nn/softmax_rows.metal")
        k = lib.function("softmax_rows")
        _KERNELS[key] = k
    return k


def _float(x: Array, name: str) -> Array:
    if not isinstance(x, Array):
        raise TypeError(f"{name}: expected an ingot array, got {type(x).__name__}")
    if x.dtype.name in _MSL:
        return x
    return x.astype(_default_float(x))


def _default_float(x: Array) -> Any:
    from ._info import __array_namespace_info__

    return __array_namespace_info__().default_dtypes(device=x.device)["real floating"]


def _use_kernel(x: Array) -> builtins.bool:
    return _FORCE_KERNEL or not str(x.device).startswith("cpu")


def _axes(axis: Axis, nd: int, name: str) -> Tuple[int, ...]:
    if axis is None:
        return tuple(range(nd))
    seq = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in seq:
        if not isinstance(a, int):
            raise TypeError(f"{name}: axis must be an int, a tuple of ints or None")
        if not -nd <= a < nd:
            raise ValueError(f"{name}: axis {a} is out of range for {nd} dimensions")
        out.append(a % nd)
    if len(set(out)) != len(out):
        raise ValueError(f"{name}: repeated axis in {axis}")
    return tuple(sorted(out))


def _rows(x: Array, axes: Sequence[int]) -> Tuple[Array, Tuple[int, ...], Tuple[int, ...]]:
    """``x`` with the kept axes first and ``axes`` last, as a contiguous (M, K) matrix."""
    kept = [i for i in range(x.ndim) if i not in axes]
    perm = kept + list(axes)
    p = F.permute_dims(x, perm) if perm != list(range(x.ndim)) else x
    m = 1
    for i in kept:
        m *= x.shape[i]
    k = 1
    for i in axes:
        k *= x.shape[i]
    return F.reshape(p, (m, k)), tuple(perm), tuple(x.shape[i] for i in perm)


def _run_rows(x: Array, axes: Sequence[int], mode: int) -> Tuple[Array, Tuple[int, ...], Tuple[int, ...]]:
    xm, perm, pshape = _rows(x, axes)
    m, k = xm.shape
    kern = _kernel(x.device, x.dtype)
    if mode == 2:
        out = _ingot.empty((m,), dtype=x.dtype, device=x.device)
    else:
        out = _ingot.empty((m, k), dtype=x.dtype, device=x.device)
    if m > 0:
        kern(xm, out, m, k, mode, groups=(builtins.min(m, 1 << 20),), threadgroup=(256,))
    return out, perm, pshape


def _inverse(perm: Sequence[int]) -> Tuple[int, ...]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


def _rowwise(x: Array, axis: int, mode: int, name: str) -> Array:
    x = _float(x, name)
    if x.ndim == 0:
        raise ValueError(f"{name}: needs at least one dimension")
    (a,) = _axes(axis, x.ndim, name)
    if x.size == 0 or not _use_kernel(x):
        m = F.max(x, axis=a, keepdims=True)
        m = F.where(F.isfinite(m), m, zeros_like(m))
        z = F.subtract(x, m)
        if mode == 1:
            return F.subtract(z, F.log(F.sum(F.exp(z), axis=a, keepdims=True)))
        e = F.exp(z)
        return F.divide(e, F.sum(e, axis=a, keepdims=True))
    out, perm, pshape = _run_rows(x, (a,), mode)
    out = F.reshape(out, pshape)
    inv = _inverse(perm)
    return F.permute_dims(out, inv) if inv != tuple(range(len(inv))) else out


def softmax(x: Array, /, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x), axis)``, computed stably (the maximum along ``axis`` subtracted).

    One row kernel launch on GPUs; float16/bfloat16 compute in float32.
    """
    return _rowwise(x, axis, 0, "softmax")


def log_softmax(x: Array, /, axis: int = -1) -> Array:
    """``x - logsumexp(x, axis, keepdims=True)``: the logarithm of ``softmax``, computed stably."""
    return _rowwise(x, axis, 1, "log_softmax")


def logsumexp(x: Array, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Array:
    """``log(sum(exp(x), axis))`` without overflow (SciPy's ``logsumexp``); all axes when None.

    An all ``-inf`` slice gives ``-inf``; ``+inf`` anywhere gives ``+inf``; NaN propagates.
    """
    x = _float(x, "logsumexp")
    axes = _axes(axis, x.ndim, "logsumexp")
    kshape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    shape = kshape if keepdims else tuple(s for i, s in enumerate(x.shape) if i not in axes)
    if not axes:
        return F.reshape(F.astype(x, x.dtype), shape)
    if x.size == 0 or not _use_kernel(x):
        m = F.max(x, axis=axes, keepdims=True) if x.size else full(kshape, float("-inf"), dtype=x.dtype, device=x.device)
        m = F.where(F.isfinite(m), m, zeros_like(m))
        r = F.add(F.log(F.sum(F.exp(F.subtract(x, m)), axis=axes, keepdims=True)), m)
        return F.reshape(r, shape)
    out, _, _ = _run_rows(x, axes, 2)
    return F.reshape(out, shape)
