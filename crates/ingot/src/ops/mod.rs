//! Array operations, by category.
//!
//! [`op`] holds the op vocabulary (the marker enums and their dtype rules). Each category file
//! (`binary.rs`, `unary.rs`, `reduce.rs`, ...) holds a device-independent entry point that
//! checks and promotes its inputs, allocates the result and hands it to a backend: [`cpu`]
//! (native Rust, rayon, vectorisable loops, gemm) or, for every other device, `gpu` (the built-in
//! kernels of `kernels/*.metal`, run through the kernel API). Backends receive inputs already
//! broadcast and converted to the computation dtype, and a contiguous output to fill; they never
//! call the entry points, so the dependencies go one way: entry points -> backends -> `op`.

pub mod binary;
pub mod complex;
pub mod copy;
pub mod cpu;
pub mod creation;
pub mod fft;
pub mod gather;
pub mod gpu;
pub mod kernel_args;
pub mod linalg;
pub mod matmul;
pub mod op;
pub mod random;
pub mod reduce;
pub(crate) mod route;
pub mod search;
pub mod select;
pub mod sort;
pub(crate) mod sort_complex;
pub mod unary;
pub mod unique;

pub use binary::{binary, binary_into, clip, where_};
pub use complex::{conj, imag, real};
pub use copy::copy_into;
pub use creation::{arange, eye, full, linspace};
pub use gather::{index_get, index_set, take, take_along_axis, IndexKey};
pub use kernel_args::contiguous_inputs;
pub use matmul::matmul;
pub use op::{BinaryOp, ReduceOp, ScanOp, UnaryOp};
pub use reduce::{cumsum, cumulative, reduce};
pub use route::set_cpu_ops_through_kernels;
pub use search::{isin, searchsorted};
pub use select::{flat_nonzero, nonzero, unravel, Unique};
pub use sort::{argsort, sort};
pub use unary::unary;
pub use unique::unique;
