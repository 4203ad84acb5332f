//! Native CPU implementations of the ops (being written: see the foundation issue).

use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::{BinaryOp, ReduceOp, UnaryOp};

fn pending(what: &str) -> Error {
    Error::Unsupported(format!("cpu {what} is being written"))
}

pub(crate) fn unary(_op: UnaryOp, _x: &Array, _out: &Array) -> Result<()> {
    Err(pending("unary"))
}
pub(crate) fn binary(_op: BinaryOp, _x: &Array, _y: &Array, _out: &Array) -> Result<()> {
    Err(pending("binary"))
}
pub(crate) fn where_(_c: &Array, _x: &Array, _y: &Array, _out: &Array) -> Result<()> {
    Err(pending("where"))
}
pub(crate) fn reduce(_op: ReduceOp, _x: &Array, _axes: &[usize], _out: &Array) -> Result<()> {
    Err(pending("reduce"))
}
pub(crate) fn cumsum(_x: &Array, _axis: usize, _out: &Array) -> Result<()> {
    Err(pending("cumsum"))
}
pub(crate) fn copy_cast(_src: &Array, _dst: &Array) -> Result<()> {
    Err(pending("copy"))
}
pub(crate) fn affine_fill(_out: &Array, _start: f64, _step: f64) -> Result<()> {
    Err(pending("arange"))
}
pub(crate) fn matmul(_a: &Array, _b: &Array, _out: &Array) -> Result<()> {
    Err(pending("matmul"))
}
