// Reductions over axes. The host presents the problem as m rows of k elements: row r starts at
// the offset given by the outer geometry (shape/st over the kept axes), its elements are kst
// apart. An op `Op` (bound to the input type T) defines the accumulator A, its identity, how an
// element enters it (load), how two combine (comb) and the result (out<O>).

struct RGeom {
  ulong m;          // rows (outputs)
  ulong k;          // elements per row
  long kst;         // stride between the elements of a row
  long off;         // offset of the first element
  uint ndim;        // kept axes of the outer geometry
  uint vec;         // contiguous k (kst == 1) and 16-byte aligned: pack loads
  ulong parts;      // two-pass reductions: partial results
  ulong shape[8];
  long st[8];
};

inline long row_offset(constant RGeom& g, ulong r) {
  long o = g.off;
  for (int d = int(g.ndim) - 1; d >= 0; --d) {
    ulong c = r % g.shape[d];
    r /= g.shape[d];
    o += long(c) * g.st[d];
  }
  return o;
}

// Accumulators of sums and products (NumPy's: integers widen to 64 bits, half/bfloat add in float).
template <class T> struct SumAcc { typedef T type; };
template <> struct SumAcc<bool> { typedef long type; };
template <> struct SumAcc<char> { typedef long type; };
template <> struct SumAcc<short> { typedef long type; };
template <> struct SumAcc<int> { typedef long type; };
template <> struct SumAcc<uchar> { typedef ulong type; };
template <> struct SumAcc<ushort> { typedef ulong type; };
template <> struct SumAcc<uint> { typedef ulong type; };
template <> struct SumAcc<half> { typedef float type; };
template <> struct SumAcc<bfloat> { typedef float type; };

// Comparison type of min/max: float for half/bfloat, the type itself otherwise.
template <class T> struct CmpT { typedef T type; };
template <> struct CmpT<half> { typedef float type; };
template <> struct CmpT<bfloat> { typedef float type; };

template <class A> struct Lim;
template <> struct Lim<bool> { static bool lo() { return false; } static bool hi() { return true; } };
template <> struct Lim<char> { static char lo() { return char(-128); } static char hi() { return char(127); } };
template <> struct Lim<short> { static short lo() { return short(-32768); } static short hi() { return short(32767); } };
template <> struct Lim<int> { static int lo() { return int(0x80000000u); } static int hi() { return 0x7fffffff; } };
template <> struct Lim<long> { static long lo() { return long(0x8000000000000000ul); } static long hi() { return 0x7fffffffffffffffl; } };
template <> struct Lim<uchar> { static uchar lo() { return uchar(0); } static uchar hi() { return uchar(255); } };
template <> struct Lim<ushort> { static ushort lo() { return ushort(0); } static ushort hi() { return ushort(65535); } };
template <> struct Lim<uint> { static uint lo() { return 0u; } static uint hi() { return 0xffffffffu; } };
template <> struct Lim<ulong> { static ulong lo() { return 0ul; } static ulong hi() { return 0xfffffffffffffffful; } };
template <> struct Lim<float> { static float lo() { return -INFINITY; } static float hi() { return INFINITY; } };
#ifndef INGOT_NO_F64
template <> struct Lim<double> { static double lo() { return -double(INFINITY); } static double hi() { return double(INFINITY); } };
#endif

template <int K> struct NanK { template <class A> static bool f(A a) { return false; } };
template <> struct NanK<3> { template <class A> static bool f(A a) { return isnan(a); } };
template <class A> inline bool is_nan(A a) { return NanK<Tr<A>::kind>::f(a); }

template <class T> struct red_sum {
  typedef typename SumAcc<T>::type A;
  static A id() { return A(0); }
  static A load(T x, ulong) { return cvt<A>(x); }
  static A comb(A a, A b) { return Tr<A>::kind == 3 ? A(a + b) : wadd(a, b); }
  template <class O> static O out(A a) { return cvt<O>(a); }
};
template <class T> struct red_prod {
  typedef typename SumAcc<T>::type A;
  static A id() { return A(1); }
  static A load(T x, ulong) { return cvt<A>(x); }
  static A comb(A a, A b) { return Tr<A>::kind == 3 ? A(a * b) : wmul(a, b); }
  template <class O> static O out(A a) { return cvt<O>(a); }
};
template <class T> struct red_max {
  typedef typename CmpT<T>::type A;
  static A id() { return Lim<A>::lo(); }
  static A load(T x, ulong) { return A(x); }
  static A comb(A a, A b) { return (a >= b || is_nan(a)) ? a : b; }
  template <class O> static O out(A a) { return O(a); }
};
template <class T> struct red_min {
  typedef typename CmpT<T>::type A;
  static A id() { return Lim<A>::hi(); }
  static A load(T x, ulong) { return A(x); }
  static A comb(A a, A b) { return (a <= b || is_nan(a)) ? a : b; }
  template <class O> static O out(A a) { return O(a); }
};
template <class T> struct red_all {
  typedef uint A;
  static A id() { return 1u; }
  static A load(T x, ulong) { return cvt<bool>(x) ? 1u : 0u; }
  static A comb(A a, A b) { return a & b; }
  template <class O> static O out(A a) { return O(a != 0u); }
};
template <class T> struct red_any {
  typedef uint A;
  static A id() { return 0u; }
  static A load(T x, ulong) { return cvt<bool>(x) ? 1u : 0u; }
  static A comb(A a, A b) { return a | b; }
  template <class O> static O out(A a) { return O(a != 0u); }
};

template <class T> struct red_count_nonzero {
  typedef long A;
  static A id() { return 0l; }
  static A load(T x, ulong) { return cvt<bool>(x) ? 1l : 0l; }
  static A comb(A a, A b) { return a + b; }
  template <class O> static O out(A a) { return O(a); }
};

// argmax/argmin: (value, index); NaN wins, then the extreme value, then the lower index.
template <class C> struct ArgAcc { C v; long i; };
template <class T, int MAX> struct red_arg {
  typedef typename CmpT<T>::type C;
  typedef ArgAcc<C> A;
  static A id() { A a; a.v = C(0); a.i = -1; return a; }
  static A load(T x, ulong k) { A a; a.v = C(x); a.i = long(k); return a; }
  static A comb(A a, A b) {
    if (a.i < 0) return b;
    if (b.i < 0) return a;
    bool an = is_nan(a.v), bn = is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    bool b_better = MAX ? (b.v > a.v) : (b.v < a.v);
    if (b_better || (b.v == a.v && b.i < a.i)) return b;
    return a;
  }
  template <class O> static O out(A a) { return O(a.i); }
};
template <class T> struct red_argmax : red_arg<T, 1> {};
template <class T> struct red_argmin : red_arg<T, 0> {};

// Variance and standard deviation in one pass: Welford's update per element, Chan's formula to
// combine partial results (count, mean, sum of squared deviations), accumulated in the float
// compute type (float for half/bfloat). CORR is the correction (0 or 1; other corrections are
// composed from sums on the host side), SQRT selects the standard deviation.
template <class C> struct MomAcc { ulong n; C mean; C m2; };
template <class T, int CORR, int SQRT> struct red_moments {
  typedef typename Tr<T>::C C;
  typedef MomAcc<C> A;
  static A id() { A a; a.n = 0; a.mean = C(0); a.m2 = C(0); return a; }
  static A load(T x, ulong) { A a; a.n = 1; a.mean = C(x); a.m2 = C(0); return a; }
  static A comb(A a, A b) {
    if (b.n == 0) return a;
    if (a.n == 0) return b;
    A r;
    r.n = a.n + b.n;
    C d = b.mean - a.mean;
    C f = C(b.n) / C(r.n);
    r.mean = a.mean + d * f;
    r.m2 = a.m2 + b.m2 + d * d * C(a.n) * f;
    return r;
  }
  template <class O> static O out(A a) {
    C den = C(a.n) > C(CORR) ? C(a.n) - C(CORR) : C(0);
    C v = a.m2 / den;
    // A lone NaN or infinity leaves m2 at 0 (it is never subtracted from anything): the
    // variance is NaN as soon as the mean is not finite.
    if (!(a.mean - a.mean == C(0))) v = a.mean - a.mean;
    return cvt<O>(SQRT ? C(sqrt(v)) : v);
  }
};
template <class T> struct red_var_c0 : red_moments<T, 0, 0> {};
template <class T> struct red_var_c1 : red_moments<T, 1, 0> {};
template <class T> struct red_std_c0 : red_moments<T, 0, 1> {};
template <class T> struct red_std_c1 : red_moments<T, 1, 1> {};

// The accumulator of one pack of N contiguous elements (first index k0), combined in order.
template <class Op> struct PackFold {
  template <class T, int N> static typename Op::A f(Pack<T, N> a, ulong k0) {
    typename Op::A acc = Op::load(a.v[0], k0);
    for (int q = 1; q < N; ++q) acc = Op::comb(acc, Op::load(a.v[q], k0 + ulong(q)));
    return acc;
  }
};
// Moments of a pack directly (its mean, then the squared deviations from it): one Chan combine
// per pack instead of one per element, whose division made var/std compute-bound on an H100.
template <class Op> struct MomentsFold {
  template <class T, int N> static typename Op::A f(Pack<T, N> a, ulong) {
    typedef typename Op::C C;
    C s = C(0);
    for (int q = 0; q < N; ++q) s += C(a.v[q]);
    const C mean = s * (C(1) / C(N));
    C m2 = C(0);
    for (int q = 0; q < N; ++q) {
      const C d = C(a.v[q]) - mean;
      m2 += d * d;
    }
    typename Op::A r;
    r.n = ulong(N);
    r.mean = mean;
    r.m2 = m2;
    return r;
  }
};
template <class T> struct PackFold<red_var_c0<T>> : MomentsFold<red_var_c0<T>> {};
template <class T> struct PackFold<red_var_c1<T>> : MomentsFold<red_var_c1<T>> {};
template <class T> struct PackFold<red_std_c0<T>> : MomentsFold<red_std_c0<T>> {};
template <class T> struct PackFold<red_std_c1<T>> : MomentsFold<red_std_c1<T>> {};

// Combine of one value per thread of the threadgroup (every thread calls it); every thread gets
// the result. A tree in threadgroup memory for power-of-two groups, one thread's loop otherwise.
// (SIMD-group shuffles of whole accumulators, moved as 32-bit words, measured slower on an H200
// for std over rows: 0.60 ms against the tree's 0.40 ms.)
template <class Op>
inline typename Op::A group_combine(typename Op::A acc, threadgroup typename Op::A* sh, uint lid, uint nl) {
  sh[lid] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if ((nl & (nl - 1u)) != 0u) {
    if (lid == 0u) {
      typename Op::A r = sh[0];
      for (uint i = 1; i < nl; ++i) r = Op::comb(r, sh[i]);
      sh[0] = r;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    return sh[0];
  }
  for (uint s = nl / 2u; s > 0u; s >>= 1) {
    if (lid < s) sh[lid] = Op::comb(sh[lid], sh[lid + s]);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
  return sh[0];
}

// The accumulators of one SIMD group (32 threads, lanes lid & 31 of a group whose SIMD groups
// are consecutive runs of 32 threads) combined by a tree through `sh`, synchronised within the
// SIMD group only; every lane returns the result.
template <class Op>
inline typename Op::A simd_combine(typename Op::A acc, threadgroup typename Op::A* sh, uint lid) {
  const uint lane = lid & 31u;
  sh[lid] = acc;
  simdgroup_barrier(mem_flags::mem_threadgroup);
  for (uint h = 16u; h > 0u; h >>= 1) {
    if (lane < h) sh[lid] = Op::comb(sh[lid], sh[lid + h]);
    simdgroup_barrier(mem_flags::mem_threadgroup);
  }
  const typename Op::A r = sh[lid - lane];
  simdgroup_barrier(mem_flags::mem_threadgroup);
  return r;
}

// Accumulates elements [k0, k1) step `step` of the row at `base`.
template <class Op, class T>
inline typename Op::A row_accumulate(device const T* x, constant RGeom& g, long base, ulong k0, ulong step) {
  typename Op::A acc = Op::id();
  if (g.kst == 1) {
    for (ulong k = k0; k < g.k; k += step) acc = Op::comb(acc, Op::load(x[base + long(k)], k));
  } else {
    for (ulong k = k0; k < g.k; k += step) acc = Op::comb(acc, Op::load(x[base + long(k) * g.kst], k));
  }
  return acc;
}

// One threadgroup per row (grid-stride over rows): long rows.
template <class Op, class T, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_rows(device const T* x [[buffer(0)]], device O* out [[buffer(1)]],
                        constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                        uint nl [[threads_per_threadgroup]], uint gid [[threadgroup_position_in_grid]],
                        uint ng [[threadgroups_per_grid]]) {
  threadgroup typename Op::A sh[256];
  const int N = 16 / sizeof(T);
  for (ulong r = gid; r < g.m; r += ng) {
    long base = row_offset(g, r);
    typename Op::A acc;
    if (g.vec) {
      // Contiguous rows starting 16-byte aligned: packs, two in flight.
      device const Pack<T, N>* xv = (device const Pack<T, N>*)(x + base);
      ulong nv = g.k / N, j = lid;
      acc = Op::id();
      typename Op::A acc1 = Op::id();
      for (; j + nl < nv; j += 2ul * nl) {
        Pack<T, N> a = xv[j], b = xv[j + nl];
        acc = Op::comb(acc, PackFold<Op>::f(a, j * N));
        acc1 = Op::comb(acc1, PackFold<Op>::f(b, (j + nl) * N));
      }
      for (; j < nv; j += nl) acc = Op::comb(acc, PackFold<Op>::f(xv[j], j * N));
      acc = Op::comb(acc, acc1);
      for (ulong k = nv * N + lid; k < g.k; k += nl) acc = Op::comb(acc, Op::load(x[base + long(k)], k));
    } else {
      acc = row_accumulate<Op, T>(x, g, base, lid, nl);
    }
    acc = group_combine<Op>(acc, sh, lid, nl);
    if (lid == 0u) out[r] = Op::template out<O>(acc);
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}

// Many contiguous rows of moderate length: one SIMD group (32 threads) per row, eight rows per
// threadgroup, the row's partials combined by a tree within the SIMD group (no threadgroup
// barrier). A 256-thread group per row spends more on its eight-level combine than on loading
// 4,096 floats.
template <class Op, class T, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_rows_simd(device const T* x [[buffer(0)]], device O* out [[buffer(1)]],
                        constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                        uint gid [[threadgroup_position_in_grid]], uint ng [[threadgroups_per_grid]]) {
  threadgroup typename Op::A sh[256];
  const int N = 16 / sizeof(T);
  const uint lane = lid & 31u;
  for (ulong r0 = ulong(gid) * 8ul; r0 < g.m; r0 += ulong(ng) * 8ul) {
    const ulong r = r0 + ulong(lid >> 5);
    typename Op::A acc = Op::id();
    if (r < g.m) {
      const long base = row_offset(g, r);
      if (g.vec) {
        device const Pack<T, N>* xv = (device const Pack<T, N>*)(x + base);
        const ulong nv = g.k / N;
        typename Op::A acc1 = Op::id();
        ulong j = lane;
        for (; j + 32ul < nv; j += 64ul) {
          Pack<T, N> a = xv[j], b = xv[j + 32ul];
          acc = Op::comb(acc, PackFold<Op>::f(a, j * N));
          acc1 = Op::comb(acc1, PackFold<Op>::f(b, (j + 32ul) * N));
        }
        for (; j < nv; j += 32ul) acc = Op::comb(acc, PackFold<Op>::f(xv[j], j * N));
        acc = Op::comb(acc, acc1);
        for (ulong k = nv * N + lane; k < g.k; k += 32ul) acc = Op::comb(acc, Op::load(x[base + long(k)], k));
      } else {
        acc = row_accumulate<Op, T>(x, g, base, lane, 32);
      }
    }
    acc = simd_combine<Op>(acc, sh, lid);
    if (lane == 0u && r < g.m) out[r] = Op::template out<O>(acc);
  }
}

// One thread per row: short rows, or rows far apart.
template <class Op, class T, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_lines(device const T* x [[buffer(0)]], device O* out [[buffer(1)]],
                         constant RGeom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                         uint nt [[threads_per_grid]]) {
  for (ulong r = tid; r < g.m; r += nt) {
    long base = row_offset(g, r);
    out[r] = Op::template out<O>(row_accumulate<Op, T>(x, g, base, 0, 1));
  }
}

// Columns: the kept axes are one contiguous axis of m columns (g.st[0] == 1), the reduced
// elements of a column are kst apart. A group of 256 threads takes 32 columns, 8 threads per column.
template <class Op, class T, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_cols(device const T* x [[buffer(0)]], device O* out [[buffer(1)]],
                        constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                        uint gid [[threadgroup_position_in_grid]], uint ng [[threadgroups_per_grid]]) {
  threadgroup typename Op::A sh[256];
  uint lane = lid & 31u, row = lid >> 5;
  for (ulong c0 = ulong(gid) * 32ul; c0 < g.m; c0 += ulong(ng) * 32ul) {
    ulong c = c0 + lane;
    typename Op::A acc = Op::id();
    if (c < g.m) {
      device const T* p = x + g.off + long(c);
      for (ulong k = row; k < g.k; k += 8ul) acc = Op::comb(acc, Op::load(p[long(k) * g.kst], k));
    }
    sh[lid] = acc;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (row == 0u && c < g.m) {
      for (uint j = 1u; j < 8u; ++j) acc = Op::comb(acc, sh[lane + 32u * j]);
      out[c] = Op::template out<O>(acc);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
  }
}

// Columns of a long reduction, pass 1 (measured on an H100: splitting the rows over more groups
// and reading 16-byte packs of adjacent columns took column sums from 0.90 to ~1.0 of the copy
// bandwidth). Group gid takes column block gid % cb (32 lanes x N columns, N = a pack when
// g.vec) and row slice gid / cb (g.parts slices); 8 threads per lane split its rows. Writes
// partial[slice * m + column].
template <class Op, class T>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_cols_part(
    device const T* x [[buffer(0)]], device typename Op::A* partial [[buffer(1)]],
    constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
    uint gid [[threadgroup_position_in_grid]], uint ng [[threadgroups_per_grid]]) {
  typedef typename Op::A A;
  const int N = 16 / sizeof(T);
  threadgroup A sh[256];
  uint lane = lid & 31u, row = lid >> 5;
  ulong per = g.vec ? ulong(N) : 1ul;
  ulong cb = (g.m + 32ul * per - 1ul) / (32ul * per);
  ulong rows = (g.k + g.parts - 1ul) / g.parts;
  for (ulong w = gid; w < cb * g.parts; w += ng) {
    ulong c0 = (w % cb) * 32ul * per + ulong(lane) * per;
    ulong s = w / cb;
    ulong r0 = s * rows, r1 = min(g.k, r0 + rows);
    if (g.vec) {
      A acc[N];
      for (int q = 0; q < N; ++q) acc[q] = Op::id();
      if (c0 < g.m) {
        for (ulong k = r0 + row; k < r1; k += 8ul) {
          Pack<T, N> a = *(device const Pack<T, N>*)(x + g.off + long(k) * g.kst + long(c0));
          for (int q = 0; q < N; ++q) acc[q] = Op::comb(acc[q], Op::load(a.v[q], k));
        }
      }
      for (int q = 0; q < N; ++q) {
        sh[lid] = acc[q];
        threadgroup_barrier(mem_flags::mem_threadgroup);
        if (row == 0u && c0 < g.m) {
          A t = acc[q];
          for (uint j = 1u; j < 8u; ++j) t = Op::comb(t, sh[lane + 32u * j]);
          partial[s * g.m + c0 + ulong(q)] = t;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
      }
    } else {
      A acc = Op::id();
      if (c0 < g.m) {
        device const T* p = x + g.off + long(c0);
        for (ulong k = r0 + row; k < r1; k += 8ul) acc = Op::comb(acc, Op::load(p[long(k) * g.kst], k));
      }
      sh[lid] = acc;
      threadgroup_barrier(mem_flags::mem_threadgroup);
      if (row == 0u && c0 < g.m) {
        for (uint j = 1u; j < 8u; ++j) acc = Op::comb(acc, sh[lane + 32u * j]);
        partial[s * g.m + c0] = acc;
      }
      threadgroup_barrier(mem_flags::mem_threadgroup);
    }
  }
}

// Columns, pass 2: out[c] combines the g.parts partials of column c in slice order.
template <class Op, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_cols_final(
    device const typename Op::A* partial [[buffer(0)]], device O* out [[buffer(1)]],
    constant RGeom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
    uint nt [[threads_per_grid]]) {
  for (ulong c = tid; c < g.m; c += nt) {
    typename Op::A acc = Op::id();
    for (ulong s = 0; s < g.parts; ++s) acc = Op::comb(acc, partial[s * g.m + c]);
    out[c] = Op::template out<O>(acc);
  }
}

// Whole-array reductions, pass 1: each group reduces a grid-stride share of the one row into
// partial[group]. Contiguous aligned rows read 16-byte packs.
template <class Op, class T>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_partial(device const T* x [[buffer(0)]], device typename Op::A* partial [[buffer(1)]],
                           constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                           uint nl [[threads_per_threadgroup]], uint gid [[threadgroup_position_in_grid]],
                           uint ng [[threadgroups_per_grid]]) {
  threadgroup typename Op::A sh[256];
  ulong tid = ulong(gid) * nl + lid, nt = ulong(ng) * nl;
  typename Op::A acc = Op::id();
  const int N = 16 / sizeof(T);
  ulong done = 0;
  if (g.vec && g.kst == 1) {
    device const Pack<T, N>* xv = (device const Pack<T, N>*)(x + g.off);
    ulong nv = g.k / N;
    ulong j = tid;
    typename Op::A acc1 = Op::id();
    for (; j + nt < nv; j += 2ul * nt) {
      Pack<T, N> a = xv[j], b = xv[j + nt];
      acc = Op::comb(acc, PackFold<Op>::f(a, j * N));
      acc1 = Op::comb(acc1, PackFold<Op>::f(b, (j + nt) * N));
    }
    for (; j < nv; j += nt) acc = Op::comb(acc, PackFold<Op>::f(xv[j], j * N));
    acc = Op::comb(acc, acc1);
    done = nv * N;
  }
  for (ulong k = done + tid; k < g.k; k += nt) acc = Op::comb(acc, Op::load(x[g.off + long(k) * g.kst], k));
  acc = group_combine<Op>(acc, sh, lid, nl);
  if (lid == 0u) partial[gid] = acc;
}

// argmax/argmin of a whole contiguous, aligned array, pass 1. A thread scans its packs in index
// order keeping only the best pack's extreme and position (a few operations per element instead
// of a full (value, index) combine: the combine made argmax compute-bound on an H100), then
// finds the lane in that pack again. Ties keep the first; NaN wins, first NaN first.
template <int MAX, class C> inline bool arg_takes(C v, C best) {
  return (MAX ? v > best : v < best) || (v != v && best == best);
}
template <class T, int MAX>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_arg_partial(
    device const T* x [[buffer(0)]], device ArgAcc<typename CmpT<T>::type>* partial [[buffer(1)]],
    constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
    uint nl [[threads_per_threadgroup]], uint gid [[threadgroup_position_in_grid]],
    uint ng [[threadgroups_per_grid]]) {
  typedef typename CmpT<T>::type C;
  typedef red_arg<T, MAX> Op;
  threadgroup ArgAcc<C> sh[256];
  const int N = 16 / sizeof(T);
  ulong tid = ulong(gid) * nl + lid, nt = ulong(ng) * nl;
  device const Pack<T, N>* xv = (device const Pack<T, N>*)(x + g.off);
  ulong nv = g.k / N;
  C best = C(0);
  long bj = -1;
  ulong j = tid;
  for (; j + nt < nv; j += 2ul * nt) {
    Pack<T, N> a = xv[j], b = xv[j + nt];
    C ma = C(a.v[0]), mb = C(b.v[0]);
    for (int q = 1; q < N; ++q) {
      C va = C(a.v[q]), vb = C(b.v[q]);
      ma = arg_takes<MAX>(va, ma) ? va : ma;
      mb = arg_takes<MAX>(vb, mb) ? vb : mb;
    }
    if (bj < 0 || arg_takes<MAX>(ma, best)) {
      best = ma;
      bj = long(j);
    }
    if (arg_takes<MAX>(mb, best)) {
      best = mb;
      bj = long(j + nt);
    }
  }
  for (; j < nv; j += nt) {
    Pack<T, N> a = xv[j];
    C ma = C(a.v[0]);
    for (int q = 1; q < N; ++q) {
      C va = C(a.v[q]);
      ma = arg_takes<MAX>(va, ma) ? va : ma;
    }
    if (bj < 0 || arg_takes<MAX>(ma, best)) {
      best = ma;
      bj = long(j);
    }
  }
  typename Op::A acc = Op::id();
  if (bj >= 0) {
    Pack<T, N> a = xv[bj];
    for (int q = 0; q < N; ++q) {
      C v = C(a.v[q]);
      if ((best != best) ? (v != v) : (v == best)) {
        acc.v = v;
        acc.i = long(ulong(bj) * ulong(N) + ulong(q));
        break;
      }
    }
  }
  for (ulong k = nv * N + tid; k < g.k; k += nt) acc = Op::comb(acc, Op::load(x[g.off + long(k)], k));
  acc = group_combine<Op>(acc, sh, lid, nl);
  if (lid == 0u) partial[gid] = acc;
}

// Pass 2: one group combines g.parts partials into out[0].
template <class Op, class O>
[[max_total_threads_per_threadgroup(256)]] kernel void reduce_final(device const typename Op::A* partial [[buffer(0)]], device O* out [[buffer(1)]],
                         constant RGeom& g [[buffer(2)]], uint lid [[thread_index_in_threadgroup]],
                         uint nl [[threads_per_threadgroup]]) {
  threadgroup typename Op::A sh[256];
  typename Op::A acc = Op::id();
  for (ulong p = lid; p < g.parts; p += nl) acc = Op::comb(acc, partial[p]);
  acc = group_combine<Op>(acc, sh, lid, nl);
  if (lid == 0u) out[0] = Op::template out<O>(acc);
}
