// ingot prelude: vectors vec<T,N> (MSL sizes and alignment), packed vectors, matrices, array.
#pragma once

namespace metal {

template <class T, int N> struct vec;
template <class T, int N> struct packed_vec;

// Proxy for a writable swizzle (v.xy_ref() = ...); see ABI.md "Swizzles".
template <class T, int K> struct swizzle_ref {
  T* p;
  int idx[K];
  template <class... I>
  INGOT_FN swizzle_ref(T* base, I... i) : p(base), idx{i...} {}
  INGOT_FN operator vec<T, K>() const {
    vec<T, K> r;
    for (int k = 0; k < K; ++k) r._v[k] = p[idx[k]];
    return r;
  }
  INGOT_FN vec<T, K> get() const { return *this; }
  INGOT_FN swizzle_ref& operator=(const vec<T, K>& v) {
    for (int k = 0; k < K; ++k) p[idx[k]] = v._v[k];
    return *this;
  }
  INGOT_FN swizzle_ref& operator=(const swizzle_ref& o) { return *this = o.get(); }
  INGOT_FN swizzle_ref& operator=(const T& s) { return *this = vec<T, K>(s); }
#define INGOT_SWZ_CASSIGN(op)                                   \
  template <class U> INGOT_FN swizzle_ref& operator op(const U& u) { \
    vec<T, K> t = get();                                        \
    t op u;                                                     \
    return *this = t;                                           \
  }
  INGOT_SWZ_CASSIGN(+=)
  INGOT_SWZ_CASSIGN(-=)
  INGOT_SWZ_CASSIGN(*=)
  INGOT_SWZ_CASSIGN(/=)
  INGOT_SWZ_CASSIGN(%=)
  INGOT_SWZ_CASSIGN(&=)
  INGOT_SWZ_CASSIGN(|=)
  INGOT_SWZ_CASSIGN(^=)
  INGOT_SWZ_CASSIGN(<<=)
  INGOT_SWZ_CASSIGN(>>=)
#undef INGOT_SWZ_CASSIGN
};

#define INGOT_VEC_COMMON(N)                                                          \
  typedef T value_type;                                                              \
  static constexpr int size = N;                                                     \
  vec() = default;                                                                   \
  template <class U, INGOT_REQ(!ingot::tt::is_same<U, T>::value)>                    \
  INGOT_FN explicit vec(const vec<U, N>& o) {                                        \
    for (int i = 0; i < N; ++i) _v[i] = T(o._v[i]);                                  \
  }                                                                                  \
  /* `half4 v = 0;`: a scalar of another arithmetic type broadcasts (one conversion */ \
  /* where C++ would need two: int -> half -> half4). */                              \
  template <class U, INGOT_REQ(::metal::is_scalar<U>::value &&                       \
                               !ingot::tt::is_same<U, T>::value &&                    \
                               (::metal::is_half_like<T>::value ||                    \
                                ::metal::is_half_like<U>::value))>                    \
  INGOT_FN constexpr vec(U s) : vec(T(s)) {}                                         \
  /* float4(packed_char4): converts from a packed vector of another type too. */     \
  template <class U, INGOT_REQ(!ingot::tt::is_same<U, T>::value)>                    \
  INGOT_FN explicit vec(const packed_vec<U, N>& o) {                                 \
    for (int i = 0; i < N; ++i) _v[i] = T(o._v[i]);                                  \
  }                                                                                  \
  INGOT_FN T& operator[](int i) { return _v[i]; }                                    \
  INGOT_FN const T& operator[](int i) const { return _v[i]; }                        \
  INGOT_VEC_CASSIGN(+=, +)                                                           \
  INGOT_VEC_CASSIGN(-=, -)                                                           \
  INGOT_VEC_CASSIGN(*=, *)                                                           \
  INGOT_VEC_CASSIGN(/=, /)                                                           \
  INGOT_VEC_CASSIGN(%=, %)                                                           \
  INGOT_VEC_CASSIGN(&=, &)                                                           \
  INGOT_VEC_CASSIGN(|=, |)                                                           \
  INGOT_VEC_CASSIGN(^=, ^)                                                           \
  INGOT_VEC_CASSIGN(<<=, <<)                                                         \
  INGOT_VEC_CASSIGN(>>=, >>)                                                         \
  INGOT_FN vec& operator++() { return *this += T(1); }                               \
  INGOT_FN vec& operator--() { return *this -= T(1); }                               \
  INGOT_FN vec operator++(int) { vec t = *this; *this += T(1); return t; }           \
  INGOT_FN vec operator--(int) { vec t = *this; *this -= T(1); return t; }

#define INGOT_VEC_CASSIGN(cop, op)                                                   \
  INGOT_FN vec& operator cop(const vec& o) {                                         \
    for (int i = 0; i < size; ++i) _v[i] = T(_v[i] op o._v[i]);                      \
    return *this;                                                                    \
  }                                                                                  \
  INGOT_FN vec& operator cop(const T& s) {                                           \
    for (int i = 0; i < size; ++i) _v[i] = T(_v[i] op s);                            \
    return *this;                                                                    \
  }                                                                                  \
  /* `half4 *= float`: any other scalar, without a conversion to choose */            \
  template <class U, INGOT_REQ(::metal::is_scalar<U>::value &&                       \
                               !ingot::tt::is_same<U, T>::value)>                    \
  INGOT_FN vec& operator cop(const U& s) {                                           \
    for (int i = 0; i < size; ++i) _v[i] = T(_v[i] op s);                            \
    return *this;                                                                    \
  }

namespace detail {
struct vpiece_t {};
}  // namespace detail
// A vector piece of a mixed constructor: anything but a scalar that converts to vec<T, M>.
#define INGOT_VPIECE(V, M) \
  INGOT_REQ(!::metal::is_scalar<V>::value && ::metal::is_convertible<V, vec<T, M>>::value)
template <class T> struct alignas(2 * sizeof(T)) vec<T, 2> {
  union {
    T _v[2];
    struct { T x, y; };
    struct { T r, g; };
  };
  INGOT_VEC_COMMON(2)
  INGOT_FN constexpr vec(T s) : _v{s, s} {}
  INGOT_FN constexpr vec(T a, T b) : _v{a, b} {}
#define INGOT_SWZ_N 2
#include <ingot/detail/swizzle.h>
#undef INGOT_SWZ_N
};

template <class T> struct alignas(4 * sizeof(T)) vec<T, 3> {
  union {
    T _v[3];
    struct { T x, y, z; };
    struct { T r, g, b; };
  };
  INGOT_VEC_COMMON(3)
  INGOT_FN constexpr vec(T s) : _v{s, s, s} {}
  INGOT_FN constexpr vec(T a, T b, T c) : _v{a, b, c} {}
  // Metal's brace initialiser may give fewer elements (`uint4 k = {a, b, c};`): the rest are
  // zero. The vector pieces of the mixed constructors are templates so a scalar cannot reach
  // them by the broadcast conversion (that made `{a, b, c}` ambiguous).
  INGOT_FN constexpr vec(T a, T b) : _v{a, b, T(0)} {}
  template <class V, INGOT_VPIECE(V, 2)>
  INGOT_FN constexpr vec(const V& a2, T c) : vec(vec<T, 2>(a2), c, detail::vpiece_t{}) {}
  template <class V, INGOT_VPIECE(V, 2)>
  INGOT_FN constexpr vec(T a, const V& b2) : vec(a, vec<T, 2>(b2), detail::vpiece_t{}) {}
  INGOT_FN constexpr vec(const vec<T, 2>& a, T c, detail::vpiece_t) : _v{a._v[0], a._v[1], c} {}
  INGOT_FN constexpr vec(T a, const vec<T, 2>& b, detail::vpiece_t) : _v{a, b._v[0], b._v[1]} {}
#define INGOT_SWZ_N 3
#include <ingot/detail/swizzle.h>
#undef INGOT_SWZ_N
};

template <class T> struct alignas(4 * sizeof(T)) vec<T, 4> {
  union {
    T _v[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
  };
  INGOT_VEC_COMMON(4)
  INGOT_FN constexpr vec(T s) : _v{s, s, s, s} {}
  INGOT_FN constexpr vec(T a, T b, T c, T d) : _v{a, b, c, d} {}
  INGOT_FN constexpr vec(T a, T b, T c) : _v{a, b, c, T(0)} {}
  INGOT_FN constexpr vec(T a, T b) : _v{a, b, T(0), T(0)} {}
  template <class V, INGOT_VPIECE(V, 2)>
  INGOT_FN constexpr vec(const V& a2, T c, T d) : vec(vec<T, 2>(a2), c, d, detail::vpiece_t{}) {}
  template <class V, INGOT_VPIECE(V, 2)>
  INGOT_FN constexpr vec(T a, const V& b2, T d) : vec(a, vec<T, 2>(b2), d, detail::vpiece_t{}) {}
  template <class V, INGOT_VPIECE(V, 2)>
  INGOT_FN constexpr vec(T a, T b, const V& c2) : vec(a, b, vec<T, 2>(c2), detail::vpiece_t{}) {}
  template <class V, class W, INGOT_VPIECE(V, 2), INGOT_VPIECE(W, 2)>
  INGOT_FN constexpr vec(const V& a2, const W& b2) : vec(vec<T, 2>(a2), vec<T, 2>(b2), detail::vpiece_t{}) {}
  template <class V, INGOT_VPIECE(V, 3)>
  INGOT_FN constexpr vec(const V& a3, T d) : vec(vec<T, 3>(a3), d, detail::vpiece_t{}) {}
  template <class V, INGOT_VPIECE(V, 3)>
  INGOT_FN constexpr vec(T a, const V& b3) : vec(a, vec<T, 3>(b3), detail::vpiece_t{}) {}
  INGOT_FN constexpr vec(const vec<T, 2>& a, T c, T d, detail::vpiece_t) : _v{a._v[0], a._v[1], c, d} {}
  INGOT_FN constexpr vec(T a, const vec<T, 2>& b, T d, detail::vpiece_t) : _v{a, b._v[0], b._v[1], d} {}
  INGOT_FN constexpr vec(T a, T b, const vec<T, 2>& c, detail::vpiece_t) : _v{a, b, c._v[0], c._v[1]} {}
  INGOT_FN constexpr vec(const vec<T, 2>& a, const vec<T, 2>& b, detail::vpiece_t) : _v{a._v[0], a._v[1], b._v[0], b._v[1]} {}
  INGOT_FN constexpr vec(const vec<T, 3>& a, T d, detail::vpiece_t) : _v{a._v[0], a._v[1], a._v[2], d} {}
  INGOT_FN constexpr vec(T a, const vec<T, 3>& b, detail::vpiece_t) : _v{a, b._v[0], b._v[1], b._v[2]} {}
#define INGOT_SWZ_N 4
#include <ingot/detail/swizzle.h>
#undef INGOT_SWZ_N
};
#undef INGOT_VEC_COMMON
#undef INGOT_VEC_CASSIGN

}  // namespace metal
namespace ingot {
template <class T, int N> struct tern_is_vec<metal::vec<T, N>> {
  static constexpr bool value = true;
};
}  // namespace ingot
namespace metal {
template <class T> struct is_vector { static constexpr bool value = false; };
template <class T, int N> struct is_vector<vec<T, N>> { static constexpr bool value = true; };
namespace detail {
template <class T, int N> struct fp_or_fp_vec<vec<T, N>> : is_float_scalar<T> {};
template <class T, int N> struct int_or_int_vec<vec<T, N>> : ingot::tt::is_integral<T> {};
}  // namespace detail
template <class T> struct vec_elements { typedef T type; static constexpr int value = 1; };
template <class T, int N> struct vec_elements<vec<T, N>> { typedef T type; static constexpr int value = N; };
// Metal's trait for the types the simd_* functions take (candle's reduce.metal tests it): the
// 8-, 16- and 32-bit integers, half, bfloat, float and their vectors.
template <class T> struct __is_valid_simdgroup_type {
 private:
  typedef typename vec_elements<typename ingot::tt::remove_cv<T>::type>::type E;
 public:
  static constexpr bool value =
      (ingot::tt::is_integral<E>::value && !ingot::tt::is_same<E, bool>::value && sizeof(E) <= 4) ||
      is_half_like<E>::value || ingot::tt::is_same<E, float>::value;
};

// ----- component-wise operators -----
#define INGOT_VEC_BINOP(op)                                                                  \
  template <class T, int N>                                                                  \
  INGOT_FN vec<T, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {                   \
    vec<T, N> r;                                                                             \
    for (int i = 0; i < N; ++i) r._v[i] = T(a._v[i] op b._v[i]);                             \
    return r;                                                                                \
  }                                                                                          \
  template <class T, int N>                                                                  \
  INGOT_FN vec<T, N> operator op(const vec<T, N>& a, const INGOT_ND(T) & s) {                \
    vec<T, N> r;                                                                             \
    for (int i = 0; i < N; ++i) r._v[i] = T(a._v[i] op s);                                   \
    return r;                                                                                \
  }                                                                                          \
  template <class T, int N>                                                                  \
  INGOT_FN vec<T, N> operator op(const INGOT_ND(T) & s, const vec<T, N>& b) {                \
    vec<T, N> r;                                                                             \
    for (int i = 0; i < N; ++i) r._v[i] = T(s op b._v[i]);                                   \
    return r;                                                                                \
  }
INGOT_VEC_BINOP(+)
INGOT_VEC_BINOP(-)
INGOT_VEC_BINOP(*)
INGOT_VEC_BINOP(/)
INGOT_VEC_BINOP(%)
INGOT_VEC_BINOP(&)
INGOT_VEC_BINOP(|)
INGOT_VEC_BINOP(^)
INGOT_VEC_BINOP(<<)
INGOT_VEC_BINOP(>>)
#undef INGOT_VEC_BINOP

#define INGOT_VEC_CMP(op)                                                                    \
  template <class T, int N>                                                                  \
  INGOT_FN vec<bool, N> operator op(const vec<T, N>& a, const vec<T, N>& b) {                \
    vec<bool, N> r;                                                                          \
    for (int i = 0; i < N; ++i) r._v[i] = a._v[i] op b._v[i];                                \
    return r;                                                                                \
  }                                                                                          \
  template <class T, int N>                                                                  \
  INGOT_FN vec<bool, N> operator op(const vec<T, N>& a, const INGOT_ND(T) & s) {             \
    vec<bool, N> r;                                                                          \
    for (int i = 0; i < N; ++i) r._v[i] = a._v[i] op s;                                      \
    return r;                                                                                \
  }                                                                                          \
  template <class T, int N>                                                                  \
  INGOT_FN vec<bool, N> operator op(const INGOT_ND(T) & s, const vec<T, N>& b) {             \
    vec<bool, N> r;                                                                          \
    for (int i = 0; i < N; ++i) r._v[i] = s op b._v[i];                                      \
    return r;                                                                                \
  }
INGOT_VEC_CMP(==)
INGOT_VEC_CMP(!=)
INGOT_VEC_CMP(<)
INGOT_VEC_CMP(>)
INGOT_VEC_CMP(<=)
INGOT_VEC_CMP(>=)
INGOT_VEC_CMP(&&)
INGOT_VEC_CMP(||)
#undef INGOT_VEC_CMP

template <class T, int N> INGOT_FN vec<T, N> operator+(const vec<T, N>& a) { return a; }
template <class T, int N> INGOT_FN vec<T, N> operator-(const vec<T, N>& a) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = T(-a._v[i]);
  return r;
}
template <class T, int N> INGOT_FN vec<T, N> operator~(const vec<T, N>& a) {
  vec<T, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = T(~a._v[i]);
  return r;
}
template <class T, int N> INGOT_FN vec<bool, N> operator!(const vec<T, N>& a) {
  vec<bool, N> r;
  for (int i = 0; i < N; ++i) r._v[i] = !a._v[i];
  return r;
}

// ----- packed vectors: element alignment, no padding -----
template <class T, int N> struct packed_vec;
#define INGOT_PACKED_COMMON(N)                                                       \
  typedef T value_type;                                                              \
  packed_vec() = default;                                                            \
  INGOT_FN packed_vec(const vec<T, N>& v) {                                          \
    for (int i = 0; i < N; ++i) _v[i] = v._v[i];                                     \
  }                                                                                  \
  INGOT_FN operator vec<T, N>() const {                                              \
    vec<T, N> r;                                                                     \
    for (int i = 0; i < N; ++i) r._v[i] = _v[i];                                     \
    return r;                                                                        \
  }                                                                                  \
  INGOT_FN vec<T, N> get() const { return *this; }                                   \
  INGOT_FN T& operator[](int i) { return _v[i]; }                                    \
  INGOT_FN const T& operator[](int i) const { return _v[i]; }                        \
  template <class U> INGOT_FN packed_vec& operator+=(const U& u) { return *this = get() + u; } \
  template <class U> INGOT_FN packed_vec& operator-=(const U& u) { return *this = get() - u; } \
  template <class U> INGOT_FN packed_vec& operator*=(const U& u) { return *this = get() * u; } \
  template <class U> INGOT_FN packed_vec& operator/=(const U& u) { return *this = get() / u; }
template <class T> struct packed_vec<T, 2> {
  union {
    T _v[2];
    struct { T x, y; };
    struct { T r, g; };
  };
  INGOT_PACKED_COMMON(2)
  INGOT_FN packed_vec(T a, T b) : _v{a, b} {}
};
template <class T> struct packed_vec<T, 3> {
  union {
    T _v[3];
    struct { T x, y, z; };
    struct { T r, g, b; };
  };
  INGOT_PACKED_COMMON(3)
  INGOT_FN packed_vec(T a, T b, T c) : _v{a, b, c} {}
};
template <class T> struct packed_vec<T, 4> {
  union {
    T _v[4];
    struct { T x, y, z, w; };
    struct { T r, g, b, a; };
  };
  INGOT_PACKED_COMMON(4)
  INGOT_FN packed_vec(T a, T b, T c, T d) : _v{a, b, c, d} {}
};
#undef INGOT_PACKED_COMMON
#define INGOT_PACKED_OP(op)                                                                   \
  template <class T, int N>                                                                   \
  INGOT_FN auto operator op(const packed_vec<T, N>& a, const packed_vec<T, N>& b) {           \
    return a.get() op b.get();                                                                \
  }                                                                                           \
  template <class T, int N>                                                                   \
  INGOT_FN auto operator op(const packed_vec<T, N>& a, const vec<T, N>& b) { return a.get() op b; } \
  template <class T, int N>                                                                   \
  INGOT_FN auto operator op(const vec<T, N>& a, const packed_vec<T, N>& b) { return a op b.get(); } \
  template <class T, int N>                                                                   \
  INGOT_FN auto operator op(const packed_vec<T, N>& a, const INGOT_ND(T) & b) { return a.get() op b; } \
  template <class T, int N>                                                                   \
  INGOT_FN auto operator op(const INGOT_ND(T) & a, const packed_vec<T, N>& b) { return a op b.get(); }
INGOT_PACKED_OP(+)
INGOT_PACKED_OP(-)
INGOT_PACKED_OP(*)
INGOT_PACKED_OP(/)
INGOT_PACKED_OP(==)
INGOT_PACKED_OP(!=)
INGOT_PACKED_OP(<)
INGOT_PACKED_OP(>)
INGOT_PACKED_OP(<=)
INGOT_PACKED_OP(>=)
#undef INGOT_PACKED_OP
template <class T, int N> INGOT_FN vec<T, N> operator-(const packed_vec<T, N>& a) { return -a.get(); }

// ----- named types -----
#define INGOT_VEC_NAMES(T, name)                 \
  typedef vec<T, 2> name##2;                     \
  typedef vec<T, 3> name##3;                     \
  typedef vec<T, 4> name##4;                     \
  typedef packed_vec<T, 2> packed_##name##2;     \
  typedef packed_vec<T, 3> packed_##name##3;     \
  typedef packed_vec<T, 4> packed_##name##4;
INGOT_VEC_NAMES(float, float)
INGOT_VEC_NAMES(half, half)
INGOT_VEC_NAMES(bfloat, bfloat)
INGOT_VEC_NAMES(int, int)
INGOT_VEC_NAMES(unsigned int, uint)
INGOT_VEC_NAMES(short, short)
INGOT_VEC_NAMES(unsigned short, ushort)
INGOT_VEC_NAMES(signed char, char)
INGOT_VEC_NAMES(unsigned char, uchar)
INGOT_VEC_NAMES(long, long)
INGOT_VEC_NAMES(unsigned long, ulong)
INGOT_VEC_NAMES(bool, bool)
#undef INGOT_VEC_NAMES

static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "float3 layout");
static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4 layout");
static_assert(sizeof(float2) == 8 && alignof(float2) == 8, "float2 layout");
static_assert(sizeof(half3) == 8 && alignof(half3) == 8, "half3 layout");
static_assert(sizeof(half2) == 4 && alignof(half2) == 4, "half2 layout");
static_assert(sizeof(uchar3) == 4 && alignof(uchar3) == 4, "uchar3 layout");
static_assert(sizeof(uchar4) == 4 && alignof(uchar4) == 4, "uchar4 layout");
static_assert(sizeof(bool3) == 4 && alignof(bool3) == 4, "bool3 layout");
static_assert(sizeof(long3) == 32 && alignof(long3) == 32, "long3 layout");
static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "packed_float3 layout");
static_assert(sizeof(packed_half3) == 6 && alignof(packed_half3) == 2, "packed_half3 layout");

// ----- matrices: C columns of vec<T, R>, column-major -----
template <class T, int C, int R> struct matrix {
  vec<T, R> columns[C];
  typedef T value_type;
  matrix() = default;
  INGOT_FN explicit matrix(T diag) {
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r) columns[c]._v[r] = c == r ? diag : T(0);
  }
  template <class... V, INGOT_REQ(sizeof...(V) + 1 == C)>
  INGOT_FN matrix(const vec<T, R>& c0, const V&... rest) {
    const vec<T, R> cs[C] = {c0, vec<T, R>(rest)...};
    for (int c = 0; c < C; ++c) columns[c] = cs[c];
  }
  template <class... S, INGOT_REQ(sizeof...(S) + 2 == C * R && C * R > 2)>
  INGOT_FN matrix(T s0, T s1, S... rest) {
    const T s[C * R] = {s0, s1, T(rest)...};
    for (int c = 0; c < C; ++c)
      for (int r = 0; r < R; ++r) columns[c]._v[r] = s[c * R + r];
  }
  template <class U, INGOT_REQ(!ingot::tt::is_same<U, T>::value)>
  INGOT_FN explicit matrix(const matrix<U, C, R>& o) {
    for (int c = 0; c < C; ++c) columns[c] = vec<T, R>(o.columns[c]);
  }
  INGOT_FN vec<T, R>& operator[](int c) { return columns[c]; }
  INGOT_FN const vec<T, R>& operator[](int c) const { return columns[c]; }
  INGOT_FN matrix& operator+=(const matrix& o) {
    for (int c = 0; c < C; ++c) columns[c] += o.columns[c];
    return *this;
  }
  INGOT_FN matrix& operator-=(const matrix& o) {
    for (int c = 0; c < C; ++c) columns[c] -= o.columns[c];
    return *this;
  }
  INGOT_FN matrix& operator*=(const T& s) {
    for (int c = 0; c < C; ++c) columns[c] *= s;
    return *this;
  }
};
template <class T, int C, int R>
INGOT_FN vec<T, R> operator*(const matrix<T, C, R>& m, const vec<T, C>& v) {
  vec<T, R> r = m.columns[0] * v._v[0];
  for (int c = 1; c < C; ++c) r += m.columns[c] * v._v[c];
  return r;
}
template <class T, int C, int R>
INGOT_FN vec<T, C> operator*(const vec<T, R>& v, const matrix<T, C, R>& m) {
  vec<T, C> r;
  for (int c = 0; c < C; ++c) {
    T s = T(0);
    for (int k = 0; k < R; ++k) s += v._v[k] * m.columns[c]._v[k];
    r._v[c] = s;
  }
  return r;
}
template <class T, int K, int C, int R>
INGOT_FN matrix<T, C, R> operator*(const matrix<T, K, R>& a, const matrix<T, C, K>& b) {
  matrix<T, C, R> r;
  for (int c = 0; c < C; ++c) r.columns[c] = a * b.columns[c];
  return r;
}
template <class T, int C, int R>
INGOT_FN matrix<T, C, R> operator*(const matrix<T, C, R>& m, const INGOT_ND(T) & s) {
  matrix<T, C, R> r = m;
  r *= s;
  return r;
}
template <class T, int C, int R>
INGOT_FN matrix<T, C, R> operator*(const INGOT_ND(T) & s, const matrix<T, C, R>& m) {
  return m * s;
}
template <class T, int C, int R>
INGOT_FN matrix<T, C, R> operator+(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  matrix<T, C, R> r = a;
  r += b;
  return r;
}
template <class T, int C, int R>
INGOT_FN matrix<T, C, R> operator-(const matrix<T, C, R>& a, const matrix<T, C, R>& b) {
  matrix<T, C, R> r = a;
  r -= b;
  return r;
}
template <class T, int C, int R>
INGOT_FN matrix<T, R, C> transpose(const matrix<T, C, R>& m) {
  matrix<T, R, C> t;
  for (int c = 0; c < C; ++c)
    for (int r = 0; r < R; ++r) t.columns[r]._v[c] = m.columns[c]._v[r];
  return t;
}
template <class T> INGOT_FN T determinant(const matrix<T, 2, 2>& m) {
  return m[0][0] * m[1][1] - m[1][0] * m[0][1];
}
template <class T> INGOT_FN T determinant(const matrix<T, 3, 3>& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[2][1] * m[1][2]) -
         m[1][0] * (m[0][1] * m[2][2] - m[2][1] * m[0][2]) +
         m[2][0] * (m[0][1] * m[1][2] - m[1][1] * m[0][2]);
}
template <class T> INGOT_FN T determinant(const matrix<T, 4, 4>& m) {
  T d = T(0);
  for (int c = 0; c < 4; ++c) {
    matrix<T, 3, 3> s;
    for (int cc = 0, k = 0; cc < 4; ++cc) {
      if (cc == c) continue;
      s.columns[k++] = vec<T, 3>(m[cc][1], m[cc][2], m[cc][3]);
    }
    T t = m[c][0] * determinant(s);
    d += (c & 1) ? -t : t;
  }
  return d;
}

#define INGOT_MAT_NAMES(T, name)                                                    \
  typedef matrix<T, 2, 2> name##2x2;                                                \
  typedef matrix<T, 2, 3> name##2x3;                                                \
  typedef matrix<T, 2, 4> name##2x4;                                                \
  typedef matrix<T, 3, 2> name##3x2;                                                \
  typedef matrix<T, 3, 3> name##3x3;                                                \
  typedef matrix<T, 3, 4> name##3x4;                                                \
  typedef matrix<T, 4, 2> name##4x2;                                                \
  typedef matrix<T, 4, 3> name##4x3;                                                \
  typedef matrix<T, 4, 4> name##4x4;
INGOT_MAT_NAMES(float, float)
INGOT_MAT_NAMES(half, half)
#undef INGOT_MAT_NAMES
static_assert(sizeof(float3x3) == 48, "float3x3 layout");
static_assert(sizeof(float4x4) == 64, "float4x4 layout");

// ----- metal::array -----
template <class T, ingot_size_t N> struct array {
  T _a[N];
  typedef T value_type;
  INGOT_FN T& operator[](ingot_size_t i) { return _a[i]; }
  INGOT_FN const T& operator[](ingot_size_t i) const { return _a[i]; }
  INGOT_FN static constexpr ingot_size_t size() { return N; }
  INGOT_FN T* data() { return _a; }
  INGOT_FN const T* data() const { return _a; }
  INGOT_FN T* begin() { return _a; }
  INGOT_FN T* end() { return _a + N; }
  INGOT_FN const T* begin() const { return _a; }
  INGOT_FN const T* end() const { return _a + N; }
};
template <class T, ingot_size_t N> using array_ref = array<T, N>;

}  // namespace metal

#define INGOT_GLOBAL_VEC(name) \
  using metal::name##2;        \
  using metal::name##3;        \
  using metal::name##4;        \
  using metal::packed_##name##2; \
  using metal::packed_##name##3; \
  using metal::packed_##name##4;
INGOT_GLOBAL_VEC(float)
INGOT_GLOBAL_VEC(half)
INGOT_GLOBAL_VEC(bfloat)
INGOT_GLOBAL_VEC(int)
INGOT_GLOBAL_VEC(uint)
INGOT_GLOBAL_VEC(short)
INGOT_GLOBAL_VEC(ushort)
INGOT_GLOBAL_VEC(char)
INGOT_GLOBAL_VEC(uchar)
INGOT_GLOBAL_VEC(long)
INGOT_GLOBAL_VEC(ulong)
INGOT_GLOBAL_VEC(bool)
#undef INGOT_GLOBAL_VEC
#define INGOT_GLOBAL_MAT(name) \
  using metal::name##2x2;      \
  using metal::name##2x3;      \
  using metal::name##2x4;      \
  using metal::name##3x2;      \
  using metal::name##3x3;      \
  using metal::name##3x4;      \
  using metal::name##4x2;      \
  using metal::name##4x3;      \
  using metal::name##4x4;
INGOT_GLOBAL_MAT(float)
INGOT_GLOBAL_MAT(half)
#undef INGOT_GLOBAL_MAT
