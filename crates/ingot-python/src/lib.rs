//! Python bindings of ingot: the `ingot._ingot` extension module. No logic lives here beyond
//! converting arguments and results; errors map to exceptions in `errors.rs`.
//!
//! One concern per file: `errors` (exceptions), `dtype` (dtype objects and scalars), `device`,
//! `pyarray` (the `Array` type and shared argument conversions), `array` / `array_operators` /
//! `array_methods` (its methods), `indexing` (index keys), `creation`, `ops`, `sorting`, `linalg` (the linalg
//! extension), `fft` (the fft extension), `random` (the state of `ingot.random`), `kernel`, `prepared` (a kernel call with its dispatch
//! fixed, for `ingot.fuse`),
//! `translate` (a kernel's translation for a target), `interop`,
//! and `metal` (NumPy ↔ Metal without copies; only with the `metal` feature on macOS, or under
//! the Linux type-check cfg `ingot_metal_typecheck`).

pub mod array;
pub mod array_methods;
pub mod array_operators;
pub mod creation;
pub mod device;
pub mod dtype;
pub mod errors;
pub mod fft;
pub mod indexing;
pub mod interop;
pub mod kernel;
pub mod linalg;
#[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
pub mod metal;
pub mod ops;
pub mod prepared;
pub mod pyarray;
pub mod random;
pub mod sorting;
pub mod translate;

use pyo3::prelude::*;

#[pymodule]
fn _ingot(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    dtype::register(m)?;
    device::register(m)?;
    m.add_class::<pyarray::PyArray>()?;
    creation::register(m)?;
    ops::register(m)?;
    sorting::register(m)?;
    kernel::register(m)?;
    interop::register(m)?;
    random::register(m)?;
    linalg::register(m)?;
    translate::register(m)?;
    fft::register(m)?;
    Ok(())
}
