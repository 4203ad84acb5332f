//! Sorting complex arrays (the sort kernels of every backend have real keys only): NumPy's order of
//! complex numbers, `[R + Rj, R + nanj, nan + Rj, nan + nanj]` with each class ordered by its
//! non-NaN parts, as three stable sorts of real keys (least significant first: the imaginary
//! part, the real part, the class), and `unique` and `searchsorted` from that order.

use crate::array::Array;
use crate::dtype::{DType, Scalar};
use crate::error::Result;
use crate::layout::IndexItem;

use super::op::{BinaryOp, UnaryOp, UniqueParts};
use super::{binary, cumsum, flat_nonzero, index_set, take_along_axis, unary, where_, IndexKey};

/// The stable argsort (int64) of the real rows `x` (`[..., n]`) along the last axis, on the
/// device's backend.
fn argsort_reals(x: &Array, descending: bool) -> Result<Array> {
    let out = Array::empty(x.shape(), DType::Int64, x.device())?;
    match super::route::native(x.device()) {
        true => super::cpu::sort_rows(x, None, Some(&out), descending)?,
        false => super::gpu::sort_rows(x, None, Some(&out), descending)?,
    }
    Ok(out)
}

/// `part` with its NaNs as 0 (the class key orders them), and a 0/1 int32 array of its NaNs.
fn without_nans(part: &Array) -> Result<(Array, Array)> {
    let nan = unary(UnaryOp::IsNan, part)?;
    let zero = Array::scalar(Scalar::Int(0), part.dtype(), part.device())?;
    Ok((where_(&nan, &zero, part)?, nan.astype(DType::Int32)?))
}

/// The stable argsort (int64) of the complex rows `x` (`[..., n]`) along the last axis, in
/// NumPy's order (or its reverse with ties in their original order, `descending`).
pub(crate) fn argsort_rows(x: &Array, descending: bool) -> Result<Array> {
    let (re, re_nan) = without_nans(&super::real(x)?)?;
    let (im, im_nan) = without_nans(&super::imag(x)?)?;
    let two = Array::scalar(Scalar::Int(2), DType::Int32, x.device())?;
    let class = binary(
        BinaryOp::Add,
        &binary(BinaryOp::Multiply, &re_nan, &two)?,
        &im_nan,
    )?;
    // Each pass sorts the previous order stably by the next more significant key.
    let mut order = argsort_reals(&im, descending)?;
    for key in [&re, &class] {
        let in_order = take_along_axis(key, &order, -1)?;
        let step = argsort_reals(&in_order, descending)?;
        order = take_along_axis(&order, &step, -1)?;
    }
    Ok(order)
}

fn slice(start: Option<isize>, stop: Option<isize>) -> IndexItem {
    IndexItem::Slice {
        start,
        stop,
        step: None,
    }
}

/// [`super::unique`] of a complex `x`: the sorted values (each NaN its own value, as the
/// standard asks), the first occurrences, the inverse and the counts, from one stable argsort.
pub(crate) fn unique(x: &Array, indices: bool, inverse: bool, counts: bool) -> Result<UniqueParts> {
    let device = x.device();
    let flat = x.reshape(&[-1])?;
    let n = flat.size();
    let order = argsort_rows(&flat, false)?;
    let sorted = take_along_axis(&flat, &order, 0)?;
    // Run starts: the first element, and each element unequal to the one before (NaN != NaN).
    let first = Array::empty(&[n], DType::Bool, device)?;
    if n > 0 {
        first
            .index(&[slice(None, Some(1))])?
            .assign(&Array::scalar(Scalar::Bool(true), DType::Bool, device)?)?;
        let later = binary(
            BinaryOp::NotEqual,
            &sorted.index(&[slice(Some(1), None)])?,
            &sorted.index(&[slice(None, Some(n as isize - 1))])?,
        )?;
        first.index(&[slice(Some(1), None)])?.assign(&later)?;
    }
    let starts = flat_nonzero(&first)?;
    let key = [IndexKey::Array(starts.clone())];
    let values = super::index_get(&sorted, &key)?;
    // A stable sort puts each value's first occurrence first in its run.
    let first_index = if indices {
        Some(super::index_get(&order, &key)?)
    } else {
        None
    };
    let inv = if inverse {
        let one = Array::scalar(Scalar::Int(1), DType::Int64, device)?;
        let id = binary(
            BinaryOp::Subtract,
            &cumsum(&first, Some(0), Some(DType::Int64))?,
            &one,
        )?;
        let inv = Array::empty(&[n], DType::Int64, device)?;
        index_set(&inv, &[IndexKey::Array(order.clone())], &id)?;
        let shape: Vec<isize> = x.shape().iter().map(|&d| d as isize).collect();
        Some(inv.reshape(&shape)?)
    } else {
        None
    };
    let count = if counts {
        // Run ends: the last element, and each element unequal to the one after.
        let last = Array::empty(&[n], DType::Bool, device)?;
        if n > 0 {
            last.index(&[slice(None, Some(n as isize - 1))])?
                .assign(&first.index(&[slice(Some(1), None)])?)?;
            last.index(&[slice(Some(n as isize - 1), None)])?
                .assign(&Array::scalar(Scalar::Bool(true), DType::Bool, device)?)?;
        }
        let one = Array::scalar(Scalar::Int(1), DType::Int64, device)?;
        let span = binary(BinaryOp::Subtract, &flat_nonzero(&last)?, &starts)?;
        Some(binary(BinaryOp::Add, &span, &one)?)
    } else {
        None
    };
    Ok((values, first_index, inv, count))
}

/// [`super::searchsorted`] of the complex `values` in the 1-D complex `sorted` (one dtype): for
/// each value, how many elements of `sorted` come before it in NumPy's order (`right`: before
/// it or equal to it). One stable argsort of both together: values placed before `sorted` land
/// before their equals, values placed after it after them; a value's result counts the
/// elements of `sorted` before it in that order.
pub(crate) fn searchsorted(sorted: &Array, values: &Array, right: bool) -> Result<Array> {
    let device = values.device();
    let m = sorted.size();
    let n = values.size();
    let shape: Vec<isize> = values.shape().iter().map(|&d| d as isize).collect();
    let out = Array::empty(&[n], DType::Int64, device)?;
    if n == 0 || m == 0 {
        out.assign(&Array::scalar(Scalar::Int(0), DType::Int64, device)?)?;
        return out.reshape(&shape);
    }
    let flat = values.reshape(&[-1])?;
    let (first, second) = match right {
        true => (sorted, &flat),
        false => (&flat, sorted),
    };
    let split = first.size() as isize;
    let both = Array::empty(&[n + m], values.dtype(), device)?;
    both.index(&[slice(None, Some(split))])?.assign(first)?;
    both.index(&[slice(Some(split), None)])?.assign(second)?;
    let order = argsort_rows(&both, false)?;
    // Whether each place of the order holds an element of `sorted`, and how many do before it.
    let (cmp, bound) = match right {
        true => (BinaryOp::Less, m),
        false => (BinaryOp::GreaterEqual, n),
    };
    let bound = Array::scalar(Scalar::Int(bound as i64), DType::Int64, device)?;
    let of_sorted = binary(cmp, &order, &bound)?;
    let before = binary(
        BinaryOp::Subtract,
        &cumsum(&of_sorted, Some(0), Some(DType::Int64))?,
        &of_sorted.astype(DType::Int64)?,
    )?;
    let places = flat_nonzero(&unary(UnaryOp::LogicalNot, &of_sorted)?)?;
    let key = [IndexKey::Array(places)];
    let mut which = super::index_get(&order, &key)?;
    if right {
        let offset = Array::scalar(Scalar::Int(m as i64), DType::Int64, device)?;
        which = binary(BinaryOp::Subtract, &which, &offset)?;
    }
    index_set(
        &out,
        &[IndexKey::Array(which)],
        &super::index_get(&before, &key)?,
    )?;
    out.reshape(&shape)
}
