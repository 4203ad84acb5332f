//! Elementwise functions of complex arrays (`complex64` as [`C32`], `complex128` as [`C64`]).
//!
//! Every function is computed in `Complex<f64>` and rounded once to the element type, so
//! `complex64` results are as accurate as `complex128` ones allow. Division is Smith's
//! algorithm (no overflow for large finite operands), as NumPy's.

use num_complex::Complex;

use super::cmath::{self, div, expm1, log1p, sign};

use super::element::{Elem, B8, C32, C64};
use super::iter::{map1, map2, GRAIN_CHEAP, GRAIN_HEAVY};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, UnaryOp};

type Z = Complex<f64>;

/// A complex element type: conversion to and from `Complex<f64>`, and its real part type.
pub(crate) trait Cx: Elem {
    /// The element type of the parts (`f32`, `f64`).
    type Real: Elem;
    fn z(self) -> Z;
    fn from_z(z: Z) -> Self;
    fn real(v: f64) -> Self::Real;
}

impl Cx for C32 {
    type Real = f32;
    #[inline(always)]
    fn z(self) -> Z {
        Complex::new(self.0.re as f64, self.0.im as f64)
    }
    #[inline(always)]
    fn from_z(z: Z) -> Self {
        C32(Complex::new(z.re as f32, z.im as f32))
    }
    #[inline(always)]
    fn real(v: f64) -> f32 {
        v as f32
    }
}

impl Cx for C64 {
    type Real = f64;
    #[inline(always)]
    fn z(self) -> Z {
        self.0
    }
    #[inline(always)]
    fn from_z(z: Z) -> Self {
        C64(z)
    }
    #[inline(always)]
    fn real(v: f64) -> f64 {
        v
    }
}

fn map_z<T: Cx>(x: &Array, out: &Array, heavy: bool, f: fn(Z) -> Z) -> Result<()> {
    let grain = if heavy { GRAIN_HEAVY } else { GRAIN_CHEAP };
    map1::<T, T, _>(x, out, grain, move |v: T| T::from_z(f(v.z())))
}

fn unary_t<T: Cx>(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    use UnaryOp::*;
    let pred =
        |f: fn(Z) -> bool| map1::<T, B8, _>(x, out, GRAIN_CHEAP, move |v: T| B8::new(f(v.z())));
    match op {
        Abs => map1::<T, T::Real, _>(x, out, GRAIN_CHEAP, |v: T| T::real(v.z().norm())),
        IsNan => pred(|z| z.re.is_nan() || z.im.is_nan()),
        IsInf => pred(|z| z.re.is_infinite() || z.im.is_infinite()),
        IsFinite => pred(|z| z.re.is_finite() && z.im.is_finite()),
        LogicalNot => pred(|z| z.re == 0.0 && z.im == 0.0),
        Positive => map_z::<T>(x, out, false, |z| z),
        Negative => map_z::<T>(x, out, false, |z| -z),
        Square => map_z::<T>(x, out, false, |z| z * z),
        Reciprocal => map_z::<T>(x, out, false, |z| div(Complex::new(1.0, 0.0), z)),
        Sign => map_z::<T>(x, out, false, sign),
        Round => map_z::<T>(x, out, false, |z| {
            Complex::new(z.re.round_ties_even(), z.im.round_ties_even())
        }),
        Sqrt => map_z::<T>(x, out, true, cmath::sqrt),
        Exp => map_z::<T>(x, out, true, |z| z.exp()),
        Expm1 => map_z::<T>(x, out, true, expm1),
        Log => map_z::<T>(x, out, true, |z| z.ln()),
        Log1p => map_z::<T>(x, out, true, log1p),
        Log2 => map_z::<T>(x, out, true, |z| z.ln() / std::f64::consts::LN_2),
        Log10 => map_z::<T>(x, out, true, |z| z.ln() / std::f64::consts::LN_10),
        Sin => map_z::<T>(x, out, true, |z| z.sin()),
        Cos => map_z::<T>(x, out, true, |z| z.cos()),
        Tan => map_z::<T>(x, out, true, cmath::tan),
        Asin => map_z::<T>(x, out, true, cmath::asin),
        Acos => map_z::<T>(x, out, true, cmath::acos),
        Atan => map_z::<T>(x, out, true, |z| z.atan()),
        Sinh => map_z::<T>(x, out, true, cmath::sinh),
        Cosh => map_z::<T>(x, out, true, cmath::cosh),
        Tanh => map_z::<T>(x, out, true, cmath::tanh),
        Asinh => map_z::<T>(x, out, true, cmath::asinh),
        Acosh => map_z::<T>(x, out, true, cmath::acosh),
        Atanh => map_z::<T>(x, out, true, cmath::atanh),
        Floor | Ceil | Trunc | BitwiseInvert | Signbit => Err(Error::UnsupportedDType {
            op: op.name(),
            dtype: T::DTYPE.to_string(),
        }),
    }
}

/// `out = op(x)` for a complex `x` (the result dtype decided by [`UnaryOp::dtypes`]).
pub(crate) fn unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    match x.dtype() {
        DType::Complex64 => unary_t::<C32>(op, x, out),
        DType::Complex128 => unary_t::<C64>(op, x, out),
        d => Err(Error::DTypeMismatch(format!(
            "internal: complex {} given {d}",
            op.name()
        ))),
    }
}

/// `x ** y`: `x ** 0 = 1` (also for `x = 0`), `0 ** y = 0` for `Re(y) > 0`, else `exp(y log x)`.
fn pow(x: Z, y: Z) -> Z {
    if y.re == 0.0 && y.im == 0.0 {
        return Complex::new(1.0, 0.0);
    }
    if x.re == 0.0 && x.im == 0.0 && y.im == 0.0 && y.re > 0.0 {
        return Complex::new(0.0, 0.0);
    }
    if y.im == 0.0 && y.re == y.re.round() && y.re.abs() <= 64.0 {
        // Integer powers by repeated squaring: exact for small Gaussian integers, as NumPy.
        let mut n = y.re.abs() as u32;
        let (mut base, mut acc) = (x, Complex::new(1.0, 0.0));
        while n > 0 {
            if n & 1 == 1 {
                acc *= base;
            }
            base *= base;
            n >>= 1;
        }
        return if y.re < 0.0 {
            div(Complex::new(1.0, 0.0), acc)
        } else {
            acc
        };
    }
    (y * x.ln()).exp()
}

fn binary_t<T: Cx>(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    use BinaryOp::*;
    let arith = |f: fn(Z, Z) -> Z, grain: usize| {
        map2::<T, T, T, _>(x, y, out, grain, move |a: T, b: T| {
            T::from_z(f(a.z(), b.z()))
        })
    };
    match op {
        Add => map2::<T, T, T, _>(x, y, out, GRAIN_CHEAP, |a: T, b: T| {
            T::from_z(a.z() + b.z())
        }),
        Subtract => arith(|a, b| a - b, GRAIN_CHEAP),
        Multiply => arith(|a, b| a * b, GRAIN_CHEAP),
        Divide => arith(div, GRAIN_CHEAP),
        Pow => arith(pow, GRAIN_HEAVY),
        Equal => map2::<T, T, B8, _>(x, y, out, GRAIN_CHEAP, |a: T, b: T| B8::new(a == b)),
        NotEqual => map2::<T, T, B8, _>(x, y, out, GRAIN_CHEAP, |a: T, b: T| B8::new(a != b)),
        _ => Err(Error::UnsupportedDType {
            op: op.name(),
            dtype: T::DTYPE.to_string(),
        }),
    }
}

/// `out = op(x, y)` for complex `x`, `y` of one dtype (broadcast to `out`'s shape).
pub(crate) fn binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    match x.dtype() {
        DType::Complex64 => binary_t::<C32>(op, x, y, out),
        DType::Complex128 => binary_t::<C64>(op, x, y, out),
        d => Err(Error::DTypeMismatch(format!(
            "internal: complex {} given {d}",
            op.name()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smith_division_and_powers() {
        let q = div(Complex::new(1.0, 2.0), Complex::new(3.0, -4.0));
        assert!((q - Complex::new(-0.2, 0.4)).norm() < 1e-15);
        let big = div(Complex::new(1e300, 1e300), Complex::new(1e300, 1e300));
        assert!((big - Complex::new(1.0, 0.0)).norm() < 1e-15);
        assert_eq!(
            pow(Complex::new(1.0, 1.0), Complex::new(2.0, 0.0)),
            Complex::new(0.0, 2.0)
        );
        assert_eq!(
            pow(Complex::new(0.0, 0.0), Complex::new(0.0, 0.0)),
            Complex::new(1.0, 0.0)
        );
    }

    #[test]
    fn small_argument_functions_are_accurate() {
        // Against the series to second order (the third-order terms are ~1e-30, far below
        // the 1e-26 spacing of doubles near 1e-10): exp(z) - 1 = z + z^2/2, log(1 + z) = z - z^2/2.
        let (a, b) = (1e-10f64, -2e-10f64);
        let z = Complex::new(a, b);
        let z2 = Complex::new(a * a - b * b, 2.0 * a * b);
        let e = expm1(z);
        assert!((e.re - (a + z2.re / 2.0)).abs() < 1e-24, "{e}");
        assert!((e.im - (b + z2.im / 2.0)).abs() < 1e-24, "{e}");
        let l = log1p(z);
        assert!((l.re - (a - z2.re / 2.0)).abs() < 1e-24, "{l}");
        assert!((l.im - (b - z2.im / 2.0)).abs() < 1e-24, "{l}");
        assert_eq!(sign(Complex::new(3.0, -4.0)), Complex::new(0.6, -0.8));
    }
}
