//! Elementwise ops: unary, binary, where; contiguous, vectorised, strided and transposed
//! layouts.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::KernelArg;
use crate::ops::{BinaryOp, UnaryOp};

use super::copy::untransposed;
use super::library::{
    bundle, chunk_groups, groups_for, kernel, launch, ty, Inst, KernelId, Module,
};
use super::operand::{
    aligned, check_device, collapse, egeom, geom, operand, split_outer, Operand, MAX_DIMS,
};

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
                dtype: a.to_string(),
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
                dtype: t.to_string(),
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
