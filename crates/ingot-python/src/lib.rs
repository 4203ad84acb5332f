//! Python bindings of ingot: the `ingot._ingot` extension module. No logic lives here beyond
//! converting arguments and results; errors map to exceptions in `errors.rs`.
//!
//! One concern per file: `errors` (exceptions), `dtype` (dtype objects and scalars), `device`,
//! `array` (the `Array` class), `indexing` (index keys), `creation`, `ops`.

pub mod array;
pub mod creation;
pub mod device;
pub mod dtype;
pub mod errors;
pub mod indexing;
pub mod interop;
pub mod kernel;
pub mod ops;

use pyo3::prelude::*;

#[pymodule]
fn _ingot(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    dtype::register(m)?;
    device::register(m)?;
    m.add_class::<array::PyArray>()?;
    creation::register(m)?;
    ops::register(m)?;
    kernel::register(m)?;
    interop::register(m)?;
    Ok(())
}
