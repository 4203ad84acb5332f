//! Glue between arrays and a device's dense solver (`runtime/solver.rs`): column-major batched
//! copies, per-matrix vectors, `info` checks, and the host fallback for devices without one.

use crate::array::Array;
use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::runtime::{Matrices, Solver, SolverJob, Vectors};

/// A batch `[..batch, rows, cols]` held column-major: the array `[..batch, cols, rows]` whose
/// rows are the matrices' columns (so its matrix transpose is the logical matrix).
pub(super) struct ColMajor {
    /// The memory, `[..batch, cols, rows]` contiguous.
    pub arr: Array,
    pub rows: usize,
    pub cols: usize,
    pub count: usize,
}

impl ColMajor {
    /// A new column-major copy of `x` (`[..batch, rows, cols]`, any layout).
    pub fn copy_of(x: &Array) -> Result<ColMajor> {
        let nd = x.ndim();
        let (rows, cols) = (x.shape()[nd - 2], x.shape()[nd - 1]);
        let arr = x.matrix_transpose()?.copy()?;
        Ok(ColMajor {
            count: x.shape()[..nd - 2].iter().product(),
            arr,
            rows,
            cols,
        })
    }

    /// Uninitialised column-major matrices `[..batch, rows, cols]`.
    pub fn empty(
        batch: &[usize],
        rows: usize,
        cols: usize,
        dtype: DType,
        device: Device,
    ) -> Result<ColMajor> {
        let mut shape = batch.to_vec();
        shape.extend([cols, rows]);
        Ok(ColMajor {
            arr: Array::empty(&shape, dtype, device)?,
            rows,
            cols,
            count: batch.iter().product(),
        })
    }

    /// Column-major memory that already holds `arr` (contiguous `[..batch, cols, rows]`).
    pub fn wrap(arr: Array, rows: usize, cols: usize) -> ColMajor {
        let nd = arr.ndim();
        ColMajor {
            count: arr.shape()[..nd - 2].iter().product(),
            arr,
            rows,
            cols,
        }
    }

    /// The solver's description.
    pub fn mats(&self) -> Matrices<'_> {
        Matrices {
            buffer: self.arr.buffer(),
            offset: self.arr.layout().offset(),
            rows: self.rows,
            cols: self.cols,
            ld: self.rows,
            stride: self.rows * self.cols,
            count: self.count,
        }
    }

    /// The logical matrices `[..batch, rows, cols]` (a transposed view).
    pub fn logical(&self) -> Result<Array> {
        self.arr.matrix_transpose()
    }
}

/// `[..batch, len]` contiguous vectors.
pub(super) fn vectors(a: &Array) -> Vectors<'_> {
    let len = a.shape().last().copied().unwrap_or(1);
    Vectors {
        buffer: a.buffer(),
        offset: a.layout().offset(),
        len,
        stride: len,
    }
}

/// Runs `job` on the device's solver: `Ok(false)` when the device has none for it.
pub(super) fn run(device: Device, job: SolverJob<'_>, dtype: DType) -> Result<bool> {
    device.runtime()?.solver(&Solver { job, dtype })
}

/// Fails with [`Error::LinAlg`] (`what`) when an `info` entry is positive.
pub(super) fn check_info(info: &Array, what: &str) -> Result<()> {
    if info.size() == 0 {
        return Ok(());
    }
    let v = info.to_vec::<i32>()?;
    if v.iter().any(|&i| i > 0) {
        return Err(Error::LinAlg(what.to_string()));
    }
    if let Some(i) = v.iter().find(|&&i| i < 0) {
        return Err(Error::Device(format!(
            "internal: the solver rejected argument {} ({what})",
            -i
        )));
    }
    Ok(())
}

/// Runs `f` on host copies of `inputs` and moves its results back to `device`: the path of
/// devices without a dense solver.
pub(super) fn on_host(
    device: Device,
    inputs: &[&Array],
    f: impl FnOnce(&[Array]) -> Result<Vec<Array>>,
) -> Result<Vec<Array>> {
    let host: Vec<Array> = inputs
        .iter()
        .map(|a| a.to_device(Device::Cpu))
        .collect::<Result<_>>()?;
    f(&host)?.into_iter().map(|r| r.to_device(device)).collect()
}
