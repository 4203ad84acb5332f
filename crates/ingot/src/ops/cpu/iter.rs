//! Strided n-d iteration over several arrays of one shape, split into rayon chunks when large,
//! and the runtime choice between baseline, AVX2 and AVX-512 copies of the hot loops.

use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use super::element::Elem;
use crate::array::Array;
use crate::error::{Error, Result};

/// Elements per chunk below which cheap elementwise work stays on the calling thread.
pub(crate) const GRAIN_CHEAP: usize = 1 << 16;
/// Elements per chunk for expensive elementwise work (transcendental functions).
pub(crate) const GRAIN_HEAVY: usize = 1 << 12;

/// 0: baseline x86-64 (or another architecture), 1: AVX2 + FMA, 2: AVX-512 (F, BW, DQ, VL).
#[inline]
pub(crate) fn simd_level() -> u8 {
    static LEVEL: AtomicU8 = AtomicU8::new(u8::MAX);
    let l = LEVEL.load(Ordering::Relaxed);
    if l != u8::MAX {
        return l;
    }
    let l = detect();
    LEVEL.store(l, Ordering::Relaxed);
    l
}

fn detect() -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        let avx512 = avx2
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512dq")
            && is_x86_feature_detected!("avx512vl");
        if avx512 {
            return 2;
        }
        if avx2 {
            return 1;
        }
    }
    0
}

/// Defines a function whose body is compiled three times (baseline, AVX2+FMA, AVX-512) and picks
/// the best copy for this CPU at run time. The body must only call `#[inline(always)]` code for
/// the wider instructions to reach the hot loop.
macro_rules! multiversion {
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident [$($gen:tt)*] ($($a:ident : $t:ty),* $(,)?) $(-> $ret:ty)?
        where [$($w:tt)*] $body:block) => {
        $(#[$m])*
        #[allow(clippy::too_many_arguments)]
        $vis unsafe fn $name<$($gen)*>($($a: $t),*) $(-> $ret)? where $($w)* {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn generic<$($gen)*>($($a: $t),*) $(-> $ret)? where $($w)* $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma,f16c")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn v3<$($gen)*>($($a: $t),*) $(-> $ret)? where $($w)* {
                unsafe { generic($($a),*) }
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")]
            #[allow(clippy::too_many_arguments)]
            unsafe fn v4<$($gen)*>($($a: $t),*) $(-> $ret)? where $($w)* {
                unsafe { generic($($a),*) }
            }
            #[cfg(target_arch = "x86_64")]
            {
                match $crate::ops::cpu::iter::simd_level() {
                    // SAFETY: the CPU has the features the copy was compiled for.
                    2 => return unsafe { v4($($a),*) },
                    1 => return unsafe { v3($($a),*) },
                    _ => {}
                }
            }
            unsafe { generic($($a),*) }
        }
    };
}
pub(crate) use multiversion;

/// A raw pointer that may cross threads (each chunk writes disjoint elements).
#[derive(Copy, Clone, Debug)]
pub(crate) struct SendPtr(pub *mut u8);
// SAFETY: the pointer is only dereferenced on element ranges that the scheduling makes disjoint.
unsafe impl Send for SendPtr {}
// SAFETY: as above.
unsafe impl Sync for SendPtr {}

impl SendPtr {
    /// The pointer as `*mut T`.
    #[inline(always)]
    pub(crate) fn get<T>(self) -> *mut T {
        self.0.cast()
    }
}

/// Pointer to element `[0, 0, ...]` of `a`, checked to be host memory of element type `T`.
pub(crate) fn elem_ptr<T: Elem>(a: &Array) -> Result<SendPtr> {
    if a.dtype() != T::DTYPE {
        return Err(Error::DTypeMismatch(format!(
            "internal: cpu kernel for {} given an array of {}",
            T::DTYPE,
            a.dtype()
        )));
    }
    let base = a
        .buffer()
        .host_ptr()
        .ok_or_else(|| Error::Device("cpu kernel given non-host memory".into()))?;
    // SAFETY: the layout's offset is inside the buffer (checked when the array was built).
    Ok(SendPtr(unsafe {
        base.add(a.layout().offset() * a.dtype().size())
    }))
}

/// True when writing `a` from several threads is race-free (no axis of extent > 1 with stride 0).
pub(crate) fn writes_disjoint(a: &Array) -> bool {
    let l = a.layout();
    l.shape()
        .iter()
        .zip(l.strides())
        .all(|(&n, &s)| n <= 1 || s != 0)
}

/// Iteration over `N` arrays of one shape, with axes of length 1 dropped and neighbouring axes
/// merged where every operand allows. Visits elements in row-major order of the shape.
#[derive(Clone, Debug)]
pub(crate) struct Plan<const N: usize> {
    shape: Vec<usize>,
    strides: [Vec<isize>; N],
    size: usize,
}

impl<const N: usize> Plan<N> {
    /// A plan for `shape`, with each operand's strides (in elements).
    pub(crate) fn new(shape: &[usize], strides: [&[isize]; N]) -> Plan<N> {
        let size = shape.iter().product();
        let mut s: Vec<usize> = Vec::with_capacity(shape.len());
        let mut st: [Vec<isize>; N] = std::array::from_fn(|_| Vec::with_capacity(shape.len()));
        for (d, &n) in shape.iter().enumerate() {
            if n == 1 {
                continue;
            }
            if let Some(&last_n) = s.last() {
                // Merge axis d into the previous one when the previous steps over exactly this one.
                if (0..N).all(|k| *st[k].last().expect("same length") == strides[k][d] * n as isize)
                {
                    let i = s.len() - 1;
                    s[i] = last_n * n;
                    for (k, v) in st.iter_mut().enumerate() {
                        v[i] = strides[k][d];
                    }
                    continue;
                }
            }
            s.push(n);
            for (k, v) in st.iter_mut().enumerate() {
                v.push(strides[k][d]);
            }
        }
        Plan {
            shape: s,
            strides: st,
            size,
        }
    }

    /// Number of elements visited.
    pub(crate) fn size(&self) -> usize {
        self.size
    }

    /// Calls `f(position, offsets, strides, len)` for each run of the innermost axis covering the
    /// row-major positions `start..end`; offsets and strides are per operand, in elements.
    #[inline]
    pub(crate) fn for_runs(
        &self,
        start: usize,
        end: usize,
        mut f: impl FnMut(usize, [isize; N], [isize; N], usize),
    ) {
        let end = end.min(self.size);
        if start >= end {
            return;
        }
        let nd = self.shape.len();
        if nd == 0 {
            f(0, [0; N], [0; N], 1);
            return;
        }
        let inner = self.shape[nd - 1];
        let istr: [isize; N] = std::array::from_fn(|k| self.strides[k][nd - 1]);
        let mut idx = vec![0usize; nd];
        let mut rem = start;
        for d in (0..nd).rev() {
            idx[d] = rem % self.shape[d];
            rem /= self.shape[d];
        }
        let mut off = [0isize; N];
        for (k, o) in off.iter_mut().enumerate() {
            for (&i, &s) in idx.iter().zip(&self.strides[k]) {
                *o += i as isize * s;
            }
        }
        let mut pos = start;
        while pos < end {
            let len = (inner - idx[nd - 1]).min(end - pos);
            f(pos, off, istr, len);
            pos += len;
            if pos >= end {
                break;
            }
            // Step to the start of the next run.
            for k in 0..N {
                off[k] -= idx[nd - 1] as isize * istr[k];
            }
            idx[nd - 1] = 0;
            let mut d = nd - 1;
            while d > 0 {
                d -= 1;
                idx[d] += 1;
                for (k, o) in off.iter_mut().enumerate() {
                    *o += self.strides[k][d];
                }
                if idx[d] < self.shape[d] {
                    break;
                }
                for (k, o) in off.iter_mut().enumerate() {
                    *o -= self.shape[d] as isize * self.strides[k][d];
                }
                idx[d] = 0;
            }
        }
    }
}

/// Splits `0..n` into chunk ranges for rayon: `None` when the work should stay on this thread.
pub(crate) fn chunks(n: usize, grain: usize) -> Option<Vec<(usize, usize)>> {
    let threads = rayon::current_num_threads();
    if threads <= 1 || n < 2 * grain {
        return None;
    }
    let count = (n / grain).min(threads * 4).max(2);
    // Chunk starts on multiples of 64 elements keep contiguous runs aligned.
    let size = n.div_ceil(count).div_ceil(64) * 64;
    Some(
        (0..n.div_ceil(size))
            .map(|c| (c * size, ((c + 1) * size).min(n)))
            .collect(),
    )
}

/// Runs `plan` over every element, on all cores when large (and `parallel`).
pub(crate) fn par_runs<const N: usize>(
    plan: &Plan<N>,
    grain: usize,
    parallel: bool,
    f: impl Fn(usize, [isize; N], [isize; N], usize) + Sync + Send,
) {
    let n = plan.size();
    match chunks(n, grain).filter(|_| parallel) {
        None => plan.for_runs(0, n, &f),
        Some(ranges) => ranges
            .into_par_iter()
            .for_each(|(s, e)| plan.for_runs(s, e, &f)),
    }
}

multiversion! {
    /// `o[i] = f(a[i])` for `len` elements.
    pub(crate) unsafe fn contig1[A: Copy, O, F](a: *const A, o: *mut O, len: usize, f: F)
    where [F: Fn(A) -> O] {
        for i in 0..len {
            unsafe { *o.add(i) = f(*a.add(i)) };
        }
    }
}

multiversion! {
    /// `o[i] = f(a[i], b[i])` for `len` elements.
    pub(crate) unsafe fn contig2[A: Copy, B: Copy, O, F](a: *const A, b: *const B, o: *mut O, len: usize, f: F)
    where [F: Fn(A, B) -> O] {
        for i in 0..len {
            unsafe { *o.add(i) = f(*a.add(i), *b.add(i)) };
        }
    }
}

multiversion! {
    /// `o[i] = f(a[i], b)` for `len` elements.
    pub(crate) unsafe fn contig2_rs[A: Copy, B: Copy, O, F](a: *const A, b: B, o: *mut O, len: usize, f: F)
    where [F: Fn(A, B) -> O] {
        for i in 0..len {
            unsafe { *o.add(i) = f(*a.add(i), b) };
        }
    }
}

multiversion! {
    /// `o[i] = f(a, b[i])` for `len` elements.
    pub(crate) unsafe fn contig2_ls[A: Copy, B: Copy, O, F](a: A, b: *const B, o: *mut O, len: usize, f: F)
    where [F: Fn(A, B) -> O] {
        for i in 0..len {
            unsafe { *o.add(i) = f(a, *b.add(i)) };
        }
    }
}

multiversion! {
    /// `o[i] = f(a[i], b[i], c[i])` for `len` elements.
    pub(crate) unsafe fn contig3[A: Copy, B: Copy, C: Copy, O, F](a: *const A, b: *const B, c: *const C, o: *mut O, len: usize, f: F)
    where [F: Fn(A, B, C) -> O] {
        for i in 0..len {
            unsafe { *o.add(i) = f(*a.add(i), *b.add(i), *c.add(i)) };
        }
    }
}

/// `out = f(x)` elementwise over arrays of one shape (any layouts).
pub(crate) fn map1<A: Elem, O: Elem, F>(x: &Array, out: &Array, grain: usize, f: F) -> Result<()>
where
    F: Fn(A) -> O + Copy + Send + Sync,
{
    // SAFETY: contig1 reads and writes exactly `len` elements.
    map1_with(x, out, grain, f, |a, o, len| unsafe {
        contig1(a, o, len, f)
    })
}

/// As [`map1`], with `contig(src, dst, len)` doing contiguous runs (a slice-level kernel).
pub(crate) fn map1_with<A: Elem, O: Elem, F, K>(
    x: &Array,
    out: &Array,
    grain: usize,
    f: F,
    contig: K,
) -> Result<()>
where
    F: Fn(A) -> O + Copy + Send + Sync,
    K: Fn(*const A, *mut O, usize) + Copy + Send + Sync,
{
    let (px, po) = (elem_ptr::<A>(x)?, elem_ptr::<O>(out)?);
    let plan = Plan::new(out.shape(), [out.layout().strides(), x.layout().strides()]);
    par_runs(
        &plan,
        grain,
        writes_disjoint(out),
        |_, [oo, ox], [so, sx], len| {
            // SAFETY: offsets come from the arrays' layouts, which lie inside their buffers.
            unsafe {
                let o = po.get::<O>().offset(oo);
                let a = px.get::<A>().offset(ox);
                if so == 1 && sx == 1 {
                    contig(a, o, len);
                } else if so == 1 && sx == 0 {
                    let v = f(*a);
                    for i in 0..len {
                        *o.add(i) = v;
                    }
                } else {
                    for i in 0..len as isize {
                        *o.offset(i * so) = f(*a.offset(i * sx));
                    }
                }
            }
        },
    );
    Ok(())
}

/// `out = f(x, y)` elementwise over arrays of one shape (any layouts).
pub(crate) fn map2<A: Elem, B: Elem, O: Elem, F>(
    x: &Array,
    y: &Array,
    out: &Array,
    grain: usize,
    f: F,
) -> Result<()>
where
    F: Fn(A, B) -> O + Copy + Send + Sync,
{
    let (px, py, po) = (elem_ptr::<A>(x)?, elem_ptr::<B>(y)?, elem_ptr::<O>(out)?);
    let plan = Plan::new(
        out.shape(),
        [
            out.layout().strides(),
            x.layout().strides(),
            y.layout().strides(),
        ],
    );
    par_runs(
        &plan,
        grain,
        writes_disjoint(out),
        |_, [oo, ox, oy], [so, sx, sy], len| {
            // SAFETY: offsets come from the arrays' layouts, which lie inside their buffers.
            unsafe {
                let o = po.get::<O>().offset(oo);
                let a = px.get::<A>().offset(ox);
                let b = py.get::<B>().offset(oy);
                match (so, sx, sy) {
                    (1, 1, 1) => contig2(a, b, o, len, f),
                    (1, 1, 0) => contig2_rs(a, *b, o, len, f),
                    (1, 0, 1) => contig2_ls(*a, b, o, len, f),
                    _ => {
                        for i in 0..len as isize {
                            *o.offset(i * so) = f(*a.offset(i * sx), *b.offset(i * sy));
                        }
                    }
                }
            }
        },
    );
    Ok(())
}

/// `out = f(x, y, z)` elementwise over arrays of one shape (any layouts).
pub(crate) fn map3<A: Elem, B: Elem, C: Elem, O: Elem, F>(
    x: &Array,
    y: &Array,
    z: &Array,
    out: &Array,
    grain: usize,
    f: F,
) -> Result<()>
where
    F: Fn(A, B, C) -> O + Copy + Send + Sync,
{
    let (px, py, pz, po) = (
        elem_ptr::<A>(x)?,
        elem_ptr::<B>(y)?,
        elem_ptr::<C>(z)?,
        elem_ptr::<O>(out)?,
    );
    let plan = Plan::new(
        out.shape(),
        [
            out.layout().strides(),
            x.layout().strides(),
            y.layout().strides(),
            z.layout().strides(),
        ],
    );
    par_runs(
        &plan,
        grain,
        writes_disjoint(out),
        |_, [oo, ox, oy, oz], [so, sx, sy, sz], len| {
            // SAFETY: offsets come from the arrays' layouts, which lie inside their buffers.
            unsafe {
                let o = po.get::<O>().offset(oo);
                let a = px.get::<A>().offset(ox);
                let b = py.get::<B>().offset(oy);
                let c = pz.get::<C>().offset(oz);
                if (so, sx, sy, sz) == (1, 1, 1, 1) {
                    contig3(a, b, c, o, len, f);
                } else {
                    for i in 0..len as isize {
                        *o.offset(i * so) =
                            f(*a.offset(i * sx), *b.offset(i * sy), *c.offset(i * sz));
                    }
                }
            }
        },
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_merges_contiguous_axes() {
        let p = Plan::new(&[2, 3, 4], [&[12, 4, 1], &[12, 4, 1]]);
        assert_eq!(p.shape, vec![24]);
        let p = Plan::new(&[2, 1, 4], [&[4, 99, 1], &[0, 5, 1]]);
        assert_eq!(p.shape, vec![2, 4]);
        let p = Plan::<1>::new(&[], [&[]]);
        assert_eq!(p.size(), 1);
        let mut runs = vec![];
        p.for_runs(0, 1, |pos, o, s, n| runs.push((pos, o, s, n)));
        assert_eq!(runs, vec![(0, [0], [0], 1)]);
    }

    #[test]
    fn runs_cover_ranges_in_row_major_order() {
        // A reversed, transposed 3x4 view.
        let p = Plan::new(&[4, 3], [&[-1, 4]]);
        let mut seen = vec![];
        p.for_runs(0, 12, |pos, [o], [s], n| {
            for i in 0..n {
                seen.push((pos + i, o + i as isize * s));
            }
        });
        let expect: Vec<(usize, isize)> = (0..12)
            .map(|q| (q, -((q / 3) as isize) + 4 * (q % 3) as isize))
            .collect();
        assert_eq!(seen, expect);
        for start in 0..12 {
            for end in start..=12 {
                let mut part = vec![];
                p.for_runs(start, end, |pos, [o], [s], n| {
                    for i in 0..n {
                        part.push((pos + i, o + i as isize * s));
                    }
                });
                assert_eq!(part, expect[start..end].to_vec());
            }
        }
    }

    #[test]
    fn chunking() {
        assert!(chunks(10, GRAIN_CHEAP).is_none());
        if rayon::current_num_threads() > 1 {
            let c = chunks(10_000_001, GRAIN_CHEAP).unwrap();
            assert_eq!(c[0].0, 0);
            assert_eq!(c.last().unwrap().1, 10_000_001);
            assert!(c.windows(2).all(|w| w[0].1 == w[1].0));
        }
    }
}
