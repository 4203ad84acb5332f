//! Random numbers: a [`Generator`] on the counter-based Philox4x32-10, whose stream for a seed
//! is the same on every device.
//!
//! # The stream
//!
//! - The key is the seed: `key = [seed as u32, (seed >> 32) as u32]`.
//! - A generator holds a position `P` counted in 128-bit blocks, starting at 0. Block `b`, attempt
//!   `a`, is the four words `philox4x32_10(counter = [b as u32, (b >> 32) as u32, a, 0], key)`;
//!   attempt 0 gives the values, attempts 1, 2, ... only feed rejection samplers.
//! - A draw of `n` values whose sampler has `L` lanes per block uses blocks `P .. P + ceil(n / L)`
//!   and advances `P` past them (every draw starts on a fresh block). Value `i` comes from block
//!   `P + i / L`, lane `i % L`:
//!   - uniform float32 (L = 4): `(w >> 8) * 2^-24` of word `l`; float16 (L = 4) `(w >> 21) *
//!     2^-11`; bfloat16 (L = 4) `(w >> 24) * 2^-8` (exact values, so never rounded up to 1);
//!   - uniform float64 (L = 2): `(x >> 11) * 2^-53` of `x = w[2l] | w[2l+1] << 32`;
//!   - normal float64 (L = 2): Box-Muller on the two 64-bit values of the block, `u1 = 1 - unit(x0)`
//!     in (0, 1], `u2 = unit(x1)`: lane 0 is `sqrt(-2 ln u1) cos(2 pi u2)`, lane 1 the sine;
//!     float32 (L = 4) the same on word pairs (0, 1) and (2, 3); float16/bfloat16 are the float32
//!     values rounded to nearest. `ln`, `sin` and `cos` are computed by ingot's own polynomials
//!     (`ops/cpu/philox.rs`), so the bits do not depend on a platform's math library;
//!   - integers in `[low, low + range)` (int and bool dtypes): for `range <= 2^32`, L = 4 and
//!     Lemire's multiply-shift on word `l` (exactly uniform: a word in the rejected zone is
//!     replaced by the same lane of attempt 1, 2, ...); above, L = 2 and the 64-bit form on
//!     `x = w[2l] | w[2l+1] << 32` (`range = 2^64` takes `x` as it is);
//!   - 64-bit keys (L = 2) as the 64-bit values above.
//! - Permutations sort 64-bit keys of one draw, ties broken by index (so the order is total and
//!   the same everywhere); `choice` without replacement takes the first elements of a
//!   permutation, or with probabilities the smallest exponential keys `-ln(u1) / p[i]`
//!   (Efraimidis-Spirakis); with replacement it draws integers, or with probabilities inverts the
//!   cumulative distribution (computed on the host in float64, ending exactly in 1) at uniform
//!   values of the cdf's dtype.
//!
//! NumPy's `np.random.Philox` is Philox4x64-10 (64-bit words, 128-bit key, seeded through
//! SeedSequence), so its stream is a different one; the test suite checks this one against
//! Random123's published known-answer vectors instead.
//!
//! On the CPU the samplers are Rust (`ops/cpu/random.rs`); on GPUs the MSL kernels of
//! `kernels/random.metal` (`ops/gpu/random.rs`), which tests run on the CPU kernel engine
//! against the Rust values bit for bit. Metal GPUs have no float64: float64 samplers are not
//! available there, and the probability-weighted `choice` works in float32 on them.
//!
//! ```
//! use ingot::{DType, Device};
//! use ingot::ops::random::Generator;
//! let mut g = Generator::new(42);
//! let a = g.random(&[3], DType::Float64, Device::Cpu).unwrap();
//! let v = a.to_vec::<f64>().unwrap();
//! assert!(v.iter().all(|x| (0.0..1.0).contains(x)));
//! assert_eq!(g.position(), 2);
//! ```

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::Layout;

pub use super::cpu::philox::philox4x32_10;
pub use super::op::{Draw, Sampler};

/// A Philox4x32-10 generator: a key (the seed) and a position in blocks. Each method takes the
/// blocks its draw needs and leaves the position after them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Generator {
    key: [u32; 2],
    pos: u64,
}

impl Generator {
    /// A generator at the start of the stream of `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator::at(seed, 0)
    }

    /// A generator at block `position` of the stream of `seed`.
    pub fn at(seed: u64, position: u64) -> Generator {
        Generator {
            key: [seed as u32, (seed >> 32) as u32],
            pos: position,
        }
    }

    /// The seed (the key).
    pub fn seed(&self) -> u64 {
        self.key[0] as u64 | (self.key[1] as u64) << 32
    }

    /// The position in blocks.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Takes `blocks` blocks: returns the first and advances the position past them.
    fn take_blocks(&mut self, blocks: u64) -> Result<u64> {
        let first = self.pos;
        self.pos = self.pos.checked_add(blocks).ok_or_else(|| {
            Error::Value("random: the generator's stream is exhausted (2^64 blocks)".into())
        })?;
        Ok(first)
    }

    /// The draw of `n` values of `sampler` into `dtype`, advancing the position past its blocks.
    fn take(&mut self, sampler: Sampler, n: usize, dtype: DType) -> Result<Draw> {
        let pos = self.take_blocks((n as u64).div_ceil(sampler.lanes(dtype)?))?;
        Ok(Draw {
            key: self.key,
            pos,
            sampler,
        })
    }

    /// A new array of `shape` on `device` filled by `sampler`.
    fn sample(
        &mut self,
        sampler: Sampler,
        shape: &[usize],
        dtype: DType,
        device: Device,
    ) -> Result<Array> {
        sampler.lanes(dtype)?;
        let out = Array::empty(shape, dtype, device)?;
        let draw = self.take(sampler, out.size(), dtype)?;
        fill(&draw, &out)?;
        Ok(out)
    }

    /// Uniform floats in [0, 1) of a float `dtype`.
    pub fn random(&mut self, shape: &[usize], dtype: DType, device: Device) -> Result<Array> {
        self.sample(Sampler::Uniform, shape, dtype, device)
    }

    /// Standard normal floats of a float `dtype`.
    pub fn normal(&mut self, shape: &[usize], dtype: DType, device: Device) -> Result<Array> {
        self.sample(Sampler::Normal, shape, dtype, device)
    }

    /// Integers uniform in `[low, high)` of an integer or bool `dtype` (both bounds inside the
    /// dtype's range).
    pub fn integers(
        &mut self,
        low: i128,
        high: i128,
        shape: &[usize],
        dtype: DType,
        device: Device,
    ) -> Result<Array> {
        let (min, max) = match dtype {
            DType::Bool => (0i128, 1i128),
            d if d.is_integer() => {
                let info = d.iinfo()?;
                (info.min, info.max)
            }
            d => {
                return Err(Error::UnsupportedDType {
                    op: "integers",
                    dtype: d.to_string(),
                })
            }
        };
        if low < min || low > max {
            return Err(Error::Value(format!(
                "integers: low {low} is out of bounds for {dtype}"
            )));
        }
        if high - 1 > max || high - 1 < min {
            return Err(Error::Value(format!(
                "integers: high {high} is out of bounds for {dtype}"
            )));
        }
        if low >= high {
            return Err(Error::Value(format!(
                "integers: low >= high ({low} >= {high})"
            )));
        }
        let range = (high - low) as u128;
        let sampler = Sampler::Integers {
            low: low as u64,
            range: if range == 1 << 64 { 0 } else { range as u64 },
        };
        self.sample(sampler, shape, dtype, device)
    }

    /// A random permutation of `0..n` (int64) on `device`: the order that sorts `n` keys of
    /// one draw.
    pub fn permutation(&mut self, n: usize, device: Device) -> Result<Array> {
        let keys = self.sample(Sampler::Keys, &[n], DType::UInt64, device)?;
        sorted_indices(&keys)
    }

    /// A copy of `x` with its elements along `axis` in random order.
    pub fn permuted(&mut self, x: &Array, axis: usize) -> Result<Array> {
        check_axis("permutation", x, axis)?;
        let idx = self.permutation(x.shape()[axis], x.device())?;
        gather(x, axis, &idx)
    }

    /// Shuffles `x` in place along `axis`.
    pub fn shuffle(&mut self, x: &Array, axis: usize) -> Result<()> {
        x.check_writable("shuffle")?;
        let shuffled = self.permuted(x, axis)?;
        x.assign(&shuffled)
    }

    /// Indices into a population of `n` (int64, of `shape`): with or without replacement,
    /// uniform or weighted by the probabilities `p` (`n` non-negative values summing to 1).
    pub fn choice(
        &mut self,
        n: usize,
        shape: &[usize],
        replace: bool,
        p: Option<&Array>,
        device: Device,
    ) -> Result<Array> {
        let size = crate::array::checked_size(shape)?;
        if n == 0 && size > 0 {
            return Err(Error::Value(
                "choice: a cannot be empty unless no samples are taken".into(),
            ));
        }
        let shape_i: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        let probs = match p {
            Some(p) => Some(checked_probabilities(p, n)?),
            None => None,
        };
        if !replace {
            if size > n {
                return Err(Error::Value(
                    "choice: cannot take a larger sample than population when replace=False".into(),
                ));
            }
            if let Some(ps) = &probs {
                if ps.iter().filter(|&&x| x > 0.0).count() < size {
                    return Err(Error::Value(
                        "choice: fewer non-zero entries in p than size".into(),
                    ));
                }
            }
        }
        if size == 0 {
            return Array::empty(shape, DType::Int64, device);
        }
        let wide = wide_float(device);
        match (replace, probs) {
            (true, None) => self.integers(0, n as i128, shape, DType::Int64, device),
            (true, Some(ps)) => {
                // The cdf on the host, in float64, normalised so that it ends in exactly 1.
                let mut cdf = Vec::with_capacity(n);
                let mut acc = 0.0f64;
                for &x in &ps {
                    acc += x;
                    cdf.push(acc);
                }
                let total = acc;
                let cdf: Vec<f64> = cdf.iter().map(|&c| c / total).collect();
                let cdf = Array::from_vec(cdf, &[n], device)?.astype(wide)?;
                let out = Array::empty(shape, DType::Int64, device)?;
                let draw = self.take(Sampler::Uniform, size, wide)?;
                if device == Device::Cpu {
                    super::cpu::random::categorical(&draw, &cdf, &out)?;
                } else {
                    super::gpu::random::categorical(&draw, &cdf, &out)?;
                }
                Ok(out)
            }
            (false, None) => {
                let perm = self.permutation(n, device)?;
                perm.with_layout(Layout::new(vec![size], vec![1], 0)?)?
                    .reshape(&shape_i)
            }
            (false, Some(ps)) => {
                let pw = Array::from_vec(ps, &[n], device)?.astype(wide)?;
                let keys = Array::empty(&[n], wide, device)?;
                let draw = self.take(Sampler::Uniform, n, wide)?;
                if device == Device::Cpu {
                    super::cpu::random::exp_keys(&draw, &pw, &keys)?;
                } else {
                    super::gpu::random::exp_keys(&draw, &pw, &keys)?;
                }
                // Non-negative floats order as their bit patterns.
                let bits = if wide == DType::Float64 {
                    keys.view_as(DType::UInt64)?
                } else {
                    keys.view_as(DType::UInt32)?.astype(DType::UInt64)?
                };
                let order = sorted_indices(&bits)?;
                order
                    .with_layout(Layout::new(vec![size], vec![1], 0)?)?
                    .reshape(&shape_i)
            }
        }
    }
}

/// The widest float dtype of `device` (float32 on Metal GPUs).
fn wide_float(device: Device) -> DType {
    if crate::runtime::check_dtype(device, DType::Float64).is_ok() {
        DType::Float64
    } else {
        DType::Float32
    }
}

/// The probabilities `p` on the host as float64, checked as NumPy checks them: 1-D of length
/// `n`, no NaN, non-negative, summing to 1 within sqrt(eps) of `p`'s dtype.
fn checked_probabilities(p: &Array, n: usize) -> Result<Vec<f64>> {
    if p.ndim() != 1 || p.size() != n {
        return Err(Error::Value(format!(
            "choice: p must be 1-D with the population's length {n}, got shape {:?}",
            p.shape()
        )));
    }
    if !p.dtype().is_float() {
        return Err(Error::Type(format!(
            "choice: p must be floating point, got {}",
            p.dtype()
        )));
    }
    let ps = p
        .to_device(Device::Cpu)?
        .astype(DType::Float64)?
        .to_vec::<f64>()?;
    if ps.iter().any(|x| x.is_nan()) {
        return Err(Error::Value("choice: probabilities contain NaN".into()));
    }
    if ps.iter().any(|&x| x < 0.0) {
        return Err(Error::Value(
            "choice: probabilities are not non-negative".into(),
        ));
    }
    let sum: f64 = ps.iter().sum();
    let tol = p.dtype().finfo()?.eps.sqrt();
    if (sum - 1.0).abs() > tol {
        return Err(Error::Value(format!(
            "choice: probabilities do not sum to 1 (sum {sum})"
        )));
    }
    Ok(ps)
}

fn check_axis(what: &str, x: &Array, axis: usize) -> Result<()> {
    if axis >= x.ndim() {
        return Err(Error::Index(format!(
            "{what}: axis {axis} is out of bounds for array of dimension {}",
            x.ndim()
        )));
    }
    Ok(())
}

/// Fills the contiguous `out` with the values of `draw` on its device.
pub fn fill(draw: &Draw, out: &Array) -> Result<()> {
    if out.device() == Device::Cpu {
        super::cpu::random::fill(draw, out)
    } else {
        super::gpu::random::fill(draw, out)
    }
}

/// The indices (int64) that sort the 1-D uint64 `keys` ascending, ties by index.
fn sorted_indices(keys: &Array) -> Result<Array> {
    let out = Array::empty(keys.shape(), DType::Int64, keys.device())?;
    if keys.device() == Device::Cpu {
        super::cpu::random::sort_pairs(keys, &out)?;
    } else {
        super::gpu::random::sort_pairs(keys, &out)?;
    }
    Ok(out)
}

/// `x` with `axis` replaced by the axes of `idx` (int64 indices into that axis): NumPy's
/// `x.take(idx, axis)`, as a new array. Indices outside the axis are an [`Error::Index`].
pub fn take_along(x: &Array, axis: usize, idx: &Array) -> Result<Array> {
    check_axis("take", x, axis)?;
    if idx.dtype() != DType::Int64 {
        return Err(Error::Type(format!(
            "take: indices must be int64, got {}",
            idx.dtype()
        )));
    }
    if idx.size() > 0 {
        let bound = |op| -> Result<i64> {
            match super::reduce(op, idx, None, false)?.item()? {
                crate::dtype::Scalar::Int(v) => Ok(v),
                other => Ok(other.to_f64() as i64),
            }
        };
        let (lo, hi) = (bound(super::ReduceOp::Min)?, bound(super::ReduceOp::Max)?);
        let n = x.shape()[axis] as i64;
        if lo < 0 || hi >= n {
            return Err(Error::Index(format!(
                "take: index {} is out of bounds for axis {axis} of length {n}",
                if lo < 0 { lo } else { hi }
            )));
        }
    }
    gather(x, axis, idx)
}

/// [`take_along`] for indices known to be in range (the samplers' own).
fn gather(x: &Array, axis: usize, idx: &Array) -> Result<Array> {
    crate::array::same_device("take", &[x, idx])?;
    let nd = x.ndim();
    // The axis first, the others after it in order: rows of `inner` elements.
    let mut order = vec![axis];
    order.extend((0..nd).filter(|&a| a != axis));
    let src = x.permute(&order)?.contiguous()?;
    let rest: Vec<usize> = order[1..].iter().map(|&a| x.shape()[a]).collect();
    let inner: usize = rest.iter().product();
    let idx = idx.contiguous()?;
    let mut rshape = idx.shape().to_vec();
    rshape.extend(&rest);
    let out = Array::empty(&rshape, x.dtype(), x.device())?;
    let row_bytes = inner * x.dtype().size();
    if x.device() == Device::Cpu {
        super::cpu::random::gather_rows(&src, &idx, &out, row_bytes)?;
    } else {
        super::gpu::random::gather_rows(&src, &idx, &out, row_bytes)?;
    }
    // Back to x's axis order: the index axes where `axis` was.
    let k = idx.ndim();
    let mut back: Vec<usize> = (k..k + axis).collect();
    back.extend(0..k);
    back.extend(k + axis..k + nd - 1);
    out.permute(&back)
}
