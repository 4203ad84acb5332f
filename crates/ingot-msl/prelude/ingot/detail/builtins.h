// ingot prelude: the integer bit builtins of GCC/Clang that Metal's compiler (clang) accepts and
// MSL libraries call (MLX: `constexpr short logR = __builtin_ctz(R);` in hadamard.h and fft.h).
// NVRTC has none of them; g++ lacks the clang-only ones (16-bit ctzs/clzs, bitreverse, rotate).
// Each missing one is defined here with clang's signature and result; all are constexpr, as the
// builtins are. ctz/clz of 0 (undefined in clang) give the bit width on both targets (CUDA's
// __clz and x86's lzcnt/tzcnt do the same). At run time CUDA uses its integer intrinsics.
#pragma once

namespace ingot {
namespace bits {
INGOT_FN constexpr int ctz64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __clzll((long long)__brevll(x));
#endif
  if (!x) return 64;
  int n = 0;
  while (!(x & 1ull)) {
    x >>= 1;
    ++n;
  }
  return n;
}
INGOT_FN constexpr int ctz32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __clz((int)__brev(x));
#endif
  return x ? ctz64(x) : 32;
}
INGOT_FN constexpr int clz64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __clzll((long long)x);
#endif
  int n = 0;
  for (unsigned long long m = 1ull << 63; m && !(x & m); m >>= 1) ++n;
  return n;
}
INGOT_FN constexpr int clz32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __clz((int)x);
#endif
  return clz64(x) - 32;
}
INGOT_FN constexpr int popc64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __popcll(x);
#endif
  int n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}
INGOT_FN constexpr int popc32(unsigned int x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __popc(x);
#endif
  return popc64(x);
}
// Leading redundant sign bits: the leading bits equal to the sign bit, less the sign bit itself.
INGOT_FN constexpr int clrsb64(long long x) {
  unsigned long long u = (unsigned long long)x;
  return clz64(x < 0 ? ~u : u) - 1;
}
INGOT_FN constexpr int clrsb32(int x) {
  unsigned int u = (unsigned int)x;
  return clz32(x < 0 ? ~u : u) - 1;
}
INGOT_FN constexpr unsigned long long brev64(unsigned long long x) {
#if defined(INGOT_TARGET_CUDA)
  if (!__builtin_is_constant_evaluated()) return __brevll(x);
#endif
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i, x >>= 1) r = (r << 1) | (x & 1ull);
  return r;
}
INGOT_FN constexpr unsigned long long bswap64(unsigned long long x) {
  unsigned long long r = 0;
  for (int i = 0; i < 8; ++i, x >>= 8) r = (r << 8) | (x & 0xffull);
  return r;
}
template <class U> INGOT_FN constexpr U rotl(U x, unsigned int n) {
  constexpr unsigned int w = sizeof(U) * 8;
  n %= w;
  return n ? (U)((x << n) | (x >> (w - n))) : x;
}
template <class U> INGOT_FN constexpr U rotr(U x, unsigned int n) {
  constexpr unsigned int w = sizeof(U) * 8;
  n %= w;
  return n ? (U)((x >> n) | (x << (w - n))) : x;
}
}  // namespace bits
}  // namespace ingot

// NVRTC 13 answers 0 for all of these; g++ (>= 10) and clang++ for the ones they have.
#if defined(__has_builtin)
#define INGOT_HAS_BUILTIN(x) __has_builtin(x)
#elif defined(INGOT_TARGET_CPU)
// g++ before 10 (no __has_builtin): GCC's builtins, not clang's own.
#define INGOT_HAS_BUILTIN(x) INGOT_GCC_HAS##x
#define INGOT_GCC_HAS__builtin_ctz 1
#define INGOT_GCC_HAS__builtin_bswap32 1
#else
#define INGOT_HAS_BUILTIN(x) 0
#endif

// GCC's and clang's (NVRTC lacks them; g++ and clang++ have them).
#if !INGOT_HAS_BUILTIN(__builtin_ctz)
INGOT_FN constexpr int __builtin_ctz(unsigned int x) { return ::ingot::bits::ctz32(x); }
INGOT_FN constexpr int __builtin_ctzl(unsigned long x) { return ::ingot::bits::ctz64(x); }
INGOT_FN constexpr int __builtin_ctzll(unsigned long long x) { return ::ingot::bits::ctz64(x); }
INGOT_FN constexpr int __builtin_clz(unsigned int x) { return ::ingot::bits::clz32(x); }
INGOT_FN constexpr int __builtin_clzl(unsigned long x) {
  return ::ingot::bits::clz64(x) - (64 - (int)sizeof(unsigned long) * 8);
}
INGOT_FN constexpr int __builtin_clzll(unsigned long long x) { return ::ingot::bits::clz64(x); }
INGOT_FN constexpr int __builtin_popcount(unsigned int x) { return ::ingot::bits::popc32(x); }
INGOT_FN constexpr int __builtin_popcountl(unsigned long x) { return ::ingot::bits::popc64(x); }
INGOT_FN constexpr int __builtin_popcountll(unsigned long long x) { return ::ingot::bits::popc64(x); }
INGOT_FN constexpr int __builtin_parity(unsigned int x) { return ::ingot::bits::popc32(x) & 1; }
INGOT_FN constexpr int __builtin_parityl(unsigned long x) { return ::ingot::bits::popc64(x) & 1; }
INGOT_FN constexpr int __builtin_parityll(unsigned long long x) { return ::ingot::bits::popc64(x) & 1; }
INGOT_FN constexpr int __builtin_ffs(int x) { return x ? ::ingot::bits::ctz32((unsigned int)x) + 1 : 0; }
INGOT_FN constexpr int __builtin_ffsl(long x) {
  return x ? ::ingot::bits::ctz64((unsigned long)x) + 1 : 0;
}
INGOT_FN constexpr int __builtin_ffsll(long long x) {
  return x ? ::ingot::bits::ctz64((unsigned long long)x) + 1 : 0;
}
INGOT_FN constexpr int __builtin_clrsb(int x) { return ::ingot::bits::clrsb32(x); }
INGOT_FN constexpr int __builtin_clrsbl(long x) {
  return ::ingot::bits::clrsb64(x) - (64 - (int)sizeof(long) * 8);
}
INGOT_FN constexpr int __builtin_clrsbll(long long x) { return ::ingot::bits::clrsb64(x); }
#endif
#if !INGOT_HAS_BUILTIN(__builtin_bswap32)
INGOT_FN constexpr unsigned short __builtin_bswap16(unsigned short x) {
  return (unsigned short)((x >> 8) | (x << 8));
}
INGOT_FN constexpr unsigned int __builtin_bswap32(unsigned int x) {
  return (unsigned int)(::ingot::bits::bswap64(x) >> 32);
}
INGOT_FN constexpr unsigned long long __builtin_bswap64(unsigned long long x) {
  return ::ingot::bits::bswap64(x);
}
#endif
// clang's only (g++ lacks them too).
#if !INGOT_HAS_BUILTIN(__builtin_ctzs)
INGOT_FN constexpr int __builtin_ctzs(unsigned short x) { return x ? ::ingot::bits::ctz32(x) : 16; }
INGOT_FN constexpr int __builtin_clzs(unsigned short x) { return ::ingot::bits::clz32(x) - 16; }
#endif
#if !INGOT_HAS_BUILTIN(__builtin_bitreverse32)
INGOT_FN constexpr unsigned char __builtin_bitreverse8(unsigned char x) {
  return (unsigned char)(::ingot::bits::brev64(x) >> 56);
}
INGOT_FN constexpr unsigned short __builtin_bitreverse16(unsigned short x) {
  return (unsigned short)(::ingot::bits::brev64(x) >> 48);
}
INGOT_FN constexpr unsigned int __builtin_bitreverse32(unsigned int x) {
  return (unsigned int)(::ingot::bits::brev64(x) >> 32);
}
INGOT_FN constexpr unsigned long long __builtin_bitreverse64(unsigned long long x) {
  return ::ingot::bits::brev64(x);
}
#endif
#if !INGOT_HAS_BUILTIN(__builtin_rotateleft32)
#define INGOT_ROT(bits_, U)                                                                    \
  INGOT_FN constexpr U __builtin_rotateleft##bits_(U x, U n) { return ::ingot::bits::rotl<U>(x, n); } \
  INGOT_FN constexpr U __builtin_rotateright##bits_(U x, U n) { return ::ingot::bits::rotr<U>(x, n); }
INGOT_ROT(8, unsigned char)
INGOT_ROT(16, unsigned short)
INGOT_ROT(32, unsigned int)
INGOT_ROT(64, unsigned long long)
#undef INGOT_ROT
#endif
#undef INGOT_HAS_BUILTIN
#undef INGOT_GCC_HAS__builtin_ctz
#undef INGOT_GCC_HAS__builtin_bswap32
