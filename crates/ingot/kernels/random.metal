// ingot.random on GPUs: Philox4x32-10 and its samplers, the same computation as
// ops/cpu/philox.rs operation for operation (the stream is defined in ops/random.rs). Every
// float operation is one IEEE operation (the built-in kernels compile without FMA contraction),
// integer work is exact, and ln/sin/cos are written out here rather than taken from the
// platform's math library, so that a seed gives the same bits on every backend.
//
// One thread per Philox block (grid-stride): block j of a draw is Philox(counter = (pos + j,
// attempt, 0), key) and fills values j*L .. j*L+L-1, L (lanes) being 4 for 32-bit values and 2
// for 64-bit ones.

struct RGeom {
  ulong n;      // values to write
  ulong pos;    // the draw's first block
  ulong low;    // integers: the lowest value (two's complement); categorical: unused
  ulong range;  // integers: the number of values (0 stands for 2^64); categorical: categories
  uint k0, k1;  // the key
};

struct W4 { uint w[4]; };

inline W4 philox4x32_10(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
  for (int r = 0; r < 10; ++r) {
    if (r > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    ulong p0 = ulong(0xD2511F53u) * ulong(c0);
    ulong p1 = ulong(0xCD9E8D57u) * ulong(c2);
    uint n0 = uint(p1 >> 32) ^ c1 ^ k0;
    uint n1 = uint(p1);
    uint n2 = uint(p0 >> 32) ^ c3 ^ k1;
    uint n3 = uint(p0);
    c0 = n0; c1 = n1; c2 = n2; c3 = n3;
  }
  W4 out;
  out.w[0] = c0; out.w[1] = c1; out.w[2] = c2; out.w[3] = c3;
  return out;
}

inline W4 rblock(constant RGeom& g, ulong j, uint attempt) {
  ulong b = g.pos + j;
  return philox4x32_10(uint(b), uint(b >> 32), attempt, 0u, g.k0, g.k1);
}

inline ulong rng_wide(uint lo, uint hi) { return ulong(lo) | (ulong(hi) << 32); }

inline float unit_f32(uint w) { return float(w >> 8) * (1.0f / 16777216.0f); }
inline float unit_f16(uint w) { return float(w >> 21) * (1.0f / 2048.0f); }
inline float unit_bf16(uint w) { return float(w >> 24) * (1.0f / 256.0f); }

// ---- ln of a value in (0, 1], sin/cos of 2 pi u (see ops/cpu/philox.rs for the method) -------
inline float ln_unit_f32(float x) {
  uint bits = as_type<uint>(x);
  int e = int(bits >> 23) - 127;
  float m = as_type<float>((bits & 0x007FFFFFu) | 0x3F800000u);
  if (m > 1.4142135f) {
    m = m * 0.5f;
    e += 1;
  }
  float f = m - 1.0f;
  float s = f / (2.0f + f);
  float z = s * s;
  float p = 0.11111111f;
  p = 0.14285715f + z * p;
  p = 0.2f + z * p;
  p = 0.33333334f + z * p;
  float t = 2.0f * s;
  float lnm = t + t * (z * p);
  float ef = float(e);
  return ef * 0.69311523f + (ef * 3.1946183e-05f + lnm);
}

// (sin, cos) of theta + q pi / 2 from those of theta.
template <class F> inline void rng_rotate(uint q, F s, F c, thread F& so, thread F& co) {
  switch (q & 3u) {
    case 0u: so = s; co = c; break;
    case 1u: so = c; co = -s; break;
    case 2u: so = -s; co = -c; break;
    default: so = -c; co = s; break;
  }
}

// (sin, cos) of 2 pi k / 2^24, k < 2^24.
inline void sincos_2pi_f32(uint k, thread float& so, thread float& co) {
  uint q = (k + (1u << 21)) >> 22;
  int r = int(k) - int(q << 22);
  float x = float(r) * 3.7450704e-07f;
  float z = x * x;
  float ps = 2.7557319e-06f;
  ps = -0.0001984127f + z * ps;
  ps = 0.008333334f + z * ps;
  ps = -0.16666667f + z * ps;
  float pc = -2.755732e-07f;
  pc = 2.4801588e-05f + z * pc;
  pc = -0.0013888889f + z * pc;
  pc = 0.041666668f + z * pc;
  pc = -0.5f + z * pc;
  float s = x + x * (z * ps);
  float c = 1.0f + z * pc;
  rng_rotate<float>(q, s, c, so, co);
}

inline void normal_pair_f32(uint a, uint b, thread float& z0, thread float& z1) {
  float u1 = float((1u << 24) - (a >> 8)) * (1.0f / 16777216.0f);
  float rad = sqrt(-2.0f * ln_unit_f32(u1));
  float s, c;
  sincos_2pi_f32(b >> 8, s, c);
  z0 = rad * c;
  z1 = rad * s;
}

#ifdef INGOT_HAS_F64
// MSL floating literals are float: float64 constants that float cannot hold are written as bits.
#define F64(bits) as_type<double>(bits)

inline double unit_f64(ulong x) { return double(x >> 11) * (1.0 / 9007199254740992.0); }

inline double ln_unit_f64(double x) {
  ulong bits = as_type<ulong>(x);
  int e = int(bits >> 52) - 1023;
  double m = as_type<double>((bits & 0x000FFFFFFFFFFFFFul) | 0x3FF0000000000000ul);
  if (m > F64(0x3FF6A09E667F3BCDul)) {
    m = m * 0.5;
    e += 1;
  }
  double f = m - 1.0;
  double s = f / (2.0 + f);
  double z = s * s;
  double p = F64(0x3FA8618618618618ul);
  p = F64(0x3FAAF286BCA1AF28ul) + z * p;
  p = F64(0x3FAE1E1E1E1E1E1Eul) + z * p;
  p = F64(0x3FB1111111111111ul) + z * p;
  p = F64(0x3FB3B13B13B13B14ul) + z * p;
  p = F64(0x3FB745D1745D1746ul) + z * p;
  p = F64(0x3FBC71C71C71C71Cul) + z * p;
  p = F64(0x3FC2492492492492ul) + z * p;
  p = F64(0x3FC999999999999Aul) + z * p;
  p = F64(0x3FD5555555555555ul) + z * p;
  double t = 2.0 * s;
  double lnm = t + t * (z * p);
  double ef = double(e);
  return ef * F64(0x3FE62E42FEE00000ul) + (ef * F64(0x3DEA39EF35793C76ul) + lnm);
}

// (sin, cos) of 2 pi k / 2^53, k < 2^53.
inline void sincos_2pi_f64(ulong k, thread double& so, thread double& co) {
  ulong q = (k + (1ul << 50)) >> 51;
  long r = long(k) - long(q << 51);
  double x = double(r) * F64(0x3CC921FB54442D18ul);
  double z = x * x;
  double ps = F64(0xBC62F49B46814157ul);
  ps = F64(0x3CE952C77030AD4Aul) + z * ps;
  ps = F64(0xBD6AE7F3E733B81Ful) + z * ps;
  ps = F64(0x3DE6124613A86D09ul) + z * ps;
  ps = F64(0xBE5AE64567F544E4ul) + z * ps;
  ps = F64(0x3EC71DE3A556C734ul) + z * ps;
  ps = F64(0xBF2A01A01A01A01Aul) + z * ps;
  ps = F64(0x3F81111111111111ul) + z * ps;
  ps = F64(0xBFC5555555555555ul) + z * ps;
  double pc = F64(0x3C1E542BA4020225ul);
  pc = F64(0xBCA6827863B97D97ul) + z * pc;
  pc = F64(0x3D2AE7F3E733B81Ful) + z * pc;
  pc = F64(0xBDA93974A8C07C9Dul) + z * pc;
  pc = F64(0x3E21EED8EFF8D898ul) + z * pc;
  pc = F64(0xBE927E4FB7789F5Cul) + z * pc;
  pc = F64(0x3EFA01A01A01A01Aul) + z * pc;
  pc = F64(0xBF56C16C16C16C17ul) + z * pc;
  pc = F64(0x3FA5555555555555ul) + z * pc;
  pc = -0.5 + z * pc;
  double s = x + x * (z * ps);
  double c = 1.0 + z * pc;
  rng_rotate<double>(uint(q), s, c, so, co);
}

inline void normal_pair_f64(ulong a, ulong b, thread double& z0, thread double& z1) {
  double u1 = double((1ul << 53) - (a >> 11)) * (1.0 / 9007199254740992.0);
  double rad = sqrt(-2.0 * ln_unit_f64(u1));
  double s, c;
  sincos_2pi_f64(b >> 11, s, c);
  z0 = rad * c;
  z1 = rad * s;
}
#endif

// ---- samplers by output type ----------------------------------------------------------------
// Sample<T>: lanes per block, uniform and normal values of block `w`, lane l.
template <class T> struct Sample;
template <> struct Sample<float> {
  enum { lanes = 4 };
  static float uniform(W4 w, int l) { return unit_f32(w.w[l]); }
  static void normal(W4 w, thread float* z) {
    normal_pair_f32(w.w[0], w.w[1], z[0], z[1]);
    normal_pair_f32(w.w[2], w.w[3], z[2], z[3]);
  }
};
template <> struct Sample<half> {
  enum { lanes = 4 };
  static half uniform(W4 w, int l) { return half(unit_f16(w.w[l])); }
  static void normal(W4 w, thread half* z) {
    float f[4];
    Sample<float>::normal(w, f);
    for (int l = 0; l < 4; ++l) z[l] = half(f[l]);
  }
};
template <> struct Sample<bfloat> {
  enum { lanes = 4 };
  static bfloat uniform(W4 w, int l) { return bfloat(unit_bf16(w.w[l])); }
  static void normal(W4 w, thread bfloat* z) {
    float f[4];
    Sample<float>::normal(w, f);
    for (int l = 0; l < 4; ++l) z[l] = bfloat(f[l]);
  }
};
#ifdef INGOT_HAS_F64
template <> struct Sample<double> {
  enum { lanes = 2 };
  static double uniform(W4 w, int l) { return unit_f64(rng_wide(w.w[2 * l], w.w[2 * l + 1])); }
  static void normal(W4 w, thread double* z) {
    normal_pair_f64(rng_wide(w.w[0], w.w[1]), rng_wide(w.w[2], w.w[3]), z[0], z[1]);
  }
};
#endif

// Uniform values in [0, 1).
template <class T>
kernel void rand_uniform(device T* out [[buffer(0)]], constant RGeom& g [[buffer(1)]],
                         uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  const int L = Sample<T>::lanes;
  ulong blocks = (g.n + ulong(L) - 1ul) / ulong(L);
  for (ulong j = tid; j < blocks; j += nt) {
    W4 w = rblock(g, j, 0u);
    for (int l = 0; l < L; ++l) {
      ulong i = j * ulong(L) + ulong(l);
      if (i < g.n) out[i] = Sample<T>::uniform(w, l);
    }
  }
}

// Standard normal values (Box-Muller, both values of each pair).
template <class T>
kernel void rand_normal(device T* out [[buffer(0)]], constant RGeom& g [[buffer(1)]],
                        uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  const int L = Sample<T>::lanes;
  ulong blocks = (g.n + ulong(L) - 1ul) / ulong(L);
  for (ulong j = tid; j < blocks; j += nt) {
    T z[4];
    Sample<T>::normal(rblock(g, j, 0u), z);
    for (int l = 0; l < L; ++l) {
      ulong i = j * ulong(L) + ulong(l);
      if (i < g.n) out[i] = z[l];
    }
  }
}

// 64-bit high half of a * b from 32-bit pieces.
inline ulong mulhi64(ulong a, ulong b) {
  ulong a0 = a & 0xFFFFFFFFul, a1 = a >> 32, b0 = b & 0xFFFFFFFFul, b1 = b >> 32;
  ulong p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  ulong mid = (p00 >> 32) + (p01 & 0xFFFFFFFFul) + (p10 & 0xFFFFFFFFul);
  return p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

// Lemire's multiply-shift: false when the word is rejected.
inline bool lemire32(uint w, ulong range, thread ulong& v) {
  if (range == 0x100000000ul) {
    v = ulong(w);
    return true;
  }
  uint r = uint(range);
  ulong m = ulong(w) * ulong(r);
  uint low = uint(m);
  if (low < r) {
    uint threshold = (0u - r) % r;
    if (low < threshold) return false;
  }
  v = m >> 32;
  return true;
}

inline bool lemire64(ulong x, ulong range, thread ulong& v) {
  if (range == 0ul) {
    v = x;
    return true;
  }
  ulong low = x * range;
  if (low < range) {
    ulong threshold = (0ul - range) % range;
    if (low < threshold) return false;
  }
  v = mulhi64(x, range);
  return true;
}

// Integers low + [0, range): 4 lanes of 32-bit words for ranges up to 2^32, 2 lanes of 64-bit
// values above; a rejected lane retries with attempts 1, 2, ... of its block.
template <class T>
kernel void rand_integers(device T* out [[buffer(0)]], constant RGeom& g [[buffer(1)]],
                          uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  bool small = g.range != 0ul && g.range <= 0x100000000ul;
  int L = small ? 4 : 2;
  ulong blocks = (g.n + ulong(L) - 1ul) / ulong(L);
  for (ulong j = tid; j < blocks; j += nt) {
    W4 w = rblock(g, j, 0u);
    for (int l = 0; l < L; ++l) {
      ulong i = j * ulong(L) + ulong(l);
      if (i >= g.n) break;
      ulong v = 0ul;
      uint attempt = 0u;
      W4 x = w;
      while (true) {
        bool ok = small ? lemire32(x.w[l], g.range, v)
                        : lemire64(rng_wide(x.w[2 * l], x.w[2 * l + 1]), g.range, v);
        if (ok) break;
        attempt += 1u;
        x = rblock(g, j, attempt);
      }
      out[i] = cvt<T>(g.low + v);
    }
  }
}

// Raw 64-bit keys (2 lanes), the sort keys of permutations (K = ulong).
template <class K>
kernel void rand_keys(device K* out [[buffer(0)]], constant RGeom& g [[buffer(1)]],
                      uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  ulong blocks = (g.n + 1ul) / 2ul;
  for (ulong j = tid; j < blocks; j += nt) {
    W4 w = rblock(g, j, 0u);
    for (int l = 0; l < 2; ++l) {
      ulong i = j * 2ul + ulong(l);
      if (i < g.n) out[i] = rng_wide(w.w[2 * l], w.w[2 * l + 1]);
    }
  }
}

// Exponential keys E / p[i] (E = -ln u1, u1 in (0, 1]) of weighted sampling without
// replacement: the `size` smallest keys are a weighted sample (Efraimidis-Spirakis). p <= 0
// gives +inf. Lanes and bits as the uniform sampler of F.
template <class F> struct ExpKey;
template <> struct ExpKey<float> {
  enum { lanes = 4 };
  static float e(W4 w, int l) {
    float u1 = float((1u << 24) - (w.w[l] >> 8)) * (1.0f / 16777216.0f);
    return 0.0f - ln_unit_f32(u1);
  }
};
#ifdef INGOT_HAS_F64
template <> struct ExpKey<double> {
  enum { lanes = 2 };
  static double e(W4 w, int l) {
    ulong a = rng_wide(w.w[2 * l], w.w[2 * l + 1]);
    double u1 = double((1ul << 53) - (a >> 11)) * (1.0 / 9007199254740992.0);
    return 0.0 - ln_unit_f64(u1);
  }
};
#endif

template <class F>
kernel void rand_exp_keys(device const F* p [[buffer(0)]], device F* out [[buffer(1)]],
                          constant RGeom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                          uint nt [[threads_per_grid]]) {
  const int L = ExpKey<F>::lanes;
  ulong blocks = (g.n + ulong(L) - 1ul) / ulong(L);
  for (ulong j = tid; j < blocks; j += nt) {
    W4 w = rblock(g, j, 0u);
    for (int l = 0; l < L; ++l) {
      ulong i = j * ulong(L) + ulong(l);
      if (i < g.n) {
        F pi = p[i];
        out[i] = pi > F(0) ? ExpKey<F>::e(w, l) / pi : F(INFINITY);
      }
    }
  }
}

// Categorical samples: index of the first cdf entry above a uniform value (the cdf ends in
// exactly 1), g.range categories.
template <class F>
kernel void rand_categorical(device const F* cdf [[buffer(0)]], device long* out [[buffer(1)]],
                             constant RGeom& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                             uint nt [[threads_per_grid]]) {
  const int L = Sample<F>::lanes;
  ulong blocks = (g.n + ulong(L) - 1ul) / ulong(L);
  for (ulong j = tid; j < blocks; j += nt) {
    W4 w = rblock(g, j, 0u);
    for (int l = 0; l < L; ++l) {
      ulong i = j * ulong(L) + ulong(l);
      if (i >= g.n) break;
      F u = Sample<F>::uniform(w, l);
      ulong lo = 0ul, hi = g.range;
      while (lo < hi) {
        ulong mid = (lo + hi) / 2ul;
        if (cdf[mid] > u) hi = mid; else lo = mid + 1ul;
      }
      out[i] = long(min(lo, g.range - 1ul));
    }
  }
}

// ---- sorting (key, index) pairs and gathering rows ----------------------------------------------
// One step (k, j) of a bitonic sort of `g.x` (a power of two) pairs, ascending by key then
// index (K = ulong).
template <class K>
kernel void bitonic_step(device K* keys [[buffer(0)]], device long* idx [[buffer(1)]],
                         constant ulong4& g [[buffer(2)]], uint tid [[thread_position_in_grid]],
                         uint nt [[threads_per_grid]]) {
  ulong n = g.x, k = g.y, j = g.z;
  for (ulong i = tid; i < n; i += nt) {
    ulong l = i ^ j;
    if (l <= i) continue;
    K ka = keys[i], kb = keys[l];
    long ia = idx[i], ib = idx[l];
    bool greater = ka > kb || (ka == kb && ia > ib);
    bool ascending = (i & k) == 0ul;
    if (greater == ascending) {
      keys[i] = kb; keys[l] = ka;
      idx[i] = ib; idx[l] = ia;
    }
  }
}

// dst row i = src row idx[i]; rows of g.y units of U.
template <class U>
kernel void gather_rows(device const U* src [[buffer(0)]], device const long* idx [[buffer(1)]],
                        device U* dst [[buffer(2)]], constant ulong2& g [[buffer(3)]],
                        uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  ulong rows = g.x, inner = g.y;
  for (ulong e = tid; e < rows * inner; e += nt) {
    ulong i = e / inner, c = e - i * inner;
    dst[e] = src[ulong(idx[i]) * inner + c];
  }
}
