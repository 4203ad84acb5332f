//! Copies with dtype conversion (contiguous, strided, transposed through a threadgroup tile) and
//! affine fills (`arange`, `linspace`).

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::{Dispatch, KernelArg};

use super::library::{
    bundle, chunk_groups, groups_for, has_f64, kernel, launch, ty, Inst, KernelId, Module,
};
use super::operand::{
    aligned, check_device, collapse, egeom, first_address, geom, operand, split_outer, MAX_DIMS,
};

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
pub(crate) fn untransposed(a: &Array, out: &Array) -> Result<Option<Array>> {
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
            .filter(|&x| x != DType::Float64 || has_f64(device))
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
