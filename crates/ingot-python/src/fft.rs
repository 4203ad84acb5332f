//! The `fft` extension: argument conversion around `ingot::ops::fft`, computed without the GIL.
//! `python/ingot/fft.py` adds the array API's signatures, `fftfreq` and the shifts.

use pyo3::prelude::*;

use ingot::ops::fft::{self, FftNorm};
use ingot::Array;

use crate::errors::{detached, IntoPyResult};
use crate::pyarray::PyArray;

fn norm_from(norm: &str) -> PyResult<FftNorm> {
    FftNorm::parse(norm).py_err()
}

/// A 1-D transform: `kind` is `fft`, `ifft`, `rfft`, `irfft`, `hfft` or `ihfft`.
#[pyfunction]
#[pyo3(signature = (kind, x, n, axis, norm))]
fn fft_1d(
    py: Python<'_>,
    kind: &str,
    x: &PyArray,
    n: Option<usize>,
    axis: isize,
    norm: &str,
) -> PyResult<PyArray> {
    let (a, nm) = (x.inner.clone(), norm_from(norm)?);
    type Transform = fn(&Array, Option<usize>, isize, FftNorm) -> ingot::Result<Array>;
    let f: Transform = match kind {
        "fft" => |a, n, ax, nm| fft::fft(a, n, ax, false, nm),
        "ifft" => |a, n, ax, nm| fft::fft(a, n, ax, true, nm),
        "rfft" => fft::rfft,
        "irfft" => fft::irfft,
        "hfft" => fft::hfft,
        "ihfft" => fft::ihfft,
        _ => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown transform {kind:?}"
            )))
        }
    };
    Ok(detached(py, move || f(&a, n, axis, nm))?.into())
}

/// An n-d transform: `kind` is `fftn`, `ifftn`, `rfftn` or `irfftn`.
#[pyfunction]
#[pyo3(signature = (kind, x, s, axes, norm))]
fn fft_nd(
    py: Python<'_>,
    kind: &str,
    x: &PyArray,
    s: Option<Vec<usize>>,
    axes: Option<Vec<isize>>,
    norm: &str,
) -> PyResult<PyArray> {
    let (a, nm) = (x.inner.clone(), norm_from(norm)?);
    let kind = kind.to_string();
    Ok(detached(py, move || {
        let (s, axes) = (s.as_deref(), axes.as_deref());
        match kind.as_str() {
            "fftn" => fft::fftn(&a, s, axes, false, nm),
            "ifftn" => fft::fftn(&a, s, axes, true, nm),
            "rfftn" => fft::rfftn(&a, s, axes, nm),
            "irfftn" => fft::irfftn(&a, s, axes, nm),
            other => Err(ingot::Error::Value(format!("unknown transform {other:?}"))),
        }
    })?
    .into())
}

/// Adds the fft functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(fft_1d, m)?)?;
    m.add_function(wrap_pyfunction!(fft_nd, m)?)?;
    Ok(())
}
