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
pub mod copy;
pub mod cpu;
pub mod creation;
pub mod gather;
pub mod gpu;
pub mod kernel_args;
pub mod matmul;
pub mod op;
pub mod reduce;
pub mod select;
pub mod sort;
pub mod unary;

pub use binary::{binary, binary_into, clip, where_};
pub use copy::copy_into;
pub use creation::{arange, eye, full, linspace};
pub use gather::{index_get, index_set, take, take_along_axis, IndexKey};
pub use kernel_args::contiguous_inputs;
pub use matmul::matmul;
pub use op::{BinaryOp, ReduceOp, ScanOp, UnaryOp};
pub use reduce::{cumsum, cumulative, reduce};
pub use select::{flat_nonzero, isin, nonzero, searchsorted, unique, unravel, Unique};
pub use sort::{argsort, sort};
pub use unary::unary;

/// Whether the ops of `device` run natively (the CPU backend) rather than through the built-in
/// kernel library. The sorting, selection and indexing ops ask this: with `INGOT_CPU_OPS=kernels`
/// in the environment (or [`set_cpu_ops_through_kernels`]) they run their GPU implementations on
/// the CPU kernel engine, which is how the tests check those kernels without a GPU.
pub(crate) fn native(device: crate::device::Device) -> bool {
    use std::sync::atomic::Ordering;
    if device != crate::device::Device::Cpu {
        return false;
    }
    match KERNELS_ON_CPU.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let k = std::env::var("INGOT_CPU_OPS").is_ok_and(|v| v == "kernels");
            KERNELS_ON_CPU.store(if k { 1 } else { 2 }, Ordering::Relaxed);
            !k
        }
    }
}

static KERNELS_ON_CPU: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Runs the sorting, selection and indexing ops of CPU arrays through the GPU kernel library on
/// the CPU kernel engine (`true`) or natively (`false`, the default); for tests of the kernels.
#[doc(hidden)]
pub fn set_cpu_ops_through_kernels(on: bool) {
    KERNELS_ON_CPU.store(if on { 1 } else { 2 }, std::sync::atomic::Ordering::Relaxed);
}
