//! Reductions and cumulative sums on the GPU (`kernels/reduce.metal`, `kernels/scan.metal`).
//!
//! A reduction is presented to the kernels as `m` rows (the kept axes, in C order) of `k`
//! elements `kst` apart (the reduced axes, collapsed into one; when they do not collapse the
//! input is first copied with the reduced axes last). The kernel is chosen by shape:
//! whole-array reductions run in two passes (grid-wide partials, then one group), long
//! contiguous rows take one threadgroup per row, columns (reducing an outer axis of a contiguous
//! array) take 32 columns per group, short or scattered rows one thread per row.
//! Variance and standard deviation of float arrays with correction 0 or 1 are one pass of the
//! same kernels (`red_moments`: Welford per element, Chan's combine); the mean and the other
//! variances are composed from sums and elementwise ops.

use super::copy::copy_cast;
use super::elementwise::{binary, unary};
use super::library::{groups_for, kernel, launch, max_groups, ty, Inst, KernelId, Module, TG};
use super::operand::{aligned, check_device, collapse, geom, operand, MAX_DIMS};
use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::{Dispatch, KernelArg};
use crate::ops::{BinaryOp, ReduceOp, ScanOp, UnaryOp};

/// The reduce ops that have kernels, with the result dtype each gives for an input dtype.
const BASIC: [&str; 9] = [
    "sum",
    "prod",
    "min",
    "max",
    "all",
    "any",
    "argmin",
    "argmax",
    "count_nonzero",
];

fn basic_result(name: &str, t: DType) -> DType {
    match name {
        "sum" | "prod" => ReduceOp::Sum.result_dtype(t).unwrap_or(t),
        "all" | "any" => DType::Bool,
        "argmin" | "argmax" | "count_nonzero" => DType::Int64,
        _ => t,
    }
}

/// Elements per threadgroup of `cumsum_tiles` for elements of `size` bytes (`ScanItems` in
/// `scan.metal`).
fn scan_tile(size: usize) -> usize {
    256 * if size <= 4 { 16 } else { 8 }
}

/// Bytes per partial result of a two-pass reduction: the largest accumulator (`MomAcc<double>`,
/// 24 bytes) rounded up.
const ACC_BYTES: usize = 32;

/// Contiguous rows take one SIMD group each (`reduce_rows_simd`) from this many rows (enough
/// SIMD groups to fill the device) up to rows of `SIMD_ROWS_MAX_K` elements; fewer or longer
/// rows take a threadgroup each.
const SIMD_ROWS_MIN_M: usize = 4096;
const SIMD_ROWS_MAX_K: usize = 16384;

const TEMPLATES: [&str; 4] = [
    "reduce_rows",
    "reduce_rows_simd",
    "reduce_lines",
    "reduce_cols",
];

fn reduce_insts(device: Device, name: &str, t: DType, o: DType) -> Vec<Inst> {
    let mut want: Vec<(&str, DType)> = vec![(name, o)];
    if super::library::bundle(device) {
        for n in BASIC {
            let r = basic_result(n, t);
            if !want.contains(&(n, r)) {
                want.push((n, r));
            }
        }
    }
    let mut v = Vec::new();
    for (n, r) in want {
        let op = format!("red_{n}<{}>", ty(t));
        for tmpl in TEMPLATES {
            v.push(Inst::new(
                tmpl,
                n,
                &[t, r],
                &format!("{op}, {}, {}", ty(t), ty(r)),
            ));
        }
        v.push(Inst::new(
            "reduce_partial",
            n,
            &[t],
            &format!("{op}, {}", ty(t)),
        ));
        v.push(Inst::new(
            "reduce_final",
            n,
            &[t, r],
            &format!("{op}, {}", ty(r)),
        ));
        if n == "argmax" || n == "argmin" {
            v.push(Inst::new(
                "reduce_arg_partial",
                n,
                &[t],
                &format!("{}, {}", ty(t), (n == "argmax") as u8),
            ));
        }
        v.push(Inst::new(
            "reduce_cols_part",
            n,
            &[t],
            &format!("{op}, {}", ty(t)),
        ));
        v.push(Inst::new(
            "reduce_cols_final",
            n,
            &[t, r],
            &format!("{op}, {}", ty(r)),
        ));
    }
    v
}

/// The `RGeom` struct of `reduce.metal`.
#[allow(clippy::too_many_arguments)]
fn rgeom(
    m: usize,
    k: usize,
    kst: isize,
    off: i64,
    vec: bool,
    parts: usize,
    shape: &[usize],
    st: &[isize],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(176);
    b.extend_from_slice(&(m as u64).to_ne_bytes());
    b.extend_from_slice(&(k as u64).to_ne_bytes());
    b.extend_from_slice(&(kst as i64).to_ne_bytes());
    b.extend_from_slice(&off.to_ne_bytes());
    b.extend_from_slice(&(shape.len() as u32).to_ne_bytes());
    b.extend_from_slice(&(vec as u32).to_ne_bytes());
    b.extend_from_slice(&(parts as u64).to_ne_bytes());
    for d in 0..MAX_DIMS {
        b.extend_from_slice(&(shape.get(d).copied().unwrap_or(1) as u64).to_ne_bytes());
    }
    for d in 0..MAX_DIMS {
        b.extend_from_slice(&(st.get(d).copied().unwrap_or(0) as i64).to_ne_bytes());
    }
    b
}

/// Reduces `x` over `axes` into the contiguous `out` (the kept shape, reduced axes of length 1),
/// whose dtype is the op's result dtype.
pub fn reduce(op: ReduceOp, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    check_device(op.name(), &[x, out])?;
    out.check_writable(op.name())?;
    if !out.is_contiguous() {
        return Err(Error::Value(format!(
            "internal: {} on the GPU needs a contiguous output",
            op.name()
        )));
    }
    if axes.iter().any(|&a| a >= x.ndim()) {
        return Err(Error::Shape(format!(
            "{}: axes {axes:?} out of range for {} dimensions",
            op.name(),
            x.ndim()
        )));
    }
    if out.size() == 0 {
        return Ok(());
    }
    match op {
        ReduceOp::Mean => {
            let w = work_dtype(out.dtype());
            let n = axes.iter().map(|&a| x.shape()[a]).product::<usize>();
            let mean = mean_of(x, axes, w, n)?;
            copy_cast(&mean, out)
        }
        ReduceOp::Var { correction } | ReduceOp::Std { correction }
            if one_pass_name(op, x.dtype(), out.dtype()).is_none() =>
        {
            let w = work_dtype(out.dtype());
            let n = axes.iter().map(|&a| x.shape()[a]).product::<usize>();
            let xw = if x.dtype() == w {
                x.clone()
            } else {
                x.astype(w)?
            };
            let mean = mean_of(&xw, axes, w, n)?;
            let full = Array::empty(x.shape(), w, x.device())?;
            binary(
                BinaryOp::Subtract,
                &xw,
                &mean.broadcast_to(x.shape())?,
                &full,
            )?;
            let sq = Array::empty(x.shape(), w, x.device())?;
            binary(BinaryOp::Multiply, &full, &full, &sq)?;
            let s = Array::empty(out.shape(), w, x.device())?;
            basic("sum", &sq, axes, &s)?;
            let var = divide_by(&s, (n as f64 - correction).max(0.0))?;
            let res = if matches!(op, ReduceOp::Std { .. }) {
                let r = Array::empty(var.shape(), w, x.device())?;
                unary(UnaryOp::Sqrt, &var, &r)?;
                r
            } else {
                var
            };
            copy_cast(&res, out)
        }
        ReduceOp::Var { .. } | ReduceOp::Std { .. } => {
            let name = one_pass_name(op, x.dtype(), out.dtype()).unwrap_or("var_c0");
            basic(name, x, axes, out)
        }
        other => basic(other.name(), x, axes, out),
    }
}

/// The one-pass moments kernel of a variance or standard deviation (`red_var_c0`, ... in
/// `reduce.metal`): float input and output of one dtype, correction 0 or 1.
fn one_pass_name(op: ReduceOp, t: DType, o: DType) -> Option<&'static str> {
    if t != o || !t.is_float() {
        return None;
    }
    match op {
        ReduceOp::Var { correction: 0.0 } => Some("var_c0"),
        ReduceOp::Var { correction: 1.0 } => Some("var_c1"),
        ReduceOp::Std { correction: 0.0 } => Some("std_c0"),
        ReduceOp::Std { correction: 1.0 } => Some("std_c1"),
        _ => None,
    }
}

/// The dtype means are accumulated in: float32 for the 16-bit floats, else the result dtype.
fn work_dtype(result: DType) -> DType {
    match result {
        DType::Float16 | DType::BFloat16 => DType::Float32,
        d => d,
    }
}

/// `sum(x, axes) / n` in dtype `w`, with the reduced axes kept (length 1).
fn mean_of(x: &Array, axes: &[usize], w: DType, n: usize) -> Result<Array> {
    let kept: Vec<usize> = (0..x.ndim())
        .map(|i| if axes.contains(&i) { 1 } else { x.shape()[i] })
        .collect();
    let s = Array::empty(&kept, w, x.device())?;
    basic("sum", x, axes, &s)?;
    divide_by(&s, n as f64)
}

fn divide_by(s: &Array, d: f64) -> Result<Array> {
    let w = s.dtype();
    let den = Array::scalar(Scalar::Float(d), w, s.device())?.broadcast_to(s.shape())?;
    let r = Array::empty(s.shape(), w, s.device())?;
    binary(BinaryOp::Divide, s, &den, &r)?;
    Ok(r)
}

/// Sum, prod, min, max, all, any, argmin, argmax of `x` over `axes` into `out` (any output
/// dtype the op's accumulator converts to).
fn basic(name: &'static str, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    let device = out.device();
    let kept: Vec<usize> = (0..x.ndim()).filter(|i| !axes.contains(i)).collect();
    let xo = operand(x)?;
    let pick = |idx: &[usize]| -> (Vec<usize>, Vec<isize>) {
        let sh: Vec<usize> = idx.iter().map(|&i| x.shape()[i]).collect();
        let st: Vec<isize> = idx.iter().map(|&i| xo.strides[i]).collect();
        let (s, t) = collapse(&sh, &[st]);
        (s, t.into_iter().next().unwrap_or_default())
    };
    let (oshape, ost) = pick(&kept);
    let (ishape, ist) = pick(axes);
    if ishape.len() > 1 || oshape.len() > MAX_DIMS {
        // Copy with the reduced axes last, contiguous: they then collapse into one.
        let mut perm = kept.clone();
        perm.extend_from_slice(axes);
        let p = x.permute(&perm)?;
        let c = Array::empty(p.shape(), p.dtype(), device)?;
        copy_cast(&p, &c)?;
        let n = kept.len();
        return basic(name, &c, &(n..c.ndim()).collect::<Vec<_>>(), out);
    }
    let m: usize = oshape.iter().product();
    let k: usize = ishape.iter().product();
    let kst = ist.first().copied().unwrap_or(1);
    let (t, o) = (x.dtype(), out.dtype());
    let get = |tmpl: &'static str, dts: &[DType]| {
        kernel(
            device,
            Module::Reduce,
            KernelId::new(tmpl, name, dts),
            || reduce_insts(device, name, t, o),
        )
    };
    if m == 1 && k > 8192 {
        let vec = kst == 1 && aligned(x);
        let groups = groups_for(device, k as u64, 16);
        let partial = Array::empty(&[groups as usize * ACC_BYTES], DType::UInt8, device)?;
        let g = rgeom(1, k, kst, xo.off, vec, groups as usize, &[], &[]);
        let arg = name == "argmax" || name == "argmin";
        let k1 = get(
            if arg && vec {
                "reduce_arg_partial"
            } else {
                "reduce_partial"
            },
            &[t],
        )?;
        let args = [
            KernelArg::Array(xo.view.clone()),
            KernelArg::Array(partial.clone()),
            KernelArg::Bytes(g.clone()),
        ];
        launch(&k1, &args, groups)?;
        let k2 = get("reduce_final", &[t, o])?;
        let args = [
            KernelArg::Array(partial),
            KernelArg::Array(out.clone()),
            KernelArg::Bytes(g),
        ];
        return launch(&k2, &args, 1);
    }
    // Pack loads in reduce_rows: contiguous rows whose starts are all 16-byte aligned.
    let es = t.size() as isize;
    let row_vec = kst == 1 && aligned(x) && ost.iter().all(|&s| (s * es) % 16 == 0);
    let g = rgeom(m, k, kst, xo.off, row_vec, 0, &oshape, &ost);
    let cols = oshape.len() == 1 && ost[0] == 1 && kst != 1 && m >= 32;
    let (tmpl, groups) = if kst == 1 && k <= 64 && m > 1 {
        ("reduce_lines", groups_for(device, m as u64, 1))
    } else if kst == 1 && m >= SIMD_ROWS_MIN_M && k <= SIMD_ROWS_MAX_K {
        let gmax = (max_groups(device) as usize * 8).min(65535);
        ("reduce_rows_simd", m.div_ceil(8).clamp(1, gmax) as u32)
    } else if kst == 1 || m == 1 {
        let gmax = (max_groups(device) as usize * 8).min(65535);
        ("reduce_rows", m.clamp(1, gmax) as u32)
    } else if cols {
        // Enough groups to fill the device: split the rows into slices when the columns alone
        // give too few (pass 1 writes per-slice partials, pass 2 combines them in order).
        let es = t.size();
        let pack = 16 / es;
        let vec = es >= 4
            && m.is_multiple_of(pack)
            && aligned(x)
            && (kst.unsigned_abs() * es).is_multiple_of(16);
        let per = if vec { pack } else { 1 };
        let col_groups = m.div_ceil(32 * per);
        let want = max_groups(device) as usize * 2;
        let slices = (want / col_groups).clamp(1, (k / 64).max(1));
        if slices > 1 {
            let partial = Array::empty(&[slices * m * ACC_BYTES], DType::UInt8, device)?;
            let g = rgeom(m, k, kst, xo.off, vec, slices, &oshape, &ost);
            let k1 = get("reduce_cols_part", &[t])?;
            let args = [
                KernelArg::Array(xo.view.clone()),
                KernelArg::Array(partial.clone()),
                KernelArg::Bytes(g.clone()),
            ];
            launch(
                &k1,
                &args,
                (col_groups * slices).min(u32::MAX as usize) as u32,
            )?;
            let k2 = get("reduce_cols_final", &[t, o])?;
            let args = [
                KernelArg::Array(partial),
                KernelArg::Array(out.clone()),
                KernelArg::Bytes(g),
            ];
            return launch(&k2, &args, groups_for(device, m as u64, 1));
        }
        let gmax = (max_groups(device) as usize * 4).min(65535);
        ("reduce_cols", m.div_ceil(32).clamp(1, gmax) as u32)
    } else if m >= 4096 || k <= 64 {
        ("reduce_lines", groups_for(device, m as u64, 1))
    } else {
        let gmax = (max_groups(device) as usize * 8).min(65535);
        ("reduce_rows", m.clamp(1, gmax) as u32)
    };
    let kk = get(tmpl, &[t, o])?;
    let args = [
        KernelArg::Array(xo.view),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(g),
    ];
    launch(&kk, &args, groups)
}

/// Cumulative sum of `x` along `axis` into the contiguous `out` (same shape and dtype).
pub fn cumsum(x: &Array, axis: usize, out: &Array) -> Result<()> {
    scan(ScanOp::Sum, x, axis, out)
}

/// Cumulative `op` of `x` along `axis` into the contiguous `out` (same shape and dtype).
pub fn scan(op: ScanOp, x: &Array, axis: usize, out: &Array) -> Result<()> {
    let name = op.name();
    check_device(name, &[x, out])?;
    out.check_writable(name)?;
    if x.dtype() != out.dtype() || x.shape() != out.shape() || !out.is_contiguous() {
        return Err(Error::Value(
            "internal: cumulative ops need a contiguous output of the input's shape and dtype"
                .into(),
        ));
    }
    if axis >= x.ndim() {
        return Err(Error::Shape(format!(
            "{name}: axis {axis} out of range for {} dimensions",
            x.ndim()
        )));
    }
    if out.size() == 0 {
        return Ok(());
    }
    let device = out.device();
    let t = x.dtype();
    let xo = operand(x)?;
    let oo = operand(out)?;
    let others: Vec<usize> = (0..x.ndim()).filter(|&i| i != axis).collect();
    let sh: Vec<usize> = others.iter().map(|&i| x.shape()[i]).collect();
    let sx: Vec<isize> = others.iter().map(|&i| xo.strides[i]).collect();
    let so: Vec<isize> = others.iter().map(|&i| oo.strides[i]).collect();
    let (shape, st) = collapse(&sh, &[sx, so]);
    if shape.len() > MAX_DIMS {
        let c = x.contiguous()?;
        return scan(op, &c, axis, out);
    }
    let lines: usize = shape.iter().product();
    let len = x.shape()[axis];
    let ax = |pieces: usize| -> Vec<u8> {
        let mut b = Vec::new();
        for v in [
            len as i64,
            xo.strides[axis] as i64,
            oo.strides[axis] as i64,
            pieces as i64,
        ] {
            b.extend_from_slice(&v.to_ne_bytes());
        }
        b
    };
    let g = geom(
        lines,
        shape.len() as u32,
        0,
        &shape,
        &[(xo.off, &st[0]), (oo.off, &st[1])],
    );
    let get = |tmpl: &'static str| {
        kernel(
            device,
            Module::Scan,
            KernelId::new(tmpl, name, &[t]),
            || {
                let ts: Vec<DType> = if super::library::bundle(device) {
                    DType::ALL.to_vec()
                } else {
                    vec![t]
                };
                let ops: Vec<ScanOp> = if super::library::bundle(device) {
                    vec![ScanOp::Sum, ScanOp::Prod]
                } else {
                    vec![op]
                };
                let mut v = Vec::new();
                for o in ops {
                    for &tt in &ts {
                        for tm in [
                            "cumsum_lines",
                            "cumsum_pieces",
                            "cumsum_tile_sums",
                            "cumsum_tiles",
                        ] {
                            let args = format!("scan_{}<{}>, {}", o.name(), ty(tt), ty(tt));
                            v.push(Inst::new(tm, o.name(), &[tt], &args));
                        }
                    }
                }
                v
            },
        )
    };
    let threads_wanted = max_groups(device) as usize * TG as usize;
    if lines >= threads_wanted / 4 || len < 4096 {
        let k = get("cumsum_lines")?;
        let args = [
            KernelArg::Array(xo.view),
            KernelArg::Array(oo.view),
            KernelArg::Bytes(g),
            KernelArg::Bytes(ax(1)),
        ];
        return launch(&k, &args, groups_for(device, lines as u64, 1));
    }
    // Few long lines, in three passes: each line is cut into `parts` parts; the first kernel
    // writes each part's total to `sums`, the totals are scanned in place, the second kernel
    // rescans each part from the previous part's inclusive total.
    let three_passes = |tiles: bool, parts: usize, d: Dispatch| -> Result<()> {
        let sums = Array::empty(&[lines, parts], t, device)?;
        let (x, y, s, g, ax) = (
            KernelArg::Array(xo.view.clone()),
            KernelArg::Array(oo.view.clone()),
            KernelArg::Array(sums.clone()),
            KernelArg::Bytes(g.clone()),
            KernelArg::Bytes(ax(parts)),
        );
        if tiles {
            let totals = [x.clone(), s.clone(), g.clone(), ax.clone()];
            get("cumsum_tile_sums")?.launch(&totals, &d)?;
            scan(op, &sums.clone(), 1, &sums)?;
            get("cumsum_tiles")?.launch(&[x, y, s, g, ax], &d)
        } else {
            let pass = |p: u32| KernelArg::Bytes(p.to_ne_bytes().to_vec());
            let k = get("cumsum_pieces")?;
            let totals = [
                x.clone(),
                y.clone(),
                s.clone(),
                g.clone(),
                ax.clone(),
                pass(0),
            ];
            k.launch(&totals, &d)?;
            scan(op, &sums.clone(), 1, &sums)?;
            k.launch(&[x, y, s, g, ax, pass(1)], &d)
        }
    };
    // Unit strides (the last axis of the contiguous output): coalesced tiles, one group each.
    if oo.strides[axis] == 1 && lines <= 65535 {
        if xo.strides[axis] != 1 {
            return scan(op, &x.contiguous()?, axis, out);
        }
        let tiles = len.div_ceil(scan_tile(t.size()));
        let d = Dispatch::groups(&[tiles as u32, lines as u32]).with_threadgroup(&[TG])?;
        return three_passes(true, tiles, d);
    }
    // Strided lines: pieces of at least 256 elements, about one thread per piece.
    let pieces = (threads_wanted / lines).clamp(1, len.div_ceil(256));
    let groups = groups_for(device, (lines * pieces) as u64, 1);
    let d = Dispatch::groups(&[groups]).with_threadgroup(&[TG])?;
    three_passes(false, pieces, d)
}
