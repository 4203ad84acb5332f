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
// transpose, batched over at most one more axis): through a padded 32x32 threadgroup tile, so
// that reads are coalesced along the source's fast axis (R) and writes along the destination's
// (C); a plain strided copy reads one element per 32-byte sector there. Groups
// (ceil(C/32), ceil(R/32), batch) of (32, 8) threads; each thread moves 4 elements.
struct TGeom {
  ulong r, c;          // extents of the source-fast and destination-fast axes
  long s_off, d_off;   // element offsets of the first element
  long s_r, s_c, s_b;  // source strides along R, C and the batch axis
  long d_r, d_c, d_b;  // destination strides
};

template <class S, class D>
[[max_total_threads_per_threadgroup(256)]] kernel void copy_transpose(
    device const S* src [[buffer(0)]], device D* dst [[buffer(1)]], constant TGeom& g [[buffer(2)]],
    uint3 grp [[threadgroup_position_in_grid]], uint3 lid [[thread_position_in_threadgroup]]) {
  threadgroup D tile[32][33];
  ulong r0 = ulong(grp.y) * 32ul, c0 = ulong(grp.x) * 32ul;
  long sb = g.s_off + long(grp.z) * g.s_b, db = g.d_off + long(grp.z) * g.d_b;
  for (uint k = lid.y; k < 32u; k += 8u) {
    ulong r = r0 + lid.x, c = c0 + k;
    if (r < g.r && c < g.c) tile[k][lid.x] = cvt<D>(src[sb + long(r) * g.s_r + long(c) * g.s_c]);
  }
  threadgroup_barrier(mem_flags::mem_threadgroup);
  for (uint k = lid.y; k < 32u; k += 8u) {
    ulong r = r0 + k, c = c0 + lid.x;
    if (r < g.r && c < g.c) dst[db + long(r) * g.d_r + long(c) * g.d_c] = tile[lid.x][k];
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
