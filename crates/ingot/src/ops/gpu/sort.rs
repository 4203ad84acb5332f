//! Sorting on the GPU (`kernels/sort.metal`): rows of up to 2048 elements by a bitonic sort in
//! one threadgroup (several short rows per group), longer rows by a stable LSD radix sort with
//! 8-bit digits and a ranking scatter through threadgroup memory. A batch of long rows is sorted
//! in one radix sort: the key passes, then passes over the row number carried in the payload.
//!
//! The radix sort finds each tile's digit offsets one of two ways ([`RadixScheme`]): one sweep
//! a pass (the digit counts of every pass from one read of the keys, then a downsweep a pass
//! whose tiles add up their predecessors' counts by a decoupled look-back), for sorts of values
//! up to 2^30 elements; or reduce then scan (per-tile digit counts, a scan of each digit's
//! counts, the downsweep: three kernels a pass, and the keys read twice), for larger sorts and
//! for those that carry positions (see `sort_keys`).
//!
//! Bytes moved for n 32-bit keys: the one-sweep sort of values reads 4n for the histogram, then
//! a pass reads 4n and writes 4n (and 1 KB of tile states a tile of 4096): ~36n bytes, 0.6 GB
//! for n = 2^24. The reduce-then-scan argsort (32-bit positions between passes): a pass's upsweep
//! reads 4n, its downsweep reads 8n and writes 8n (the first pass reads no positions, the last
//! writes int64 indices): ~20n a pass, about 1.3 GB for n = 2^24.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::{Dispatch, KernelArg};

use super::copy::copy_cast;
use super::library::{kernel, ty, Inst, KernelId, Module};
use super::operand::check_device;

/// `SK_*`, `SB_*` and `RX_*` flags of `sort.metal`.
pub(crate) mod flags {
    pub const DESC: u32 = 1;
    pub const CANON: u32 = 2;
    pub const VALUES: u32 = 4;
    pub const INDICES: u32 = 8;
    pub const KEYS: u32 = 16;
    pub const KEY_IN: u32 = 4;
    pub const KEY_OUT: u32 = 8;
    pub const P_IOTA: u32 = 16;
    pub const P_NONE: u32 = 32;
    pub const P_ROW: u32 = 64;
    pub const SEG: u32 = 128;
    pub const NO_KOUT: u32 = 256;
}

/// Slots of `sort_block` (`SB_N`): rows up to this length are sorted in one threadgroup.
const BLOCK_MAX: usize = 2048;

/// The unsigned dtype of the same width (the memory type `K` of the sort kernels).
pub(crate) fn key_dtype(op: &'static str, d: DType) -> Result<DType> {
    let k = match (d.size(), d.is_float() || d.is_integer() || d == DType::Bool) {
        (1, true) => DType::UInt8,
        (2, true) => DType::UInt16,
        (4, true) => DType::UInt32,
        (8, true) => DType::UInt64,
        _ => {
            return Err(Error::UnsupportedDType {
                op,
                dtype: d.to_string(),
            })
        }
    };
    Ok(k)
}

/// The instantiations of the sort module for elements of dtype `t` (key dtype `k`): the block
/// sort and the one-sweep radix sort, or with `rts` the reduce-then-scan radix sort's kernels
/// (a library of their own, compiled only for sorts of more than 2^30 elements).
fn insts(t: DType, k: DType, rts: bool) -> Vec<Inst> {
    let (tt, kk) = (ty(t), ty(k));
    let one = if rts { "false" } else { "true" };
    let [pay, keys, lead] = if rts {
        [RTS, RTS_KEYS, RTS_KEYS_LEAD]
    } else {
        [ONE, ONE_KEYS, ONE_KEYS_LEAD]
    };
    let mut v = if rts {
        vec![
            Inst::new("radix_upsweep", "sort", &[t], &format!("{tt}, {kk}")),
            Inst::new("radix_scan", "sort", &[t], "uint"),
        ]
    } else {
        vec![
            Inst::new("sort_block", "sort", &[t], &format!("{tt}, {kk}")),
            Inst::new("radix_hist", "sort", &[t], &format!("{tt}, {kk}")),
        ]
    };
    v.extend([
        Inst::new(
            "radix_downsweep",
            pay,
            &[t, DType::UInt32],
            &format!("{tt}, {kk}, uint, true, false, {one}"),
        ),
        Inst::new(
            "radix_downsweep",
            pay,
            &[t, DType::Int64],
            &format!("{tt}, {kk}, long, true, false, {one}"),
        ),
        Inst::new(
            "radix_downsweep",
            keys,
            &[t],
            &format!("{tt}, {kk}, uint, false, false, {one}"),
        ),
        Inst::new(
            "radix_downsweep",
            lead,
            &[t],
            &format!("{tt}, {kk}, uint, false, true, {one}"),
        ),
    ]);
    v
}

/// The name parts of the `radix_downsweep` instantiations: one sweep (`ONE`) or reduce then
/// scan (`RTS`); with payloads, without (`KEYS`), without and with LEAD ranking (lane 0's digit
/// by a ballot: `KEYS_LEAD`, for the top pass).
const ONE: &str = "sort";
const ONE_KEYS: &str = "sortkeys";
const ONE_KEYS_LEAD: &str = "sortkeyslead";
const RTS: &str = "sortrts";
const RTS_KEYS: &str = "sortrtskeys";
const RTS_KEYS_LEAD: &str = "sortrtskeyslead";

/// The radix sort's two schemes (sort.metal): one sweep a pass with a decoupled look-back, or
/// reduce then scan (three kernels a pass; sorts whose counts exceed the look-back's 30 bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RadixScheme {
    /// `radix_hist` once, then one `radix_downsweep` a pass.
    OneSweep,
    /// `radix_upsweep`, `radix_scan` and `radix_downsweep` a pass.
    ReduceThenScan,
}

/// `radix_downsweep` for elements of dtype `t`: with payloads written as `po` (uint32 between
/// passes, int64 for the last pass of an argsort), or without payloads (`None`); `lead`: the
/// keys-only kernel whose ranking takes lane 0's digit by a ballot (sort.metal, LEAD), for a
/// pass whose digits few values take.
fn downsweep_kernel(
    device: Device,
    t: DType,
    po: Option<DType>,
    lead: bool,
    scheme: RadixScheme,
) -> Result<crate::kernel::Kernel> {
    let rts = scheme == RadixScheme::ReduceThenScan;
    let name = match (po.is_some(), lead, rts) {
        (true, _, false) => ONE,
        (true, _, true) => RTS,
        (false, false, false) => ONE_KEYS,
        (false, true, false) => ONE_KEYS_LEAD,
        (false, false, true) => RTS_KEYS,
        (false, true, true) => RTS_KEYS_LEAD,
    };
    let k = key_dtype("sort", t)?;
    let dts: Vec<DType> = std::iter::once(t).chain(po).collect();
    kernel(
        device,
        Module::Sort,
        KernelId::new("radix_downsweep", name, &dts),
        || insts(t, k, rts),
    )
}

/// A sort kernel for elements of dtype `t` other than the downsweep (`radix_upsweep` and
/// `radix_scan` come from the reduce-then-scan library).
pub(crate) fn sort_kernel(
    device: Device,
    tmpl: &'static str,
    t: DType,
) -> Result<crate::kernel::Kernel> {
    let k = key_dtype("sort", t)?;
    let rts = matches!(tmpl, "radix_upsweep" | "radix_scan");
    kernel(
        device,
        Module::Sort,
        KernelId::new(tmpl, "sort", &[t]),
        || insts(t, k, rts),
    )
}

fn groups(n: usize) -> Result<Dispatch> {
    let g = u32::try_from(n.max(1)).map_err(|_| {
        Error::Unsupported(format!("a sort of {n} threadgroups exceeds the grid limit"))
    })?;
    Dispatch::groups(&[g]).with_threadgroup(&[256])
}

/// `radix_upsweep`'s dispatch: 256 threads a tile and 2 tiles a threadgroup where the pipeline
/// allows 512 threads (the counts of neighbouring tiles then share their stores).
fn upsweep_dispatch(up: &crate::kernel::Kernel, tiles: usize) -> Result<Dispatch> {
    let per = if up.max_total_threads_per_threadgroup() >= 512 {
        2
    } else {
        1
    };
    let g = u32::try_from(tiles.div_ceil(per)).map_err(|_| {
        Error::Unsupported(format!("a sort of {tiles} tiles exceeds the grid limit"))
    })?;
    Dispatch::groups(&[g]).with_threadgroup(&[256 * per as u32])
}

/// Sorts the rows (last axis) of `x` into `values` and/or `indices` (int64), both of x's shape
/// and any layout (see [`crate::ops::sort`] for the order).
pub fn sort_rows(
    x: &Array,
    values: Option<&Array>,
    indices: Option<&Array>,
    descending: bool,
) -> Result<()> {
    sort_rows_with(x, values, indices, descending, None)
}

/// [`sort_rows`] with the radix sort's scheme chosen (`None`: one sweep for sorts of one row
/// of values up to 2^30 elements, reduce then scan for larger ones and for sorts that carry
/// positions: argsorts, batches of rows), for tests and comparisons. Rows of up to 2048 elements take the
/// block sort whatever the scheme.
pub fn sort_rows_with(
    x: &Array,
    values: Option<&Array>,
    indices: Option<&Array>,
    descending: bool,
    scheme: Option<RadixScheme>,
) -> Result<()> {
    let mut arrays = vec![x];
    arrays.extend(values);
    arrays.extend(indices);
    check_device("sort", &arrays)?;
    if x.size() == 0 {
        return Ok(());
    }
    let device = x.device();
    let kd = key_dtype("sort", x.dtype())?;
    let len = x.shape().last().copied().unwrap_or(1);
    let rows = x.size() / len;
    let xk = x.contiguous()?.view_as(kd)?;
    // Contiguous outputs (temporaries where the caller's are strided).
    let vt = match values {
        Some(v) if v.is_contiguous() => Some(v.view_as(kd)?),
        Some(v) => Some(Array::empty(v.shape(), kd, device)?),
        None => None,
    };
    let it = match indices {
        Some(i) if i.is_contiguous() => Some(i.clone()),
        Some(i) => Some(Array::empty(i.shape(), DType::Int64, device)?),
        None => None,
    };
    let mut f = if descending { flags::DESC } else { 0 };
    if indices.is_some() {
        f |= flags::CANON;
    }
    sort_keys(
        &xk,
        x.dtype(),
        rows,
        len,
        vt.as_ref(),
        it.as_ref(),
        f,
        scheme,
    )?;
    if let (Some(v), Some(t)) = (values, &vt) {
        if !v.is_contiguous() {
            copy_cast(&t.view_as(x.dtype())?, v)?;
        }
    }
    if let (Some(i), Some(t)) = (indices, &it) {
        if !i.is_contiguous() {
            copy_cast(t, i)?;
        }
    }
    Ok(())
}

/// Sorts `rows` rows of `len` elements (`xk`: their bits as the key dtype, contiguous) into
/// `values` (contiguous; the values' bits, or with `f & KEYS` the sort keys themselves) and/or
/// `indices` (int64, contiguous). `f`: DESC, CANON, KEYS; `scheme`: the radix sort's (`None`:
/// the faster one for the sort, see below).
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_keys(
    xk: &Array,
    t: DType,
    rows: usize,
    len: usize,
    values: Option<&Array>,
    indices: Option<&Array>,
    f: u32,
    scheme: Option<RadixScheme>,
) -> Result<()> {
    if rows * len == 0 {
        return Ok(());
    }
    if len <= BLOCK_MAX {
        block_sort(xk, t, rows, len, values, indices, f)
    } else {
        // One sweep for keys-only sorts (sort, unique's values and counts). Sorts that carry
        // positions (argsort, batches of rows) keep reduce-then-scan: their downsweep holds
        // ~126 registers a thread, 2 resident threadgroups a multiprocessor, too few to hide
        // the look-back's round trip (H200, 2^24 float32: argsort 689 -> 719 us one-sweep).
        let keys_only = indices.is_none() && rows == 1;
        let scheme = scheme.unwrap_or(if keys_only && rows * len <= RX_VAL {
            RadixScheme::OneSweep
        } else {
            RadixScheme::ReduceThenScan
        });
        radix_sort(xk, t, rows, len, values, indices, f, scheme)
    }
}

/// A 1-element array standing in for an unused buffer argument.
fn dummy(dtype: DType, device: Device) -> Result<Array> {
    Array::empty(&[1], dtype, device)
}

fn block_sort(
    xk: &Array,
    t: DType,
    rows: usize,
    len: usize,
    values: Option<&Array>,
    indices: Option<&Array>,
    mut f: u32,
) -> Result<()> {
    let device = xk.device();
    f &= flags::DESC | flags::CANON | flags::KEYS;
    let seg = len.next_power_of_two();
    let per = BLOCK_MAX / seg;
    if values.is_some() {
        f |= flags::VALUES;
    }
    if indices.is_some() {
        f |= flags::INDICES;
    }
    let mut g = Vec::with_capacity(24);
    g.extend_from_slice(&(rows as u64).to_ne_bytes());
    g.extend_from_slice(&(len as u64).to_ne_bytes());
    g.extend_from_slice(&(seg as u32).to_ne_bytes());
    g.extend_from_slice(&f.to_ne_bytes());
    let v = match values {
        Some(v) => v.clone(),
        None => dummy(xk.dtype(), device)?,
    };
    let i = match indices {
        Some(i) => i.clone(),
        None => dummy(DType::Int64, device)?,
    };
    let k = sort_kernel(device, "sort_block", t)?;
    let args = [
        KernelArg::Array(xk.clone()),
        KernelArg::Array(v),
        KernelArg::Array(i),
        KernelArg::Bytes(g),
    ];
    k.launch(&args, &groups(rows.div_ceil(per))?)
}

/// Elements per radix tile (`RadixTile<K>::n` in sort.metal).
fn tile(key_size: usize) -> usize {
    if key_size <= 4 {
        4096
    } else {
        2048
    }
}

/// The `RadixGeom` of sort.metal.
fn rgeom(n: usize, tiles: usize, seg_len: usize, shift: u32, f: u32) -> Vec<u8> {
    let mut g = Vec::with_capacity(32);
    for v in [n as u64, tiles as u64, seg_len as u64] {
        g.extend_from_slice(&v.to_ne_bytes());
    }
    g.extend_from_slice(&shift.to_ne_bytes());
    g.extend_from_slice(&f.to_ne_bytes());
    g
}

/// `RX_VAL` of sort.metal: the one-sweep look-back's counts are below 2^30.
const RX_VAL: usize = (1 << 30) - 1;
/// `RX_STATE0`: words before the tile states in a one-sweep pass's state buffer.
const RX_STATE0: usize = 256;
/// Tiles each threadgroup of `radix_hist` counts.
const HIST_TILES: usize = 8;

/// The `RadixHistGeom` of sort.metal.
fn hist_geom(n: usize, seg_len: usize, groups: usize, seg_passes: usize, f: u32) -> Vec<u8> {
    let mut g = Vec::with_capacity(32);
    for v in [n as u64, seg_len as u64, groups as u64] {
        g.extend_from_slice(&v.to_ne_bytes());
    }
    g.extend_from_slice(&(seg_passes as u32).to_ne_bytes());
    g.extend_from_slice(&f.to_ne_bytes());
    g
}

/// Elements `[start, start + len)` of the 1-D `a` (a view).
fn part(a: &Array, start: usize, len: usize) -> Result<Array> {
    a.index(&[crate::IndexItem::Slice {
        start: Some(start as isize),
        stop: Some((start + len) as isize),
        step: None,
    }])
}

/// One radix pass's choices: the digit, the kernels' flags, where keys and payloads go.
struct Pass {
    shift: u32,
    flags: u32,
    kout: Array,
    pout: Array,
    /// The payload output's dtype (uint32 between passes, int64 for an argsort's indices).
    po: DType,
    /// The dtype whose instantiation runs the pass (the element dtype where the pass makes keys
    /// or turns them back, else the key dtype).
    kt: DType,
    /// Whether the pass ranks with LEAD.
    lead: bool,
}

impl Pass {
    /// Launches the pass's `radix_downsweep` of `scheme` from `input` (keys, payloads):
    /// `offsets` is the one-sweep pass's state buffer or radix_scan's output, with the digits'
    /// totals; `next` the next one-sweep pass's state buffer (unused by reduce then scan).
    #[allow(clippy::too_many_arguments)]
    fn downsweep(
        &self,
        scheme: RadixScheme,
        with_pay: bool,
        input: [&Array; 2],
        [offsets, totals]: [&Array; 2],
        geom: Vec<u8>,
        next: &Array,
        dispatch: &Dispatch,
    ) -> Result<()> {
        let k = self.kt;
        let device = input[0].device();
        downsweep_kernel(device, k, with_pay.then_some(self.po), self.lead, scheme)?.launch(
            &[
                KernelArg::Array(input[0].clone()),
                KernelArg::Array(self.kout.clone()),
                KernelArg::Array(input[1].clone()),
                KernelArg::Array(self.pout.clone()),
                KernelArg::Array(offsets.clone()),
                KernelArg::Array(totals.clone()),
                KernelArg::Bytes(geom),
                KernelArg::Array(next.clone()),
            ],
            dispatch,
        )
    }
}

/// The stable radix sort of `rows` rows of `len` keys (`xk`: the elements' bits, contiguous)
/// into `values` (bits, or keys with `f & KEYS`; contiguous) and/or `indices` (int64,
/// contiguous); `f`: DESC, CANON, KEYS.
#[allow(clippy::too_many_arguments)]
fn radix_sort(
    xk: &Array,
    t: DType,
    rows: usize,
    len: usize,
    values: Option<&Array>,
    indices: Option<&Array>,
    f: u32,
    scheme: RadixScheme,
) -> Result<()> {
    let device = xk.device();
    let kd = xk.dtype();
    let n = rows * len;
    let limit = match scheme {
        RadixScheme::OneSweep => RX_VAL,
        RadixScheme::ReduceThenScan => u32::MAX as usize,
    };
    if n > limit {
        return Err(Error::Unsupported(format!(
            "sorting {n} elements at once on the GPU with the {scheme:?} radix sort (at most \
             {limit} elements)"
        )));
    }
    let tiles = n.div_ceil(tile(kd.size()));
    let key_passes = kd.size();
    let seg_passes = if rows > 1 {
        (usize::BITS - (rows - 1).leading_zeros()).div_ceil(8) as usize
    } else {
        0
    };
    let total = key_passes + seg_passes;
    let with_pay = indices.is_some() || rows > 1;
    let kt = [
        Array::empty(&[n], kd, device)?,
        Array::empty(&[n], kd, device)?,
    ];
    let pt = if with_pay {
        [
            Array::empty(&[n], DType::UInt32, device)?,
            Array::empty(&[n], DType::UInt32, device)?,
        ]
    } else {
        [dummy(DType::UInt32, device)?, dummy(DType::UInt32, device)?]
    };
    let passes = (0..total)
        .map(|p| {
            let last = p == total - 1;
            let (shift, seg) = if p < key_passes {
                (8 * p as u32, false)
            } else {
                (8 * (p - key_passes) as u32, true)
            };
            let mut pf = f & (flags::DESC | flags::CANON);
            if p == 0 {
                pf |= flags::KEY_IN;
                if with_pay {
                    pf |= flags::P_IOTA;
                }
            }
            if !with_pay {
                pf |= flags::P_NONE;
            }
            if seg {
                pf |= flags::SEG;
            }
            let kout = match (last, values) {
                (true, Some(v)) => {
                    if f & flags::KEYS == 0 {
                        pf |= flags::KEY_OUT;
                    }
                    v.clone()
                }
                (true, None) => {
                    pf |= flags::NO_KOUT;
                    kt[p % 2].clone()
                }
                _ => kt[p % 2].clone(),
            };
            let (pout, po) = match (last, indices) {
                (true, Some(i)) => {
                    pf |= flags::P_ROW;
                    (i.clone(), DType::Int64)
                }
                _ => (pt[p % 2].clone(), DType::UInt32),
            };
            // A pass that neither makes keys nor turns them back into values runs the unsigned
            // instantiation: the same work, and measured ~5 us faster a pass (2^24 float32
            // keys, H200) than the float one with its transform compiled in but switched off.
            let kt = if pf & (flags::KEY_IN | flags::KEY_OUT) != 0 {
                t
            } else {
                kd
            };
            // The top key byte (a float's sign and exponent, a small integer's high bits)
            // usually takes few values: its pass ranks with LEAD (keys-only sorts; measured in
            // sort.metal).
            let lead = !with_pay && p + 1 == key_passes;
            Pass {
                shift,
                flags: pf,
                kout,
                pout,
                po,
                kt,
                lead,
            }
        })
        .collect::<Vec<_>>();
    let d = groups(tiles)?;
    let mut kin = xk.clone();
    let mut pin = pt[1].clone();
    match scheme {
        RadixScheme::OneSweep => {
            // The passes' digit counts (zeros uploaded: one small asynchronous copy) and two
            // state buffers, which the passes use in turn (radix_hist zeroes the first, each
            // pass the other).
            let hist = Array::from_bytes(
                &vec![0u8; 4 * 256 * total],
                &[256 * total],
                DType::UInt32,
                device,
            )?;
            let words = RX_STATE0 + 256 * tiles;
            let states = Array::empty(&[2 * words], DType::UInt32, device)?;
            let state = [part(&states, 0, words)?, part(&states, words, words)?];
            let hist_groups = tiles.div_ceil(HIST_TILES);
            sort_kernel(device, "radix_hist", t)?.launch(
                &[
                    KernelArg::Array(xk.clone()),
                    KernelArg::Array(hist.clone()),
                    KernelArg::Array(state[0].clone()),
                    KernelArg::Bytes(hist_geom(
                        n,
                        len,
                        hist_groups,
                        seg_passes,
                        f & (flags::DESC | flags::CANON),
                    )),
                ],
                &groups(hist_groups)?,
            )?;
            for (p, pass) in passes.into_iter().enumerate() {
                let g = rgeom(n, tiles, len, pass.shift, pass.flags);
                let totals = part(&hist, 256 * p, 256)?;
                pass.downsweep(
                    scheme,
                    with_pay,
                    [&kin, &pin],
                    [&state[p % 2], &totals],
                    g,
                    &state[(p + 1) % 2],
                    &d,
                )?;
                kin = pass.kout;
                if pass.po == DType::UInt32 {
                    pin = pass.pout;
                }
            }
        }
        RadixScheme::ReduceThenScan => {
            let hist = Array::empty(&[256 * tiles], DType::UInt32, device)?;
            let scan = Array::empty(&[256 * tiles], DType::UInt32, device)?;
            let totals = Array::empty(&[256], DType::UInt32, device)?;
            let unused = dummy(DType::UInt32, device)?;
            let rscan = sort_kernel(device, "radix_scan", t)?;
            let per_digit = groups(256)?;
            for pass in passes {
                let up = sort_kernel(device, "radix_upsweep", pass.kt)?;
                let g = rgeom(n, tiles, len, pass.shift, pass.flags);
                up.launch(
                    &[
                        KernelArg::Array(kin.clone()),
                        KernelArg::Array(pin.clone()),
                        KernelArg::Array(hist.clone()),
                        KernelArg::Bytes(g.clone()),
                    ],
                    &upsweep_dispatch(&up, tiles)?,
                )?;
                rscan.launch(
                    &[
                        KernelArg::Array(hist.clone()),
                        KernelArg::Array(scan.clone()),
                        KernelArg::Array(totals.clone()),
                        KernelArg::Bytes(g.clone()),
                    ],
                    &per_digit,
                )?;
                pass.downsweep(
                    scheme,
                    with_pay,
                    [&kin, &pin],
                    [&scan, &totals],
                    g,
                    &unused,
                    &d,
                )?;
                kin = pass.kout;
                if pass.po == DType::UInt32 {
                    pin = pass.pout;
                }
            }
        }
    }
    Ok(())
}
