// ingot prelude: constants, numeric_limits, as_type, math (precise by default, fast::, precise::),
// common, geometric, relational and integer functions, for scalars and vectors.
#pragma once

// ----- constants -----
#undef INFINITY
#define INFINITY (__builtin_bit_cast(float, 0x7f800000u))
#undef NAN
#define NAN (__builtin_bit_cast(float, 0x7fc00000u))
#undef HUGE_VALF
#define HUGE_VALF (__builtin_bit_cast(float, 0x7f800000u))
#undef HUGE_VAL
#define HUGE_VAL (__builtin_bit_cast(double, 0x7ff0000000000000ull))
#undef MAXFLOAT
#define MAXFLOAT 0x1.fffffep+127f
#undef FLT_MAX
#undef FLT_MIN
#undef FLT_EPSILON
#define FLT_MAX 0x1.fffffep+127f
#define FLT_MIN 0x1p-126f
#define FLT_EPSILON 0x1p-23f
#define FLT_DIG 6
#define FLT_MANT_DIG 24
#define FLT_MAX_EXP 128
#define FLT_MIN_EXP (-125)
#define FLT_RADIX 2
#define HALF_MAX (::metal::half(::metal::raw_bits_t{}, 0x7bff))
#define HALF_MIN (::metal::half(::metal::raw_bits_t{}, 0x0400))
#define HALF_EPSILON (::metal::half(::metal::raw_bits_t{}, 0x1400))
#define HALF_DIG 3
#define HALF_MANT_DIG 11
#define HALF_MAX_EXP 16
#define HALF_MIN_EXP (-13)
#define HALF_MAX_10_EXP 4
#define HALF_MIN_10_EXP (-4)
#define HALF_RADIX 2
#define MAXHALF (::metal::half(::metal::raw_bits_t{}, 0x7bff))
#define HUGE_VALH (::metal::half(::metal::raw_bits_t{}, 0x7c00))
#ifndef FLT_MAX_10_EXP
#define FLT_MAX_10_EXP 38
#define FLT_MIN_10_EXP (-37)
#endif
#define BFLOAT_MAX (::metal::bfloat(::metal::raw_bits_t{}, 0x7f7f))
#define BFLOAT_MIN (::metal::bfloat(::metal::raw_bits_t{}, 0x0080))
#define BFLOAT_EPSILON (::metal::bfloat(::metal::raw_bits_t{}, 0x3c00))
#ifndef CHAR_BIT
#define CHAR_BIT 8
#endif
#undef INT_MAX
#undef INT_MIN
#undef UINT_MAX
#define SCHAR_MAX 127
#define SCHAR_MIN (-128)
#define UCHAR_MAX 255
#define CHAR_MAX SCHAR_MAX
#define CHAR_MIN SCHAR_MIN
#define SHRT_MAX 32767
#define SHRT_MIN (-32768)
#define USHRT_MAX 65535
#define INT_MAX 2147483647
#define INT_MIN (-2147483647 - 1)
#define UINT_MAX 4294967295u
#define LONG_MAX 9223372036854775807L
#define LONG_MIN (-9223372036854775807L - 1)
#define ULONG_MAX 18446744073709551615UL
#define M_E_F 2.71828182845904523536028747135266250f
#define M_LOG2E_F 1.44269504088896340735992468100189214f
#define M_LOG10E_F 0.434294481903251827651128918916605082f
#define M_LN2_F 0.693147180559945309417232121458176568f
#define M_LN10_F 2.30258509299404568401799145468436421f
#define M_PI_F 3.14159265358979323846264338327950288f
#define M_PI_2_F 1.57079632679489661923132169163975144f
#define M_PI_4_F 0.785398163397448309615660845819875721f
#define M_1_PI_F 0.318309886183790671537767526745028724f
#define M_2_PI_F 0.636619772367581343075535053490057448f
#define M_2_SQRTPI_F 1.12837916709551257389615890312154517f
#define M_SQRT2_F 1.41421356237309504880168872420969808f
#define M_SQRT1_2_F 0.707106781186547524400844362104849039f
#define M_E_H (::metal::half(M_E_F))
#define M_LOG2E_H (::metal::half(M_LOG2E_F))
#define M_LOG10E_H (::metal::half(M_LOG10E_F))
#define M_LN2_H (::metal::half(M_LN2_F))
#define M_LN10_H (::metal::half(M_LN10_F))
#define M_PI_H (::metal::half(M_PI_F))
#define M_PI_2_H (::metal::half(M_PI_2_F))
#define M_PI_4_H (::metal::half(M_PI_4_F))
#define M_1_PI_H (::metal::half(M_1_PI_F))
#define M_2_PI_H (::metal::half(M_2_PI_F))
#define M_2_SQRTPI_H (::metal::half(M_2_SQRTPI_F))
#define M_SQRT2_H (::metal::half(M_SQRT2_F))
#define M_SQRT1_2_H (::metal::half(M_SQRT1_2_F))

namespace metal {

// ----- as_type -----
template <class To, class From>
INGOT_FN To as_type(const From& f) {
  return detail::bitcast<To>(f);
}

// ----- numeric_limits -----
// Metal's layout: `numeric_limits<T>` derives from `_numeric_limits_impl<T>`, which user code
// specializes for its own types at global scope after `using namespace metal;` (candle's
// `indexed<T>`). NVRTC accepts such a specialization only in the template's own namespace, so
// the template lives in the global one and `metal::` names it too.
}  // namespace metal
template <class T> struct _numeric_limits_impl {
  static constexpr bool is_specialized = false;
};
#define INGOT_INT_LIMITS(T, MIN, MAX, DIGITS, SIGNED)                       \
  template <> struct _numeric_limits_impl<T> {                                  \
    static constexpr bool is_specialized = true;                          \
    static constexpr bool is_signed = SIGNED;                             \
    static constexpr bool is_integer = true;                              \
    static constexpr bool is_exact = true;                                \
    static constexpr bool has_infinity = false;                           \
    static constexpr bool has_quiet_NaN = false;                          \
    static constexpr int digits = DIGITS;                                 \
    static constexpr int radix = 2;                                       \
    INGOT_FN static constexpr T min() { return MIN; }                     \
    INGOT_FN static constexpr T max() { return MAX; }                     \
    INGOT_FN static constexpr T lowest() { return MIN; }                  \
    INGOT_FN static constexpr T epsilon() { return 0; }                   \
  };
INGOT_INT_LIMITS(bool, false, true, 1, false)
INGOT_INT_LIMITS(char, (char)-128, (char)127, 7, true)
INGOT_INT_LIMITS(signed char, -128, 127, 7, true)
INGOT_INT_LIMITS(unsigned char, 0, 255, 8, false)
INGOT_INT_LIMITS(short, -32768, 32767, 15, true)
INGOT_INT_LIMITS(unsigned short, 0, 65535, 16, false)
INGOT_INT_LIMITS(int, -2147483647 - 1, 2147483647, 31, true)
INGOT_INT_LIMITS(unsigned int, 0u, 4294967295u, 32, false)
INGOT_INT_LIMITS(long, -9223372036854775807L - 1, 9223372036854775807L, 63, true)
INGOT_INT_LIMITS(unsigned long, 0ul, 18446744073709551615ul, 64, false)
INGOT_INT_LIMITS(long long, -9223372036854775807LL - 1, 9223372036854775807LL, 63, true)
INGOT_INT_LIMITS(unsigned long long, 0ull, 18446744073709551615ull, 64, false)
#undef INGOT_INT_LIMITS
#define INGOT_FP_LIMITS(T, MK, MIN, MAX, LOWEST, EPS, INF, QNAN, DENORM, DIGITS)  \
  template <> struct _numeric_limits_impl<T> {                                       \
    static constexpr bool is_specialized = true;                               \
    static constexpr bool is_signed = true;                                    \
    static constexpr bool is_integer = false;                                  \
    static constexpr bool is_exact = false;                                    \
    static constexpr bool has_infinity = true;                                 \
    static constexpr bool has_quiet_NaN = true;                                \
    static constexpr int digits = DIGITS;                                      \
    static constexpr int radix = 2;                                            \
    INGOT_FN static constexpr T min() { return MK(MIN); }                      \
    INGOT_FN static constexpr T max() { return MK(MAX); }                      \
    INGOT_FN static constexpr T lowest() { return MK(LOWEST); }                \
    INGOT_FN static constexpr T epsilon() { return MK(EPS); }                  \
    INGOT_FN static constexpr T infinity() { return MK(INF); }                 \
    INGOT_FN static constexpr T quiet_NaN() { return MK(QNAN); }               \
    INGOT_FN static constexpr T signaling_NaN() { return MK(QNAN); }           \
    INGOT_FN static constexpr T denorm_min() { return MK(DENORM); }            \
  };
#define INGOT_ID(x) x
#define INGOT_MKH(b) metal::half(metal::raw_bits_t{}, b)
#define INGOT_MKB(b) metal::bfloat(metal::raw_bits_t{}, b)
INGOT_FP_LIMITS(float, INGOT_ID, 0x1p-126f, 0x1.fffffep+127f, -0x1.fffffep+127f, 0x1p-23f,
                __builtin_bit_cast(float, 0x7f800000u), __builtin_bit_cast(float, 0x7fc00000u),
                0x1p-149f, 24)
INGOT_FP_LIMITS(double, INGOT_ID, 0x1p-1022, 0x1.fffffffffffffp+1023, -0x1.fffffffffffffp+1023,
                0x1p-52, __builtin_bit_cast(double, 0x7ff0000000000000ull),
                __builtin_bit_cast(double, 0x7ff8000000000000ull), 0x1p-1074, 53)
INGOT_FP_LIMITS(half, INGOT_MKH, 0x0400, 0x7bff, 0xfbff, 0x1400, 0x7c00, 0x7e00, 0x0001, 11)
INGOT_FP_LIMITS(bfloat, INGOT_MKB, 0x0080, 0x7f7f, 0xff7f, 0x3c00, 0x7f80, 0x7fc0, 0x0001, 8)
#undef INGOT_FP_LIMITS
#undef INGOT_ID
#undef INGOT_MKH
#undef INGOT_MKB
namespace metal {
using ::_numeric_limits_impl;
template <class T> struct numeric_limits : _numeric_limits_impl<T> {};
template <class T> struct numeric_limits<const T> : numeric_limits<T> {};

// ----- target math on float and double -----
namespace detail {
#if defined(INGOT_TARGET_CUDA)
#define INGOT_LIBM1(n)                                            \
  INGOT_FN float m_##n(float x) { return ::n##f(x); }             \
  INGOT_FN double m_##n(double x) { return ::n(x); }
#define INGOT_LIBM2(n)                                                  \
  INGOT_FN float m_##n(float x, float y) { return ::n##f(x, y); }       \
  INGOT_FN double m_##n(double x, double y) { return ::n(x, y); }
#else
#define INGOT_LIBM1(n)                                                \
  INGOT_FN float m_##n(float x) { return __builtin_##n##f(x); }       \
  INGOT_FN double m_##n(double x) { return __builtin_##n(x); }
#define INGOT_LIBM2(n)                                                          \
  INGOT_FN float m_##n(float x, float y) { return __builtin_##n##f(x, y); }     \
  INGOT_FN double m_##n(double x, double y) { return __builtin_##n(x, y); }
#endif
INGOT_LIBM1(sin) INGOT_LIBM1(cos) INGOT_LIBM1(tan) INGOT_LIBM1(asin) INGOT_LIBM1(acos)
INGOT_LIBM1(atan) INGOT_LIBM1(sinh) INGOT_LIBM1(cosh) INGOT_LIBM1(tanh) INGOT_LIBM1(asinh)
INGOT_LIBM1(acosh) INGOT_LIBM1(atanh) INGOT_LIBM1(exp) INGOT_LIBM1(exp2) INGOT_LIBM1(exp10)
INGOT_LIBM1(expm1) INGOT_LIBM1(log) INGOT_LIBM1(log2) INGOT_LIBM1(log10) INGOT_LIBM1(log1p)
INGOT_LIBM1(sqrt) INGOT_LIBM1(cbrt) INGOT_LIBM1(floor) INGOT_LIBM1(ceil) INGOT_LIBM1(round)
INGOT_LIBM1(rint) INGOT_LIBM1(trunc) INGOT_LIBM1(erf) INGOT_LIBM1(erfc) INGOT_LIBM1(lgamma)
INGOT_LIBM1(tgamma) INGOT_LIBM1(fabs)
INGOT_LIBM2(pow) INGOT_LIBM2(atan2) INGOT_LIBM2(fmod)
#if defined(INGOT_TARGET_CUDA)
INGOT_LIBM2(fmin) INGOT_LIBM2(fmax)
#else
// fmin/fmax as selects (NaN loses to a number): GCC calls libm's fmaxf otherwise, which keeps
// loops over threads from vectorising.
INGOT_FN float m_fmax(float x, float y) { return (x < y || x != x) ? y : x; }
INGOT_FN double m_fmax(double x, double y) { return (x < y || x != x) ? y : x; }
INGOT_FN float m_fmin(float x, float y) { return (y < x || x != x) ? y : x; }
INGOT_FN double m_fmin(double x, double y) { return (y < x || x != x) ? y : x; }
#endif
INGOT_LIBM2(fdim) INGOT_LIBM2(hypot) INGOT_LIBM2(copysign) INGOT_LIBM2(nextafter)
INGOT_LIBM2(remainder)
#undef INGOT_LIBM1
#undef INGOT_LIBM2
#if defined(INGOT_TARGET_CUDA)
INGOT_FN float m_fma(float a, float b, float c) { return ::fmaf(a, b, c); }
INGOT_FN double m_fma(double a, double b, double c) { return ::fma(a, b, c); }
INGOT_FN float m_ldexp(float x, int e) { return ::ldexpf(x, e); }
INGOT_FN double m_ldexp(double x, int e) { return ::ldexp(x, e); }
INGOT_FN float m_frexp(float x, int* e) { return ::frexpf(x, e); }
INGOT_FN double m_frexp(double x, int* e) { return ::frexp(x, e); }
INGOT_FN float m_modf(float x, float* i) { return ::modff(x, i); }
INGOT_FN double m_modf(double x, double* i) { return ::modf(x, i); }
INGOT_FN float m_rsqrt(float x) { return ::rsqrtf(x); }
INGOT_FN double m_rsqrt(double x) { return ::rsqrt(x); }
INGOT_FN float m_sinpi(float x) { return ::sinpif(x); }
INGOT_FN double m_sinpi(double x) { return ::sinpi(x); }
INGOT_FN float m_cospi(float x) { return ::cospif(x); }
INGOT_FN double m_cospi(double x) { return ::cospi(x); }
// fast variants
INGOT_FN float f_sin(float x) { return __sinf(x); }
INGOT_FN float f_cos(float x) { return __cosf(x); }
INGOT_FN float f_tan(float x) { return __tanf(x); }
INGOT_FN float f_exp(float x) { return __expf(x); }
INGOT_FN float f_exp10(float x) { return __exp10f(x); }
INGOT_FN float f_log(float x) { return __logf(x); }
INGOT_FN float f_log2(float x) { return __log2f(x); }
INGOT_FN float f_log10(float x) { return __log10f(x); }
INGOT_FN float f_pow(float x, float y) { return __powf(x, y); }
INGOT_FN float f_divide(float x, float y) { return __fdividef(x, y); }
INGOT_FN float f_tanh(float x) {
  float r;
  asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x));
  return r;
}
#else
INGOT_FN float m_fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
INGOT_FN double m_fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
INGOT_FN float m_ldexp(float x, int e) { return __builtin_ldexpf(x, e); }
INGOT_FN double m_ldexp(double x, int e) { return __builtin_ldexp(x, e); }
INGOT_FN float m_frexp(float x, int* e) { return __builtin_frexpf(x, e); }
INGOT_FN double m_frexp(double x, int* e) { return __builtin_frexp(x, e); }
INGOT_FN float m_modf(float x, float* i) { return __builtin_modff(x, i); }
INGOT_FN double m_modf(double x, double* i) { return __builtin_modf(x, i); }
INGOT_FN float m_rsqrt(float x) { return (float)(1.0 / __builtin_sqrt((double)x)); }
INGOT_FN double m_rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
// sinpi/cospi: reduce exactly to [-1, 1], then evaluate in double
INGOT_FN double m_sinpi(double x) {
  if (__builtin_isinf(x)) return __builtin_nan("");
  double r = x - 2.0 * __builtin_rint(x * 0.5);
  if (r == 0.0 || r == 1.0 || r == -1.0) return __builtin_copysign(0.0, x);
  return __builtin_sin(3.14159265358979323846 * r);
}
INGOT_FN double m_cospi(double x) {
  if (__builtin_isinf(x)) return __builtin_nan("");
  double r = __builtin_fabs(x);
  r = r - 2.0 * __builtin_rint(r * 0.5);
  if (r == 0.5 || r == -0.5) return 0.0;
  return __builtin_cos(3.14159265358979323846 * r);
}
INGOT_FN float m_sinpi(float x) { return (float)m_sinpi((double)x); }
INGOT_FN float m_cospi(float x) { return (float)m_cospi((double)x); }
INGOT_FN float f_sin(float x) { return m_sin(x); }
INGOT_FN float f_cos(float x) { return m_cos(x); }
INGOT_FN float f_tan(float x) { return m_tan(x); }
INGOT_FN float f_exp(float x) { return m_exp(x); }
INGOT_FN float f_exp10(float x) { return m_exp10(x); }
INGOT_FN float f_log(float x) { return m_log(x); }
INGOT_FN float f_log2(float x) { return m_log2(x); }
INGOT_FN float f_log10(float x) { return m_log10(x); }
INGOT_FN float f_pow(float x, float y) { return m_pow(x, y); }
INGOT_FN float f_divide(float x, float y) { return x / y; }
INGOT_FN float f_tanh(float x) { return m_tanh(x); }
#endif
INGOT_FN double f_sin(double x) { return m_sin(x); }
INGOT_FN double f_cos(double x) { return m_cos(x); }
INGOT_FN double f_tan(double x) { return m_tan(x); }
INGOT_FN double f_exp(double x) { return m_exp(x); }
INGOT_FN double f_exp10(double x) { return m_exp10(x); }
INGOT_FN double f_log(double x) { return m_log(x); }
INGOT_FN double f_log2(double x) { return m_log2(x); }
INGOT_FN double f_log10(double x) { return m_log10(x); }
INGOT_FN double f_pow(double x, double y) { return m_pow(x, y); }
INGOT_FN double f_divide(double x, double y) { return x / y; }
INGOT_FN double f_tanh(double x) { return m_tanh(x); }
INGOT_FN float m_divide(float x, float y) { return x / y; }
INGOT_FN double m_divide(double x, double y) { return x / y; }

// classification by bits (independent of fast-math flags)
INGOT_FN unsigned int abs_bits(float x) { return bitcast<unsigned int>(x) & 0x7fffffffu; }
INGOT_FN unsigned long long abs_bits(double x) {
  return bitcast<unsigned long long>(x) & 0x7fffffffffffffffull;
}
INGOT_FN bool c_isnan(float x) { return abs_bits(x) > 0x7f800000u; }
INGOT_FN bool c_isnan(double x) { return abs_bits(x) > 0x7ff0000000000000ull; }
INGOT_FN bool c_isinf(float x) { return abs_bits(x) == 0x7f800000u; }
INGOT_FN bool c_isinf(double x) { return abs_bits(x) == 0x7ff0000000000000ull; }
INGOT_FN bool c_isfinite(float x) { return abs_bits(x) < 0x7f800000u; }
INGOT_FN bool c_isfinite(double x) { return abs_bits(x) < 0x7ff0000000000000ull; }
INGOT_FN bool c_isnormal(float x) { return abs_bits(x) < 0x7f800000u && abs_bits(x) >= 0x00800000u; }
INGOT_FN bool c_isnormal(double x) {
  return abs_bits(x) < 0x7ff0000000000000ull && abs_bits(x) >= 0x0010000000000000ull;
}
INGOT_FN bool c_signbit(float x) { return (bitcast<unsigned int>(x) >> 31) != 0; }
INGOT_FN bool c_signbit(double x) { return (bitcast<unsigned long long>(x) >> 63) != 0; }
}  // namespace detail

#define INGOT_FP(T) INGOT_REQ(::metal::detail::is_float_scalar<T>::value)
#define INGOT_INT(T) INGOT_REQ(::ingot::tt::is_integral<T>::value)
#define INGOT_SC(T) INGOT_REQ(::metal::is_scalar<T>::value)
#define INGOT_W(T) typename ::metal::wide<T>::type

// Component-wise lifting of a scalar function to vectors.
#define INGOT_VEC1(name)                                                          \
  template <class T, int N>                                                       \
  INGOT_FN auto name(const vec<T, N>& x) -> vec<decltype(name(x._v[0])), N> {     \
    vec<decltype(name(x._v[0])), N> r;                                            \
    for (int i = 0; i < N; ++i) r._v[i] = name(x._v[i]);                          \
    return r;                                                                     \
  }
#define INGOT_VEC2(name)                                                          \
  template <class T, int N>                                                       \
  INGOT_FN vec<T, N> name(const vec<T, N>& x, const INGOT_ND(vec<T, N>) & y) {    \
    vec<T, N> r;                                                                  \
    for (int i = 0; i < N; ++i) r._v[i] = name(x._v[i], y._v[i]);                 \
    return r;                                                                     \
  }
#define INGOT_VEC3(name)                                                          \
  template <class T, int N>                                                       \
  INGOT_FN vec<T, N> name(const vec<T, N>& x, const INGOT_ND(vec<T, N>) & y,      \
                          const INGOT_ND(vec<T, N>) & z) {                        \
    vec<T, N> r;                                                                  \
    for (int i = 0; i < N; ++i) r._v[i] = name(x._v[i], y._v[i], z._v[i]);        \
    return r;                                                                     \
  }

// Metal converts integral arguments of its floating-point math functions to float (`pow(2, x)`,
// `trunc(b)` with b a bool, `fract(u)` with u a uchar, `precise::log(10)`); an integer against a
// floating-point argument takes that argument's type.
#define INGOT_INT1(name)                                                             \
  template <class I, INGOT_INT(I)> INGOT_FN float name(I x) { return name(float(x)); }
#define INGOT_INT2(name)                                                             \
  template <class I, class T,                                                        \
            INGOT_REQ(::ingot::tt::is_integral<I>::value &&                          \
                      (::metal::detail::is_float_scalar<T>::value ||                 \
                       ::ingot::tt::is_integral<T>::value))>                         \
  INGOT_FN typename ::ingot::tt::conditional<::metal::detail::is_float_scalar<T>::value, \
                                             T, float>::type                         \
  name(I x, T y) {                                                                   \
    typedef typename ::ingot::tt::conditional<::metal::detail::is_float_scalar<T>::value, \
                                              T, float>::type R;                     \
    return name(R(x), R(y));                                                         \
  }

// ----- functions whose precision does not depend on the math mode -----
#define INGOT_EXACT1(name, impl)                                                     \
  template <class T, INGOT_FP(T)> INGOT_FN T name(T x) {                             \
    return T(detail::impl(INGOT_W(T)(x)));                                           \
  }                                                                                  \
  INGOT_INT1(name)                                                                   \
  INGOT_VEC1(name)
INGOT_EXACT1(floor, m_floor)
INGOT_EXACT1(ceil, m_ceil)
INGOT_EXACT1(round, m_round)
INGOT_EXACT1(rint, m_rint)
INGOT_EXACT1(trunc, m_trunc)
INGOT_EXACT1(fabs, m_fabs)
#undef INGOT_EXACT1
// An integer first argument takes the second's type, as Metal's overloads do (ggml's
// `fmax(0, x)` with x float or float4).
#define INGOT_EXACT2(name, impl)                                                     \
  template <class T, INGOT_FP(T)> INGOT_FN T name(T x, INGOT_ND(T) y) {              \
    return T(detail::impl(INGOT_W(T)(x), INGOT_W(T)(y)));                            \
  }                                                                                  \
  INGOT_INT2(name)                                                                   \
  INGOT_VEC2(name)                                                                   \
  template <class S, class T, int N, INGOT_REQ(::metal::is_scalar<S>::value)>        \
  INGOT_FN vec<T, N> name(S x, const vec<T, N>& y) {                                 \
    return name(vec<T, N>(T(x)), y);                                                 \
  }
INGOT_EXACT2(fmin, m_fmin)
INGOT_EXACT2(fmax, m_fmax)
INGOT_EXACT2(fmod, m_fmod)
INGOT_EXACT2(fdim, m_fdim)
INGOT_EXACT2(copysign, m_copysign)
INGOT_EXACT2(nextafter, m_nextafter)
INGOT_EXACT2(remainder, m_remainder)
#undef INGOT_EXACT2

template <class T, INGOT_FP(T)> INGOT_FN bool isnan(T x) { return detail::c_isnan(INGOT_W(T)(x)); }
template <class T, INGOT_FP(T)> INGOT_FN bool isinf(T x) { return detail::c_isinf(INGOT_W(T)(x)); }
template <class T, INGOT_FP(T)> INGOT_FN bool isfinite(T x) { return detail::c_isfinite(INGOT_W(T)(x)); }
template <class T, INGOT_FP(T)> INGOT_FN bool isnormal(T x) { return detail::c_isnormal(INGOT_W(T)(x)); }
template <class T, INGOT_FP(T)> INGOT_FN bool signbit(T x) { return detail::c_signbit(INGOT_W(T)(x)); }
template <class T, INGOT_FP(T)> INGOT_FN bool isordered(T x, INGOT_ND(T) y) { return !isnan(x) && !isnan(y); }
template <class T, INGOT_FP(T)> INGOT_FN bool isunordered(T x, INGOT_ND(T) y) { return isnan(x) || isnan(y); }
INGOT_VEC1(isnan)
INGOT_VEC1(isinf)
INGOT_VEC1(isfinite)
INGOT_VEC1(isnormal)
INGOT_VEC1(signbit)

// abs, min, max, clamp: integers and floating point (MSL min/max on floats are fmin/fmax).
template <class T, INGOT_SC(T)> INGOT_FN T abs(T x) {
  if constexpr (detail::is_float_scalar<T>::value) return fabs(x);
  else if constexpr (ingot::tt::is_signed_int<T>::value) return x < 0 ? T(-x) : x;
  else return x;
}
// Metal's min/max are plain functions: with arguments of one type they win over a library's own
// templates seen through a using-directive (PyTorch's c10::metal::max(T, U) and max(T, T)).
// Here: `(T, T)` is more specialized than `(T, U)`, and plain overloads for Metal's scalar types
// (below) win over any template. Mixed arguments take the first one's type; that template's
// empty trailing pack makes it less specialized than a library's `max(T, U)`, which Metal
// prefers too (its builtins would need a conversion).
// bfloat is not among them: Metal has no bfloat min/max, so a library's `max(T, T)` template
// (PyTorch's c10::metal) or plain `max(bfloat16_t, bfloat16_t)` (MLX's bf16_math.h) is what
// Metal calls; ingot's own for bfloat has the shape `(T, U, None...)`, less specialized than
// either and than a library's `max(T, U)`.
#define INGOT_SC_NOT_BF(T) \
  INGOT_REQ(::metal::is_scalar<T>::value && !ingot::tt::is_same<T, ::metal::bfloat>::value)
template <class T, INGOT_SC_NOT_BF(T)> INGOT_FN T min(T x, T y) {
  if constexpr (detail::is_float_scalar<T>::value) return fmin(x, y);
  else return y < x ? y : x;
}
template <class T, INGOT_SC_NOT_BF(T)> INGOT_FN T max(T x, T y) {
  if constexpr (detail::is_float_scalar<T>::value) return fmax(x, y);
  else return x < y ? y : x;
}
#undef INGOT_SC_NOT_BF
#define INGOT_MINMAX_BF(NAME, F)                                                              \
  template <class T, class U, class... None>                                                  \
  INGOT_FN typename ingot::tt::enable_if<sizeof...(None) == 0 &&                              \
                                             ingot::tt::is_same<T, ::metal::bfloat>::value && \
                                             ingot::tt::is_same<U, T>::value,                 \
                                         T>::type                                             \
  NAME(T x, U y, None...) {                                                                   \
    return F(x, y);                                                                           \
  }
INGOT_MINMAX_BF(min, fmin)
INGOT_MINMAX_BF(max, fmax)
#undef INGOT_MINMAX_BF
template <class T, class U, class... None>
INGOT_FN typename ingot::tt::enable_if<sizeof...(None) == 0 && ::metal::is_scalar<T>::value &&
                                           !ingot::tt::is_same<T, U>::value &&
                                           ::metal::is_convertible<U, T>::value,
                                       T>::type
min(T x, U y, None...) {
  return min(x, T(y));
}
template <class T, class U, class... None>
INGOT_FN typename ingot::tt::enable_if<sizeof...(None) == 0 && ::metal::is_scalar<T>::value &&
                                           !ingot::tt::is_same<T, U>::value &&
                                           ::metal::is_convertible<U, T>::value,
                                       T>::type
max(T x, U y, None...) {
  return max(x, T(y));
}
// CUDA declares max(int, int) & co. at global scope already: there the plain overloads are only
// for half (two plain candidates of the same signature would be ambiguous). None for bfloat:
// Metal has no bfloat min/max, and libraries define their own (MLX's bf16_math.h defines
// `metal::max(bfloat16_t, bfloat16_t)`, a redefinition beside a plain one); bfloat arguments
// take the bfloat template above when the library brings none.
#define INGOT_MINMAX_PLAIN(T)                                    \
  INGOT_FN T min(T x, T y) { return min<T>(x, y); }              \
  INGOT_FN T max(T x, T y) { return max<T>(x, y); }
INGOT_MINMAX_PLAIN(half)
#if !defined(INGOT_TARGET_CUDA)
INGOT_MINMAX_PLAIN(char)
INGOT_MINMAX_PLAIN(uchar)
INGOT_MINMAX_PLAIN(short)
INGOT_MINMAX_PLAIN(ushort)
INGOT_MINMAX_PLAIN(int)
INGOT_MINMAX_PLAIN(uint)
INGOT_MINMAX_PLAIN(long)
INGOT_MINMAX_PLAIN(ulong)
INGOT_MINMAX_PLAIN(float)
#endif
#undef INGOT_MINMAX_PLAIN
template <class T, INGOT_SC(T)> INGOT_FN T clamp(T x, INGOT_ND(T) lo, INGOT_ND(T) hi) {
  return min(max(x, lo), hi);
}
INGOT_VEC1(abs)
INGOT_VEC2(min)
INGOT_VEC2(max)
// A scalar first argument broadcasts to the vector's type (`max(0.0f, v)` with v a float4).
template <class S, class T, int N, INGOT_REQ(::metal::is_scalar<S>::value)>
INGOT_FN vec<T, N> min(S x, const vec<T, N>& y) { return min(vec<T, N>(T(x)), y); }
template <class S, class T, int N, INGOT_REQ(::metal::is_scalar<S>::value)>
INGOT_FN vec<T, N> max(S x, const vec<T, N>& y) { return max(vec<T, N>(T(x)), y); }
INGOT_VEC3(clamp)
template <class T, INGOT_FP(T)> INGOT_FN T saturate(T x) { return clamp(x, T(0), T(1)); }
INGOT_VEC1(saturate)
template <class T, INGOT_FP(T)> INGOT_FN T sign(T x) {
  if (isnan(x)) return T(0);
  return x > T(0) ? T(1) : x < T(0) ? T(-1) : x;
}
INGOT_VEC1(sign)
template <class T, INGOT_FP(T)> INGOT_FN T fract(T x) {
  INGOT_W(T) w = INGOT_W(T)(x);
  INGOT_W(T) f = w - detail::m_floor(w);
  INGOT_W(T) lim = INGOT_W(T)(is_half_like<T>::value ? 0.99951171875f : 0x1.fffffep-1f);
  return T(isinf(x) ? INGOT_W(T)(0) : detail::m_fmin(f, lim));
}
INGOT_INT1(fract)
INGOT_VEC1(fract)
template <class T, INGOT_FP(T)> INGOT_FN T mix(T x, INGOT_ND(T) y, INGOT_ND(T) a) {
  return T(INGOT_W(T)(x) + (INGOT_W(T)(y) - INGOT_W(T)(x)) * INGOT_W(T)(a));
}
template <class T, int N>
INGOT_FN vec<T, N> mix(const vec<T, N>& x, const INGOT_ND(vec<T, N>) & y, const INGOT_ND(vec<T, N>) & a) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = mix(x._v[i], y._v[i], a._v[i]);
  return r;
}
template <class T, INGOT_FP(T)> INGOT_FN T step(T edge, INGOT_ND(T) x) { return x < edge ? T(0) : T(1); }
template <class T, int N>
INGOT_FN vec<T, N> step(const INGOT_ND(vec<T, N>) & edge, const vec<T, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = step(edge._v[i], x._v[i]);
  return r;
}
template <class T, INGOT_FP(T)> INGOT_FN T smoothstep(T e0, INGOT_ND(T) e1, INGOT_ND(T) x) {
  INGOT_W(T) t = (INGOT_W(T)(x) - INGOT_W(T)(e0)) / (INGOT_W(T)(e1) - INGOT_W(T)(e0));
  t = t < 0 ? INGOT_W(T)(0) : t > 1 ? INGOT_W(T)(1) : t;
  return T(t * t * (INGOT_W(T)(3) - INGOT_W(T)(2) * t));
}
template <class T, int N>
INGOT_FN vec<T, N> smoothstep(const INGOT_ND(vec<T, N>) & e0, const INGOT_ND(vec<T, N>) & e1,
                              const vec<T, N>& x) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = smoothstep(e0._v[i], e1._v[i], x._v[i]);
  return r;
}
template <class T, INGOT_FP(T)> INGOT_FN T fma(T a, INGOT_ND(T) b, INGOT_ND(T) c) {
  return T(detail::m_fma(INGOT_W(T)(a), INGOT_W(T)(b), INGOT_W(T)(c)));
}
INGOT_VEC3(fma)
template <class T, INGOT_FP(T)> INGOT_FN T mad(T a, INGOT_ND(T) b, INGOT_ND(T) c) { return fma(a, b, c); }
INGOT_VEC3(mad)
template <class T, INGOT_FP(T)> INGOT_FN T ldexp(T x, int e) {
  return T(detail::m_ldexp(INGOT_W(T)(x), e));
}
template <class T, int N> INGOT_FN vec<T, N> ldexp(const vec<T, N>& x, const vec<int, N>& e) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = ldexp(x._v[i], e._v[i]);
  return r;
}
template <class T, INGOT_FP(T)> INGOT_FN T frexp(T x, int& e) {
  return T(detail::m_frexp(INGOT_W(T)(x), &e));
}
template <class T, int N> INGOT_FN vec<T, N> frexp(const vec<T, N>& x, vec<int, N>& e) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = frexp(x._v[i], e._v[i]);
  return r;
}
template <class T, INGOT_FP(T)> INGOT_FN T modf(T x, T& ip) {
  INGOT_W(T) i;
  T f = T(detail::m_modf(INGOT_W(T)(x), &i));
  ip = T(i);
  return f;
}
template <class T, int N> INGOT_FN vec<T, N> modf(const vec<T, N>& x, vec<T, N>& ip) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = modf(x._v[i], ip._v[i]);
  return r;
}

// ----- three-operand forms and pi-scaled inverse trigonometry -----
template <class T, INGOT_SC(T)> INGOT_FN T max3(T x, INGOT_ND(T) y, INGOT_ND(T) z) { return max(max(x, y), z); }
template <class T, INGOT_SC(T)> INGOT_FN T min3(T x, INGOT_ND(T) y, INGOT_ND(T) z) { return min(min(x, y), z); }
template <class T, INGOT_SC(T)> INGOT_FN T median3(T x, INGOT_ND(T) y, INGOT_ND(T) z) {
  return max(min(x, y), min(max(x, y), z));
}
template <class T, INGOT_FP(T)> INGOT_FN T fmax3(T x, INGOT_ND(T) y, INGOT_ND(T) z) { return fmax(fmax(x, y), z); }
template <class T, INGOT_FP(T)> INGOT_FN T fmin3(T x, INGOT_ND(T) y, INGOT_ND(T) z) { return fmin(fmin(x, y), z); }
template <class T, INGOT_FP(T)> INGOT_FN T fmedian3(T x, INGOT_ND(T) y, INGOT_ND(T) z) { return median3(x, y, z); }
INGOT_VEC3(max3)
INGOT_VEC3(min3)
INGOT_VEC3(median3)
INGOT_VEC3(fmax3)
INGOT_VEC3(fmin3)
INGOT_VEC3(fmedian3)

// ----- relational -----
INGOT_FN bool all(bool b) { return b; }
INGOT_FN bool any(bool b) { return b; }
template <int N> INGOT_FN bool all(const vec<bool, N>& b) {
  bool r = true;
  for (int i = 0; i < N; ++i) r = r && b._v[i];
  return r;
}
template <int N> INGOT_FN bool any(const vec<bool, N>& b) {
  bool r = false;
  for (int i = 0; i < N; ++i) r = r || b._v[i];
  return r;
}
template <class T, INGOT_SC(T)> INGOT_FN T select(T a, INGOT_ND(T) b, bool c) { return c ? b : a; }
template <class T, int N>
INGOT_FN vec<T, N> select(const vec<T, N>& a, const INGOT_ND(vec<T, N>) & b, const vec<bool, N>& c) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = c._v[i] ? b._v[i] : a._v[i];
  return r;
}
template <class T, int N>
INGOT_FN vec<T, N> select(const vec<T, N>& a, const INGOT_ND(vec<T, N>) & b, bool c) {
  return c ? b : a;
}

// ----- precision-dependent math: precise:: and fast:: -----
#define INGOT_MODE1(name, impl)                                                      \
  template <class T, INGOT_FP(T)> INGOT_FN T name(T x) {                             \
    return T(detail::impl(INGOT_W(T)(x)));                                           \
  }                                                                                  \
  INGOT_INT1(name)                                                                   \
  INGOT_VEC1(name)
#define INGOT_MODE2(name, impl)                                                      \
  template <class T, INGOT_FP(T)> INGOT_FN T name(T x, INGOT_ND(T) y) {              \
    return T(detail::impl(INGOT_W(T)(x), INGOT_W(T)(y)));                            \
  }                                                                                  \
  INGOT_INT2(name)                                                                   \
  INGOT_VEC2(name)
#define INGOT_MATH_COMMON_NAMES                                                      \
  using metal::floor;                                                                \
  using metal::ceil;                                                                 \
  using metal::round;                                                                \
  using metal::rint;                                                                 \
  using metal::trunc;                                                                \
  using metal::fabs;                                                                 \
  using metal::abs;                                                                  \
  using metal::fmin;                                                                 \
  using metal::fmax;                                                                 \
  using metal::min;                                                                  \
  using metal::max;                                                                  \
  using metal::clamp;                                                                \
  using metal::saturate;                                                             \
  using metal::fmod;                                                                 \
  using metal::fract;                                                                \
  using metal::copysign;                                                             \
  using metal::fma;                                                                  \
  using metal::mix;                                                                  \
  using metal::sign;                                                                 \
  using metal::step;                                                                 \
  using metal::smoothstep;                                                           \
  using metal::isnan;                                                                \
  using metal::isinf;                                                                \
  using metal::isfinite;                                                             \
  using metal::signbit;                                                              \
  using metal::ldexp;                                                                \
  using metal::frexp;                                                                \
  using metal::modf;                                                                 \
  using metal::fdim;                                                                 \
  using metal::fmax3;                                                                \
  using metal::fmin3;                                                                \
  using metal::fmedian3;                                                             \
  using metal::max3;                                                                 \
  using metal::min3;                                                                 \
  using metal::median3;

namespace precise {
INGOT_MATH_COMMON_NAMES
INGOT_MODE1(sin, m_sin) INGOT_MODE1(cos, m_cos) INGOT_MODE1(tan, m_tan)
INGOT_MODE1(asin, m_asin) INGOT_MODE1(acos, m_acos) INGOT_MODE1(atan, m_atan)
INGOT_MODE1(sinh, m_sinh) INGOT_MODE1(cosh, m_cosh) INGOT_MODE1(tanh, m_tanh)
INGOT_MODE1(asinh, m_asinh) INGOT_MODE1(acosh, m_acosh) INGOT_MODE1(atanh, m_atanh)
INGOT_MODE1(exp, m_exp) INGOT_MODE1(exp2, m_exp2) INGOT_MODE1(exp10, m_exp10)
INGOT_MODE1(expm1, m_expm1) INGOT_MODE1(log, m_log) INGOT_MODE1(log2, m_log2)
INGOT_MODE1(log10, m_log10) INGOT_MODE1(log1p, m_log1p) INGOT_MODE1(sqrt, m_sqrt)
INGOT_MODE1(rsqrt, m_rsqrt) INGOT_MODE1(cbrt, m_cbrt)
// Not Metal's (ingot's extras): libraries define their own (PyTorch's c10::metal::erf<T>, seen
// through a using-directive). The empty trailing pack makes these less specialized than such a
// template, which then wins as it does on Metal.
#define INGOT_EXTRA1(name, impl)                                                     \
  template <class T, class... None>                                                  \
  INGOT_FN typename ingot::tt::enable_if<sizeof...(None) == 0 &&                     \
                                             ::metal::detail::is_float_scalar<T>::value, \
                                         T>::type                                    \
  name(T x, None...) {                                                               \
    return T(detail::impl(INGOT_W(T)(x)));                                           \
  }                                                                                  \
  INGOT_VEC1(name)
INGOT_EXTRA1(erf, m_erf) INGOT_EXTRA1(erfc, m_erfc) INGOT_EXTRA1(lgamma, m_lgamma)
INGOT_EXTRA1(tgamma, m_tgamma)
#undef INGOT_EXTRA1
INGOT_MODE1(sinpi, m_sinpi) INGOT_MODE1(cospi, m_cospi)
INGOT_MODE2(pow, m_pow) INGOT_MODE2(powr, m_pow) INGOT_MODE2(atan2, m_atan2)
INGOT_MODE2(hypot, m_hypot) INGOT_MODE2(divide, m_divide)
template <class T, INGOT_FP(T)> INGOT_FN T asinpi(T x) { return T(INGOT_W(T)(asin(INGOT_W(T)(x))) * INGOT_W(T)(0.318309886183790671537767526745028724)); }
template <class T, INGOT_FP(T)> INGOT_FN T acospi(T x) { return T(INGOT_W(T)(acos(INGOT_W(T)(x))) * INGOT_W(T)(0.318309886183790671537767526745028724)); }
template <class T, INGOT_FP(T)> INGOT_FN T atanpi(T x) { return T(INGOT_W(T)(atan(INGOT_W(T)(x))) * INGOT_W(T)(0.318309886183790671537767526745028724)); }
template <class T, INGOT_FP(T)> INGOT_FN T atan2pi(T y, INGOT_ND(T) x) {
  return T(INGOT_W(T)(atan2(INGOT_W(T)(y), INGOT_W(T)(x))) * INGOT_W(T)(0.318309886183790671537767526745028724));
}
INGOT_VEC1(asinpi)
INGOT_VEC1(acospi)
INGOT_VEC1(atanpi)
INGOT_VEC2(atan2pi)
template <class T, INGOT_FP(T)> INGOT_FN T tanpi(T x) { return T(sinpi(INGOT_W(T)(x)) / cospi(INGOT_W(T)(x))); }
INGOT_VEC1(tanpi)
template <class T, INGOT_FP(T)> INGOT_FN T sincos(T x, T& c) { c = cos(x); return sin(x); }
template <class T, int N> INGOT_FN vec<T, N> sincos(const vec<T, N>& x, vec<T, N>& c) {
  c = cos(x);
  return sin(x);
}
}  // namespace precise

namespace fast {
INGOT_MATH_COMMON_NAMES
using precise::asin; using precise::acos; using precise::atan; using precise::sinh;
using precise::cosh; using precise::asinh; using precise::acosh; using precise::atanh;
using precise::exp2; using precise::expm1; using precise::log1p; using precise::sqrt;
using precise::rsqrt; using precise::cbrt; using precise::erf; using precise::erfc;
using precise::lgamma; using precise::tgamma; using precise::sinpi; using precise::cospi;
using precise::tanpi; using precise::atan2; using precise::hypot; using precise::asinpi;
using precise::acospi; using precise::atanpi; using precise::atan2pi;
INGOT_MODE1(sin, f_sin) INGOT_MODE1(cos, f_cos) INGOT_MODE1(tan, f_tan)
INGOT_MODE1(tanh, f_tanh) INGOT_MODE1(exp, f_exp) INGOT_MODE1(exp10, f_exp10)
INGOT_MODE1(log, f_log) INGOT_MODE1(log2, f_log2) INGOT_MODE1(log10, f_log10)
INGOT_MODE2(pow, f_pow) INGOT_MODE2(powr, f_pow) INGOT_MODE2(divide, f_divide)
template <class T, INGOT_FP(T)> INGOT_FN T sincos(T x, T& c) { c = cos(x); return sin(x); }
template <class T, int N> INGOT_FN vec<T, N> sincos(const vec<T, N>& x, vec<T, N>& c) {
  c = cos(x);
  return sin(x);
}
}  // namespace fast
#undef INGOT_MODE1
#undef INGOT_MODE2
#undef INGOT_MATH_COMMON_NAMES

// The default mode's functions are declared in `metal` itself (using-declarations, not a
// using-directive): a library that adds its own overloads to namespace metal (MLX's
// bf16_math.h: `metal::log(bfloat16_t)`) must not hide them from `metal::log(x)`.
#if INGOT_FAST_MATH
#define INGOT_MODE fast
#else
#define INGOT_MODE precise
#endif
#define INGOT_MODE_NAMES \
  using INGOT_MODE::sin; using INGOT_MODE::cos; using INGOT_MODE::tan; using INGOT_MODE::asin; \
  using INGOT_MODE::acos; using INGOT_MODE::atan; using INGOT_MODE::sinh; using INGOT_MODE::cosh; \
  using INGOT_MODE::tanh; using INGOT_MODE::asinh; using INGOT_MODE::acosh; \
  using INGOT_MODE::atanh; using INGOT_MODE::exp; using INGOT_MODE::exp2; \
  using INGOT_MODE::exp10; using INGOT_MODE::expm1; using INGOT_MODE::log; \
  using INGOT_MODE::log2; using INGOT_MODE::log10; using INGOT_MODE::log1p; \
  using INGOT_MODE::sqrt; using INGOT_MODE::rsqrt; using INGOT_MODE::cbrt; using INGOT_MODE::erf; \
  using INGOT_MODE::erfc; using INGOT_MODE::lgamma; using INGOT_MODE::tgamma; \
  using INGOT_MODE::sinpi; using INGOT_MODE::cospi; using INGOT_MODE::tanpi; \
  using INGOT_MODE::pow; using INGOT_MODE::powr; using INGOT_MODE::atan2; \
  using INGOT_MODE::hypot; using INGOT_MODE::divide; using INGOT_MODE::asinpi; \
  using INGOT_MODE::acospi; using INGOT_MODE::atanpi; using INGOT_MODE::atan2pi; \
  using INGOT_MODE::sincos;
INGOT_MODE_NAMES
#undef INGOT_MODE_NAMES
#undef INGOT_MODE

// ----- geometric -----
template <class T, int N> INGOT_FN T dot(const vec<T, N>& a, const vec<T, N>& b) {
  T s = a._v[0] * b._v[0];
  for (int i = 1; i < N; ++i) s = T(s + a._v[i] * b._v[i]);
  return s;
}
template <class T> INGOT_FN vec<T, 3> cross(const vec<T, 3>& a, const vec<T, 3>& b) {
  return vec<T, 3>(T(a.y * b.z - a.z * b.y), T(a.z * b.x - a.x * b.z), T(a.x * b.y - a.y * b.x));
}
template <class T, int N> INGOT_FN T length_squared(const vec<T, N>& a) { return dot(a, a); }
template <class T, int N> INGOT_FN T length(const vec<T, N>& a) {
  INGOT_W(T) s = 0;
  for (int i = 0; i < N; ++i) s += INGOT_W(T)(a._v[i]) * INGOT_W(T)(a._v[i]);
  return T(detail::m_sqrt(s));
}
template <class T, int N> INGOT_FN T distance(const vec<T, N>& a, const vec<T, N>& b) { return length(a - b); }
template <class T, int N> INGOT_FN T distance_squared(const vec<T, N>& a, const vec<T, N>& b) {
  return length_squared(a - b);
}
template <class T, int N> INGOT_FN vec<T, N> normalize(const vec<T, N>& a) {
  INGOT_W(T) s = 0;
  for (int i = 0; i < N; ++i) s += INGOT_W(T)(a._v[i]) * INGOT_W(T)(a._v[i]);
  INGOT_W(T) inv = INGOT_W(T)(1) / detail::m_sqrt(s);
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = T(INGOT_W(T)(a._v[i]) * inv);
  return r;
}
template <class T, int N> INGOT_FN vec<T, N> reflect(const vec<T, N>& i, const vec<T, N>& n) {
  return i - T(2) * dot(n, i) * n;
}
template <class T, int N>
INGOT_FN vec<T, N> refract(const vec<T, N>& i, const vec<T, N>& n, INGOT_ND(T) eta) {
  T d = dot(n, i);
  T k = T(1) - eta * eta * (T(1) - d * d);
  if (k < T(0)) return vec<T, N>(T(0));
  return eta * i - (eta * d + T(detail::m_sqrt(INGOT_W(T)(k)))) * n;
}
template <class T, int N>
INGOT_FN vec<T, N> faceforward(const vec<T, N>& n, const vec<T, N>& i, const vec<T, N>& nref) {
  return dot(nref, i) < T(0) ? n : -n;
}
namespace precise {
using metal::distance;
using metal::dot;
using metal::length;
using metal::normalize;
}  // namespace precise
namespace fast {
using metal::distance;
using metal::dot;
using metal::length;
using metal::normalize;
}  // namespace fast

// ----- integer functions -----
namespace detail {
template <class T> struct ubits {
  typedef typename ingot::tt::conditional<
      sizeof(T) == 8, unsigned long long,
      typename ingot::tt::conditional<sizeof(T) == 4, unsigned int,
                                      typename ingot::tt::conditional<sizeof(T) == 2, unsigned short,
                                                                      unsigned char>::type>::type>::type
      type;
};
INGOT_FN int clz32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  return __clz((int)x);
#else
  return x ? __builtin_clz(x) : 32;
#endif
}
INGOT_FN int clz64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  return __clzll((long long)x);
#else
  return x ? __builtin_clzll(x) : 64;
#endif
}
INGOT_FN int popc32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  return __popc(x);
#else
  return __builtin_popcount(x);
#endif
}
INGOT_FN int popc64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  return __popcll(x);
#else
  return __builtin_popcountll(x);
#endif
}
INGOT_FN unsigned int brev32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  return __brev(x);
#else
  x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
  x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
  x = ((x >> 4) & 0x0f0f0f0fu) | ((x & 0x0f0f0f0fu) << 4);
  x = ((x >> 8) & 0x00ff00ffu) | ((x & 0x00ff00ffu) << 8);
  return (x >> 16) | (x << 16);
#endif
}
INGOT_FN unsigned long long brev64(unsigned long long x) {
  return ((unsigned long long)brev32((unsigned int)x) << 32) | brev32((unsigned int)(x >> 32));
}
}  // namespace detail

template <class T, INGOT_INT(T)> INGOT_FN T clz(T x) {
  typedef typename detail::ubits<T>::type U;
  if constexpr (sizeof(T) == 8) return T(detail::clz64((U)x));
  else return T(detail::clz32((unsigned int)(U)x) - (32 - 8 * (int)sizeof(T)));
}
template <class T, INGOT_INT(T)> INGOT_FN T ctz(T x) {
  typedef typename detail::ubits<T>::type U;
  U u = (U)x;
  if (u == 0) return T(8 * sizeof(T));
  if constexpr (sizeof(T) == 8) return T(detail::popc64((u & (0ull - u)) - 1));
  else return T(detail::popc32(((unsigned int)u & (0u - (unsigned int)u)) - 1));
}
template <class T, INGOT_INT(T)> INGOT_FN T popcount(T x) {
  typedef typename detail::ubits<T>::type U;
  if constexpr (sizeof(T) == 8) return T(detail::popc64((U)x));
  else return T(detail::popc32((unsigned int)(U)x));
}
template <class T, INGOT_INT(T)> INGOT_FN T reverse_bits(T x) {
  typedef typename detail::ubits<T>::type U;
  if constexpr (sizeof(T) == 8) return T(detail::brev64((U)x));
  else return T((U)(detail::brev32((unsigned int)(U)x) >> (32 - 8 * sizeof(T))));
}
template <class T, INGOT_INT(T)> INGOT_FN T rotate(T v, INGOT_ND(T) i) {
  typedef typename detail::ubits<T>::type U;
  const unsigned bits = 8 * sizeof(T);
  U u = (U)v;
  unsigned s = (unsigned)((U)i % bits);
  return s == 0 ? v : T((U)((u << s) | (u >> (bits - s))));
}
template <class T, INGOT_INT(T)> INGOT_FN T mulhi(T a, INGOT_ND(T) b) {
  if constexpr (sizeof(T) == 8) {
#if defined(INGOT_TARGET_CUDA)
    if constexpr (ingot::tt::is_signed_int<T>::value) return T(__mul64hi((long long)a, (long long)b));
    else return T(__umul64hi((unsigned long long)a, (unsigned long long)b));
#else
    if constexpr (ingot::tt::is_signed_int<T>::value) return T(((__int128)a * (__int128)b) >> 64);
    else return T(((unsigned __int128)a * (unsigned __int128)b) >> 64);
#endif
  } else if constexpr (sizeof(T) == 4) {
    if constexpr (ingot::tt::is_signed_int<T>::value) return T(((long long)a * (long long)b) >> 32);
    else return T(((unsigned long long)a * (unsigned long long)b) >> 32);
  } else {
    return T(((int)a * (int)b) >> (8 * sizeof(T)));
  }
}
template <class T, INGOT_INT(T)> INGOT_FN T extract_bits(T x, unsigned offset, unsigned bits) {
  typedef typename detail::ubits<T>::type U;
  const unsigned n = 8 * sizeof(T);
  if (bits == 0) return T(0);
  U u = (U)((U)x >> offset);
  if (bits >= n) return T(u);
  if constexpr (ingot::tt::is_signed_int<T>::value) {
    U m = (U)1 << (bits - 1);
    u &= (U)(((U)1 << bits) - 1);
    return T((U)((u ^ m) - m));
  } else {
    return T(u & (U)(((U)1 << bits) - 1));
  }
}
template <class T, INGOT_INT(T)>
INGOT_FN T insert_bits(T base, INGOT_ND(T) insert, unsigned offset, unsigned bits) {
  typedef typename detail::ubits<T>::type U;
  const unsigned n = 8 * sizeof(T);
  if (bits == 0) return base;
  U mask = bits >= n ? (U)~(U)0 : (U)(((U)1 << bits) - 1);
  mask = (U)(mask << offset);
  return T((U)(((U)base & (U)~mask) | (((U)insert << offset) & mask)));
}
namespace detail {
// Overflow-checked integer arithmetic (NVRTC has no __builtin_*_overflow).
template <class T> INGOT_FN bool add_overflow(T a, T b, T* r) {
#if defined(INGOT_TARGET_CUDA)
  typedef typename ubits<T>::type U;
  *r = T((U)a + (U)b);
  if constexpr (ingot::tt::is_signed_int<T>::value) return (a > 0 && b > 0 && *r < 0) || (a < 0 && b < 0 && *r >= 0);
  else return *r < a;
#else
  return __builtin_add_overflow(a, b, r);
#endif
}
template <class T> INGOT_FN bool sub_overflow(T a, T b, T* r) {
#if defined(INGOT_TARGET_CUDA)
  typedef typename ubits<T>::type U;
  *r = T((U)a - (U)b);
  if constexpr (ingot::tt::is_signed_int<T>::value) return (b < 0 && a >= 0 && *r < 0) || (b > 0 && a < 0 && *r >= 0);
  else return b > a;
#else
  return __builtin_sub_overflow(a, b, r);
#endif
}
template <class T> INGOT_FN bool mul_overflow(T a, T b, T* r) {
#if defined(INGOT_TARGET_CUDA)
  typedef typename ubits<T>::type U;
  *r = T((U)a * (U)b);
  if (a == 0 || b == 0) return false;
  if constexpr (ingot::tt::is_signed_int<T>::value) {
    if ((a == -1 && b == numeric_limits<T>::min()) || (b == -1 && a == numeric_limits<T>::min())) return true;
    return *r / b != a;
  } else {
    return *r / b != a;
  }
#else
  return __builtin_mul_overflow(a, b, r);
#endif
}
}  // namespace detail
template <class T, INGOT_INT(T)> INGOT_FN T add_sat(T a, INGOT_ND(T) b) {
  T r;
  if (!detail::add_overflow(a, T(b), &r)) return r;
  if constexpr (ingot::tt::is_signed_int<T>::value) return b > 0 ? numeric_limits<T>::max() : numeric_limits<T>::min();
  else return numeric_limits<T>::max();
}
template <class T, INGOT_INT(T)> INGOT_FN T sub_sat(T a, INGOT_ND(T) b) {
  T r;
  if (!detail::sub_overflow(a, T(b), &r)) return r;
  if constexpr (ingot::tt::is_signed_int<T>::value) return b < 0 ? numeric_limits<T>::max() : numeric_limits<T>::min();
  else return T(0);
}
template <class T, INGOT_INT(T)> INGOT_FN T hadd(T a, INGOT_ND(T) b) {
  return T((a & b) + ((a ^ b) >> 1));
}
template <class T, INGOT_INT(T)> INGOT_FN T rhadd(T a, INGOT_ND(T) b) {
  return T((a | b) - ((a ^ b) >> 1));
}
template <class T, INGOT_INT(T)> INGOT_FN typename ingot::tt::make_unsigned<T>::type absdiff(T a, INGOT_ND(T) b) {
  typedef typename ingot::tt::make_unsigned<T>::type U;
  return a > b ? U((U)a - (U)b) : U((U)b - (U)a);
}
template <class T, INGOT_INT(T)> INGOT_FN T mad_sat(T a, INGOT_ND(T) b, INGOT_ND(T) c) {
  T m;
  if (detail::mul_overflow(a, T(b), &m)) {
    if constexpr (ingot::tt::is_signed_int<T>::value)
      return ((a < 0) != (b < 0)) ? numeric_limits<T>::min() : numeric_limits<T>::max();
    else return numeric_limits<T>::max();
  }
  return add_sat(m, c);
}
template <class T, INGOT_INT(T)> INGOT_FN T mul24(T a, INGOT_ND(T) b) { return T(a * b); }
template <class T, INGOT_INT(T)> INGOT_FN T mad24(T a, INGOT_ND(T) b, INGOT_ND(T) c) { return T(a * b + c); }
template <class T, INGOT_INT(T)> INGOT_FN T madhi(T a, INGOT_ND(T) b, INGOT_ND(T) c) { return T(mulhi(a, b) + c); }
INGOT_VEC1(clz)
INGOT_VEC1(ctz)
INGOT_VEC1(popcount)
INGOT_VEC1(reverse_bits)
INGOT_VEC2(rotate)
INGOT_VEC2(mulhi)
INGOT_VEC2(add_sat)
INGOT_VEC2(sub_sat)
INGOT_VEC2(hadd)
INGOT_VEC2(rhadd)
INGOT_VEC3(mad_sat)
template <class T, int N>
INGOT_FN vec<T, N> extract_bits(const vec<T, N>& x, unsigned offset, unsigned bits) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = extract_bits(x._v[i], offset, bits);
  return r;
}
template <class T, int N>
INGOT_FN vec<T, N> insert_bits(const vec<T, N>& b, const vec<T, N>& ins, unsigned offset, unsigned bits) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = insert_bits(b._v[i], ins._v[i], offset, bits);
  return r;
}

// ----- metal_pack: normalized integer packing (round to nearest even, clamped) -----
namespace detail {
INGOT_FN unsigned int to_unorm(float v, float scale) {
  v = v != v ? 0.0f : (v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v));
  return (unsigned int)m_rint(v * scale);
}
INGOT_FN unsigned int to_snorm(float v, float scale, unsigned int mask) {
  v = v != v ? 0.0f : (v < -1.0f ? -1.0f : (v > 1.0f ? 1.0f : v));
  return (unsigned int)(int)m_rint(v * scale) & mask;
}
INGOT_FN float from_snorm(int v, float scale) {
  float f = (float)v / scale;
  return f < -1.0f ? -1.0f : f;
}
}  // namespace detail
INGOT_FN uint pack_float_to_unorm4x8(float4 v) {
  return detail::to_unorm(v.x, 255.0f) | detail::to_unorm(v.y, 255.0f) << 8 |
         detail::to_unorm(v.z, 255.0f) << 16 | detail::to_unorm(v.w, 255.0f) << 24;
}
INGOT_FN uint pack_float_to_snorm4x8(float4 v) {
  return detail::to_snorm(v.x, 127.0f, 0xffu) | detail::to_snorm(v.y, 127.0f, 0xffu) << 8 |
         detail::to_snorm(v.z, 127.0f, 0xffu) << 16 | detail::to_snorm(v.w, 127.0f, 0xffu) << 24;
}
INGOT_FN uint pack_float_to_unorm2x16(float2 v) {
  return detail::to_unorm(v.x, 65535.0f) | detail::to_unorm(v.y, 65535.0f) << 16;
}
INGOT_FN uint pack_float_to_snorm2x16(float2 v) {
  return detail::to_snorm(v.x, 32767.0f, 0xffffu) | detail::to_snorm(v.y, 32767.0f, 0xffffu) << 16;
}
INGOT_FN float4 unpack_unorm4x8_to_float(uint p) {
  return float4(float(p & 0xffu), float(p >> 8 & 0xffu), float(p >> 16 & 0xffu), float(p >> 24)) / 255.0f;
}
INGOT_FN float4 unpack_snorm4x8_to_float(uint p) {
  return float4(detail::from_snorm((signed char)(p & 0xffu), 127.0f), detail::from_snorm((signed char)(p >> 8 & 0xffu), 127.0f),
                detail::from_snorm((signed char)(p >> 16 & 0xffu), 127.0f), detail::from_snorm((signed char)(p >> 24), 127.0f));
}
INGOT_FN float2 unpack_unorm2x16_to_float(uint p) {
  return float2(float(p & 0xffffu), float(p >> 16)) / 65535.0f;
}
INGOT_FN float2 unpack_snorm2x16_to_float(uint p) {
  return float2(detail::from_snorm((short)(p & 0xffffu), 32767.0f), detail::from_snorm((short)(p >> 16), 32767.0f));
}
INGOT_FN half4 unpack_unorm4x8_to_half(uint p) { return half4(unpack_unorm4x8_to_float(p)); }
INGOT_FN half4 unpack_snorm4x8_to_half(uint p) { return half4(unpack_snorm4x8_to_float(p)); }
INGOT_FN uint pack_half_to_unorm4x8(half4 v) { return pack_float_to_unorm4x8(float4(v)); }
INGOT_FN uint pack_half_to_snorm4x8(half4 v) { return pack_float_to_snorm4x8(float4(v)); }

}  // namespace metal

// as_type<T>(x) is an MSL operator: usable in any namespace, without `using namespace metal`.
using metal::as_type;
