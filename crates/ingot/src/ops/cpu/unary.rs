//! Elementwise functions of one array.

use half::{bf16, f16};

use super::arith::{via1, Bits, Num};
use super::element::{dispatch, Elem, B8};
use super::iter::{contig1, map1, map1_with, GRAIN_CHEAP, GRAIN_HEAVY};
use super::math;
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::UnaryOp;

/// A same-dtype numeric function ([`Num`] method).
trait NumUn {
    fn apply<T: Num>(v: T) -> T;
}

/// A float function: f32 and f64 versions (16-bit floats go through f32).
trait FloatUn {
    /// Costly enough to split over threads early.
    const HEAVY: bool;
    fn f32(x: f32) -> f32;
    fn f64(x: f64) -> f64;
    /// The function over `len` contiguous f32 elements.
    ///
    /// # Safety
    /// `a` and `o` point to `len` readable / writable elements.
    #[inline(always)]
    unsafe fn slice32(a: *const f32, o: *mut f32, len: usize) {
        unsafe { contig1(a, o, len, Self::f32) }
    }
}

macro_rules! num_unary {
    ($($name:ident => $m:ident),* $(,)?) => {$(
        struct $name;
        impl NumUn for $name {
            #[inline(always)]
            fn apply<T: Num>(v: T) -> T {
                v.$m()
            }
        }
    )*};
}
num_unary!(AbsK => abs_, NegK => neg_, SignK => sign_, SquareK => square_, FloorK => floor_,
    CeilK => ceil_, RoundK => round_, TruncK => trunc_);

macro_rules! float_unary {
    ($($name:ident => ($heavy:expr, $f32:expr, $f64:expr)),* $(,)?) => {$(
        struct $name;
        impl FloatUn for $name {
            const HEAVY: bool = $heavy;
            #[inline(always)]
            fn f32(x: f32) -> f32 {
                let f: fn(f32) -> f32 = $f32;
                f(x)
            }
            #[inline(always)]
            fn f64(x: f64) -> f64 {
                let f: fn(f64) -> f64 = $f64;
                f(x)
            }
        }
    )*};
}
float_unary! {
    SqrtK => (false, f32::sqrt, f64::sqrt),
    ExpK => (true, math::exp_f32, f64::exp),
    Expm1K => (true, |x| (x as f64).exp_m1() as f32, f64::exp_m1),
    LogK => (true, math::log_f32, f64::ln),
    Log1pK => (true, |x| (x as f64).ln_1p() as f32, f64::ln_1p),
    Log2K => (true, |x| (x as f64).log2() as f32, f64::log2),
    Log10K => (true, |x| (x as f64).log10() as f32, f64::log10),
    TanK => (true, |x| (x as f64).tan() as f32, f64::tan),
    AsinK => (true, |x| (x as f64).asin() as f32, f64::asin),
    AcosK => (true, |x| (x as f64).acos() as f32, f64::acos),
    AtanK => (true, |x| (x as f64).atan() as f32, f64::atan),
    SinhK => (true, |x| (x as f64).sinh() as f32, f64::sinh),
    CoshK => (true, |x| (x as f64).cosh() as f32, f64::cosh),
    TanhK => (true, |x| (x as f64).tanh() as f32, f64::tanh),
    AsinhK => (true, |x| (x as f64).asinh() as f32, f64::asinh),
    AcoshK => (true, |x| (x as f64).acosh() as f32, f64::acosh),
    AtanhK => (true, |x| (x as f64).atanh() as f32, f64::atanh),
    ReciprocalK => (false, |x| 1.0 / x, |x| 1.0 / x),
}

struct SinK;
impl FloatUn for SinK {
    const HEAVY: bool = true;
    #[inline(always)]
    fn f32(x: f32) -> f32 {
        math::sin_f32(x)
    }
    #[inline(always)]
    fn f64(x: f64) -> f64 {
        x.sin()
    }
    #[inline(always)]
    unsafe fn slice32(a: *const f32, o: *mut f32, len: usize) {
        unsafe { math::sin_f32_slice(a, o, len) }
    }
}

struct CosK;
impl FloatUn for CosK {
    const HEAVY: bool = true;
    #[inline(always)]
    fn f32(x: f32) -> f32 {
        math::cos_f32(x)
    }
    #[inline(always)]
    fn f64(x: f64) -> f64 {
        x.cos()
    }
    #[inline(always)]
    unsafe fn slice32(a: *const f32, o: *mut f32, len: usize) {
        unsafe { math::cos_f32_slice(a, o, len) }
    }
}

fn internal(op: UnaryOp, dtype: DType) -> Error {
    Error::UnsupportedDType {
        op: op.name(),
        dtype: dtype.to_string(),
    }
}

fn num_map<K: NumUn>(x: &Array, out: &Array) -> Result<()> {
    dispatch!(x.dtype(), T => map1::<T, T, _>(x, out, GRAIN_CHEAP, K::apply::<T>))
}

fn float_map<K: FloatUn>(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    let grain = if K::HEAVY { GRAIN_HEAVY } else { GRAIN_CHEAP };
    match x.dtype() {
        // SAFETY: map1_with hands slice32 `len` valid elements.
        DType::Float32 => map1_with(x, out, grain, K::f32, |a, o, n| unsafe {
            K::slice32(a, o, n)
        }),
        DType::Float64 => map1::<f64, f64, _>(x, out, grain, K::f64),
        DType::Float16 => map1(x, out, grain, |v: f16| via1(v, K::f32)),
        DType::BFloat16 => map1(x, out, grain, |v: bf16| via1(v, K::f32)),
        d => Err(internal(op, d)),
    }
}

/// `out = op(x)`; `x` has the op's computation dtype, `out` its result dtype.
pub(crate) fn unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    use UnaryOp::*;
    let dt = x.dtype();
    match op {
        Abs => num_map::<AbsK>(x, out),
        Negative => num_map::<NegK>(x, out),
        Positive => super::cast::copy_cast(x, out),
        Sign => num_map::<SignK>(x, out),
        Square => num_map::<SquareK>(x, out),
        Floor => num_map::<FloorK>(x, out),
        Ceil => num_map::<CeilK>(x, out),
        Round => num_map::<RoundK>(x, out),
        Trunc => num_map::<TruncK>(x, out),
        Sqrt => float_map::<SqrtK>(op, x, out),
        Exp => float_map::<ExpK>(op, x, out),
        Expm1 => float_map::<Expm1K>(op, x, out),
        Log => float_map::<LogK>(op, x, out),
        Log1p => float_map::<Log1pK>(op, x, out),
        Log2 => float_map::<Log2K>(op, x, out),
        Log10 => float_map::<Log10K>(op, x, out),
        Sin => float_map::<SinK>(op, x, out),
        Cos => float_map::<CosK>(op, x, out),
        Tan => float_map::<TanK>(op, x, out),
        Asin => float_map::<AsinK>(op, x, out),
        Acos => float_map::<AcosK>(op, x, out),
        Atan => float_map::<AtanK>(op, x, out),
        Sinh => float_map::<SinhK>(op, x, out),
        Cosh => float_map::<CoshK>(op, x, out),
        Tanh => float_map::<TanhK>(op, x, out),
        Asinh => float_map::<AsinhK>(op, x, out),
        Acosh => float_map::<AcoshK>(op, x, out),
        Atanh => float_map::<AtanhK>(op, x, out),
        LogicalNot => dispatch!(dt, T => map1(x, out, GRAIN_CHEAP, |v: T| B8::new(!v.nonzero()))),
        BitwiseInvert => bits_map(op, x, out),
        IsNan => dispatch!(dt, T => map1(x, out, GRAIN_CHEAP, |v: T| B8::new(v.is_nan_()))),
        IsInf => {
            dispatch!(dt, T => map1(x, out, GRAIN_CHEAP, |v: T| B8::new(Num::isinf_(v))))
        }
        IsFinite => {
            dispatch!(dt, T => map1(x, out, GRAIN_CHEAP, |v: T| B8::new(Num::isfinite_(v))))
        }
        Reciprocal => float_map::<ReciprocalK>(op, x, out),
        Signbit => dispatch!(dt, T => map1(x, out, GRAIN_CHEAP, |v: T| B8::new(Num::signbit_(v)))),
    }
}

fn bits_map(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    fn go<T: Bits>(x: &Array, out: &Array) -> Result<()> {
        map1(x, out, GRAIN_CHEAP, T::not)
    }
    match x.dtype() {
        DType::Bool => go::<B8>(x, out),
        DType::Int8 => go::<i8>(x, out),
        DType::Int16 => go::<i16>(x, out),
        DType::Int32 => go::<i32>(x, out),
        DType::Int64 => go::<i64>(x, out),
        DType::UInt8 => go::<u8>(x, out),
        DType::UInt16 => go::<u16>(x, out),
        DType::UInt32 => go::<u32>(x, out),
        DType::UInt64 => go::<u64>(x, out),
        d => Err(internal(op, d)),
    }
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::layout::IndexItem;
    use crate::ops::{unary, UnaryOp};
    use crate::{Array, Device};
    use half::f16;

    fn f32s(v: &[f32]) -> Array {
        Array::from_vec(v.to_vec(), &[v.len()], Device::Cpu).unwrap()
    }

    #[test]
    fn float_functions_against_f64() {
        let mut xs = vec![];
        let mut s = 12345u64;
        for _ in 0..5000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            xs.push(((s >> 40) as f32 / (1u64 << 24) as f32) * 1.8 - 0.9);
        }
        let a = f32s(&xs);
        let d = a.astype(DType::Float64).unwrap();
        for op in UnaryOp::ALL {
            if op.class() != crate::ops::op::UnaryClass::Float {
                continue;
            }
            let r = unary(op, &a).unwrap().to_vec::<f32>().unwrap();
            let r64 = unary(op, &d).unwrap().to_vec::<f64>().unwrap();
            for i in 0..xs.len() {
                let want = r64[i];
                if want.is_nan() {
                    assert!(r[i].is_nan(), "{op:?} {}", xs[i]);
                    continue;
                }
                let tol = 3e-7 * want.abs().max(1e-30) + 1e-37;
                assert!(
                    (r[i] as f64 - want).abs() <= tol.max(want.abs() * 2.4e-7),
                    "{op:?}({}) = {} want {}",
                    xs[i],
                    r[i],
                    want
                );
            }
        }
    }

    #[test]
    fn special_values() {
        let a = f32s(&[0.0, -0.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -1.0]);
        let get = |op| unary(op, &a).unwrap().to_vec::<f32>().unwrap();
        let e = get(UnaryOp::Exp);
        assert_eq!(&e[..4], &[1.0, 1.0, f32::INFINITY, 0.0]);
        assert!(e[4].is_nan());
        let l = get(UnaryOp::Log);
        assert_eq!(
            &l[..3],
            &[f32::NEG_INFINITY, f32::NEG_INFINITY, f32::INFINITY]
        );
        assert!(l[3].is_nan() && l[4].is_nan() && l[5].is_nan());
        let s = get(UnaryOp::Sign);
        assert_eq!(&s[..4], &[0.0, 0.0, 1.0, -1.0]);
        assert!(s[4].is_nan());
        let sn = get(UnaryOp::Sin);
        assert_eq!(sn[1].to_bits(), (-0.0f32).to_bits());
        let nan = unary(UnaryOp::IsNan, &a).unwrap().to_bytes().unwrap();
        assert_eq!(nan, vec![0, 0, 0, 0, 1, 0]);
        let inf = unary(UnaryOp::IsInf, &a).unwrap().to_bytes().unwrap();
        assert_eq!(inf, vec![0, 0, 1, 1, 0, 0]);
        let fin = unary(UnaryOp::IsFinite, &a).unwrap().to_bytes().unwrap();
        assert_eq!(fin, vec![1, 1, 0, 0, 0, 1]);
        let r = unary(UnaryOp::Round, &f32s(&[0.5, 1.5, 2.5, -0.5, -1.5]))
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert_eq!(r, vec![0.0, 2.0, 2.0, -0.0, -2.0]);
    }

    #[test]
    fn integers_and_bools() {
        let a = Array::from_vec(vec![-128i8, -3, 0, 5, 127], &[5], Device::Cpu).unwrap();
        let get = |op| unary(op, &a).unwrap().to_vec::<i8>().unwrap();
        assert_eq!(get(UnaryOp::Abs), vec![-128, 3, 0, 5, 127]);
        assert_eq!(get(UnaryOp::Negative), vec![-128, 3, 0, -5, -127]);
        assert_eq!(get(UnaryOp::Sign), vec![-1, -1, 0, 1, 1]);
        assert_eq!(get(UnaryOp::Square), vec![0, 9, 0, 25, 1]);
        assert_eq!(get(UnaryOp::BitwiseInvert), vec![127, 2, -1, -6, -128]);
        assert_eq!(get(UnaryOp::Floor), vec![-128, -3, 0, 5, 127]);
        let n = unary(UnaryOp::LogicalNot, &a).unwrap().to_bytes().unwrap();
        assert_eq!(n, vec![0, 0, 1, 0, 0]);
        let u = Array::from_vec(vec![0u32, 7], &[2], Device::Cpu).unwrap();
        assert_eq!(
            unary(UnaryOp::Negative, &u)
                .unwrap()
                .to_vec::<u32>()
                .unwrap(),
            vec![0, u32::MAX - 6]
        );
        // sqrt of int16 gives float32, of int8 float16.
        let i = Array::from_vec(vec![4i16, 9], &[2], Device::Cpu).unwrap();
        assert_eq!(
            unary(UnaryOp::Sqrt, &i).unwrap().to_vec::<f32>().unwrap(),
            vec![2.0, 3.0]
        );
        let h = unary(UnaryOp::Sqrt, &a).unwrap();
        assert_eq!(h.dtype(), DType::Float16);
        assert_eq!(h.to_vec::<f16>().unwrap()[3], f16::from_f32(5f32.sqrt()));
        let b = Array::from_bytes(&[1, 0], &[2], DType::Bool, Device::Cpu).unwrap();
        let inv = unary(UnaryOp::BitwiseInvert, &b)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert_eq!(inv, vec![0, 1]);
        assert!(unary(UnaryOp::Abs, &b).is_err());
    }

    #[test]
    fn views_and_sizes() {
        let v: Vec<f64> = (0..24).map(|i| i as f64 - 12.0).collect();
        let a = Array::from_vec(v, &[4, 6], Device::Cpu).unwrap();
        let t = a
            .t()
            .index(&[IndexItem::Slice {
                start: None,
                stop: None,
                step: Some(-2),
            }])
            .unwrap();
        let r = unary(UnaryOp::Abs, &t).unwrap();
        assert_eq!(r.shape(), &[3, 4]);
        let want: Vec<f64> = [5, 3, 1]
            .iter()
            .flat_map(|&c| (0..4).map(move |row| ((row * 6 + c) as f64 - 12.0).abs()))
            .collect();
        assert_eq!(r.to_vec::<f64>().unwrap(), want);
        let e = Array::from_vec(Vec::<f32>::new(), &[0], Device::Cpu).unwrap();
        assert_eq!(unary(UnaryOp::Exp, &e).unwrap().size(), 0);
        let z = Array::from_vec(vec![1.0f32], &[], Device::Cpu).unwrap();
        assert_eq!(
            unary(UnaryOp::Exp, &z).unwrap().to_vec::<f32>().unwrap(),
            vec![std::f32::consts::E]
        );
        // Large, parallel, and a broadcast (stride 0) input.
        let n = 300_001;
        let big = Array::from_vec(vec![0.5f32; 1], &[1], Device::Cpu)
            .unwrap()
            .broadcast_to(&[n])
            .unwrap();
        let r = unary(UnaryOp::Sin, &big).unwrap().to_vec::<f32>().unwrap();
        assert!(r.iter().all(|&x| x == 0.5f32.sin()));
        let lin: Vec<f32> = (0..n).map(|i| i as f32 * 1e-4).collect();
        let r = unary(UnaryOp::Exp, &f32s(&lin))
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert!(r
            .iter()
            .zip(&lin)
            .all(|(&y, &x)| ((y as f64) - (x as f64).exp()).abs() <= 2.5e-7 * (x as f64).exp()));
    }
}
