//! Reductions over any set of axes of any layout: sum and mean (pairwise, vectorised), prod,
//! min/max and argmin/argmax (NaN wins, first index on ties), all/any, var/std.

use rayon::prelude::*;

use super::element::{cast, dispatch, dispatch_all, Acc, Elem, B8};
use super::iter::{chunks, elem_ptr, multiversion, par_runs, Plan, GRAIN_CHEAP};
use crate::array::Array;
use crate::error::{Error, Result};
use crate::ops::ReduceOp;

/// One reduction: an accumulator folded over contiguous runs, combined in order, finished.
trait Reducer: Sync {
    type T: Elem;
    type Acc: Copy + Send;
    type Out: Elem;
    fn init(&self) -> Self::Acc;
    /// Folds the contiguous run `xs`, whose first element is at row-major position `pos` of
    /// the reduced axes.
    fn fold(&self, acc: Self::Acc, xs: &[Self::T], pos: usize) -> Self::Acc;
    /// Combines the accumulators of two consecutive ranges (`a` first).
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc;
    /// The result for `n` reduced elements.
    fn finish(&self, acc: Self::Acc, n: usize) -> Self::Out;
}

const LANES: usize = 32;

/// `f` folded over `xs` in `LANES` independent accumulators (so the loop vectorises), which
/// are then combined pairwise.
#[inline(always)]
fn lanes_fold<T: Copy, A: Copy>(
    xs: &[T],
    init: A,
    f: impl Fn(A, T) -> A,
    comb: impl Fn(A, A) -> A,
) -> A {
    let mut l = [init; LANES];
    let mut it = xs.chunks_exact(LANES);
    for c in &mut it {
        for i in 0..LANES {
            l[i] = f(l[i], c[i]);
        }
    }
    let mut tail = init;
    for &v in it.remainder() {
        tail = f(tail, v);
    }
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for i in 0..w {
            l[i] = comb(l[i], l[i + w]);
        }
    }
    comb(l[0], tail)
}

/// Pairwise sum of `xs` converted to `A`: blocks of 4096 summed in 32 lanes, block sums
/// combined as a balanced binary tree (error grows with log n, as NumPy's pairwise sum).
#[inline(always)]
fn pairwise_sum<T: Elem, A: Acc>(xs: &[T], conv: impl Fn(T) -> A + Copy) -> A {
    const BLOCK: usize = 4096;
    let mut stack = [(A::ZERO, 0u32); 48];
    let mut sp = 0;
    for b in xs.chunks(BLOCK) {
        let mut s = lanes_fold(b, A::ZERO, |a, v| a.acc_add(conv(v)), A::acc_add);
        let mut level = 0;
        while sp > 0 && stack[sp - 1].1 == level {
            sp -= 1;
            s = stack[sp].0.acc_add(s);
            level += 1;
        }
        stack[sp] = (s, level);
        sp += 1;
    }
    let mut t = A::ZERO;
    while sp > 0 {
        sp -= 1;
        t = stack[sp].0.acc_add(t);
    }
    t
}

/// True when `b` should replace `a` as the running max (`MAX`) or min; NaN replaces anything.
#[inline(always)]
fn better<T: Elem, const MAX: bool>(b: T, a: T) -> bool {
    if MAX {
        b > a
    } else {
        b < a
    }
}

/// `v` if it beats `m` or is NaN, else `m`: a NaN, once taken, is never replaced.
#[inline(always)]
fn pick<T: Elem, const MAX: bool>(m: T, v: T) -> T {
    if better::<T, MAX>(v, m) || v.is_nan_() {
        v
    } else {
        m
    }
}

/// The max (`MAX`) or min of the non-empty `xs`; a NaN if any element is NaN.
///
/// The hot loop is a plain max/min per lane (one `vmaxps`-like instruction, a short dependency
/// chain) plus, on a separate chain, a lane that keeps the last NaN seen; a compare-and-select
/// with NaN priority in one chain ran at half NumPy's speed.
#[inline(always)]
fn extreme<T: Elem, const MAX: bool>(xs: &[T]) -> T {
    // Twice the lanes of a sum: more independent chains to keep the units busy.
    const W: usize = 2 * LANES;
    let mut m = [xs[0]; W];
    // Holds a NaN once one is seen (xs[0] may itself be one).
    let mut nan = [xs[0]; W];
    let mut it = xs.chunks_exact(W);
    for c in &mut it {
        for i in 0..W {
            let v = c[i];
            m[i] = if better::<T, MAX>(v, m[i]) { v } else { m[i] };
            nan[i] = if v.is_nan_() { v } else { nan[i] };
        }
    }
    if let Some(&n) = nan.iter().find(|v| v.is_nan_()) {
        return n;
    }
    let mut best = m[0];
    for &v in m.iter().chain(it.remainder()) {
        best = pick::<T, MAX>(best, v);
    }
    best
}

struct SumR<T>(std::marker::PhantomData<T>);
impl<T: Elem> Reducer for SumR<T> {
    type T = T;
    type Acc = T::SumAcc;
    type Out = T::SumOut;
    #[inline(always)]
    fn init(&self) -> Self::Acc {
        <T::SumAcc as Acc>::ZERO
    }
    #[inline(always)]
    fn fold(&self, acc: Self::Acc, xs: &[T], _pos: usize) -> Self::Acc {
        acc.acc_add(pairwise_sum(xs, cast::<T, T::SumAcc>))
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a.acc_add(b)
    }
    fn finish(&self, acc: Self::Acc, _n: usize) -> Self::Out {
        cast(acc)
    }
}

struct ProdR<T>(std::marker::PhantomData<T>);
impl<T: Elem> Reducer for ProdR<T> {
    type T = T;
    type Acc = T::SumAcc;
    type Out = T::SumOut;
    #[inline(always)]
    fn init(&self) -> Self::Acc {
        <T::SumAcc as Acc>::ONE
    }
    #[inline(always)]
    fn fold(&self, acc: Self::Acc, xs: &[T], _pos: usize) -> Self::Acc {
        let p = lanes_fold(
            xs,
            <T::SumAcc as Acc>::ONE,
            |a, v| a.acc_mul(cast(v)),
            Acc::acc_mul,
        );
        acc.acc_mul(p)
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a.acc_mul(b)
    }
    fn finish(&self, acc: Self::Acc, _n: usize) -> Self::Out {
        cast(acc)
    }
}

struct MeanR<T>(std::marker::PhantomData<T>);
impl<T: Elem> Reducer for MeanR<T> {
    type T = T;
    type Acc = T::MeanAcc;
    type Out = T::MeanOut;
    #[inline(always)]
    fn init(&self) -> Self::Acc {
        <T::MeanAcc as Acc>::ZERO
    }
    #[inline(always)]
    fn fold(&self, acc: Self::Acc, xs: &[T], _pos: usize) -> Self::Acc {
        acc.acc_add(pairwise_sum(xs, cast::<T, T::MeanAcc>))
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        a.acc_add(b)
    }
    fn finish(&self, acc: Self::Acc, n: usize) -> Self::Out {
        let s: Self::Out = cast(acc);
        Self::Out::from_complex(s.to_f64() / n as f64, s.im_f64() / n as f64)
    }
}

/// Count, mean and sum of squared deviations (Chan et al.'s parallel combination).
#[derive(Copy, Clone)]
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
}

struct VarR<T> {
    correction: f64,
    sqrt: bool,
    _t: std::marker::PhantomData<T>,
}
impl<T: Elem> Reducer for VarR<T> {
    type T = T;
    type Acc = Moments;
    type Out = T::MeanOut;
    fn init(&self) -> Moments {
        Moments {
            n: 0.0,
            mean: 0.0,
            m2: 0.0,
        }
    }
    #[inline(always)]
    fn fold(&self, acc: Moments, xs: &[T], _pos: usize) -> Moments {
        if xs.is_empty() {
            return acc;
        }
        let n = xs.len() as f64;
        let mean = pairwise_sum(xs, |v: T| v.to_f64()) / n;
        let m2 = pairwise_sum(xs, |v: T| {
            let d = v.to_f64() - mean;
            d * d
        });
        self.combine(acc, Moments { n, mean, m2 })
    }
    fn combine(&self, a: Moments, b: Moments) -> Moments {
        if a.n == 0.0 {
            return b;
        }
        if b.n == 0.0 {
            return a;
        }
        let n = a.n + b.n;
        let d = b.mean - a.mean;
        Moments {
            n,
            mean: a.mean + d * (b.n / n),
            m2: a.m2 + b.m2 + d * d * (a.n * b.n / n),
        }
    }
    fn finish(&self, acc: Moments, n: usize) -> Self::Out {
        let var = acc.m2 / (n as f64 - self.correction).max(0.0);
        cast(if self.sqrt { var.sqrt() } else { var })
    }
}

struct ExtremeR<T, const MAX: bool>(std::marker::PhantomData<T>);
impl<T: Elem, const MAX: bool> Reducer for ExtremeR<T, MAX> {
    type T = T;
    type Acc = Option<T>;
    type Out = T;
    fn init(&self) -> Option<T> {
        None
    }
    #[inline(always)]
    fn fold(&self, acc: Option<T>, xs: &[T], _pos: usize) -> Option<T> {
        if xs.is_empty() {
            return acc;
        }
        self.combine(acc, Some(extreme::<T, MAX>(xs)))
    }
    fn combine(&self, a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(x), Some(y)) => {
                if x.is_nan_() {
                    Some(x)
                } else if y.is_nan_() || better::<T, MAX>(y, x) {
                    Some(y)
                } else {
                    Some(x)
                }
            }
            (x, None) => x,
            (None, y) => y,
        }
    }
    fn finish(&self, acc: Option<T>, _n: usize) -> T {
        acc.unwrap_or_default()
    }
}

struct ArgR<T, const MAX: bool>(std::marker::PhantomData<T>);
impl<T: Elem, const MAX: bool> Reducer for ArgR<T, MAX> {
    type T = T;
    type Acc = Option<(T, usize)>;
    type Out = i64;
    fn init(&self) -> Self::Acc {
        None
    }
    #[inline(always)]
    fn fold(&self, mut acc: Self::Acc, xs: &[T], pos: usize) -> Self::Acc {
        // The block's extreme in one vectorised pass; its position is searched only when the
        // block beats the running best (rarely, after the first blocks of unordered data).
        const BLOCK: usize = 4096;
        for (b, block) in xs.chunks(BLOCK).enumerate() {
            if let Some((best, _)) = acc {
                if best.is_nan_() {
                    break;
                }
            }
            let m = extreme::<T, MAX>(block);
            let replace = match acc {
                None => true,
                Some((best, _)) => m.is_nan_() || better::<T, MAX>(m, best),
            };
            if replace {
                acc = Some((m, pos + b * BLOCK + first_equal(block, m)));
            }
        }
        acc
    }
    fn combine(&self, a: Self::Acc, b: Self::Acc) -> Self::Acc {
        match (a, b) {
            (Some((x, i)), Some((y, j))) => {
                if x.is_nan_() {
                    a
                } else if y.is_nan_() || better::<T, MAX>(y, x) {
                    Some((y, j))
                } else {
                    Some((x, i))
                }
            }
            (x, None) => x,
            (None, y) => y,
        }
    }
    fn finish(&self, acc: Self::Acc, _n: usize) -> i64 {
        acc.map_or(0, |(_, i)| i as i64)
    }
}

/// The index of the first element of `xs` equal to `m` (the first NaN when `m` is NaN), 0 if
/// none. Runs of 64 are tested with a branch-free, vectorised OR first, so finding the position
/// costs a fraction of a scalar scan (it runs once per improving block of every chunk).
#[inline(always)]
fn first_equal<T: Elem>(xs: &[T], m: T) -> usize {
    let nan = m.is_nan_();
    let hit = |v: T| if nan { v.is_nan_() } else { v == m };
    for (r, run) in xs.chunks(64).enumerate() {
        if run.iter().fold(false, |a, &v| a | hit(v)) {
            return r * 64 + run.iter().position(|&v| hit(v)).unwrap_or(0);
        }
    }
    0
}

struct AllAnyR<T, const ALL: bool>(std::marker::PhantomData<T>);
impl<T: Elem, const ALL: bool> Reducer for AllAnyR<T, ALL> {
    type T = T;
    type Acc = bool;
    type Out = B8;
    fn init(&self) -> bool {
        ALL
    }
    #[inline(always)]
    fn fold(&self, acc: bool, xs: &[T], _pos: usize) -> bool {
        if ALL {
            acc && xs.iter().all(|v| v.nonzero())
        } else {
            acc || xs.iter().any(|v| v.nonzero())
        }
    }
    fn combine(&self, a: bool, b: bool) -> bool {
        if ALL {
            a && b
        } else {
            a || b
        }
    }
    fn finish(&self, acc: bool, _n: usize) -> B8 {
        B8::new(acc)
    }
}

struct CountR<T>(std::marker::PhantomData<T>);
impl<T: Elem> Reducer for CountR<T> {
    type T = T;
    type Acc = i64;
    type Out = i64;
    fn init(&self) -> i64 {
        0
    }
    #[inline(always)]
    fn fold(&self, acc: i64, xs: &[T], _pos: usize) -> i64 {
        // Counted in u32 lanes over blocks that cannot overflow them (vectorises), summed in i64.
        xs.chunks(1 << 20).fold(acc, |a, b| {
            a + lanes_fold(b, 0u32, |c, v| c + v.nonzero() as u32, |p, q| p + q) as i64
        })
    }
    fn combine(&self, a: i64, b: i64) -> i64 {
        a + b
    }
    fn finish(&self, acc: i64, _n: usize) -> i64 {
        acc
    }
}

multiversion! {
    /// `r.fold` over `len` contiguous elements at `p`.
    unsafe fn fold_contig[R: Reducer](r: &R, acc: R::Acc, p: *const R::T, len: usize, pos: usize) -> R::Acc
    where [] {
        r.fold(acc, unsafe { std::slice::from_raw_parts(p, len) }, pos)
    }
}

/// Folds a run of `len` elements at `p` with stride `s` (strided runs gathered in blocks).
///
/// # Safety
/// The run lies inside the array's buffer.
#[inline]
unsafe fn fold_run<R: Reducer>(
    r: &R,
    mut acc: R::Acc,
    p: *const R::T,
    s: isize,
    len: usize,
    pos: usize,
) -> R::Acc {
    if s == 1 {
        return unsafe { fold_contig(r, acc, p, len, pos) };
    }
    const BLOCK: usize = 256;
    let mut buf = [R::T::default(); BLOCK];
    let mut i = 0;
    while i < len {
        let n = BLOCK.min(len - i);
        for (k, b) in buf[..n].iter_mut().enumerate() {
            *b = unsafe { *p.offset((i + k) as isize * s) };
        }
        acc = unsafe { fold_contig(r, acc, buf.as_ptr(), n, pos + i) };
        i += n;
    }
    acc
}

fn run<R: Reducer>(r: &R, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    let (px, po) = (elem_ptr::<R::T>(x)?, elem_ptr::<R::Out>(out)?);
    let (xs, os) = (x.layout().strides(), out.layout().strides());
    let kept: Vec<usize> = (0..x.ndim()).filter(|d| !axes.contains(d)).collect();
    let kshape: Vec<usize> = kept.iter().map(|&d| x.shape()[d]).collect();
    let kxs: Vec<isize> = kept.iter().map(|&d| xs[d]).collect();
    let kos: Vec<isize> = kept.iter().map(|&d| os[d]).collect();
    let rshape: Vec<usize> = axes.iter().map(|&d| x.shape()[d]).collect();
    let rxs: Vec<isize> = axes.iter().map(|&d| xs[d]).collect();
    let outer = Plan::new(&kshape, [&kxs, &kos]);
    let inner = Plan::new(&rshape, [&rxs]);
    let n = inner.size();
    let reduce_range = |base: isize, s: usize, e: usize| -> R::Acc {
        let mut acc = r.init();
        inner.for_runs(s, e, |pos, [o], [st], len| {
            // SAFETY: offsets come from the array's layout.
            acc = unsafe { fold_run(r, acc, px.get::<R::T>().offset(base + o), st, len, pos) };
        });
        acc
    };
    let threads = rayon::current_num_threads();
    let split_inner = chunks(n, GRAIN_CHEAP).filter(|_| outer.size() < threads);
    match split_inner {
        Some(ranges) => {
            // Few outputs, long reductions: split each reduction over the cores.
            outer.for_runs(0, outer.size(), |_, [ox, oo], [sx, so], len| {
                for j in 0..len as isize {
                    let base = ox + j * sx;
                    let parts: Vec<R::Acc> = ranges
                        .par_iter()
                        .map(|&(s, e)| reduce_range(base, s, e))
                        .collect();
                    let acc = parts.into_iter().fold(r.init(), |a, b| r.combine(a, b));
                    // SAFETY: the output offset comes from its layout.
                    unsafe { *po.get::<R::Out>().offset(oo + j * so) = r.finish(acc, n) };
                }
            });
        }
        None => {
            let grain = (GRAIN_CHEAP / n.max(1)).max(1);
            par_runs(&outer, grain, true, |_, [ox, oo], [sx, so], len| {
                for j in 0..len as isize {
                    let acc = reduce_range(ox + j * sx, 0, n);
                    // SAFETY: the output (contiguous, fresh) is written once per position.
                    unsafe { *po.get::<R::Out>().offset(oo + j * so) = r.finish(acc, n) };
                }
            });
        }
    }
    Ok(())
}

/// Reduces `x` over `axes` (sorted) into `out` (shape of `x` with the axes set to 1).
pub(crate) fn reduce(op: ReduceOp, x: &Array, axes: &[usize], out: &Array) -> Result<()> {
    use std::marker::PhantomData as P;
    if out.ndim() != x.ndim() {
        return Err(Error::Shape(format!(
            "internal: reduction output of shape {:?} for input {:?}",
            out.shape(),
            x.shape()
        )));
    }
    if x.dtype().is_complex() {
        // The reductions the standard defines for complex numbers.
        return dispatch_all!(x.dtype(), T => match op {
            ReduceOp::Sum => run(&SumR::<T>(P), x, axes, out),
            ReduceOp::Prod => run(&ProdR::<T>(P), x, axes, out),
            ReduceOp::Mean => run(&MeanR::<T>(P), x, axes, out),
            ReduceOp::All => run(&AllAnyR::<T, true>(P), x, axes, out),
            ReduceOp::Any => run(&AllAnyR::<T, false>(P), x, axes, out),
            ReduceOp::CountNonzero => run(&CountR::<T>(P), x, axes, out),
            _ => Err(Error::UnsupportedDType {
                op: op.name(),
                dtype: x.dtype().to_string(),
            }),
        });
    }
    dispatch!(x.dtype(), T => match op {
        ReduceOp::Sum => run(&SumR::<T>(P), x, axes, out),
        ReduceOp::Prod => run(&ProdR::<T>(P), x, axes, out),
        ReduceOp::Mean => run(&MeanR::<T>(P), x, axes, out),
        ReduceOp::Var { correction } => run(
            &VarR::<T> { correction, sqrt: false, _t: P },
            x,
            axes,
            out,
        ),
        ReduceOp::Std { correction } => run(
            &VarR::<T> { correction, sqrt: true, _t: P },
            x,
            axes,
            out,
        ),
        ReduceOp::Min => run(&ExtremeR::<T, false>(P), x, axes, out),
        ReduceOp::Max => run(&ExtremeR::<T, true>(P), x, axes, out),
        ReduceOp::ArgMin => run(&ArgR::<T, false>(P), x, axes, out),
        ReduceOp::ArgMax => run(&ArgR::<T, true>(P), x, axes, out),
        ReduceOp::All => run(&AllAnyR::<T, true>(P), x, axes, out),
        ReduceOp::Any => run(&AllAnyR::<T, false>(P), x, axes, out),
        ReduceOp::CountNonzero => run(&CountR::<T>(P), x, axes, out),
    })
}

#[cfg(test)]
mod tests {
    use crate::dtype::DType;
    use crate::layout::IndexItem;
    use crate::ops::{reduce, ReduceOp};
    use crate::{Array, Device};
    use half::f16;

    fn rng_vec(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    fn f64s(a: &Array) -> Vec<f64> {
        a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
    }

    #[test]
    fn float32_sum_is_accurate() {
        let n = 10_000_000;
        let v: Vec<f32> = rng_vec(n, 7).iter().map(|&x| x as f32).collect();
        let exact: f64 = v.iter().map(|&x| x as f64).sum();
        let a = Array::from_vec(v, &[n], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &a, None, false).unwrap();
        assert_eq!(s.dtype(), DType::Float32);
        let got = s.to_vec::<f32>().unwrap()[0] as f64;
        assert!(((got - exact) / exact).abs() < 1e-6, "{got} vs {exact}");
        let m = reduce(ReduceOp::Mean, &a, None, false)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()[0];
        assert!(((m as f64 - exact / n as f64) / (exact / n as f64)).abs() < 1e-6);
    }

    #[test]
    fn axes_layouts_and_keepdims() {
        let v: Vec<f64> = (0..24).map(|i| i as f64).collect();
        let a = Array::from_vec(v, &[2, 3, 4], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &a, Some(&[1]), false).unwrap();
        assert_eq!(s.shape(), &[2, 4]);
        assert_eq!(f64s(&s), vec![12., 15., 18., 21., 48., 51., 54., 57.]);
        let s = reduce(ReduceOp::Sum, &a, Some(&[0, 2]), true).unwrap();
        assert_eq!(s.shape(), &[1, 3, 1]);
        assert_eq!(f64s(&s), vec![60., 92., 124.]);
        let t = a.permute(&[2, 0, 1]).unwrap();
        let s = reduce(ReduceOp::Max, &t, Some(&[-1]), false).unwrap();
        assert_eq!(s.shape(), &[4, 2]);
        assert_eq!(f64s(&s), vec![8., 20., 9., 21., 10., 22., 11., 23.]);
        let r = a
            .index(&[
                IndexItem::Ellipsis,
                IndexItem::Slice {
                    start: None,
                    stop: None,
                    step: Some(-1),
                },
            ])
            .unwrap();
        let am = reduce(ReduceOp::ArgMax, &r, Some(&[2]), false).unwrap();
        assert_eq!(am.to_vec::<i64>().unwrap(), vec![0; 6]);
        let am = reduce(ReduceOp::ArgMin, &r, None, false).unwrap();
        assert_eq!(am.to_vec::<i64>().unwrap(), vec![3]);
        let p = reduce(ReduceOp::Prod, &a, Some(&[2]), false).unwrap();
        assert_eq!(f64s(&p)[0], 0.0);
        assert_eq!(f64s(&p)[1], 4. * 5. * 6. * 7.);
        let var = reduce(ReduceOp::Var { correction: 1.0 }, &a, Some(&[2]), false).unwrap();
        assert!(f64s(&var).iter().all(|&x| (x - 5.0 / 3.0).abs() < 1e-12));
        let sd = reduce(ReduceOp::Std { correction: 0.0 }, &a, None, false).unwrap();
        assert!((f64s(&sd)[0] - (575.0f64 / 12.0).sqrt()).abs() < 1e-12);
        // Zero-d input.
        let z = Array::from_vec(vec![3i16], &[], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &z, None, false).unwrap();
        assert_eq!(s.shape(), &[] as &[usize]);
        assert_eq!(s.to_vec::<i64>().unwrap(), vec![3]);
    }

    #[test]
    fn nan_ties_and_empty() {
        let nan = f32::NAN;
        let a = Array::from_vec(vec![1.0f32, 5.0, nan, 5.0, nan], &[5], Device::Cpu).unwrap();
        assert!(f64s(&reduce(ReduceOp::Max, &a, None, false).unwrap())[0].is_nan());
        assert!(f64s(&reduce(ReduceOp::Min, &a, None, false).unwrap())[0].is_nan());
        let am = |op, a: &Array| reduce(op, a, None, false).unwrap().to_vec::<i64>().unwrap()[0];
        assert_eq!(am(ReduceOp::ArgMax, &a), 2);
        assert_eq!(am(ReduceOp::ArgMin, &a), 2);
        let b = Array::from_vec(vec![1i8, 5, -3, 5, -3], &[5], Device::Cpu).unwrap();
        assert_eq!(am(ReduceOp::ArgMax, &b), 1);
        assert_eq!(am(ReduceOp::ArgMin, &b), 2);
        let e = Array::from_vec(Vec::<f32>::new(), &[0, 2], Device::Cpu).unwrap();
        assert_eq!(
            f64s(&reduce(ReduceOp::Sum, &e, None, false).unwrap()),
            vec![0.0]
        );
        assert_eq!(
            f64s(&reduce(ReduceOp::Prod, &e, Some(&[0]), false).unwrap()),
            vec![1.0, 1.0]
        );
        assert!(f64s(&reduce(ReduceOp::Mean, &e, None, false).unwrap())[0].is_nan());
        assert!(reduce(ReduceOp::Max, &e, None, false).is_err());
        let all = reduce(ReduceOp::All, &e, None, false)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert_eq!(all, vec![1]);
        let any = reduce(ReduceOp::Any, &a, None, false)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert_eq!(any, vec![1]);
        let zeros = Array::from_vec(vec![0.0f32, -0.0], &[2], Device::Cpu).unwrap();
        let any = reduce(ReduceOp::Any, &zeros, None, false)
            .unwrap()
            .to_bytes()
            .unwrap();
        assert_eq!(any, vec![0]);
        // A large argmax with the maximum late, through the parallel split.
        let n = 1_000_000;
        let mut v: Vec<f32> = rng_vec(n, 3).iter().map(|&x| x as f32).collect();
        v[777_777] = 2.0;
        v[888_888] = 2.0;
        let big = Array::from_vec(v.clone(), &[n], Device::Cpu).unwrap();
        assert_eq!(am(ReduceOp::ArgMax, &big), 777_777);
        v[900_000] = nan;
        let big = Array::from_vec(v, &[n], Device::Cpu).unwrap();
        assert_eq!(am(ReduceOp::ArgMax, &big), 900_000);
        assert_eq!(am(ReduceOp::ArgMin, &big), 900_000);
    }

    #[test]
    fn integer_and_small_float_dtypes() {
        let a = Array::from_vec(vec![100i8, 100, 100], &[3], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &a, None, false).unwrap();
        assert_eq!(s.dtype(), DType::Int64);
        assert_eq!(s.to_vec::<i64>().unwrap(), vec![300]);
        let p = reduce(ReduceOp::Prod, &a, None, false).unwrap();
        assert_eq!(p.to_vec::<i64>().unwrap(), vec![1_000_000]);
        let m = reduce(ReduceOp::Mean, &a, None, false).unwrap();
        assert_eq!(m.dtype(), DType::Float64);
        assert_eq!(m.to_vec::<f64>().unwrap(), vec![100.0]);
        let u = Array::from_vec(vec![u64::MAX, 2], &[2], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &u, None, false).unwrap();
        assert_eq!(s.to_vec::<u64>().unwrap(), vec![1]);
        let b = Array::from_bytes(&[1, 1, 0], &[3], DType::Bool, Device::Cpu).unwrap();
        assert_eq!(
            reduce(ReduceOp::Sum, &b, None, false)
                .unwrap()
                .to_vec::<i64>()
                .unwrap(),
            vec![2]
        );
        assert_eq!(
            reduce(ReduceOp::Max, &b, None, false)
                .unwrap()
                .to_bytes()
                .unwrap(),
            vec![1]
        );
        assert_eq!(
            reduce(ReduceOp::All, &b, None, false)
                .unwrap()
                .to_bytes()
                .unwrap(),
            vec![0]
        );
        let h: Vec<f16> = (0..4000).map(|_| f16::from_f32(1.0)).collect();
        let h = Array::from_vec(h, &[4000], Device::Cpu).unwrap();
        let s = reduce(ReduceOp::Sum, &h, None, false).unwrap();
        assert_eq!(s.dtype(), DType::Float16);
        assert_eq!(s.to_vec::<f16>().unwrap(), vec![f16::from_f32(4000.0)]);
        // Many outputs: reduce a (300, 1000) int32 matrix along axis 0 and 1.
        let v: Vec<i32> = (0..300_000).map(|i| (i % 7) - 3).collect();
        let m = Array::from_vec(v.clone(), &[300, 1000], Device::Cpu).unwrap();
        let s0 = reduce(ReduceOp::Sum, &m, Some(&[0]), false)
            .unwrap()
            .to_vec::<i64>()
            .unwrap();
        let s1 = reduce(ReduceOp::Sum, &m, Some(&[1]), false)
            .unwrap()
            .to_vec::<i64>()
            .unwrap();
        for (j, &got) in s0.iter().enumerate() {
            assert_eq!(got, (0..300).map(|i| v[i * 1000 + j] as i64).sum::<i64>());
        }
        for (i, &got) in s1.iter().enumerate() {
            assert_eq!(
                got,
                v[i * 1000..(i + 1) * 1000]
                    .iter()
                    .map(|&x| x as i64)
                    .sum::<i64>()
            );
        }
    }
}
