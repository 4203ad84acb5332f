//! `ingot.random` on GPUs (`kernels/random.metal`): the samplers, a bitonic sort of (key, index)
//! pairs for permutations, and row gathers. The same arguments and results as `ops::cpu::random`,
//! bit for bit (tests run these kernels on the CPU kernel engine against it).

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::kernel::KernelArg;
use crate::layout::Layout;
use crate::ops::op::{Draw, Sampler};

use super::library::{bundle, groups_for, has_f64, kernel, launch, ty, Inst, KernelId, Module};
use super::operand::check_device;

/// Every instantiation of the module (libraries bundle them on the CPU kernel engine).
fn all_insts(device: Device) -> Vec<Inst> {
    let floats: Vec<DType> = [
        DType::Float32,
        DType::Float16,
        DType::BFloat16,
        DType::Float64,
    ]
    .into_iter()
    .filter(|&d| d != DType::Float64 || has_f64(device))
    .collect();
    let wide: Vec<DType> = [DType::Float32, DType::Float64]
        .into_iter()
        .filter(|&d| d != DType::Float64 || has_f64(device))
        .collect();
    let mut v = Vec::new();
    for &d in &floats {
        v.push(Inst::new("rand_uniform", "random", &[d], ty(d)));
        v.push(Inst::new("rand_normal", "random", &[d], ty(d)));
    }
    for d in DType::ALL.into_iter().filter(|d| !d.is_float()) {
        v.push(Inst::new("rand_integers", "random", &[d], ty(d)));
    }
    for &d in &wide {
        v.push(Inst::new("rand_exp_keys", "random", &[d], ty(d)));
        v.push(Inst::new("rand_categorical", "random", &[d], ty(d)));
    }
    v.push(Inst::new("rand_keys", "random", &[DType::UInt64], "ulong"));
    v.push(Inst::new(
        "bitonic_step",
        "random",
        &[DType::UInt64],
        "ulong",
    ));
    for d in [DType::UInt8, DType::UInt16, DType::UInt32, DType::UInt64] {
        v.push(Inst::new("gather_rows", "random", &[d], ty(d)));
    }
    v
}

/// The kernel `template<dtype>` of the module.
fn get(device: Device, template: &'static str, d: DType) -> Result<crate::kernel::Kernel> {
    let id = KernelId::new(template, "random", &[d]);
    kernel(device, Module::Random, id, || {
        if bundle(device) {
            all_insts(device)
        } else {
            vec![Inst::new(template, "random", &[d], ty(d))]
        }
    })
}

/// The `RGeom` block of `kernels/random.metal`.
fn rgeom(draw: &Draw, n: usize, low: u64, range: u64) -> Vec<u8> {
    let mut g = Vec::with_capacity(40);
    for v in [n as u64, draw.pos, low, range] {
        g.extend_from_slice(&v.to_ne_bytes());
    }
    g.extend_from_slice(&draw.key[0].to_ne_bytes());
    g.extend_from_slice(&draw.key[1].to_ne_bytes());
    g
}

fn check_out(what: &str, out: &Array) -> Result<()> {
    out.check_writable(what)?;
    if !out.is_contiguous() {
        return Err(Error::Value(format!(
            "internal: {what} on the GPU needs a contiguous output"
        )));
    }
    Ok(())
}

/// Fills the contiguous `out` with the values of `draw`.
pub fn fill(draw: &Draw, out: &Array) -> Result<()> {
    check_out("random", out)?;
    let n = out.size();
    let d = out.dtype();
    let lanes = draw.sampler.lanes(d)?;
    if n == 0 {
        return Ok(());
    }
    let device = out.device();
    let unsupported = || Error::UnsupportedDType {
        op: draw.sampler.name(),
        dtype: d.to_string(),
    };
    let (template, low, range) = match draw.sampler {
        Sampler::Uniform | Sampler::Normal if !d.is_float() => return Err(unsupported()),
        Sampler::Uniform => ("rand_uniform", 0, 0),
        Sampler::Normal => ("rand_normal", 0, 0),
        Sampler::Integers { low, range } => {
            if d.is_float() {
                return Err(unsupported());
            }
            ("rand_integers", low, range)
        }
        Sampler::Keys if d == DType::UInt64 => ("rand_keys", 0, 0),
        Sampler::Keys => return Err(unsupported()),
    };
    let k = get(device, template, d)?;
    let args = [
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(rgeom(draw, n, low, range)),
    ];
    launch(
        &k,
        &args,
        groups_for(device, n.div_ceil(lanes as usize) as u64, 1),
    )
}

/// Exponential keys of weighted sampling without replacement (see `ops::cpu::random::exp_keys`).
pub fn exp_keys(draw: &Draw, p: &Array, out: &Array) -> Result<()> {
    check_device("choice", &[p, out])?;
    check_out("choice", out)?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let d = out.dtype();
    if p.dtype() != d || !p.is_contiguous() || p.size() != n {
        return Err(Error::Value(
            "internal: choice keys need contiguous probabilities of the keys' dtype".into(),
        ));
    }
    let device = out.device();
    let k = get(device, "rand_exp_keys", d)?;
    let lanes = if d == DType::Float64 { 2 } else { 4 };
    let args = [
        KernelArg::Array(p.clone()),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(rgeom(draw, n, 0, 0)),
    ];
    launch(&k, &args, groups_for(device, n.div_ceil(lanes) as u64, 1))
}

/// Categorical samples into the int64 `out` (see `ops::cpu::random::categorical`).
pub fn categorical(draw: &Draw, cdf: &Array, out: &Array) -> Result<()> {
    check_device("choice", &[cdf, out])?;
    check_out("choice", out)?;
    let n = out.size();
    if n == 0 {
        return Ok(());
    }
    let d = cdf.dtype();
    if !cdf.is_contiguous() || cdf.size() == 0 || out.dtype() != DType::Int64 {
        return Err(Error::Value(
            "internal: categorical sampling needs a contiguous non-empty cdf and int64 output"
                .into(),
        ));
    }
    let device = out.device();
    let k = get(device, "rand_categorical", d)?;
    let lanes = if d == DType::Float64 { 2 } else { 4 };
    let args = [
        KernelArg::Array(cdf.clone()),
        KernelArg::Array(out.clone()),
        KernelArg::Bytes(rgeom(draw, n, 0, cdf.size() as u64)),
    ];
    launch(&k, &args, groups_for(device, n.div_ceil(lanes) as u64, 1))
}

/// The indices that sort the uint64 `keys` ascending (ties by index) into the int64 `out`: a
/// bitonic sort of (key, index) pairs padded to a power of two with (2^64 - 1, index >= n),
/// log2(N) (log2(N) + 1) / 2 launches of one compare-exchange step each.
pub fn sort_pairs(keys: &Array, out: &Array) -> Result<()> {
    check_device("permutation", &[keys, out])?;
    check_out("permutation", out)?;
    let n = keys.size();
    if n == 0 {
        return Ok(());
    }
    let device = out.device();
    let npad = n.next_power_of_two();
    let kp = Array::empty(&[npad], DType::UInt64, device)?;
    kp.with_layout(Layout::new(vec![n], vec![1], 0)?)?
        .assign(&keys.reshape(&[n as isize])?)?;
    if npad > n {
        kp.with_layout(Layout::new(vec![npad - n], vec![1], n)?)?
            .fill(Scalar::UInt(u64::MAX))?;
    }
    let ip = crate::ops::arange(0.0, npad as f64, 1.0, DType::Int64, device)?;
    let k = get(device, "bitonic_step", DType::UInt64)?;
    let groups = groups_for(device, npad as u64, 1);
    let mut size = 2usize;
    while size <= npad {
        let mut j = size / 2;
        while j > 0 {
            let mut g = Vec::with_capacity(32);
            for v in [npad as u64, size as u64, j as u64, 0] {
                g.extend_from_slice(&v.to_ne_bytes());
            }
            let args = [
                KernelArg::Array(kp.clone()),
                KernelArg::Array(ip.clone()),
                KernelArg::Bytes(g),
            ];
            launch(&k, &args, groups)?;
            j /= 2;
        }
        size *= 2;
    }
    out.reshape(&[n as isize])?
        .assign(&ip.with_layout(Layout::new(vec![n], vec![1], 0)?)?)
}

/// Row `i` of the contiguous `out` = row `idx[i]` of the contiguous `src`, rows of `row_bytes`
/// (indices produced by the samplers, in range).
pub fn gather_rows(src: &Array, idx: &Array, out: &Array, row_bytes: usize) -> Result<()> {
    check_device("gather", &[src, idx, out])?;
    check_out("gather", out)?;
    let rows = idx.size();
    if rows == 0 || row_bytes == 0 {
        return Ok(());
    }
    if !src.is_contiguous() || !idx.is_contiguous() || idx.dtype() != DType::Int64 {
        return Err(Error::Value(
            "internal: gather_rows needs a contiguous source and int64 indices".into(),
        ));
    }
    // The widest unit that divides the rows and the views' first elements.
    let align = |a: &Array| a.layout().offset() * a.dtype().size();
    let unit = [8usize, 4, 2, 1]
        .into_iter()
        .find(|&u| {
            row_bytes.is_multiple_of(u)
                && align(src).is_multiple_of(u)
                && align(out).is_multiple_of(u)
        })
        .unwrap_or(1);
    let ud = match unit {
        8 => DType::UInt64,
        4 => DType::UInt32,
        2 => DType::UInt16,
        _ => DType::UInt8,
    };
    let as_units = |a: &Array| -> Result<Array> {
        let n = a.nbytes() / unit;
        let off = align(a) / unit;
        Array::from_parts(a.buffer().clone(), Layout::new(vec![n], vec![1], off)?, ud)
    };
    let device = out.device();
    let k = get(device, "gather_rows", ud)?;
    let inner = row_bytes / unit;
    let mut g = Vec::with_capacity(16);
    g.extend_from_slice(&(rows as u64).to_ne_bytes());
    g.extend_from_slice(&(inner as u64).to_ne_bytes());
    let args = [
        KernelArg::Array(as_units(src)?),
        KernelArg::Array(idx.clone()),
        KernelArg::Array(as_units(out)?),
        KernelArg::Bytes(g),
    ];
    launch(&k, &args, groups_for(device, (rows * inner) as u64, 4))
}
