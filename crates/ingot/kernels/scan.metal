// Cumulative sums along one axis. The lines (every position of the other axes) are described by
// a Geom over the other axes (operand 0: input, operand 1: output); ax = (length, input stride,
// output stride) along the axis. The input is already in the result type T.

template <class T> struct ScanAdd {
  static T f(T a, T b) { return Tr<T>::kind == 3 ? T(cf(a) + cf(b)) : (Tr<T>::kind == 0 ? T(a || b) : wadd(a, b)); }
};

// One thread per line.
template <class T>
kernel void cumsum_lines(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                         constant Geom& g [[buffer(2)]], constant long4& ax [[buffer(3)]],
                         uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  ulong len = ulong(ax.x);
  for (ulong l = tid; l < g.n; l += nt) {
    long o[2];
    geom_offsets<2>(g, l, o);
    T acc = T(0);
    for (ulong i = 0; i < len; ++i) {
      acc = ScanAdd<T>::f(acc, x[o[0] + long(i) * ax.y]);
      y[o[1] + long(i) * ax.z] = acc;
    }
  }
}

// Long lines, in three passes over `ax.w` pieces per line (thread t of a line owns piece t):
// pass 0 writes each piece's total to sums[line * pieces + piece]; the host then scans the sums
// with cumsum_lines (exclusive offsets come from the previous piece's inclusive sum); pass 1
// rescans each piece starting from its offset.
template <class T>
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
      T acc = T(0);
      for (ulong i = i0; i < i1; ++i) acc = ScanAdd<T>::f(acc, x[o[0] + long(i) * ax.y]);
      sums[w] = acc;
    } else {
      T acc = p == 0ul ? T(0) : sums[w - 1ul];
      for (ulong i = i0; i < i1; ++i) {
        acc = ScanAdd<T>::f(acc, x[o[0] + long(i) * ax.y]);
        y[o[1] + long(i) * ax.z] = acc;
      }
    }
  }
}
