// Cumulative sums and products along one axis. The lines (every position of the other axes) are
// described by a Geom over the other axes (operand 0: input, operand 1: output); ax = (length,
// input stride, output stride) along the axis. The input is already in the result type T. The
// op `Op` (bound to T) gives the combination `f` and its identity `id`.

template <class T> struct scan_cumsum {
  static T id() { return T(0); }
  static T f(T a, T b) { return Tr<T>::kind == 3 ? T(cf(a) + cf(b)) : (Tr<T>::kind == 0 ? T(a || b) : wadd(a, b)); }
};
template <class T> struct scan_cumprod {
  static T id() { return T(1); }
  static T f(T a, T b) { return Tr<T>::kind == 3 ? T(cf(a) * cf(b)) : (Tr<T>::kind == 0 ? T(a && b) : wmul(a, b)); }
};

// One thread per line.
template <class Op, class T>
kernel void cumsum_lines(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                         constant Geom& g [[buffer(2)]], constant long4& ax [[buffer(3)]],
                         uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  ulong len = ulong(ax.x);
  for (ulong l = tid; l < g.n; l += nt) {
    long o[2];
    geom_offsets<2>(g, l, o);
    T acc = Op::id();
    for (ulong i = 0; i < len; ++i) {
      acc = Op::f(acc, x[o[0] + long(i) * ax.y]);
      y[o[1] + long(i) * ax.z] = acc;
    }
  }
}

// Long lines, in three passes over `ax.w` pieces per line (thread t of a line owns piece t):
// pass 0 writes each piece's total to sums[line * pieces + piece]; the host then scans the sums
// with cumsum_lines (exclusive offsets come from the previous piece's inclusive sum); pass 1
// rescans each piece starting from its offset.
template <class Op, class T>
kernel void cumsum_pieces(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                          device T* sums [[buffer(2)]], constant Geom& g [[buffer(3)]],
                          constant long4& ax [[buffer(4)]], constant uint& pass [[buffer(5)]],
                          uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  ulong len = ulong(ax.x), pieces = ulong(ax.w);
  ulong plen = (len + pieces - 1ul) / pieces;
  for (ulong w = tid; w < g.n * pieces; w += nt) {
    ulong l = w / pieces, p = w - l * pieces;
    long o[2];
    geom_offsets<2>(g, l, o);
    ulong i0 = p * plen, i1 = min(len, i0 + plen);
    if (pass == 0u) {
      T acc = Op::id();
      for (ulong i = i0; i < i1; ++i) acc = Op::f(acc, x[o[0] + long(i) * ax.y]);
      sums[w] = acc;
    } else {
      T acc = p == 0ul ? Op::id() : sums[w - 1ul];
      for (ulong i = i0; i < i1; ++i) {
        acc = Op::f(acc, x[o[0] + long(i) * ax.y]);
        y[o[1] + long(i) * ax.z] = acc;
      }
    }
  }
}

// Long lines with unit strides, in tiles of 256 threads x ScanItems<T>::n elements:
// cumsum_tile_sums writes each tile's total to sums[line * tiles + tile] (tiles = ax.w); the
// host scans the sums in place (a cumsum along their axis 1); cumsum_tiles rescans each tile
// from its offset. Loads and stores are coalesced (consecutive threads, consecutive elements)
// and go through threadgroup memory so that each thread then scans its consecutive elements;
// the cumsum reads the input twice and writes once. Two kernels rather than one with a pass
// argument: the totals pass then keeps few registers and runs at full occupancy (measured:
// benches/experiments/cuda_scan.py). Groups (tiles, lines) of 256 threads.
// Elements per thread: 16 for types of up to 4 bytes, 8 for wider ones (the tile stays within
// 17 KB of threadgroup memory either way; Metal allows 32 KB).
template <class T> struct ScanItems {
  enum { n = sizeof(T) <= 4 ? 16 : 8, tile = 256 * n };
};

// Padding of one slot per 32 so that both access patterns below avoid bank conflicts.
inline uint scan_pad(uint i) { return i + i / 32u; }

// The exclusive prefix of `v` over the 256 threads of the group, in thread order (`tot` has
// 256 + 16 slots): 16 threads scan 16 values each, one thread scans the 16 segment totals.
template <class Op, class T>
inline T group_exclusive(T v, threadgroup T* tot, uint lid) {
  tot[lid] = v;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid < 16u) {
    T acc = Op::id();
    for (uint j = 0; j < 16u; ++j) {
      acc = Op::f(acc, tot[lid * 16u + j]);
      tot[lid * 16u + j] = acc;
    }
    tot[256u + lid] = acc;
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0u) {
    T acc = Op::id();
    for (uint j = 0; j < 16u; ++j) {
      T t = tot[256u + j];
      tot[256u + j] = acc;
      acc = Op::f(acc, t);
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  T r = tot[256u + lid / 16u];
  if (lid % 16u != 0u) r = Op::f(r, tot[lid - 1u]);
  return r;
}

template <class Op, class T>
[[max_total_threads_per_threadgroup(256)]] kernel void cumsum_tile_sums(
    device const T* x [[buffer(0)]], device T* sums [[buffer(1)]], constant Geom& g [[buffer(2)]],
    constant long4& ax [[buffer(3)]], uint2 grp [[threadgroup_position_in_grid]],
    uint lid [[thread_index_in_threadgroup]]) {
  threadgroup T tot[256 + 16];
  const uint ITEMS = ScanItems<T>::n, TILE = ScanItems<T>::tile;
  ulong len = ulong(ax.x), tiles = ulong(ax.w);
  ulong line = ulong(grp.y), tile = ulong(grp.x);
  long o[2];
  geom_offsets<2>(g, line, o);
  ulong base = tile * ulong(TILE);
  device const T* xl = x + (o[0] + long(base));
  ulong rem = len - base;
  T acc = Op::id();
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = k * 256u + lid;
    if (ulong(i) < rem) acc = Op::f(acc, xl[i]);
  }
  T ex = group_exclusive<Op, T>(acc, tot, lid);
  if (lid == 255u) sums[line * tiles + tile] = Op::f(ex, acc);
}

template <class Op, class T>
[[max_total_threads_per_threadgroup(256)]] kernel void cumsum_tiles(
    device const T* x [[buffer(0)]], device T* y [[buffer(1)]], device const T* sums [[buffer(2)]],
    constant Geom& g [[buffer(3)]], constant long4& ax [[buffer(4)]],
    uint2 grp [[threadgroup_position_in_grid]], uint lid [[thread_index_in_threadgroup]]) {
  const uint ITEMS = ScanItems<T>::n, TILE = ScanItems<T>::tile;
  threadgroup T sh[ScanItems<T>::tile + ScanItems<T>::tile / 32];
  threadgroup T tot[256 + 16];
  ulong len = ulong(ax.x), tiles = ulong(ax.w);
  ulong line = ulong(grp.y), tile = ulong(grp.x);
  long o[2];
  geom_offsets<2>(g, line, o);
  ulong base = tile * ulong(TILE);
  device const T* xl = x + (o[0] + long(base));
  device T* yl = y + (o[1] + long(base));
  ulong rem = len - base;
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = k * 256u + lid;
    sh[scan_pad(i)] = ulong(i) < rem ? xl[i] : Op::id();
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  T v[ScanItems<T>::n];
  T acc = Op::id();
  for (uint j = 0; j < ITEMS; ++j) {
    acc = Op::f(acc, sh[scan_pad(lid * ITEMS + j)]);
    v[j] = acc;
  }
  T prefix = group_exclusive<Op, T>(acc, tot, lid);
  if (tile > 0ul) prefix = Op::f(sums[line * tiles + tile - 1ul], prefix);
  for (uint j = 0; j < ITEMS; ++j) sh[scan_pad(lid * ITEMS + j)] = Op::f(prefix, v[j]);
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = 0; k < ITEMS; ++k) {
    uint i = k * 256u + lid;
    if (ulong(i) < rem) yl[i] = sh[scan_pad(i)];
  }
}
