// Complex elementary functions on GPUs (complex64, complex128), value for value the CPU's
// (crates/ingot/src/ops/cpu/cmath.rs and complex.rs): C99 Annex G special values, the formulas
// that keep their accuracy where the textbook ones cancel or overflow, and the plain complex
// product and quotient where the CPU's num-complex uses them (their NaNs included).
//
// Arrays arrive as their two parts (strided views of the interleaved storage made contiguous by
// the host), so one kernel serves both widths and no complex type crosses the ABI. The
// arithmetic is in double where the device has it (complex64 too, rounded once, as the CPU
// does), else in float with the thresholds of float.

// MSL has no double literals (the translation makes `1.5` a float): double constants are
// written as their bits.
#ifdef INGOT_NO_F64
typedef float CR;
#define CR_COSH_MAX 88.0f
#define CR_TANH_ONE 9.0f
#define CR_BIG 1e18f
#define CR_HUGE 1e36f
#define CR_PI 3.14159265358979f
#define CR_PI_2 1.57079632679490f
#define CR_PI_4 0.785398163397448f
#define CR_LN_2 0.693147180559945f
#define CR_LN_10 2.30258509299405f
#else
typedef double CR;
#define CR_COSH_MAX 709.0
#define CR_TANH_ONE 22.0
#define CR_BIG as_type<double>(0x5f138d352e5096aful)
#define CR_HUGE as_type<double>(0x7e37e43c8800759cul)
#define CR_PI as_type<double>(0x400921fb54442d18ul)
#define CR_PI_2 as_type<double>(0x3ff921fb54442d18ul)
#define CR_PI_4 as_type<double>(0x3fe921fb54442d18ul)
#define CR_LN_2 as_type<double>(0x3fe62e42fefa39eful)
#define CR_LN_10 as_type<double>(0x40026bb1bbb55516ul)
#endif

#define CR_INF CR(INFINITY)
#define CR_NAN CR(NAN)

// hypot: the prelude's (C's) where ingot translates the source; Apple's metal_stdlib has none
// (expm1 and log1p come from common.metal's x_expm1 / x_log1p for the same reason).
#ifdef INGOT_NATIVE_METAL
inline CR r_hypot(CR a, CR b) {
  a = fabs(a);
  b = fabs(b);
  if (isinf(a) || isinf(b)) return CR_INF;
  if (isnan(a) || isnan(b)) return a + b;
  const CR m = max(a, b), n = min(a, b);
  if (m == CR(0)) return m;
  const CR r = n / m;
  return m * sqrt(CR(1) + r * r);
}
#else
inline CR r_hypot(CR a, CR b) { return hypot(a, b); }
#endif

struct cz {
  CR re;
  CR im;
};

inline cz mk(CR re, CR im) {
  cz r;
  r.re = re;
  r.im = im;
  return r;
}
// -1 for a negative sign bit (also of zeros and NaNs), else 1.
inline CR sgnb(CR v) { return signbit(v) ? CR(-1) : CR(1); }
inline cz cadd(cz a, cz b) { return mk(a.re + b.re, a.im + b.im); }
inline cz csub(cz a, cz b) { return mk(a.re - b.re, a.im - b.im); }
inline cz cmul(cz a, cz b) { return mk(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re); }
inline cz cdivr(cz a, CR t) { return mk(a.re / t, a.im / t); }
// The textbook quotient (num-complex's `/`), used where the CPU uses it.
inline cz cdiv_plain(cz a, cz b) {
  const CR n = b.re * b.re + b.im * b.im;
  return mk((a.re * b.re + a.im * b.im) / n, (a.im * b.re - a.re * b.im) / n);
}
// Smith's algorithm; division by zero gives each part's IEEE quotient, as NumPy.
inline cz cdiv(cz a, cz b) {
  if (fabs(b.re) >= fabs(b.im)) {
    if (b.re == CR(0) && b.im == CR(0)) return mk(a.re / fabs(b.re), a.im / fabs(b.re));
    const CR r = b.im / b.re, d = b.re + b.im * r;
    return mk((a.re + a.im * r) / d, (a.im - a.re * r) / d);
  }
  const CR r = b.re / b.im, d = b.re * r + b.im;
  return mk((a.re * r + a.im) / d, (a.im * r - a.re) / d);
}
inline CR cabs_(cz z) { return r_hypot(z.re, z.im); }
inline cz cln(cz z) { return mk(log(r_hypot(z.re, z.im)), atan2(z.im, z.re)); }
inline cz cexp(cz z) {
  CR re = z.re, im = z.im;
  if (isinf(re)) {
    if (re < CR(0)) {
      if (!isfinite(im)) return mk(CR(0), CR(0));
    } else if (im == CR(0) || !isfinite(im)) {
      if (isinf(im)) im = CR_NAN;
      return mk(re, im);
    }
  } else if (isnan(re) && im == CR(0)) {
    return z;
  }
  const CR r = exp(re);
  return mk(r * cos(im), r * sin(im));
}

// Odd functions with f(conj z) = conj f(z) are computed on |re|, |im| and the signs put back
// (which also gives Annex G's signed zeros); f(conj z) = conj f(z) alone: on re, |im|.
inline cz odd_signs(cz z, cz r) { return mk(r.re * sgnb(z.re), r.im * sgnb(z.im)); }
inline cz conj_sign(cz z, cz r) { return mk(r.re, r.im * sgnb(z.im)); }

inline cz cexpm1(cz z) {
  // Infinite and NaN parts: exp(z) - 1 (the standard's special values); a real argument keeps
  // its zero imaginary part where exp overflows.
  if (!(isfinite(z.re) && isfinite(z.im))) {
    const cz e = cexp(z);
    return mk(e.re - CR(1), e.im);
  }
  // expm1(±0 + 0j) is +0 + 0j (the standard), where the real expm1(-0) is -0.
  if (z.im == CR(0)) return mk(z.re == CR(0) ? CR(0) : x_expm1(z.re), z.im);
  const CR h = sin(z.im / CR(2));
  return mk(x_expm1(z.re) * cos(z.im) - CR(2) * h * h, exp(z.re) * sin(z.im));
}

inline cz clog1p(cz z) {
  if (cabs_(z) < CR(0.5)) {
    const CR re = CR(0.5) * x_log1p(CR(2) * z.re + z.re * z.re + z.im * z.im);
    return mk(re, atan2(z.im, CR(1) + z.re));
  }
  return cln(cadd(mk(CR(1), CR(0)), z));
}

inline cz csign(cz z) {
  if (z.re == CR(0) && z.im == CR(0)) return mk(CR(0), CR(0));
  if (isnan(z.re) || isnan(z.im)) return mk(CR_NAN, CR_NAN);
  if (isinf(z.re) || isinf(z.im)) {
    const CR re = isinf(z.re) ? copysign(CR(1), z.re) : CR(0);
    const CR im = isinf(z.im) ? copysign(CR(1), z.im) : CR(0);
    const CR m = r_hypot(re, im);
    return mk(re / m, im / m);
  }
  const CR m = cabs_(z);
  return mk(z.re / m, z.im / m);
}

inline cz csqrt(cz z) {
  CR x = z.re, y = z.im;
  if (!(isfinite(x) && isfinite(y))) {
    const CR ay = fabs(y);
    cz r;
    if (ay == CR_INF) {
      r = mk(CR_INF, CR_INF);
    } else if (x == -CR_INF) {
      r = mk(isnan(ay) ? CR_NAN : CR(0), CR_INF);
    } else if (x == CR_INF) {
      r = mk(CR_INF, isnan(ay) ? CR_NAN : CR(0));
    } else {
      r = mk(CR_NAN, CR_NAN);
    }
    return mk(r.re, r.im * sgnb(y));
  }
  if (x == CR(0) && y == CR(0)) return mk(CR(0), y);
  CR scale = CR(1);
  if (fabs(x) > CR_HUGE || fabs(y) > CR_HUGE) {
    x *= CR(0.25);
    y *= CR(0.25);
    scale = CR(2);
  }
  const CR t = sqrt((fabs(x) + r_hypot(x, y)) * CR(0.5));
  if (x >= CR(0)) return mk(t * scale, y / (CR(2) * t) * scale);
  return mk(fabs(y) / (CR(2) * t) * scale, copysign(t, y) * scale);
}

// (cosh x * a, sinh x * b) for finite x, without overflow where the product is finite.
inline cz hyperbolic_parts(CR x, CR a, CR b) {
  if (fabs(x) <= CR_COSH_MAX) return mk(cosh(x) * a, sinh(x) * b);
  const CR h = exp(fabs(x) * CR(0.5));
  return mk(h * (CR(0.5) * a) * h, sgnb(x) * (h * (CR(0.5) * b) * h));
}

inline cz csinh(cz z) {
  if (isfinite(z.re) && isfinite(z.im)) {
    if (z.im == CR(0)) return mk(sinh(z.re), z.im);
    const cz p = hyperbolic_parts(z.re, sin(z.im), cos(z.im));
    return mk(p.im, p.re);
  }
  const CR x = fabs(z.re);
  const CR y = fabs(z.im);
  cz r_;
  {
    if (x == CR(0)) r_ = mk(CR(0), CR_NAN);
    else if (isfinite(x)) r_ = mk(CR_NAN, CR_NAN);
    else if (x == CR_INF) {
      if (y == CR(0)) r_ = mk(CR_INF, CR(0));
      else if (isfinite(y)) r_ = mk(copysign(CR_INF, cos(y)), copysign(CR_INF, sin(y)));
      else r_ = mk(CR_INF, CR_NAN);
    } else if (y == CR(0)) r_ = mk(CR_NAN, CR(0));
    else r_ = mk(CR_NAN, CR_NAN);
  }
  return odd_signs(z, r_);
}

inline cz ccosh(cz z) {
  const CR x = z.re, y = z.im;
  if (isfinite(x) && isfinite(y)) {
    if (y == CR(0)) return mk(cosh(x), copysign(CR(0), x) * y);
    return hyperbolic_parts(x, cos(y), sin(y));
  }
  const CR ax = fabs(x), ay = fabs(y);
  cz r;
  if (ax == CR(0)) r = mk(CR_NAN, CR(0));
  else if (isfinite(ax)) r = mk(CR_NAN, CR_NAN);
  else if (ax == CR_INF) {
    if (ay == CR(0)) r = mk(CR_INF, CR(0));
    else if (isfinite(ay)) r = mk(copysign(CR_INF, cos(ay)), copysign(CR_INF, sin(ay)));
    else r = mk(CR_INF, CR_NAN);
  } else if (ay == CR(0)) r = mk(CR_NAN, CR(0));
  else r = mk(CR_NAN, CR_NAN);
  return mk(r.re, r.im * sgnb(x) * sgnb(y));
}

inline cz ctanh(cz z) {
  if (isfinite(z.re) && isfinite(z.im)) {
    const CR x = z.re, y = z.im;
    if (fabs(x) > CR_TANH_ONE) {
      const CR im = CR(4) * sin(y) * cos(y) * exp(CR(-2) * fabs(x));
      return mk(copysign(CR(1), x), im);
    }
    const CR t = tan(y);
    const CR beta = CR(1) + t * t;
    const CR s = sinh(x);
    const CR rho = sqrt(CR(1) + s * s);
    const CR d = CR(1) + beta * s * s;
    return mk(beta * rho * s / d, t / d);
  }
  const CR x = fabs(z.re);
  const CR y = fabs(z.im);
  cz r_;
  {
    if (x == CR_INF) r_ = isfinite(y) ? mk(CR(1), copysign(CR(0), sin(CR(2) * y))) : mk(CR(1), CR(0));
    else if (x == CR(0)) r_ = mk(CR(0), CR_NAN);
    else if (isnan(x) && y == CR(0)) r_ = mk(CR_NAN, CR(0));
    else r_ = mk(CR_NAN, CR_NAN);
  }
  return odd_signs(z, r_);
}

inline cz ctan(cz z) {
  const cz t = ctanh(mk(-z.im, z.re));
  return mk(t.im, -t.re);
}

inline cz casinh(cz z) {
  const CR x = fabs(z.re);
  const CR y = fabs(z.im);
  cz r_;
  {
    if (isfinite(x) && isfinite(y)) {
      if (max(x, y) > CR_BIG) {
        r_ = mk(log(r_hypot(x, y)) + CR_LN_2, atan2(y, x));
      } else {
        const cz w = mk(x, y);
        const cz w2 = mk((x - y) * (x + y), CR(2) * x * y);
        const cz s = csqrt(cadd(w2, mk(CR(1), CR(0))));
        r_ = clog1p(cadd(w, cdiv(w2, cadd(s, mk(CR(1), CR(0))))));
      }
    } else if (y == CR_INF) {
      r_ = isfinite(x) ? mk(CR_INF, CR_PI_2) : (x == CR_INF ? mk(CR_INF, CR_PI_4) : mk(CR_INF, CR_NAN));
    } else if (x == CR_INF) {
      r_ = mk(CR_INF, isnan(y) ? CR_NAN : CR(0));
    } else if (isnan(x) && y == CR(0)) {
      r_ = mk(CR_NAN, CR(0));
    } else {
      r_ = mk(CR_NAN, CR_NAN);
    }
  }
  return odd_signs(z, r_);
}

inline cz casin(cz z) {
  const cz a = casinh(mk(-z.im, z.re));
  return mk(a.im, -a.re);
}

inline cz cacos(cz z) {
  const CR x = z.re;
  const CR ay = fabs(z.im);
  cz r_;
  {
    if (ay == CR(0) && isfinite(x)) {
      if (x > CR(1)) r_ = mk(CR(0), -acosh(x));
      else if (x < CR(-1)) r_ = mk(CR_PI, -acosh(-x));
      else r_ = mk(acos(x), CR(-0.0));
    } else if (isfinite(x) && isfinite(ay)) {
      const cz a = csqrt(mk(CR(1) - x, -ay));
      const cz b = csqrt(mk(CR(1) + x, ay));
      r_ = mk(CR(2) * atan2(a.re, b.re), asinh(b.re * a.im - b.im * a.re));
    } else if (ay == CR_INF) {
      const CR re = x == -CR_INF ? CR(3) * CR_PI_4 : (x == CR_INF ? CR_PI_4 : (isnan(x) ? CR_NAN : CR_PI_2));
      r_ = mk(re, -CR_INF);
    } else if (isinf(x)) {
      r_ = isnan(ay) ? mk(CR_NAN, CR_INF) : mk(x < CR(0) ? CR_PI : CR(0), -CR_INF);
    } else if (x == CR(0) && isnan(ay)) {
      r_ = mk(CR_PI_2, CR_NAN);
    } else {
      r_ = mk(CR_NAN, CR_NAN);
    }
  }
  return conj_sign(z, r_);
}

inline cz cacosh(cz z) {
  const CR x = z.re;
  const CR ay = fabs(z.im);
  cz r_;
  {
    if (ay == CR(0) && isfinite(x)) {
      if (x >= CR(1)) r_ = mk(acosh(x), CR(0));
      else if (x >= CR(-1)) r_ = mk(CR(0), acos(x));
      else r_ = mk(acosh(-x), CR_PI);
    } else if (isfinite(x) && isfinite(ay)) {
      const cz a = csqrt(mk(x - CR(1), ay));
      const cz b = csqrt(mk(x + CR(1), ay));
      r_ = mk(asinh(a.re * b.re + a.im * b.im), CR(2) * atan2(a.im, b.re));
    } else if (ay == CR_INF) {
      const CR im = x == -CR_INF ? CR(3) * CR_PI_4 : (x == CR_INF ? CR_PI_4 : (isnan(x) ? CR_NAN : CR_PI_2));
      r_ = mk(CR_INF, im);
    } else if (isinf(x)) {
      r_ = isnan(ay) ? mk(CR_INF, CR_NAN) : mk(CR_INF, x < CR(0) ? CR_PI : CR(0));
    } else if (x == CR(0) && isnan(ay)) {
      r_ = mk(CR_NAN, CR_PI_2);
    } else {
      r_ = mk(CR_NAN, CR_NAN);
    }
  }
  return conj_sign(z, r_);
}

inline cz catanh(cz z) {
  const CR x = fabs(z.re);
  const CR y = fabs(z.im);
  cz r_;
  {
    if (y == CR(0) && isfinite(x)) {
      if (x < CR(1)) r_ = mk(atanh(x), CR(0));
      else if (x == CR(1)) r_ = mk(CR_INF, CR(0));
      else r_ = mk(CR(0.5) * x_log1p(CR(2) / (x - CR(1))), CR_PI_2);
    } else if (isfinite(x) && isfinite(y)) {
      if (max(x, y) > CR_BIG) {
        const CR m = r_hypot(x, y);
        r_ = mk(x / m / m, CR_PI_2);
      } else {
        const CR d = (CR(1) - x) * (CR(1) - x) + y * y;
        r_ = mk(CR(0.25) * x_log1p(CR(4) * x / d), CR(0.5) * atan2(CR(2) * y, (CR(1) - x) * (CR(1) + x) - y * y));
      }
    } else if (y == CR_INF || (x == CR_INF && !isnan(y))) {
      r_ = mk(CR(0), CR_PI_2);
    } else if (x == CR_INF || (x == CR(0) && isnan(y))) {
      r_ = mk(CR(0), CR_NAN);
    } else {
      r_ = mk(CR_NAN, CR_NAN);
    }
  }
  return odd_signs(z, r_);
}

// atan(z) = (ln(1 + iz) - ln(1 - iz)) / 2i, with num-complex's operations (its plain product and
// quotient: infinite parts give the NaNs the CPU gives).
inline cz catan(cz z) {
  const cz i = mk(CR(0), CR(1));
  const cz one = mk(CR(1), CR(0));
  if (z.re == CR(0) && z.im == CR(1)) return mk(CR(0), CR_INF);
  if (z.re == CR(0) && z.im == CR(-1)) return mk(CR(0), -CR_INF);
  const cz iz = cmul(i, z);
  return cdiv_plain(csub(cln(cadd(one, iz)), cln(csub(one, iz))), mk(CR(0), CR(2)));
}


// x ** y: x ** 0 = 1 (also for x = 0), 0 ** y = 0 for real y > 0, integer powers up to 64 by
// repeated squaring (exact for small Gaussian integers, as NumPy), else exp(y log x).
inline cz cpow(cz x, cz y) {
  if (y.re == CR(0) && y.im == CR(0)) return mk(CR(1), CR(0));
  if (x.re == CR(0) && x.im == CR(0) && y.im == CR(0) && y.re > CR(0)) return mk(CR(0), CR(0));
  if (y.im == CR(0) && y.re == rint(y.re) && fabs(y.re) <= CR(64)) {
    uint n = uint(fabs(y.re));
    cz base = x, acc = mk(CR(1), CR(0));
    while (n > 0u) {
      if ((n & 1u) != 0u) acc = cmul(acc, base);
      base = cmul(base, base);
      n >>= 1;
    }
    return y.re < CR(0) ? cdiv(mk(CR(1), CR(0)), acc) : acc;
  }
  return cexp(cmul(y, cln(x)));
}

#define CZ_UNARY(NAME, EXPR)                   \
  struct cop_##NAME {                          \
    static cz f(cz z) { return EXPR; }         \
  };
CZ_UNARY(square, cmul(z, z))
CZ_UNARY(reciprocal, cdiv(mk(CR(1), CR(0)), z))
CZ_UNARY(sign, csign(z))
CZ_UNARY(round, mk(rint(z.re), rint(z.im)))
CZ_UNARY(sqrt, csqrt(z))
CZ_UNARY(exp, cexp(z))
CZ_UNARY(expm1, cexpm1(z))
CZ_UNARY(log, cln(z))
CZ_UNARY(log1p, clog1p(z))
CZ_UNARY(log2, cdivr(cln(z), CR_LN_2))
CZ_UNARY(log10, cdivr(cln(z), CR_LN_10))
CZ_UNARY(sin, mk(sin(z.re) * cosh(z.im), cos(z.re) * sinh(z.im)))
CZ_UNARY(cos, mk(cos(z.re) * cosh(z.im), -sin(z.re) * sinh(z.im)))
CZ_UNARY(tan, ctan(z))
CZ_UNARY(asin, casin(z))
CZ_UNARY(acos, cacos(z))
CZ_UNARY(atan, catan(z))
CZ_UNARY(sinh, csinh(z))
CZ_UNARY(cosh, ccosh(z))
CZ_UNARY(tanh, ctanh(z))
CZ_UNARY(asinh, casinh(z))
CZ_UNARY(acosh, cacosh(z))
CZ_UNARY(atanh, catanh(z))
#undef CZ_UNARY

// out = Op(x) over n contiguous elements given as parts (T: the parts' type).
template <class Op, class T>
[[max_total_threads_per_threadgroup(256)]] kernel void cunary(
    device const T* xr [[buffer(0)]], device const T* xi [[buffer(1)]], device T* or_ [[buffer(2)]],
    device T* oi [[buffer(3)]], constant ulong& n [[buffer(4)]], uint tid [[thread_position_in_grid]],
    uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < n; i += nt) {
    const cz r = Op::f(mk(CR(xr[i]), CR(xi[i])));
    or_[i] = T(r.re);
    oi[i] = T(r.im);
  }
}

// out = x ** y over n contiguous elements given as parts.
template <class T>
[[max_total_threads_per_threadgroup(256)]] kernel void cpow_parts(
    device const T* xr [[buffer(0)]], device const T* xi [[buffer(1)]], device const T* yr [[buffer(2)]],
    device const T* yi [[buffer(3)]], device T* or_ [[buffer(4)]], device T* oi [[buffer(5)]],
    constant ulong& n [[buffer(6)]], uint tid [[thread_position_in_grid]], uint nt [[threads_per_grid]]) {
  for (ulong i = tid; i < n; i += nt) {
    const cz r = cpow(mk(CR(xr[i]), CR(xi[i])), mk(CR(yr[i]), CR(yi[i])));
    or_[i] = T(r.re);
    oi[i] = T(r.im);
  }
}
