// Stream compaction (nonzero, boolean masks, unique) and binary searches (searchsorted, isin).
// Prepended by sort.metal (SortKey and its flags).
//
// Compaction works on tiles of 4096 elements (256 threads x 16, element k * 256 + lid; unique's
// one-pass kernel: runs of 16, see unique_compact); each selected element goes to its tile's
// offset plus its rank in the tile (in index order: SIMD-group ballots, then one scan of the 128
// (item, SIMD-group) counts). Two schemes find the tiles' offsets:
// - two kernels (nonzero, masks): *_count writes each tile's count, the host scans the counts
//   and reads the total, *_write recomputes the selection and writes. The input is read twice.
// - one kernel with a decoupled look-back (unique): each threadgroup takes the next tile in the
//   order threadgroups start, publishes its count, and adds up its predecessors' published counts
//   (see lb_exclusive). The input is read once and the host reads the total afterwards.
#define SEL_ITEMS 16u
#define SEL_TILE 4096u
#define SEL_FLOAT 1u   // nonzero: elements are floats (-0.0 is zero); unique: NaN keys are distinct

struct SelGeom {
  ulong n;
  uint flags;
  uint pad;
};

// The tile count of the selected elements flagged in `sel` (thread lid's items), in every thread.
inline uint tile_count(thread const bool* sel, threadgroup uint* part, uint lid) {
  uint c = 0u;
  for (uint k = 0; k < SEL_ITEMS; ++k) c += sel[k] ? 1u : 0u;
  c = simd_sum(c);
  if ((lid & 31u) == 0u) part[lid >> 5] = c;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  uint t = 0u;
  for (uint w = 0; w < 8u; ++w) t += part[w];
  return t;
}

// pos[k]: the rank in the tile of item k of this thread when selected (`cnt`: 128 slots).
inline void tile_ranks(thread const bool* sel, thread uint* pos, threadgroup uint* cnt, uint lid) {
  const uint lane = lid & 31u, w = lid >> 5, lt = (1u << lane) - 1u;
  uint mask[SEL_ITEMS];
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    mask[k] = uint(static_cast<simd_vote::vote_t>(simd_ballot(sel[k])));
    if (lane == 0u) cnt[k * 8u + w] = uint(popcount(mask[k]));
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (w == 0u) {
    uint v0 = cnt[lane * 4u], v1 = cnt[lane * 4u + 1u], v2 = cnt[lane * 4u + 2u], v3 = cnt[lane * 4u + 3u];
    uint ex = simd_prefix_exclusive_sum(v0 + v1 + v2 + v3);
    cnt[lane * 4u] = ex;
    cnt[lane * 4u + 1u] = ex + v0;
    cnt[lane * 4u + 2u] = ex + v0 + v1;
    cnt[lane * 4u + 3u] = ex + v0 + v1 + v2;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = 0; k < SEL_ITEMS; ++k) pos[k] = cnt[k * 8u + w] + uint(popcount(mask[k] & lt));
}

// sidx[r]: the tile offset (k * 256 + lid) of the tile's r-th selected item (pos: its rank), so
// that the writes which follow are contiguous across the threadgroup. Written from each item's
// own thread, a store had 1 active lane in 16 for unique (2^20 values in 2^24): measured 60 of a
// unique_write's 117 us on an H200.
inline void stage_selected(thread const bool* sel, thread const uint* pos, threadgroup ushort* sidx,
                           uint lid) {
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    if (sel[k]) sidx[pos[k]] = ushort(k * 256u + lid);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
}

// The first output slot of tile grp and its count of selected elements (`scan`: the inclusive
// scan of the counts).
inline uint2 tile_span(device const uint* scan, uint grp) {
  const uint at = grp == 0u ? 0u : scan[grp - 1u];
  return uint2(at, scan[grp] - at);
}

// ---- nonzero: K holds the element bits (uchar for bool) --------------------------------------
template <class K> inline bool nz_bits(K b, uint flags) {
  const K S = K(K(1) << (sizeof(K) * 8 - 1));
  return (flags & SEL_FLOAT) ? K(b & K(~S)) != K(0) : b != K(0);
}

// sel[k]: whether item k of thread lid in the tile at `base` is nonzero. Every load first, at a
// clamped index (16 loads in flight; a load behind `i < n &&` was one at a time: measured).
template <class K>
inline void nz_tile(device const K* x, ulong base, constant SelGeom& g, uint lid, thread bool* sel) {
  const ulong last = g.n - 1ul;
  K v[SEL_ITEMS];
  for (uint k = 0; k < SEL_ITEMS; ++k) v[k] = x[min(base + ulong(k * 256u + lid), last)];
  for (uint k = 0; k < SEL_ITEMS; ++k)
    sel[k] = base + ulong(k * 256u + lid) < g.n && nz_bits(v[k], g.flags);
}

template <class K>
[[max_total_threads_per_threadgroup(256)]] kernel void nonzero_count(
    device const K* x [[buffer(0)]], device uint* counts [[buffer(1)]],
    constant SelGeom& g [[buffer(2)]], uint grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint part[8];
  bool sel[SEL_ITEMS];
  ulong base = ulong(grp) * SEL_TILE;
  nz_tile(x, base, g, lid, sel);
  uint t = tile_count(sel, part, lid);
  if (lid == 0u) counts[grp] = t;
}

// Writes the flat position of every nonzero element; `scan`: inclusive scan of the counts.
template <class K>
[[max_total_threads_per_threadgroup(256)]] kernel void nonzero_write(
    device const K* x [[buffer(0)]], device const uint* scan [[buffer(1)]],
    device long* out [[buffer(2)]], constant SelGeom& g [[buffer(3)]],
    uint grp [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint cnt[SEL_ITEMS * 8];
  threadgroup ushort sidx[SEL_TILE];
  bool sel[SEL_ITEMS];
  uint pos[SEL_ITEMS];
  ulong base = ulong(grp) * SEL_TILE;
  const uint2 span = tile_span(scan, grp);
  nz_tile(x, base, g, lid, sel);
  tile_ranks(sel, pos, cnt, lid);
  stage_selected(sel, pos, sidx, lid);
  for (uint r = lid; r < span.y; r += 256u) out[ulong(span.x) + r] = long(base + ulong(sidx[r]));
}

// x[mask] for a boolean mask of x's shape (mask: uchar, counted by nonzero_count<uchar>; K: the
// element bits): the selected elements in row-major order, without the positions in between.
template <class K>
[[max_total_threads_per_threadgroup(256)]] kernel void mask_write(
    device const uchar* mask [[buffer(0)]], device const K* x [[buffer(1)]],
    device const uint* scan [[buffer(2)]], device K* out [[buffer(3)]],
    constant SelGeom& g [[buffer(4)]], uint grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint cnt[SEL_ITEMS * 8];
  threadgroup ushort sidx[SEL_TILE];
  bool sel[SEL_ITEMS];
  uint pos[SEL_ITEMS];
  ulong base = ulong(grp) * SEL_TILE;
  const uint2 span = tile_span(scan, grp);
  nz_tile(mask, base, g, lid, sel);
  tile_ranks(sel, pos, cnt, lid);
  stage_selected(sel, pos, sidx, lid);
  for (uint r = lid; r < span.y; r += 256u) out[ulong(span.x) + r] = x[base + ulong(sidx[r])];
}

// ---- unique: over sorted keys (SortKey<T>::key with SK_CANON) --------------------------------
// Element i starts a new value when it differs from its predecessor; every NaN is its own value.
template <class K> inline bool starts_value(K cur, K prv, ulong i, uint flags) {
  return i == 0ul || cur != prv || ((flags & SEL_FLOAT) && cur == K(~K(0)));
}
template <class K> inline bool boundary(device const K* k, ulong i, uint flags) {
  return i == 0ul || starts_value(k[i], k[i - 1ul], i, flags);
}

// sel[k]: whether item k of thread lid in the tile at `base` starts a value; cur[k]: its key.
// Loads first, at clamped indices (as nz_tile).
template <class K>
inline void boundary_tile(device const K* keys, ulong base, constant SelGeom& g, uint lid,
                          thread bool* sel, thread K* cur) {
  const ulong last = g.n - 1ul;
  K prv[SEL_ITEMS];
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    ulong j = min(base + ulong(k * 256u + lid), last);
    cur[k] = keys[j];
    prv[k] = keys[j == 0ul ? 0ul : j - 1ul];
  }
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    ulong i = base + ulong(k * 256u + lid);
    sel[k] = i < g.n && starts_value(cur[k], prv[k], i, g.flags);
  }
}

template <class K>
[[max_total_threads_per_threadgroup(256)]] kernel void unique_count(
    device const K* keys [[buffer(0)]], device uint* counts [[buffer(1)]],
    constant SelGeom& g [[buffer(2)]], uint grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint part[8];
  bool sel[SEL_ITEMS];
  K cur[SEL_ITEMS];
  ulong base = ulong(grp) * SEL_TILE;
  boundary_tile(keys, base, g, lid, sel, cur);
  uint t = tile_count(sel, part, lid);
  if (lid == 0u) counts[grp] = t;
}

#define UQ_INDEX 2u   // write the first position (perm[i]) of each value
#define UQ_START 4u   // write where each value starts in the sorted order

// values[j]: the bits of the j-th distinct value; index[j]: its first position in the input
// (perm: the stable sort's permutation); start[j]: its first position in the sorted order.
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void unique_write(
    device const K* keys [[buffer(0)]], device const long* perm [[buffer(1)]],
    device const uint* scan [[buffer(2)]], device K* values [[buffer(3)]],
    device long* index [[buffer(4)]], device long* start [[buffer(5)]],
    constant SelGeom& g [[buffer(6)]], uint grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup uint cnt[SEL_ITEMS * 8];
  threadgroup ushort sidx[SEL_TILE];
  bool sel[SEL_ITEMS];
  uint pos[SEL_ITEMS];
  K cur[SEL_ITEMS];
  ulong base = ulong(grp) * SEL_TILE;
  const uint2 span = tile_span(scan, grp);
  boundary_tile(keys, base, g, lid, sel, cur);
  tile_ranks(sel, pos, cnt, lid);
  stage_selected(sel, pos, sidx, lid);
  // The key is read again (this threadgroup just loaded it: a cache hit) by the thread that
  // writes its slot.
  for (uint r = lid; r < span.y; r += 256u) {
    ulong i = base + ulong(sidx[r]);
    ulong j = ulong(span.x) + r;
    values[j] = SortKey<T>::bits(keys[i], SK_CANON);
    if (g.flags & UQ_INDEX) index[j] = perm[i];
    if (g.flags & UQ_START) start[j] = long(i);
  }
}

// ---- one-pass compaction: a decoupled look-back over tile states ----------------------------
// state[0]: the next tile's ticket; state[1 + t]: tile t's state, 0 until it publishes, then
// LB_AGG | its count, then LB_INC | the count of tiles 0..=t. One 32-bit word carries both the
// state and the count, so no fence orders them; counts are below 2^30 (the host checks n).
#define LB_AGG (1u << 30)
#define LB_INC (2u << 30)
#define LB_VAL (LB_AGG - 1u)

// The tile this threadgroup works on, numbered in the order threadgroups start: a tile then
// waits only on tiles whose threadgroups are already running, whatever order the hardware (or
// the CPU engine) starts them in.
inline uint lb_ticket(device atomic_uint* state, threadgroup uint* slot, uint lid) {
  if (lid == 0u) *slot = atomic_fetch_add_explicit(&state[0], 1u, memory_order_relaxed);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return *slot;
}

// Publishes the tile's count (its inclusive count for tile 0), early, so successors can go on.
inline void lb_publish(device atomic_uint* state, uint tile, uint count, uint lid) {
  if (lid == 0u)
    atomic_store_explicit(&state[1u + tile], (tile == 0u ? LB_INC : LB_AGG) | count,
                          memory_order_relaxed);
}

// The count of every tile before `tile` (in every thread), then publishes the inclusive count.
// SIMD-group 0 reads the states of the 32 tiles before a window at once, waits until all have
// published, and sums them back to the nearest inclusive one (else moves the window back by 32).
inline uint lb_exclusive(device atomic_uint* state, uint tile, uint count, threadgroup uint* slot,
                         uint lid) {
  if (lid < 32u) {
    device atomic_uint* st = state + 1;
    uint excl = 0u;
    int look = int(tile) - 1;
    while (look >= 0) {
      const int t = look - int(lid);
      uint s = t >= 0 ? atomic_load_explicit(&st[t], memory_order_relaxed) : LB_INC;
      while (simd_any(s == 0u)) {
        if (s == 0u) s = atomic_load_explicit(&st[t], memory_order_relaxed);
      }
      const uint inc = uint(static_cast<simd_vote::vote_t>(simd_ballot((s & LB_INC) != 0u)));
      const uint first = inc != 0u ? ctz(inc) : 32u;
      excl += simd_sum(lid <= first ? (s & LB_VAL) : 0u);
      if (inc != 0u) break;
      look -= 32;
    }
    if (lid == 0u) {
      if (tile != 0u)
        atomic_store_explicit(&st[tile], LB_INC | (excl + count), memory_order_relaxed);
      *slot = excl;
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return *slot;
}

#define UQ_INVERSE 8u  // write each element's value number at its input position (perm)

// unique_compact works on runs: thread lid of a tile owns the SEL_ITEMS consecutive elements
// from base + SEL_ITEMS * lid (vector loads; the predecessor of a run comes from the previous
// lane), and ranks come from one SIMD-group prefix sum of per-thread counts. Measured on an
// H200 (2^24 float32 keys, 2^20 values): 58 us against 89 with the interleaved layout of
// boundary_tile and the same look-back. `p`: SEL_ITEMS * sizeof(K) bytes, aligned as many (the
// sorted keys are a fresh allocation and runs start at multiples of SEL_ITEMS elements).
inline void load_run(device const uchar* p, thread uchar* c) {
  for (uint q = 0; q < SEL_ITEMS / 4u; ++q) {
    const uchar4 a = ((device const uchar4*)p)[q];
    c[4u * q] = a.x; c[4u * q + 1u] = a.y; c[4u * q + 2u] = a.z; c[4u * q + 3u] = a.w;
  }
}
inline void load_run(device const ushort* p, thread ushort* c) {
  for (uint q = 0; q < SEL_ITEMS / 4u; ++q) {
    const ushort4 a = ((device const ushort4*)p)[q];
    c[4u * q] = a.x; c[4u * q + 1u] = a.y; c[4u * q + 2u] = a.z; c[4u * q + 3u] = a.w;
  }
}
inline void load_run(device const uint* p, thread uint* c) {
  for (uint q = 0; q < SEL_ITEMS / 4u; ++q) {
    const uint4 a = ((device const uint4*)p)[q];
    c[4u * q] = a.x; c[4u * q + 1u] = a.y; c[4u * q + 2u] = a.z; c[4u * q + 3u] = a.w;
  }
}
inline void load_run(device const ulong* p, thread ulong* c) {
  for (uint q = 0; q < SEL_ITEMS / 2u; ++q) {
    const ulong2 a = ((device const ulong2*)p)[q];
    c[2u * q] = a.x; c[2u * q + 1u] = a.y;
  }
}

// The previous lane's `v` (Metal's SIMD shuffles take 8 to 32-bit values: a 64-bit key moves as
// two halves).
template <class K> inline K lane_before(K v) { return simd_shuffle_up(v, 1u); }
inline ulong lane_before(ulong v) {
  const uint2 h = as_type<uint2>(v);
  return as_type<ulong>(uint2(simd_shuffle_up(h.x, 1u), simd_shuffle_up(h.y, 1u)));
}

// unique's compaction in one pass (n < 2^30): values/index/start as unique_write (sized n: the
// count is known only afterwards, read from the last tile's state), with UQ_START also counts[j]
// for each value j whose next value starts in the same tile (the others: unique_counts_fix), and
// with UQ_INVERSE inverse[perm[i]] = the number of values starting at or before sorted position
// i, minus one.
// The kernels (unique_compact, unique_compact_inverse) share this body; wsum: 9 words (per
// SIMD-group counts, then their exclusive scan and the total), sidx: SEL_TILE, slots: 2 (the
// ticket, the exclusive count).
template <class T, class K>
inline void unique_compact_tile(device const K* keys, device const long* perm,
                                device atomic_uint* state, device K* values, device long* index,
                                device long* start, device long* inverse, device long* counts,
                                constant SelGeom& g, uint lid, threadgroup uint* wsum,
                                threadgroup ushort* sidx, threadgroup uint* slots) {
  const uint lane = lid & 31u, w = lid >> 5;
  const uint tile = lb_ticket(state, &slots[0], lid);
  const ulong base = ulong(tile) * SEL_TILE;
  const ulong first = base + ulong(lid) * SEL_ITEMS;
  K cur[SEL_ITEMS];
  if (first + SEL_ITEMS <= g.n) {
    load_run(keys + first, cur);
  } else {
    for (uint k = 0; k < SEL_ITEMS; ++k) cur[k] = keys[min(first + ulong(k), g.n - 1ul)];
  }
  // Every lane shuffles, then lane 0 loads its own predecessor (a shuffle whose result only some
  // lanes use can be duplicated by a compiler into per-branch copies: the CPU engine then sees
  // two call sites).
  K before = lane_before(cur[SEL_ITEMS - 1u]);
  if (lane == 0u) before = keys[first == 0ul ? 0ul : min(first, g.n) - 1ul];
  uint c = 0u, bits = 0u;
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    const ulong i = first + ulong(k);
    const bool s = i < g.n && starts_value(cur[k], k == 0u ? before : cur[k - 1u], i, g.flags);
    bits |= (s ? 1u : 0u) << k;
    c += s ? 1u : 0u;
  }
  const uint ex = simd_prefix_exclusive_sum(c);
  if (lane == 31u) wsum[w] = ex + c;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0u) {
    uint acc = 0u;
    for (uint j = 0; j < 8u; ++j) {
      const uint t = wsum[j];
      wsum[j] = acc;
      acc += t;
    }
    wsum[8] = acc;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const uint rank = wsum[w] + ex;  // of this thread's first selected element in the tile
  const uint count = wsum[8];
  lb_publish(state, tile, count, lid);
  uint r = rank;
  for (uint k = 0; k < SEL_ITEMS; ++k) {
    if ((bits >> k) & 1u) sidx[r++] = ushort(lid * SEL_ITEMS + k);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  const uint at = lb_exclusive(state, tile, count, &slots[1], lid);
  for (uint j = lid; j < count; j += 256u) {
    const ulong i = base + ulong(sidx[j]);
    const ulong o = ulong(at) + j;
    values[o] = SortKey<T>::bits(keys[i], SK_CANON);
    if (g.flags & UQ_INDEX) index[o] = perm[i];
    if (g.flags & UQ_START) {
      start[o] = long(i);
      // The value before this one ends here: its count, when it started in this tile too.
      if (j > 0u) counts[o - 1ul] = long(sidx[j] - sidx[j - 1u]);
    }
  }
  if (g.flags & UQ_INVERSE) {
    r = at + rank;
    for (uint k = 0; k < SEL_ITEMS; ++k) {
      const ulong i = first + ulong(k);
      r += (bits >> k) & 1u;
      if (i < g.n) inverse[perm[i]] = long(r) - 1l;
    }
  }
}

#define UQ_COMPACT_PARAMS                                                                  \
    device const K* keys [[buffer(0)]], device const long* perm [[buffer(1)]],             \
    device atomic_uint* state [[buffer(2)]], device K* values [[buffer(3)]],               \
    device long* index [[buffer(4)]], device long* start [[buffer(5)]],                    \
    device long* inverse [[buffer(6)]], device long* counts [[buffer(7)]],                 \
    constant SelGeom& g [[buffer(8)]], uint lid [[thread_index_in_threadgroup]]

// Without the inverse, on CUDA at least 6 threadgroups a multiprocessor (40 registers a thread
// instead of the 64 the compiler picks): the look-back stalls a threadgroup, and more of them
// resident hide it. Measured on an H200 (2^24 float32 keys, 2^20 values): 59.2 -> 51.1 us in
// unique_values (8 groups, 32 registers and spills: 48.8 in a harness). With the inverse's
// scattered stores the same bound cost more than it saved (unique_all of 2^24 float32: 1789 ->
// 1840 us), hence two kernels. Metal's compiler does not know the attribute.
#ifdef INGOT_NATIVE_METAL
#define UQ_OCCUPANCY
#else
#define UQ_OCCUPANCY [[ingot::min_threadgroups_per_core(6)]]
#endif
template <class T, class K>
UQ_OCCUPANCY [[max_total_threads_per_threadgroup(256)]] kernel void unique_compact(
    UQ_COMPACT_PARAMS) {
  threadgroup uint wsum[9];
  threadgroup ushort sidx[SEL_TILE];
  threadgroup uint slots[2];
  unique_compact_tile<T, K>(keys, perm, state, values, index, start, inverse, counts, g, lid,
                            wsum, sidx, slots);
}

// unique_compact for a call that asks for the inverse (UQ_INVERSE).
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void unique_compact_inverse(UQ_COMPACT_PARAMS) {
  threadgroup uint wsum[9];
  threadgroup ushort sidx[SEL_TILE];
  threadgroup uint slots[2];
  unique_compact_tile<T, K>(keys, perm, state, values, index, start, inverse, counts, g, lid,
                            wsum, sidx, slots);
}


// After unique_compact with UQ_START, thread t for tile t: the count of the value that ends where
// the tile's first value starts (it started in an earlier tile), and for the last tile the last
// value's (it ends at n). The tiles' states hold their inclusive counts. No host read between:
// the counts are complete when the host reads the number of values.
template <class P>
kernel void unique_counts_fix(device const uint* state [[buffer(0)]],
                              device const P* start [[buffer(1)]], device P* counts [[buffer(2)]],
                              constant SelGeom& g [[buffer(3)]], constant uint& tiles [[buffer(4)]],
                              uint t [[thread_position_in_grid]]) {
  if (t >= tiles) return;
  const uint at = t == 0u ? 0u : (state[t] & LB_VAL);  // values before the tile (state[1 + t - 1])
  const uint inc = state[1u + t] & LB_VAL;               // values up to the tile's end
  if (inc > at && at > 0u) counts[at - 1u] = start[at] - start[at - 1u];
  if (t + 1u == tiles) counts[inc - 1u] = P(g.n) - start[inc - 1u];
}

// flags[i] = 1 where a new value starts (for the inverse: an inclusive scan numbers the values).
template <class K>
kernel void unique_flags(device const K* keys [[buffer(0)]], device uint* flags [[buffer(1)]],
                         constant SelGeom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                         uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) flags[i] = boundary(keys, i, g.flags) ? 1u : 0u;
}

// inverse[perm[i]] = (number of values starting at or before i) - 1 (P: long).
template <class P>
kernel void unique_inverse(device const uint* numbered [[buffer(0)]],
                           device const P* perm [[buffer(1)]], device P* inverse [[buffer(2)]],
                           constant SelGeom& g [[buffer(3)]], uint tid [[thread_position_in_grid]],
                           uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) inverse[perm[i]] = P(numbered[i]) - P(1);
}

// ---- binary searches over a sorted array (element bits K of dtype T) --------------------------
struct SearchGeom {
  ulong n;       // values searched for
  ulong m;       // elements of the sorted array
  uint flags;    // SR_RIGHT, SR_INVERT
  uint pad;
};
#define SR_RIGHT 1u   // searchsorted side="right"
#define SR_INVERT 2u  // isin: the complement

// Searches start in a sample of the sorted keys that each threadgroup keeps in threadgroup
// memory: the first ~10 steps of a binary search then read no device memory (a search was a chain
// of ~20 dependent device loads, latency-bound).
#define SR_SAMPLES 1024u
#define SR_SHIFT 10u  // log2(SR_SAMPLES)

// The sample: keys of sorted[p_k], p_k = k * m / count for k < count = min(m, SR_SAMPLES)
// (transformed as `sort` orders them unless `raw`: the keys are already sort keys).
template <class T, class K>
inline uint search_sample(device const K* sorted, ulong m, bool raw, threadgroup K* sample,
                          uint lid, uint tg) {
  const uint count = uint(min(m, ulong(SR_SAMPLES)));
  for (uint k = lid; k < count; k += tg) {
    K s = sorted[ulong(k) * m / ulong(count)];
    sample[k] = raw ? s : SortKey<T>::key(s, SK_CANON);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  return count;
}

// The first position in sorted[0, m) whose key is >= key (side left) or > key (side right): the
// sample narrows it to the positions between two sampled ones, a binary search finishes. The
// sample is the whole array (count == m) or SR_SAMPLES positions k * m / SR_SAMPLES: a shift
// instead of two 64-bit divisions a query, and the search within a bucket counts in 32 bits
// (H200, 2^24 float32 queries in 2^20 keys: 367 -> 314-330 us when every query lies past the
// last key, one path for all threads; ~990 us either way for queries spread over the keys).
template <class T, class K>
inline ulong lower_pos(device const K* sorted, ulong m, threadgroup const K* sample, uint count,
                       K key, bool right, bool raw) {
  // a: the sampled keys that lie before the position (they are a prefix of the sample).
  uint a = 0u, b = count;
  while (a < b) {
    uint mid = (a + b) >> 1;
    K s = sample[mid];
    if (right ? s <= key : s < key) a = mid + 1u;
    else b = mid;
  }
  if (ulong(count) == m) return ulong(a);
  const ulong lo = a == 0u ? 0ul : ((ulong(a - 1u) * m) >> SR_SHIFT) + 1ul;
  const ulong hi = a == count ? m : (ulong(a) * m) >> SR_SHIFT;
  device const K* p = sorted + lo;
  uint len = uint(hi - lo);
  while (len > 0u) {
    const uint half = len >> 1;
    K s = raw ? p[half] : SortKey<T>::key(p[half], SK_CANON);
    if (right ? s <= key : s < key) {
      p += half + 1u;
      len -= half + 1u;
    } else {
      len = half;
    }
  }
  return ulong(p - sorted);
}

// out[i]: where values[i] would be inserted into `sorted` (ascending in NumPy's order) to keep it
// sorted; -0.0 equals +0.0 and NaN sorts last, as `sort` orders them.
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void search_sorted(
    device const K* sorted [[buffer(0)]], device const K* values [[buffer(1)]],
    device long* out [[buffer(2)]], constant SearchGeom& g [[buffer(3)]],
    uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tg [[threads_per_threadgroup]]) {
  threadgroup K sample[SR_SAMPLES];
  const uint count = search_sample<T, K>(sorted, g.m, false, sample, lid, tg);
  for (ulong i = tid; i < g.n; i += nt) {
    K key = SortKey<T>::key(values[i], SK_CANON);
    out[i] = long(lower_pos<T, K>(sorted, g.m, sample, count, key, (g.flags & SR_RIGHT) != 0u, false));
  }
}

// out[i]: whether values[i] equals an element of `keys` (sorted keys with SK_CANON); NaN never
// does. SR_INVERT gives the complement.
template <class T, class K>
[[max_total_threads_per_threadgroup(256)]] kernel void isin_sorted(
    device const K* keys [[buffer(0)]], device const K* values [[buffer(1)]],
    device bool* out [[buffer(2)]], constant SearchGeom& g [[buffer(3)]],
    uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]],
    uint lid [[thread_index_in_threadgroup]], uint tg [[threads_per_threadgroup]]) {
  threadgroup K sample[SR_SAMPLES];
  const uint count = search_sample<T, K>(keys, g.m, true, sample, lid, tg);
  for (ulong i = tid; i < g.n; i += nt) {
    K key = SortKey<T>::key(values[i], SK_CANON);
    ulong p = lower_pos<T, K>(keys, g.m, sample, count, key, false, true);
    bool nan = SortKey<T>::FLOAT && key == K(~K(0));
    bool found = !nan && p < g.m && keys[p] == key;
    out[i] = found != ((g.flags & SR_INVERT) != 0u);
  }
}
