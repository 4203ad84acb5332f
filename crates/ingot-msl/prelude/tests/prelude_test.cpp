// Tests of the CPU prelude: layouts, half/bfloat conversions against known bit patterns, vector
// operators and swizzles, math, integer functions, atomics across OS threads, SIMD-group
// functions (active lanes, divergent branches) through the fiber scheduler.
#define INGOT_TARGET_CPU 1
#include <metal_stdlib>
using namespace metal;

#include <stdio.h>

#include <thread>
#include <vector>

static int failures = 0;
#define CHECK(c)                                                  \
  do {                                                            \
    if (!(c)) {                                                   \
      printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);         \
      ++failures;                                                 \
    }                                                             \
  } while (0)

static unsigned short hb(float f) { return half(f).bits; }
static unsigned short bb(float f) { return bfloat(f).bits; }
static float fbits(unsigned int u) { return as_type<float>(u); }

struct Uniform {
  float3 a;
  float b;
  packed_float3 c;
  half2 d;
};

int main() {
  // ----- layouts -----
  static_assert(sizeof(float3) == 16 && alignof(float3) == 16, "");
  static_assert(sizeof(packed_float3) == 12 && alignof(packed_float3) == 4, "");
  static_assert(sizeof(half4) == 8 && sizeof(bool2) == 2 && sizeof(ushort3) == 8, "");
  static_assert(sizeof(int3) == 16 && sizeof(char3) == 4 && sizeof(ulong2) == 16, "");
  static_assert(sizeof(float3x3) == 48 && sizeof(half4x4) == 32, "");
  static_assert(sizeof(Uniform) == 48, "");
  static_assert(sizeof(atomic_uint) == 4 && sizeof(atomic_float) == 4 && sizeof(atomic<ulong>) == 8, "");
  static_assert(__is_trivial(float4) && __is_trivial(half3) && __is_trivial(atomic_uint), "");
  static_assert(__is_trivial(metal::array<float, 4>) && __is_trivial(float4x4), "");

  // ----- half -----
  CHECK(hb(1.0f) == 0x3c00);
  CHECK(hb(-2.0f) == 0xc000);
  CHECK(hb(0.1f) == 0x2e66);
  CHECK(hb(65504.0f) == 0x7bff);
  CHECK(hb(65519.0f) == 0x7bff);
  CHECK(hb(65520.0f) == 0x7c00);
  CHECK(hb(1e10f) == 0x7c00);
  CHECK(hb(-INFINITY) == 0xfc00);
  CHECK((hb(NAN) & 0x7c00) == 0x7c00 && (hb(NAN) & 0x3ff) != 0);
  CHECK(hb(-0.0f) == 0x8000);
  CHECK(hb(5.9604645e-8f) == 0x0001);     // smallest subnormal
  CHECK(hb(2.9802322e-8f) == 0x0000);     // half of it: ties to even (0)
  CHECK(hb(8.940697e-8f) == 0x0002);      // 1.5 ulp: ties to even (2)
  CHECK(hb(6.0975552e-5f) == 0x03ff);     // largest subnormal
  CHECK(hb(6.1035156e-5f) == 0x0400);     // smallest normal
  CHECK(hb(2049.0f) == 0x6800);           // tie -> even (2048)
  CHECK(hb(2051.0f) == 0x6802);           // tie -> even (2052)
  CHECK(hb(2050.0f) == 0x6801);
  CHECK(float(half::from_bits(0x0001)) == 5.9604644775390625e-8f);
  CHECK(float(half::from_bits(0x7bff)) == 65504.0f);
  CHECK(float(half::from_bits(0x7c00)) == INFINITY);
  CHECK(isnan(float(half::from_bits(0x7e00))));
  CHECK(float(half::from_bits(0x8000)) == 0.0f && signbit(float(half::from_bits(0x8000))));
  CHECK(float(half::from_bits(0x3555)) == 0.333251953125f);
  // ----- bfloat -----
  CHECK(bb(1.0f) == 0x3f80);
  CHECK(bb(fbits(0x3f808000u)) == 0x3f80);  // tie -> even
  CHECK(bb(fbits(0x3f818000u)) == 0x3f82);  // tie -> even
  CHECK(bb(fbits(0x3f808001u)) == 0x3f81);
  CHECK(bb(fbits(0x7f7fffffu)) == 0x7f80);  // FLT_MAX rounds to inf
  CHECK((bb(NAN) & 0x7f80) == 0x7f80 && (bb(NAN) & 0x7f) != 0);
  CHECK(bb(fbits(0x00010000u)) == 0x0001);  // denormal kept
  CHECK(float(bfloat::from_bits(0xc040)) == -3.0f);
  // ----- MSL conversion rules -----
  {
    half h = 1.5f;
    float f = 2.0f;
    auto a = h + f;   // float
    auto b = h * h;   // half
    auto c = h + 1;   // half
    bfloat bf = bfloat(2.0f);
    auto d = bf * f;  // float
    auto e = bf + bf; // bfloat
    static_assert(is_same<decltype(a), float>::value, "half + float is float");
    static_assert(is_same<decltype(b), half>::value, "half * half is half");
    static_assert(is_same<decltype(c), half>::value, "half + int is half");
    static_assert(is_same<decltype(d), float>::value, "bfloat * float is float");
    static_assert(is_same<decltype(e), bfloat>::value, "bfloat + bfloat is bfloat");
    float t = true ? bf : f;  // bfloat converts to float only: not ambiguous
    CHECK(a == 3.5f && float(b) == 2.25f && float(c) == 2.5f && d == 4.0f && float(e) == 4.0f && t == 2.0f);
    half big = HALF_MAX;
    CHECK(isinf(float(big * half(2.0f))));
    h += 1;
    CHECK(float(h) == 2.5f);
  }
  // ----- vectors -----
  {
    float4 v(1, 2, 3, 4);
    float4 w = float4(v.xy(), 0, 1);
    CHECK(w.x == 1 && w.y == 2 && w.z == 0 && w.w == 1);
    CHECK(all(v.wzyx() == float4(4, 3, 2, 1)));
    v.xy_ref() = float2(9, 8);
    v.zw_ref() += 1.0f;
    CHECK(v.x == 9 && v.y == 8 && v.z == 4 && v.w == 5);
    CHECK(v.r == 9 && v.a == 5 && v[2] == 4);
    float3 p = float3(1, 2, 3) * 2.0f + 1.0f;
    CHECK(all(p == float3(3, 5, 7)));
    bool3 m = p > 4.0f;
    CHECK(!m.x && m.y && m.z && any(m) && !all(m));
    int4 iv = int4(float4(1.7f, -1.7f, 2.5f, 0.0f));
    CHECK(all(iv == int4(1, -1, 2, 0)));
    uint2 u = uint2(7, 8) >> 1u;
    CHECK(u.x == 3 && u.y == 4);
    uint2 u2 = uint2(7, 8) & 6u;
    CHECK(u2.x == 6 && u2.y == 0);
    uchar4 c = uchar4(250, 1, 2, 3) + uchar4(10);
    CHECK(c.x == 4 && c.y == 11);  // wraps like uchar
    half4 h4 = half4(float4(1.0f, 0.5f, -2.0f, 65536.0f));
    CHECK(float(h4.y) == 0.5f && isinf(float(h4.w)));
    float4 back = float4(h4);
    CHECK(back.z == -2.0f);
    packed_float3 pk = float3(1, 2, 3);
    float3 up = pk;
    CHECK(up.z == 3 && (pk + up).y == 4);
    float4x4 M(2.0f);
    float4 mv = M * float4(1, 2, 3, 4);
    CHECK(all(mv == float4(2, 4, 6, 8)));
    float2x2 R(float2(0, 1), float2(-1, 0));  // rotation by 90 degrees, column-major
    float2 r = R * float2(1, 0);
    CHECK(r.x == 0 && r.y == 1);
    float2x2 RR = R * R;
    CHECK(RR[0][0] == -1 && RR[1][1] == -1);
    CHECK(determinant(R) == 1.0f);
    metal::array<int, 3> arr = {{1, 2, 3}};
    CHECK(arr[2] == 3 && arr.size() == 3);
  }
  // ----- math -----
  {
    CHECK(exp(-INFINITY) == 0.0f);
    CHECK(isnan(log(-1.0f)) && log(0.0f) == -INFINITY);
    CHECK(fabs(sin(1.0f) - 0.84147098f) < 1e-7f);
    CHECK(fabs(precise::exp(1.0f) - 2.7182817f) < 1e-6f && fabs(fast::exp(1.0f) - 2.7182817f) < 1e-5f);
    CHECK(fract(-0.25f) == 0.75f && fract(-1e-10f) == 0x1.fffffep-1f);
    CHECK(sign(-3.0f) == -1.0f && sign(0.0f) == 0.0f && sign(NAN) == 0.0f);
    CHECK(clamp(5.0f, 0.0f, 1.0f) == 1.0f && clamp(3, 0, 2) == 2);
    CHECK(min(NAN, 1.0f) == 1.0f && max(2.0f, NAN) == 2.0f);
    CHECK(all(min(float2(1, 5), 3.0f) == float2(1, 3)));
    CHECK(mix(1.0f, 3.0f, 0.5f) == 2.0f && step(0.5f, 0.7f) == 1.0f && smoothstep(0.0f, 1.0f, 0.5f) == 0.5f);
    CHECK(rsqrt(4.0f) == 0.5f && exp2(3.0f) == 8.0f && fabs(exp10(2.0f) - 100.0f) < 1e-4f);
    CHECK(round(2.5f) == 3.0f && rint(2.5f) == 2.0f && trunc(-1.5f) == -1.0f);
    CHECK(sinpi(1.0f) == 0.0f && cospi(0.5f) == 0.0f && sinpi(0.5f) == 1.0f);
    float c;
    float s = sincos(0.0f, c);
    CHECK(s == 0.0f && c == 1.0f);
    int e;
    CHECK(frexp(8.0f, e) == 0.5f && e == 4 && ldexp(0.5f, 4) == 8.0f);
    float ip;
    CHECK(modf(2.75f, ip) == 0.75f && ip == 2.0f);
    CHECK(float(sqrt(half(4.0f))) == 2.0f && float(exp(bfloat(0.0f))) == 1.0f);
    float3 a(1, 0, 0), b(0, 1, 0);
    CHECK(all(cross(a, b) == float3(0, 0, 1)) && dot(a, b) == 0 && length(float2(3, 4)) == 5);
    CHECK(distance(a, b) == sqrt(2.0f) && fabs(length(normalize(float3(1, 2, 3))) - 1.0f) < 1e-6f);
    CHECK(all(reflect(float2(1, -1), float2(0, 1)) == float2(1, 1)));
    CHECK(all(select(float2(1, 2), float2(3, 4), bool2(true, false)) == float2(3, 2)));
    CHECK(select(1, 2, true) == 2);
    CHECK(isinf(INFINITY) && isnan(NAN) && isfinite(FLT_MAX) && !isfinite(INFINITY));
    CHECK(numeric_limits<float>::max() == FLT_MAX && numeric_limits<int>::min() == INT_MIN);
    CHECK(float(numeric_limits<half>::max()) == 65504.0f && float(numeric_limits<half>::lowest()) == -65504.0f);
    CHECK(isinf(float(numeric_limits<bfloat>::infinity())) && float(numeric_limits<half>::epsilon()) == 0.0009765625f);
    CHECK(as_type<uint>(1.0f) == 0x3f800000u && as_type<half2>(0x3c003c00u).x == half(1.0f));
    CHECK(M_PI_F == 3.14159265358979f && fabs(erf(1.0f) - 0.8427008f) < 1e-6f);
    CHECK(all(isnan(float2(NAN, 1.0f)) == bool2(true, false)));
    CHECK(max3(1.0f, 5.0f, 3.0f) == 5.0f && min3(4, 2, 9) == 2 && median3(1.0f, 5.0f, 3.0f) == 3.0f);
    CHECK(atan2pi(1.0f, 1.0f) == 0.25f && acospi(-1.0f) == 1.0f);
    CHECK(pack_float_to_unorm4x8(float4(0.0f, 1.0f, 0.5f, 2.0f)) == 0xff80ff00u);
    CHECK(all(unpack_unorm4x8_to_float(0xff80ff00u) == float4(0.0f, 1.0f, 128.0f / 255.0f, 1.0f)));
    CHECK(pack_float_to_snorm2x16(float2(-1.0f, 0.5f)) == (0x4000u << 16 | 0x8001u));
    CHECK(all(unpack_snorm2x16_to_float(0x40008001u) == float2(-1.0f, 16384.0f / 32767.0f)));
    static_assert(is_same_v<conditional_t<true, int, float>, int> && is_unsigned_v<uint>, "traits");
  }
  // ----- integers -----
  {
    CHECK(clz(1u) == 31u && clz(0u) == 32u && clz((ushort)1) == 15 && clz((uchar)0) == 8 && clz(1ul) == 63ul);
    CHECK(ctz(8u) == 3u && ctz(0u) == 32u && ctz((ushort)0) == 16);
    CHECK(popcount(0xffu) == 8u && popcount(-1) == 32 && popcount((ulong)-1) == 64ul);
    CHECK(reverse_bits(1u) == 0x80000000u && reverse_bits((uchar)1) == 0x80);
    CHECK(rotate(0x80000001u, 1u) == 3u && rotate((uchar)0x81, (uchar)4) == 0x18);
    CHECK(mulhi(0x80000000u, 4u) == 2u && mulhi(-2, 0x40000000) == -1);
    CHECK(extract_bits(0xf0u, 4, 4) == 0xfu && extract_bits(0xf0, 4, 4) == -1 && insert_bits(0u, 5u, 4, 3) == 0x50u);
    CHECK(add_sat((uchar)250, (uchar)10) == 255 && sub_sat(5u, 7u) == 0u && add_sat(INT_MAX, 1) == INT_MAX);
    CHECK(sub_sat(INT_MIN, 1) == INT_MIN && hadd(7u, 8u) == 7u && rhadd(7u, 8u) == 8u);
    CHECK(abs(-5) == 5 && absdiff(3, -4) == 7u && max(3u, 5u) == 5u);
    CHECK(all(popcount(uint2(3, 7)) == uint2(2, 3)) && all(clz(uint2(1, 2)) == uint2(31, 30)));
  }
  // ----- bit builtins: the portable code of ingot/detail/builtins.h (CUDA's constant
  // evaluation, and clang's own builtins here) against g++'s builtins -----
  {
    static_assert(__builtin_ctzs(0x100) == 8 && __builtin_clzs(1) == 15, "clang's 16-bit builtins");
    static_assert(__builtin_bitreverse16(1) == 0x8000 && __builtin_rotateright8(1, 9) == 0x80, "clang's");
    static_assert(ingot::bits::ctz32(0) == 32 && ingot::bits::clz64(0) == 64, "zero: the bit width");
    unsigned long long x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 2000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      const unsigned long long v = i < 64 ? (1ull << i) : (i < 128 ? ~0ull >> (i - 64) : x >> (i % 61));
      const unsigned int w = (unsigned int)(v >> (i % 33));
      const int sw = (int)w;
      const long long sv = (long long)v;
      if (w) CHECK(ingot::bits::ctz32(w) == __builtin_ctz(w) && ingot::bits::clz32(w) == __builtin_clz(w));
      if (v) CHECK(ingot::bits::ctz64(v) == __builtin_ctzll(v) && ingot::bits::clz64(v) == __builtin_clzll(v));
      CHECK(ingot::bits::popc32(w) == __builtin_popcount(w) && ingot::bits::popc64(v) == __builtin_popcountll(v));
      CHECK(ingot::bits::clrsb32(sw) == __builtin_clrsb(sw) && ingot::bits::clrsb64(sv) == __builtin_clrsbll(sv));
      CHECK(ingot::bits::bswap64(v) == __builtin_bswap64(v));
      CHECK(__builtin_bitreverse32(w) == reverse_bits(w) && __builtin_bitreverse64(v) == reverse_bits((ulong)v));
      CHECK(__builtin_rotateleft32(w, (unsigned)i) == rotate(w, (uint)(i % 32)) &&
            __builtin_rotateright64(v, (unsigned long long)i) == rotate((ulong)v, (ulong)(64 - i % 64)));
      const unsigned short h = (unsigned short)w;
      if (h) CHECK(__builtin_ctzs(h) == __builtin_ctz(h) && __builtin_clzs(h) == __builtin_clz(h) - 16);
    }
  }
  // ----- atomics across OS threads -----
  {
    atomic_uint counter = {};
    atomic_float fsum = {};
    atomic_int mx = {};
    std::vector<std::thread> ts;
    for (int k = 0; k < 4; ++k)
      ts.emplace_back([&, k] {
        for (int i = 0; i < 20000; ++i) {
          atomic_fetch_add_explicit(&counter, 1u, memory_order_relaxed);
          atomic_fetch_add_explicit(&fsum, 0.5f, memory_order_relaxed);
          atomic_fetch_max_explicit(&mx, k * 100000 + i, memory_order_relaxed);
        }
      });
    for (auto& t : ts) t.join();
    CHECK(atomic_load_explicit(&counter, memory_order_relaxed) == 80000u);
    CHECK(atomic_load_explicit(&fsum, memory_order_relaxed) == 40000.0f);
    CHECK(atomic_load_explicit(&mx, memory_order_relaxed) == 319999);
    uint expected = 1;
    CHECK(!atomic_compare_exchange_weak_explicit(&counter, &expected, 5u, memory_order_relaxed, memory_order_relaxed));
    CHECK(expected == 80000u);
    CHECK(atomic_exchange_explicit(&counter, 7u, memory_order_relaxed) == 80000u);
    CHECK(atomic_fetch_min_explicit(&mx, -3, memory_order_relaxed) == 319999 && atomic_load_explicit(&mx, memory_order_relaxed) == -3);
  }
  // ----- SIMD-group functions through fibers: 48 threads (a full and a 16-lane SIMD-group) -----
  {
    ingot::launch L = {};
    L.grid[0] = 48;
    L.tg[0] = 48;
    L.grid[1] = L.grid[2] = L.tg[1] = L.tg[2] = 1;
    L.groups[0] = L.groups[1] = L.groups[2] = 1;
    std::vector<float> sum(48), pre(48), pex(48), dn(48), up(48), bx(48), bf(48), mx(48), dv(48);
    std::vector<uint> bal(48), qs(48), anyv(48), first(48), xr(48), ands(48);
    int rc = ingot::cpu::run_groups<ingot::cpu::Mode::Fibers>(&L, 0, 1, [&](const ingot::cpu::thread_ids& t) {
      uint i = t.thread_index_in_threadgroup, lane = t.thread_index_in_simdgroup;
      float x = float(i + 1);
      sum[i] = simd_sum(x);
      pre[i] = simd_prefix_inclusive_sum(x);
      pex[i] = simd_prefix_exclusive_sum(x);
      dn[i] = simd_shuffle_down(x, 1);
      up[i] = simd_shuffle_up(x, 2);
      bx[i] = simd_shuffle_xor(x, 1);
      bf[i] = simd_broadcast_first(x);
      mx[i] = simd_max(x);
      bal[i] = (uint)(simd_vote::vote_t)simd_ballot(lane < 3);
      qs[i] = quad_sum(i);
      anyv[i] = simd_any(i == 40) ? 1 : 0;
      xr[i] = simd_xor(i);
      ands[i] = simd_and(i | 1u);
      if (lane % 2 == 1) {  // divergent: only odd lanes take part
        dv[i] = simd_sum(x);
        first[i] = simd_is_first() ? 1 : 0;
      } else {
        dv[i] = simd_product(1.0f);
        first[i] = 2;
      }
    });
    CHECK(rc == 0);
    for (uint i = 0; i < 48; ++i) {
      uint sg = i / 32, lane = i % 32, n = sg == 0 ? 32 : 16, base = sg * 32;
      float s = 0, incl = 0, excl = 0, s_odd = 0;
      uint x = 0, a = ~0u;
      for (uint k = 0; k < n; ++k) {
        s += float(base + k + 1);
        x ^= base + k;
        a &= (base + k) | 1u;
        if (k % 2 == 1) s_odd += float(base + k + 1);
        if (k <= lane) incl += float(base + k + 1);
        if (k < lane) excl += float(base + k + 1);
      }
      CHECK(sum[i] == s);
      CHECK(pre[i] == incl && pex[i] == excl);
      CHECK(dn[i] == (lane + 1 < n ? float(i + 2) : lane + 1 >= 32 ? float(i + 1) : 0.0f));
      CHECK(up[i] == (lane >= 2 ? float(i - 1) : float(i + 1)));
      CHECK(bx[i] == float((i ^ 1) + 1));
      CHECK(bf[i] == float(base + 1) && mx[i] == float(base + n));
      CHECK(bal[i] == 7u);
      CHECK(qs[i] == 4 * (i & ~3u) + 6);
      CHECK(anyv[i] == (sg == 1 ? 1u : 0u));
      CHECK(xr[i] == x && ands[i] == a);
      if (lane % 2 == 1) {
        CHECK(dv[i] == s_odd);
        CHECK(first[i] == (lane == 1 ? 1u : 0u));
      } else {
        CHECK(dv[i] == 1.0f);
      }
    }
  }
  // ----- simdgroup_matrix: layout, load/store (plain and transposed), multiply-accumulate -----
  {
    ingot::launch L = {};
    L.grid[0] = L.tg[0] = 32;
    L.grid[1] = L.grid[2] = L.tg[1] = L.tg[2] = 1;
    L.groups[0] = L.groups[1] = L.groups[2] = 1;
    float A[8 * 16], B[8 * 8], C[64], CT[64], lay[64], D[64];
    for (int i = 0; i < 8 * 16; ++i) A[i] = float((i * 7) % 13) - 6.0f;
    for (int i = 0; i < 64; ++i) B[i] = float((i * 5) % 11) * 0.5f;
    int rc = ingot::cpu::run_groups<ingot::cpu::Mode::Fibers>(&L, 0, 1, [&](const ingot::cpu::thread_ids& t) {
      uint lane = t.thread_index_in_simdgroup;
      simdgroup_float8x8 a, b, acc = make_filled_simdgroup_matrix<float, 8, 8>(1.0f), at;
      simdgroup_load(a, A, 16, ulong2(8, 0));  // the right 8x8 half of an 8x16 matrix
      simdgroup_load(b, B);
      lay[lane * 2] = a.thread_elements()[0];
      lay[lane * 2 + 1] = a.thread_elements()[1];
      simdgroup_multiply_accumulate(acc, a, b, acc);
      simdgroup_store(acc, C, 8);
      simdgroup_load(at, A, 16, ulong2(8, 0), true);
      simdgroup_store(at, CT, 8);
      simdgroup_float8x8 id = simdgroup_float8x8(2.0f);
      simdgroup_multiply(id, id, b);
      simdgroup_store(id, D, 8, ulong2(0, 0), true);
    });
    CHECK(rc == 0);
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) {
        float want = 1.0f;
        for (int k = 0; k < 8; ++k) want += A[r * 16 + 8 + k] * B[k * 8 + c];
        CHECK(C[r * 8 + c] == want);
        CHECK(CT[r * 8 + c] == A[c * 16 + 8 + r]);
        CHECK(D[r * 8 + c] == 2.0f * B[c * 8 + r]);
      }
    for (uint l = 0; l < 32; ++l) {
      uint fm = ((l >> 4) & 1) * 4 + ((l >> 1) & 3), fn = ((l >> 3) & 1) * 4 + (l & 1) * 2;
      uint qid = l / 4;  // MLX's formula for the same layout
      CHECK(fm == (qid & 4) + ((l / 2) % 4) && fn == (qid & 2) * 2 + (l % 2) * 2);
      CHECK(lay[l * 2] == A[fm * 16 + 8 + fn] && lay[l * 2 + 1] == A[fm * 16 + 8 + fn + 1]);
    }
  }
  printf("%s prelude_test failures=%d\n", failures ? "FAILED" : "OK", failures);
  return failures ? 1 : 0;
}
