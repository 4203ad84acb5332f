//! Shape, strides and offset: how the elements of an array sit in its buffer.
//!
//! Strides and the offset count elements, not bytes. Strides are signed (a reversed view has a
//! negative stride) and may be zero (a broadcast view). Every view operation here is O(ndim) and
//! never touches data.

use crate::error::{Error, Result};

/// Where the elements of an array are in its buffer.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// One item of a basic index: `a[2]`, `a[1:5:2]`, `a[None]`, `a[...]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexItem {
    /// A single position (negative counts from the end); removes the axis.
    Int(isize),
    /// A Python slice; `None` parts take their defaults for the step's sign.
    Slice {
        start: Option<isize>,
        stop: Option<isize>,
        step: Option<isize>,
    },
    /// `None`: inserts an axis of length 1.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
}

impl Layout {
    /// A C-contiguous (row-major) layout of `shape`.
    pub fn contiguous(shape: &[usize]) -> Layout {
        Layout {
            shape: shape.to_vec(),
            strides: contiguous_strides(shape),
            offset: 0,
        }
    }

    /// A layout from its parts, checked only for matching lengths.
    pub fn new(shape: Vec<usize>, strides: Vec<isize>, offset: usize) -> Result<Layout> {
        if shape.len() != strides.len() {
            return Err(Error::Shape(format!(
                "shape {shape:?} and strides {strides:?} differ in length"
            )));
        }
        Ok(Layout {
            shape,
            strides,
            offset,
        })
    }

    /// The extent of each axis.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The step between neighbours along each axis, in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The position of element `[0, 0, ...]` in the buffer, in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// Number of axes.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements.
    pub fn size(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when the elements are in row-major order with no gaps (size-1 axes may have any stride).
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1isize;
        for (&n, &s) in self.shape.iter().zip(&self.strides).rev() {
            if n == 0 {
                return true;
            }
            if n != 1 {
                if s != expected {
                    return false;
                }
                expected *= n as isize;
            }
        }
        true
    }

    /// True when two indices of the view reach the same element: a zero stride on an axis
    /// longer than one (what broadcasting makes). Such a view must not be written.
    pub fn repeats_elements(&self) -> bool {
        self.size() > 1
            && self
                .shape
                .iter()
                .zip(&self.strides)
                .any(|(&n, &s)| n > 1 && s == 0)
    }

    /// The range of buffer elements the view can touch: `(lowest, highest + 1)`, or `None` when empty.
    pub fn span(&self) -> Option<(usize, usize)> {
        if self.size() == 0 {
            return None;
        }
        let mut lo = self.offset as isize;
        let mut hi = self.offset as isize;
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            let reach = (n as isize - 1) * s;
            if reach < 0 {
                lo += reach;
            } else {
                hi += reach;
            }
        }
        Some((lo as usize, hi as usize + 1))
    }

    /// Normalises a possibly negative axis for `ndim` axes.
    pub fn normalize_axis(axis: isize, ndim: usize) -> Result<usize> {
        let n = ndim as isize;
        let a = if axis < 0 { axis + n } else { axis };
        if a < 0 || a >= n {
            return Err(Error::Index(format!(
                "axis {axis} is out of bounds for array of dimension {ndim}"
            )));
        }
        Ok(a as usize)
    }

    /// Reorders the axes: axis `i` of the result is axis `axes[i]` of `self`.
    pub fn permute(&self, axes: &[usize]) -> Result<Layout> {
        let n = self.ndim();
        let mut seen = vec![false; n];
        if axes.len() != n {
            return Err(Error::Shape(format!(
                "axes {axes:?} do not match an array of dimension {n}"
            )));
        }
        for &a in axes {
            if a >= n || seen[a] {
                return Err(Error::Shape(format!(
                    "axes {axes:?} are not a permutation of 0..{n}"
                )));
            }
            seen[a] = true;
        }
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// Swaps the last two axes (the array API's `matrix_transpose`).
    pub fn matrix_transpose(&self) -> Result<Layout> {
        let n = self.ndim();
        if n < 2 {
            return Err(Error::Shape(format!(
                "matrix_transpose needs at least 2 dimensions, got {n}"
            )));
        }
        let mut axes: Vec<usize> = (0..n).collect();
        axes.swap(n - 1, n - 2);
        self.permute(&axes)
    }

    /// Reverses all axes (NumPy's `.T`).
    pub fn transpose(&self) -> Layout {
        let axes: Vec<usize> = (0..self.ndim()).rev().collect();
        self.permute(&axes).expect("reversal is a permutation")
    }

    /// Views the layout with `shape`, broadcasting size-1 axes and adding leading axes (stride 0).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        let n = shape.len();
        if n < self.ndim() {
            return Err(broadcast_error(self.shape(), shape));
        }
        let lead = n - self.ndim();
        let mut strides = vec![0isize; n];
        for i in 0..self.ndim() {
            let (have, want) = (self.shape[i], shape[lead + i]);
            strides[lead + i] = if have == want {
                self.strides[i]
            } else if have == 1 {
                0
            } else {
                return Err(broadcast_error(self.shape(), shape));
            };
        }
        Ok(Layout {
            shape: shape.to_vec(),
            strides,
            offset: self.offset,
        })
    }

    /// The same elements seen with `shape`, without copying, when the strides allow it.
    /// Returns `Ok(None)` when a copy is needed, an error when the sizes differ.
    pub fn reshape(&self, shape: &[usize]) -> Result<Option<Layout>> {
        if shape.iter().product::<usize>() != self.size() {
            return Err(Error::Shape(format!(
                "cannot reshape array of size {} into shape {shape:?}",
                self.size()
            )));
        }
        if self.is_contiguous() {
            return Ok(Some(Layout {
                shape: shape.to_vec(),
                strides: contiguous_strides(shape),
                offset: self.offset,
            }));
        }
        // Merge runs of old axes that are contiguous with each other, then split them into the
        // new axes: possible exactly when every new axis falls inside one mergeable run.
        let old: Vec<(usize, isize)> = self
            .shape
            .iter()
            .zip(&self.strides)
            .filter(|(&n, _)| n != 1)
            .map(|(&n, &s)| (n, s))
            .collect();
        let mut new_strides = vec![0isize; shape.len()];
        let (mut oi, mut ni) = (0usize, 0usize);
        while ni < shape.len() {
            if shape[ni] == 1 {
                new_strides[ni] = 0;
                ni += 1;
                continue;
            }
            if oi >= old.len() {
                return Ok(None);
            }
            // Take old axes until their product covers the new axes taken.
            let (mut old_prod, mut new_prod) = (old[oi].0, shape[ni]);
            let (o_start, n_start) = (oi, ni);
            oi += 1;
            ni += 1;
            while old_prod != new_prod {
                if old_prod < new_prod {
                    if oi >= old.len() {
                        return Ok(None);
                    }
                    old_prod *= old[oi].0;
                    oi += 1;
                } else {
                    if ni >= shape.len() {
                        return Ok(None);
                    }
                    new_prod *= shape[ni];
                    ni += 1;
                }
            }
            for k in o_start..oi - 1 {
                if old[k].1 != old[k + 1].1 * old[k + 1].0 as isize {
                    return Ok(None);
                }
            }
            let mut stride = old[oi - 1].1;
            for k in (n_start..ni).rev() {
                new_strides[k] = stride;
                stride *= shape[k] as isize;
            }
        }
        Ok(Some(Layout {
            shape: shape.to_vec(),
            strides: new_strides,
            offset: self.offset,
        }))
    }

    /// Applies a basic index (integers, slices, `None`, one `...`).
    pub fn index(&self, items: &[IndexItem]) -> Result<Layout> {
        let ellipses = items
            .iter()
            .filter(|i| matches!(i, IndexItem::Ellipsis))
            .count();
        if ellipses > 1 {
            return Err(Error::Index(
                "an index can only have a single ellipsis ('...')".into(),
            ));
        }
        let consuming = items
            .iter()
            .filter(|i| matches!(i, IndexItem::Int(_) | IndexItem::Slice { .. }))
            .count();
        if consuming > self.ndim() {
            return Err(Error::Index(format!(
                "too many indices for array: array is {}-dimensional, but {consuming} were indexed",
                self.ndim()
            )));
        }
        let mut shape = Vec::new();
        let mut strides = Vec::new();
        let mut offset = self.offset as isize;
        let mut axis = 0usize;
        let mut expanded: Vec<IndexItem> = Vec::with_capacity(self.ndim() + items.len());
        for item in items {
            if let IndexItem::Ellipsis = item {
                for _ in 0..self.ndim() - consuming {
                    expanded.push(IndexItem::Slice {
                        start: None,
                        stop: None,
                        step: None,
                    });
                }
            } else {
                expanded.push(*item);
            }
        }
        for item in expanded {
            match item {
                IndexItem::NewAxis => {
                    shape.push(1);
                    strides.push(0);
                }
                IndexItem::Int(i) => {
                    let n = self.shape[axis] as isize;
                    let j = if i < 0 { i + n } else { i };
                    if j < 0 || j >= n {
                        return Err(Error::Index(format!(
                            "index {i} is out of bounds for axis {axis} with size {n}"
                        )));
                    }
                    offset += j * self.strides[axis];
                    axis += 1;
                }
                IndexItem::Slice { start, stop, step } => {
                    let n = self.shape[axis];
                    let (first, len, step) = slice_indices(start, stop, step, n)?;
                    if len > 0 {
                        offset += first * self.strides[axis];
                    }
                    shape.push(len);
                    strides.push(self.strides[axis] * step);
                    axis += 1;
                }
                IndexItem::Ellipsis => unreachable!("expanded above"),
            }
        }
        for a in axis..self.ndim() {
            shape.push(self.shape[a]);
            strides.push(self.strides[a]);
        }
        Ok(Layout {
            shape,
            strides,
            offset: offset as usize,
        })
    }

    /// Buffer position (in elements) of the element at multi-index `idx`.
    pub fn position(&self, idx: &[usize]) -> usize {
        let mut p = self.offset as isize;
        for (i, s) in idx.iter().zip(&self.strides) {
            p += *i as isize * s;
        }
        p as usize
    }

    /// Inserts an axis of length 1 at `axis` (0..=ndim).
    pub fn expand_dims(&self, axis: usize) -> Result<Layout> {
        if axis > self.ndim() {
            return Err(Error::Index(format!(
                "axis {axis} is out of bounds for expand_dims on {} dimensions",
                self.ndim()
            )));
        }
        let mut l = self.clone();
        l.shape.insert(axis, 1);
        l.strides.insert(axis, 0);
        Ok(l)
    }

    /// Removes the given axes, which must have length 1.
    pub fn squeeze(&self, axes: &[usize]) -> Result<Layout> {
        let mut l = Layout {
            shape: vec![],
            strides: vec![],
            offset: self.offset,
        };
        for a in axes {
            if *a >= self.ndim() {
                return Err(Error::Index(format!("axis {a} is out of bounds")));
            }
            if self.shape[*a] != 1 {
                return Err(Error::Value(format!(
                    "cannot select an axis to squeeze out which has size not equal to one (axis {a})"
                )));
            }
        }
        for i in 0..self.ndim() {
            if !axes.contains(&i) {
                l.shape.push(self.shape[i]);
                l.strides.push(self.strides[i]);
            }
        }
        Ok(l)
    }
}

/// How a matrix (the last two axes of a layout) sits in memory, as BLAS libraries describe it:
/// row-major with leading dimension `ld` (`transposed == false`), or the transpose of such a
/// matrix.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MatrixForm {
    /// The matrix is stored column by column.
    pub transposed: bool,
    /// Elements between the starts of consecutive rows (columns when `transposed`).
    pub ld: usize,
}

impl Layout {
    /// The BLAS form of the last two axes, or `None` when neither axis is unit-stride with the
    /// other far enough apart (a copy is needed first). Needs at least two axes.
    ///
    /// ```
    /// use ingot::Layout;
    /// let l = Layout::contiguous(&[3, 4]);
    /// assert_eq!(l.matrix_form().map(|f| (f.transposed, f.ld)), Some((false, 4)));
    /// assert_eq!(l.transpose().matrix_form().map(|f| (f.transposed, f.ld)), Some((true, 4)));
    /// ```
    pub fn matrix_form(&self) -> Option<MatrixForm> {
        let n = self.ndim();
        if n < 2 {
            return None;
        }
        let (rows, cols) = (self.shape()[n - 2], self.shape()[n - 1]);
        let (rs, cs) = (self.strides()[n - 2], self.strides()[n - 1]);
        if (cs == 1 || cols <= 1) && rs >= cols.max(1) as isize {
            return Some(MatrixForm {
                transposed: false,
                ld: rs.max(1) as usize,
            });
        }
        if (rs == 1 || rows <= 1) && cs >= rows.max(1) as isize {
            return Some(MatrixForm {
                transposed: true,
                ld: cs.max(1) as usize,
            });
        }
        None
    }
}

/// Row-major strides of `shape`, in elements.
pub fn contiguous_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut s = 1isize;
    for i in (0..shape.len()).rev() {
        strides[i] = s;
        s *= shape[i].max(1) as isize;
    }
    strides
}

/// The broadcast shape of several shapes (NumPy rules), or a shape error naming them.
pub fn broadcast_shapes(shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let n = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; n];
    for s in shapes {
        let lead = n - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[lead + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(Error::Shape(format!(
                    "operands could not be broadcast together with shapes {}",
                    shapes
                        .iter()
                        .map(|s| format!("{s:?}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                )));
            }
        }
    }
    Ok(out)
}

fn broadcast_error(from: &[usize], to: &[usize]) -> Error {
    Error::Shape(format!(
        "cannot broadcast an array of shape {from:?} to shape {to:?}"
    ))
}

/// Python's `slice.indices` plus the length: `(first, len, step)`.
pub fn slice_indices(
    start: Option<isize>,
    stop: Option<isize>,
    step: Option<isize>,
    n: usize,
) -> Result<(isize, usize, isize)> {
    let n = n as isize;
    let step = step.unwrap_or(1);
    if step == 0 {
        return Err(Error::Value("slice step cannot be zero".into()));
    }
    let clamp = |v: isize, lo: isize, hi: isize| v.max(lo).min(hi);
    let norm = |v: isize| if v < 0 { v + n } else { v };
    let (first, last) = if step > 0 {
        (
            start.map_or(0, |s| clamp(norm(s), 0, n)),
            stop.map_or(n, |s| clamp(norm(s), 0, n)),
        )
    } else {
        (
            start.map_or(n - 1, |s| clamp(norm(s), -1, n - 1)),
            stop.map_or(-1, |s| clamp(norm(s), -1, n - 1)),
        )
    };
    let len = if step > 0 {
        if last > first {
            (last - first + step - 1) / step
        } else {
            0
        }
    } else if first > last {
        (first - last + (-step) - 1) / (-step)
    } else {
        0
    };
    Ok((first, len as usize, step))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sl(start: Option<isize>, stop: Option<isize>, step: Option<isize>) -> IndexItem {
        IndexItem::Slice { start, stop, step }
    }

    #[test]
    fn slices_match_python() {
        assert_eq!(slice_indices(None, None, Some(-1), 5).unwrap(), (4, 5, -1));
        assert_eq!(
            slice_indices(Some(1), Some(4), Some(2), 5).unwrap(),
            (1, 2, 2)
        );
        assert_eq!(slice_indices(Some(-2), None, None, 5).unwrap(), (3, 2, 1));
        assert_eq!(
            slice_indices(Some(10), Some(0), Some(-3), 5).unwrap(),
            (4, 2, -3)
        );
        assert_eq!(slice_indices(Some(3), Some(1), None, 5).unwrap().1, 0);
        assert!(slice_indices(None, None, Some(0), 5).is_err());
    }

    #[test]
    fn index_and_positions() {
        let l = Layout::contiguous(&[3, 4]);
        let v = l
            .index(&[sl(None, None, Some(-1)), sl(Some(1), None, Some(2))])
            .unwrap();
        assert_eq!(v.shape(), &[3, 2]);
        assert_eq!(v.strides(), &[-4, 2]);
        assert_eq!(v.position(&[0, 0]), 9);
        assert_eq!(v.position(&[2, 1]), 3);
        let w = l
            .index(&[IndexItem::Ellipsis, IndexItem::Int(-1), IndexItem::NewAxis])
            .unwrap();
        assert_eq!(w.shape(), &[3, 1]);
        assert_eq!(w.position(&[1, 0]), 7);
        assert!(l.index(&[IndexItem::Int(3)]).is_err());
        assert!(l
            .index(&[IndexItem::Int(0), IndexItem::Int(0), IndexItem::Int(0)])
            .is_err());
    }

    #[test]
    fn reshape_without_copy_where_possible() {
        let l = Layout::contiguous(&[2, 3, 4]);
        let t = l.permute(&[1, 0, 2]).unwrap();
        assert!(t.reshape(&[6, 4]).unwrap().is_none());
        let s = l
            .index(&[IndexItem::Ellipsis, sl(None, None, Some(2))])
            .unwrap();
        let r = s.reshape(&[6, 2]).unwrap().unwrap();
        assert_eq!(r.strides(), &[4, 2]);
        let r = s.reshape(&[3, 2, 1, 2]).unwrap().unwrap();
        assert_eq!(r.strides()[0], 8);
        assert_eq!(r.strides()[3], 2);
        assert!(l.reshape(&[5, 5]).is_err());
    }

    #[test]
    fn broadcasting() {
        assert_eq!(
            broadcast_shapes(&[&[3, 1], &[4], &[2, 1, 1]]).unwrap(),
            vec![2, 3, 4]
        );
        assert!(broadcast_shapes(&[&[3], &[4]]).is_err());
        let b = Layout::contiguous(&[3, 1])
            .broadcast_to(&[2, 3, 4])
            .unwrap();
        assert_eq!(b.strides(), &[0, 1, 0]);
        assert!(!b.is_contiguous());
        assert_eq!(Layout::contiguous(&[2, 0]).span(), None);
    }
}
