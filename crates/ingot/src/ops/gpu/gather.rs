//! Gathers and scatters through index arrays on the GPU (`kernels/gather.metal`); the same
//! functions as the native CPU backend (`ops/cpu/gather.rs`). An out-of-range index sets a flag
//! on the device; it is read back after the offsets are computed (4 bytes) and raised as an
//! `Index` error.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::KernelArg;
use crate::layout::IndexItem;

use super::library::{groups_for, kernel, launch, ty, Inst, KernelId, Module};
use super::operand::{check_device, collapse, geom, operand, Operand, MAX_DIMS};

/// The unsigned dtype of an element width (elements move as bits).
pub(super) fn bits_dtype(d: DType) -> Result<DType> {
    Ok(match d.size() {
        1 => DType::UInt8,
        2 => DType::UInt16,
        4 => DType::UInt32,
        8 => DType::UInt64,
        _ => {
            return Err(Error::UnsupportedDType {
                op: "indexing",
                dtype: d.to_string(),
            })
        }
    })
}

fn gather_kernel(device: Device, tmpl: &'static str, d: DType) -> Result<crate::kernel::Kernel> {
    kernel(
        device,
        Module::Gather,
        KernelId::new(tmpl, "gather", &[d]),
        || {
            let mut v: Vec<Inst> = ["gather", "scatter", "take_along"]
                .iter()
                .map(|t| Inst::new(t, "gather", &[d], ty(d)))
                .collect();
            v.push(Inst::new(
                "index_offsets",
                "gather",
                &[DType::Int64],
                "long",
            ));
            v
        },
    )
}

/// The error flag and the offending index of an indexing kernel.
struct Fault {
    err: Array,
    bad: Array,
}

impl Fault {
    fn new(device: Device) -> Result<Fault> {
        let err = Array::empty(&[1], DType::UInt32, device)?;
        err.fill(Scalar::Int(0))?;
        Ok(Fault {
            err,
            bad: Array::empty(&[1], DType::Int64, device)?,
        })
    }

    /// An `Index` error when a kernel recorded an out-of-range index (reads the flag back).
    fn check(&self, dim: usize, axis: usize) -> Result<()> {
        if self.err.item()?.is_zero() {
            return Ok(());
        }
        let v = match self.bad.item()? {
            Scalar::Int(v) => v,
            other => other.to_f64() as i64,
        };
        Err(Error::Index(format!(
            "index {v} is out of bounds for axis {axis} with size {dim}"
        )))
    }
}

fn index_geom(dim: usize, stride: isize, first: bool) -> Vec<u8> {
    let mut b = Vec::with_capacity(24);
    b.extend_from_slice(&(dim as i64).to_ne_bytes());
    b.extend_from_slice(&(stride as i64).to_ne_bytes());
    b.extend_from_slice(&(first as u32).to_ne_bytes());
    b.extend_from_slice(&0u32.to_ne_bytes());
    b
}

/// `lin (+)= idx * stride` (see the CPU backend); `axis` names the axis in errors.
pub fn index_offsets(
    lin: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    first: bool,
    axis: usize,
) -> Result<()> {
    check_device("indexing", &[lin, idx])?;
    let device = lin.device();
    let n = lin.size();
    if n == 0 {
        return Ok(());
    }
    let io = operand(idx)?;
    let (shape, st) = collapse(idx.shape(), std::slice::from_ref(&io.strides));
    if shape.len() > MAX_DIMS {
        return index_offsets(lin, &idx.copy()?, dim, stride, first, axis);
    }
    let g = geom(n, shape.len() as u32, 0, &shape, &[(io.off, &st[0])]);
    let fault = Fault::new(device)?;
    launch(
        &gather_kernel(device, "index_offsets", DType::Int64)?,
        &[
            KernelArg::Array(io.view),
            KernelArg::Array(lin.reshape(&[-1])?),
            KernelArg::Array(fault.err.clone()),
            KernelArg::Array(fault.bad.clone()),
            KernelArg::Bytes(g),
            KernelArg::Bytes(index_geom(dim, stride, first)),
        ],
        groups_for(device, n as u64, 4),
    )?;
    fault.check(dim, axis)
}

/// `a`'s strides as an operand of the buffer view `span` (offsets relative to its first element).
fn operand_in(span: &Operand, span_array: &Array, a: &Array) -> Operand {
    let lo = span_array.layout().offset() as i64 - span.off;
    Operand {
        view: span.view.clone(),
        off: a.layout().offset() as i64 - lo,
        strides: a.layout().strides().to_vec(),
    }
}

fn gather_geom(post: usize, j: usize) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend_from_slice(&(post as u64).to_ne_bytes());
    b.extend_from_slice(&(j as u64).to_ne_bytes());
    b
}

/// An axis other than `jaxis` to split a problem of more than [`MAX_DIMS`] dimensions along.
fn split_axis(w: &Array, jaxis: usize) -> usize {
    if jaxis == 0 { 1 } else { 0 }.min(w.ndim() - 1)
}

/// `out` (contiguous, `w`'s shape) = `w` (a view of `span`'s buffer with stride 0 on `jaxis`)
/// shifted by `lin[j]` along that axis; `span`: the array whose elements `lin` may reach.
pub fn gather(span: &Array, w: &Array, jaxis: usize, lin: &Array, out: &Array) -> Result<()> {
    check_device("indexing", &[span, w, lin, out])?;
    let device = out.device();
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let d = bits_dtype(w.dtype())?;
    let so = operand(&span.view_as(d)?)?;
    let wo = operand_in(&so, span, w);
    let (shape, st) = collapse(w.shape(), std::slice::from_ref(&wo.strides));
    if shape.len() > MAX_DIMS {
        let a = split_axis(w, jaxis);
        let ja = if a < jaxis { jaxis - 1 } else { jaxis };
        for i in 0..w.shape()[a] {
            let item = index_at(a, i);
            let wi = w.index(&item)?;
            into_view(&out.index(&item)?, |o| gather(span, &wi, ja, lin, o))?;
        }
        return Ok(());
    }
    let post: usize = w.shape()[jaxis + 1..].iter().product();
    let g = geom(n, shape.len() as u32, 0, &shape, &[(wo.off, &st[0])]);
    launch(
        &gather_kernel(device, "gather", d)?,
        &[
            KernelArg::Array(so.view),
            KernelArg::Array(lin.reshape(&[-1])?),
            KernelArg::Array(out.view_as(d)?.reshape(&[-1])?),
            KernelArg::Bytes(g),
            KernelArg::Bytes(gather_geom(post, w.shape()[jaxis])),
        ],
        groups_for(device, n as u64, 4),
    )
}

/// Runs `f` on `out` when contiguous, else on a contiguous temporary then copied into `out`.
fn into_view(out: &Array, f: impl FnOnce(&Array) -> Result<()>) -> Result<()> {
    if out.is_contiguous() {
        return f(out);
    }
    let t = Array::empty(out.shape(), out.dtype(), out.device())?;
    f(&t)?;
    super::copy::copy_cast(&t, out)
}

/// Index items selecting position `i` of axis `a`.
fn index_at(a: usize, i: usize) -> Vec<IndexItem> {
    let mut v = vec![
        IndexItem::Slice {
            start: None,
            stop: None,
            step: None
        };
        a
    ];
    v.push(IndexItem::Int(i as isize));
    v
}

/// Writes `value` (w's dtype and shape, any layout) through `w` (see [`gather`]) into `span`'s
/// buffer. With repeated indices one of the values is written.
pub fn scatter(span: &Array, w: &Array, jaxis: usize, lin: &Array, value: &Array) -> Result<()> {
    check_device("indexing", &[span, w, lin, value])?;
    span.check_writable("assignment")?;
    let device = span.device();
    let n = w.size();
    if n == 0 {
        return Ok(());
    }
    let d = bits_dtype(w.dtype())?;
    let so = operand(&span.view_as(d)?)?;
    let wo = operand_in(&so, span, w);
    let vo = operand(&value.view_as(d)?)?;
    let (shape, st) = collapse(w.shape(), &[wo.strides.clone(), vo.strides.clone()]);
    if shape.len() > MAX_DIMS {
        let a = split_axis(w, jaxis);
        let ja = if a < jaxis { jaxis - 1 } else { jaxis };
        for i in 0..w.shape()[a] {
            let item = index_at(a, i);
            scatter(span, &w.index(&item)?, ja, lin, &value.index(&item)?)?;
        }
        return Ok(());
    }
    let post: usize = w.shape()[jaxis + 1..].iter().product();
    let g = geom(
        n,
        shape.len() as u32,
        0,
        &shape,
        &[(wo.off, &st[0]), (vo.off, &st[1])],
    );
    launch(
        &gather_kernel(device, "scatter", d)?,
        &[
            KernelArg::Array(so.view),
            KernelArg::Array(lin.reshape(&[-1])?),
            KernelArg::Array(vo.view),
            KernelArg::Bytes(g),
            KernelArg::Bytes(gather_geom(post, w.shape()[jaxis])),
        ],
        groups_for(device, n as u64, 4),
    )
}

/// `out[i] = w[i with the axis at idx[i]]` (see the CPU backend); `span`: the source array.
pub fn take_along(
    span: &Array,
    w: &Array,
    idx: &Array,
    dim: usize,
    stride: isize,
    axis: usize,
    out: &Array,
) -> Result<()> {
    check_device("take_along_axis", &[span, w, idx, out])?;
    let device = out.device();
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let d = bits_dtype(w.dtype())?;
    let so = operand(&span.view_as(d)?)?;
    let wo = operand_in(&so, span, w);
    let io = operand(idx)?;
    let (shape, st) = collapse(out.shape(), &[wo.strides.clone(), io.strides.clone()]);
    if shape.len() > MAX_DIMS {
        let a = split_axis(w, axis);
        for i in 0..w.shape()[a] {
            let item = index_at(a, i);
            let ax = if a < axis { axis - 1 } else { axis };
            let (wi, ii) = (w.index(&item)?, idx.index(&item)?);
            into_view(&out.index(&item)?, |o| {
                take_along(span, &wi, &ii, dim, stride, ax, o)
            })?;
        }
        return Ok(());
    }
    let g = geom(
        n,
        shape.len() as u32,
        0,
        &shape,
        &[(wo.off, &st[0]), (io.off, &st[1])],
    );
    let fault = Fault::new(device)?;
    launch(
        &gather_kernel(device, "take_along", d)?,
        &[
            KernelArg::Array(so.view),
            KernelArg::Array(io.view),
            KernelArg::Array(out.view_as(d)?.reshape(&[-1])?),
            KernelArg::Array(fault.err.clone()),
            KernelArg::Array(fault.bad.clone()),
            KernelArg::Bytes(g),
            KernelArg::Bytes(index_geom(dim, stride, false)),
        ],
        groups_for(device, n as u64, 4),
    )?;
    fault.check(dim, axis)
}
