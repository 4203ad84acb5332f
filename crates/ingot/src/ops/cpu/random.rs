//! The samplers of `ingot.random` on the CPU: each Philox block of a draw fills its lanes of the
//! contiguous output (`ops/random.rs` defines the stream, `philox.rs` the per-value math), on all
//! cores for large draws; sorting (key, index) pairs and gathering rows for permutations.

use half::{bf16, f16};
use rayon::prelude::*;

use super::element::{dispatch, Elem};
use super::iter::{chunks, SendPtr, GRAIN_HEAVY};
use super::philox::{
    block, lemire32, lemire64, ln_unit_f32, ln_unit_f64, normal_pair_f32, normal_pair_f64,
    unit_bf16, unit_f16, unit_f32, unit_f64, wide,
};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::op::{Draw, Sampler};

/// Host pointer to the first element of the contiguous `a`.
fn host_ptr(a: &Array, what: &str) -> Result<SendPtr> {
    if !a.is_contiguous() {
        return Err(Error::Value(format!(
            "internal: {what} needs a contiguous array"
        )));
    }
    let base = a
        .buffer()
        .host_ptr()
        .ok_or_else(|| Error::Device(format!("internal: {what} given non-host memory")))?;
    // SAFETY: the layout's offset is inside the buffer (checked when the array was built).
    Ok(SendPtr(unsafe {
        base.add(a.layout().offset() * a.dtype().size())
    }))
}

/// Runs `f(j)` for every block `j` of `0..blocks`, on all cores when there are many.
fn for_blocks(blocks: usize, f: impl Fn(usize) + Sync) {
    match chunks(blocks, GRAIN_HEAVY / 4) {
        None => (0..blocks).for_each(f),
        Some(c) => c.into_par_iter().for_each(|(s, e)| (s..e).for_each(&f)),
    }
}

/// Writes the values of one block (`vals`, one per lane) at `out[j * L ..]`, stopping at `n`.
#[inline]
fn put<T: Copy>(out: SendPtr, n: usize, j: usize, vals: &[T]) {
    let l = vals.len();
    for (k, v) in vals.iter().enumerate() {
        let i = j * l + k;
        if i < n {
            // SAFETY: i < n elements of the contiguous output; blocks write disjoint elements.
            unsafe { *out.get::<T>().add(i) = *v };
        }
    }
}

/// Fills the contiguous `out` with the values of `draw`.
pub(crate) fn fill(draw: &Draw, out: &Array) -> Result<()> {
    let n = out.size();
    let p = host_ptr(out, "random")?;
    let (key, pos) = (draw.key, draw.pos);
    let blk = move |j: usize| block(key, pos + j as u64, 0);
    let dt = out.dtype();
    let unsupported = || Error::UnsupportedDType {
        op: draw.sampler.name(),
        dtype: dt.to_string(),
    };
    let blocks = n.div_ceil(draw.sampler.lanes(dt)? as usize);
    match draw.sampler {
        Sampler::Uniform => match dt {
            DType::Float32 => for_blocks(blocks, |j| put(p, n, j, &blk(j).map(unit_f32))),
            DType::Float16 => for_blocks(blocks, |j| {
                put(p, n, j, &blk(j).map(|w| f16::from_f32(unit_f16(w))))
            }),
            DType::BFloat16 => for_blocks(blocks, |j| {
                put(p, n, j, &blk(j).map(|w| bf16::from_f32(unit_bf16(w))))
            }),
            DType::Float64 => for_blocks(blocks, |j| {
                let w = blk(j);
                put(
                    p,
                    n,
                    j,
                    &[unit_f64(wide(w[0], w[1])), unit_f64(wide(w[2], w[3]))],
                )
            }),
            _ => return Err(unsupported()),
        },
        Sampler::Normal => {
            let f32s = |w: [u32; 4]| {
                let (a, b) = normal_pair_f32(w[0], w[1]);
                let (c, d) = normal_pair_f32(w[2], w[3]);
                [a, b, c, d]
            };
            match dt {
                DType::Float32 => for_blocks(blocks, |j| put(p, n, j, &f32s(blk(j)))),
                DType::Float16 => {
                    for_blocks(blocks, |j| put(p, n, j, &f32s(blk(j)).map(f16::from_f32)))
                }
                DType::BFloat16 => {
                    for_blocks(blocks, |j| put(p, n, j, &f32s(blk(j)).map(bf16::from_f32)))
                }
                DType::Float64 => for_blocks(blocks, |j| {
                    let w = blk(j);
                    let (a, b) = normal_pair_f64(wide(w[0], w[1]), wide(w[2], w[3]));
                    put(p, n, j, &[a, b])
                }),
                _ => return Err(unsupported()),
            }
        }
        Sampler::Integers { low, range } => {
            if !(dt.is_integer() || dt == DType::Bool) {
                return Err(unsupported());
            }
            dispatch!(dt, T => integers::<T>(draw, low, range, p, n))
        }
        Sampler::Keys => {
            if dt != DType::UInt64 {
                return Err(unsupported());
            }
            for_blocks(blocks, |j| {
                let w = blk(j);
                put(p, n, j, &[wide(w[0], w[1]), wide(w[2], w[3])])
            })
        }
    }
    Ok(())
}

/// `low + [0, range)` with Lemire's method; rejected lanes retry with the block's next attempt.
fn integers<T: Elem>(draw: &Draw, low: u64, range: u64, out: SendPtr, n: usize) {
    let (key, pos) = (draw.key, draw.pos);
    let small = range != 0 && range <= 1 << 32;
    let lanes = if small { 4 } else { 2 };
    for_blocks(n.div_ceil(lanes), |j| {
        let b = pos + j as u64;
        let first = block(key, b, 0);
        let mut vals = [T::default(); 4];
        for (l, v) in vals.iter_mut().enumerate().take(lanes) {
            let mut w = first;
            let mut attempt = 0u32;
            let x = loop {
                let r = if small {
                    lemire32(w[l], range)
                } else {
                    lemire64(wide(w[2 * l], w[2 * l + 1]), range)
                };
                if let Some(x) = r {
                    break x;
                }
                attempt += 1;
                w = block(key, b, attempt);
            };
            *v = T::from_u64(low.wrapping_add(x));
        }
        put(out, n, j, &vals[..lanes]);
    });
}

/// Exponential keys `-ln(u1) / p[i]` (+inf where `p[i] <= 0`) of weighted sampling without
/// replacement, `p` and `out` contiguous float32 or float64 of one length.
pub(crate) fn exp_keys(draw: &Draw, p: &Array, out: &Array) -> Result<()> {
    let n = out.size();
    let (pp, po) = (host_ptr(p, "choice")?, host_ptr(out, "choice")?);
    let (key, pos) = (draw.key, draw.pos);
    match out.dtype() {
        DType::Float64 => for_blocks(n.div_ceil(2), |j| {
            let w = block(key, pos + j as u64, 0);
            let mut v = [0.0f64; 2];
            for (l, x) in v.iter_mut().enumerate() {
                let i = (j * 2 + l).min(n - 1);
                let a = wide(w[2 * l], w[2 * l + 1]);
                let u1 = ((1u64 << 53) - (a >> 11)) as f64 * (1.0 / 9_007_199_254_740_992.0);
                // SAFETY: i < n elements of the contiguous input.
                let pi = unsafe { *pp.get::<f64>().add(i) };
                *x = if pi > 0.0 {
                    (0.0 - ln_unit_f64(u1)) / pi
                } else {
                    f64::INFINITY
                };
            }
            put(po, n, j, &v)
        }),
        DType::Float32 => for_blocks(n.div_ceil(4), |j| {
            let w = block(key, pos + j as u64, 0);
            let mut v = [0.0f32; 4];
            for (l, x) in v.iter_mut().enumerate() {
                let i = (j * 4 + l).min(n - 1);
                let u1 = ((1u32 << 24) - (w[l] >> 8)) as f32 * (1.0 / 16_777_216.0);
                // SAFETY: i < n elements of the contiguous input.
                let pi = unsafe { *pp.get::<f32>().add(i) };
                *x = if pi > 0.0 {
                    (0.0 - ln_unit_f32(u1)) / pi
                } else {
                    f32::INFINITY
                };
            }
            put(po, n, j, &v)
        }),
        d => {
            return Err(Error::UnsupportedDType {
                op: "choice",
                dtype: d.to_string(),
            })
        }
    }
    Ok(())
}

/// Categorical samples into the int64 `out`: for each uniform value of the draw (the uniform
/// sampler of the cdf's dtype), the index of the first `cdf` entry above it.
pub(crate) fn categorical(draw: &Draw, cdf: &Array, out: &Array) -> Result<()> {
    let n = out.size();
    let m = cdf.size();
    let (pc, po) = (host_ptr(cdf, "choice")?, host_ptr(out, "choice")?);
    let (key, pos) = (draw.key, draw.pos);
    fn search<F: PartialOrd + Copy>(cdf: *const F, m: usize, u: F) -> i64 {
        let (mut lo, mut hi) = (0usize, m);
        while lo < hi {
            let mid = (lo + hi) / 2;
            // SAFETY: mid < m elements of the contiguous cdf.
            if unsafe { *cdf.add(mid) } > u {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        lo.min(m - 1) as i64
    }
    match cdf.dtype() {
        DType::Float64 => for_blocks(n.div_ceil(2), |j| {
            let w = block(key, pos + j as u64, 0);
            let c = pc.get::<f64>() as *const f64;
            let v = [0, 1].map(|l| search(c, m, unit_f64(wide(w[2 * l], w[2 * l + 1]))));
            put(po, n, j, &v)
        }),
        DType::Float32 => for_blocks(n.div_ceil(4), |j| {
            let w = block(key, pos + j as u64, 0);
            let c = pc.get::<f32>() as *const f32;
            put(po, n, j, &w.map(|x| search(c, m, unit_f32(x))))
        }),
        d => {
            return Err(Error::UnsupportedDType {
                op: "choice",
                dtype: d.to_string(),
            })
        }
    }
    Ok(())
}

/// The indices that sort the uint64 `keys` ascending (ties by index) into the int64 `out`.
pub(crate) fn sort_pairs(keys: &Array, out: &Array) -> Result<()> {
    let n = keys.size();
    let (pk, po) = (
        host_ptr(keys, "permutation")?,
        host_ptr(out, "permutation")?,
    );
    // SAFETY: n contiguous uint64 keys.
    let k = unsafe { std::slice::from_raw_parts(pk.get::<u64>() as *const u64, n) };
    let mut pairs: Vec<(u64, i64)> = k.iter().enumerate().map(|(i, &x)| (x, i as i64)).collect();
    pairs.par_sort_unstable();
    // SAFETY: n contiguous int64 outputs.
    let o = unsafe { std::slice::from_raw_parts_mut(po.get::<i64>(), n) };
    o.par_iter_mut()
        .zip(pairs.par_iter())
        .for_each(|(d, &(_, i))| *d = i);
    Ok(())
}

/// Row `i` of the contiguous `out` = row `idx[i]` of the contiguous `src`, rows of `row_bytes`.
pub(crate) fn gather_rows(src: &Array, idx: &Array, out: &Array, row_bytes: usize) -> Result<()> {
    let rows = idx.size();
    let (ps, pi, po) = (
        host_ptr(src, "gather")?,
        host_ptr(idx, "gather")?,
        host_ptr(out, "gather")?,
    );
    let src_rows = src.nbytes().checked_div(row_bytes).unwrap_or(0);
    // SAFETY: rows contiguous int64 indices.
    let ix = unsafe { std::slice::from_raw_parts(pi.get::<i64>() as *const i64, rows) };
    if let Some(bad) = ix.iter().find(|&&i| i < 0 || i as usize >= src_rows) {
        return Err(Error::Index(format!(
            "internal: row index {bad} outside {src_rows} rows"
        )));
    }
    let copy = |i: usize| {
        // SAFETY: indices checked above; rows of row_bytes inside both buffers, disjoint outputs.
        unsafe {
            std::ptr::copy_nonoverlapping(
                ps.get::<u8>().add(ix[i] as usize * row_bytes),
                po.get::<u8>().add(i * row_bytes),
                row_bytes,
            )
        }
    };
    if rows * row_bytes >= 1 << 20 {
        (0..rows).into_par_iter().for_each(copy);
    } else {
        (0..rows).for_each(copy);
    }
    Ok(())
}
