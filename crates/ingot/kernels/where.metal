// where(c, x, y): c is bool, x and y already converted to the result type T.

// Contiguous operands: 16-byte packs of T when aligned, in chunks (see INGOT_CHUNKS).
template <class T>
INGOT_EW_KERNEL void where_contig(device const bool* c [[buffer(0)]], device const T* x [[buffer(1)]],
                                  device const T* y [[buffer(2)]], device T* z [[buffer(3)]],
                                  constant EGeom& g [[buffer(4)]], INGOT_CHUNK_IDS) {
  const int N = 16 / sizeof(T);
  ulong nv = g.vec ? g.n / N : 0;
  device const Pack<T, N>* xv = (device const Pack<T, N>*)x;
  device const Pack<T, N>* yv = (device const Pack<T, N>*)y;
  device const Pack<bool, N>* cv = (device const Pack<bool, N>*)c;
  device Pack<T, N>* zv = (device Pack<T, N>*)z;
  INGOT_CHUNKS(nv) {
    if (j1 < nv) {
      Pack<T, N> a0 = xv[j0], b0 = yv[j0], a1 = xv[j1], b1 = yv[j1];
      Pack<bool, N> m0 = cv[j0], m1 = cv[j1];
      Pack<T, N> r0, r1;
      for (int k = 0; k < N; ++k) {
        r0.v[k] = m0.v[k] ? a0.v[k] : b0.v[k];
        r1.v[k] = m1.v[k] ? a1.v[k] : b1.v[k];
      }
      zv[j0] = r0;
      zv[j1] = r1;
    } else if (j0 < nv) {
      Pack<T, N> a = xv[j0], b = yv[j0];
      Pack<bool, N> m = cv[j0];
      Pack<T, N> r;
      for (int k = 0; k < N; ++k) r.v[k] = m.v[k] ? a.v[k] : b.v[k];
      zv[j0] = r;
    }
  }
  INGOT_TAIL(i, nv * N, g.n) z[i] = c[i] ? x[i] : y[i];
}

template <class T>
kernel void where_strided(device const bool* c [[buffer(0)]], device const T* x [[buffer(1)]],
                          device const T* y [[buffer(2)]], device T* z [[buffer(3)]],
                          constant Geom& g [[buffer(4)]], uint tid [[thread_position_in_grid]],
                          uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[3];
    geom_offsets<3>(g, i, o);
    z[i] = c[o[0]] ? x[o[1]] : y[o[2]];
  }
}
