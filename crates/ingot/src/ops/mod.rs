//! Array operations, by category.
//!
//! Each category file holds the op marker enum, the dtype rules (what the result dtype is, which
//! dtypes are accepted) and a device-independent entry point that allocates the result and hands
//! it to a backend: [`cpu`] (native Rust, rayon, vectorisable loops, gemm) or, for every GPU
//! runtime, `gpu` (kernels from `kernels/*.metal`). Backends receive inputs already broadcast
//! and converted to the computation dtype, and a contiguous output to fill.

pub mod binary;
pub mod copy;
pub mod cpu;
pub mod creation;
pub mod gpu;
pub mod matmul;
pub mod reduce;
pub mod unary;

pub use binary::{binary, binary_into, clip, where_, BinaryOp};
pub use copy::copy_into;
pub use creation::{arange, eye, full, linspace};
pub use matmul::matmul;
pub use reduce::{cumsum, reduce, ReduceOp};
pub use unary::{unary, UnaryOp};

use crate::array::Array;
use crate::error::{Error, Result};

/// Fails unless every array is on the same device as the first.
pub(crate) fn same_device(op: &str, arrays: &[&Array]) -> Result<()> {
    if let Some(first) = arrays.first() {
        for a in &arrays[1..] {
            if a.device() != first.device() {
                return Err(Error::DeviceMismatch(format!(
                    "{op}: arrays on {} and {} (move one with to_device)",
                    first.device(),
                    a.device()
                )));
            }
        }
    }
    Ok(())
}
