//! Elementwise functions of two arrays, and `where`.

use half::{bf16, f16};

use super::arith::{via2, Bits, Num};
use super::element::{dispatch, dispatch_all, Elem, B8};
use super::float2;
use super::iter::{elem_ptr, map2, map3, Plan, GRAIN_CHEAP, GRAIN_HEAVY};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::BinaryOp;

/// A same-dtype numeric function of two arguments ([`Num`] method).
trait NumBin {
    fn apply<T: Num>(a: T, b: T) -> T;
}
/// A bitwise function of two arguments ([`Bits`] method).
trait BitsBin {
    fn apply<T: Bits>(a: T, b: T) -> T;
}
/// A comparison.
trait CmpBin {
    fn apply<T: PartialOrd>(a: T, b: T) -> bool;
}
/// A float function of two arguments: f32 and f64 versions (16-bit floats through f32).
trait FloatBin {
    const HEAVY: bool;
    fn f32(a: f32, b: f32) -> f32;
    fn f64(a: f64, b: f64) -> f64;
}

macro_rules! markers {
    ($tr:ident, $bound:ident, $out:ty; $($name:ident => |$a:ident, $b:ident| $e:expr),* $(,)?) => {$(
        struct $name;
        impl $tr for $name {
            #[inline(always)]
            fn apply<T: $bound>($a: T, $b: T) -> $out {
                $e
            }
        }
    )*};
}
markers!(NumBin, Num, T;
    AddK => |a, b| a.add(b),
    SubK => |a, b| a.sub(b),
    MulK => |a, b| a.mul(b),
    FloorDivK => |a, b| a.floordiv(b),
    RemK => |a, b| a.rem(b),
    PowK => |a, b| a.pow(b),
    MaxK => |a, b| a.maxn(b),
    MinK => |a, b| a.minn(b),
);
markers!(BitsBin, Bits, T;
    AndK => |a, b| a.and(b),
    OrK => |a, b| a.or(b),
    XorK => |a, b| a.xor(b),
    ShlK => |a, b| a.shl(b),
    ShrK => |a, b| a.shr(b),
);
markers!(CmpBin, PartialOrd, bool;
    EqK => |a, b| a == b,
    NeK => |a, b| a != b,
    LtK => |a, b| a < b,
    LeK => |a, b| a <= b,
    GtK => |a, b| a > b,
    GeK => |a, b| a >= b,
);

struct DivK;
impl FloatBin for DivK {
    const HEAVY: bool = false;
    #[inline(always)]
    fn f32(a: f32, b: f32) -> f32 {
        a / b
    }
    #[inline(always)]
    fn f64(a: f64, b: f64) -> f64 {
        a / b
    }
}
struct Atan2K;
impl FloatBin for Atan2K {
    const HEAVY: bool = true;
    #[inline(always)]
    fn f32(a: f32, b: f32) -> f32 {
        a.atan2(b)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64) -> f64 {
        a.atan2(b)
    }
}

struct CopysignK;
impl FloatBin for CopysignK {
    const HEAVY: bool = false;
    #[inline(always)]
    fn f32(a: f32, b: f32) -> f32 {
        a.copysign(b)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64) -> f64 {
        a.copysign(b)
    }
}
struct HypotK;
impl FloatBin for HypotK {
    const HEAVY: bool = true;
    #[inline(always)]
    fn f32(a: f32, b: f32) -> f32 {
        a.hypot(b)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64) -> f64 {
        a.hypot(b)
    }
}
struct LogaddexpK;
impl FloatBin for LogaddexpK {
    const HEAVY: bool = true;
    #[inline(always)]
    fn f32(a: f32, b: f32) -> f32 {
        float2::logaddexp_f32(a, b)
    }
    #[inline(always)]
    fn f64(a: f64, b: f64) -> f64 {
        float2::logaddexp_f64(a, b)
    }
}

/// `nextafter` on the bits of each float type (16-bit types step in their own precision).
fn nextafter(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    use float2::nextafter_bits as nb;
    match x.dtype() {
        DType::Float32 => map2::<f32, f32, f32, _>(x, y, out, GRAIN_CHEAP, nb),
        DType::Float64 => map2::<f64, f64, f64, _>(x, y, out, GRAIN_CHEAP, nb),
        // Equal arguments give `y` for every type (the array API standard: `-0` toward `+0` is
        // `+0`); NumPy's float16 loop returns `x` on some machines and `y` on others.
        DType::Float16 => map2::<f16, f16, f16, _>(x, y, out, GRAIN_CHEAP, nb),
        DType::BFloat16 => map2::<bf16, bf16, bf16, _>(x, y, out, GRAIN_CHEAP, nb),
        d => Err(unsupported(op, d)),
    }
}

fn unsupported(op: BinaryOp, dtype: DType) -> Error {
    Error::UnsupportedDType {
        op: op.name(),
        dtype: dtype.to_string(),
    }
}

fn num<K: NumBin>(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    let heavy = matches!(
        op,
        BinaryOp::Pow | BinaryOp::FloorDivide | BinaryOp::Remainder
    );
    let grain = if heavy { GRAIN_HEAVY } else { GRAIN_CHEAP };
    dispatch!(x.dtype(), T => map2::<T, T, T, _>(x, y, out, grain, K::apply::<T>))
}

fn bits<K: BitsBin>(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    fn go<T: Bits, K: BitsBin>(x: &Array, y: &Array, out: &Array) -> Result<()> {
        map2::<T, T, T, _>(x, y, out, GRAIN_CHEAP, K::apply::<T>)
    }
    match x.dtype() {
        DType::Bool => go::<B8, K>(x, y, out),
        DType::Int8 => go::<i8, K>(x, y, out),
        DType::Int16 => go::<i16, K>(x, y, out),
        DType::Int32 => go::<i32, K>(x, y, out),
        DType::Int64 => go::<i64, K>(x, y, out),
        DType::UInt8 => go::<u8, K>(x, y, out),
        DType::UInt16 => go::<u16, K>(x, y, out),
        DType::UInt32 => go::<u32, K>(x, y, out),
        DType::UInt64 => go::<u64, K>(x, y, out),
        d => Err(unsupported(op, d)),
    }
}

fn cmp<K: CmpBin>(x: &Array, y: &Array, out: &Array) -> Result<()> {
    dispatch!(x.dtype(), T => map2(x, y, out, GRAIN_CHEAP, |a: T, b: T| B8::new(K::apply(a, b))))
}

fn float<K: FloatBin>(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    let grain = if K::HEAVY { GRAIN_HEAVY } else { GRAIN_CHEAP };
    match x.dtype() {
        DType::Float32 => map2::<f32, f32, f32, _>(x, y, out, grain, K::f32),
        DType::Float64 => map2::<f64, f64, f64, _>(x, y, out, grain, K::f64),
        DType::Float16 => map2(x, y, out, grain, |a: f16, b: f16| via2(a, b, K::f32)),
        DType::BFloat16 => map2(x, y, out, grain, |a: bf16, b: bf16| via2(a, b, K::f32)),
        d => Err(unsupported(op, d)),
    }
}

/// True when some element of the signed-integer array `y` is negative.
fn any_negative<T: Elem + Num>(y: &Array) -> Result<bool> {
    let p = elem_ptr::<T>(y)?;
    let plan = Plan::new(y.shape(), [y.layout().strides()]);
    let mut neg = false;
    plan.for_runs(0, plan.size(), |_, [o], [s], n| {
        for i in 0..n as isize {
            // SAFETY: offsets come from the array's layout.
            neg |= unsafe { *p.get::<T>().offset(o + i * s) } < T::default();
        }
    });
    Ok(neg)
}

/// `out = op(x, y)`; `x` and `y` have the op's computation dtype and `out`'s shape (broadcast
/// views), `out` has the result dtype.
pub(crate) fn binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    use BinaryOp::*;
    match op {
        Add => num::<AddK>(op, x, y, out),
        Subtract => num::<SubK>(op, x, y, out),
        Multiply => num::<MulK>(op, x, y, out),
        FloorDivide => num::<FloorDivK>(op, x, y, out),
        Remainder => num::<RemK>(op, x, y, out),
        Pow => {
            let neg = match y.dtype() {
                DType::Int8 => any_negative::<i8>(y)?,
                DType::Int16 => any_negative::<i16>(y)?,
                DType::Int32 => any_negative::<i32>(y)?,
                DType::Int64 => any_negative::<i64>(y)?,
                _ => false,
            };
            if neg {
                return Err(Error::Value(
                    "Integers to negative integer powers are not allowed.".into(),
                ));
            }
            num::<PowK>(op, x, y, out)
        }
        Maximum => num::<MaxK>(op, x, y, out),
        Minimum => num::<MinK>(op, x, y, out),
        Divide => float::<DivK>(op, x, y, out),
        Atan2 => float::<Atan2K>(op, x, y, out),
        Copysign => float::<CopysignK>(op, x, y, out),
        Hypot => float::<HypotK>(op, x, y, out),
        Logaddexp => float::<LogaddexpK>(op, x, y, out),
        Nextafter => nextafter(op, x, y, out),
        BitwiseAnd => bits::<AndK>(op, x, y, out),
        BitwiseOr => bits::<OrK>(op, x, y, out),
        BitwiseXor => bits::<XorK>(op, x, y, out),
        BitwiseLeftShift => bits::<ShlK>(op, x, y, out),
        BitwiseRightShift => bits::<ShrK>(op, x, y, out),
        LogicalAnd => map2(x, y, out, GRAIN_CHEAP, |a: B8, b: B8| {
            B8::new(a.get() & b.get())
        }),
        LogicalOr => map2(x, y, out, GRAIN_CHEAP, |a: B8, b: B8| {
            B8::new(a.get() | b.get())
        }),
        LogicalXor => map2(x, y, out, GRAIN_CHEAP, |a: B8, b: B8| {
            B8::new(a.get() ^ b.get())
        }),
        Equal => cmp::<EqK>(x, y, out),
        NotEqual => cmp::<NeK>(x, y, out),
        Less => cmp::<LtK>(x, y, out),
        LessEqual => cmp::<LeK>(x, y, out),
        Greater => cmp::<GtK>(x, y, out),
        GreaterEqual => cmp::<GeK>(x, y, out),
    }
}

/// `out = c ? x : y`; all broadcast to `out`'s shape, `x`, `y` and `out` of one dtype.
pub(crate) fn where_(c: &Array, x: &Array, y: &Array, out: &Array) -> Result<()> {
    dispatch_all!(out.dtype(), T => map3(c, x, y, out, GRAIN_CHEAP, |c: B8, a: T, b: T| {
        if c.get() { a } else { b }
    }))
}

#[cfg(test)]
mod tests {
    use crate::dtype::{DType, Scalar};
    use crate::layout::IndexItem;
    use crate::ops::{binary, binary_into, where_, BinaryOp};
    use crate::{Array, Device};
    use half::f16;

    fn arr<T: crate::array::HostElement>(v: Vec<T>) -> Array {
        let n = v.len();
        Array::from_vec(v, &[n], Device::Cpu).unwrap()
    }

    #[test]
    fn integer_semantics() {
        let a = arr(vec![7i32, -7, 7, -7, i32::MIN, 5]);
        let b = arr(vec![2i32, 2, -2, -2, -1, 0]);
        let get = |op| binary(op, &a, &b).unwrap().to_vec::<i32>().unwrap();
        assert_eq!(get(BinaryOp::FloorDivide), vec![3, -4, -4, 3, i32::MIN, 0]);
        assert_eq!(get(BinaryOp::Remainder), vec![1, 1, -1, -1, 0, 0]);
        assert_eq!(get(BinaryOp::Add), vec![9, -5, 5, -9, i32::MAX, 5]);
        assert_eq!(get(BinaryOp::Multiply), vec![14, -14, -14, 14, i32::MIN, 0]);
        let d = binary(BinaryOp::Divide, &a, &b).unwrap();
        assert_eq!(d.dtype(), DType::Float64);
        assert_eq!(d.to_vec::<f64>().unwrap()[5], f64::INFINITY);
        assert!(binary(BinaryOp::Pow, &a, &b).is_err());
        let e = arr(vec![2i32, 0, 3, 1, 2, 31]);
        assert_eq!(
            binary(BinaryOp::Pow, &a, &e)
                .unwrap()
                .to_vec::<i32>()
                .unwrap(),
            vec![49, 1, 343, -7, 0, 5i32.wrapping_pow(31)]
        );
        let s = arr(vec![1i8, -128, 64, -1]);
        let sh = arr(vec![7i8, 9, 1, 100]);
        assert_eq!(
            binary(BinaryOp::BitwiseLeftShift, &s, &sh)
                .unwrap()
                .to_vec::<i8>()
                .unwrap(),
            vec![-128, 0, -128, 0]
        );
        assert_eq!(
            binary(BinaryOp::BitwiseRightShift, &s, &sh)
                .unwrap()
                .to_vec::<i8>()
                .unwrap(),
            vec![0, -1, 32, -1]
        );
        let u = arr(vec![250u8, 3]);
        let v = arr(vec![10u8, 5]);
        assert_eq!(
            binary(BinaryOp::Add, &u, &v)
                .unwrap()
                .to_vec::<u8>()
                .unwrap(),
            vec![4, 8]
        );
        assert_eq!(
            binary(BinaryOp::Subtract, &u, &v)
                .unwrap()
                .to_vec::<u8>()
                .unwrap(),
            vec![240, 254]
        );
        // Mixed kinds promote: uint8 + int8 -> int16.
        let m = binary(BinaryOp::Add, &u, &arr(vec![-1i8, -1])).unwrap();
        assert_eq!(m.to_vec::<i16>().unwrap(), vec![249, 2]);
    }

    #[test]
    fn float_semantics() {
        let nan = f64::NAN;
        let a = arr(vec![1.0f64, nan, 3.0, -7.5, 0.0, -0.0]);
        let b = arr(vec![nan, 2.0, 2.0, 2.0, -0.0, 0.0]);
        let get = |op| binary(op, &a, &b).unwrap().to_vec::<f64>().unwrap();
        let mx = get(BinaryOp::Maximum);
        assert!(mx[0].is_nan() && mx[1].is_nan());
        assert_eq!(mx[2], 3.0);
        let mn = get(BinaryOp::Minimum);
        assert!(mn[0].is_nan() && mn[1].is_nan());
        assert_eq!(get(BinaryOp::Remainder)[3], 0.5);
        assert_eq!(get(BinaryOp::FloorDivide)[3], -4.0);
        let cmp = |op| binary(op, &a, &b).unwrap().to_bytes().unwrap();
        assert_eq!(cmp(BinaryOp::Equal), vec![0, 0, 0, 0, 1, 1]);
        assert_eq!(cmp(BinaryOp::NotEqual), vec![1, 1, 1, 1, 0, 0]);
        assert_eq!(cmp(BinaryOp::Less), vec![0, 0, 0, 1, 0, 0]);
        assert_eq!(cmp(BinaryOp::GreaterEqual), vec![0, 0, 1, 0, 1, 1]);
        let p = binary(
            BinaryOp::Pow,
            &arr(vec![2.0f32, -8.0]),
            &arr(vec![0.5f32, 3.0]),
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        assert_eq!(p, vec![2f32.sqrt(), -512.0]);
        let at = binary(
            BinaryOp::Atan2,
            &arr(vec![1.0f32, -0.0]),
            &arr(vec![1.0f32, -1.0]),
        )
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
        assert_eq!(at, vec![std::f32::consts::FRAC_PI_4, -std::f32::consts::PI]);
        let h = binary(
            BinaryOp::Add,
            &arr(vec![f16::from_f32(1.0)]),
            &arr(vec![f16::from_f32(1.0 / 2048.0)]),
        )
        .unwrap();
        assert_eq!(h.to_vec::<f16>().unwrap(), vec![f16::ONE]);
    }

    #[test]
    fn broadcasting_views_and_scalars() {
        let a = Array::from_vec((0..12).map(|i| i as f32).collect(), &[3, 4], Device::Cpu).unwrap();
        let col = Array::from_vec(vec![100.0f32, 200.0, 300.0], &[3, 1], Device::Cpu).unwrap();
        let r = binary(BinaryOp::Add, &a, &col).unwrap();
        assert_eq!(r.to_vec::<f32>().unwrap()[5], 205.0);
        let s = Array::scalar(Scalar::Float(2.0), DType::Float32, Device::Cpu).unwrap();
        let r = binary(BinaryOp::Multiply, &s, &a.t()).unwrap();
        assert_eq!(r.shape(), &[4, 3]);
        assert_eq!(r.to_vec::<f32>().unwrap()[..3], [0.0, 8.0, 16.0]);
        let rev = a
            .index(&[
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: Some(-1),
                },
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: Some(-3),
                },
            ])
            .unwrap();
        let r = binary(BinaryOp::Subtract, &rev, &s).unwrap();
        assert_eq!(
            r.to_vec::<f32>().unwrap(),
            vec![9.0, 6.0, 5.0, 2.0, 1.0, -2.0]
        );
        let e = Array::from_vec(Vec::<i64>::new(), &[0, 4], Device::Cpu).unwrap();
        assert_eq!(
            binary(
                BinaryOp::Add,
                &e,
                &a.index(&[IndexItem::Int(0)])
                    .unwrap()
                    .astype(DType::Int64)
                    .unwrap()
            )
            .unwrap()
            .shape(),
            &[0, 4]
        );
        // Large, parallel, scalar right operand.
        let n = 1_000_000;
        let big = Array::from_vec((0..n).map(|i| i as f32).collect(), &[n], Device::Cpu).unwrap();
        let r = binary(BinaryOp::Add, &big, &s)
            .unwrap()
            .to_vec::<f32>()
            .unwrap();
        assert!(r.iter().enumerate().all(|(i, &v)| v == i as f32 + 2.0));
        let r = binary(BinaryOp::Less, &s, &big)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert!(r.iter().enumerate().all(|(i, &v)| v == (i > 2) as u8));
    }

    #[test]
    fn in_place_and_where() {
        let a = arr(vec![1i32, 2, 3, 4]);
        binary_into(BinaryOp::Add, &a, &arr(vec![10i32]), &a).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![11, 12, 13, 14]);
        let rev = a
            .index(&[IndexItem::Slice {
                start: None,
                stop: None,
                step: Some(-1),
            }])
            .unwrap();
        binary_into(BinaryOp::Subtract, &a, &rev, &a).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![-3, -1, 1, 3]);
        let c = Array::from_bytes(&[1, 0, 1, 0], &[4], DType::Bool, Device::Cpu).unwrap();
        let w = where_(&c, &a, &arr(vec![0.5f32])).unwrap();
        assert_eq!(w.dtype(), DType::Float64);
        assert_eq!(w.to_vec::<f64>().unwrap(), vec![-3.0, 0.5, 1.0, 0.5]);
        let l = binary(BinaryOp::LogicalXor, &c, &a)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert_eq!(l, vec![0, 1, 0, 1]);
        let b = binary(BinaryOp::Add, &c, &c).unwrap();
        assert_eq!(b.dtype(), DType::Bool);
        assert_eq!(b.to_bytes().unwrap(), vec![1, 0, 1, 0]);
    }
}
