//! The vocabulary of random draws ([`Sampler`], [`Draw`]), shared by `ops/random.rs` and the
//! backends; the stream they index is defined in `ops/random.rs`.

use crate::dtype::DType;
use crate::error::{Error, Result};

/// What a draw computes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Sampler {
    /// Uniform floats in [0, 1).
    Uniform,
    /// Standard normal floats.
    Normal,
    /// Integers `low + [0, range)` (`low` as two's complement, `range == 0` meaning 2^64).
    Integers { low: u64, range: u64 },
    /// Raw 64-bit keys (uint64).
    Keys,
}

impl Sampler {
    /// Values per block for results of `dtype`.
    pub fn lanes(self, dtype: DType) -> Result<u64> {
        Ok(match self {
            Sampler::Uniform | Sampler::Normal => match dtype {
                DType::Float64 => 2,
                DType::Float32 | DType::Float16 | DType::BFloat16 => 4,
                d => {
                    return Err(Error::UnsupportedDType {
                        op: self.name(),
                        dtype: d.to_string(),
                    })
                }
            },
            Sampler::Integers { range, .. } => {
                if range != 0 && range <= 1 << 32 {
                    4
                } else {
                    2
                }
            }
            Sampler::Keys => 2,
        })
    }

    /// The sampler's name in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Sampler::Uniform => "random",
            Sampler::Normal => "normal",
            Sampler::Integers { .. } => "integers",
            Sampler::Keys => "permutation",
        }
    }
}

/// One draw: the key, its first block and the sampler.
#[derive(Copy, Clone, Debug)]
pub struct Draw {
    /// The generator's key.
    pub key: [u32; 2],
    /// The first block.
    pub pos: u64,
    /// The sampler.
    pub sampler: Sampler,
}
