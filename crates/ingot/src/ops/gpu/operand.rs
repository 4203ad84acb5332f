//! How arrays are handed to the kernels: a contiguous 1-D view plus offset and strides, the
//! collapsed iteration shape, and the geometry blocks the kernels read.

use crate::array::Array;
use crate::error::Result;
use crate::layout::Layout;

/// An array seen as a contiguous 1-D view of the elements its layout touches, plus the offset of
/// its first element and its strides relative to that view. The kernel API binds the view as a
/// buffer without copying; the kernel does the strided addressing.
pub(crate) struct Operand {
    pub view: Array,
    pub off: i64,
    pub strides: Vec<isize>,
}

pub(crate) fn operand(a: &Array) -> Result<Operand> {
    let l = a.layout();
    let (lo, hi) = l.span().unwrap_or((l.offset(), l.offset()));
    let view = a.with_layout(Layout::new(vec![hi - lo], vec![1], lo)?)?;
    Ok(Operand {
        view,
        off: (l.offset() - lo) as i64,
        strides: l.strides().to_vec(),
    })
}

/// The address of the array's first element (0 when the memory has no address here). Arrays
/// imported through DLPack start wherever the producer's tensor starts, so alignment is a
/// property of the address, not of the offset in the buffer.
pub(crate) fn first_address(a: &Array) -> usize {
    let b = a.buffer();
    let base = b
        .device_ptr()
        .map(|p| p as usize)
        .or_else(|| b.host_ptr().map(|p| p as usize))
        .unwrap_or(0);
    base + a.layout().offset() * a.dtype().size()
}

/// True when the array's first element is 16-byte aligned in memory (pack loads allowed).
pub(crate) fn aligned(a: &Array) -> bool {
    first_address(a).is_multiple_of(16)
}

/// Drops axes of length 1 and merges axes that are contiguous with their inner neighbour in
/// every operand. Returns the new shape and each operand's strides.
///
/// An empty iteration space (some extent 0) collapses to the single axis `[0]`: the strides of
/// a zero-length axis say nothing (NumPy gives a `(0, 0)` array the strides of `(1, 1)`), and
/// callers that collapse again after copying rely on reaching one axis.
pub(crate) fn collapse(shape: &[usize], strides: &[Vec<isize>]) -> (Vec<usize>, Vec<Vec<isize>>) {
    if shape.contains(&0) {
        return (vec![0], vec![vec![1]; strides.len()]);
    }
    let mut sh: Vec<usize> = Vec::new();
    let mut st: Vec<Vec<isize>> = vec![Vec::new(); strides.len()];
    for d in 0..shape.len() {
        if shape[d] == 1 {
            continue;
        }
        let merge = !sh.is_empty() && {
            let last = sh.len() - 1;
            // The previous (outer) axis merges with this one when outer stride = inner stride * len.
            strides
                .iter()
                .zip(&st)
                .all(|(s, t)| t[last] == s[d] * shape[d] as isize)
        };
        if merge {
            let last = sh.len() - 1;
            sh[last] *= shape[d];
            for (t, s) in st.iter_mut().zip(strides) {
                t[last] = s[d];
            }
        } else {
            sh.push(shape[d]);
            for (t, s) in st.iter_mut().zip(strides) {
                t.push(s[d]);
            }
        }
    }
    (sh, st)
}

/// The most dimensions a strided kernel handles (after collapsing).
pub(crate) const MAX_DIMS: usize = 8;

/// The `Geom` struct of `common.metal`: n, ndim, vec, shape[8], off[4], st[4][8].
pub(crate) fn geom(
    n: usize,
    ndim: u32,
    vec: u32,
    shape: &[usize],
    ops: &[(i64, &[isize])],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(368);
    b.extend_from_slice(&(n as u64).to_ne_bytes());
    b.extend_from_slice(&ndim.to_ne_bytes());
    b.extend_from_slice(&vec.to_ne_bytes());
    for d in 0..MAX_DIMS {
        b.extend_from_slice(&(shape.get(d).copied().unwrap_or(1) as u64).to_ne_bytes());
    }
    for k in 0..4 {
        b.extend_from_slice(&ops.get(k).map_or(0, |o| o.0).to_ne_bytes());
    }
    for k in 0..4 {
        for d in 0..MAX_DIMS {
            let s = ops.get(k).and_then(|o| o.1.get(d)).copied().unwrap_or(0);
            b.extend_from_slice(&(s as i64).to_ne_bytes());
        }
    }
    b
}

/// The `EGeom` struct of `common.metal` (contiguous kernels): n, ndim (or mode), vec.
pub(crate) fn egeom(n: usize, ndim: u32, vec: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(16);
    b.extend_from_slice(&(n as u64).to_ne_bytes());
    b.extend_from_slice(&ndim.to_ne_bytes());
    b.extend_from_slice(&vec.to_ne_bytes());
    b
}

/// Runs `f` on slices along the first axis when a strided elementwise problem has more than
/// [`MAX_DIMS`] dimensions after collapsing (every array has the same shape).
pub(crate) fn split_outer(
    arrays: &[&Array],
    f: &mut dyn FnMut(&[Array]) -> Result<()>,
) -> Result<()> {
    let n = arrays[0].shape()[0];
    for i in 0..n {
        let item = [crate::layout::IndexItem::Int(i as isize)];
        let parts = arrays
            .iter()
            .map(|a| a.index(&item))
            .collect::<Result<Vec<_>>>()?;
        f(&parts)?;
    }
    Ok(())
}

pub(crate) fn check_device(op: &str, arrays: &[&Array]) -> Result<()> {
    crate::array::same_device(op, arrays)
}

#[cfg(test)]
mod tests {
    use super::collapse;

    #[test]
    fn collapse_merges_contiguous_axes_and_drops_unit_axes() {
        // (4, 1, 3, 5): the unit axis drops; the outer two merge in both operands (the second
        // broadcasts over them), the last does not merge for the broadcast one.
        let (sh, st) = collapse(&[4, 1, 3, 5], &[vec![15, 15, 5, 1], vec![0, 0, 0, 1]]);
        assert_eq!(sh, vec![12, 5]);
        assert_eq!(st, vec![vec![5, 1], vec![0, 1]]);
        let (sh, st) = collapse(&[4, 1, 3, 5], &[vec![15, 15, 5, 1]]);
        assert_eq!(sh, vec![60]);
        assert_eq!(st, vec![vec![1]]);
    }

    #[test]
    fn an_empty_space_collapses_to_one_axis_whatever_its_strides() {
        // A (0, 0) array has NumPy's strides (1, 1), and a [0:0, 0:0] view its parent's: neither
        // merges by the stride rule, and a reduction that copies to merge would never get there.
        for strides in [vec![1, 1], vec![29, 1], vec![0, 0]] {
            let (sh, st) = collapse(&[0, 0], std::slice::from_ref(&strides));
            assert_eq!(sh, vec![0]);
            assert_eq!(st.len(), 1);
            assert_eq!(st[0].len(), 1);
        }
        assert_eq!(
            collapse(&[3, 0, 2], &[vec![0, 2, 1], vec![2, 1, 1]]).0,
            vec![0]
        );
    }
}
