// ingot prelude: barriers, SIMD-group (32 lanes) and quad-group (4 lanes) functions with
// active-lane semantics. CUDA: __activemask() and shuffles; CPU: ingot::cpu::simd_exchange.
// Inactive source lanes read as zero (Metal leaves them undefined).
#pragma once

namespace metal {

enum class mem_flags : unsigned int {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
  mem_device_and_threadgroup = 3
};
INGOT_FN constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags((unsigned int)a | (unsigned int)b);
}
INGOT_FN constexpr mem_flags operator&(mem_flags a, mem_flags b) {
  return mem_flags((unsigned int)a & (unsigned int)b);
}

INGOT_SITE_FN void threadgroup_barrier(mem_flags f = mem_flags::mem_none INGOT_LINE_PARAM) {
#if defined(INGOT_TARGET_CUDA)
  if ((unsigned int)f & (unsigned int)mem_flags::mem_device) __threadfence();
  __syncthreads();
#else
  (void)f;
  ingot::cpu::barrier(ingot_line);
#endif
}
INGOT_SITE_FN void simdgroup_barrier(mem_flags f = mem_flags::mem_none INGOT_LINE_PARAM) {
#if defined(INGOT_TARGET_CUDA)
  if ((unsigned int)f & (unsigned int)mem_flags::mem_device) __threadfence();
  __syncwarp(__activemask());
#else
  (void)f;
  (void)ingot::cpu::simd_exchange((unsigned char)0, ingot_line);
#endif
}
INGOT_FN void atomic_thread_fence(mem_flags f, memory_order o, thread_scope = thread_scope::thread_scope_device) {
  (void)f;
  detail::a_fence(o == memory_order_relaxed ? memory_order_seq_cst : o);
}

struct simd_vote {
  typedef unsigned long vote_t;
  vote_t bits;
  vote_t active;
  INGOT_FN explicit constexpr simd_vote(vote_t v = 0, vote_t act = 0xffffffffu) : bits(v), active(act) {}
  INGOT_FN explicit constexpr operator vote_t() const { return bits; }
  INGOT_FN constexpr bool all() const { return (bits & active) == active; }
  INGOT_FN constexpr bool any() const { return bits != 0; }
};

namespace detail {
template <class T> struct op_sum { INGOT_FN static T apply(const T& a, const T& b) { return T(a + b); } };
template <class T> struct op_product { INGOT_FN static T apply(const T& a, const T& b) { return T(a * b); } };
template <class T> struct op_min { INGOT_FN static T apply(const T& a, const T& b) { return min(a, b); } };
template <class T> struct op_max { INGOT_FN static T apply(const T& a, const T& b) { return max(a, b); } };
// The bitwise reductions on a floating-point type work on its bits (MLX's bf16_math.h compiles
// `__metal_simd_xor(float)` in a bfloat overload).
template <class T> struct bits_of { typedef T type; };
template <> struct bits_of<float> { typedef unsigned int type; };
template <> struct bits_of<double> { typedef unsigned long long type; };
template <> struct bits_of<half> { typedef unsigned short type; };
template <> struct bits_of<bfloat> { typedef unsigned short type; };
#define INGOT_BIT_OP(name, op)                                                                \
  template <class T> struct name {                                                            \
    INGOT_FN static T apply(const T& a, const T& b) {                                         \
      if constexpr (is_floating_point<T>::value) {                                            \
        typedef typename bits_of<T>::type U;                                                  \
        return bitcast<T>(U(bitcast<U>(a) op bitcast<U>(b)));                                 \
      } else {                                                                                \
        return T(a op b);                                                                     \
      }                                                                                       \
    }                                                                                         \
  };
INGOT_BIT_OP(op_and, &)
INGOT_BIT_OP(op_or, |)
INGOT_BIT_OP(op_xor, ^)
#undef INGOT_BIT_OP

#if defined(INGOT_TARGET_CUDA)
INGOT_FN unsigned int lane_id() {
  unsigned int l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
}
// Shuffles of any trivially copyable T, 32 bits at a time.
#define INGOT_SHFL(name, call)                                                  \
  template <class T> INGOT_FN T name(unsigned int m, const T& x, int arg, int width = 32) { \
    constexpr int W = (int)((sizeof(T) + 3) / 4);                               \
    unsigned int w[W];                                                          \
    w[W - 1] = 0;                                                               \
    detail::copy_bytes(w, &x, sizeof(T));                                         \
    for (int k = 0; k < W; ++k) w[k] = call(m, w[k], arg, width);               \
    T r;                                                                        \
    detail::copy_bytes(&r, w, sizeof(T));                                         \
    return r;                                                                   \
  }
INGOT_SHFL(shfl_idx, __shfl_sync)
INGOT_SHFL(shfl_down, __shfl_down_sync)
INGOT_SHFL(shfl_up, __shfl_up_sync)
INGOT_SHFL(shfl_xor, __shfl_xor_sync)
#undef INGOT_SHFL
template <class T> INGOT_FN T zero() {
  union U {
    T t;
    unsigned char b[sizeof(T)];
    INGOT_FN U() {}
  } u;
  for (unsigned int i = 0; i < sizeof(T); ++i) u.b[i] = 0;
  return u.t;
}
// Reduction over the active lanes of each segment of `width` lanes (32: SIMD-group, 4: quad).
template <class Op, class T> INGOT_FN T reduce(T x, int width) {
  unsigned int m = __activemask();
  unsigned int lane = lane_id();
  unsigned int seg = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
  bool full = true;  // uniform over the warp: every touched segment is complete
  for (int b = 0; b < 32; b += width) {
    unsigned int s = (m >> b) & seg;
    if (s != 0 && s != seg) full = false;
  }
  if (full) {
    for (int off = width / 2; off > 0; off /= 2) x = Op::apply(x, shfl_xor(m, x, off, width));
    return x;
  }
  unsigned int base = lane & ~(unsigned int)(width - 1);
  unsigned int mine = (m >> base) & seg;
  T acc = x;
  bool have = false;
  for (int j = 0; j < width; ++j) {  // same trip count on every lane
    T v = shfl_idx(m, x, (int)(base + j) & 31, 32);
    if ((mine >> j) & 1u) {
      acc = have ? Op::apply(acc, v) : v;
      have = true;
    }
  }
  return acc;
}
// Inclusive scan over active lanes below and at the caller (within a segment of `width`).
template <class Op, class T> INGOT_FN T scan_inclusive(T x, int width) {
  unsigned int m = __activemask();
  unsigned int lane = lane_id();
  unsigned int base = lane & ~(unsigned int)(width - 1);
  unsigned int seg = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
  bool full = true;
  for (int b = 0; b < 32; b += width) {
    unsigned int s = (m >> b) & seg;
    if (s != 0 && s != seg) full = false;
  }
  if (full) {
    for (int off = 1; off < width; off *= 2) {
      T y = shfl_up(m, x, off, width);
      if ((int)(lane - base) >= off) x = Op::apply(y, x);
    }
    return x;
  }
  unsigned int mine = (m >> base) & seg;
  T acc = x;
  bool have = false;
  for (int j = 0; j < width; ++j) {
    T v = shfl_idx(m, x, (int)(base + j) & 31, 32);
    if (((mine >> j) & 1u) && base + j <= lane) {
      acc = have ? Op::apply(acc, v) : v;
      have = true;
    }
  }
  return acc;
}
template <class Op, class T> INGOT_FN T scan_exclusive(T x, T identity, int width) {
  unsigned int m = __activemask();
  unsigned int lane = lane_id();
  unsigned int base = lane & ~(unsigned int)(width - 1);
  unsigned int seg = width == 32 ? 0xffffffffu : ((1u << width) - 1u);
  unsigned int mine = (m >> base) & seg;
  T acc = identity;
  for (int j = 0; j < width; ++j) {
    T v = shfl_idx(m, x, (int)(base + j) & 31, 32);
    if (((mine >> j) & 1u) && base + j < lane) acc = Op::apply(acc, v);
  }
  return acc;
}
#else
// CPU: one exchange gives every active lane's value.
template <class Op, class T> INGOT_FN T fold(const ingot::cpu::lanes<T>& l, unsigned int which) {
  T acc = l.v[__builtin_ctz(which)];
  for (unsigned int m = which & (which - 1); m; m &= m - 1) acc = Op::apply(acc, l.v[__builtin_ctz(m)]);
  return acc;
}
template <class T> INGOT_FN unsigned int quad_mask(const ingot::cpu::lanes<T>& l) {
  return l.active & (0xfu << (l.self & ~3u));
}
#endif
}  // namespace detail

// ----- SIMD-group reductions -----
#if defined(INGOT_TARGET_CUDA)
#define INGOT_SIMD_REDUCE(name, op, width)                                          \
  template <class T> INGOT_SITE_FN T name(T x) { return detail::reduce<detail::op<T>>(x, width); }
#define INGOT_SIMD_SCAN(name, op, width)                                            \
  template <class T> INGOT_SITE_FN T name(T x) { return detail::scan_inclusive<detail::op<T>>(x, width); }
#define INGOT_SIMD_XSCAN(name, op, width, ident)                                    \
  template <class T> INGOT_SITE_FN T name(T x) { return detail::scan_exclusive<detail::op<T>>(x, T(ident), width); }
#else
#define INGOT_SIMD_REDUCE(name, op, width)                                          \
  template <class T> INGOT_SITE_FN T name(T x INGOT_LINE_PARAM) {                                    \
    static const char ingot_op = 0;                                                 \
    T r;                                                                            \
    if (width == 32 && ingot::cpu::wi_memo_get(r, &ingot_op)) return r;             \
    if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;                        \
    ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);                          \
    r = detail::fold<detail::op<T>>(l, width == 32 ? l.active : detail::quad_mask(l)); \
    if (width == 32) ingot::cpu::wi_memo_put(r, &ingot_op);                          \
    return r;                                                                       \
  }
#define INGOT_SIMD_SCAN(name, op, width)                                            \
  template <class T> INGOT_SITE_FN T name(T x INGOT_LINE_PARAM) {                                    \
    ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);                          \
    unsigned int m = width == 32 ? l.active : detail::quad_mask(l);                 \
    m &= (l.self == 31 ? 0xffffffffu : ((2u << l.self) - 1u));                      \
    return detail::fold<detail::op<T>>(l, m);                                       \
  }
#define INGOT_SIMD_XSCAN(name, op, width, ident)                                    \
  template <class T> INGOT_SITE_FN T name(T x INGOT_LINE_PARAM) {                                    \
    ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);                          \
    unsigned int m = width == 32 ? l.active : detail::quad_mask(l);                 \
    m &= ((1u << l.self) - 1u);                                                     \
    return m ? detail::op<T>::apply(T(ident), detail::fold<detail::op<T>>(l, m)) : T(ident); \
  }
#endif
INGOT_SIMD_REDUCE(simd_sum, op_sum, 32)
INGOT_SIMD_REDUCE(simd_product, op_product, 32)
INGOT_SIMD_REDUCE(simd_min, op_min, 32)
INGOT_SIMD_REDUCE(simd_max, op_max, 32)
INGOT_SIMD_REDUCE(simd_and, op_and, 32)
INGOT_SIMD_REDUCE(simd_or, op_or, 32)
INGOT_SIMD_REDUCE(simd_xor, op_xor, 32)
INGOT_SIMD_SCAN(simd_prefix_inclusive_sum, op_sum, 32)
INGOT_SIMD_SCAN(simd_prefix_inclusive_product, op_product, 32)
INGOT_SIMD_XSCAN(simd_prefix_exclusive_sum, op_sum, 32, 0)
INGOT_SIMD_XSCAN(simd_prefix_exclusive_product, op_product, 32, 1)
INGOT_SIMD_REDUCE(quad_sum, op_sum, 4)
INGOT_SIMD_REDUCE(quad_product, op_product, 4)
INGOT_SIMD_REDUCE(quad_min, op_min, 4)
INGOT_SIMD_REDUCE(quad_max, op_max, 4)
INGOT_SIMD_REDUCE(quad_and, op_and, 4)
INGOT_SIMD_REDUCE(quad_or, op_or, 4)
INGOT_SIMD_REDUCE(quad_xor, op_xor, 4)
INGOT_SIMD_SCAN(quad_prefix_inclusive_sum, op_sum, 4)
INGOT_SIMD_SCAN(quad_prefix_inclusive_product, op_product, 4)
INGOT_SIMD_XSCAN(quad_prefix_exclusive_sum, op_sum, 4, 0)
INGOT_SIMD_XSCAN(quad_prefix_exclusive_product, op_product, 4, 1)
#undef INGOT_SIMD_REDUCE
#undef INGOT_SIMD_SCAN
#undef INGOT_SIMD_XSCAN

// ----- shuffles -----
#if defined(INGOT_TARGET_CUDA)
// Read lane `src` (0..31) of the caller's SIMD-group: zero when `src` is not active.
template <class T> INGOT_FN T simd_read_lane_(unsigned int m, const T& x, unsigned int src) {
  T v = detail::shfl_idx(m, x, (int)(src & 31u), 32);
  return ((m >> (src & 31u)) & 1u) ? v : detail::zero<T>();
}
template <class T> INGOT_SITE_FN T simd_shuffle(T x, unsigned short lane) {
  return simd_read_lane_(__activemask(), x, lane);
}
template <class T> INGOT_SITE_FN T simd_broadcast(T x, unsigned short lane) { return simd_shuffle(x, lane); }
template <class T> INGOT_SITE_FN T simd_broadcast_first(T x) {
  unsigned int m = __activemask();
  return detail::shfl_idx(m, x, __ffs(m) - 1, 32);
}
template <class T> INGOT_SITE_FN T simd_shuffle_down(T x, unsigned short delta) {
  unsigned int m = __activemask(), src = detail::lane_id() + delta;
  T v = detail::shfl_idx(m, x, (int)(src & 31u), 32);
  if (src >= 32) return x;
  return ((m >> src) & 1u) ? v : detail::zero<T>();
}
template <class T> INGOT_SITE_FN T simd_shuffle_up(T x, unsigned short delta) {
  unsigned int m = __activemask(), lane = detail::lane_id();
  int src = (int)lane - (int)delta;
  T v = detail::shfl_idx(m, x, src & 31, 32);
  if (src < 0) return x;
  return ((m >> src) & 1u) ? v : detail::zero<T>();
}
template <class T> INGOT_SITE_FN T simd_shuffle_xor(T x, unsigned short mask) {
  unsigned int m = __activemask();
  return simd_read_lane_(m, x, (detail::lane_id() ^ mask) & 31u);
}
template <class T> INGOT_SITE_FN T simd_shuffle_rotate_down(T x, unsigned short delta) {
  unsigned int m = __activemask();
  return simd_read_lane_(m, x, (detail::lane_id() + delta) & 31u);
}
template <class T> INGOT_SITE_FN T simd_shuffle_rotate_up(T x, unsigned short delta) {
  unsigned int m = __activemask();
  return simd_read_lane_(m, x, (detail::lane_id() - delta) & 31u);
}
template <class T> INGOT_SITE_FN T simd_shuffle_and_fill_down(T data, T filling, unsigned short delta, unsigned short modulo = 32) {
  unsigned int m = __activemask(), lane = detail::lane_id();
  unsigned int mod = modulo ? modulo : 32, base = lane - lane % mod, idx = lane % mod + delta;
  T a = simd_read_lane_(m, data, base + (idx % mod));
  T b = simd_read_lane_(m, filling, base + (idx % mod));
  return idx < mod ? a : b;
}
template <class T> INGOT_SITE_FN T simd_shuffle_and_fill_up(T data, T filling, unsigned short delta, unsigned short modulo = 32) {
  unsigned int m = __activemask(), lane = detail::lane_id();
  unsigned int mod = modulo ? modulo : 32, base = lane - lane % mod;
  int idx = (int)(lane % mod) - (int)delta;
  unsigned int wrapped = (unsigned int)(idx < 0 ? idx + (int)mod : idx);
  T a = simd_read_lane_(m, data, base + wrapped);
  T b = simd_read_lane_(m, filling, base + wrapped);
  return idx >= 0 ? a : b;
}
INGOT_SITE_FN simd_vote simd_ballot(bool p) {
  unsigned int m = __activemask();
  return simd_vote(__ballot_sync(m, p), m);
}
INGOT_SITE_FN simd_vote simd_active_threads_mask() {
  unsigned int m = __activemask();
  return simd_vote(m, m);
}
INGOT_SITE_FN bool simd_all(bool p) { return __all_sync(__activemask(), p); }
INGOT_SITE_FN bool simd_any(bool p) { return __any_sync(__activemask(), p); }
INGOT_SITE_FN bool simd_is_first() {
  unsigned int m = __activemask();
  return detail::lane_id() == (unsigned int)(__ffs(m) - 1);
}
// quads
template <class T> INGOT_SITE_FN T quad_shuffle(T x, unsigned short qlane) {
  unsigned int m = __activemask();
  return simd_read_lane_(m, x, (detail::lane_id() & ~3u) + (qlane & 3u));
}
template <class T> INGOT_SITE_FN T quad_broadcast(T x, unsigned short qlane) { return quad_shuffle(x, qlane); }
template <class T> INGOT_SITE_FN T quad_shuffle_down(T x, unsigned short delta) {
  unsigned int m = __activemask(), lane = detail::lane_id(), q = (lane & 3u) + delta;
  T v = simd_read_lane_(m, x, (lane & ~3u) + (q & 3u));
  return q < 4 ? v : x;
}
template <class T> INGOT_SITE_FN T quad_shuffle_up(T x, unsigned short delta) {
  unsigned int m = __activemask(), lane = detail::lane_id();
  int q = (int)(lane & 3u) - (int)delta;
  T v = simd_read_lane_(m, x, (lane & ~3u) + ((unsigned int)q & 3u));
  return q >= 0 ? v : x;
}
template <class T> INGOT_SITE_FN T quad_shuffle_xor(T x, unsigned short mask) {
  unsigned int m = __activemask(), lane = detail::lane_id();
  return simd_read_lane_(m, x, (lane & ~3u) + ((lane ^ mask) & 3u));
}
template <class T> INGOT_SITE_FN T quad_broadcast_first(T x) {
  unsigned int m = __activemask(), lane = detail::lane_id(), q = (m >> (lane & ~3u)) & 0xfu;
  return simd_read_lane_(m, x, (lane & ~3u) + (unsigned int)(__ffs(q) - 1));
}
INGOT_SITE_FN bool quad_all(bool p) {
  unsigned int m = __activemask(), lane = detail::lane_id(), b = __ballot_sync(m, p);
  unsigned int q = 0xfu << (lane & ~3u);
  return (b & m & q) == (m & q);
}
INGOT_SITE_FN bool quad_any(bool p) {
  unsigned int m = __activemask(), lane = detail::lane_id(), b = __ballot_sync(m, p);
  return (b & (0xfu << (lane & ~3u))) != 0;
}
INGOT_SITE_FN bool quad_is_first() {
  unsigned int m = __activemask(), lane = detail::lane_id(), q = (m >> (lane & ~3u)) & 0xfu;
  return (lane & 3u) == (unsigned int)(__ffs(q) - 1);
}
#else
template <class T> INGOT_SITE_FN T simd_shuffle(T x, unsigned short lane INGOT_LINE_PARAM) {
  T r;
  unsigned int me;
  if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;
  if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;
  if (ingot::cpu::wi_peek(lane, r, me)) return r;
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[lane & 31u];
}
template <class T> INGOT_SITE_FN T simd_broadcast(T x, unsigned short lane INGOT_LINE_PARAM) {
  T r;
  unsigned int me;
  if (ingot::cpu::wi_peek(lane, r, me)) return r;
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[lane & 31u];
}
template <class T> INGOT_SITE_FN T simd_broadcast_first(T x INGOT_LINE_PARAM) {
  static const char ingot_op = 0;
  T r;
  if (ingot::cpu::wi_memo_get(r, &ingot_op)) return r;
  if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  r = l.v[__builtin_ctz(l.active)];
  ingot::cpu::wi_memo_put(r, &ingot_op);
  return r;
}
template <class T> INGOT_SITE_FN T simd_shuffle_down(T x, unsigned short delta INGOT_LINE_PARAM) {
  if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;
  {
    unsigned int me = ingot::cpu::wi_self() + delta;
    T r;
    if (me < 32 && ingot::cpu::wi_peek(me, r, me)) return r;
  }
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  unsigned int src = l.self + delta;
  return src >= 32 ? x : l.v[src];
}
template <class T> INGOT_SITE_FN T simd_shuffle_up(T x, unsigned short delta INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  int src = (int)l.self - (int)delta;
  return src < 0 ? x : l.v[src];
}
template <class T> INGOT_SITE_FN T simd_shuffle_xor(T x, unsigned short mask INGOT_LINE_PARAM) {
  if (ingot::cpu::wi_deposit_only(x, ingot_line)) return x;
  {
    T r;
    unsigned int me;
    if (ingot::cpu::wi_peek((ingot::cpu::wi_self() ^ mask) & 31u, r, me)) return r;
  }
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self ^ mask) & 31u];
}
template <class T> INGOT_SITE_FN T simd_shuffle_rotate_down(T x, unsigned short delta INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self + delta) & 31u];
}
template <class T> INGOT_SITE_FN T simd_shuffle_rotate_up(T x, unsigned short delta INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self - delta) & 31u];
}
template <class T> struct fill_pair_ { T data, filling; };
template <class T> INGOT_SITE_FN T simd_shuffle_and_fill_down(T data, T filling, unsigned short delta, unsigned short modulo = 32 INGOT_LINE_PARAM) {
  ingot::cpu::lanes<fill_pair_<T>> l = ingot::cpu::simd_exchange(fill_pair_<T>{data, filling}, ingot_line);
  unsigned int mod = modulo ? modulo : 32, base = l.self - l.self % mod, idx = l.self % mod + delta;
  return idx < mod ? l.v[(base + idx) & 31u].data : l.v[(base + idx % mod) & 31u].filling;
}
template <class T> INGOT_SITE_FN T simd_shuffle_and_fill_up(T data, T filling, unsigned short delta, unsigned short modulo = 32 INGOT_LINE_PARAM) {
  ingot::cpu::lanes<fill_pair_<T>> l = ingot::cpu::simd_exchange(fill_pair_<T>{data, filling}, ingot_line);
  unsigned int mod = modulo ? modulo : 32, base = l.self - l.self % mod;
  int idx = (int)(l.self % mod) - (int)delta;
  return idx >= 0 ? l.v[(base + (unsigned int)idx) & 31u].data
                  : l.v[(base + (unsigned int)(idx + (int)mod)) & 31u].filling;
}
INGOT_SITE_FN simd_vote simd_ballot(bool p INGOT_LINE_PARAM) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(p, ingot_line);
  unsigned long bits = 0;
  for (unsigned int m = l.active; m; m &= m - 1)
    if (l.v[__builtin_ctz(m)]) bits |= 1ul << __builtin_ctz(m);
  return simd_vote(bits, l.active);
}
INGOT_SITE_FN simd_vote simd_active_threads_mask(INGOT_LINE_PARAM0) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(true, ingot_line);
  return simd_vote(l.active, l.active);
}
INGOT_SITE_FN bool simd_all(bool p INGOT_LINE_PARAM) {
  static const char ingot_op = 0;
  bool r;
  if (ingot::cpu::wi_memo_get(r, &ingot_op)) return r;
  if (ingot::cpu::wi_deposit_only(p, ingot_line)) return p;
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(p, ingot_line);
  r = true;
  for (unsigned int m = l.active; m; m &= m - 1)
    if (!l.v[__builtin_ctz(m)]) { r = false; break; }
  ingot::cpu::wi_memo_put(r, &ingot_op);
  return r;
}
INGOT_SITE_FN bool simd_any(bool p INGOT_LINE_PARAM) {
  static const char ingot_op = 0;
  bool r;
  if (ingot::cpu::wi_memo_get(r, &ingot_op)) return r;
  if (ingot::cpu::wi_deposit_only(p, ingot_line)) return p;
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(p, ingot_line);
  r = false;
  for (unsigned int m = l.active; m; m &= m - 1)
    if (l.v[__builtin_ctz(m)]) { r = true; break; }
  ingot::cpu::wi_memo_put(r, &ingot_op);
  return r;
}
INGOT_SITE_FN bool simd_is_first(INGOT_LINE_PARAM0) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(true, ingot_line);
  return l.self == (unsigned int)__builtin_ctz(l.active);
}
template <class T> INGOT_SITE_FN T quad_shuffle(T x, unsigned short qlane INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self & ~3u) + (qlane & 3u)];
}
template <class T> INGOT_SITE_FN T quad_broadcast(T x, unsigned short qlane INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self & ~3u) + (qlane & 3u)];
}
template <class T> INGOT_SITE_FN T quad_shuffle_down(T x, unsigned short delta INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  unsigned int q = (l.self & 3u) + delta;
  return q < 4 ? l.v[(l.self & ~3u) + q] : x;
}
template <class T> INGOT_SITE_FN T quad_shuffle_up(T x, unsigned short delta INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  int q = (int)(l.self & 3u) - (int)delta;
  return q >= 0 ? l.v[(l.self & ~3u) + (unsigned int)q] : x;
}
template <class T> INGOT_SITE_FN T quad_shuffle_xor(T x, unsigned short mask INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[(l.self & ~3u) + ((l.self ^ mask) & 3u)];
}
template <class T> INGOT_SITE_FN T quad_broadcast_first(T x INGOT_LINE_PARAM) {
  ingot::cpu::lanes<T> l = ingot::cpu::simd_exchange(x, ingot_line);
  return l.v[__builtin_ctz(detail::quad_mask(l))];
}
INGOT_SITE_FN bool quad_all(bool p INGOT_LINE_PARAM) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(p, ingot_line);
  for (unsigned int m = detail::quad_mask(l); m; m &= m - 1)
    if (!l.v[__builtin_ctz(m)]) return false;
  return true;
}
INGOT_SITE_FN bool quad_any(bool p INGOT_LINE_PARAM) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(p, ingot_line);
  for (unsigned int m = detail::quad_mask(l); m; m &= m - 1)
    if (l.v[__builtin_ctz(m)]) return true;
  return false;
}
INGOT_SITE_FN bool quad_is_first(INGOT_LINE_PARAM0) {
  ingot::cpu::lanes<bool> l = ingot::cpu::simd_exchange(true, ingot_line);
  return l.self == (unsigned int)__builtin_ctz(detail::quad_mask(l));
}
#endif

}  // namespace metal
