// Elementwise functions of two arrays (already broadcast and converted to the computation type T
// by the host). A functor `bop_<name>` maps (T, T) to the result type R.

template <int K> struct AddK { template <class T> static T f(T a, T b) { return wadd(a, b); } };
template <> struct AddK<0> { template <class T> static T f(T a, T b) { return a || b; } };
template <> struct AddK<3> { template <class T> static T f(T a, T b) { return T(cf(a) + cf(b)); } };
template <int K> struct SubK { template <class T> static T f(T a, T b) { return wsub(a, b); } };
template <> struct SubK<0> { template <class T> static T f(T a, T b) { return a != b; } };
template <> struct SubK<3> { template <class T> static T f(T a, T b) { return T(cf(a) - cf(b)); } };
template <int K> struct MulK { template <class T> static T f(T a, T b) { return wmul(a, b); } };
template <> struct MulK<0> { template <class T> static T f(T a, T b) { return a && b; } };
template <> struct MulK<3> { template <class T> static T f(T a, T b) { return T(cf(a) * cf(b)); } };
struct bop_divide { template <class T> static T f(T a, T b) { return T(cf(a) / cf(b)); } };

// NumPy's float divmod: (a // b, a % b) with Python's signs.
template <class F> inline void fdivmod(F a, F b, thread F& fd, thread F& m) {
  m = fmod(a, b);
  if (b == F(0)) {
    fd = a / b;
    return;
  }
  F div = (a - m) / b;
  if (m != F(0)) {
    if ((b < F(0)) != (m < F(0))) {
      m = m + b;
      div = div - F(1);
    }
  } else {
    m = copysign(F(0), b);
  }
  if (div != F(0)) {
    fd = floor(div);
    if (div - fd > F(0.5)) fd = fd + F(1);
  } else {
    fd = copysign(F(0), a / b);
  }
}

template <int K> struct FloorDivK;
template <> struct FloorDivK<0> { template <class T> static T f(T a, T b) { return a && b; } };
template <> struct FloorDivK<1> {
  template <class T> static T f(T a, T b) {
    if (b == T(0)) return T(0);
    if (b == T(-1)) return wneg(a);
    T q = T(a / b);
    return (T(a % b) != T(0) && ((a < T(0)) != (b < T(0)))) ? T(q - T(1)) : q;
  }
};
template <> struct FloorDivK<2> { template <class T> static T f(T a, T b) { return b == T(0) ? T(0) : T(a / b); } };
template <> struct FloorDivK<3> {
  template <class T> static T f(T a, T b) {
    typedef typename Tr<T>::C C;
    C fd, m;
    fdivmod(C(a), C(b), fd, m);
    return T(fd);
  }
};
template <int K> struct RemK;
template <> struct RemK<0> { template <class T> static T f(T a, T b) { return false; } };
template <> struct RemK<1> {
  template <class T> static T f(T a, T b) {
    if (b == T(0) || b == T(-1)) return T(0);
    T r = T(a % b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? T(r + b) : r;
  }
};
template <> struct RemK<2> { template <class T> static T f(T a, T b) { return b == T(0) ? T(0) : T(a % b); } };
template <> struct RemK<3> {
  template <class T> static T f(T a, T b) {
    typedef typename Tr<T>::C C;
    C fd, m;
    fdivmod(C(a), C(b), fd, m);
    return T(m);
  }
};
template <int K> struct PowK {
  template <class T> static T f(T a, T b) {
    if (b < T(0)) return T(0);
    ulong acc = 1, base = ulong(a), e = ulong(b);
    while (e > 0ul) {
      if (e & 1ul) acc *= base;
      base *= base;
      e >>= 1;
    }
    return T(acc);
  }
};
template <> struct PowK<2> {
  template <class T> static T f(T a, T b) {
    ulong acc = 1, base = ulong(a), e = ulong(b);
    while (e > 0ul) {
      if (e & 1ul) acc *= base;
      base *= base;
      e >>= 1;
    }
    return T(acc);
  }
};
template <> struct PowK<0> { template <class T> static T f(T a, T b) { return a || !b; } };
template <> struct PowK<3> { template <class T> static T f(T a, T b) { return T(pow(cf(a), cf(b))); } };
template <int K> struct MaxK { template <class T> static T f(T a, T b) { return a >= b ? a : b; } };
template <> struct MaxK<3> { template <class T> static T f(T a, T b) { return (cf(a) >= cf(b) || isnan(cf(a))) ? a : b; } };
template <int K> struct MinK { template <class T> static T f(T a, T b) { return a <= b ? a : b; } };
template <> struct MinK<3> { template <class T> static T f(T a, T b) { return (cf(a) <= cf(b) || isnan(cf(a))) ? a : b; } };
struct bop_atan2 { template <class T> static T f(T a, T b) { return T(atan2(cf(a), cf(b))); } };
struct bop_copysign { template <class T> static T f(T a, T b) { return T(copysign(cf(a), cf(b))); } };
// hypot scaled by the larger magnitude (no overflow or underflow of the squares); an infinity
// wins over NaN, as C's hypot.
template <class C> inline C x_hypot(C a, C b) {
  a = fabs(a);
  b = fabs(b);
  if (isinf(a) || isinf(b)) return C(INFINITY);
  if (isnan(a) || isnan(b)) return a + b;
  C m = max(a, b), n = min(a, b);
  if (m == C(0)) return m;
  C r = n / m;
  return m * sqrt(C(1) + r * r);
}
struct bop_hypot { template <class T> static T f(T a, T b) { return T(x_hypot(cf(a), cf(b))); } };
// log(exp(a) + exp(b)) = max + log1p(exp(-|a - b|)); equal arguments (infinities) give a + ln 2
// (log(2) in C: a literal would be a float in MSL).
template <class C> inline C x_logaddexp(C a, C b) {
  if (a == b) return a + log(C(2));
  C d = a - b;
  if (d > C(0)) return a + x_log1p(exp(-d));
  if (d <= C(0)) return b + x_log1p(exp(d));
  return d;
}
struct bop_logaddexp { template <class T> static T f(T a, T b) { return T(x_logaddexp(cf(a), cf(b))); } };
// nextafter on the bits of T itself (half and bfloat step in their own precision).
template <class T> struct FBits;
// Equal arguments give y for every type (the array API standard: -0 toward +0 is +0). The choice
// is made on the bits: on CUDA (H200, 2026-11-27) `a == b ? x : y` on half values could return
// either zero, a select of two values a compiler may treat as equal when it ignores their sign.
template <> struct FBits<half> { typedef ushort U; enum { sign_shift = 15 }; };
template <> struct FBits<bfloat> { typedef ushort U; enum { sign_shift = 15 }; };
template <> struct FBits<float> { typedef uint U; enum { sign_shift = 31 }; };
#ifdef INGOT_HAS_F64
template <> struct FBits<double> { typedef ulong U; enum { sign_shift = 63 }; };
#endif
struct bop_nextafter {
  template <class T> static T f(T x, T y) {
    typedef typename FBits<T>::U U;
    typedef typename Tr<T>::C C;
    C a = cf(x), b = cf(y);
    if (isnan(a)) return x;
    if (isnan(b)) return y;
    if (a == b) return as_type<T>(as_type<U>(y));
    U sign = U(U(1) << FBits<T>::sign_shift);
    if (a == C(0)) return as_type<T>(U((as_type<U>(y) & sign) | U(1)));
    U u = as_type<U>(x);
    return as_type<T>(((a < b) == (a > C(0))) ? U(u + U(1)) : U(u - U(1)));
  }
};
struct bop_bitwise_and { template <class T> static T f(T a, T b) { return T(a & b); } };
struct bop_bitwise_or { template <class T> static T f(T a, T b) { return T(a | b); } };
struct bop_bitwise_xor { template <class T> static T f(T a, T b) { return T(a ^ b); } };
struct bop_bitwise_left_shift {
  template <class T> static T f(T a, T b) {
    typedef typename Tr<T>::W W;
    return ulong(b) < ulong(Tr<T>::bits) ? T(W(a) << uint(b)) : T(0);
  }
};
template <int K> struct ShrK {
  template <class T> static T f(T a, T b) { return ulong(b) < ulong(Tr<T>::bits) ? T(a >> uint(b)) : T(0); }
};
template <> struct ShrK<1> {
  template <class T> static T f(T a, T b) {
    return ulong(b) < ulong(Tr<T>::bits) ? T(a >> uint(b)) : (a < T(0) ? T(-1) : T(0));
  }
};
struct bop_logical_and { template <class T> static bool f(T a, T b) { return cvt<bool>(a) && cvt<bool>(b); } };
struct bop_logical_or { template <class T> static bool f(T a, T b) { return cvt<bool>(a) || cvt<bool>(b); } };
struct bop_logical_xor { template <class T> static bool f(T a, T b) { return cvt<bool>(a) != cvt<bool>(b); } };
struct bop_equal { template <class T> static bool f(T a, T b) { return cf(a) == cf(b); } };
struct bop_not_equal { template <class T> static bool f(T a, T b) { return cf(a) != cf(b); } };
struct bop_less { template <class T> static bool f(T a, T b) { return cf(a) < cf(b); } };
struct bop_less_equal { template <class T> static bool f(T a, T b) { return cf(a) <= cf(b); } };
struct bop_greater { template <class T> static bool f(T a, T b) { return cf(a) > cf(b); } };
struct bop_greater_equal { template <class T> static bool f(T a, T b) { return cf(a) >= cf(b); } };

#define INGOT_KIND_BOP(NAME, IMPL) \
  struct bop_##NAME { template <class T> static T f(T a, T b) { return IMPL<Tr<T>::kind>::f(a, b); } };
INGOT_KIND_BOP(add, AddK)
INGOT_KIND_BOP(subtract, SubK)
INGOT_KIND_BOP(multiply, MulK)
INGOT_KIND_BOP(floor_divide, FloorDivK)
INGOT_KIND_BOP(remainder, RemK)
INGOT_KIND_BOP(pow, PowK)
INGOT_KIND_BOP(maximum, MaxK)
INGOT_KIND_BOP(minimum, MinK)
INGOT_KIND_BOP(bitwise_right_shift, ShrK)

// Contiguous operands. g.ndim is the broadcast mode: 0 both arrays, 1 y is one element,
// 2 x is one element. 16-byte packs when aligned (g.vec), in chunks (see INGOT_CHUNKS).
template <class Op, class T, class R>
INGOT_EW_KERNEL void binary_contig(device const T* x [[buffer(0)]], device const T* y [[buffer(1)]],
                                   device R* z [[buffer(2)]], constant EGeom& g [[buffer(3)]],
                                   INGOT_CHUNK_IDS) {
  const int N = PackN<T, R>::n;
  ulong nv = g.vec ? g.n / N : 0;
  uint mode = g.ndim;
  device Pack<R, N>* zv = (device Pack<R, N>*)z;
  if (mode == 0u) {
    device const Pack<T, N>* xv = (device const Pack<T, N>*)x;
    device const Pack<T, N>* yv = (device const Pack<T, N>*)y;
    INGOT_CHUNKS(nv) {
      if (j1 < nv) {
        Pack<T, N> a0 = xv[j0], a1 = xv[j1], b0 = yv[j0], b1 = yv[j1];
        Pack<R, N> r0, r1;
        for (int k = 0; k < N; ++k) {
          r0.v[k] = Op::f(a0.v[k], b0.v[k]);
          r1.v[k] = Op::f(a1.v[k], b1.v[k]);
        }
        zv[j0] = r0;
        zv[j1] = r1;
      } else if (j0 < nv) {
        Pack<T, N> a = xv[j0], b = yv[j0];
        Pack<R, N> r;
        for (int k = 0; k < N; ++k) r.v[k] = Op::f(a.v[k], b.v[k]);
        zv[j0] = r;
      }
    }
    INGOT_TAIL(i, nv * N, g.n) z[i] = Op::f(x[i], y[i]);
  } else {
    bool left = mode == 2u;
    T s = left ? x[0] : y[0];
    device const T* v = left ? y : x;
    device const Pack<T, N>* vv = (device const Pack<T, N>*)v;
    INGOT_CHUNKS(nv) {
      if (j1 < nv) {
        Pack<T, N> a0 = vv[j0], a1 = vv[j1];
        Pack<R, N> r0, r1;
        if (left) {
          for (int k = 0; k < N; ++k) {
            r0.v[k] = Op::f(s, a0.v[k]);
            r1.v[k] = Op::f(s, a1.v[k]);
          }
        } else {
          for (int k = 0; k < N; ++k) {
            r0.v[k] = Op::f(a0.v[k], s);
            r1.v[k] = Op::f(a1.v[k], s);
          }
        }
        zv[j0] = r0;
        zv[j1] = r1;
      } else if (j0 < nv) {
        Pack<T, N> a = vv[j0];
        Pack<R, N> r;
        for (int k = 0; k < N; ++k) r.v[k] = left ? Op::f(s, a.v[k]) : Op::f(a.v[k], s);
        zv[j0] = r;
      }
    }
    INGOT_TAIL(i, nv * N, g.n) z[i] = left ? Op::f(s, v[i]) : Op::f(v[i], s);
  }
}

// Any layouts of x (operand 0) and y (operand 1), contiguous output.
template <class Op, class T, class R>
kernel void binary_strided(device const T* x [[buffer(0)]], device const T* y [[buffer(1)]],
                           device R* z [[buffer(2)]], constant Geom& g [[buffer(3)]],
                           uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < g.n; i += nt) {
    long o[2];
    geom_offsets<2>(g, i, o);
    z[i] = Op::f(x[o[0]], y[o[1]]);
  }
}
