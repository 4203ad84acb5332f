//! Copies between any two layouts with dtype conversion (`astype`, assignment, `copy`).

use super::element::{cast, dispatch_all};
use super::iter::{map1, GRAIN_CHEAP};
use crate::array::Array;
use crate::error::Result;

/// Byte range `[lo, hi)` the array's elements can touch, or `None` when empty.
fn byte_span(a: &Array) -> Option<(usize, usize)> {
    let (lo, hi) = a.layout().span()?;
    let base = a.buffer().host_ptr()? as usize;
    let size = a.dtype().size();
    Some((base + lo * size, base + hi * size))
}

/// True when writing `dst` could change elements of `src` that are still to be read.
fn overlaps(src: &Array, dst: &Array) -> bool {
    if !src.shares_buffer(dst) {
        return false;
    }
    match (byte_span(src), byte_span(dst)) {
        (Some((a0, a1)), Some((b0, b1))) => a0 < b1 && b0 < a1,
        _ => false,
    }
}

/// Writes `src` (already broadcast to `dst`'s shape) into `dst`, converting dtypes as NumPy's
/// `astype` does. Overlapping memory gives NumPy's result: the source is read completely first.
pub(crate) fn copy_cast(src: &Array, dst: &Array) -> Result<()> {
    if dst.size() == 0 {
        return Ok(());
    }
    if overlaps(src, dst) {
        if src.dtype() == dst.dtype() && src.layout() == dst.layout() {
            return Ok(());
        }
        let tmp = Array::empty(src.shape(), src.dtype(), src.device())?;
        convert(src, &tmp)?;
        return convert(&tmp, dst);
    }
    convert(src, dst)
}

fn convert(src: &Array, dst: &Array) -> Result<()> {
    dispatch_all!(src.dtype(), S => dispatch_all!(dst.dtype(), D => {
        map1::<S, D, _>(src, dst, GRAIN_CHEAP, cast::<S, D>)
    }))
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::layout::IndexItem;
    use crate::{Array, Device};
    use half::{bf16, f16};

    fn slice(start: Option<isize>, stop: Option<isize>, step: Option<isize>) -> IndexItem {
        IndexItem::Slice { start, stop, step }
    }

    #[test]
    fn astype_every_pair_round_trips_small_ints() {
        let vals: Vec<i8> = vec![0, 1, 2, 3, 5, 7, 100, 126];
        let a = Array::from_vec(vals.clone(), &[8], Device::Cpu).unwrap();
        for d in DType::ALL {
            if d == DType::Bool {
                continue;
            }
            let b = a.astype(d).unwrap();
            for e in DType::ALL {
                if e == DType::Bool {
                    continue;
                }
                let c = b.astype(e).unwrap().astype(DType::Int8).unwrap();
                let got = c.to_vec::<i8>().unwrap();
                if matches!(d, DType::BFloat16) || matches!(e, DType::BFloat16) {
                    // bfloat16 keeps 8 bits: 126 -> 126, 100 -> 100 (exact), fine.
                }
                assert_eq!(got, vals, "{d} -> {e}");
            }
        }
    }

    #[test]
    fn float_conversions_match_numpy() {
        let a = Array::from_vec(
            vec![-2.7f64, -0.5, 0.0, 0.5, 2.7, 1e10, f64::NAN, f64::INFINITY],
            &[8],
            Device::Cpu,
        )
        .unwrap();
        assert_eq!(
            a.astype(DType::Int32).unwrap().to_vec::<i32>().unwrap(),
            vec![-2, 0, 0, 0, 2, i32::MIN, i32::MIN, i32::MIN]
        );
        assert_eq!(
            a.astype(DType::Int64).unwrap().to_vec::<i64>().unwrap(),
            vec![-2, 0, 0, 0, 2, 10_000_000_000, i64::MIN, i64::MIN]
        );
        let b = a.astype(DType::Bool).unwrap();
        assert_eq!(b.to_bytes().unwrap(), vec![1, 1, 0, 1, 1, 1, 1, 1]);
        let h = a.astype(DType::Float16).unwrap().to_vec::<f16>().unwrap();
        assert_eq!(h[4], f16::from_f64(2.7));
        assert_eq!(h[5], f16::INFINITY);
        assert!(h[6].is_nan());
        let bf = a.astype(DType::BFloat16).unwrap().to_vec::<bf16>().unwrap();
        assert_eq!(bf[5], bf16::from_f64(1e10));
        let f = b.astype(DType::Float32).unwrap().to_vec::<f32>().unwrap();
        assert_eq!(f, vec![1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    }

    /// f64 -> f16/bf16 rounds once, to nearest even, as NumPy: checked against the neighbours
    /// of each result (exact in f64), on values near the midpoints between 16-bit floats.
    #[test]
    fn f64_to_16_bit_floats_round_once() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut vals = vec![
            0.579_833_974_099_027_9,
            3.838_867_155_412_667,
            -1.309_082_090_786_237_3,
        ];
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A 16-bit float midpoint nudged by up to a few f32 units: the double-rounding zone.
            let bits = (x % 0x7bff) as u16;
            let h = f16::from_bits(bits).to_f64();
            let next = f16::from_bits(bits + 1).to_f64();
            let nudge = ((x >> 20) % 9) as f64 - 4.0;
            let mid = (h + next) / 2.0;
            let v = mid + nudge * mid * f32::EPSILON as f64 / 8.0;
            vals.push(if x >> 63 == 1 { -v } else { v });
        }
        let a = Array::from_vec(vals.clone(), &[vals.len()], Device::Cpu).unwrap();
        let h = a.astype(DType::Float16).unwrap().to_vec::<f16>().unwrap();
        let b = a.astype(DType::BFloat16).unwrap().to_vec::<bf16>().unwrap();
        for (i, &v) in vals.iter().enumerate() {
            let nearest = |got: f64, up: f64, down: f64, even: bool| {
                let (e, eu, ed) = ((v - got).abs(), (v - up).abs(), (v - down).abs());
                e < eu.min(ed) || (e == eu.min(ed) && even)
            };
            let hb = h[i].to_bits();
            let (u, d) = (f16::from_bits(hb + 1), f16::from_bits(hb.wrapping_sub(1)));
            assert!(
                h[i].is_infinite() || nearest(h[i].to_f64(), u.to_f64(), d.to_f64(), hb & 1 == 0),
                "f16 of {v:e}: got {}",
                h[i]
            );
            let bb = b[i].to_bits();
            let (u, d) = (bf16::from_bits(bb + 1), bf16::from_bits(bb.wrapping_sub(1)));
            assert!(
                nearest(b[i].to_f64(), u.to_f64(), d.to_f64(), bb & 1 == 0),
                "bf16 of {v:e}: got {}",
                b[i]
            );
        }
    }

    #[test]
    fn strided_broadcast_and_negative_views() {
        let a = Array::from_vec((0..12).collect::<Vec<i32>>(), &[3, 4], Device::Cpu).unwrap();
        let r = a
            .index(&[slice(None, None, Some(-1)), slice(None, None, Some(-2))])
            .unwrap();
        assert_eq!(
            r.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap(),
            vec![11.0, 9.0, 7.0, 5.0, 3.0, 1.0]
        );
        let t = a.t().copy().unwrap();
        assert_eq!(
            t.to_vec::<i32>().unwrap(),
            vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
        );
        let row = Array::from_vec(vec![1u8, 2, 3], &[3], Device::Cpu).unwrap();
        let b = row
            .broadcast_to(&[2, 3])
            .unwrap()
            .astype(DType::Int16)
            .unwrap();
        assert_eq!(b.to_vec::<i16>().unwrap(), vec![1, 2, 3, 1, 2, 3]);
        // A transposed destination.
        let dst = Array::empty(&[4, 3], DType::Int64, Device::Cpu).unwrap();
        dst.t().assign(&a).unwrap();
        assert_eq!(
            dst.to_vec::<i64>().unwrap(),
            vec![0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]
        );
        // 0-d and empty.
        let s = Array::from_vec(vec![2.5f32], &[], Device::Cpu).unwrap();
        assert_eq!(
            s.astype(DType::Int8).unwrap().to_vec::<i8>().unwrap(),
            vec![2]
        );
        let e = Array::from_vec(Vec::<f32>::new(), &[0, 3], Device::Cpu).unwrap();
        assert_eq!(e.astype(DType::UInt8).unwrap().shape(), &[0, 3]);
    }

    #[test]
    fn overlapping_assignment_reads_source_first() {
        let a = Array::from_vec((0..6).collect::<Vec<i32>>(), &[6], Device::Cpu).unwrap();
        let tail = a.index(&[slice(Some(1), None, None)]).unwrap();
        let head = a.index(&[slice(None, Some(-1), None)]).unwrap();
        tail.assign(&head).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 0, 1, 2, 3, 4]);
        head.assign(&tail).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![0, 1, 2, 3, 4, 4]);
        let rev = a.index(&[slice(None, None, Some(-1))]).unwrap();
        a.assign(&rev).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![4, 4, 3, 2, 1, 0]);
        a.assign(&a).unwrap();
        assert_eq!(a.to_vec::<i32>().unwrap(), vec![4, 4, 3, 2, 1, 0]);
    }

    #[test]
    fn large_parallel_copy() {
        let n = 1_000_003;
        let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
        let a = Array::from_vec(v, &[n], Device::Cpu).unwrap();
        let r = a.index(&[slice(None, None, Some(-1))]).unwrap();
        let c = r.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        assert!(c.iter().enumerate().all(|(i, &x)| x == (n - 1 - i) as f64));
    }
}
