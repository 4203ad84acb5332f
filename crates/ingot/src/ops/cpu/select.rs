//! Data-dependent selections on the CPU: nonzero positions (two parallel passes: count per chunk,
//! then write at each chunk's offset), `unique` (a radix sort of the keys, then one scan),
//! `searchsorted` and `isin` (binary searches over keys, in parallel).

use rayon::prelude::*;

use super::element::Elem;
use super::iter::{chunks, elem_ptr, Plan};
use super::radix::sort_by_bytes;
use super::sortkey::{dispatch_real, RadixKey, SortKey};
use crate::array::Array;
use crate::dtype::DType;
use crate::error::Result;

const GRAIN: usize = 1 << 16;

/// The row-major positions of the nonzero elements of `x` (any layout), as int64 (NaN is
/// nonzero, -0.0 zero).
pub(crate) fn flat_nonzero(x: &Array) -> Result<Array> {
    dispatch_real!(x.dtype(), "nonzero", T => nonzero_of::<T>(x))
}

fn nonzero_of<T: Elem>(x: &Array) -> Result<Array> {
    let p = elem_ptr::<T>(x)?;
    let plan = Plan::new(x.shape(), [x.layout().strides()]);
    let n = plan.size();
    let ranges = chunks(n, GRAIN).unwrap_or_else(|| vec![(0, n)]);
    let each = |(s, e): (usize, usize), out: Option<&mut [i64]>| -> usize {
        let mut c = 0usize;
        let mut out = out;
        plan.for_runs(s, e, |pos, [o], [st], len| {
            for i in 0..len {
                // SAFETY: offsets come from the array's layout.
                let v = unsafe { *p.get::<T>().offset(o + i as isize * st) };
                if v.nonzero() {
                    if let Some(w) = out.as_deref_mut() {
                        w[c] = (pos + i) as i64;
                    }
                    c += 1;
                }
            }
        });
        c
    };
    let counts: Vec<usize> = ranges.par_iter().map(|&r| each(r, None)).collect();
    let total: usize = counts.iter().sum();
    let mut out = vec![0i64; total];
    let mut parts: Vec<&mut [i64]> = Vec::with_capacity(counts.len());
    let mut rest = out.as_mut_slice();
    for &c in &counts {
        let (a, b) = rest.split_at_mut(c);
        parts.push(a);
        rest = b;
    }
    ranges
        .par_iter()
        .zip(parts.into_par_iter())
        .for_each(|(&r, part)| {
            each(r, Some(part));
        });
    Array::from_vec(out, &[total], x.device())
}

/// The result of [`unique`]: the distinct values and, when asked, their first positions, the
/// inverse (value number of every element, in row-major order) and the counts.
pub(crate) struct UniqueParts {
    pub values: Array,
    pub index: Option<Array>,
    pub inverse: Option<Array>,
    pub counts: Option<Array>,
}

/// The distinct values of `x` in ascending order (each NaN distinct, -0.0 equal to +0.0).
pub(crate) fn unique(x: &Array, index: bool, inverse: bool, counts: bool) -> Result<UniqueParts> {
    dispatch_real!(x.dtype(), "unique", T => unique_of::<T>(x, index, inverse, counts))
}

/// The elements of `x` in row-major order.
fn elements<T: Elem>(x: &Array) -> Result<Vec<T>> {
    let c = x.contiguous()?;
    let p = elem_ptr::<T>(&c)?;
    // SAFETY: a contiguous array holds `size` elements from its first one.
    Ok(unsafe { std::slice::from_raw_parts(p.get::<T>() as *const T, c.size()) }.to_vec())
}

fn unique_of<T: SortKey>(
    x: &Array,
    want_index: bool,
    want_inv: bool,
    want_counts: bool,
) -> Result<UniqueParts> {
    let dev = x.device();
    let v = elements::<T>(x)?;
    let n = v.len();
    let par = n >= 2 * GRAIN;
    let nan = |k: T::K| T::FLOAT && k == T::K::MAX;
    // Sorted keys, and the stable permutation when positions are needed.
    let (keys, perm): (Vec<T::K>, Option<Vec<usize>>) = if want_index || want_inv {
        let mut data: Vec<u128> = if par {
            v.par_iter()
                .enumerate()
                .map(|(i, e)| ((e.key(true).to_u64() as u128) << 64) | i as u128)
                .collect()
        } else {
            v.iter()
                .enumerate()
                .map(|(i, e)| ((e.key(true).to_u64() as u128) << 64) | i as u128)
                .collect()
        };
        sort_by_bytes(&mut data, &mut Vec::new(), 8, 8 + T::K::BYTES, par);
        let keys = data
            .iter()
            .map(|&e| T::K::from_u64((e >> 64) as u64))
            .collect();
        let perm = data.iter().map(|&e| e as u64 as usize).collect();
        (keys, Some(perm))
    } else {
        let mut keys: Vec<T::K> = if par {
            v.par_iter().map(|e| e.key(true)).collect()
        } else {
            v.iter().map(|e| e.key(true)).collect()
        };
        sort_by_bytes(&mut keys, &mut Vec::new(), 0, T::K::BYTES, par);
        (keys, None)
    };
    let starts: Vec<usize> = (0..n)
        .filter(|&i| i == 0 || keys[i] != keys[i - 1] || nan(keys[i]))
        .collect();
    let m = starts.len();
    // From the keys (zeros come out as +0.0, NaNs as the quiet NaN), as the GPU kernels do.
    let values: Vec<T> = starts.iter().map(|&s| T::from_key(keys[s])).collect();
    let values = from_elems(values, dev)?;
    let index = match (&perm, want_index) {
        (Some(p), true) => {
            let idx: Vec<i64> = starts.iter().map(|&s| p[s] as i64).collect();
            Some(Array::from_vec(idx, &[m], dev)?)
        }
        _ => None,
    };
    let counts = if want_counts {
        let c: Vec<i64> = (0..m)
            .map(|j| (starts.get(j + 1).copied().unwrap_or(n) - starts[j]) as i64)
            .collect();
        Some(Array::from_vec(c, &[m], dev)?)
    } else {
        None
    };
    let inverse = match (&perm, want_inv) {
        (Some(p), true) => {
            let mut inv = vec![0i64; n];
            let mut j = -1i64;
            for i in 0..n {
                if i == 0 || keys[i] != keys[i - 1] || nan(keys[i]) {
                    j += 1;
                }
                inv[p[i]] = j;
            }
            Some(Array::from_vec(inv, x.shape(), dev)?)
        }
        _ => None,
    };
    Ok(UniqueParts {
        values,
        index,
        inverse,
        counts,
    })
}

/// A 1-D array of elements of type `T` (bool through its bytes).
fn from_elems<T: Elem>(v: Vec<T>, dev: crate::device::Device) -> Result<Array> {
    let n = v.len();
    let out = Array::empty(&[n], T::DTYPE, dev)?;
    if n > 0 {
        let p = elem_ptr::<T>(&out)?;
        // SAFETY: `out` is a new contiguous array of `n` elements of `T`.
        unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), p.get::<T>(), n) };
    }
    Ok(out)
}

/// For each element of `values`, its insertion position (int64) in the 1-D ascending `sorted`
/// (both of one dtype, any layouts): before equal elements, or after them when `right`.
pub(crate) fn searchsorted(sorted: &Array, values: &Array, right: bool) -> Result<Array> {
    dispatch_real!(sorted.dtype(), "searchsorted", T => search_of::<T>(sorted, values, right))
}

fn search_of<T: SortKey>(sorted: &Array, values: &Array, right: bool) -> Result<Array> {
    let keys: Vec<T::K> = elements::<T>(sorted)?.iter().map(|e| e.key(true)).collect();
    let vals = elements::<T>(values)?;
    let pos = |v: &T| -> i64 {
        let k = v.key(true);
        (if right {
            keys.partition_point(|&s| s <= k)
        } else {
            keys.partition_point(|&s| s < k)
        }) as i64
    };
    let out: Vec<i64> = if vals.len() >= GRAIN {
        vals.par_iter().map(pos).collect()
    } else {
        vals.iter().map(pos).collect()
    };
    Array::from_vec(out, values.shape(), values.device())
}

/// Whether each element of `x1` equals an element of `x2` (one dtype; NaN never does), or the
/// complement when `invert`.
pub(crate) fn isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    dispatch_real!(x1.dtype(), "isin", T => isin_of::<T>(x1, x2, invert))
}

fn isin_of<T: SortKey>(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    let mut keys: Vec<T::K> = elements::<T>(x2)?.iter().map(|e| e.key(true)).collect();
    let par = keys.len() >= 2 * GRAIN;
    sort_by_bytes(&mut keys, &mut Vec::new(), 0, T::K::BYTES, par);
    keys.dedup();
    let vals = elements::<T>(x1)?;
    let test = |v: &T| -> u8 {
        let k = v.key(true);
        let found = !(T::FLOAT && k == T::K::MAX) && keys.binary_search(&k).is_ok();
        (found != invert) as u8
    };
    let out: Vec<u8> = if vals.len() >= GRAIN {
        vals.par_iter().map(test).collect()
    } else {
        vals.iter().map(test).collect()
    };
    Array::from_bytes(&out, x1.shape(), DType::Bool, x1.device())
}
