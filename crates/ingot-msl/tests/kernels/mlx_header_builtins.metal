// Three constructs of MLX's headers (our own kernels). bits: for each x = a[i], o[12i + k] is
// k=0 ctz(x) + 3 (the 3 from __builtin_ctz in constant expressions), 1 clz(x), 2 popcount(x),
// 3 ffs(x), 4 parity(x), 5 clrsb(x), 6 ctzll(x << 20), 7 popcountll(3x), 8 bitreverse32(x),
// 9 rotateleft32(x, 7), 10 bswap32(x), 11 clzs(low 16 bits of x); columns 0, 1 and 6 are
// 0xffffffff for x == 0. route: r[0..4] = 1 for int, uint, float (the types of a
// `_disjunction` trait, Metal's internal spelling, as MLX's atomic.h) and 2 for half, short.
// masked_scale_bool / masked_scale_nomask: y[i] = bfloat(x[i]) * scale, where the bfloat scale
// is assigned a mask of type bool (keep[i] != 0) or a class with only `operator bool` (1).
#include <metal_stdlib>
using namespace metal;

template <int R> struct Radix {
  static constant constexpr short log = __builtin_ctz(R);
};
static_assert(__builtin_ctz(64) == 6 && __builtin_clz(1u) == 31, "bit builtins are constant");

kernel void bits(device const uint* a [[buffer(0)]], device uint* o [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
  constexpr short lr = __builtin_ctz(Radix<16>::log * 2);
  const uint x = a[i];
  device uint* r = o + 12 * i;
  r[0] = x ? uint(__builtin_ctz(x) + lr) : 0xffffffffu;
  r[1] = x ? uint(__builtin_clz(x)) : 0xffffffffu;
  r[2] = uint(__builtin_popcount(x));
  r[3] = uint(__builtin_ffs(int(x)));
  r[4] = uint(__builtin_parity(x));
  r[5] = uint(__builtin_clrsb(int(x)));
  r[6] = x ? uint(__builtin_ctzll(ulong(x) << 20)) : 0xffffffffu;
  r[7] = uint(__builtin_popcountll(ulong(x) * 3ul));
  r[8] = __builtin_bitreverse32(x);
  r[9] = __builtin_rotateleft32(x, 7u);
  r[10] = __builtin_bswap32(x);
  r[11] = uint(__builtin_clzs(ushort(x & 0xffffu) | ushort(1)));
}

#pragma METAL internals : enable
template <typename T>
constexpr constant bool is_native = _disjunction<is_same<T, int>, is_same<T, uint>, is_same<T, float>>::value;
#pragma METAL internals : disable

template <typename T, enable_if_t<is_native<T>, bool> = true>
METAL_FUNC uint route(T) { return 1; }
template <typename T, enable_if_t<!is_native<T>, bool> = true>
METAL_FUNC uint route(T) { return 2; }

kernel void route_types(device uint* r [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  if (i == 0) {
    r[0] = route(int(0));
    r[1] = route(uint(0));
    r[2] = route(0.0f);
    r[3] = route(half(0));
    r[4] = route(short(0));
  }
}

struct NoMask {
  char x;
  constexpr METAL_FUNC operator bool() const thread { return true; }
};
template <typename M> struct MaskOf {
  static METAL_FUNC M get(uchar) { return M{}; }
};
template <> struct MaskOf<bool> {
  static METAL_FUNC bool get(uchar v) { return v != 0; }
};
template <typename T> struct ScaleOp {
  T scale;
  METAL_FUNC T apply(T v) const thread { return v * scale; }
};

template <typename M>
kernel void masked_scale(device const float* x [[buffer(0)]], device const uchar* keep [[buffer(1)]],
                         device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  const M mask = MaskOf<M>::get(keep[i]);
  ScaleOp<bfloat> op;
  op.scale = mask;
  y[i] = float(op.apply(bfloat(x[i])));
}
template [[host_name("masked_scale_bool")]] kernel void masked_scale<bool>(
    device const float*, device const uchar*, device float*, uint);
template [[host_name("masked_scale_nomask")]] kernel void masked_scale<NoMask>(
    device const float*, device const uchar*, device float*, uint);
