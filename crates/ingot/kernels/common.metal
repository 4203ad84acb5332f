// ingot built-in kernels: shared definitions (prepended to every module).
//
// Element types: bool arrays are `bool` (1 byte, 0 or 1), int8 `char` (signed, as in MSL),
// float16 `half`, bfloat16 `bfloat`, float64 `double` (CUDA and CPU only).
// Every kernel runs a grid-stride loop over a 1-D dispatch of threadgroups.
#include <metal_stdlib>
using namespace metal;

// ---- element traits -------------------------------------------------------------------------
// kind: 0 bool, 1 signed integer, 2 unsigned integer, 3 float.
// W: the unsigned type integer arithmetic wraps in (at least 32 bits, so no promotion to int).
// C: the type float math is computed in (float for half and bfloat).
template <class T> struct Tr;
template <> struct Tr<bool> { enum { kind = 0, bits = 8 }; typedef uint W; typedef float C; };
template <> struct Tr<char> { enum { kind = 1, bits = 8 }; typedef uint W; typedef float C; };
template <> struct Tr<short> { enum { kind = 1, bits = 16 }; typedef uint W; typedef float C; };
template <> struct Tr<int> { enum { kind = 1, bits = 32 }; typedef uint W; typedef float C; };
template <> struct Tr<long> { enum { kind = 1, bits = 64 }; typedef ulong W; typedef double C; };
template <> struct Tr<uchar> { enum { kind = 2, bits = 8 }; typedef uint W; typedef float C; };
template <> struct Tr<ushort> { enum { kind = 2, bits = 16 }; typedef uint W; typedef float C; };
template <> struct Tr<uint> { enum { kind = 2, bits = 32 }; typedef uint W; typedef float C; };
template <> struct Tr<ulong> { enum { kind = 2, bits = 64 }; typedef ulong W; typedef double C; };
template <> struct Tr<half> { enum { kind = 3, bits = 16 }; typedef uint W; typedef float C; };
template <> struct Tr<bfloat> { enum { kind = 3, bits = 16 }; typedef uint W; typedef float C; };
template <> struct Tr<float> { enum { kind = 3, bits = 32 }; typedef uint W; typedef float C; };
// ops/gpu/library.rs defines INGOT_NO_F64 for devices without double (Metal).
#ifndef INGOT_NO_F64
template <> struct Tr<double> { enum { kind = 3, bits = 64 }; typedef ulong W; typedef double C; };
#define INGOT_HAS_F64 1
#endif

// ---- conversions (NumPy's astype on x86-64) -----------------------------------------------------
// Float to integer as cvttsd2si: NaN and out-of-range give the minimum of int32 (small types,
// then wrapped) or int64; uint64 from a negative value wraps through int64.
inline int f2i32(float v) { return (v > -2147483649.0f && v < 2147483648.0f) ? int(v) : int(0x80000000u); }
inline long f2i64(float v) {
  return (v >= -9223372036854775808.0f && v < 9223372036854775808.0f) ? long(v) : long(0x8000000000000000ul);
}
inline ulong f2u64(float v) {
  if (v >= 0.0f && v < 18446744073709551616.0f) return ulong(v);
  if (v >= -9223372036854775808.0f && v < 0.0f) return ulong(long(v));
  return 0x8000000000000000ul;
}
#ifdef INGOT_HAS_F64
inline int f2i32(double v) { return (v > -2147483649.0 && v < 2147483648.0) ? int(v) : int(0x80000000u); }
inline long f2i64(double v) {
  return (v >= -9223372036854775808.0 && v < 9223372036854775808.0) ? long(v) : long(0x8000000000000000ul);
}
inline ulong f2u64(double v) {
  if (v >= 0.0 && v < 18446744073709551616.0) return ulong(v);
  if (v >= -9223372036854775808.0 && v < 0.0) return ulong(long(v));
  return 0x8000000000000000ul;
}
// double -> float rounded to odd, so that a second rounding to half/bfloat is exact.
inline float f64_to_f32_odd(double d) {
  float f = float(d);
  double back = double(f);
  if (back != d && isfinite(f)) {
    uint b = as_type<uint>(f);
    if ((b & 1u) == 0u) {
      bool neg = (b >> 31) != 0u;
      b = ((back < d) != neg) ? b + 1u : b - 1u;
      f = as_type<float>(b);
    }
  }
  return f;
}
#endif

// The value of a float-like S as float (or double) for the integer conversions.
template <class S> inline typename Tr<S>::C fval(S s) { return typename Tr<S>::C(s); }

// Integer destination from a float source.
template <class D> struct FromF;
template <> struct FromF<char> { template <class F> static char f(F v) { return char(f2i32(v)); } };
template <> struct FromF<short> { template <class F> static short f(F v) { return short(f2i32(v)); } };
template <> struct FromF<int> { template <class F> static int f(F v) { return f2i32(v); } };
template <> struct FromF<long> { template <class F> static long f(F v) { return f2i64(v); } };
template <> struct FromF<uchar> { template <class F> static uchar f(F v) { return uchar(f2i32(v)); } };
template <> struct FromF<ushort> { template <class F> static ushort f(F v) { return ushort(f2i32(v)); } };
template <> struct FromF<uint> { template <class F> static uint f(F v) { return uint(f2i64(v)); } };
template <> struct FromF<ulong> { template <class F> static ulong f(F v) { return f2u64(v); } };

// Cvt<DK, SK>: conversion by (destination kind, source kind).
template <int DK, int SK> struct CvtK {
  // integer/bool -> integer, integer -> float/double (exact or correctly rounded by the cast).
  template <class D, class S> static D f(S s) { return D(s); }
};
// anything -> bool
template <int SK> struct CvtK<0, SK> { template <class D, class S> static D f(S s) { return s != S(0); } };
template <> struct CvtK<0, 3> { template <class D, class S> static D f(S s) { return fval(s) != 0; } };
template <> struct CvtK<0, 0> { template <class D, class S> static D f(S s) { return s; } };
// float -> integer
template <> struct CvtK<1, 3> { template <class D, class S> static D f(S s) { return FromF<D>::f(fval(s)); } };
template <> struct CvtK<2, 3> { template <class D, class S> static D f(S s) { return FromF<D>::f(fval(s)); } };
// bool -> integer / float
template <> struct CvtK<1, 0> { template <class D, class S> static D f(S s) { return D(s ? 1 : 0); } };
template <> struct CvtK<2, 0> { template <class D, class S> static D f(S s) { return D(s ? 1 : 0); } };
template <> struct CvtK<3, 0> { template <class D, class S> static D f(S s) { return D(s ? 1.0f : 0.0f); } };

// Destination-specific float conversions (half and bfloat from wide sources round once).
template <class D> struct ToFloat {
  template <class S> static D f(S s) { return D(s); }
};
template <> struct ToFloat<half> {
  static half f(half s) { return s; }
  static half f(float s) { return half(s); }
  static half f(bfloat s) { return half(float(s)); }
#ifdef INGOT_HAS_F64
  static half f(double s) { return half(f64_to_f32_odd(s)); }
  template <class S> static half f(S s) { return half(f64_to_f32_odd(double(s))); }
#else
  template <class S> static half f(S s) { return half(float(s)); }
#endif
};
template <> struct ToFloat<bfloat> {
  static bfloat f(bfloat s) { return s; }
  static bfloat f(float s) { return bfloat(s); }
  static bfloat f(half s) { return bfloat(float(s)); }
#ifdef INGOT_HAS_F64
  static bfloat f(double s) { return bfloat(f64_to_f32_odd(s)); }
  template <class S> static bfloat f(S s) { return bfloat(f64_to_f32_odd(double(s))); }
#else
  template <class S> static bfloat f(S s) { return bfloat(float(s)); }
#endif
};
template <> struct ToFloat<float> {
  static float f(half s) { return float(s); }
  static float f(bfloat s) { return float(s); }
  template <class S> static float f(S s) { return float(s); }
};
#ifdef INGOT_HAS_F64
template <> struct ToFloat<double> {
  static double f(half s) { return double(float(s)); }
  static double f(bfloat s) { return double(float(s)); }
  template <class S> static double f(S s) { return double(s); }
};
#endif
template <int SK> struct CvtK<3, SK> { template <class D, class S> static D f(S s) { return ToFloat<D>::f(s); } };

// The conversion of NumPy's astype from S to D.
template <class D, class S> inline D cvt(S s) { return CvtK<Tr<D>::kind, Tr<S>::kind>::template f<D, S>(s); }

// ---- vector packs (16-byte loads and stores on aligned contiguous data) ------------------------
template <class T, int N> struct alignas(sizeof(T) * N) Pack { T v[N]; };
// Elements per pack for a kernel reading A and writing R: 16 bytes of the wider type.
template <class A, class R> struct PackN {
  enum { n = 16 / (sizeof(A) > sizeof(R) ? sizeof(A) : sizeof(R)) };
};

// ---- chunked iteration of contiguous elementwise kernels ----------------------------------------
// Measured on an H100 (benches/experiments/cuda_variants.py): one pass in which each threadgroup
// owns a contiguous chunk of 2 x 256 packs and each thread two packs 256 apart reaches the copy
// bandwidth, where a grid-stride loop over one wave of groups stayed ~6% below it. Groups still
// step over chunks (gid, gid + ng, ...) so any grid size is correct. Launch with 256 threads.
#define INGOT_EW_KERNEL [[max_total_threads_per_threadgroup(256)]] kernel
#define INGOT_CHUNK_IDS                                                                     \
  uint lid [[thread_index_in_threadgroup]], uint nl [[threads_per_threadgroup]],            \
      uint gid [[threadgroup_position_in_grid]], uint ng [[threadgroups_per_grid]]
// Declares j0 and j1 (the thread's two packs of the current chunk; either may be >= NV).
#define INGOT_CHUNKS(NV)                                                                   \
  for (ulong c0 = ulong(gid) * 2ul * nl, j0 = c0 + lid, j1 = j0 + nl; c0 < (NV);          \
       c0 += ulong(ng) * 2ul * nl, j0 = c0 + lid, j1 = j0 + nl)
// The elements past the last whole pack (or all of them when unaligned): grid-stride over I.
#define INGOT_TAIL(I, FROM, TO)                                                            \
  for (ulong I = (FROM) + ulong(gid) * nl + lid; I < (TO); I += ulong(ng) * nl)

// ---- strided geometry ---------------------------------------------------------------------------
// Up to 8 dimensions and 4 operands; strides and offsets in elements, relative to each operand's
// base pointer (the host passes the lowest element the view touches as the base).
struct Geom {
  ulong n;          // elements
  uint ndim;
  uint vec;         // contiguous kernels: 1 when every pointer is 16-byte aligned
  ulong shape[8];
  long off[4];
  long st[4][8];
};

// The geometry of contiguous kernels: the first fields of Geom only (kernel parameters are
// copied at every launch: 16 bytes instead of Geom's 368).
struct EGeom {
  ulong n;
  uint ndim;        // binary_contig: the broadcast mode
  uint vec;
};

// Offsets of element i (row-major over shape) for operands 0..K-1.
template <int K> inline void geom_offsets(constant Geom& g, ulong i, thread long* o) {
  for (int k = 0; k < K; ++k) o[k] = g.off[k];
  if (g.n <= 0xFFFFFFFFul) {
    uint r = uint(i);
    for (int d = int(g.ndim) - 1; d >= 0; --d) {
      uint s = uint(g.shape[d]);
      uint c = r % s;
      r /= s;
      for (int k = 0; k < K; ++k) o[k] += long(c) * g.st[k][d];
    }
  } else {
    ulong r = i;
    for (int d = int(g.ndim) - 1; d >= 0; --d) {
      ulong c = r % g.shape[d];
      r /= g.shape[d];
      for (int k = 0; k < K; ++k) o[k] += long(c) * g.st[k][d];
    }
  }
}

// ---- math helpers --------------------------------------------------------------------------------
// expm1 and log1p: ingot's prelude has them on CUDA and the CPU; Apple's metal_stdlib does not
// (Kahan's forms there). ops/gpu/library.rs defines INGOT_NATIVE_METAL for engines that compile
// MSL natively.
#ifdef INGOT_NATIVE_METAL
inline float x_expm1(float x) {
  float u = exp(x);
  if (u == 1.0f) return x;
  float um = u - 1.0f;
  if (um == -1.0f) return -1.0f;
  if (isinf(u)) return u;
  return um * x / log(u);
}
inline float x_log1p(float x) {
  float u = 1.0f + x;
  if (u == 1.0f) return x;
  if (isinf(u)) return u;
  return log(u) * x / (u - 1.0f);
}
#else
template <class F> inline F x_expm1(F x) { return expm1(x); }
template <class F> inline F x_log1p(F x) { return log1p(x); }
#endif

// Wrapping integer arithmetic (in the unsigned type W, so no signed overflow, no promotion to int).
template <class T> inline T wadd(T a, T b) { typedef typename Tr<T>::W W; return T(W(a) + W(b)); }
template <class T> inline T wsub(T a, T b) { typedef typename Tr<T>::W W; return T(W(a) - W(b)); }
template <class T> inline T wmul(T a, T b) { typedef typename Tr<T>::W W; return T(W(a) * W(b)); }
template <class T> inline T wneg(T a) { typedef typename Tr<T>::W W; return T(W(0) - W(a)); }
// x in the float compute type (float for half/bfloat).
template <class T> inline typename Tr<T>::C cf(T x) { return typename Tr<T>::C(x); }
