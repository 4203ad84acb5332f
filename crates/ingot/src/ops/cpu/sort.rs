//! Sorting along the last axis: values and/or stable argsort indices, by radix sort of
//! order-preserving keys ([`super::sortkey`]). Many rows are sorted in parallel, one row per
//! task; a single long row is sorted by the parallel radix sort.
//!
//! For argsort, the key is packed above the element's position (`key << 32 | i`, or in a u128
//! for 64-bit keys), so sorting the packed words by the key bytes is a stable sort that carries
//! the positions along; sorted values are then read back from the input by position (keeping
//! each value's exact bits). A sort of values alone sorts the keys and converts them back.

use rayon::prelude::*;

use super::iter::{elem_ptr, SendPtr};
use super::radix::{sort_by_bytes, Radix};
use super::sortkey::{dispatch_real, RadixKey, SortKey};
use crate::array::Array;
use crate::error::{Error, Result};

/// Offsets (in elements, from the array's first element) of the start of every row along the
/// last axis, in row-major order of the other axes.
pub(crate) fn row_starts(a: &Array) -> Vec<isize> {
    let nd = a.ndim();
    if nd == 0 {
        return vec![0];
    }
    let shape = &a.shape()[..nd - 1];
    let strides = &a.layout().strides()[..nd - 1];
    let rows: usize = shape.iter().product();
    let mut out = Vec::with_capacity(rows);
    let mut idx = vec![0usize; shape.len()];
    let mut off = 0isize;
    for _ in 0..rows {
        out.push(off);
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            off += strides[d];
            if idx[d] < shape[d] {
                break;
            }
            off -= shape[d] as isize * strides[d];
            idx[d] = 0;
        }
    }
    out
}

/// One row: where to read it and where its results go.
#[derive(Clone, Copy)]
struct Row {
    src: SendPtr,
    sx: isize,
    len: usize,
    vals: Option<(SendPtr, isize)>,
    idx: Option<(SendPtr, isize)>,
}

/// Sorts every row (last axis) of `x` into `values` (x's dtype) and/or `indices` (int64), both
/// of x's shape, any layouts. Ascending with NaNs last, or `descending` (NaNs first, ties in
/// their original order); indices are stable.
pub(crate) fn sort_rows(
    x: &Array,
    values: Option<&Array>,
    indices: Option<&Array>,
    descending: bool,
) -> Result<()> {
    for a in values.iter().chain(indices.iter()) {
        if a.shape() != x.shape() {
            return Err(Error::Shape(format!(
                "internal: sort output of shape {:?} for input {:?}",
                a.shape(),
                x.shape()
            )));
        }
    }
    let op = if indices.is_some() { "argsort" } else { "sort" };
    dispatch_real!(x.dtype(), op, T => rows::<T>(x, values, indices, descending))
}

fn rows<T: SortKey>(
    x: &Array,
    values: Option<&Array>,
    indices: Option<&Array>,
    descending: bool,
) -> Result<()> {
    let nd = x.ndim().max(1);
    let len = x.shape().last().copied().unwrap_or(1);
    if x.size() == 0 {
        return Ok(());
    }
    let last = |a: &Array| a.layout().strides().get(nd - 1).copied().unwrap_or(0);
    let px = elem_ptr::<T>(x)?;
    let pv = values.map(elem_ptr::<T>).transpose()?;
    let pi = indices.map(elem_ptr::<i64>).transpose()?;
    let (sx, sv, si) = (
        last(x),
        values.map(last).unwrap_or(0),
        indices.map(last).unwrap_or(0),
    );
    let (rx, rv, ri) = (
        row_starts(x),
        values.map(row_starts),
        indices.map(row_starts),
    );
    let row = |r: usize| Row {
        // SAFETY (all three): row starts come from the arrays' layouts.
        src: SendPtr(unsafe { px.get::<T>().offset(rx[r]) }.cast()),
        sx,
        len,
        vals: pv.map(|p| {
            let o = rv.as_ref().map_or(0, |v| v[r]);
            (SendPtr(unsafe { p.get::<T>().offset(o) }.cast()), sv)
        }),
        idx: pi.map(|p| {
            let o = ri.as_ref().map_or(0, |v| v[r]);
            (SendPtr(unsafe { p.get::<i64>().offset(o) }.cast()), si)
        }),
    };
    let nrows = rx.len();
    let parallel_rows = nrows > 1 && nrows * len >= 1 << 15;
    if parallel_rows {
        (0..nrows)
            .into_par_iter()
            .for_each(|r| sort_row::<T>(row(r), descending, false));
    } else {
        for r in 0..nrows {
            sort_row::<T>(row(r), descending, nrows == 1);
        }
    }
    Ok(())
}

/// The key of `v` (descending: complemented).
#[inline(always)]
fn key_of<T: SortKey>(v: T, canon: bool, desc: bool) -> T::K {
    let k = v.key(canon);
    if desc {
        k.not()
    } else {
        k
    }
}

fn sort_row<T: SortKey>(row: Row, desc: bool, parallel: bool) {
    let read = |i: usize| -> T {
        // SAFETY: `i < row.len`, inside the row.
        unsafe { *row.src.get::<T>().offset(i as isize * row.sx) }
    };
    if row.idx.is_some() {
        if T::K::BYTES <= 4 && row.len <= u32::MAX as usize {
            let mut data: Vec<u64> = packed(row.len, parallel, |i| {
                (key_of(read(i), true, desc).to_u64() << 32) | i as u64
            });
            sort_by_bytes(&mut data, &mut Vec::new(), 4, 4 + T::K::BYTES, parallel);
            write_indices(&row, &data, parallel, |e| (e & 0xffff_ffff) as usize, read);
        } else {
            let mut data: Vec<u128> = packed(row.len, parallel, |i| {
                ((key_of(read(i), true, desc).to_u64() as u128) << 64) | i as u128
            });
            sort_by_bytes(&mut data, &mut Vec::new(), 8, 8 + T::K::BYTES, parallel);
            write_indices(&row, &data, parallel, |e| e as u64 as usize, read);
        }
    } else if let Some((pv, sv)) = row.vals {
        let mut keys: Vec<T::K> = packed(row.len, parallel, |i| key_of(read(i), false, desc));
        sort_by_bytes(&mut keys, &mut Vec::new(), 0, T::K::BYTES, parallel);
        let write = |i: usize, k: T::K| {
            let v = T::from_key(if desc { k.not() } else { k });
            // SAFETY: `i < row.len`, inside the output row; one writer per element.
            unsafe { *pv.get::<T>().offset(i as isize * sv) = v };
        };
        if parallel {
            keys.par_iter().enumerate().for_each(|(i, &k)| write(i, k));
        } else {
            keys.iter().enumerate().for_each(|(i, &k)| write(i, k));
        }
    }
}

/// `(0..n).map(f)` collected, on rayon when `parallel`.
fn packed<E: Send>(n: usize, parallel: bool, f: impl Fn(usize) -> E + Sync + Send) -> Vec<E> {
    if parallel {
        (0..n).into_par_iter().map(f).collect()
    } else {
        (0..n).map(f).collect()
    }
}

/// Writes the positions carried by the sorted `data` to the row's indices, and the values at
/// those positions to its values (when wanted).
fn write_indices<E: Radix, T: SortKey>(
    row: &Row,
    data: &[E],
    parallel: bool,
    pos: impl Fn(E) -> usize + Sync,
    read: impl Fn(usize) -> T + Sync,
) {
    let put = |i: usize, e: E| {
        let p = pos(e);
        // SAFETY: `i < row.len`; one writer per output element.
        unsafe {
            if let Some((pi, si)) = row.idx {
                *pi.get::<i64>().offset(i as isize * si) = p as i64;
            }
            if let Some((pv, sv)) = row.vals {
                *pv.get::<T>().offset(i as isize * sv) = read(p);
            }
        }
    };
    if parallel {
        data.par_iter().enumerate().for_each(|(i, &e)| put(i, e));
    } else {
        data.iter().enumerate().for_each(|(i, &e)| put(i, e));
    }
}
