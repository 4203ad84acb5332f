//! Indexing with arrays: integer-array and boolean-mask indexing for reading (`index_get`) and
//! assignment (`index_set`), `take` and `take_along_axis`, with NumPy's semantics.
//!
//! A key mixes basic items (integers, slices, `None`, `...`) with integer or boolean arrays.
//! Boolean arrays become the integer coordinates of their true elements (one data-dependent
//! length, read back from the device). The basic items give a view `V` of the array, in which
//! every array-indexed axis is kept whole; the index arrays, broadcast together to a shape `B`,
//! are turned into element offsets `lin` along those axes (negative indices count from the end;
//! an out-of-range index is an `Index` error). The result has `V`'s other axes with `B` in place
//! of the indexed ones: where the first of them was when the advanced indices (arrays and
//! integers) are adjacent in the key, first otherwise (NumPy's rule). Backends see a view `W` of
//! `V` with the other axes and one axis of length `prod(B)` and stride 0, plus `lin`.

use super::select::{flat_nonzero, unravel};
use crate::array::{same_device, Array};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::layout::{broadcast_shapes, IndexItem, Layout};

/// One item of an index key.
#[derive(Clone, Debug)]
pub enum IndexKey {
    /// An integer, slice, `None` or `...`.
    Item(IndexItem),
    /// An integer array (any integer dtype) or a boolean mask.
    Array(Array),
}

/// The decomposition of an advanced index.
struct Plan {
    /// The basic-indexed view, array-indexed axes whole.
    v: Array,
    /// W: V's other axes around one axis of length prod(B), stride 0.
    w: Array,
    /// W's indexed axis.
    jaxis: usize,
    /// Element offsets (int64, shape B) along V's indexed axes.
    lin: Array,
    /// The shape of the result (W's with B in place of the indexed axis).
    shape: Vec<usize>,
}

fn full() -> IndexItem {
    IndexItem::Slice {
        start: None,
        stop: None,
        step: None,
    }
}

/// A key after [`normalize`]: basic items, integer arrays on an axis of `x`, and integer arrays
/// on a new axis (from a 0-d boolean).
enum Norm {
    Item(IndexItem),
    Array(Array),
    NewAxisArray(Array),
}

/// Axes of `x` an item consumes.
fn consumes(k: &IndexKey) -> usize {
    match k {
        IndexKey::Item(IndexItem::Int(_) | IndexItem::Slice { .. }) => 1,
        IndexKey::Item(_) => 0,
        IndexKey::Array(a) if a.dtype() == DType::Bool => a.ndim(),
        IndexKey::Array(_) => 1,
    }
}

/// Expands the ellipsis, turns boolean arrays into integer coordinate arrays (a 0-d boolean
/// becomes a new axis indexed by `[0]` or `[]`), and checks the number of indices.
fn normalize(x: &Array, key: &[IndexKey]) -> Result<Vec<Norm>> {
    let ellipses = key
        .iter()
        .filter(|k| matches!(k, IndexKey::Item(IndexItem::Ellipsis)))
        .count();
    if ellipses > 1 {
        return Err(Error::Index(
            "an index can only have a single ellipsis ('...')".into(),
        ));
    }
    let used: usize = key.iter().map(consumes).sum();
    if used > x.ndim() {
        return Err(Error::Index(format!(
            "too many indices for array: array is {}-dimensional, but {used} were indexed",
            x.ndim()
        )));
    }
    let mut out = Vec::with_capacity(key.len() + x.ndim());
    let mut axis = 0usize;
    for k in key {
        match k {
            IndexKey::Item(IndexItem::Ellipsis) => {
                for _ in 0..x.ndim() - used {
                    out.push(Norm::Item(full()));
                    axis += 1;
                }
            }
            IndexKey::Array(a) if a.dtype() == DType::Bool => {
                same_device("indexing", &[x, a])?;
                if a.ndim() == 0 {
                    let pos = flat_nonzero(&a.reshape(&[1])?)?;
                    out.push(Norm::NewAxisArray(pos));
                    continue;
                }
                let covered = &x.shape()[axis..axis + a.ndim()];
                if covered != a.shape() {
                    return Err(Error::Index(format!(
                        "boolean index of shape {:?} does not match the indexed axes {}..{} of shape {covered:?}",
                        a.shape(),
                        axis,
                        axis + a.ndim()
                    )));
                }
                for c in unravel(&flat_nonzero(a)?, a.shape())? {
                    out.push(Norm::Array(c));
                }
                axis += a.ndim();
            }
            IndexKey::Array(a) => {
                same_device("indexing", &[x, a])?;
                if !a.dtype().is_integer() {
                    return Err(Error::Index(format!(
                        "arrays used as indices must be of integer or boolean type, got {}",
                        a.dtype()
                    )));
                }
                out.push(Norm::Array(a.clone()));
                axis += 1;
            }
            IndexKey::Item(i) => {
                out.push(Norm::Item(*i));
                if !matches!(i, IndexItem::NewAxis) {
                    axis += 1;
                }
            }
        }
    }
    Ok(out)
}

fn plan(x: &Array, key: &[IndexKey]) -> Result<Option<Plan>> {
    let key = normalize(x, key)?;
    if key.iter().all(|k| matches!(k, Norm::Item(_))) {
        return Ok(None);
    }
    let mut basic = Vec::with_capacity(key.len());
    let mut arrays: Vec<(usize, Array)> = Vec::new();
    let mut adv_pos = Vec::new();
    let mut vaxes = 0usize;
    let mut ins = None;
    for (p, k) in key.iter().enumerate() {
        match k {
            Norm::Array(a) | Norm::NewAxisArray(a) => {
                adv_pos.push(p);
                ins.get_or_insert(vaxes);
                basic.push(if matches!(k, Norm::Array(_)) {
                    full()
                } else {
                    IndexItem::NewAxis
                });
                arrays.push((vaxes, a.clone()));
                vaxes += 1;
            }
            Norm::Item(IndexItem::Int(i)) => {
                adv_pos.push(p);
                ins.get_or_insert(vaxes);
                basic.push(IndexItem::Int(*i));
            }
            Norm::Item(i) => {
                basic.push(*i);
                vaxes += 1;
            }
        }
    }
    let adjacent = adv_pos.windows(2).all(|w| w[1] == w[0] + 1);
    let ins = if adjacent { ins.unwrap_or(0) } else { 0 };
    let v = x.index(&basic)?;
    let shapes: Vec<&[usize]> = arrays.iter().map(|(_, a)| a.shape()).collect();
    let b = broadcast_shapes(&shapes)?;
    let j: usize = b.iter().product();
    let lin = Array::empty(&b, DType::Int64, x.device())?;
    if j > 0 {
        for (n, (axis, a)) in arrays.iter().enumerate() {
            let dim = v.shape()[*axis];
            if dim == 0 {
                return Err(Error::Index(format!(
                    "index is out of bounds for axis {axis} with size 0"
                )));
            }
            let a64 = if a.dtype() == DType::Int64 {
                a.clone()
            } else {
                a.astype(DType::Int64)?
            };
            let idx = a64.broadcast_to(&b)?;
            let stride = v.layout().strides()[*axis];
            match super::route::native(x.device()) {
                true => super::cpu::index_offsets(&lin, &idx, dim, stride, n == 0, *axis)?,
                false => super::gpu::index_offsets(&lin, &idx, dim, stride, n == 0, *axis)?,
            }
        }
    }
    let indexed: Vec<usize> = arrays.iter().map(|(a, _)| *a).collect();
    let others: Vec<usize> = (0..v.ndim()).filter(|a| !indexed.contains(a)).collect();
    let (vs, vst) = (v.shape(), v.layout().strides());
    let mut wshape = Vec::with_capacity(others.len() + 1);
    let mut wst = Vec::with_capacity(others.len() + 1);
    let mut shape = Vec::with_capacity(others.len() + b.len());
    for (i, &a) in others.iter().enumerate() {
        if i == ins {
            wshape.push(j);
            wst.push(0);
            shape.extend_from_slice(&b);
        }
        wshape.push(vs[a]);
        wst.push(vst[a]);
        shape.push(vs[a]);
    }
    if ins >= others.len() {
        wshape.push(j);
        wst.push(0);
        shape.extend_from_slice(&b);
    }
    let w = v.with_layout(Layout::new(wshape, wst, v.layout().offset())?)?;
    Ok(Some(Plan {
        v,
        w,
        jaxis: ins,
        lin,
        shape,
    }))
}

/// A complex `x` on a GPU as real pairs ([`Array::complex_pairs`]), which the GPU's gathers and
/// scatters move as two reals each (their kernels have no complex types); `None` otherwise.
fn gpu_complex(x: &Array) -> Result<Option<Array>> {
    if x.dtype().is_complex() && !super::route::native(x.device()) {
        Ok(Some(x.complex_pairs()?))
    } else {
        Ok(None)
    }
}

/// `key` for the pairs of a complex array: the same items, then the whole pair axis (after an
/// ellipsis too, which would otherwise take it).
fn pairs_key(key: &[IndexKey]) -> Vec<IndexKey> {
    let mut k = key.to_vec();
    k.push(IndexKey::Item(full()));
    k
}

/// `x[key]` with NumPy's semantics for any mix of basic items, integer arrays and boolean masks:
/// a view when the key is basic, else a new array.
pub fn index_get(x: &Array, key: &[IndexKey]) -> Result<Array> {
    if let [IndexKey::Array(m)] = key {
        // x[mask] with a mask of x's whole shape on a GPU: one compaction of the elements (the
        // general path writes the int64 positions, then gathers through them).
        if m.dtype() == DType::Bool
            && m.ndim() > 0
            && !x.dtype().is_complex()
            && m.shape() == x.shape()
            && matches!(x.dtype().size(), 1 | 2 | 4 | 8)
            && !super::route::native(x.device())
        {
            same_device("indexing", &[x, m])?;
            return super::gpu::masked_select(x, m);
        }
    }
    if let Some(xp) = gpu_complex(x)? {
        if let Some(p) = plan(&xp, &pairs_key(key))? {
            return gather_planned(&xp, p)?.from_complex_pairs();
        }
    }
    let Some(p) = plan(x, key)? else {
        return x.index(&basic_items(key));
    };
    gather_planned(x, p)
}

/// The items of a key without arrays.
fn basic_items(key: &[IndexKey]) -> Vec<IndexItem> {
    key.iter()
        .map(|k| match k {
            IndexKey::Item(i) => *i,
            IndexKey::Array(_) => unreachable!("plan handles array keys"),
        })
        .collect()
}

/// The gather `p` planned for `x`, as a new array of the key's result shape.
fn gather_planned(x: &Array, p: Plan) -> Result<Array> {
    let out = Array::empty(p.w.shape(), x.dtype(), x.device())?;
    match super::route::native(x.device()) {
        true => super::cpu::gather(&p.w, p.jaxis, &p.lin, &out)?,
        false => super::gpu::gather(&p.v, &p.w, p.jaxis, &p.lin, &out)?,
    }
    out.reshape(&p.shape.iter().map(|&d| d as isize).collect::<Vec<_>>())
}

/// `x[key] = value`: `value` is broadcast to the shape of `x[key]` and converted to x's dtype.
/// With repeated indices one of the values is stored (the last, on the CPU, as NumPy).
pub fn index_set(x: &Array, key: &[IndexKey], value: &Array) -> Result<()> {
    same_device("assignment", &[x, value])?;
    x.check_writable("assignment")?;
    if let Some(xp) = gpu_complex(x)? {
        if let Some(p) = plan(&xp, &pairs_key(key))? {
            // The value as the pairs of complex numbers of the shape of `x[key]`.
            let shape = &p.shape[..p.shape.len() - 1];
            let v = if value.dtype() == x.dtype() {
                value.clone()
            } else {
                value.astype(x.dtype())?
            };
            let v = v.broadcast_to(shape)?.contiguous()?;
            return scatter_planned(&xp, p, &v.complex_pairs()?);
        }
    }
    let Some(p) = plan(x, key)? else {
        return x.index(&basic_items(key))?.assign(value);
    };
    scatter_planned(x, p, value)
}

/// The scatter `p` planned for `x` of `value` (broadcast to the key's result shape).
fn scatter_planned(x: &Array, p: Plan, value: &Array) -> Result<()> {
    let val = if value.dtype() == x.dtype() {
        value.clone()
    } else {
        value.astype(x.dtype())?
    };
    let val = val.broadcast_to(&p.shape)?;
    let ws: Vec<isize> = p.w.shape().iter().map(|&d| d as isize).collect();
    let val = val.reshape(&ws)?;
    // A value that shares memory with x is read in full before the writes.
    let val = if val.shares_buffer(x) {
        val.copy()?
    } else {
        val
    };
    match super::route::native(x.device()) {
        true => super::cpu::scatter(&p.w, p.jaxis, &p.lin, &val),
        false => super::gpu::scatter(&p.v, &p.w, p.jaxis, &p.lin, &val),
    }
}

/// The elements of `x` at `indices` (an integer array of any shape) along `axis`; with `None`,
/// of the flattened `x`. NumPy's `take` with out-of-range indices an `Index` error.
///
/// ```
/// use ingot::{Array, Device, ops};
/// let x = Array::from_vec(vec![10i32, 20, 30, 40], &[2, 2], Device::Cpu).unwrap();
/// let i = Array::from_vec(vec![1i64, 0, 1], &[3], Device::Cpu).unwrap();
/// let t = ops::take(&x, &i, Some(1)).unwrap();
/// assert_eq!(t.shape(), &[2, 3]);
/// assert_eq!(t.to_vec::<i32>().unwrap(), vec![20, 10, 20, 40, 30, 40]);
/// ```
pub fn take(x: &Array, indices: &Array, axis: Option<isize>) -> Result<Array> {
    let (x, axis) = match axis {
        Some(a) => (x.clone(), Layout::normalize_axis(a, x.ndim())?),
        None => (x.reshape(&[-1])?, 0),
    };
    if indices.dtype() == DType::Bool || !indices.dtype().is_integer() {
        return Err(Error::Type(format!(
            "take: indices must have an integer dtype, got {}",
            indices.dtype()
        )));
    }
    let mut key = vec![IndexKey::Item(full()); axis];
    key.push(IndexKey::Array(indices.clone()));
    index_get(&x, &key)
}

/// `out[..., j, ...] = x[..., indices[..., j, ...], ...]` along `axis`: `indices` has x's number
/// of dimensions and broadcasts with `x` along the other axes (NumPy's `take_along_axis`).
///
/// ```
/// use ingot::{Array, Device, ops};
/// let x = Array::from_vec(vec![3.0f32, 1.0, 2.0, 9.0, 7.0, 8.0], &[2, 3], Device::Cpu).unwrap();
/// let i = ops::argsort(&x, -1, false).unwrap();
/// let s = ops::take_along_axis(&x, &i, -1).unwrap();
/// assert_eq!(s.to_vec::<f32>().unwrap(), vec![1.0, 2.0, 3.0, 7.0, 8.0, 9.0]);
/// ```
pub fn take_along_axis(x: &Array, indices: &Array, axis: isize) -> Result<Array> {
    same_device("take_along_axis", &[x, indices])?;
    if indices.dtype() == DType::Bool || !indices.dtype().is_integer() {
        return Err(Error::Type(format!(
            "take_along_axis: indices must have an integer dtype, got {}",
            indices.dtype()
        )));
    }
    if indices.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "take_along_axis: indices of {} dimensions for an array of {}",
            indices.ndim(),
            x.ndim()
        )));
    }
    let axis = Layout::normalize_axis(axis, x.ndim())?;
    if let Some(xp) = gpu_complex(x)? {
        let i = indices.expand_dims(-1)?;
        let mut ishape = i.shape().to_vec();
        ishape[x.ndim()] = 2;
        let r = take_along_axis(&xp, &i.broadcast_to(&ishape)?, axis as isize)?;
        return r.from_complex_pairs();
    }
    let mut xs = x.shape().to_vec();
    let mut is = indices.shape().to_vec();
    xs[axis] = 1;
    is[axis] = 1;
    let mut shape = broadcast_shapes(&[&xs, &is])?;
    shape[axis] = indices.shape()[axis];
    let dim = x.shape()[axis];
    let out = Array::empty(&shape, x.dtype(), x.device())?;
    if out.size() == 0 {
        return Ok(out);
    }
    if dim == 0 {
        return Err(Error::Index(format!(
            "take_along_axis: index out of bounds for axis {axis} with size 0"
        )));
    }
    // x broadcast along the other axes, with the axis itself at stride 0.
    let mut bshape = shape.clone();
    bshape[axis] = dim;
    let xb = x.broadcast_to(&bshape)?;
    let stride = xb.layout().strides()[axis];
    let mut wst = xb.layout().strides().to_vec();
    wst[axis] = 0;
    let w = xb.with_layout(Layout::new(shape.clone(), wst, xb.layout().offset())?)?;
    let idx = if indices.dtype() == DType::Int64 {
        indices.clone()
    } else {
        indices.astype(DType::Int64)?
    };
    let idx = idx.broadcast_to(&shape)?;
    match super::route::native(x.device()) {
        true => super::cpu::take_along(&w, &idx, dim, stride, axis, &out)?,
        false => super::gpu::take_along(x, &w, &idx, dim, stride, axis, &out)?,
    }
    Ok(out)
}
