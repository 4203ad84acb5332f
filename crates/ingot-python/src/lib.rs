//! Python bindings of ingot: the `ingot._ingot` extension module. No logic lives here beyond
//! converting arguments and results; errors map to exceptions in `errors.rs`.

pub mod errors;

use pyo3::prelude::*;

#[pymodule]
fn _ingot(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    Ok(())
}
