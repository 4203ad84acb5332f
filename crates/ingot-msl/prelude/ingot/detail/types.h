// ingot prelude: type traits, scalar type names, half and bfloat.
#pragma once

#if defined(INGOT_TARGET_CPU) && defined(__F16C__)
#include <immintrin.h>
#endif

// MSL scalar names. glibc's <sys/types.h> declares the same typedefs (uint, ushort, ulong):
// redeclaring a typedef to the same type is allowed.
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;
typedef unsigned long ulong;
typedef decltype(sizeof(0)) ingot_size_t;

namespace ingot {
namespace tt {
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <class T, class U> struct is_same { static constexpr bool value = false; };
template <class T> struct is_same<T, T> { static constexpr bool value = true; };
template <class T> struct remove_cv { typedef T type; };
template <class T> struct remove_cv<const T> { typedef T type; };
template <class T> struct remove_cv<volatile T> { typedef T type; };
template <class T> struct remove_cv<const volatile T> { typedef T type; };
template <class T> struct remove_reference { typedef T type; };
template <class T> struct remove_reference<T&> { typedef T type; };
template <class T> struct remove_reference<T&&> { typedef T type; };
template <class T> struct identity { typedef T type; };
template <bool B, class T, class F> struct conditional { typedef T type; };
template <class T, class F> struct conditional<false, T, F> { typedef F type; };

template <class T> struct is_integral_ { static constexpr bool value = false; };
#define INGOT_INTEGRAL(T) \
  template <> struct is_integral_<T> { static constexpr bool value = true; };
INGOT_INTEGRAL(bool)
INGOT_INTEGRAL(char)
INGOT_INTEGRAL(signed char)
INGOT_INTEGRAL(unsigned char)
INGOT_INTEGRAL(short)
INGOT_INTEGRAL(unsigned short)
INGOT_INTEGRAL(int)
INGOT_INTEGRAL(unsigned int)
INGOT_INTEGRAL(long)
INGOT_INTEGRAL(unsigned long)
INGOT_INTEGRAL(long long)
INGOT_INTEGRAL(unsigned long long)
#undef INGOT_INTEGRAL
template <class T> struct is_integral : is_integral_<typename remove_cv<T>::type> {};
template <class T> struct is_native_float {
  static constexpr bool value = is_same<typename remove_cv<T>::type, float>::value ||
                                is_same<typename remove_cv<T>::type, double>::value;
};
template <class T> struct is_signed_int {
  static constexpr bool value = is_integral<T>::value && (T)(-1) < (T)0;
};
template <class T> struct make_unsigned { typedef T type; };
template <> struct make_unsigned<char> { typedef unsigned char type; };
template <> struct make_unsigned<signed char> { typedef unsigned char type; };
template <> struct make_unsigned<short> { typedef unsigned short type; };
template <> struct make_unsigned<int> { typedef unsigned int type; };
template <> struct make_unsigned<long> { typedef unsigned long type; };
template <> struct make_unsigned<long long> { typedef unsigned long long type; };
template <class T> T&& declval();
// A class (not half/bfloat, see below) that converts to float: Metal converts it to half too
// (MLX's `_NoMask` through its `operator bool`, fp8 types through `operator float`).
template <class T> struct is_class_ {
  template <class U> static constexpr bool test(int U::*) { return true; }
  template <class U> static constexpr bool test(...) { return false; }
  static constexpr bool value = test<T>(nullptr);
};
template <class T, class = void> struct to_float_ { static constexpr bool value = false; };
template <class T>
struct to_float_<T, decltype((void)static_cast<float>(declval<T&>()))> {
  static constexpr bool value = true;
};
}  // namespace tt
}  // namespace ingot

#define INGOT_REQ(...) typename ::ingot::tt::enable_if<(__VA_ARGS__), int>::type = 0
#define INGOT_ND(...) typename ::ingot::tt::identity<__VA_ARGS__>::type

namespace metal {
typedef ::uint uint;
typedef ::ushort ushort;
typedef ::uchar uchar;
typedef ::ulong ulong;
typedef ::ingot_size_t size_t;
typedef decltype((int*)0 - (int*)0) ptrdiff_t;

namespace detail {
// Byte copy usable on both targets (NVRTC has no __builtin_memcpy).
INGOT_FN void copy_bytes(void* dst, const void* src, ingot_size_t n) {
#if defined(INGOT_TARGET_CUDA)
  unsigned char* d = (unsigned char*)dst;
  const unsigned char* s = (const unsigned char*)src;
  for (ingot_size_t i = 0; i < n; ++i) d[i] = s[i];
#else
  __builtin_memcpy(dst, src, n);
#endif
}
template <class To, class From>
INGOT_FN constexpr To bitcast(const From& f) {
  static_assert(sizeof(To) == sizeof(From), "as_type: sizes differ");
  return __builtin_bit_cast(To, f);  // g++ >= 11, clang >= 9, NVRTC
}

// float <-> IEEE binary16 and bfloat16, round to nearest even; NaN payload kept (quietened), inf,
// denormals. The portable forms are constexpr (Metal code does half arithmetic in constant
// expressions: MLX's complex.h static_asserts it); at run time the hardware conversions serve.
INGOT_FN constexpr unsigned short soft_f32_to_f16(float f) {
  unsigned int x = bitcast<unsigned int>(f);
  unsigned int sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u)  // inf or NaN
    return (unsigned short)(sign | (x > 0x7f800000u ? 0x7e00u | ((x >> 13) & 0x3ffu) : 0x7c00u));
  if (x >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);  // rounds to inf
  if (x < 0x38800000u) {  // below the smallest normal half: the FPU rounds for us
    float t = bitcast<float>(x) + 0.5f;
    return (unsigned short)(sign | (bitcast<unsigned int>(t) - 0x3f000000u));
  }
  unsigned int odd = (x >> 13) & 1u;
  x += 0xc8000fffu + odd;  // rebias exponent (-112 << 23), round half to even
  return (unsigned short)(sign | (x >> 13));
}

INGOT_FN constexpr float soft_f16_to_f32(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000u) << 16;
  unsigned int e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return bitcast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {
    float v = (float)m * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return bitcast<float>(sign | bitcast<unsigned int>(v));
  }
  return bitcast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

INGOT_FN constexpr unsigned short soft_f32_to_bf16(float f) {
  unsigned int x = bitcast<unsigned int>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return (unsigned short)(x >> 16);
}

#if defined(INGOT_TARGET_CUDA) || defined(__F16C__) || defined(__aarch64__)
INGOT_FN unsigned short hw_f32_to_f16(float f) {
#if defined(INGOT_TARGET_CUDA)
  // PTX's cvt makes every NaN the canonical one; Metal (and NumPy) keep its sign and payload.
  unsigned int x = bitcast<unsigned int>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u)
    return (unsigned short)(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x3ffu));
  unsigned short r;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
#elif defined(__F16C__)
  return (unsigned short)_cvtss_sh(f, 0);
#else
  __fp16 h = (__fp16)f;
  unsigned short r;
  __builtin_memcpy(&r, &h, 2);
  return r;
#endif
}

INGOT_FN float hw_f16_to_f32(unsigned short h) {
#if defined(INGOT_TARGET_CUDA)
  if ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0)  // a NaN keeps its sign (see above)
    return bitcast<float>(((unsigned int)(h & 0x8000u) << 16) | 0x7fc00000u |
                          ((unsigned int)(h & 0x3ffu) << 13));
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
#elif defined(__F16C__)
  return _cvtsh_ss(h);
#else
  __fp16 v;
  __builtin_memcpy(&v, &h, 2);
  return (float)v;
#endif
}
#define INGOT_HW_F16 1
#endif

#if defined(INGOT_TARGET_CUDA)
INGOT_FN unsigned short hw_f32_to_bf16(float f) {
  unsigned int x = bitcast<unsigned int>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);  // sign kept
  unsigned short r;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(f));
  return r;
}
#endif

INGOT_FN constexpr unsigned short f32_to_f16(float f) {
#if defined(INGOT_HW_F16)
  if (!__builtin_is_constant_evaluated()) return hw_f32_to_f16(f);
#endif
  return soft_f32_to_f16(f);
}

INGOT_FN constexpr float f16_to_f32(unsigned short h) {
#if defined(INGOT_HW_F16)
  if (!__builtin_is_constant_evaluated()) return hw_f16_to_f32(h);
#endif
  return soft_f16_to_f32(h);
}

INGOT_FN constexpr unsigned short f32_to_bf16(float f) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return hw_f32_to_bf16(f);
#endif
  return soft_f32_to_bf16(f);
}

INGOT_FN constexpr float bf16_to_f32(unsigned short b) {
  return bitcast<float>((unsigned int)b << 16);
}
}  // namespace detail

struct bfloat;
struct raw_bits_t {};

// half: IEEE binary16. Converts implicitly to and from float; half op half -> half (computed in
// float, rounded once: exact for + - * / sqrt), half op float -> float, half op int -> half.
struct half {
  unsigned short bits;
  half() = default;
  INGOT_FN constexpr half(raw_bits_t, unsigned short b) : bits(b) {}
  INGOT_FN constexpr half(float f) : bits(detail::f32_to_f16(f)) {}
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value ||
                               ingot::tt::is_same<T, double>::value)>
  INGOT_FN constexpr half(T v) : bits(detail::f32_to_f16((float)v)) {}
  template <class T, class D = typename ingot::tt::remove_cv<typename ingot::tt::remove_reference<T>::type>::type,
            INGOT_REQ(ingot::tt::is_class_<D>::value && !ingot::tt::is_same<D, half>::value &&
                      !ingot::tt::is_same<D, bfloat>::value && ingot::tt::to_float_<D>::value)>
  INGOT_FN constexpr half(T&& v) : bits(detail::f32_to_f16(static_cast<float>(v))) {}
  // A template, so a class converting to both float and bfloat (MLX's fp8 types) takes the
  // float constructor instead of an ambiguity.
  template <class B, INGOT_REQ(ingot::tt::is_same<B, bfloat>::value)>
  INGOT_FN constexpr explicit half(const B& b) : bits(detail::f32_to_f16(float(b))) {}
  INGOT_FN constexpr operator float() const { return detail::f16_to_f32(bits); }
  static INGOT_FN half from_bits(unsigned short b) {
    half h;
    h.bits = b;
    return h;
  }
  template <class T> INGOT_FN constexpr half& operator+=(const T& o) { return *this = half(float(*this) + float(o)); }
  template <class T> INGOT_FN constexpr half& operator-=(const T& o) { return *this = half(float(*this) - float(o)); }
  template <class T> INGOT_FN constexpr half& operator*=(const T& o) { return *this = half(float(*this) * float(o)); }
  template <class T> INGOT_FN constexpr half& operator/=(const T& o) { return *this = half(float(*this) / float(o)); }
  INGOT_FN constexpr half& operator++() { return *this += 1.0f; }
  INGOT_FN constexpr half& operator--() { return *this -= 1.0f; }
  INGOT_FN constexpr half operator++(int) { half t = *this; *this += 1.0f; return t; }
  INGOT_FN constexpr half operator--(int) { half t = *this; *this -= 1.0f; return t; }
};

// bfloat: brain float. Converts implicitly to float, from integers implicitly; from float, double
// and half explicitly.
struct bfloat {
  unsigned short bits;
  bfloat() = default;
  INGOT_FN constexpr bfloat(raw_bits_t, unsigned short b) : bits(b) {}
  INGOT_FN constexpr explicit bfloat(float f) : bits(detail::f32_to_bf16(f)) {}
  // From integers implicitly (`bfloat d = 0;` is valid Metal), from double explicitly.
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value)>
  INGOT_FN constexpr bfloat(T v) : bits(detail::f32_to_bf16((float)v)) {}
  template <class T, INGOT_REQ(ingot::tt::is_same<T, double>::value)>
  INGOT_FN constexpr explicit bfloat(T v) : bits(detail::f32_to_bf16((float)v)) {}
  template <class H, INGOT_REQ(ingot::tt::is_same<H, half>::value)>
  INGOT_FN constexpr explicit bfloat(const H& h) : bits(detail::f32_to_bf16(float(h))) {}
  // Assigned a class with a conversion to a scalar: Metal converts MLX's `_NoMask` (only an
  // `operator bool`) to bfloat in `scale = mask;` (steel_gemm_masked.h). An assignment, not a
  // converting constructor as half has: that would make (bfloat, half) operators candidates
  // for classes converting to half (ambiguous `slot / half` in ggml's blocks).
  template <class T, class D = typename ingot::tt::remove_cv<typename ingot::tt::remove_reference<T>::type>::type,
            INGOT_REQ(ingot::tt::is_class_<D>::value && !ingot::tt::is_same<D, half>::value &&
                      !ingot::tt::is_same<D, bfloat>::value && ingot::tt::to_float_<D>::value)>
  INGOT_FN constexpr bfloat& operator=(T&& v) {
    bits = detail::f32_to_bf16(static_cast<float>(v));
    return *this;
  }
  INGOT_FN constexpr operator float() const { return detail::bf16_to_f32(bits); }
  static INGOT_FN bfloat from_bits(unsigned short b) {
    bfloat h;
    h.bits = b;
    return h;
  }
  template <class T> INGOT_FN constexpr bfloat& operator+=(const T& o) { return *this = bfloat(float(*this) + float(o)); }
  template <class T> INGOT_FN constexpr bfloat& operator-=(const T& o) { return *this = bfloat(float(*this) - float(o)); }
  template <class T> INGOT_FN constexpr bfloat& operator*=(const T& o) { return *this = bfloat(float(*this) * float(o)); }
  template <class T> INGOT_FN constexpr bfloat& operator/=(const T& o) { return *this = bfloat(float(*this) / float(o)); }
  INGOT_FN constexpr bfloat& operator++() { return *this += 1.0f; }
  INGOT_FN constexpr bfloat& operator--() { return *this -= 1.0f; }
  INGOT_FN constexpr bfloat operator++(int) { bfloat t = *this; *this += 1.0f; return t; }
  INGOT_FN constexpr bfloat operator--(int) { bfloat t = *this; *this -= 1.0f; return t; }
};

static_assert(sizeof(half) == 2 && alignof(half) == 2, "half layout");
static_assert(sizeof(bfloat) == 2 && alignof(bfloat) == 2, "bfloat layout");

typedef half half_t;
typedef bfloat bfloat16_t;

// Arithmetic. H is half or bfloat; the other operand: same type -> H, integer -> H,
// float/double -> float, the other 16-bit type -> float.
#define INGOT_H16_OPS(H)                                                                        \
  INGOT_FN constexpr H operator+(H a) { return a; }                                             \
  INGOT_FN constexpr H operator-(H a) { return H(raw_bits_t{}, (unsigned short)(a.bits ^ 0x8000u)); } \
  /* a template: a class converting to bool (MLX's _NoMask) keeps the built-in `!` */   \
  template <class X, INGOT_REQ(ingot::tt::is_same<X, H>::value)>                          \
  INGOT_FN constexpr bool operator!(X a) { return !float(a); }                            \
  INGOT_H16_BIN(H, +)                                                                           \
  INGOT_H16_BIN(H, -)                                                                           \
  INGOT_H16_BIN(H, *)                                                                           \
  INGOT_H16_BIN(H, /)                                                                           \
  INGOT_H16_CMP(H, ==)                                                                          \
  INGOT_H16_CMP(H, !=)                                                                          \
  INGOT_H16_CMP(H, <)                                                                           \
  INGOT_H16_CMP(H, >)                                                                           \
  INGOT_H16_CMP(H, <=)                                                                          \
  INGOT_H16_CMP(H, >=)
#define INGOT_H16_BIN(H, op)                                                                    \
  INGOT_FN constexpr H operator op(H a, H b) { return H(float(a) op float(b)); }                         \
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value)>                               \
  INGOT_FN constexpr H operator op(H a, T b) { return H(float(a) op(float) b); }                          \
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value)>                               \
  INGOT_FN constexpr H operator op(T a, H b) { return H((float)a op float(b)); }                          \
  template <class T, INGOT_REQ(ingot::tt::is_native_float<T>::value)>                           \
  INGOT_FN constexpr float operator op(H a, T b) { return float(a) op(float) b; }                         \
  template <class T, INGOT_REQ(ingot::tt::is_native_float<T>::value)>                           \
  INGOT_FN constexpr float operator op(T a, H b) { return (float)a op float(b); }
#define INGOT_H16_CMP(H, op)                                                                    \
  INGOT_FN constexpr bool operator op(H a, H b) { return float(a) op float(b); }                         \
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value ||                              \
                               ingot::tt::is_native_float<T>::value)>                           \
  INGOT_FN constexpr bool operator op(H a, T b) { return float(a) op(float) b; }                          \
  template <class T, INGOT_REQ(ingot::tt::is_integral<T>::value ||                              \
                               ingot::tt::is_native_float<T>::value)>                           \
  INGOT_FN constexpr bool operator op(T a, H b) { return (float)a op float(b); }
INGOT_H16_OPS(half)
INGOT_H16_OPS(bfloat)
#define INGOT_HB_MIX(op)                                                                        \
  INGOT_FN constexpr float operator op(half a, bfloat b) { return float(a) op float(b); }                \
  INGOT_FN constexpr float operator op(bfloat a, half b) { return float(a) op float(b); }
INGOT_HB_MIX(+)
INGOT_HB_MIX(-)
INGOT_HB_MIX(*)
INGOT_HB_MIX(/)
#undef INGOT_HB_MIX
#undef INGOT_H16_OPS
#undef INGOT_H16_BIN
#undef INGOT_H16_CMP

// Type traits the vector and math code uses.
template <class T> struct is_half_like {
  static constexpr bool value = ingot::tt::is_same<typename ingot::tt::remove_cv<T>::type, half>::value ||
                                ingot::tt::is_same<typename ingot::tt::remove_cv<T>::type, bfloat>::value;
};
namespace detail {
template <class T> struct is_float_scalar {
  static constexpr bool value = ingot::tt::is_native_float<T>::value || is_half_like<T>::value;
};
// Metal's is_floating_point and is_integral hold for vectors of such scalars too (`float2`,
// `int4`; vec.h specializes these two for them); is_scalar does not.
template <class T> struct fp_or_fp_vec : is_float_scalar<T> {};
template <class T> struct int_or_int_vec : ingot::tt::is_integral<T> {};
}  // namespace detail
template <class T>
struct is_floating_point : detail::fp_or_fp_vec<typename ingot::tt::remove_cv<T>::type> {};
template <class T> struct is_scalar {
  static constexpr bool value = detail::is_float_scalar<T>::value || ingot::tt::is_integral<T>::value;
};
template <class T>
struct is_integral : detail::int_or_int_vec<typename ingot::tt::remove_cv<T>::type> {};
template <class T, class U> struct is_same : ingot::tt::is_same<T, U> {};
template <bool B, class T = void> struct enable_if : ingot::tt::enable_if<B, T> {};
template <bool B, class T = void> using enable_if_t = typename ingot::tt::enable_if<B, T>::type;
template <class T> struct remove_cv : ingot::tt::remove_cv<T> {};
// `uniform<T>`: a value the same in every thread; a plain value here.
template <class T> using uniform = T;
template <class T> INGOT_FN constexpr T make_uniform(T v) { return v; }
// Address spaces are gone after translation: removing one is the identity (MLX's steel).
template <class T> struct remove_addrspace {
  typedef T type;
};
template <class T> using remove_addrspace_t = T;
template <class T> using remove_cv_t = typename ingot::tt::remove_cv<T>::type;
template <class T, class U> constexpr bool is_same_v = ingot::tt::is_same<T, U>::value;
namespace detail {
template <class T> T&& declval_() noexcept;
}  // namespace detail
// <metal_utility>'s declval (unevaluated contexts only: decltype(metal::declval<F>()(x))).
template <class T> T&& declval() noexcept;
// is_convertible: whether `From` converts implicitly to `To` (void to void only).
template <class From, class To> struct is_convertible {
 private:
  template <class X> static INGOT_FN void take(X);
  template <class F, class T, class = decltype(take<T>(detail::declval_<F>()))>
  static constexpr bool test(int) { return true; }
  template <class F, class T> static constexpr bool test(...) { return false; }
 public:
  static constexpr bool value = test<From, To>(0);
};
template <class From, class To> constexpr bool is_convertible_v = is_convertible<From, To>::value;
template <class T> constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> constexpr bool is_integral_v = is_integral<T>::value;
template <class T> constexpr bool is_scalar_v = is_scalar<T>::value;
template <class T> struct is_signed {
  static constexpr bool value = detail::is_float_scalar<T>::value || ingot::tt::is_signed_int<T>::value;
};
template <class T> struct is_unsigned {
  static constexpr bool value = ingot::tt::is_integral<T>::value && !ingot::tt::is_signed_int<T>::value;
};
template <class T> struct make_unsigned : ingot::tt::make_unsigned<T> {};
template <class T> using make_unsigned_t = typename ingot::tt::make_unsigned<T>::type;
template <bool B, class T, class F> struct conditional : ingot::tt::conditional<B, T, F> {};
template <bool B, class T, class F> using conditional_t = typename ingot::tt::conditional<B, T, F>::type;
template <class T> constexpr bool is_signed_v = ingot::tt::is_signed_int<T>::value ||
                                                detail::is_float_scalar<T>::value;
template <class T> constexpr bool is_unsigned_v = ingot::tt::is_integral<T>::value && !ingot::tt::is_signed_int<T>::value;
template <class T, T v> struct integral_constant {
  static constexpr T value = v;
  typedef T value_type;
  INGOT_FN constexpr operator T() const { return v; }
};
typedef integral_constant<bool, true> true_type;
typedef integral_constant<bool, false> false_type;
template <bool B> using bool_constant = integral_constant<bool, B>;
// Metal's internal logical traits (its header's spellings of C++17's conjunction, disjunction
// and negation, which MSL, C++14-based, does not name publicly), used by MLX's atomic.h under
// `#pragma METAL internals : enable`. _conjunction<B...> is the first B whose value is false (or
// the last), _disjunction<B...> the first whose value is true.
template <class... B> struct _conjunction : true_type {};
template <class B1> struct _conjunction<B1> : B1 {};
template <class B1, class... Bn>
struct _conjunction<B1, Bn...> : ingot::tt::conditional<bool(B1::value), _conjunction<Bn...>, B1>::type {};
template <class... B> struct _disjunction : false_type {};
template <class B1> struct _disjunction<B1> : B1 {};
template <class B1, class... Bn>
struct _disjunction<B1, Bn...> : ingot::tt::conditional<bool(B1::value), B1, _disjunction<Bn...>>::type {};
template <class B> struct _negation : bool_constant<!bool(B::value)> {};

// "wide" type for computing: half/bfloat -> float, others unchanged.
template <class T> struct wide { typedef T type; };
template <> struct wide<half> { typedef float type; };
template <> struct wide<bfloat> { typedef float type; };
}  // namespace metal

using metal::bfloat;
using metal::half;

// The conditional operator's operand types the translation spells out (see ternary.rs):
// `tern_t<decltype((x)), decltype((y))>` for operand x against operand y. Metal's arithmetic
// conversions: half/bfloat against float, double or the other 16-bit type -> float; an integer
// against half/bfloat -> that type; a scalar against a vector -> that vector; anything else
// unchanged (value category kept).
namespace ingot {
template <class T> struct tern_bare {
  typedef typename tt::remove_cv<typename tt::remove_reference<T>::type>::type type;
};
// Vectors are specialised in vec.h: a scalar against a vector becomes that vector (Metal's
// `c ? half4(...) : 0.0f`).
template <class T> struct tern_is_vec {
  static constexpr bool value = false;
};
template <class X, class O> constexpr int tern_kind() {
  return metal::is_half_like<X>::value &&
                 (tt::is_native_float<O>::value ||
                  (metal::is_half_like<O>::value && !tt::is_same<X, O>::value))
             ? 1
             : ((tt::is_integral<X>::value && metal::is_half_like<O>::value) ||
                        (metal::is_scalar<X>::value && tern_is_vec<O>::value)
                    ? 2
                    : 0);
}
template <class X, class O,
          int K = tern_kind<typename tern_bare<X>::type, typename tern_bare<O>::type>()>
struct tern {
  typedef X type;
};
template <class X, class O> struct tern<X, O, 1> {
  typedef float type;
};
template <class X, class O> struct tern<X, O, 2> {
  typedef typename tern_bare<O>::type type;
};
template <class X, class O> using tern_t = typename tern<X, O>::type;

// Storage of a half/bfloat member of an anonymous struct (see anon_struct.rs): g++ refuses
// members with constructors there. Same bits; reads as the 16-bit type or as float (a non-
// template operator beats the 16-bit type's templates, so `s * 2.0f` is float and `s / 16.h`
// half, as on Metal); assigned from whatever the 16-bit type is built from.
template <class H> struct h16_slot {
  unsigned short bits;
  INGOT_FN constexpr operator H() const { return H(metal::raw_bits_t{}, bits); }
  INGOT_FN constexpr operator float() const { return float(H(metal::raw_bits_t{}, bits)); }
  // `&blk.d` is a pointer to the 16-bit type (same layout).
  INGOT_FN H* operator&() { return reinterpret_cast<H*>(this); }
  INGOT_FN const H* operator&() const { return reinterpret_cast<const H*>(this); }
  template <class T> INGOT_FN h16_slot& operator=(const T& v) {
    bits = H(v).bits;
    return *this;
  }
  template <class T> INGOT_FN h16_slot& operator+=(const T& o) { return *this = H(float(*this) + float(o)); }
  template <class T> INGOT_FN h16_slot& operator-=(const T& o) { return *this = H(float(*this) - float(o)); }
  template <class T> INGOT_FN h16_slot& operator*=(const T& o) { return *this = H(float(*this) * float(o)); }
  template <class T> INGOT_FN h16_slot& operator/=(const T& o) { return *this = H(float(*this) / float(o)); }
};
template <class T> struct anon { typedef T type; };
template <> struct anon<metal::half> { typedef h16_slot<metal::half> type; };
template <> struct anon<metal::bfloat> { typedef h16_slot<metal::bfloat> type; };
template <> struct anon<const metal::half> { typedef const h16_slot<metal::half> type; };
template <> struct anon<const metal::bfloat> { typedef const h16_slot<metal::bfloat> type; };
template <class T> using anon_t = typename anon<T>::type;
}  // namespace ingot
