//! The GPU backend of the ops: one implementation for every GPU runtime, written against the
//! kernel API ([`crate::kernel`]) only, running the built-in MSL kernel library in
//! `crates/ingot/kernels/*.metal`.
//!
//! Each kernel is an explicit instantiation of a template of one module (`copy.metal`,
//! `unary.metal`, ...), named `<template>__<op>__<dtypes>`. A library is compiled on first use:
//! on a GPU one library per (op, dtypes) holding its layout variants (a fraction of a second of
//! NVRTC), on the CPU kernel engine (used to test this backend without a GPU) one library per
//! (module, dtypes) holding every op, since each C++ compile costs seconds there. Kernels are then
//! found by name in a memory cache; the backends keep the compiled code on disk.
//!
//! The functions take the same arguments as the native CPU backend (`ops::cpu`): inputs already
//! broadcast to the output's shape and converted to the computation dtype, and a contiguous
//! output (`copy_cast` also writes strided outputs). They work on any device whose kernel engine
//! exists, the CPU included, which is how the tests check them against `ops::cpu`.

mod reduce;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::{CompileOptions, Dispatch, Kernel, KernelArg, Library};
use crate::layout::Layout;
use crate::ops::{BinaryOp, UnaryOp};

pub use reduce::{cumsum, reduce};

/// The shared definitions prepended to every module.
const COMMON: &str = include_str!("../../kernels/common.metal");

/// The kernel modules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Module {
    Copy,
    Unary,
    Binary,
    Where,
    Reduce,
    Scan,
}

impl Module {
    fn source(self) -> &'static str {
        match self {
            Module::Copy => include_str!("../../kernels/copy.metal"),
            Module::Unary => include_str!("../../kernels/unary.metal"),
            Module::Binary => include_str!("../../kernels/binary.metal"),
            Module::Where => include_str!("../../kernels/where.metal"),
            Module::Reduce => include_str!("../../kernels/reduce.metal"),
            Module::Scan => include_str!("../../kernels/scan.metal"),
        }
    }

    fn file(self) -> &'static str {
        match self {
            Module::Copy => "copy.metal",
            Module::Unary => "unary.metal",
            Module::Binary => "binary.metal",
            Module::Where => "where.metal",
            Module::Reduce => "reduce.metal",
            Module::Scan => "scan.metal",
        }
    }
}

/// One explicit instantiation: the host name and the template expression (`copy_contig<float, half>`).
pub(crate) struct Inst {
    pub name: String,
    pub expr: String,
}

impl Inst {
    pub fn new(template: &str, op: &str, dtypes: &[DType], args: &str) -> Inst {
        let mut name = format!("{template}__{op}");
        for d in dtypes {
            name.push('_');
            name.push_str(d.short_name());
        }
        Inst {
            name,
            expr: format!("{template}<{args}>"),
        }
    }
}

/// The MSL element type of a dtype in the kernels.
pub(crate) fn ty(d: DType) -> &'static str {
    d.msl_name()
}

/// Whether libraries bundle every op of a module (the CPU engine, where each compile is a C++
/// compiler run) or hold a single op (GPUs).
pub(crate) fn bundle(device: Device) -> bool {
    device == Device::Cpu
}

/// One instantiation of a kernel template, named without building a string: the launch path
/// looks kernels up by this (a small-op launch is a few microseconds; formatting the name and
/// hashing it was a noticeable share of the host time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KernelId {
    template: &'static str,
    op: &'static str,
    dtypes: [Option<DType>; 2],
}

impl KernelId {
    /// The instantiation of `template` for `op` over `dtypes` (at most two).
    pub fn new(template: &'static str, op: &'static str, dtypes: &[DType]) -> KernelId {
        debug_assert!(dtypes.len() <= 2);
        KernelId {
            template,
            op,
            dtypes: [dtypes.first().copied(), dtypes.get(1).copied()],
        }
    }

    /// The kernel's name in its library (as [`Inst::new`] names it).
    fn name(&self) -> String {
        let dts: Vec<DType> = self.dtypes.iter().flatten().copied().collect();
        Inst::new(self.template, self.op, &dts, "").name
    }
}

type KernelCache = Mutex<HashMap<(Device, String), Kernel>>;

fn cache() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

type LaunchCache = Mutex<HashMap<(Device, KernelId), Kernel>>;

fn launch_cache() -> &'static LaunchCache {
    static CACHE: OnceLock<LaunchCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The kernel `id`, compiling on a miss the library made of `module` and the instantiations
/// `insts()` (which must include `id`).
pub(crate) fn kernel(
    device: Device,
    module: Module,
    id: KernelId,
    insts: impl FnOnce() -> Vec<Inst>,
) -> Result<Kernel> {
    if let Some(k) = launch_cache().lock().map_err(poisoned)?.get(&(device, id)) {
        return Ok(k.clone());
    }
    let k = kernel_named(device, module, &id.name(), insts)?;
    launch_cache()
        .lock()
        .map_err(poisoned)?
        .insert((device, id), k.clone());
    Ok(k)
}

/// The kernel `name`, compiling on a miss the library made of `module` and the instantiations
/// `insts()` (which must include `name`); every instantiation of the library is cached by name.
fn kernel_named(
    device: Device,
    module: Module,
    name: &str,
    insts: impl FnOnce() -> Vec<Inst>,
) -> Result<Kernel> {
    let key = (device, name.to_string());
    if let Some(k) = cache().lock().map_err(poisoned)?.get(&key) {
        return Ok(k.clone());
    }
    let mut list = insts();
    let mut seen = std::collections::HashSet::new();
    list.retain(|i| seen.insert(i.name.clone()));
    let mut src = String::new();
    if matches!(device, Device::Metal(_)) {
        src.push_str("#define INGOT_NO_F64 1\n#define INGOT_NATIVE_METAL 1\n");
    }
    src.push_str(COMMON);
    src.push('\n');
    src.push_str(module.source());
    src.push('\n');
    for i in &list {
        src.push_str(&format!(
            "template [[host_name(\"{}\")]] [[kernel]] decltype({}) {};\n",
            i.name, i.expr, i.expr
        ));
    }
    let options = CompileOptions {
        file_name: format!("ingot/kernels/{}", module.file()),
        ..CompileOptions::default()
    };
    let lib = Library::compile(&src, device, &options)?;
    let mut map = cache().lock().map_err(poisoned)?;
    for i in &list {
        let k = lib.function(&i.name)?;
        map.insert((device, i.name.clone()), k);
    }
    map.get(&key).cloned().ok_or_else(|| {
        Error::Compile(format!(
            "internal: kernel {name} missing from its generated library"
        ))
    })
}

fn poisoned<T>(_: T) -> Error {
    Error::Device("kernel cache lock poisoned by a panic".into())
}

/// Threads per threadgroup of every kernel.
pub(crate) const TG: u32 = 256;

/// The most threadgroups a grid-stride kernel is given: enough to fill a large GPU several
/// times over (132 multiprocessors x 8 groups of 256 threads on an H100), a few per core on
/// the CPU engine.
pub(crate) fn max_groups(device: Device) -> u32 {
    match device {
        Device::Cpu => 64,
        _ => 1056,
    }
}

/// Threadgroups for `items` units of work of a grid-stride kernel, `per_thread` units each.
pub(crate) fn groups_for(device: Device, items: u64, per_thread: u64) -> u32 {
    let threads = items.div_ceil(per_thread.max(1));
    threads
        .div_ceil(TG as u64)
        .clamp(1, max_groups(device) as u64) as u32
}

/// Threadgroups of a chunked contiguous kernel (`INGOT_CHUNKS` in `common.metal`) over `packs`
/// 16-byte packs: one pass, each group 2 x [`TG`] packs, so that each group streams one
/// contiguous span (capped only on the CPU engine, where a group is a unit of scheduling).
pub(crate) fn chunk_groups(device: Device, packs: u64) -> u32 {
    let cap: u64 = match device {
        Device::Cpu => max_groups(device) as u64,
        _ => 1 << 22,
    };
    packs.div_ceil(2 * TG as u64).clamp(1, cap) as u32
}

/// Launches `k` over `groups` threadgroups of [`TG`] threads.
pub(crate) fn launch(k: &Kernel, args: &[KernelArg], groups: u32) -> Result<()> {
    let d = Dispatch::groups(&[groups.max(1)]).with_threadgroup(&[TG])?;
    k.launch(args, &d)
}

// ---- operands ------------------------------------------------------------------------------------

/// An array seen as a contiguous 1-D view of the elements its layout touches, plus the offset of
/// its first element and its strides relative to that view. The kernel API binds the view as a
/// buffer without copying; the kernel does the strided addressing.
pub(crate) struct Operand {
    pub view: Array,
    pub off: i64,
    pub strides: Vec<isize>,
}

pub(crate) fn operand(a: &Array) -> Result<Operand> {
    let l = a.layout();
    let (lo, hi) = l.span().unwrap_or((l.offset(), l.offset()));
    let view = a.with_layout(Layout::new(vec![hi - lo], vec![1], lo)?)?;
    Ok(Operand {
        view,
        off: (l.offset() - lo) as i64,
        strides: l.strides().to_vec(),
    })
}

/// The address of the array's first element (0 when the memory has no address here). Arrays
/// imported through DLPack start wherever the producer's tensor starts, so alignment is a
/// property of the address, not of the offset in the buffer.
pub(crate) fn first_address(a: &Array) -> usize {
    let b = a.buffer();
    let base = b
        .device_ptr()
        .map(|p| p as usize)
        .or_else(|| b.host_ptr().map(|p| p as usize))
        .unwrap_or(0);
    base + a.layout().offset() * a.dtype().size()
}

/// True when the array's first element is 16-byte aligned in memory (pack loads allowed).
pub(crate) fn aligned(a: &Array) -> bool {
    first_address(a).is_multiple_of(16)
}

/// Drops axes of length 1 and merges axes that are contiguous with their inner neighbour in
/// every operand. Returns the new shape and each operand's strides.
pub(crate) fn collapse(shape: &[usize], strides: &[Vec<isize>]) -> (Vec<usize>, Vec<Vec<isize>>) {
    let mut sh: Vec<usize> = Vec::new();
    let mut st: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for d in 0..shape.len() {
        if shape[d] == 1 {
            continue;
        }
        let merge = !sh.is_empty() && {
            let last = sh.len() - 1;
            // The previous (outer) axis merges with this one when outer stride = inner stride * len.
            strides
                .iter()
                .zip(&st)
                .all(|(s, t)| t[last] == s[d] * shape[d] as isize)
        };
        if merge {
            let last = sh.len() - 1;
            sh[last] *= shape[d];
            for (t, s) in st.iter_mut().zip(strides) {
                t[last] = s[d];
            }
        } else {
            sh.push(shape[d]);
            for (t, s) in st.iter_mut().zip(strides) {
                t.push(s[d]);
            }
        }
    }
    (sh, st)
}

/// The most dimensions a strided kernel handles (after collapsing).
pub(crate) const MAX_DIMS: usize = 8;

/// The `Geom` struct of `common.metal`: n, ndim, vec, shape[8], off[4], st[4][8].
pub(crate) fn geom(
    n: usize,
    ndim: u32,
    vec: u32,
    shape: &[usize],
    ops: &[(i64, &[isize])],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(368);
    b.extend_from_slice(&(n as u64).to_ne_bytes());
    b.extend_from_slice(&ndim.to_ne_bytes());
    b.extend_from_slice(&vec.to_ne_bytes());
    for d in 0..MAX_DIMS {
        b.extend_from_slice(&(shape.get(d).copied().unwrap_or(1) as u64).to_ne_bytes());
    }
    for k in 0..4 {
        b.extend_from_slice(&ops.get(k).map_or(0, |o| o.0).to_ne_bytes());
    }
    for k in 0..4 {
        for d in 0..MAX_DIMS {
            let s = ops.get(k).and_then(|o| o.1.get(d)).copied().unwrap_or(0);
            b.extend_from_slice(&(s as i64).to_ne_bytes());
        }
    }
    b
}

/// The `EGeom` struct of `common.metal` (contiguous kernels): n, ndim (or mode), vec.
pub(crate) fn egeom(n: usize, ndim: u32, vec: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend_from_slice(&(n as u64).to_ne_bytes());
    b.extend_from_slice(&ndim.to_ne_bytes());
    b.extend_from_slice(&vec.to_ne_bytes());
    b
}

/// Runs `f` on slices along the first axis when a strided elementwise problem has more than
/// [`MAX_DIMS`] dimensions after collapsing (every array has the same shape).
fn split_outer(arrays: &[&Array], f: &mut dyn FnMut(&[Array]) -> Result<()>) -> Result<()> {
    let n = arrays[0].shape()[0];
    for i in 0..n {
        let item = [crate::layout::IndexItem::Int(i as isize)];
        let parts = arrays
            .iter()
            .map(|a| a.index(&item))
            .collect::<Result<Vec<_>>>()?;
        f(&parts)?;
    }
    Ok(())
}

fn check_device(op: &str, arrays: &[&Array]) -> Result<()> {
    super::same_device(op, arrays)
}

// ---- copy, fill ------------------------------------------------------------------------------------

/// The `TGeom` of `copy_transpose` and its threadgroup grid, when a collapsed strided copy of
/// `shape` (strides `st`: source, destination; element offsets `off` in the bound views) into
/// elements of `d_size` bytes is a transpose: two or three axes, the source unit-strided along
/// one and the destination along another, both long enough to fill tiles. `even_starts`: both
/// arrays' first elements are aligned to two elements in memory (for pair accesses).
fn transpose_geom(
    shape: &[usize],
    st: &[Vec<isize>],
    off: (i64, i64),
    d_size: usize,
    even_starts: bool,
) -> Option<(Vec<u8>, [u32; 3])> {
    if !(2..=3).contains(&shape.len()) {
        return None;
    }
    let unit = |v: &[isize]| v.iter().position(|&x| x.unsigned_abs() == 1);
    let (r, c) = (unit(&st[0])?, unit(&st[1])?);
    if r == c || shape[r] < 16 || shape[c] < 16 {
        return None;
    }
    let (nb, sb, db) = (0..shape.len())
        .find(|&a| a != r && a != c)
        .map_or((1, 0, 0), |b| (shape[b], st[0][b], st[1][b]));
    // The tile edge of `TTile` in copy.metal.
    let n = if d_size <= 4 { 64 } else { 32 };
    // CUDA's second and third grid axes hold at most 65535 groups.
    let groups = [shape[c].div_ceil(n), shape[r].div_ceil(n), nb];
    if groups[0] > u32::MAX as usize || groups[1] > 65535 || groups[2] > 65535 {
        return None;
    }
    let vec = even_starts
        && st[0][r] == 1
        && st[1][c] == 1
        && [st[0][c], sb, st[1][r], db].iter().all(|s| s % 2 == 0);
    let mut g = Vec::with_capacity(88);
    for v in [
        shape[r] as i64,
        shape[c] as i64,
        off.0,
        off.1,
        st[0][r] as i64,
        st[0][c] as i64,
        sb as i64,
        st[1][r] as i64,
        st[1][c] as i64,
        db as i64,
        vec as i64,
    ] {
        g.extend_from_slice(&v.to_ne_bytes());
    }
    Some((g, groups.map(|x| x as u32)))
}

/// A contiguous copy of the elementwise operand `a` (of `out`'s shape) when it is a transposed
/// view relative to `out` (unit-strided along another axis than `out`): the strided kernels
/// would read one element per 32-byte sector, the tiled transpose copy followed by the
/// contiguous kernel moves more bytes in much less time. Broadcast operands, small arrays
/// (where the extra launch costs more than it saves) and copies that do not fit in memory are
/// left as they are.
fn untransposed(a: &Array, out: &Array) -> Result<Option<Array>> {
    const MIN_ELEMENTS: usize = 1 << 16;
    if a.size() < MIN_ELEMENTS
        || a.ndim() < 2
        || a.is_contiguous()
        || !out.is_contiguous()
        || a.shape() != out.shape()
    {
        return Ok(None);
    }
    let strides = [
        a.layout().strides().to_vec(),
        out.layout().strides().to_vec(),
    ];
    let (shape, st) = collapse(out.shape(), &strides);
    if st[0].contains(&0) || transpose_geom(&shape, &st, (0, 0), a.dtype().size(), false).is_none()
    {
        return Ok(None);
    }
    // Without room for the copy the strided kernel still gives the result, only slower.
    let c = match Array::empty(a.shape(), a.dtype(), a.device()) {
        Ok(c) => c,
        Err(Error::OutOfMemory { .. }) => return Ok(None),
        Err(e) => return Err(e),
    };
    copy_raw(a, &c)?;
    Ok(Some(c))
}

fn copy_insts(device: Device, template: &str, s: DType, d: DType) -> Vec<Inst> {
    let templates: &[&str] = if bundle(device) {
        &["copy_contig", "copy_fill", "copy_strided", "copy_transpose"]
    } else {
        std::slice::from_ref(&template)
    };
    let dsts: Vec<DType> = if bundle(device) {
        DType::ALL
            .iter()
            .copied()
            .filter(|&x| !(matches!(device, Device::Metal(_)) && x == DType::Float64))
            .collect()
    } else {
        vec![d]
    };
    let mut v = Vec::new();
    for t in templates {
        for &dd in &dsts {
            v.push(Inst::new(
                t,
                "copy",
                &[s, dd],
                &format!("{}, {}", ty(s), ty(dd)),
            ));
        }
    }
    v
}

/// Writes `src` (already broadcast to `dst`'s shape) into `dst` (any layout), converting dtypes
/// as NumPy's `astype`. Overlapping memory reads the source completely first.
pub fn copy_cast(src: &Array, dst: &Array) -> Result<()> {
    check_device("copy", &[src, dst])?;
    if src.shape() != dst.shape() {
        return Err(Error::Shape(format!(
            "copy: source of shape {:?} for a destination of shape {:?}",
            src.shape(),
            dst.shape()
        )));
    }
    dst.check_writable("copy")?;
    if dst.size() == 0 {
        return Ok(());
    }
    if src.shares_buffer(dst) {
        if src.dtype() == dst.dtype() && src.layout() == dst.layout() {
            return Ok(());
        }
        let (a, b) = (src.layout().span(), dst.layout().span());
        if let (Some((a0, a1)), Some((b0, b1))) = (a, b) {
            let (es, ed) = (src.dtype().size(), dst.dtype().size());
            if a0 * es < b1 * ed && b0 * ed < a1 * es {
                let tmp = Array::empty(src.shape(), src.dtype(), src.device())?;
                copy_raw(src, &tmp)?;
                return copy_raw(&tmp, dst);
            }
        }
    }
    copy_raw(src, dst)
}

fn copy_raw(src: &Array, dst: &Array) -> Result<()> {
    let device = dst.device();
    let (s, d) = (src.dtype(), dst.dtype());
    let n = dst.size();
    let s_op = operand(src)?;
    let d_op = operand(dst)?;
    let (shape, st) = collapse(dst.shape(), &[s_op.strides.clone(), d_op.strides.clone()]);
    let (template, g, groups) = if shape.len() <= 1
        && st[0].first().copied().unwrap_or(1) == 1
        && st[1].first().copied().unwrap_or(1) == 1
    {
        let vec = (aligned(src) && aligned(dst)) as u32;
        let per = (16 / s.size().max(d.size())) as u64;
        (
            "copy_contig",
            egeom(n, 0, vec),
            chunk_groups(device, n as u64 / per.max(1)),
        )
    } else if st[0].iter().all(|&x| x == 0) && dst.is_contiguous() {
        let vec = aligned(dst) as u32;
        (
            "copy_fill",
            egeom(n, 0, vec),
            chunk_groups(device, n as u64 / (16 / d.size()) as u64),
        )
    } else if let Some((g, groups)) = transpose_geom(
        &shape,
        &st,
        (s_op.off, d_op.off),
        d.size(),
        first_address(src).is_multiple_of(2 * s.size())
            && first_address(dst).is_multiple_of(2 * d.size()),
    ) {
        let k = kernel(
            device,
            Module::Copy,
            KernelId::new("copy_transpose", "copy", &[s, d]),
            || copy_insts(device, "copy_transpose", s, d),
        )?;
        let args = [
            KernelArg::Array(s_op.view),
            KernelArg::Array(d_op.view),
            KernelArg::Bytes(g),
        ];
        let tile = Dispatch::groups(&groups).with_threadgroup(&[32, 8])?;
        return k.launch(&args, &tile);
    } else {
        if shape.len() > MAX_DIMS {
            return split_outer(&[src, dst], &mut |p| copy_raw(&p[0], &p[1]));
        }
        (
            "copy_strided",
            geom(
                n,
                shape.len() as u32,
                0,
                &shape,
                &[(s_op.off, &st[0]), (d_op.off, &st[1])],
            ),
            groups_for(device, n as u64, 4),
        )
    };
    let k = kernel(
        device,
        Module::Copy,
        KernelId::new(template, "copy", &[s, d]),
        || copy_insts(device, template, s, d),
    )?;
    let args = [
        KernelArg::Array(s_op.view),
        KernelArg::Array(d_op.view),
        KernelArg::Bytes(g),
    ];
    launch(&k, &args, groups)
}

/// Fills the contiguous 1-D `out` with `start + i * step` (computed in f64 where the device has
/// it, else f32) converted to its dtype.
pub fn affine_fill(out: &Array, start: f64, step: f64) -> Result<()> {
    if out.ndim() != 1 || !out.is_contiguous() {
        return Err(Error::Value(
            "internal: affine_fill needs a contiguous 1-D output".into(),
        ));
    }
    out.check_writable("fill")?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let device = out.device();
    let d = out.dtype();
    let all: Vec<DType> = if bundle(device) {
        DType::ALL.to_vec()
    } else {
        vec![d]
    };
    let id = KernelId::new("affine_fill", "fill", &[d]);
    let k = kernel(device, Module::Copy, id, || {
        all.iter()
            .map(|&x| Inst::new("affine_fill", "fill", &[x], ty(x)))
            .collect()
    })?;
    let mut fs = Vec::new();
    fs.extend_from_slice(&(start as f32).to_ne_bytes());
    fs.extend_from_slice(&(step as f32).to_ne_bytes());
    let mut ds = Vec::new();
    ds.extend_from_slice(&start.to_bits().to_ne_bytes());
    ds.extend_from_slice(&step.to_bits().to_ne_bytes());
    let args = [
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(egeom(n, 0, 0)),
        KernelArg::Bytes(fs),
        KernelArg::Bytes(ds),
    ];
    launch(&k, &args, groups_for(device, n as u64, 4))
}

// ---- elementwise ------------------------------------------------------------------------------------

/// Layout class of an elementwise problem.
enum Ew {
    /// Every operand contiguous: the `vec` flag and the broadcast mode (binary: 1 second operand
    /// is one element, 2 first operand is one element).
    Contig { vec: u32, mode: u32 },
    /// Strided: collapsed shape and per-operand strides.
    Strided {
        shape: Vec<usize>,
        strides: Vec<Vec<isize>>,
    },
}

fn classify(inputs: &[&Operand], arrays: &[&Array], out: &Array) -> Ew {
    let strides: Vec<Vec<isize>> = inputs.iter().map(|o| o.strides.clone()).collect();
    let (shape, st) = collapse(out.shape(), &strides);
    let contig = |s: &Vec<isize>| shape.len() <= 1 && s.first().copied().unwrap_or(1) == 1;
    let scalar = |s: &Vec<isize>| s.iter().all(|&x| x == 0);
    let vec = (arrays.iter().all(|a| aligned(a)) && aligned(out)) as u32;
    if st.iter().all(contig) {
        return Ew::Contig { vec, mode: 0 };
    }
    if st.len() == 2 && shape.len() <= 1 {
        if contig(&st[0]) && scalar(&st[1]) {
            return Ew::Contig {
                vec: (aligned(arrays[0]) && aligned(out)) as u32,
                mode: 1,
            };
        }
        if scalar(&st[0]) && contig(&st[1]) {
            return Ew::Contig {
                vec: (aligned(arrays[1]) && aligned(out)) as u32,
                mode: 2,
            };
        }
    }
    Ew::Strided { shape, strides: st }
}

fn unary_insts(device: Device, op: UnaryOp, a: DType, r: DType) -> Vec<Inst> {
    let mut v = Vec::new();
    let ops: Vec<(UnaryOp, DType)> = if bundle(device) {
        UnaryOp::ALL
            .iter()
            .filter_map(|&o| match o.dtypes(a) {
                Ok((c, rr)) if c == a => Some((o, rr)),
                _ => None,
            })
            .collect()
    } else {
        vec![(op, r)]
    };
    for (o, rr) in ops {
        for t in ["unary_contig", "unary_strided"] {
            v.push(Inst::new(
                t,
                o.name(),
                &[a, rr],
                &format!("op_{}, {}, {}", o.name(), ty(a), ty(rr)),
            ));
        }
    }
    v
}

/// Applies `op` to `x` (already in the computation dtype, any layout) into the contiguous `out`.
pub fn unary(op: UnaryOp, x: &Array, out: &Array) -> Result<()> {
    check_device(op.name(), &[x, out])?;
    let (a, r) = (x.dtype(), out.dtype());
    match op.dtypes(a) {
        Ok((c, rr)) if c == a && rr == r => {}
        _ => {
            return Err(Error::UnsupportedDType {
                op: op.name(),
                dtype: a,
            })
        }
    }
    check_out(op.name(), &[x], out)?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    if let Some(xc) = untransposed(x, out)? {
        return unary(op, &xc, out);
    }
    let device = out.device();
    let xo = operand(x)?;
    let (template, g, groups) = match classify(&[&xo], &[x], out) {
        Ew::Contig { vec, .. } => {
            let per = 16 / a.size().max(r.size());
            (
                "unary_contig",
                egeom(n, 0, vec),
                chunk_groups(device, (n / per) as u64),
            )
        }
        Ew::Strided { shape, strides } => {
            if shape.len() > MAX_DIMS {
                return split_outer(&[x, out], &mut |p| unary(op, &p[0], &p[1]));
            }
            let g = geom(n, shape.len() as u32, 0, &shape, &[(xo.off, &strides[0])]);
            ("unary_strided", g, groups_for(device, n as u64, 4))
        }
    };
    let id = KernelId::new(template, op.name(), &[a, r]);
    let k = kernel(device, Module::Unary, id, || unary_insts(device, op, a, r))?;
    let args = [
        KernelArg::Array(xo.view),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(g),
    ];
    launch(&k, &args, groups)
}

fn check_out(op: &str, inputs: &[&Array], out: &Array) -> Result<()> {
    out.check_writable(op)?;
    if !out.is_contiguous() {
        return Err(Error::Value(format!(
            "internal: {op} on the GPU needs a contiguous output"
        )));
    }
    for x in inputs {
        if x.shape() != out.shape() {
            return Err(Error::Shape(format!(
                "internal: {op}: input of shape {:?} for an output of shape {:?}",
                x.shape(),
                out.shape()
            )));
        }
    }
    Ok(())
}

fn binary_insts(device: Device, op: BinaryOp, t: DType, r: DType) -> Vec<Inst> {
    let ops: Vec<(BinaryOp, DType)> = if bundle(device) {
        BinaryOp::ALL
            .iter()
            .filter_map(|&o| match o.dtypes(t, t) {
                Ok((c, rr)) if c == t => Some((o, rr)),
                _ => None,
            })
            .collect()
    } else {
        vec![(op, r)]
    };
    let mut v = Vec::new();
    for (o, rr) in ops {
        for tmpl in ["binary_contig", "binary_strided"] {
            v.push(Inst::new(
                tmpl,
                o.name(),
                &[t, rr],
                &format!("bop_{}, {}, {}", o.name(), ty(t), ty(rr)),
            ));
        }
    }
    v
}

/// Applies `op` to `x` and `y` (broadcast to `out`'s shape, in the computation dtype, any
/// layout) into the contiguous `out`.
pub fn binary(op: BinaryOp, x: &Array, y: &Array, out: &Array) -> Result<()> {
    check_device(op.name(), &[x, y, out])?;
    let (t, r) = (x.dtype(), out.dtype());
    match op.dtypes(t, t) {
        Ok((c, rr)) if c == t && rr == r && y.dtype() == t => {}
        _ => {
            return Err(Error::UnsupportedDType {
                op: op.name(),
                dtype: t,
            })
        }
    }
    check_out(op.name(), &[x, y], out)?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let (xc, yc) = (untransposed(x, out)?, untransposed(y, out)?);
    if xc.is_some() || yc.is_some() {
        let (x, y) = (xc.as_ref().unwrap_or(x), yc.as_ref().unwrap_or(y));
        return binary(op, x, y, out);
    }
    let device = out.device();
    let (xo, yo) = (operand(x)?, operand(y)?);
    let (template, g, groups) = match classify(&[&xo, &yo], &[x, y], out) {
        Ew::Contig { vec, mode } => {
            let per = 16 / t.size().max(r.size());
            (
                "binary_contig",
                egeom(n, mode, vec),
                chunk_groups(device, (n / per) as u64),
            )
        }
        Ew::Strided { shape, strides } => {
            if shape.len() > MAX_DIMS {
                return split_outer(&[x, y, out], &mut |p| binary(op, &p[0], &p[1], &p[2]));
            }
            let g = geom(
                n,
                shape.len() as u32,
                0,
                &shape,
                &[(xo.off, &strides[0]), (yo.off, &strides[1])],
            );
            ("binary_strided", g, groups_for(device, n as u64, 4))
        }
    };
    let id = KernelId::new(template, op.name(), &[t, r]);
    let k = kernel(device, Module::Binary, id, || {
        binary_insts(device, op, t, r)
    })?;
    let args = [
        KernelArg::Array(xo.view),
        KernelArg::Array(yo.view),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(g),
    ];
    launch(&k, &args, groups)
}

/// `out = c ? x : y` elementwise: `c` bool, `x` and `y` of `out`'s dtype, all broadcast to
/// `out`'s shape (any layout); `out` contiguous.
pub fn where_(c: &Array, x: &Array, y: &Array, out: &Array) -> Result<()> {
    check_device("where", &[c, x, y, out])?;
    let t = out.dtype();
    if c.dtype() != DType::Bool || x.dtype() != t || y.dtype() != t {
        return Err(Error::DTypeMismatch(format!(
            "internal: where needs a bool condition and values of {t}, got {}, {}, {}",
            c.dtype(),
            x.dtype(),
            y.dtype()
        )));
    }
    check_out("where", &[c, x, y], out)?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let cxy = [
        untransposed(c, out)?,
        untransposed(x, out)?,
        untransposed(y, out)?,
    ];
    if cxy.iter().any(Option::is_some) {
        let [cc, xc, yc] = &cxy;
        let (c, x, y) = (
            cc.as_ref().unwrap_or(c),
            xc.as_ref().unwrap_or(x),
            yc.as_ref().unwrap_or(y),
        );
        return where_(c, x, y, out);
    }
    let device = out.device();
    let (co, xo, yo) = (operand(c)?, operand(x)?, operand(y)?);
    let (template, g, groups) = match classify(&[&co, &xo, &yo], &[c, x, y], out) {
        Ew::Contig { vec, .. } => (
            "where_contig",
            egeom(n, 0, vec),
            chunk_groups(device, (n / (16 / t.size())) as u64),
        ),
        Ew::Strided { shape, strides } => {
            if shape.len() > MAX_DIMS {
                return split_outer(&[c, x, y, out], &mut |p| where_(&p[0], &p[1], &p[2], &p[3]));
            }
            let g = geom(
                n,
                shape.len() as u32,
                0,
                &shape,
                &[
                    (co.off, &strides[0]),
                    (xo.off, &strides[1]),
                    (yo.off, &strides[2]),
                ],
            );
            ("where_strided", g, groups_for(device, n as u64, 4))
        }
    };
    let id = KernelId::new(template, "where", &[t]);
    let k = kernel(device, Module::Where, id, || {
        let ts: Vec<DType> = if bundle(device) {
            DType::ALL.to_vec()
        } else {
            vec![t]
        };
        let mut v = Vec::new();
        for tt in ts {
            for tmpl in ["where_contig", "where_strided"] {
                v.push(Inst::new(tmpl, "where", &[tt], ty(tt)));
            }
        }
        v
    })?;
    let args = [
        KernelArg::Array(co.view),
        KernelArg::Array(xo.view),
        KernelArg::Array(yo.view),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(g),
    ];
    launch(&k, &args, groups)
}
