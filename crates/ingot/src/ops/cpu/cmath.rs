//! Complex division and elementary functions in `Complex<f64>` with the special values of C99
//! Annex G (the array API standard's table for infinite, NaN and signed-zero parts, NumPy's
//! results) and formulas that keep their accuracy where the textbook ones cancel or overflow:
//! `asinh` of a number with a large negative real part, `tanh` of a large real part, `acos` and
//! `atanh` of huge or tiny parts, `sqrt` of huge parts.
//!
//! Most functions are odd or even and satisfy `f(conj z) = conj f(z)`; they are computed for
//! `|re|, |im|` and the signs are put back ([`odd`]), which also gives the signed zeros Annex G
//! asks for.

use num_complex::Complex;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, LN_2, PI};

type Z = Complex<f64>;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

fn c(re: f64, im: f64) -> Z {
    Complex::new(re, im)
}

/// -1 for a negative sign bit (also of zeros and NaNs), else 1.
fn sgn(v: f64) -> f64 {
    if v.is_sign_negative() {
        -1.0
    } else {
        1.0
    }
}

/// `f` of an odd function with `f(conj z) = conj f(z)`, from its values on `|re|, |im|`.
fn odd(z: Z, f: impl Fn(f64, f64) -> Z) -> Z {
    let r = f(z.re.abs(), z.im.abs());
    c(r.re * sgn(z.re), r.im * sgn(z.im))
}

/// `f` of a function with `f(conj z) = conj f(z)`, from its values on `re, |im|`.
fn conj_symmetric(z: Z, f: impl Fn(f64, f64) -> Z) -> Z {
    let r = f(z.re, z.im.abs());
    c(r.re, r.im * sgn(z.im))
}

/// `a / b` by Smith's algorithm.
#[inline(always)]
pub(super) fn div(a: Z, b: Z) -> Z {
    if b.re.abs() >= b.im.abs() {
        if b.re == 0.0 && b.im == 0.0 {
            // Division by zero: the IEEE result of each part, as NumPy.
            return Complex::new(a.re / b.re.abs(), a.im / b.re.abs());
        }
        let r = b.im / b.re;
        let d = b.re + b.im * r;
        Complex::new((a.re + a.im * r) / d, (a.im - a.re * r) / d)
    } else {
        let r = b.re / b.im;
        let d = b.re * r + b.im;
        Complex::new((a.re * r + a.im) / d, (a.im * r - a.re) / d)
    }
}

/// `exp(z) - 1`, accurate for small `|z|`.
pub(super) fn expm1(z: Z) -> Z {
    // Infinite and NaN parts: `exp(z) - 1`, whose special values are the standard's for expm1
    // (`expm1(+inf + 0j) = +inf + 0j`, `expm1(-inf + NaN j) = -1 + 0j`, ...). A real argument
    // keeps its zero imaginary part where `exp` overflows.
    if !(z.re.is_finite() && z.im.is_finite()) {
        let e = z.exp();
        return c(e.re - 1.0, e.im);
    }
    if z.im == 0.0 {
        // expm1(±0 + 0j) is +0 + 0j (the standard), where the real expm1(-0) is -0.
        let re = if z.re == 0.0 { 0.0 } else { z.re.exp_m1() };
        return c(re, z.im);
    }
    let half = (z.im / 2.0).sin();
    c(
        z.re.exp_m1() * z.im.cos() - 2.0 * half * half,
        z.re.exp() * z.im.sin(),
    )
}

/// `log(1 + z)`, accurate for small `|z|`.
pub(super) fn log1p(z: Z) -> Z {
    let m = z.norm();
    if m < 0.5 {
        let re = 0.5 * (2.0 * z.re + z.re * z.re + z.im * z.im).ln_1p();
        c(re, z.im.atan2(1.0 + z.re))
    } else {
        (c(1.0, 0.0) + z).ln()
    }
}

/// `z / |z|` (`0 + 0j` for zero), NumPy 2's `sign` of complex numbers.
pub(super) fn sign(z: Z) -> Z {
    if z.re == 0.0 && z.im == 0.0 {
        return c(0.0, 0.0);
    }
    if z.re.is_nan() || z.im.is_nan() {
        return c(NAN, NAN);
    }
    if z.re.is_infinite() || z.im.is_infinite() {
        let re = if z.re.is_infinite() {
            z.re.signum()
        } else {
            0.0
        };
        let im = if z.im.is_infinite() {
            z.im.signum()
        } else {
            0.0
        };
        return c(re, im) / c(re, im).norm();
    }
    let m = z.norm();
    c(z.re / m, z.im / m)
}

/// The principal square root (`re >= 0`), without overflow for huge parts.
pub(super) fn sqrt(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if !(x.is_finite() && y.is_finite()) {
        return conj_symmetric(z, |x, ay| {
            if ay == INF {
                c(INF, INF)
            } else if x == -INF {
                c(if ay.is_nan() { NAN } else { 0.0 }, INF)
            } else if x == INF {
                c(INF, if ay.is_nan() { NAN } else { 0.0 })
            } else {
                c(NAN, NAN)
            }
        });
    }
    if x == 0.0 && y == 0.0 {
        return c(0.0, y);
    }
    // |x| + hypot(x, y) overflows above ~9e307: take the root of z/4 and double it.
    let (x, y, scale) = if x.abs() > 1e300 || y.abs() > 1e300 {
        (x * 0.25, y * 0.25, 2.0)
    } else {
        (x, y, 1.0)
    };
    let t = ((x.abs() + x.hypot(y)) * 0.5).sqrt();
    if x >= 0.0 {
        c(t * scale, y / (2.0 * t) * scale)
    } else {
        c(y.abs() / (2.0 * t) * scale, t.copysign(y) * scale)
    }
}

/// `(cosh x, sinh x)` times `(a, b)` for finite `x`, without overflowing where the product is
/// finite (`|x| > 709`: `cosh x = sinh x = e^|x| / 2`, split in two factors).
fn hyperbolic_parts(x: f64, a: f64, b: f64) -> (f64, f64) {
    if x.abs() <= 709.0 {
        (x.cosh() * a, x.sinh() * b)
    } else {
        let h = (x.abs() * 0.5).exp();
        (h * (0.5 * a) * h, sgn(x) * (h * (0.5 * b) * h))
    }
}

/// `sinh(z)`.
pub(super) fn sinh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        if y == 0.0 {
            return c(x.sinh(), y);
        }
        let (ch, sh) = hyperbolic_parts(x, y.sin(), y.cos());
        return c(sh, ch);
    }
    odd(z, |ax, ay| {
        if ax == 0.0 {
            c(0.0, NAN)
        } else if ax.is_finite() {
            c(NAN, NAN)
        } else if ax == INF {
            if ay == 0.0 {
                c(INF, 0.0)
            } else if ay.is_finite() {
                c(INF.copysign(ay.cos()), INF.copysign(ay.sin()))
            } else {
                c(INF, NAN)
            }
        } else if ay == 0.0 {
            c(NAN, 0.0)
        } else {
            c(NAN, NAN)
        }
    })
}

/// `cosh(z)`.
pub(super) fn cosh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        if y == 0.0 {
            return c(x.cosh(), 0.0f64.copysign(x) * y);
        }
        let (ch, sh) = hyperbolic_parts(x, y.cos(), y.sin());
        return c(ch, sh);
    }
    // Even: f(-z) = f(z), so f(-x + iy) = conj f(x + iy).
    let (ax, ay) = (x.abs(), y.abs());
    let r = if ax == 0.0 {
        c(NAN, 0.0)
    } else if ax.is_finite() {
        c(NAN, NAN)
    } else if ax == INF {
        if ay == 0.0 {
            c(INF, 0.0)
        } else if ay.is_finite() {
            c(INF.copysign(ay.cos()), INF.copysign(ay.sin()))
        } else {
            c(INF, NAN)
        }
    } else if ay == 0.0 {
        c(NAN, 0.0)
    } else {
        c(NAN, NAN)
    };
    c(r.re, r.im * sgn(x) * sgn(y))
}

/// `tanh(z)`: Kahan's formula, and `±1 + i 0` (with the exponentially small imaginary part)
/// once `|re| > 22`, where `e^(2|re|)` would overflow or the real part is 1 to double precision.
pub(super) fn tanh(z: Z) -> Z {
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        if x.abs() > 22.0 {
            let im = 4.0 * y.sin() * y.cos() * (-2.0 * x.abs()).exp();
            return c(1.0f64.copysign(x), im);
        }
        let t = y.tan();
        let beta = 1.0 + t * t;
        let s = x.sinh();
        let rho = (1.0 + s * s).sqrt();
        let d = 1.0 + beta * s * s;
        return c(beta * rho * s / d, t / d);
    }
    odd(z, |ax, ay| {
        if ax == INF {
            if ay.is_finite() {
                c(1.0, 0.0f64.copysign((2.0 * ay).sin()))
            } else {
                c(1.0, 0.0)
            }
        } else if ax == 0.0 {
            c(0.0, NAN)
        } else if ax.is_nan() && ay == 0.0 {
            c(NAN, 0.0)
        } else {
            c(NAN, NAN)
        }
    })
}

/// `tan(z) = -i tanh(i z)`.
pub(super) fn tan(z: Z) -> Z {
    let t = tanh(c(-z.im, z.re));
    c(t.im, -t.re)
}

/// `asinh(z) = log(z + sqrt(z^2 + 1))`, computed in the first quadrant (no cancellation) as
/// `log1p(z + z^2 / (1 + sqrt(z^2 + 1)))` (accurate for small `|z|`), and as
/// `log(2 z)` where `z^2` would overflow.
pub(super) fn asinh(z: Z) -> Z {
    odd(z, |x, y| {
        if x.is_finite() && y.is_finite() {
            if x.max(y) > 1e150 {
                return c(x.hypot(y).ln() + LN_2, y.atan2(x));
            }
            let z = c(x, y);
            let z2 = c((x - y) * (x + y), 2.0 * x * y);
            let s = sqrt(z2 + 1.0);
            return log1p(z + div(z2, s + 1.0));
        }
        if y == INF {
            if x.is_finite() {
                c(INF, FRAC_PI_2)
            } else if x == INF {
                c(INF, FRAC_PI_4)
            } else {
                c(INF, NAN)
            }
        } else if x == INF {
            c(INF, if y.is_nan() { NAN } else { 0.0 })
        } else if x.is_nan() && y == 0.0 {
            c(NAN, 0.0)
        } else {
            c(NAN, NAN)
        }
    })
}

/// `asin(z) = -i asinh(i z)`.
pub(super) fn asin(z: Z) -> Z {
    let a = asinh(c(-z.im, z.re));
    c(a.im, -a.re)
}

/// `acos(z)` (on the real axis, the side of the branch cuts `|re| > 1` that the sign of the
/// zero imaginary part picks, as C99 and NumPy).
pub(super) fn acos(z: Z) -> Z {
    conj_symmetric(z, |x, ay| {
        if ay == 0.0 && x.is_finite() {
            if x > 1.0 {
                c(0.0, -x.acosh())
            } else if x < -1.0 {
                c(PI, -(-x).acosh())
            } else {
                c(x.acos(), -0.0)
            }
        } else if x.is_finite() && ay.is_finite() {
            // Kahan's formulas ("Branch cuts for complex elementary functions"): no overflow,
            // no cancellation, where -i log(z + i sqrt(1 - z^2)) overflows for |z| > 1e154.
            let (a, b) = (sqrt(c(1.0 - x, -ay)), sqrt(c(1.0 + x, ay)));
            c(2.0 * a.re.atan2(b.re), (b.re * a.im - b.im * a.re).asinh())
        } else if ay == INF {
            let re = if x == -INF {
                3.0 * FRAC_PI_4
            } else if x == INF {
                FRAC_PI_4
            } else if x.is_nan() {
                NAN
            } else {
                FRAC_PI_2
            };
            c(re, -INF)
        } else if x.is_infinite() {
            if ay.is_nan() {
                c(NAN, INF)
            } else {
                c(if x < 0.0 { PI } else { 0.0 }, -INF)
            }
        } else if x == 0.0 && ay.is_nan() {
            c(FRAC_PI_2, NAN)
        } else {
            c(NAN, NAN)
        }
    })
}

/// `acosh(z)` (on the real axis, the side of the branch cut `re < 1` that the sign of the
/// zero imaginary part picks).
pub(super) fn acosh(z: Z) -> Z {
    conj_symmetric(z, |x, ay| {
        if ay == 0.0 && x.is_finite() {
            if x >= 1.0 {
                c(x.acosh(), 0.0)
            } else if x >= -1.0 {
                c(0.0, x.acos())
            } else {
                c((-x).acosh(), PI)
            }
        } else if x.is_finite() && ay.is_finite() {
            // Kahan's formulas, as for `acos`.
            let (a, b) = (sqrt(c(x - 1.0, ay)), sqrt(c(x + 1.0, ay)));
            c((a.re * b.re + a.im * b.im).asinh(), 2.0 * a.im.atan2(b.re))
        } else if ay == INF {
            let im = if x == -INF {
                3.0 * FRAC_PI_4
            } else if x == INF {
                FRAC_PI_4
            } else if x.is_nan() {
                NAN
            } else {
                FRAC_PI_2
            };
            c(INF, im)
        } else if x.is_infinite() {
            if ay.is_nan() {
                c(INF, NAN)
            } else {
                c(INF, if x < 0.0 { PI } else { 0.0 })
            }
        } else if x == 0.0 && ay.is_nan() {
            c(NAN, FRAC_PI_2)
        } else {
            c(NAN, NAN)
        }
    })
}

/// `atanh(z)` (on the real axis, the side of the branch cuts `|re| > 1` that the sign of the
/// zero imaginary part picks).
pub(super) fn atanh(z: Z) -> Z {
    odd(z, |x, y| {
        if y == 0.0 && x.is_finite() {
            if x < 1.0 {
                c(x.atanh(), 0.0)
            } else if x == 1.0 {
                c(INF, 0.0)
            } else {
                // atanh(x) = log((x + 1) / (x - 1)) / 2 + i pi/2 above the cut.
                c(0.5 * (2.0 / (x - 1.0)).ln_1p(), FRAC_PI_2)
            }
        } else if x.is_finite() && y.is_finite() {
            if x.max(y) > 1e150 {
                // atanh(z) = 1/z + O(1/z^3) + i pi/2: the real part x/|z|^2 without overflow.
                let m = x.hypot(y);
                return c(x / m / m, FRAC_PI_2);
            }
            // Kahan's formulas: the real part without cancellation near 0 and 1.
            let d = (1.0 - x) * (1.0 - x) + y * y;
            c(
                0.25 * (4.0 * x / d).ln_1p(),
                0.5 * (2.0 * y).atan2((1.0 - x) * (1.0 + x) - y * y),
            )
        } else if y == INF || (x == INF && !y.is_nan()) {
            c(0.0, FRAC_PI_2)
        } else if x == INF || (x == 0.0 && y.is_nan()) {
            c(0.0, NAN)
        } else {
            c(NAN, NAN)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal parts, NaN equal to NaN, zeros and infinities with their signs.
    fn same(a: Z, b: Z) -> bool {
        let eq = |x: f64, y: f64| {
            (x.is_nan() && y.is_nan())
                || (x == y && x.is_sign_negative() == y.is_sign_negative())
                || (x - y).abs() <= 1e-15 * y.abs()
        };
        eq(a.re, b.re) && eq(a.im, b.im)
    }

    /// A function, an input and the expected result.
    type Case = (fn(Z) -> Z, Z, Z);

    #[test]
    fn annex_g_special_values() {
        // (function, input, C99 Annex G / the array API standard's result)
        let cases: [Case; 14] = [
            (sqrt, c(INF, 2.0), c(INF, 0.0)),
            (sqrt, c(-INF, NAN), c(NAN, INF)),
            (sqrt, c(-4.0, -0.0), c(0.0, -2.0)),
            (cosh, c(0.0, INF), c(NAN, 0.0)),
            (cosh, c(INF, 0.0), c(INF, 0.0)),
            (sinh, c(INF, 0.0), c(INF, 0.0)),
            (sinh, c(NAN, 0.0), c(NAN, 0.0)),
            (tanh, c(INF, 2.0), c(1.0, -0.0)),
            (tanh, c(0.0, NAN), c(0.0, NAN)),
            (asinh, c(INF, INF), c(INF, FRAC_PI_4)),
            (acos, c(-INF, 1.0), c(PI, -INF)),
            (acosh, c(0.0, NAN), c(NAN, FRAC_PI_2)),
            (atanh, c(NAN, INF), c(0.0, FRAC_PI_2)),
            (atanh, c(1.0, 0.0), c(INF, 0.0)),
        ];
        for (i, (f, z, want)) in cases.iter().enumerate() {
            let got = f(*z);
            assert!(same(got, *want), "case {i}: f({z}) = {got}, want {want}");
        }
        assert!(same(sign(c(-0.0, -0.0)), c(0.0, 0.0)));
    }

    #[test]
    fn large_and_small_arguments_keep_their_accuracy() {
        // asinh(-x + i) for large x: -(log(2x) + 1/(4x^2)) + i/x to double precision.
        let x = 67108864.0f64;
        let a = asinh(c(-x, 1.0));
        assert!(
            (a.re + (2.0 * x).ln()).abs() < 1e-14 * (2.0 * x).ln(),
            "{a}"
        );
        assert!((a.im - 1.0 / x).abs() < 1e-15 / x, "{a}");
        // tanh of a large real part is ±1 with a tiny imaginary part, not NaN.
        let t = tanh(c(356.0, 1.0));
        assert_eq!(t.re, 1.0);
        assert!(t.im.abs() < 1e-300);
        // atanh(z) ~ z for tiny z.
        let z = c(6.31e-19, 5.2e-28);
        assert!(same(atanh(z), z));
        // acos of a huge argument: -i log(2z) to leading order (no overflow).
        let g = acos(c(1e300, 1e300));
        assert!(g.re.is_finite() && g.im.is_finite(), "{g}");
    }
}
