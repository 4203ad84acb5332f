//! `ingot._ingot.Philox`: the state of `ingot.random.Generator` (a seed and a position in the
//! Philox4x32-10 stream) and its draws. Argument handling in NumPy's style lives in
//! `python/ingot/random.py`.

use std::sync::Mutex;

use pyo3::prelude::*;

use ingot::ops::random::{take_along, Generator};
use ingot::Array;

use crate::device::device_from_py;
use crate::dtype::dtype_from_py;
use crate::errors::detached;
use crate::pyarray::{shape_from_py, PyArray};

/// A Philox4x32-10 stream: the seed (the 64-bit key) and the position in 128-bit blocks. Every
/// draw takes whole blocks, so the values of a seed and position are the same on every device.
#[pyclass(name = "Philox", module = "ingot", frozen)]
pub struct PyPhilox {
    state: Mutex<Generator>,
}

impl PyPhilox {
    /// Runs `f` on the generator (the lock is held only by the calling thread).
    fn with<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut Generator) -> ingot::Result<T> + Send,
    ) -> PyResult<T> {
        detached(py, || {
            let mut g = self.state.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut g)
        })
    }
}

#[pymethods]
impl PyPhilox {
    #[new]
    #[pyo3(signature = (seed, position = 0))]
    fn new(seed: u64, position: u64) -> Self {
        PyPhilox {
            state: Mutex::new(Generator::at(seed, position)),
        }
    }

    /// The seed (the key of the stream).
    #[getter]
    fn seed(&self) -> u64 {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).seed()
    }

    /// The position in the stream, in 128-bit blocks.
    #[getter]
    fn position(&self) -> u64 {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .position()
    }

    /// Uniform floats in [0, 1).
    #[pyo3(signature = (shape, dtype, device = None))]
    fn random(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let (s, d, dev) = (
            shape_from_py(shape)?,
            dtype_from_py(dtype)?,
            device_from_py(device)?,
        );
        Ok(self.with(py, |g| g.random(&s, d, dev))?.into())
    }

    /// Standard normal floats.
    #[pyo3(signature = (shape, dtype, device = None))]
    fn normal(
        &self,
        py: Python<'_>,
        shape: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let (s, d, dev) = (
            shape_from_py(shape)?,
            dtype_from_py(dtype)?,
            device_from_py(device)?,
        );
        Ok(self.with(py, |g| g.normal(&s, d, dev))?.into())
    }

    /// Integers uniform in [low, high).
    #[pyo3(signature = (low, high, shape, dtype, device = None))]
    fn integers(
        &self,
        py: Python<'_>,
        low: i128,
        high: i128,
        shape: &Bound<'_, PyAny>,
        dtype: &Bound<'_, PyAny>,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let (s, d, dev) = (
            shape_from_py(shape)?,
            dtype_from_py(dtype)?,
            device_from_py(device)?,
        );
        Ok(self.with(py, |g| g.integers(low, high, &s, d, dev))?.into())
    }

    /// A random permutation of `range(n)` (int64).
    #[pyo3(signature = (n, device = None))]
    fn permutation(
        &self,
        py: Python<'_>,
        n: usize,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let dev = device_from_py(device)?;
        Ok(self.with(py, |g| g.permutation(n, dev))?.into())
    }

    /// A copy of `x` shuffled along `axis` (non-negative).
    fn permuted(&self, py: Python<'_>, x: &PyArray, axis: usize) -> PyResult<PyArray> {
        let x = x.inner.clone();
        Ok(self.with(py, |g| g.permuted(&x, axis))?.into())
    }

    /// Shuffles `x` in place along `axis` (non-negative).
    fn shuffle(&self, py: Python<'_>, x: &PyArray, axis: usize) -> PyResult<()> {
        let x = x.inner.clone();
        self.with(py, |g| g.shuffle(&x, axis))
    }

    /// Indices (int64) into a population of `n`, of `shape`.
    #[pyo3(signature = (n, shape, replace, p = None, device = None))]
    fn choice(
        &self,
        py: Python<'_>,
        n: usize,
        shape: &Bound<'_, PyAny>,
        replace: bool,
        p: Option<&PyArray>,
        device: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyArray> {
        let (s, dev) = (shape_from_py(shape)?, device_from_py(device)?);
        let p: Option<Array> = p.map(|a| a.inner.clone());
        Ok(self
            .with(py, |g| g.choice(n, &s, replace, p.as_ref(), dev))?
            .into())
    }
}

/// `x.take(idx, axis)` for int64 indices in range (the gather of `ingot.random.Generator.choice`).
#[pyfunction]
fn random_take(py: Python<'_>, x: &PyArray, idx: &PyArray, axis: usize) -> PyResult<PyArray> {
    let (x, idx) = (x.inner.clone(), idx.inner.clone());
    Ok(detached(py, move || take_along(&x, axis, &idx))?.into())
}

/// Adds `Philox` and `random_take` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPhilox>()?;
    m.add_function(wrap_pyfunction!(random_take, m)?)?;
    Ok(())
}
