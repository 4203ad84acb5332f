//! Gathers and scatters through index arrays on the CPU (see `ops/gather.rs` for the view `W`
//! whose indexed axis has stride 0 and the element offsets `lin`). Elements move as raw bits of
//! their width.

use rayon::prelude::*;

use super::iter::{elem_ptr, Plan, SendPtr};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Element offsets of every position of `shape` (row-major) with `strides`.
pub(crate) fn offsets_of(shape: &[usize], strides: &[isize]) -> Vec<isize> {
    let n: usize = shape.iter().product();
    let mut out = Vec::with_capacity(n);
    let plan = Plan::new(shape, [strides]);
    plan.for_runs(0, n, |_, [o], [s], len| {
        out.extend((0..len as isize).map(|i| o + i * s));
    });
    out
}

/// The unsigned dtype of an element width (elements move as bits); 16-byte elements
/// (complex128) move as themselves.
fn bits_dtype(d: DType) -> Result<DType> {
    Ok(match d.size() {
        1 => DType::UInt8,
        2 => DType::UInt16,
        4 => DType::UInt32,
        8 => DType::UInt64,
        16 => DType::Complex128,
        _ => {
            return Err(Error::UnsupportedDType {
                op: "indexing",
                dtype: d.to_string(),
            })
        }
    })
}

/// Runs `$body` with `$T` the unsigned type of `$d`'s width.
macro_rules! by_width {
    ($d:expr, $T:ident => $body:expr) => {
        match bits_dtype($d)? {
            DType::UInt8 => {
                type $T = u8;
                $body
            }
            DType::UInt16 => {
                type $T = u16;
                $body
            }
            DType::UInt32 => {
                type $T = u32;
                $body
            }
            DType::Complex128 => {
                type $T = super::element::C64;
                $body
            }
            _ => {
                type $T = u64;
                $body
            }
        }
    };
}

/// The index value `v` counted from the end when negative, or an `Index` error.
#[inline(always)]
fn norm(v: i64, dim: usize, axis: usize) -> Result<i64> {
    let w = if v < 0 { v + dim as i64 } else { v };
    if w < 0 || w >= dim as i64 {
        return Err(Error::Index(format!(
            "index {v} is out of bounds for axis {axis} with size {dim}"
        )));
    }
    Ok(w)
}

/// `lin (+)= idx * stride` over the broadcast shape of the index arrays (`lin`: contiguous int64
/// of that shape; `idx`: int64 broadcast to it). `axis` names the axis in errors.
pub(crate) fn index_offsets(
    lin: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    first: bool,
    axis: usize,
) -> Result<()> {
    let pl = elem_ptr::<i64>(lin)?;
    let pi = elem_ptr::<i64>(idx)?;
    let plan = Plan::new(idx.shape(), [idx.layout().strides()]);
    let mut err = None;
    plan.for_runs(0, plan.size(), |pos, [o], [s], len| {
        for k in 0..len {
            // SAFETY: offsets from the layouts; `lin` is contiguous of the plan's size.
            unsafe {
                let v = *pi.get::<i64>().offset(o + k as isize * s);
                let w = match norm(v, dim, axis) {
                    Ok(w) => w,
                    Err(e) => {
                        err.get_or_insert(e);
                        0
                    }
                };
                let dst = pl.get::<i64>().add(pos + k);
                *dst = if first { 0 } else { *dst } + w * stride as i64;
            }
        }
    });
    err.map_or(Ok(()), Err)
}

/// The pre/post decomposition of `w` around its indexed axis `jaxis`.
struct Split {
    pre: Vec<isize>,
    post: Vec<isize>,
    j: usize,
}

fn split(w: &Array, jaxis: usize) -> Split {
    let (sh, st) = (w.shape(), w.layout().strides());
    Split {
        pre: offsets_of(&sh[..jaxis], &st[..jaxis]),
        post: offsets_of(&sh[jaxis + 1..], &st[jaxis + 1..]),
        j: sh[jaxis],
    }
}

/// `out` (contiguous, `w`'s shape) = the elements of `w` (a view of the source with stride 0 on
/// axis `jaxis`) shifted by `lin[j]` along that axis.
pub(crate) fn gather(w: &Array, jaxis: usize, lin: &Array, out: &Array) -> Result<()> {
    by_width!(w.dtype(), T => gather_of::<T>(w, jaxis, lin, out))
}

fn gather_of<T: Copy + Send + Sync + 'static>(
    w: &Array,
    jaxis: usize,
    lin: &Array,
    out: &Array,
) -> Result<()> {
    let d = bits_dtype(w.dtype())?;
    let (w, out) = (w.view_as(d)?, out.view_as(d)?);
    let ps = raw::<T>(&w)?;
    let po = raw::<T>(&out)?;
    let pl = elem_ptr::<i64>(lin)?;
    let s = split(&w, jaxis);
    let np = s.post.len();
    let task = |pj: usize| {
        let (p, j) = (pj / s.j.max(1), pj % s.j.max(1));
        // SAFETY: lin has `j` elements; offsets come from the layouts (the index offsets were
        // bounds-checked); each (p, j) writes its own run of the output.
        unsafe {
            let base = s.pre[p] + *pl.get::<i64>().add(j) as isize;
            let dst = po.get::<T>().add(pj * np);
            for (q, &o) in s.post.iter().enumerate() {
                *dst.add(q) = *ps.get::<T>().offset(base + o);
            }
        }
    };
    let tasks = s.pre.len() * s.j;
    if tasks * np >= 1 << 16 && tasks > 1 {
        (0..tasks).into_par_iter().for_each(task);
    } else {
        (0..tasks).for_each(task);
    }
    Ok(())
}

/// Writes `value` (broadcast to `w`'s shape, of w's dtype) through `w` (see [`gather`]), in
/// row-major order: with repeated indices the last value stays, as NumPy.
pub(crate) fn scatter(w: &Array, jaxis: usize, lin: &Array, value: &Array) -> Result<()> {
    by_width!(w.dtype(), T => scatter_of::<T>(w, jaxis, lin, value))
}

fn scatter_of<T: Copy + 'static>(
    w: &Array,
    jaxis: usize,
    lin: &Array,
    value: &Array,
) -> Result<()> {
    let d = bits_dtype(w.dtype())?;
    let (w, value) = (w.view_as(d)?, value.view_as(d)?);
    let pd = raw::<T>(&w)?;
    let pv = raw::<T>(&value)?;
    let pl = elem_ptr::<i64>(lin)?;
    let s = split(&w, jaxis);
    let vo = offsets_of(value.shape(), value.layout().strides());
    let np = s.post.len();
    for (p, &pre) in s.pre.iter().enumerate() {
        for j in 0..s.j {
            // SAFETY: as in `gather`; `value` has w's shape.
            unsafe {
                let base = pre + *pl.get::<i64>().add(j) as isize;
                let at = (p * s.j + j) * np;
                for (q, &o) in s.post.iter().enumerate() {
                    *pd.get::<T>().offset(base + o) = *pv.get::<T>().offset(vo[at + q]);
                }
            }
        }
    }
    Ok(())
}

/// `out[i] = w[i with the axis at idx[i]]`: `w` has stride 0 along its axis, `idx` (int64) is
/// broadcast to `out`'s shape; `dim`/`stride`: the source axis.
pub(crate) fn take_along(
    w: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    axis: usize,
    out: &Array,
) -> Result<()> {
    by_width!(w.dtype(), T => take_along_of::<T>(w, idx, dim, stride, axis, out))
}

fn take_along_of<T: Copy + 'static>(
    w: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    axis: usize,
    out: &Array,
) -> Result<()> {
    let d = bits_dtype(w.dtype())?;
    let (w, out) = (w.view_as(d)?, out.view_as(d)?);
    let ps = raw::<T>(&w)?;
    let po = raw::<T>(&out)?;
    let pi = elem_ptr::<i64>(idx)?;
    let plan = Plan::new(out.shape(), [w.layout().strides(), idx.layout().strides()]);
    let mut err = None;
    plan.for_runs(0, plan.size(), |pos, [o, oi], [s, si], len| {
        for k in 0..len as isize {
            // SAFETY: offsets from the layouts; indices checked before use.
            unsafe {
                let v = *pi.get::<i64>().offset(oi + k * si);
                let w = match norm(v, dim, axis) {
                    Ok(w) => w,
                    Err(e) => {
                        err.get_or_insert(e);
                        0
                    }
                };
                *po.get::<T>().add(pos + k as usize) =
                    *ps.get::<T>().offset(o + k * s + w as isize * stride);
            }
        }
    });
    err.map_or(Ok(()), Err)
}

/// Pointer to element 0 of a host array of unsigned elements of `T`'s width.
fn raw<T: 'static>(a: &Array) -> Result<SendPtr> {
    match std::mem::size_of::<T>() {
        1 => elem_ptr::<u8>(a),
        2 => elem_ptr::<u16>(a),
        4 => elem_ptr::<u32>(a),
        16 => elem_ptr::<super::element::C64>(a),
        _ => elem_ptr::<u64>(a),
    }
}
