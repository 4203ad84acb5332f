// where(c, x, y): c is bool, x and y already converted to the result type T.

template <class T>
kernel void where_contig(device const bool* c [[buffer(0)]], device const T* x [[buffer(1)]],
                         device const T* y [[buffer(2)]], device T* z [[buffer(3)]],
                         constant Geom& g [[buffer(4)]], uint tid [[thread_position_in_grid]],
                         uint nt [[threads_per_grid]]) {
  const int N = 16 / sizeof(T);
  ulong nv = g.vec ? g.n / N : 0;
  device const Pack<T, N>* xv = (device const Pack<T, N>*)x;
  device const Pack<T, N>* yv = (device const Pack<T, N>*)y;
  device const Pack<bool, N>* cv = (device const Pack<bool, N>*)c;
  device Pack<T, N>* zv = (device Pack<T, N>*)z;
  for (ulong j = tid; j < nv; j += nt) {
    Pack<T, N> a = xv[j], b = yv[j];
    Pack<bool, N> m = cv[j];
    Pack<T, N> r;
    for (int k = 0; k < N; ++k) r.v[k] = m.v[k] ? a.v[k] : b.v[k];
    zv[j] = r;
  }
  for (ulong i = nv * N + tid; i < g.n; i += nt) z[i] = c[i] ? x[i] : y[i];
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
