//! Data-dependent selections on the GPU (`kernels/select.metal`): positions of nonzero elements,
//! `unique` (a sort, then a one-pass compaction of the sorted keys), `searchsorted` and `isin`
//! (binary searches, one thread per value). The output length of a compaction is read back from
//! the device (one 4-byte read, as CuPy and PyTorch do); the data never is.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::{Dispatch, KernelArg};
use crate::layout::IndexItem;
use crate::ops::ScanOp;

use super::library::{groups_for, kernel, launch, ty, Inst, KernelId, Module};
use super::operand::check_device;
use super::sort::{flags as sf, key_dtype, sort_keys};

/// Elements per compaction tile (`SEL_TILE`).
const TILE: usize = 4096;
const SEL_FLOAT: u32 = 1;
const UQ_INDEX: u32 = 2;
const UQ_START: u32 = 4;
const UQ_INVERSE: u32 = 8;
/// `LB_VAL`: a one-pass compaction's tile states hold counts below 2^30.
const LB_VAL: u32 = (1 << 30) - 1;
const SR_RIGHT: u32 = 1;
const SR_INVERT: u32 = 2;

fn insts(t: Option<DType>, k: DType) -> Vec<Inst> {
    let kk = ty(k);
    let mut v = vec![
        Inst::new("nonzero_count", "select", &[k], kk),
        Inst::new("nonzero_write", "select", &[k], kk),
        Inst::new("unique_count", "select", &[k], kk),
        Inst::new("unique_flags", "select", &[k], kk),
        Inst::new("mask_write", "select", &[k], kk),
    ];
    if let Some(t) = t {
        let a = format!("{}, {kk}", ty(t));
        for tmpl in [
            "unique_write",
            "unique_compact",
            "unique_compact_inverse",
            "search_sorted",
            "isin_sorted",
        ] {
            v.push(Inst::new(tmpl, "select", &[t], &a));
        }
    }
    v
}

/// Kernel `tmpl<long>` of the select module (int64 positions or counts, whatever the keys).
fn long_kernel(device: Device, tmpl: &'static str) -> Result<crate::kernel::Kernel> {
    kernel(
        device,
        Module::Select,
        KernelId::new(tmpl, "select", &[DType::Int64]),
        || vec![Inst::new(tmpl, "select", &[DType::Int64], "long")],
    )
}

/// Kernel `tmpl` of the select module: over key dtype `k` (`t: None`) or dtype `t`.
fn select_kernel(
    device: Device,
    tmpl: &'static str,
    t: Option<DType>,
    k: DType,
) -> Result<crate::kernel::Kernel> {
    let id = KernelId::new(tmpl, "select", &[t.unwrap_or(k)]);
    kernel(device, Module::Select, id, || insts(t, k))
}

fn sel_geom(n: usize, flags: u32) -> Vec<u8> {
    let mut g = Vec::with_capacity(16);
    g.extend_from_slice(&(n as u64).to_ne_bytes());
    g.extend_from_slice(&flags.to_ne_bytes());
    g.extend_from_slice(&0u32.to_ne_bytes());
    g
}

fn tiles_dispatch(n: usize) -> Result<(usize, Dispatch)> {
    let tiles = n.div_ceil(TILE).max(1);
    let g = u32::try_from(tiles)
        .map_err(|_| Error::Unsupported(format!("a selection over {n} elements")))?;
    Ok((tiles, Dispatch::groups(&[g]).with_threadgroup(&[256])?))
}

/// Counts per tile with `count` (args: input, counts, geom), scans them, and returns the
/// inclusive scan and the total (read from the device).
fn count_and_scan(
    count: &crate::kernel::Kernel,
    input: &Array,
    n: usize,
    flags: u32,
) -> Result<(Array, usize)> {
    let device = input.device();
    let (tiles, d) = tiles_dispatch(n)?;
    let counts = Array::empty(&[tiles], DType::UInt32, device)?;
    count.launch(
        &[
            KernelArg::Array(input.clone()),
            KernelArg::Array(counts.clone()),
            KernelArg::Bytes(sel_geom(n, flags)),
        ],
        &d,
    )?;
    let scan = Array::empty(&[tiles], DType::UInt32, device)?;
    super::reduce::scan(ScanOp::Sum, &counts, 0, &scan)?;
    let total = match scan.index(&[IndexItem::Int(-1)])?.item()? {
        Scalar::UInt(v) => v as usize,
        Scalar::Int(v) => v as usize,
        other => {
            return Err(Error::Device(format!(
                "internal: selection count read back as {other:?}"
            )))
        }
    };
    Ok((scan, total))
}

fn check_size(n: usize, what: &str) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "{what} over {n} elements on the GPU (counts are 32-bit: at most {} elements)",
            u32::MAX
        )));
    }
    Ok(())
}

/// The row-major positions (int64, 1-D) of the nonzero elements of `x` (NaN is nonzero, -0.0 is
/// zero).
pub fn flat_nonzero(x: &Array) -> Result<Array> {
    let device = x.device();
    let n = x.size();
    check_size(n, "nonzero")?;
    if n == 0 {
        return Array::empty(&[0], DType::Int64, device);
    }
    let k = key_dtype("nonzero", x.dtype())?;
    let xk = x.contiguous()?.reshape(&[-1])?.view_as(k)?;
    let flags = if x.dtype().is_float() { SEL_FLOAT } else { 0 };
    let count = select_kernel(device, "nonzero_count", None, k)?;
    let (scan, total) = count_and_scan(&count, &xk, n, flags)?;
    let out = Array::empty(&[total], DType::Int64, device)?;
    if total == 0 {
        return Ok(out);
    }
    let (_, d) = tiles_dispatch(n)?;
    select_kernel(device, "nonzero_write", None, k)?.launch(
        &[
            KernelArg::Array(xk),
            KernelArg::Array(scan),
            KernelArg::Array(out.clone()),
            KernelArg::Bytes(sel_geom(n, flags)),
        ],
        &d,
    )?;
    Ok(out)
}

/// `x[mask]` for a boolean `mask` of x's shape: the selected elements of `x` in row-major order
/// (1-D), in one compaction (a count of the mask's tiles, then each tile's selected elements)
/// rather than positions followed by a gather. Elements of 1, 2, 4 or 8 bytes.
pub fn masked_select(x: &Array, mask: &Array) -> Result<Array> {
    check_device("boolean-mask indexing", &[x, mask])?;
    if mask.dtype() != DType::Bool || mask.shape() != x.shape() {
        return Err(Error::Index(format!(
            "masked_select: a boolean mask of shape {:?}, got {} of shape {:?}",
            x.shape(),
            mask.dtype(),
            mask.shape()
        )));
    }
    let device = x.device();
    let n = x.size();
    check_size(n, "boolean-mask indexing")?;
    let bits = super::gather::bits_dtype(x.dtype())?;
    if n == 0 {
        return Array::empty(&[0], x.dtype(), device);
    }
    let mk = mask.contiguous()?.reshape(&[-1])?.view_as(DType::UInt8)?;
    let xk = x.contiguous()?.reshape(&[-1])?.view_as(bits)?;
    let count = select_kernel(device, "nonzero_count", None, DType::UInt8)?;
    let (scan, total) = count_and_scan(&count, &mk, n, 0)?;
    let out = Array::empty(&[total], bits, device)?;
    if total > 0 {
        let (_, d) = tiles_dispatch(n)?;
        select_kernel(device, "mask_write", None, bits)?.launch(
            &[
                KernelArg::Array(mk),
                KernelArg::Array(xk),
                KernelArg::Array(scan),
                KernelArg::Array(out.clone()),
                KernelArg::Bytes(sel_geom(n, 0)),
            ],
            &d,
        )?;
    }
    out.view_as(x.dtype())
}

/// The distinct values of `x` (sorted; NaNs are each distinct, -0.0 equals +0.0) and, when
/// asked, the first position of each (int64), the inverse (x's shape: each element's value
/// number) and the counts (int64).
pub fn unique(
    x: &Array,
    want_index: bool,
    want_inverse: bool,
    want_counts: bool,
) -> Result<crate::ops::op::UniqueParts> {
    let one_pass = x.size() <= LB_VAL as usize;
    unique_with(x, want_index, want_inverse, want_counts, one_pass)
}

/// `unique` with the compaction chosen: one pass (inputs below 2^30 elements) or two.
fn unique_with(
    x: &Array,
    want_index: bool,
    want_inverse: bool,
    want_counts: bool,
    one_pass: bool,
) -> Result<crate::ops::op::UniqueParts> {
    let device = x.device();
    let t = x.dtype();
    let n = x.size();
    check_size(n, "unique")?;
    let k = key_dtype("unique", t)?;
    if n == 0 {
        let e = |d| Array::empty(&[0], d, device);
        return Ok((
            e(t)?,
            want_index.then(|| e(DType::Int64)).transpose()?,
            want_inverse
                .then(|| Array::empty(x.shape(), DType::Int64, device))
                .transpose()?,
            want_counts.then(|| e(DType::Int64)).transpose()?,
        ));
    }
    let xk = x.contiguous()?.reshape(&[-1])?.view_as(k)?;
    let keys = Array::empty(&[n], k, device)?;
    let with_perm = want_index || want_inverse;
    let perm = if with_perm {
        Some(Array::empty(&[n], DType::Int64, device)?)
    } else {
        None
    };
    sort_keys(
        &xk,
        t,
        1,
        n,
        Some(&keys),
        perm.as_ref(),
        sf::CANON | sf::KEYS,
        None,
    )?;
    let flags = if t.is_float() { SEL_FLOAT } else { 0 };
    let sorted = Sorted {
        keys: &keys,
        perm: perm.as_ref(),
        t,
        flags,
    };
    let (values, index, counts, inverse) = if one_pass {
        sorted.compact_one_pass(want_index, want_counts, want_inverse)?
    } else {
        sorted.compact_two_pass(want_index, want_counts, want_inverse)?
    };
    let inverse = inverse.map(|v| v.reshape(&shape_of(x))).transpose()?;
    Ok((values.view_as(t)?, index, inverse, counts))
}

fn shape_of(x: &Array) -> Vec<isize> {
    x.shape().iter().map(|&d| d as isize).collect()
}

/// Sorted keys (and the stable sort's permutation when asked for indices or the inverse) of
/// `unique`'s input, with the compactions that turn them into unique's parts.
struct Sorted<'a> {
    keys: &'a Array,
    perm: Option<&'a Array>,
    t: DType,
    flags: u32,
}

/// values (key dtype), index, counts, inverse (1-D).
type Compacted = (Array, Option<Array>, Option<Array>, Option<Array>);

impl Sorted<'_> {
    fn n(&self) -> usize {
        self.keys.size()
    }

    /// The permutation, or a 1-element placeholder where the kernel does not read it.
    fn perm_arg(&self) -> Result<Array> {
        match self.perm {
            Some(p) => Ok(p.clone()),
            None => Array::empty(&[1], DType::Int64, self.keys.device()),
        }
    }

    /// One kernel (`unique_compact`): outputs sized n, then cut to the count read back.
    fn compact_one_pass(&self, index: bool, counts: bool, inverse: bool) -> Result<Compacted> {
        let (n, device, k) = (self.n(), self.keys.device(), self.keys.dtype());
        let (tiles, d) = tiles_dispatch(n)?;
        // Zeros uploaded (one asynchronous copy, no kernel).
        let state = Array::from_bytes(
            &vec![0u8; 4 * (tiles + 1)],
            &[tiles + 1],
            DType::UInt32,
            device,
        )?;
        let long_or_dummy =
            |want: bool| Array::empty(&[if want { n } else { 1 }], DType::Int64, device);
        let values = Array::empty(&[n], k, device)?;
        let (idx, start, cnt, inv) = (
            long_or_dummy(index)?,
            long_or_dummy(counts)?,
            long_or_dummy(counts)?,
            long_or_dummy(inverse)?,
        );
        let mut wf = self.flags;
        for (want, bit) in [(index, UQ_INDEX), (counts, UQ_START), (inverse, UQ_INVERSE)] {
            if want {
                wf |= bit;
            }
        }
        // Two instantiations of one body: with the inverse, without CUDA's occupancy bound
        // (select.metal).
        let name = if inverse {
            "unique_compact_inverse"
        } else {
            "unique_compact"
        };
        select_kernel(device, name, Some(self.t), k)?.launch(
            &[
                KernelArg::Array(self.keys.clone()),
                KernelArg::Array(self.perm_arg()?),
                KernelArg::Array(state.clone()),
                KernelArg::Array(values.clone()),
                KernelArg::Array(idx.clone()),
                KernelArg::Array(start.clone()),
                KernelArg::Array(inv.clone()),
                KernelArg::Array(cnt.clone()),
                KernelArg::Bytes(sel_geom(n, wf)),
            ],
            &d,
        )?;
        if counts {
            // The counts of values that end in another tile than they start, before the read.
            let fix = long_kernel(device, "unique_counts_fix")?;
            let t32 = u32::try_from(tiles)
                .map_err(|_| Error::Unsupported(format!("a selection over {n} elements")))?;
            fix.launch(
                &[
                    KernelArg::Array(state.clone()),
                    KernelArg::Array(start.clone()),
                    KernelArg::Array(cnt.clone()),
                    KernelArg::Bytes(sel_geom(n, wf)),
                    KernelArg::Bytes(t32.to_ne_bytes().to_vec()),
                ],
                &Dispatch::try_threads(&[t32])?.with_threadgroup(&[256.min(t32)])?,
            )?;
        }
        let last = read_u32(&state.index(&[IndexItem::Int(-1)])?)?;
        if last & !LB_VAL == 0 {
            return Err(Error::Device(format!(
                "internal: unique's last tile did not publish its count (state {last:#x})"
            )));
        }
        let m = (last & LB_VAL) as usize;
        Ok((
            shrink(values, m)?,
            index.then(|| shrink(idx, m)).transpose()?,
            counts.then(|| shrink(cnt, m)).transpose()?,
            inverse.then_some(inv),
        ))
    }

    /// Two kernels and a host read in between (`unique_count`, a scan, `unique_write`), and the
    /// inverse from a scan of start flags: for inputs too large for the one-pass states.
    fn compact_two_pass(&self, index: bool, counts: bool, inverse: bool) -> Result<Compacted> {
        let (n, device, k) = (self.n(), self.keys.device(), self.keys.dtype());
        let count = select_kernel(device, "unique_count", None, k)?;
        let (scan, m) = count_and_scan(&count, self.keys, n, self.flags)?;
        let values = Array::empty(&[m], k, device)?;
        let long_or_dummy =
            |want: bool| Array::empty(&[if want { m } else { 1 }], DType::Int64, device);
        let (idx, start) = (long_or_dummy(index)?, long_or_dummy(counts)?);
        let mut wf = self.flags;
        if index {
            wf |= UQ_INDEX;
        }
        if counts {
            wf |= UQ_START;
        }
        let (_, d) = tiles_dispatch(n)?;
        select_kernel(device, "unique_write", Some(self.t), k)?.launch(
            &[
                KernelArg::Array(self.keys.clone()),
                KernelArg::Array(self.perm_arg()?),
                KernelArg::Array(scan),
                KernelArg::Array(values.clone()),
                KernelArg::Array(idx.clone()),
                KernelArg::Array(start.clone()),
                KernelArg::Bytes(sel_geom(n, wf)),
            ],
            &d,
        )?;
        let inv = match (self.perm, inverse) {
            (Some(p), true) => Some(self.inverse_by_scan(p)?),
            _ => None,
        };
        let counts = counts.then(|| counts_from_starts(&start, n)).transpose()?;
        Ok((values, index.then_some(idx), counts, inv))
    }

    /// inverse[perm[i]] = (number of values starting at or before sorted position i) - 1, from
    /// an inclusive scan of the start flags.
    fn inverse_by_scan(&self, perm: &Array) -> Result<Array> {
        let (n, device, k) = (self.n(), self.keys.device(), self.keys.dtype());
        let numbered = Array::empty(&[n], DType::UInt32, device)?;
        let g = sel_geom(n, self.flags);
        let groups = groups_for(device, n as u64, 4);
        launch(
            &select_kernel(device, "unique_flags", None, k)?,
            &[
                KernelArg::Array(self.keys.clone()),
                KernelArg::Array(numbered.clone()),
                KernelArg::Bytes(g.clone()),
            ],
            groups,
        )?;
        super::reduce::scan(ScanOp::Sum, &numbered.clone(), 0, &numbered)?;
        let inv = Array::empty(&[n], DType::Int64, device)?;
        let kern = long_kernel(device, "unique_inverse")?;
        launch(
            &kern,
            &[
                KernelArg::Array(numbered),
                KernelArg::Array(perm.clone()),
                KernelArg::Array(inv.clone()),
                KernelArg::Bytes(g),
            ],
            groups,
        )?;
        Ok(inv)
    }
}

/// The first m elements of the 1-D `a` (a view).
fn head(a: &Array, m: usize) -> Result<Array> {
    a.index(&[IndexItem::Slice {
        start: None,
        stop: Some(m as isize),
        step: None,
    }])
}

/// The first m elements of the 1-D contiguous `a`, in their own buffer when they use less than
/// half of a's (a result should not hold on to memory it does not use), else a view. The copy is
/// the runtime's device-to-device copy: it comes right after the host has waited for the count
/// m, where a copy kernel's launch would add its binding to the wait.
fn shrink(a: Array, m: usize) -> Result<Array> {
    if m == a.size() {
        Ok(a)
    } else if 2 * m < a.size() && a.is_contiguous() {
        let out = Array::empty(&[m], a.dtype(), a.device())?;
        let es = a.dtype().size();
        a.device().runtime()?.copy_within(
            a.buffer(),
            a.layout().offset() * es,
            out.buffer(),
            out.layout().offset() * es,
            m * es,
        )?;
        Ok(out)
    } else {
        head(&a, m)
    }
}

fn read_u32(a: &Array) -> Result<u32> {
    match a.item()? {
        Scalar::UInt(v) => Ok(v as u32),
        Scalar::Int(v) => Ok(v as u32),
        other => Err(Error::Device(format!(
            "internal: a selection count read back as {other:?}"
        ))),
    }
}

/// counts[j] = start[j + 1] - start[j] (the last: n - start[m - 1]), with the elementwise ops.
fn counts_from_starts(start: &Array, n: usize) -> Result<Array> {
    let device = start.device();
    let m = start.size();
    let counts = Array::empty(&[m], DType::Int64, device)?;
    let sl = |a: Option<isize>, b: Option<isize>| IndexItem::Slice {
        start: a,
        stop: b,
        step: None,
    };
    if m > 1 {
        super::elementwise::binary(
            crate::ops::BinaryOp::Subtract,
            &start.index(&[sl(Some(1), None)])?,
            &start.index(&[sl(None, Some(-1))])?,
            &counts.index(&[sl(None, Some(-1))])?,
        )?;
    }
    let total = Array::scalar(Scalar::Int(n as i64), DType::Int64, device)?;
    super::elementwise::binary(
        crate::ops::BinaryOp::Subtract,
        &total.reshape(&[1])?,
        &start.index(&[sl(Some(-1), None)])?,
        &counts.index(&[sl(Some(-1), None)])?,
    )?;
    Ok(counts)
}

fn search_geom(n: usize, m: usize, flags: u32) -> Vec<u8> {
    let mut g = Vec::with_capacity(24);
    g.extend_from_slice(&(n as u64).to_ne_bytes());
    g.extend_from_slice(&(m as u64).to_ne_bytes());
    g.extend_from_slice(&flags.to_ne_bytes());
    g.extend_from_slice(&0u32.to_ne_bytes());
    g
}

/// For each element of `values`, its insertion position (int64) in the 1-D `sorted` (ascending
/// in NumPy's order; both of one dtype): before equal elements, or after them when `right`.
pub fn searchsorted(sorted: &Array, values: &Array, right: bool) -> Result<Array> {
    check_device("searchsorted", &[sorted, values])?;
    let device = values.device();
    let t = sorted.dtype();
    let k = key_dtype("searchsorted", t)?;
    let out = Array::empty(values.shape(), DType::Int64, device)?;
    let n = values.size();
    if n == 0 {
        return Ok(out);
    }
    let s = sorted.contiguous()?.view_as(k)?;
    let s = if s.size() == 0 {
        Array::empty(&[1], k, device)?
    } else {
        s
    };
    let v = values.contiguous()?.view_as(k)?;
    let g = search_geom(n, sorted.size(), if right { SR_RIGHT } else { 0 });
    launch(
        &select_kernel(device, "search_sorted", Some(t), k)?,
        &[
            KernelArg::Array(s.reshape(&[-1])?),
            KernelArg::Array(v.reshape(&[-1])?),
            KernelArg::Array(out.reshape(&[-1])?),
            KernelArg::Bytes(g),
        ],
        groups_for(device, n as u64, 1),
    )?;
    Ok(out)
}

/// Whether each element of `x1` equals some element of `x2` (both of one dtype; NaN never
/// does); the complement when `invert`. Sorts `x2`, then one binary search per element of x1.
pub fn isin(x1: &Array, x2: &Array, invert: bool) -> Result<Array> {
    check_device("isin", &[x1, x2])?;
    let device = x1.device();
    let t = x1.dtype();
    let k = key_dtype("isin", t)?;
    let out = Array::empty(x1.shape(), DType::Bool, device)?;
    let n = x1.size();
    if n == 0 {
        return Ok(out);
    }
    let m = x2.size();
    let keys = Array::empty(&[m.max(1)], k, device)?;
    if m > 0 {
        let x2k = x2.contiguous()?.reshape(&[-1])?.view_as(k)?;
        sort_keys(
            &x2k,
            t,
            1,
            m,
            Some(&keys.reshape(&[-1])?),
            None,
            sf::CANON | sf::KEYS,
            None,
        )?;
    }
    let v = x1.contiguous()?.view_as(k)?;
    let g = search_geom(n, m, if invert { SR_INVERT } else { 0 });
    launch(
        &select_kernel(device, "isin_sorted", Some(t), k)?,
        &[
            KernelArg::Array(keys),
            KernelArg::Array(v.reshape(&[-1])?),
            KernelArg::Array(out.reshape(&[-1])?),
            KernelArg::Bytes(g),
        ],
        groups_for(device, n as u64, 1),
    )?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The two-pass compaction (taken above 2^30 elements only) gives the one-pass results, on
    /// the CPU kernel engine: values with duplicates, -0.0/0.0 and NaNs across several tiles.
    #[test]
    fn two_pass_unique_matches_one_pass() {
        let n = 3 * TILE + 77;
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let v: Vec<f32> = (0..n)
            .map(|i| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                match i % 97 {
                    0 => f32::NAN,
                    1 => -0.0,
                    _ => (s % 900) as f32 - 450.0,
                }
            })
            .collect();
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
        let x = Array::from_bytes(&bytes, &[n], DType::Float32, Device::Cpu).unwrap();
        let one = unique_with(&x, true, true, true, true).unwrap();
        let two = unique_with(&x, true, true, true, false).unwrap();
        let bits = |a: &Array| a.to_bytes().unwrap();
        let m = one.0.size();
        // 900 integers (0.0 once, as -0.0 and 0.0 are one value) and one value per NaN.
        assert_eq!(m, 900 + n.div_ceil(97));
        assert_eq!(bits(&one.0), bits(&two.0), "values");
        for (name, a, b) in [
            ("index", &one.1, &two.1),
            ("inverse", &one.2, &two.2),
            ("counts", &one.3, &two.3),
        ] {
            let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
            assert_eq!(a.shape(), b.shape(), "{name}");
            assert_eq!(bits(a), bits(b), "{name}");
        }
        let counts = one.3.unwrap().to_vec::<i64>().unwrap();
        assert_eq!(counts.iter().sum::<i64>(), n as i64);
    }
}
