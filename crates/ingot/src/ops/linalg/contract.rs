//! Tensor contractions of the array API: `tensordot` (through one matrix product) and `vecdot`.
//! Shared by the main namespace and the `linalg` extension.

use crate::array::Array;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{broadcast_shapes, Layout};
use crate::ops::{binary, matmul, reduce, BinaryOp, ReduceOp};

/// The axes [`tensordot`] contracts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TensordotAxes {
    /// The last `n` axes of `x1` with the first `n` of `x2`.
    Last(usize),
    /// These axes of `x1` with these of `x2`, pairwise (negative count from the end).
    Pairs(Vec<isize>, Vec<isize>),
}

/// The tensor contraction of `x1` and `x2` over `axes`: the free axes of `x1` (in order), then
/// those of `x2`. Contracted axes must have equal lengths.
pub fn tensordot(x1: &Array, x2: &Array, axes: &TensordotAxes) -> Result<Array> {
    crate::array::same_device("tensordot", &[x1, x2])?;
    let (c1, c2): (Vec<usize>, Vec<usize>) = match axes {
        TensordotAxes::Last(n) => {
            let n = *n;
            if n > x1.ndim() || n > x2.ndim() {
                return Err(Error::Value(format!(
                    "tensordot: cannot contract {n} axes of arrays of shapes {:?} and {:?}",
                    x1.shape(),
                    x2.shape()
                )));
            }
            ((x1.ndim() - n..x1.ndim()).collect(), (0..n).collect())
        }
        TensordotAxes::Pairs(a, b) => {
            if a.len() != b.len() {
                return Err(Error::Value(format!(
                    "tensordot: {} axes of x1 but {} of x2",
                    a.len(),
                    b.len()
                )));
            }
            let norm = |v: &[isize], nd: usize| -> Result<Vec<usize>> {
                v.iter().map(|&x| Layout::normalize_axis(x, nd)).collect()
            };
            (norm(a, x1.ndim())?, norm(b, x2.ndim())?)
        }
    };
    let distinct = |v: &[usize]| {
        let mut s = v.to_vec();
        s.sort_unstable();
        s.windows(2).all(|w| w[0] != w[1])
    };
    if !distinct(&c1) || !distinct(&c2) {
        return Err(Error::Value("tensordot: repeated axis".into()));
    }
    for (&i, &j) in c1.iter().zip(&c2) {
        if x1.shape()[i] != x2.shape()[j] {
            return Err(Error::Shape(format!(
                "tensordot: axis {i} of x1 ({}) and axis {j} of x2 ({}) differ in length",
                x1.shape()[i],
                x2.shape()[j]
            )));
        }
    }
    let free1: Vec<usize> = (0..x1.ndim()).filter(|a| !c1.contains(a)).collect();
    let free2: Vec<usize> = (0..x2.ndim()).filter(|a| !c2.contains(a)).collect();
    let k: usize = c1.iter().map(|&a| x1.shape()[a]).product();
    let m: usize = free1.iter().map(|&a| x1.shape()[a]).product();
    let n: usize = free2.iter().map(|&a| x2.shape()[a]).product();
    let mut p1 = free1.clone();
    p1.extend(&c1);
    let mut p2 = c2.clone();
    p2.extend(&free2);
    let a = x1.permute(&p1)?.reshape(&[m as isize, k as isize])?;
    let b = x2.permute(&p2)?.reshape(&[k as isize, n as isize])?;
    let mut shape: Vec<isize> = free1.iter().map(|&a| x1.shape()[a] as isize).collect();
    shape.extend(free2.iter().map(|&a| x2.shape()[a] as isize));
    matmul(&a, &b)?.reshape(&shape)
}

/// The dot product of vectors along `axis` (of the broadcast shape; negative counts from the
/// end), the other axes broadcast. The axis must have the same length in both arguments (it is
/// not broadcast). The result has the promoted dtype.
pub fn vecdot(x1: &Array, x2: &Array, axis: isize) -> Result<Array> {
    crate::array::same_device("vecdot", &[x1, x2])?;
    let nd = x1.ndim().max(x2.ndim());
    let ax = Layout::normalize_axis(axis, nd)?;
    let own = |x: &Array| -> Result<usize> {
        let lead = nd - x.ndim();
        ax.checked_sub(lead).ok_or_else(|| {
            Error::Shape(format!(
                "vecdot: axis {axis} is not an axis of the argument of shape {:?}",
                x.shape()
            ))
        })
    };
    let (a1, a2) = (own(x1)?, own(x2)?);
    if x1.shape()[a1] != x2.shape()[a2] {
        return Err(Error::Shape(format!(
            "vecdot: the contracted axis has {} elements in x1 and {} in x2",
            x1.shape()[a1],
            x2.shape()[a2]
        )));
    }
    // Move the axis last in both, then broadcast the others.
    let last = |x: &Array, a: usize| -> Result<Array> {
        let mut order: Vec<usize> = (0..x.ndim()).filter(|&i| i != a).collect();
        order.push(a);
        x.permute(&order)
    };
    let (y1, y2) = (last(x1, a1)?, last(x2, a2)?);
    // The standard's vecdot conjugates its first argument.
    let y1 = if y1.dtype().is_complex() {
        crate::ops::complex::conj(&y1)?
    } else {
        y1
    };
    let batch = broadcast_shapes(&[&y1.shape()[..y1.ndim() - 1], &y2.shape()[..y2.ndim() - 1]])?;
    let mut full = batch.clone();
    full.push(x1.shape()[a1]);
    let dtype = x1.dtype().promote(x2.dtype());
    let prod = binary(
        BinaryOp::Multiply,
        &y1.broadcast_to(&full)?,
        &y2.broadcast_to(&full)?,
    )?;
    let s = if dtype == DType::Bool {
        reduce(ReduceOp::Any, &prod, Some(&[-1]), false)?
    } else {
        reduce(ReduceOp::Sum, &prod, Some(&[-1]), false)?
    };
    if s.dtype() == dtype {
        Ok(s)
    } else {
        s.astype(dtype)
    }
}
