// ingot prelude: the `__metal_*` compiler intrinsics that some libraries call directly (MLX's
// bf16_math.h builds its bfloat overloads on them), and the fast-math flag macros they take.
// Each forwards to the metal:: function of the same meaning; the flag is ignored (the math mode
// is the library's, INGOT_FAST_MATH).
#pragma once

#define __METAL_FAST_MATH__ true
#define __METAL_PRECISE_MATH__ false
#define __METAL_MAYBE_FAST_MATH__ (INGOT_FAST_MATH != 0)

#define INGOT_INTRIN1(n)                                                                   \
  template <class T>                                                                       \
  INGOT_FN auto __metal_##n(T x, bool = false)->decltype(::metal::n(x)) {                  \
    return ::metal::n(x);                                                                  \
  }
#define INGOT_INTRIN2(n)                                                                   \
  template <class T>                                                                       \
  INGOT_FN auto __metal_##n(T x, T y, bool = false)->decltype(::metal::n(x, y)) {          \
    return ::metal::n(x, y);                                                               \
  }
#define INGOT_INTRIN3(n)                                                                   \
  template <class T>                                                                       \
  INGOT_FN auto __metal_##n(T x, T y, T z, bool = false)->decltype(::metal::n(x, y, z)) {  \
    return ::metal::n(x, y, z);                                                            \
  }

INGOT_INTRIN1(fabs) INGOT_INTRIN1(acos) INGOT_INTRIN1(acosh) INGOT_INTRIN1(asin)
INGOT_INTRIN1(asinh) INGOT_INTRIN1(atan) INGOT_INTRIN1(atanh) INGOT_INTRIN1(ceil)
INGOT_INTRIN1(cos) INGOT_INTRIN1(cosh) INGOT_INTRIN1(cospi) INGOT_INTRIN1(exp)
INGOT_INTRIN1(exp10) INGOT_INTRIN1(exp2) INGOT_INTRIN1(floor) INGOT_INTRIN1(fract)
INGOT_INTRIN1(log) INGOT_INTRIN1(log10) INGOT_INTRIN1(log2) INGOT_INTRIN1(rint)
INGOT_INTRIN1(round) INGOT_INTRIN1(rsqrt) INGOT_INTRIN1(sin) INGOT_INTRIN1(sinh)
INGOT_INTRIN1(sinpi) INGOT_INTRIN1(sqrt) INGOT_INTRIN1(tan) INGOT_INTRIN1(tanh)
INGOT_INTRIN1(tanpi) INGOT_INTRIN1(trunc)
INGOT_INTRIN2(atan2) INGOT_INTRIN2(fmax) INGOT_INTRIN2(fmin) INGOT_INTRIN2(fmod)
INGOT_INTRIN2(nextafter) INGOT_INTRIN2(pow) INGOT_INTRIN2(powr)
INGOT_INTRIN3(fma) INGOT_INTRIN3(fmax3) INGOT_INTRIN3(fmin3) INGOT_INTRIN3(fmedian3)

template <class T> INGOT_FN T __metal_divide(T x, T y, bool = false) { return x / y; }
template <class T> INGOT_FN T __metal_frexp(T x, int* e) { return ::metal::frexp(x, *e); }
template <class T> INGOT_FN T __metal_frexp(T x, int& e) { return ::metal::frexp(x, e); }
template <class T> INGOT_FN T __metal_ldexp(T x, int k, bool = false) { return ::metal::ldexp(x, k); }

// SIMD-group intrinsics (the argument of the two queries only selects their type).
INGOT_FN unsigned short __metal_get_simdgroup_size(unsigned short) { return 32; }
INGOT_FN unsigned short __metal_get_thread_index_in_simdgroup(unsigned short) {
#if defined(INGOT_TARGET_CUDA)
  return (unsigned short)::metal::detail::lane_id();
#else
  return (unsigned short)::ingot::cpu::simd_lane();
#endif
}
#define INGOT_SINTRIN1(n)                                                  \
  template <class T> INGOT_SITE_FN T __metal_##n(T x INGOT_LINE_PARAM) { return ::metal::n(x INGOT_LINE_ARG); }
#define INGOT_SINTRIN2(n)                                                                     \
  template <class T, class A> INGOT_SITE_FN T __metal_##n(T x, A a INGOT_LINE_PARAM) { return ::metal::n(x, (unsigned short)a INGOT_LINE_ARG); }
INGOT_SINTRIN1(simd_sum) INGOT_SINTRIN1(simd_product) INGOT_SINTRIN1(simd_max)
INGOT_SINTRIN1(simd_min) INGOT_SINTRIN1(simd_xor) INGOT_SINTRIN1(simd_and) INGOT_SINTRIN1(simd_or)
INGOT_SINTRIN1(simd_prefix_inclusive_sum) INGOT_SINTRIN1(simd_prefix_exclusive_sum)
INGOT_SINTRIN1(simd_prefix_inclusive_product) INGOT_SINTRIN1(simd_prefix_exclusive_product)
INGOT_SINTRIN2(simd_broadcast) INGOT_SINTRIN2(simd_shuffle) INGOT_SINTRIN2(simd_shuffle_down)
INGOT_SINTRIN2(simd_shuffle_up) INGOT_SINTRIN2(simd_shuffle_xor)
INGOT_SINTRIN2(simd_shuffle_rotate_down) INGOT_SINTRIN2(simd_shuffle_rotate_up)
template <class T, class A, class B>
INGOT_SITE_FN T __metal_simd_shuffle_and_fill_down(T x, T fill, A delta, B modulo INGOT_LINE_PARAM) {
  return ::metal::simd_shuffle_and_fill_down(x, fill, (unsigned short)delta, (unsigned short)modulo INGOT_LINE_ARG);
}
template <class T, class A, class B>
INGOT_SITE_FN T __metal_simd_shuffle_and_fill_up(T x, T fill, A delta, B modulo INGOT_LINE_PARAM) {
  return ::metal::simd_shuffle_and_fill_up(x, fill, (unsigned short)delta, (unsigned short)modulo INGOT_LINE_ARG);
}
#undef INGOT_INTRIN1
#undef INGOT_INTRIN2
#undef INGOT_INTRIN3
#undef INGOT_SINTRIN1
#undef INGOT_SINTRIN2
