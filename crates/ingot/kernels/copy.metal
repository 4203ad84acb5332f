// Copies with dtype conversion (astype, assignment, contiguous copies of views) and fills.

// dst[i] = cvt(src[i]) for contiguous src and dst; 16-byte packs when aligned (g.vec), in
// chunks (see INGOT_CHUNKS).
template <class S, class D>
INGOT_EW_KERNEL void copy_contig(device const S* src [[buffer(0)]], device D* dst [[buffer(1)]],
                                 constant EGeom& g [[buffer(2)]], INGOT_CHUNK_IDS) {
  const int N = PackN<S, D>::n;
  ulong nv = g.vec ? g.n / N : 0;
  device const Pack<S, N>* sv = (device const Pack<S, N>*)src;
  device Pack<D, N>* dv = (device Pack<D, N>*)dst;
  INGOT_CHUNKS(nv) {
    if (j1 < nv) {
      Pack<S, N> a0 = sv[j0], a1 = sv[j1];
      Pack<D, N> r0, r1;
      for (int k = 0; k < N; ++k) {
        r0.v[k] = cvt<D>(a0.v[k]);
        r1.v[k] = cvt<D>(a1.v[k]);
      }
      dv[j0] = r0;
      dv[j1] = r1;
    } else if (j0 < nv) {
      Pack<S, N> a = sv[j0];
      Pack<D, N> r;
      for (int k = 0; k < N; ++k) r.v[k] = cvt<D>(a.v[k]);
      dv[j0] = r;
    }
  }
  INGOT_TAIL(i, nv * N, g.n) dst[i] = cvt<D>(src[i]);
}

// dst[i] = cvt(src[0]) for a contiguous dst (fill, broadcast of one element).
template <class S, class D>
INGOT_EW_KERNEL void copy_fill(device const S* src [[buffer(0)]], device D* dst [[buffer(1)]],
                               constant EGeom& g [[buffer(2)]], INGOT_CHUNK_IDS) {
  const int N = 16 / sizeof(D);
  D v = cvt<D>(src[0]);
  ulong nv = g.vec ? g.n / N : 0;
  Pack<D, N> p;
  for (int k = 0; k < N; ++k) p.v[k] = v;
  device Pack<D, N>* dv = (device Pack<D, N>*)dst;
  INGOT_CHUNKS(nv) {
    if (j0 < nv) dv[j0] = p;
    if (j1 < nv) dv[j1] = p;
  }
  INGOT_TAIL(i, nv * N, g.n) dst[i] = v;
}

// Any layouts: operand 0 is src, operand 1 is dst.
template <class S, class D>
kernel void copy_strided(device const S* src [[buffer(0)]], device D* dst [[buffer(1)]],
                         constant Geom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                         uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[2];
    geom_offsets<2>(g, i, o);
    dst[o[1]] = cvt<D>(src[o[0]]);
  }
}

// A strided copy whose source and destination are unit-strided along different axes (a
// transpose, batched over at most one more axis): through a padded threadgroup tile, so that
// reads are coalesced along the source's fast axis (R) and writes along the destination's (C);
// a plain strided copy reads one element per 32-byte sector there. Tiles of 64x64 elements for
// types of up to 4 bytes (pairs of elements per thread and access; 32x32 for wider types, to
// stay within Metal's 32 KB of threadgroup memory), 256 threads as 32 x 8. With `g.vec` (both
// fast axes unit-strided forwards, pairs aligned) full tiles load and store element pairs as one
// access: 93% of copy bandwidth in benches/experiments/cuda_transpose.py (H200), against 61%
// for the same tile one element at a time. Groups (ceil(C/n), ceil(R/n), batch).
struct TGeom {
  ulong r, c;          // extents of the source-fast and destination-fast axes
  long s_off, d_off;   // element offsets of the first element
  long s_r, s_c, s_b;  // source strides along R, C and the batch axis
  long d_r, d_c, d_b;  // destination strides
  ulong vec;           // pair accesses allowed (see above)
};

template <class D> struct TTile {
  enum { n = sizeof(D) <= 4 ? 64 : 32, pairs = sizeof(D) <= 4 ? 1 : 0 };
};

template <class S, class D>
[[max_total_threads_per_threadgroup(256)]] kernel void copy_transpose(
    device const S* src [[buffer(0)]], device D* dst [[buffer(1)]], constant TGeom& g [[buffer(2)]],
    uint3 grp [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]) {
  const uint N = TTile<D>::n, V = N / 32u;
  threadgroup D tile[TTile<D>::n][TTile<D>::n + 1];
  ulong r0 = ulong(grp.y) * N, c0 = ulong(grp.x) * N;
  long sb = g.s_off + long(grp.z) * g.s_b, db = g.d_off + long(grp.z) * g.d_b;
  bool pairs = TTile<D>::pairs && g.vec != 0ul && r0 + N <= g.r && c0 + N <= g.c;
  uint x = lid.x * V;
  // Read: consecutive threads along R (the source's fast axis), rows of the tile along C.
  if (pairs) {
    for (uint k = lid.y; k < N; k += 8u) {
      Pack<S, 2> p = *(device const Pack<S, 2>*)(src + (sb + long(r0 + x) + long(c0 + k) * g.s_c));
      tile[k][x] = cvt<D>(p.v[0]);
      tile[k][x + 1u] = cvt<D>(p.v[1]);
    }
  } else {
    for (uint k = lid.y; k < N; k += 8u) {
      for (uint e = 0; e < V; ++e) {
        ulong r = r0 + x + e, c = c0 + k;
        if (r < g.r && c < g.c) tile[k][x + e] = cvt<D>(src[sb + long(r) * g.s_r + long(c) * g.s_c]);
      }
    }
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  // Write: consecutive threads along C (the destination's fast axis), rows along R.
  if (pairs) {
    for (uint k = lid.y; k < N; k += 8u) {
      Pack<D, 2> p;
      p.v[0] = tile[x][k];
      p.v[1] = tile[x + 1u][k];
      *(device Pack<D, 2>*)(dst + (db + long(r0 + k) * g.d_r + long(c0 + x))) = p;
    }
  } else {
    for (uint k = lid.y; k < N; k += 8u) {
      for (uint e = 0; e < V; ++e) {
        ulong r = r0 + k, c = c0 + x + e;
        if (r < g.r && c < g.c) dst[db + long(r) * g.d_r + long(c) * g.d_c] = tile[x + e][k];
      }
    }
  }
}

// out[i] = start + i * step (computed in double where available, as NumPy's arange).
template <class D>
kernel void affine_fill(device D* dst [[buffer(0)]], constant EGeom& g [[buffer(1)]],
                        constant float2& fs [[buffer(2)]], constant ulong2& ds [[buffer(3)]],
                        uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
#ifdef INGOT_HAS_F64
  double start = as_type<double>(ds.x), step = as_type<double>(ds.y);
  for (ulong i = tid; i < g.n; i += nt) dst[i] = cvt<D>(start + double(i) * step);
#else
  for (ulong i = tid; i < g.n; i += nt) dst[i] = cvt<D>(fs.x + float(i) * fs.y);
#endif
}
