//! The GPU backend of the ops: one implementation for every GPU runtime, written against the
//! kernel API ([`crate::kernel`]) only, running the built-in MSL kernel library in
//! `crates/ingot/kernels/*.metal`.
//!
//! Each kernel is an explicit instantiation of a template of one module (`copy.metal`,
//! `unary.metal`, ...), named `<template>__<op>__<dtypes>`. A library is compiled on first use:
//! on a GPU one library per (op, dtypes) holding its layout variants (a fraction of a second of
//! NVRTC), on the CPU kernel engine (used to test this backend without a GPU) one library per
//! (module, dtypes) holding every op, since each C++ compile costs seconds there. Kernels are then
//! found by name in a memory cache; the backends keep the compiled code on disk.
//!
//! The functions take the same arguments as the native CPU backend (`ops::cpu`): inputs already
//! broadcast to the output's shape and converted to the computation dtype, and a contiguous
//! output (`copy_cast` also writes strided outputs). Complex arrays go to the `complex_*`
//! functions (`complex.rs`), composed of the real kernels. They work on any device whose kernel engine
//! exists, the CPU included, which is how the tests check them against `ops::cpu`.

mod complex;
mod copy;
mod elementwise;
mod gather;
mod library;
pub(crate) mod matmul;
mod operand;
pub mod random;
mod reduce;
mod select;
pub(crate) mod sort;

pub use complex::{
    complex_binary, complex_copy_cast, complex_reduce, complex_scan, complex_unary, complex_where,
};
pub use copy::{affine_fill, copy_cast};
pub use elementwise::{binary, unary, where_};
pub use gather::{gather, index_offsets, scatter, take_along};
pub use library::{cmath_source, functor_source};
pub use reduce::{cumsum, reduce, scan};
pub use select::{flat_nonzero, isin, masked_select, searchsorted, unique};
pub use sort::{sort_rows, sort_rows_with, RadixScheme};
