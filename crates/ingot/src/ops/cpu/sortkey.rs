//! Order-preserving unsigned keys of every dtype: sorting the keys as unsigned integers sorts the
//! values in NumPy's ascending order (NaNs last). The GPU kernels use the same transform
//! (`SortKey` in `kernels/sort.metal`).
//!
//! Signed integers flip their sign bit; floats flip every bit when negative and only the sign bit
//! otherwise; every NaN becomes the largest key (so NaNs sort last and compare equal among
//! themselves, which keeps a stable sort stable). With `canon_zero`, `-0.0` takes the key of
//! `+0.0` (they are equal: argsort, unique and searchsorted must not separate them; `sort` keeps
//! the sign of each zero by leaving it off). A descending sort uses the complemented key, which
//! puts NaNs first, as flipping NumPy's ascending order does.

use half::{bf16, f16};

use super::element::{Elem, B8};
use super::radix::Radix;

/// Runs `$body` with `$T` the element type of `$dt` for the real dtypes (bool, integers, floats),
/// which all have sort keys; any other dtype gives `UnsupportedDType` for `$op`.
macro_rules! dispatch_real {
    ($dt:expr, $op:expr, $T:ident => $body:expr) => {{
        use $crate::dtype::DType as __D;
        match $dt {
            __D::Bool => {
                type $T = $crate::ops::cpu::element::B8;
                $body
            }
            __D::Int8 => {
                type $T = i8;
                $body
            }
            __D::Int16 => {
                type $T = i16;
                $body
            }
            __D::Int32 => {
                type $T = i32;
                $body
            }
            __D::Int64 => {
                type $T = i64;
                $body
            }
            __D::UInt8 => {
                type $T = u8;
                $body
            }
            __D::UInt16 => {
                type $T = u16;
                $body
            }
            __D::UInt32 => {
                type $T = u32;
                $body
            }
            __D::UInt64 => {
                type $T = u64;
                $body
            }
            __D::Float16 => {
                type $T = half::f16;
                $body
            }
            __D::BFloat16 => {
                type $T = half::bf16;
                $body
            }
            __D::Float32 => {
                type $T = f32;
                $body
            }
            __D::Float64 => {
                type $T = f64;
                $body
            }
            #[allow(unreachable_patterns)]
            d => Err($crate::error::Error::UnsupportedDType {
                op: $op,
                dtype: d.to_string(),
            }),
        }
    }};
}
pub(crate) use dispatch_real;

/// An unsigned key type, sorted 8 bits at a time.
pub(crate) trait RadixKey: Radix + std::fmt::Debug {
    /// Bytes in the key (radix passes).
    const BYTES: usize;
    /// The largest key (every NaN's).
    const MAX: Self;
    /// Every bit flipped (descending order).
    fn not(self) -> Self;
    /// The key widened to u64 (for packing with an index).
    fn to_u64(self) -> u64;
    /// The key from the low bits of a u64.
    fn from_u64(v: u64) -> Self;
}

macro_rules! radix_key {
    ($($t:ty),*) => {$(
        impl RadixKey for $t {
            const BYTES: usize = std::mem::size_of::<$t>();
            const MAX: Self = <$t>::MAX;
            #[inline(always)]
            fn not(self) -> Self {
                !self
            }
            #[inline(always)]
            fn to_u64(self) -> u64 {
                self as u64
            }
            #[inline(always)]
            fn from_u64(v: u64) -> Self {
                v as $t
            }
        }
    )*};
}
radix_key!(u8, u16, u32, u64);

/// A dtype's element with its order-preserving key.
pub(crate) trait SortKey: Elem {
    /// The unsigned key type of the same width.
    type K: RadixKey;
    /// True for float types (whose largest key is NaN).
    const FLOAT: bool;
    /// The ascending key (`canon_zero`: `-0.0` keys as `+0.0`).
    fn key(self, canon_zero: bool) -> Self::K;
    /// The value of an ascending key (NaN keys give a quiet NaN).
    fn from_key(k: Self::K) -> Self;
}

impl SortKey for B8 {
    type K = u8;
    const FLOAT: bool = false;
    #[inline(always)]
    fn key(self, _: bool) -> u8 {
        self.get() as u8
    }
    #[inline(always)]
    fn from_key(k: u8) -> B8 {
        B8(k)
    }
}

macro_rules! unsigned_key {
    ($($t:ty),*) => {$(
        impl SortKey for $t {
            type K = $t;
            const FLOAT: bool = false;
            #[inline(always)]
            fn key(self, _: bool) -> $t {
                self
            }
            #[inline(always)]
            fn from_key(k: $t) -> $t {
                k
            }
        }
    )*};
}
unsigned_key!(u8, u16, u32, u64);

macro_rules! signed_key {
    ($($t:ty => $u:ty),*) => {$(
        impl SortKey for $t {
            type K = $u;
            const FLOAT: bool = false;
            #[inline(always)]
            fn key(self, _: bool) -> $u {
                (self as $u) ^ (1 << (<$u>::BITS - 1))
            }
            #[inline(always)]
            fn from_key(k: $u) -> $t {
                (k ^ (1 << (<$u>::BITS - 1))) as $t
            }
        }
    )*};
}
signed_key!(i8 => u8, i16 => u16, i32 => u32, i64 => u64);

macro_rules! float_key {
    ($($t:ty => $u:ty),*) => {$(
        impl SortKey for $t {
            type K = $u;
            const FLOAT: bool = true;
            #[inline(always)]
            fn key(self, canon_zero: bool) -> $u {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                if self.is_nan() {
                    return <$u>::MAX;
                }
                let b = self.to_bits();
                if canon_zero && b == SIGN {
                    return SIGN;
                }
                if b & SIGN != 0 {
                    !b
                } else {
                    b | SIGN
                }
            }
            #[inline(always)]
            fn from_key(k: $u) -> $t {
                const SIGN: $u = 1 << (<$u>::BITS - 1);
                <$t>::from_bits(if k & SIGN != 0 { k & !SIGN } else { !k })
            }
        }
    )*};
}
float_key!(f16 => u16, bf16 => u16, f32 => u32, f64 => u64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_like_numpy() {
        let vals = [
            f32::NEG_INFINITY,
            -3.5,
            -1e-40,
            -0.0,
            0.0,
            1e-40,
            2.0,
            f32::INFINITY,
        ];
        let keys: Vec<u32> = vals.iter().map(|v| v.key(false)).collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
        assert_eq!((-0.0f32).key(true), 0.0f32.key(true));
        assert_eq!(f32::NAN.key(false), u32::MAX);
        assert_eq!((-f32::NAN).key(false), u32::MAX);
        for v in vals {
            assert_eq!(f32::from_key(v.key(false)).to_bits(), v.to_bits());
        }
        assert!(f32::from_key(u32::MAX).is_nan());
        let ints = [i16::MIN, -1, 0, 1, i16::MAX];
        let k: Vec<u16> = ints.iter().map(|v| v.key(false)).collect();
        assert!(k.windows(2).all(|w| w[0] < w[1]));
        assert!(ints.iter().all(|&v| i16::from_key(v.key(false)) == v));
        let h = [f16::NEG_INFINITY, f16::from_f32(-1.0), f16::ZERO, f16::MAX];
        let k: Vec<u16> = h.iter().map(|v| v.key(true)).collect();
        assert!(k.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(bf16::NAN.key(false), u16::MAX);
        assert_eq!(B8(1).key(false), 1);
        assert_eq!(u64::MAX.key(false), u64::MAX);
    }
}
