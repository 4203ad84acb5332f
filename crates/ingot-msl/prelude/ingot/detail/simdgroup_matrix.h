// ingot prelude: simdgroup_matrix (8x8), with Apple's lane layout: lane l owns row
// fm = 4*bit4(l) + bits1..2(l) and columns fn, fn+1 with fn = 4*bit3(l) + 2*bit0(l) (the layout
// MLX's kernels rely on through thread_elements()). The whole SIMD-group (32 lanes) must take part.
// multiply(-accumulate) gathers the operands with shuffles (CUDA) or one exchange (CPU).
#pragma once

namespace metal {

template <class T, int Cols, int Rows> struct simdgroup_matrix;

namespace detail {
INGOT_FN unsigned int sgm_lane() {
#if defined(INGOT_TARGET_CUDA)
  return lane_id();
#else
  return ingot::cpu::simd_lane();
#endif
}
INGOT_FN unsigned int sgm_row(unsigned int lane) { return ((lane >> 4) & 1u) * 4u + ((lane >> 1) & 3u); }
INGOT_FN unsigned int sgm_col(unsigned int lane) { return ((lane >> 3) & 1u) * 4u + (lane & 1u) * 2u; }
// The lane that owns element (r, c).
INGOT_FN unsigned int sgm_owner(unsigned int r, unsigned int c) {
  return ((c >> 1) & 1u) | ((r & 3u) << 1) | (((c >> 2) & 1u) << 3) | (((r >> 2) & 1u) << 4);
}
}  // namespace detail

template <class T, int Cols, int Rows> struct simdgroup_matrix {
  static_assert(Cols == 8 && Rows == 8, "ingot supports 8x8 simdgroup matrices");
  vec<T, 2> _e;
  simdgroup_matrix() = default;
  // A diagonal matrix with `diag` on the diagonal (MSL: simdgroup_matrix<T,8,8>(T)).
  INGOT_FN explicit simdgroup_matrix(T diag) {
    unsigned int l = detail::sgm_lane(), r = detail::sgm_row(l), c = detail::sgm_col(l);
    _e = vec<T, 2>(r == c ? diag : T(0), r == c + 1 ? diag : T(0));
  }
  INGOT_FN vec<T, 2>& thread_elements() { return _e; }
  INGOT_FN const vec<T, 2>& thread_elements() const { return _e; }
};
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<bfloat, 8, 8> simdgroup_bfloat8x8;

template <class T, int C, int R = C>
INGOT_FN simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T value) {
  simdgroup_matrix<T, C, R> m;
  m._e = vec<T, 2>(value, value);
  return m;
}

template <class T, class U, int C, int R>
INGOT_FN void simdgroup_load(simdgroup_matrix<T, C, R>& d, const U* src, ulong elements_per_row = 8,
                             vec<ulong, 2> origin = vec<ulong, 2>(0), bool transpose = false) {
  unsigned int l = detail::sgm_lane(), r = detail::sgm_row(l), c = detail::sgm_col(l);
  for (unsigned int k = 0; k < 2; ++k) {
    ulong rr = transpose ? c + k : r, cc = transpose ? r : c + k;
    d._e._v[k] = T(src[(origin.y + rr) * elements_per_row + origin.x + cc]);
  }
}

template <class T, class U, int C, int R>
INGOT_FN void simdgroup_store(const simdgroup_matrix<T, C, R>& a, U* dst, ulong elements_per_row = 8,
                              vec<ulong, 2> origin = vec<ulong, 2>(0), bool transpose = false) {
  unsigned int l = detail::sgm_lane(), r = detail::sgm_row(l), c = detail::sgm_col(l);
  for (unsigned int k = 0; k < 2; ++k) {
    ulong rr = transpose ? c + k : r, cc = transpose ? r : c + k;
    dst[(origin.y + rr) * elements_per_row + origin.x + cc] = U(a._e._v[k]);
  }
}

// d = a * b + c (accumulated in float for half/bfloat, rounded once).
template <class T, class TA, class TB, class TC>
INGOT_SITE_FN void simdgroup_multiply_accumulate(simdgroup_matrix<T, 8, 8>& d, const simdgroup_matrix<TA, 8, 8>& a,
                                                 const simdgroup_matrix<TB, 8, 8>& b,
                                                 const simdgroup_matrix<TC, 8, 8>& c) {
  typedef typename wide<T>::type W;
  unsigned int l = detail::sgm_lane(), r = detail::sgm_row(l), col = detail::sgm_col(l);
  W acc0 = W(c._e._v[0]), acc1 = W(c._e._v[1]);
#if defined(INGOT_TARGET_CUDA)
  unsigned int m = __activemask();
  for (unsigned int k = 0; k < 8; ++k) {
    vec<TA, 2> av = detail::shfl_idx(m, a._e, (int)detail::sgm_owner(r, k), 32);
    vec<TB, 2> bv = detail::shfl_idx(m, b._e, (int)detail::sgm_owner(k, col), 32);
    W aval = W(av._v[k & 1u]);
    acc0 += aval * W(bv._v[0]);
    acc1 += aval * W(bv._v[1]);
  }
#else
  ingot::cpu::lanes<vec<TA, 2>> la = ingot::cpu::simd_exchange(a._e);
  ingot::cpu::lanes<vec<TB, 2>> lb = ingot::cpu::simd_exchange(b._e);
  for (unsigned int k = 0; k < 8; ++k) {
    W aval = W(la.v[detail::sgm_owner(r, k)]._v[k & 1u]);
    const vec<TB, 2>& bv = lb.v[detail::sgm_owner(k, col)];
    acc0 += aval * W(bv._v[0]);
    acc1 += aval * W(bv._v[1]);
  }
#endif
  d._e = vec<T, 2>(T(acc0), T(acc1));
}

template <class T, class TA, class TB>
INGOT_SITE_FN void simdgroup_multiply(simdgroup_matrix<T, 8, 8>& d, const simdgroup_matrix<TA, 8, 8>& a,
                                      const simdgroup_matrix<TB, 8, 8>& b) {
  simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<T, 8, 8>(T(0)));
}

// `G * g` on simdgroup matrices (MLX's Winograd transform): the matrix product.
template <class T>
INGOT_SITE_FN simdgroup_matrix<T, 8, 8> operator*(const simdgroup_matrix<T, 8, 8>& a,
                                                  const simdgroup_matrix<T, 8, 8>& b) {
  simdgroup_matrix<T, 8, 8> d;
  simdgroup_multiply(d, a, b);
  return d;
}

}  // namespace metal

using metal::simdgroup_bfloat8x8;
using metal::simdgroup_float8x8;
using metal::simdgroup_half8x8;
