// Sorting: order-preserving keys, a bitonic sort of short rows in one threadgroup, and a stable
// LSD radix sort (8-bit digits, reduce-then-scan) of long rows.
//
// Every kernel reads and writes the raw bits of the elements as the unsigned type K of the same
// width (the host binds float32 data as uint32...): SortKey<T> turns the bits of a T into a key
// whose unsigned order is NumPy's ascending order of T with NaNs last, and back. Flags:
#define SK_DESC 1u   // complemented keys: descending, NaNs first, ties in original order
#define SK_CANON 2u  // -0.0 keys as +0.0 (argsort, unique, searchsorted: they are equal)

template <class K> inline K sk_flip(K k, uint f) { return (f & SK_DESC) ? K(~k) : k; }

template <class T> struct SortKey;
template <> struct SortKey<bool> {
  typedef uchar K;
  enum { FLOAT = 0 };
  static K key(K raw, uint f) { return sk_flip(K(raw != K(0) ? 1 : 0), f); }
  static K bits(K k, uint f) { return sk_flip(k, f); }
};
template <class U> struct UnsignedKey {
  typedef U K;
  enum { FLOAT = 0 };
  static K key(K raw, uint f) { return sk_flip(raw, f); }
  static K bits(K k, uint f) { return sk_flip(k, f); }
};
template <class U> struct SignedKey {
  typedef U K;
  enum { FLOAT = 0 };
  static K key(K raw, uint f) { return sk_flip(K(raw ^ K(K(1) << (sizeof(K) * 8 - 1))), f); }
  static K bits(K k, uint f) { return K(sk_flip(k, f) ^ K(K(1) << (sizeof(K) * 8 - 1))); }
};
// INF: the bits of +infinity (a NaN's magnitude bits are larger).
template <class U, ulong INF> struct FloatKey {
  typedef U K;
  enum { FLOAT = 1 };
  static K key(K b, uint f) {
    const K S = K(K(1) << (sizeof(K) * 8 - 1));
    K k;
    if (ulong(K(b & K(~S))) > INF) k = K(~K(0));
    else if ((f & SK_CANON) && b == S) k = S;
    else k = (b & S) ? K(~b) : K(b | S);
    return sk_flip(k, f);
  }
  static K bits(K k, uint f) {
    const K S = K(K(1) << (sizeof(K) * 8 - 1));
    k = sk_flip(k, f);
    return (k & S) ? K(k & K(~S)) : K(~k);
  }
};
template <> struct SortKey<uchar> : UnsignedKey<uchar> {};
template <> struct SortKey<ushort> : UnsignedKey<ushort> {};
template <> struct SortKey<uint> : UnsignedKey<uint> {};
template <> struct SortKey<ulong> : UnsignedKey<ulong> {};
template <> struct SortKey<char> : SignedKey<uchar> {};
template <> struct SortKey<short> : SignedKey<ushort> {};
template <> struct SortKey<int> : SignedKey<uint> {};
template <> struct SortKey<long> : SignedKey<ulong> {};
template <> struct SortKey<half> : FloatKey<ushort, 0x7c00ul> {};
template <> struct SortKey<bfloat> : FloatKey<ushort, 0x7f80ul> {};
template <> struct SortKey<float> : FloatKey<uint, 0x7f800000ul> {};
#ifdef INGOT_HAS_F64
template <> struct SortKey<double> : FloatKey<ulong, 0x7ff0000000000000ul> {};
#endif

// ---- short rows: bitonic sort in threadgroup memory -------------------------------------------
// One threadgroup of 256 threads sorts SB_N slots: `per = SB_N / seg` rows of `len` elements, each
// padded to `seg` (the next power of two) with keys that sort last. Ties are broken by the
// position in the row, so the sort is stable. Writes the sorted values (their bits) and/or the
// positions, as flags SB_VALUES / SB_INDICES ask.
#define SB_N 2048u
#define SB_VALUES 4u
#define SB_INDICES 8u
#define SB_KEYS 16u    // write the keys themselves instead of the values' bits

struct SortGeom {
  ulong rows;  // rows of len contiguous elements
  ulong len;
  uint seg;    // next power of two >= len (<= SB_N)
  uint flags;  // SK_* | SB_*
};

// Kernels take T (the dtype, for the key transform) and K = SortKey<T>::K (the memory type).
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void sort_block(
    device const K* x [[buffer(0)]], device K* vals [[buffer(1)]], device long* idx [[buffer(2)]],
    constant SortGeom& g [[buffer(3)]], uint grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup K sk[SB_N];
  threadgroup ushort si[SB_N];
  const uint seg = g.seg;
  const ulong row0 = ulong(grp) * ulong(SB_N / seg);
  for (uint s = lid; s < SB_N; s += 256u) {
    ulong r = row0 + ulong(s / seg);
    uint c = s & (seg - 1u);
    K k = K(~K(0));
    ushort i = ushort(0xffffu);
    if (r < g.rows && ulong(c) < g.len) {
      k = SortKey<T>::key(x[r * g.len + ulong(c)], g.flags);
      i = ushort(c);
    }
    sk[s] = k;
    si[s] = i;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k2 = 2u; k2 <= seg; k2 <<= 1) {
    for (uint j = k2 >> 1; j > 0u; j >>= 1) {
      for (uint t = lid; t < SB_N / 2u; t += 256u) {
        uint a = ((t & ~(j - 1u)) << 1) | (t & (j - 1u));
        uint b = a + j;
        // Ascending in the final merge of each row; alternating before (bitonic sequences).
        bool up = (a & k2) == 0u || k2 == seg;
        K ka = sk[a], kb = sk[b];
        ushort ia = si[a], ib = si[b];
        bool greater = ka > kb || (ka == kb && ia > ib);
        if (greater == up) {
          sk[a] = kb;
          sk[b] = ka;
          si[a] = ib;
          si[b] = ia;
        }
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
  }
  for (uint s = lid; s < SB_N; s += 256u) {
    ulong r = row0 + ulong(s / seg);
    uint c = s & (seg - 1u);
    if (r < g.rows && ulong(c) < g.len) {
      ulong o = r * g.len + ulong(c);
      if (g.flags & SB_VALUES) vals[o] = (g.flags & SB_KEYS) ? sk[s] : SortKey<T>::bits(sk[s], g.flags);
      if (g.flags & SB_INDICES) idx[o] = long(si[s]);
    }
  }
}

// ---- long rows: LSD radix sort, 8 bits per pass ---------------------------------------------
// Two schemes find where each tile's digits go.
// - One sweep a pass (up to 2^30 elements): radix_hist counts the digits of every pass in one
//   read of the keys, then each pass is one radix_downsweep<..., ONE = true> whose threadgroups
//   take tiles in the order they start, publish their digit counts and add up their
//   predecessors' (a decoupled look-back per digit, as select.metal's for one count).
// - Reduce then scan (larger sorts, whose counts do not fit the look-back's 30 bits): each pass
//   radix_upsweep counts the digits of every tile (hist[digit * tiles + tile]),
//   radix_scan scans each digit's counts and totals the digits, and radix_downsweep ranks each tile's elements
// (stable: a per-digit peer mask in threadgroup memory gives each element its rank among equal
// digits of its SIMD-group, in index order; SIMD-groups and tiles follow in index order), stages them in threadgroup memory
// in digit order and writes each digit's run to its global position. Payloads (uint positions)
// travel with the keys. Rows of a batch are sorted together: the key passes sort everything by
// key, then "segment" passes sort stably by row (payload / seg_len), which leaves each row sorted.
#define RX_KEY_IN 4u    // input holds element bits: make keys (first pass)
#define RX_KEY_OUT 8u   // write element bits back (last pass)
#define RX_P_IOTA 16u   // payload in: the element's position (first pass)
#define RX_P_NONE 32u   // no payload
#define RX_P_ROW 64u    // payload out: position % seg_len (last pass of an argsort)
#define RX_SEG 128u     // digit of the payload's row (payload / seg_len), not of the key
#define RX_NO_KOUT 256u // do not write the keys (last pass of an argsort)

struct RadixGeom {
  ulong n;        // elements
  ulong tiles;    // tiles of this pass
  ulong seg_len;  // row length
  uint shift;     // bit position of the digit
  uint flags;     // SK_* | RX_*
};

// Keys per thread: 16 (tiles of 4096) for keys of up to 4 bytes, 8 (tiles of 2048) for 8 bytes:
// the staging buffer stays at 16 KB, and threadgroup memory under Metal's 32 KB.
template <class K> struct RadixTile {
  enum { kpt = sizeof(K) <= 4 ? 16 : 8, n = 256 * kpt, words = sizeof(K) <= 4 ? 1 : 2 };
};

// The slot of digit d in the threadgroup arrays indexed by digit: a permutation that puts the
// digits of a SIMD-group in distinct memory banks both when they are consecutive and when they
// are multiples of 2..128 (the low byte of integers stored as floats: all multiples of 8 would
// otherwise share 4 of the 32 banks, 8-way conflicts that doubled the downsweep's time).
inline uint rx_bin(uint d) { return d ^ (d >> 5); }

template <class K>
inline uint rx_digit(K k, uint p, constant RadixGeom& g) {
  if (g.flags & RX_SEG) return ((p / uint(g.seg_len)) >> g.shift) & 255u;
  return uint(k >> g.shift) & 255u;
}

// Q = threads / 256 tiles a threadgroup (1 or 2: the host takes 2 where the pipeline allows 512
// threads): 256 threads count each tile into their own histogram, and the counts of Q
// consecutive tiles of a digit are written by Q consecutive threads, Q words of a 32-byte sector
// in one store (one tile a threadgroup wrote each of its 256 counts to a sector of its own).
// With whole tiles loaded unclamped: 29.2 -> 23.3 us a pass of 2^24 uint keys on an H200,
// 31.0 -> 27.5 us for the first pass of float32 (keys made); 4 tiles of 1024 threads: 24.1 us.
template <class T, class K>
[[max_total_threads_per_threadgroup(512)]] kernel void radix_upsweep(
    device const K* keys [[buffer(0)]], device const uint* pay [[buffer(1)]],
    device uint* hist [[buffer(2)]], constant RadixGeom& g [[buffer(3)]],
    uint grp [[threadgroup_position_in_grid]], uint tid [[thread_index_in_threadgroup]],
    uint ntg [[threads_per_threadgroup]]) {
  const uint KPT = RadixTile<K>::kpt;
  const uint Q = ntg >> 8, lid = tid & 255u;
  // One histogram a tile: cheaper than one per SIMD-group (measured), contention on repeated
  // digits included.
  threadgroup atomic_uint hs[2 * 256];
  threadgroup atomic_uint* h = hs + (tid & ~255u);
  atomic_store_explicit(&hs[tid], 0u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const ulong tile = ulong(grp) * ulong(Q) + ulong(tid >> 8);
  if (tile < g.tiles) {
    // Loads first (clamped, tile-relative 32-bit indices: 64-bit index arithmetic and a payload
    // branch per key cost a third of this kernel on an H200), then the digits.
    const ulong base = tile * ulong(RadixTile<K>::n);
    const uint count = uint(min(ulong(RadixTile<K>::n), g.n - base));
    device const K* kt = keys + base;
    if (g.flags & RX_SEG) {
      // The digit of the payload's row.
      device const uint* pt = pay + base;
      uint p[RadixTile<K>::kpt];
      for (uint k = 0; k < KPT; ++k) p[k] = pt[min(k * 256u + lid, count - 1u)];
      for (uint k = 0; k < KPT; ++k) {
        if (k * 256u + lid < count)
          atomic_fetch_add_explicit(&h[rx_bin(rx_digit<K>(K(0), p[k], g))], 1u, memory_order_relaxed);
      }
    } else if (count == RadixTile<K>::n) {
      // A whole tile: loads at constant offsets from one address (no clamping, no predicate).
      device const K* kl = kt + lid;
      K raw[RadixTile<K>::kpt];
      for (uint k = 0; k < KPT; ++k) raw[k] = kl[k * 256u];
      for (uint k = 0; k < KPT; ++k) {
        K key = raw[k];
        if (g.flags & RX_KEY_IN) key = SortKey<T>::key(key, g.flags);
        atomic_fetch_add_explicit(&h[rx_bin(uint(key >> g.shift) & 255u)], 1u, memory_order_relaxed);
      }
    } else {
      K raw[RadixTile<K>::kpt];
      for (uint k = 0; k < KPT; ++k) raw[k] = kt[min(k * 256u + lid, count - 1u)];
      for (uint k = 0; k < KPT; ++k) {
        K key = raw[k];
        if (g.flags & RX_KEY_IN) key = SortKey<T>::key(key, g.flags);
        if (k * 256u + lid < count)
          atomic_fetch_add_explicit(&h[rx_bin(uint(key >> g.shift) & 255u)], 1u, memory_order_relaxed);
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const uint j = tid % Q, d = tid / Q;
  const ulong tj = ulong(grp) * ulong(Q) + ulong(j);
  if (tj < g.tiles)
    hist[ulong(d) * g.tiles + tj] = atomic_load_explicit(&hs[j * 256u + rx_bin(d)], memory_order_relaxed);
}

// One threadgroup per digit: the exclusive scan of the digit's row of tile counts
// (hist[digit * tiles + tile]) into `scan`, and the digit's total into totals[digit]; the
// downsweep adds the digits' starts (the exclusive scan of the totals). One kernel instead of a
// generic three-kernel cumsum of all the counts.
// C: the count type (uint).
template <class C>
[[max_total_threads_per_threadgroup(256)]] kernel void radix_scan(
    device const C* hist [[buffer(0)]], device C* scan [[buffer(1)]],
    device C* totals [[buffer(2)]], constant RadixGeom& g [[buffer(3)]],
    uint d [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
  // Chunks of 4096 counts: coalesced loads into threadgroup memory (rows of 16 padded to 17
  // words: no bank conflicts when thread t then scans elements 16t..16t+15), and back out.
  threadgroup uint sh[256 * 17];
  threadgroup uint wt[8];
  const uint lane = lid & 31u, w = lid >> 5;
  device const C* row = hist + ulong(d) * g.tiles;
  device C* out = scan + ulong(d) * g.tiles;
  uint carry = 0u;
  for (ulong c0 = 0; c0 < g.tiles; c0 += 4096ul) {
    const uint m = uint(min(4096ul, g.tiles - c0));
    for (uint k = 0; k < 16u; ++k) {
      uint e = k * 256u + lid;
      sh[(e >> 4) * 17u + (e & 15u)] = e < m ? uint(row[c0 + ulong(e)]) : 0u;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint v[16];
    uint s = 0u;
    for (uint k = 0; k < 16u; ++k) {
      v[k] = sh[lid * 17u + k];
      s += v[k];
    }
    uint ex = simd_prefix_exclusive_sum(s);
    if (lane == 31u) wt[w] = ex + s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint run = carry + ex, all = 0u;
    for (uint i = 0; i < 8u; ++i) {
      if (i < w) run += wt[i];
      all += wt[i];
    }
    for (uint k = 0; k < 16u; ++k) {
      sh[lid * 17u + k] = run;
      run += v[k];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint k = 0; k < 16u; ++k) {
      uint e = k * 256u + lid;
      if (e < m) out[c0 + ulong(e)] = C(sh[(e >> 4) * 17u + (e & 15u)]);
    }
    carry += all;
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  if (lid == 0u) totals[d] = C(carry);
}

// The look-back's tile states (one 32-bit word: the state and the count together, so no fence
// orders them): 0 until the tile publishes, then RX_AGG | its count of the digit, then
// RX_INC | the count of the digit in tiles 0..=t.
#define RX_AGG (1u << 30)
#define RX_INC (2u << 30)
#define RX_VAL (RX_AGG - 1u)
// Words before the tile states of a pass's state buffer: [0] the tile ticket, then padding.
#define RX_STATE0 256u
// Predecessors' states the look-back reads at once.
#define RX_LOOK 4u

struct RadixHistGeom {
  ulong n;           // elements
  ulong seg_len;     // row length (n / seg_len rows)
  ulong groups;      // threadgroups of this launch
  uint seg_passes;   // passes over the rows' digits after the key passes
  uint flags;        // SK_*
};

// The digit counts of every pass of a one-sweep sort, hist[pass * 256 + digit] (zeroed by the
// host): the key passes' from one read of the keys (each threadgroup counts a stretch of whole
// tiles into threadgroup memory and adds its counts to hist), the segment passes' in closed form
// (rows r < n / seg_len with digit d, times seg_len). Also zeroes the first pass's tile states
// (state0: RX_STATE0 + tiles * 256 words).
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void radix_hist(
    device const K* keys [[buffer(0)]], device atomic_uint* hist [[buffer(1)]],
    device uint* state0 [[buffer(2)]], constant RadixHistGeom& g [[buffer(3)]],
    uint grp [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
  const uint KPT = RadixTile<K>::kpt;
  const uint TILE = RadixTile<K>::n;
  const uint P = uint(sizeof(K));
  threadgroup atomic_uint h[sizeof(K) * 256];
  for (uint i = lid; i < P * 256u; i += 256u) atomic_store_explicit(&h[i], 0u, memory_order_relaxed);
  const ulong tiles = (g.n + ulong(TILE) - 1ul) / ulong(TILE);
  const ulong words = ulong(RX_STATE0) + tiles * 256ul;
  for (ulong i = ulong(grp) * 256ul + ulong(lid); i < words; i += g.groups * 256ul) state0[i] = 0u;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // Threadgroup grp counts tiles [t0, t1).
  const ulong per = (tiles + g.groups - 1ul) / g.groups;
  const ulong t0 = min(tiles, ulong(grp) * per), t1 = min(tiles, t0 + per);
  for (ulong t = t0; t < t1; ++t) {
    const ulong base = t * ulong(TILE);
    const uint count = uint(min(ulong(TILE), g.n - base));
    device const K* kt = keys + base;
    K raw[RadixTile<K>::kpt];
    for (uint k = 0; k < KPT; ++k) raw[k] = kt[min(k * 256u + lid, count - 1u)];
    for (uint k = 0; k < KPT; ++k) {
      if (k * 256u + lid < count) {
        const K key = SortKey<T>::key(raw[k], g.flags);
        for (uint p = 0; p < P; ++p)
          atomic_fetch_add_explicit(&h[p * 256u + rx_bin(uint(key >> (8u * p)) & 255u)], 1u,
                                    memory_order_relaxed);
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint p = 0; p < P; ++p) {
    const uint c = atomic_load_explicit(&h[p * 256u + rx_bin(lid)], memory_order_relaxed);
    if (c != 0u) atomic_fetch_add_explicit(&hist[p * 256u + lid], c, memory_order_relaxed);
  }
  if (grp == 0u) {
    const ulong rows = g.n / g.seg_len;
    for (uint s = 0; s < g.seg_passes; ++s) {
      // Digit lid of row numbers at bit 8s: rows of each full period of 256 << 8s take it
      // 1 << 8s times, the rest as far as they reach.
      const ulong one = 1ul << (8u * s), period = one << 8;
      const ulong rest = rows % period, from = ulong(lid) * one;
      const ulong c = (rows / period) * one + (rest > from ? min(one, rest - from) : 0ul);
      atomic_store_explicit(&hist[(P + s) * 256u + lid], uint(c * g.seg_len), memory_order_relaxed);
    }
  }
}

// PO: the payload's output type (uint between passes, long for the indices of the last pass).
// PAY: whether the kernel carries payloads at all (with RX_P_NONE clear). Without, the payload
// registers are compiled out: 64 registers a thread instead of 126 on an H200, twice the
// resident threadgroups, 114 -> 97 us a pass of 2^24 keys (a register-bound occupancy of 25%).
// LEAD: the lanes holding lane 0's digit take their peers from one ballot instead of the
// threadgroup-memory OR (the others as without). For passes whose digits few values take (the
// sign and exponent byte of floats, the high bytes of small integers), where many lanes of a
// SIMD-group OR into one word and the atomics serialise: measured on an H200 (one keys-only pass
// of 2^24 keys), the top byte of float32 integers below 2^20 112.5 -> 93.0 us, of normal
// float32 87.9 -> 92.8, a middle byte (uniform digits) 96.1 -> 98.2. A template parameter: the
// same choice made at run time costs the registers of both paths (every pass ~35% slower).
// ONE: a pass of the one-sweep scheme: `scan` is the pass's state buffer (the ticket, then
// RX_* states, [RX_STATE0 + tile * 256 + digit]), `next` the next pass's, whose words of this
// tile it zeroes (the buffer a pass uses was the one before the last's); `totals` the pass's row of
// radix_hist's counts. Otherwise `scan` is radix_scan's output and `next` unused.
template <class T, class K, class PO, bool PAY, bool LEAD, bool ONE>
[[max_total_threads_per_threadgroup(256)]] kernel void radix_downsweep(
    device const K* kin [[buffer(0)]], device K* kout [[buffer(1)]],
    device const uint* pin [[buffer(2)]], device PO* pout [[buffer(3)]],
    device uint* scan [[buffer(4)]], device const uint* totals [[buffer(5)]],
    constant RadixGeom& g [[buffer(6)]], device uint* next [[buffer(7)]],
    uint grp [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
  const uint KPT = RadixTile<K>::kpt;
  const uint TILE = RadixTile<K>::n;
  threadgroup uint wh[8 * 256];     // per SIMD-group digit counts, then their first slots
  threadgroup uint gofs[256];       // global position of slot 0 of each digit's run
  threadgroup uint wtot[8];
  threadgroup uint ttot[8];
  threadgroup uint ticket;
  threadgroup uint stage[RadixTile<K>::n * RadixTile<K>::words];
  threadgroup uchar dig[RadixTile<K>::n];  // the rx_bin of each slot's digit
  threadgroup K* sk = (threadgroup K*)stage;
  // The ranking's peer masks (8 KB) live in the staging buffer, unused until the ranking is done
  // (threadgroup memory stays under Metal's 32 KB).
  threadgroup atomic_uint* mm = (threadgroup atomic_uint*)stage;

  const uint lane = lid & 31u, w = lid >> 5;
  const bool has_pay = PAY && (g.flags & RX_P_NONE) == 0u;
  // Whether the slots' digits are kept (`dig`): for the payload, written after the keys have
  // left the staging buffer, and for digits of the row. Otherwise the write takes the digit from
  // the staged key: one scattered byte store less per key (with the folded offsets below,
  // 123 -> 113 us a pass of 2^24 keys on an H200).
  const bool need_dig = has_pay || (g.flags & RX_SEG) != 0u;
  for (uint i = lid; i < 8u * 256u; i += 256u) {
    wh[i] = 0u;
    atomic_store_explicit(&mm[i], 0u, memory_order_relaxed);
  }
  // This tile's scanned count and the total of digit lid, loaded now: their latency hides under
  // the keys' (read after the ranking, they cost ~20% of the kernel on an H200).
  const uint tot = totals[lid];
  device atomic_uint* st = (device atomic_uint*)scan;
  if (ONE) {
    if (lid == 0u) ticket = atomic_fetch_add_explicit(&st[0], 1u, memory_order_relaxed);
  }
  uint before_tile = ONE ? 0u : scan[ulong(lid) * g.tiles + ulong(grp)];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // The tile: numbered in the order threadgroups start with the look-back, so that a tile waits
  // only on tiles whose threadgroups are running.
  const uint tile = ONE ? ticket : grp;
  if (ONE) {
    next[RX_STATE0 + tile * 256u + lid] = 0u;
    if (tile == 0u && lid == 0u) next[0] = 0u;
  }

  const ulong base = ulong(tile) * ulong(TILE);
  const ulong wbase = base + ulong(w * 32u * KPT);
  const uint lt = (1u << lane) - 1u;
  K key[RadixTile<K>::kpt];
  uint pay[RadixTile<K>::kpt];
  uint slot[RadixTile<K>::kpt];
  // Every load first, at a clamped index so that none is conditional: KPT loads in flight per
  // thread instead of one per ranking step (the ranking stalled on each key's load).
  const bool full = base + ulong(TILE) <= g.n;
  const ulong last = g.n - 1ul;
  for (uint k = 0; k < KPT; ++k) key[k] = kin[min(wbase + ulong(k * 32u + lane), last)];
  if (has_pay && (g.flags & RX_P_IOTA) == 0u) {
    for (uint k = 0; k < KPT; ++k) pay[k] = pin[min(wbase + ulong(k * 32u + lane), last)];
  } else {
    for (uint k = 0; k < KPT; ++k) pay[k] = uint(wbase) + k * 32u + lane;
  }
  for (uint k = 0; k < KPT; ++k) {
    bool valid = full || wbase + ulong(k * 32u + lane) < g.n;
    K kk = key[k];
    if (g.flags & RX_KEY_IN) kk = SortKey<T>::key(kk, g.flags);
    if (!valid) kk = K(~K(0));
    key[k] = kk;
    uint d = rx_digit<K>(kk, pay[k], g);
    uint b = rx_bin(d);
    // The lanes holding the same digit (`peers`): each lane ORs its bit into the SIMD-group's
    // mask of its digit, reads the mask back, and the highest lane of each digit advances the
    // digit's count and clears the mask. A rank is the count before this step plus the peers
    // in lower lanes (stable). Measured on an H200: ~30% faster than eight ballots per key.
    threadgroup atomic_uint* m = &mm[w * 256u + b];
    bool lead = false;
    uint lead_peers = 0u;
    if (LEAD) {
      lead = valid && b == simd_shuffle(b, 0u);
      lead_peers = uint(static_cast<simd_vote::vote_t>(simd_ballot(lead)));
    }
    if (valid && !lead) atomic_fetch_or_explicit(m, 1u << lane, memory_order_relaxed);
    simdgroup_barrier(mem_flags::mem_threadgroup);
    uint peers = lead ? lead_peers : (valid ? atomic_load_explicit(m, memory_order_relaxed) : 0u);
    uint prev = valid ? wh[w * 256u + b] : 0u;
    simdgroup_barrier(mem_flags::mem_threadgroup);
    if (valid && lane == 31u - uint(clz(peers))) {
      wh[w * 256u + b] = prev + uint(popcount(peers));
      if (!lead) atomic_store_explicit(m, 0u, memory_order_relaxed);
    }
    slot[k] = prev + uint(popcount(peers & lt));
    simdgroup_barrier(mem_flags::mem_threadgroup);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // The tile and its first position again, the ticket read back from threadgroup memory rather
  // than kept in registers across the ranking: measured on an H200, the ONE kernels then fit in
  // 64 registers (126 otherwise, or spills under a bound of 64), one keys-only pass of 2^24
  // keys 145 -> 106 us.
  const uint tile2 = ONE ? ticket : grp;
  const ulong wbase2 = ulong(tile2) * ulong(TILE) + ulong(w * 32u * KPT);

  // Per digit (thread lid = digit, its slot bl): offsets of the SIMD-groups, the tile's count,
  // its start in the tile (exclusive scan over digits) and its global position less the tile's
  // (rel_start: the digit's start in the output less its start in the tile).
  uint tile_run, rel_start;
  {
    const uint bl = rx_bin(lid);
    uint run = 0u;
    uint wex[8];
    for (uint s = 0; s < 8u; ++s) {
      wex[s] = run;
      run += wh[s * 256u + bl];
    }
    uint ex = simd_prefix_exclusive_sum(run);
    uint tex = simd_prefix_exclusive_sum(tot);
    if (lane == 31u) {
      wtot[w] = ex + run;
      ttot[w] = tex + tot;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint start = ex, global_start = tex;
    for (uint s = 0; s < w; ++s) {
      start += wtot[s];
      global_start += ttot[s];
    }
    // Each SIMD-group's first slot for the digit, the tile's start of the digit folded in: the
    // staging below reads one offset per key instead of two.
    for (uint s = 0; s < 8u; ++s) wh[s * 256u + bl] = start + wex[s];
    if (ONE) {
      // The tile's count of digit lid, published before the look-back (tile 0's is inclusive).
      atomic_store_explicit(&st[RX_STATE0 + tile2 * 256u + lid], (tile2 == 0u ? RX_INC : RX_AGG) | run,
                            memory_order_relaxed);
    }
    tile_run = run;
    rel_start = global_start - start;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);

  // Keys into threadgroup memory in digit order, then out, one digit run after another.
  for (uint k = 0; k < KPT; ++k) {
    ulong i = wbase2 + ulong(k * 32u + lane);
    if (i < g.n) {
      uint b = rx_bin(rx_digit<K>(key[k], pay[k], g));
      uint s = wh[w * 256u + b] + slot[k];
      slot[k] = s;
      sk[s] = key[k];
      if (need_dig) dig[s] = uchar(b);
    }
  }
  if (ONE && tile2 != 0u) {
    // The digit's count in the tiles before this one: back over the predecessors' states,
    // adding counts up to the first inclusive one (waiting where a tile has not published),
    // RX_LOOK tiles a round trip. After the staging, so that the predecessors have had time
    // to publish.
    device atomic_uint* sd = st + RX_STATE0 + lid;
    uint t = tile2;
    bool found = false;
    while (!found) {
      uint v[RX_LOOK];
      for (uint j = 0; j < RX_LOOK; ++j)
        v[j] = j < t ? atomic_load_explicit(&sd[(t - 1u - j) * 256u], memory_order_relaxed) : RX_INC;
      for (uint j = 0; j < RX_LOOK; ++j) {
        while (v[j] == 0u) v[j] = atomic_load_explicit(&sd[(t - 1u - j) * 256u], memory_order_relaxed);
        before_tile += v[j] & RX_VAL;
        if ((v[j] & RX_INC) != 0u) {
          found = true;
          break;
        }
      }
      t -= RX_LOOK;
    }
    atomic_store_explicit(&sd[tile2 * 256u], RX_INC | (before_tile + tile_run), memory_order_relaxed);
  }
  gofs[rx_bin(lid)] = rel_start + before_tile;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const uint count = uint(min(ulong(TILE), g.n - ulong(tile2) * ulong(TILE)));
  if ((g.flags & RX_NO_KOUT) == 0u) {
    for (uint s = lid; s < count; s += 256u) {
      K kk = sk[s];
      const uint b = need_dig ? uint(dig[s]) : rx_bin(uint(kk >> g.shift) & 255u);
      ulong o = ulong(gofs[b] + s);
      kout[o] = (g.flags & RX_KEY_OUT) ? SortKey<T>::bits(kk, g.flags) : kk;
    }
  }
  if (!has_pay) return;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = 0; k < KPT; ++k) {
    ulong i = wbase2 + ulong(k * 32u + lane);
    if (i < g.n) stage[slot[k]] = pay[k];
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint s = lid; s < count; s += 256u) {
    uint p = stage[s];
    ulong o = ulong(gofs[dig[s]] + s);
    pout[o] = (g.flags & RX_P_ROW) ? PO(p % uint(g.seg_len)) : PO(p);
  }
}
