// Elementwise functions of one array. A functor `op_<name>` maps the computation type A to the
// result type R (bool for predicates); half and bfloat compute in float.

// Kind-dispatched implementations: K is Tr<T>::kind (0 bool, 1 signed, 2 unsigned, 3 float).
template <int K> struct AbsK { template <class T> static T f(T x) { return x; } };
template <> struct AbsK<1> { template <class T> static T f(T x) { return x < T(0) ? wneg(x) : x; } };
template <> struct AbsK<3> { template <class T> static T f(T x) { return T(fabs(cf(x))); } };
template <int K> struct NegK { template <class T> static T f(T x) { return wneg(x); } };
template <> struct NegK<0> { template <class T> static T f(T x) { return x; } };
template <> struct NegK<3> { template <class T> static T f(T x) { return T(-cf(x)); } };
template <int K> struct SignK { template <class T> static T f(T x) { return T(x > T(0) ? 1 : 0); } };
template <> struct SignK<1> { template <class T> static T f(T x) { return T(x > T(0) ? 1 : (x < T(0) ? -1 : 0)); } };
template <> struct SignK<3> {
  template <class T> static T f(T x) {
    typedef typename Tr<T>::C C;
    C c = C(x);
    return c > C(0) ? T(C(1)) : (c < C(0) ? T(C(-1)) : (c == C(0) ? T(C(0)) : x));
  }
};
template <int K> struct SquareK { template <class T> static T f(T x) { return wmul(x, x); } };
template <> struct SquareK<3> { template <class T> static T f(T x) { return T(cf(x) * cf(x)); } };
template <int K> struct FloorK { template <class T> static T f(T x) { return x; } };
template <> struct FloorK<3> { template <class T> static T f(T x) { return T(floor(cf(x))); } };
template <int K> struct CeilK { template <class T> static T f(T x) { return x; } };
template <> struct CeilK<3> { template <class T> static T f(T x) { return T(ceil(cf(x))); } };
template <int K> struct RoundK { template <class T> static T f(T x) { return x; } };
template <> struct RoundK<3> { template <class T> static T f(T x) { return T(rint(cf(x))); } };
template <int K> struct TruncK { template <class T> static T f(T x) { return x; } };
template <> struct TruncK<3> { template <class T> static T f(T x) { return T(trunc(cf(x))); } };
template <int K> struct IsNanK { template <class T> static bool f(T x) { return false; } };
template <> struct IsNanK<3> { template <class T> static bool f(T x) { return isnan(cf(x)); } };
template <int K> struct IsInfK { template <class T> static bool f(T x) { return false; } };
template <> struct IsInfK<3> { template <class T> static bool f(T x) { return isinf(cf(x)); } };
template <int K> struct IsFiniteK { template <class T> static bool f(T x) { return true; } };
template <> struct IsFiniteK<3> { template <class T> static bool f(T x) { return isfinite(cf(x)); } };
template <int K> struct SignbitK { template <class T> static bool f(T x) { return false; } };
template <> struct SignbitK<1> { template <class T> static bool f(T x) { return x < T(0); } };
template <> struct SignbitK<3> { template <class T> static bool f(T x) { return signbit(cf(x)); } };
template <int K> struct InvertK { template <class T> static T f(T x) { return T(~x); } };
template <> struct InvertK<0> { template <class T> static T f(T x) { return !x; } };

#define INGOT_KIND_OP(NAME, IMPL) \
  struct op_##NAME { template <class T> static T f(T x) { return IMPL<Tr<T>::kind>::f(x); } };
#define INGOT_PRED_OP(NAME, IMPL) \
  struct op_##NAME { template <class T> static bool f(T x) { return IMPL<Tr<T>::kind>::f(x); } };
#define INGOT_FLOAT_OP(NAME, EXPR) \
  struct op_##NAME { template <class T> static T f(T x) { return T(EXPR(cf(x))); } };

INGOT_KIND_OP(abs, AbsK)
INGOT_KIND_OP(negative, NegK)
INGOT_KIND_OP(sign, SignK)
INGOT_KIND_OP(square, SquareK)
INGOT_KIND_OP(floor, FloorK)
INGOT_KIND_OP(ceil, CeilK)
INGOT_KIND_OP(round, RoundK)
INGOT_KIND_OP(trunc, TruncK)
INGOT_KIND_OP(bitwise_invert, InvertK)
INGOT_PRED_OP(isnan, IsNanK)
INGOT_PRED_OP(isinf, IsInfK)
INGOT_PRED_OP(isfinite, IsFiniteK)
INGOT_PRED_OP(signbit, SignbitK)
struct op_positive { template <class T> static T f(T x) { return x; } };
struct op_logical_not { template <class T> static bool f(T x) { return !cvt<bool>(x); } };
INGOT_FLOAT_OP(sqrt, sqrt)
INGOT_FLOAT_OP(exp, exp)
INGOT_FLOAT_OP(expm1, x_expm1)
INGOT_FLOAT_OP(log, log)
INGOT_FLOAT_OP(log1p, x_log1p)
INGOT_FLOAT_OP(log2, log2)
INGOT_FLOAT_OP(log10, log10)
INGOT_FLOAT_OP(sin, sin)
INGOT_FLOAT_OP(cos, cos)
INGOT_FLOAT_OP(tan, tan)
INGOT_FLOAT_OP(asin, asin)
INGOT_FLOAT_OP(acos, acos)
INGOT_FLOAT_OP(atan, atan)
INGOT_FLOAT_OP(sinh, sinh)
INGOT_FLOAT_OP(cosh, cosh)
INGOT_FLOAT_OP(tanh, tanh)
INGOT_FLOAT_OP(asinh, asinh)
INGOT_FLOAT_OP(acosh, acosh)
INGOT_FLOAT_OP(atanh, atanh)
struct op_reciprocal {
  template <class T> static T f(T x) { typedef typename Tr<T>::C C; return T(C(1) / cf(x)); }
};

// Contiguous input and output; 16-byte packs when aligned, in chunks (see INGOT_CHUNKS).
template <class Op, class A, class R>
INGOT_EW_KERNEL void unary_contig(device const A* x [[buffer(0)]], device R* y [[buffer(1)]],
                                  constant EGeom& g [[buffer(2)]], INGOT_CHUNK_IDS) {
  const int N = PackN<A, R>::n;
  ulong nv = g.vec ? g.n / N : 0;
  device const Pack<A, N>* xv = (device const Pack<A, N>*)x;
  device Pack<R, N>* yv = (device Pack<R, N>*)y;
  INGOT_CHUNKS(nv) {
    if (j1 < nv) {
      Pack<A, N> a0 = xv[j0], a1 = xv[j1];
      Pack<R, N> r0, r1;
      for (int k = 0; k < N; ++k) {
        r0.v[k] = Op::f(a0.v[k]);
        r1.v[k] = Op::f(a1.v[k]);
      }
      yv[j0] = r0;
      yv[j1] = r1;
    } else if (j0 < nv) {
      Pack<A, N> a = xv[j0];
      Pack<R, N> r;
      for (int k = 0; k < N; ++k) r.v[k] = Op::f(a.v[k]);
      yv[j0] = r;
    }
  }
  INGOT_TAIL(i, nv * N, g.n) y[i] = Op::f(x[i]);
}

// Any input layout (operand 0), contiguous output.
template <class Op, class A, class R>
kernel void unary_strided(device const A* x [[buffer(0)]], device R* y [[buffer(1)]],
                          constant Geom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                          uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[1];
    geom_offsets<1>(g, i, o);
    y[i] = Op::f(x[o[0]]);
  }
}
