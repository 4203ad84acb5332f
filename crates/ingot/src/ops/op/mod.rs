//! The op vocabulary: which operations exist and their dtype rules, shared by the
//! device-independent entry points (`ops/binary.rs`, ...) and the backends (`ops/cpu`,
//! `ops/gpu`). The `name` of each op is also the name its GPU kernels are built under
//! (`binary_<name>_<dtype>`), as candle shares its op markers with its kernel sources.

mod binary;
mod random;
mod reduce;
mod unary;

pub use binary::{scalar_dtype, BinaryOp};
pub use random::{Draw, Sampler};
pub use reduce::{ReduceOp, ScanOp};
pub use unary::{UnaryClass, UnaryOp};

/// What a backend's `unique` returns: the values, then the first indices, the inverse indices and
/// the counts, each when asked for.
pub type UniqueParts = (
    crate::array::Array,
    Option<crate::array::Array>,
    Option<crate::array::Array>,
    Option<crate::array::Array>,
);
