//! The GPU ops backend (`ops::gpu`, kernels from `kernels/*.metal`) against the native CPU ops.
//!
//! Without a GPU the GPU backend runs on the CPU kernel engine (the MSL kernels translated to
//! C++): every op, every dtype, contiguous, strided, negative-stride, broadcast and empty inputs,
//! NaN and infinities, on fresh random data. With `INGOT_TEST_CUDA=1` the same cases run on
//! `cuda:0` through the normal ops API (skipped with a printed reason otherwise).

use ingot::ops::{self, gpu, BinaryOp, ReduceOp, UnaryOp};
use ingot::{Array, DType, Device, Error, IndexItem, Scalar};

// ---- harness -----------------------------------------------------------------------------------

struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    /// Uniform in [lo, hi).
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Random data of `dtype` (floats in [-4, 4) with some NaN and infinities when `special`).
fn random(rng: &mut Rng, shape: &[usize], dtype: DType, special: bool) -> Array {
    let n: usize = shape.iter().product();
    let vals: Vec<f64> = (0..n)
        .map(|i| {
            if dtype.is_float() {
                if special && i % 17 == 3 {
                    [f64::NAN, f64::INFINITY, f64::NEG_INFINITY][(i / 17) % 3]
                } else {
                    rng.uniform(-4.0, 4.0)
                }
            } else if dtype == DType::Bool {
                (rng.next() % 2) as f64
            } else {
                let (lo, hi) = match dtype {
                    DType::Int8 | DType::Int16 | DType::Int32 | DType::Int64 => (-100.0, 100.0),
                    _ => (0.0, 200.0),
                };
                rng.uniform(lo, hi).floor()
            }
        })
        .collect();
    let a = Array::from_vec(vals, shape, Device::Cpu).unwrap();
    a.astype(dtype).unwrap()
}

/// Full-range integers (wrapping, shifts, casts).
fn random_bits(rng: &mut Rng, shape: &[usize], dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = (0..n * 8).map(|_| rng.next() as u8).collect();
    let a = Array::from_bytes(&bytes, &[n], DType::UInt64, Device::Cpu).unwrap();
    a.reshape(&shape.iter().map(|&s| s as isize).collect::<Vec<_>>())
        .unwrap()
        .astype(dtype)
        .unwrap()
}

fn cuda() -> Option<Device> {
    if std::env::var("INGOT_TEST_CUDA").ok().as_deref() == Some("1") {
        Some(Device::Cuda(0))
    } else {
        None
    }
}

fn note_cuda_skip() {
    if cuda().is_none() {
        eprintln!("gpu_ops: cuda:0 cases skipped (set INGOT_TEST_CUDA=1 on a machine with a GPU)");
    }
}

fn setup() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ingot-cache");
    if std::env::var_os("INGOT_CACHE_DIR").is_none() {
        std::env::set_var("INGOT_CACHE_DIR", dir);
    }
}

/// The native result, or `None` when the CPU backend does not implement it yet.
fn native<T>(r: ingot::Result<T>) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(Error::Unsupported(m)) => {
            eprintln!("gpu_ops: native reference unavailable ({m}); case skipped");
            None
        }
        Err(e) => panic!("native op failed: {e}"),
    }
}

/// Compares two CPU arrays: exact for integers and bool, within `rtol` (relative to
/// max(|expected|, scale)) for floats; NaN equals NaN.
fn assert_close(what: &str, got: &Array, want: &Array, rtol: f64, scale: f64) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    if want.dtype().is_float() {
        let g = got.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        let w = want
            .astype(DType::Float64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        for (i, (a, b)) in g.iter().zip(&w).enumerate() {
            let ok =
                (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= rtol * b.abs().max(scale);
            assert!(ok, "{what}: element {i}: got {a}, want {b}");
        }
    } else {
        let g = got.to_bytes().unwrap();
        let w = want.to_bytes().unwrap();
        if g != w {
            let gi = got.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
            let wi = want
                .astype(DType::Float64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            let i = gi.iter().zip(&wi).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{what}: element {i}: got {:?}, want {:?}",
                gi.get(i),
                wi.get(i)
            );
        }
    }
}

fn tol(d: DType) -> f64 {
    match d {
        DType::Float16 => 2e-3,
        DType::BFloat16 => 1.6e-2,
        DType::Float32 => 2e-6,
        _ => 1e-12,
    }
}

/// Layout variants of a 2-D array of shape `[r, c]` made from `base` data of shape `[c, r]`
/// or `[r, c]`: (name, view).
fn views(rng: &mut Rng, dtype: DType, special: bool) -> Vec<(&'static str, Array)> {
    let s = |a: Option<isize>, b: Option<isize>, c: Option<isize>| IndexItem::Slice {
        start: a,
        stop: b,
        step: c,
    };
    let contig = random(rng, &[7, 37], dtype, special);
    let t = random(rng, &[37, 7], dtype, special).t();
    let neg = random(rng, &[14, 40], dtype, special)
        .index(&[s(None, None, Some(-2)), s(Some(38), Some(1), Some(-1))])
        .unwrap();
    let empty = random(rng, &[0, 37], dtype, special);
    vec![
        ("contiguous", contig),
        ("transposed", t),
        ("negative strides", neg),
        ("empty", empty),
    ]
}

// ---- copy / astype / fill ------------------------------------------------------------------------

fn gpu_copy(src: &Array, dst_dtype: DType) -> Array {
    match cuda() {
        Some(d) => src
            .to_device(d)
            .unwrap()
            .astype(dst_dtype)
            .unwrap()
            .to_device(Device::Cpu)
            .unwrap(),
        None => {
            let out = Array::empty(src.shape(), dst_dtype, Device::Cpu).unwrap();
            gpu::copy_cast(src, &out).unwrap();
            out
        }
    }
}

#[test]
fn astype_every_dtype_pair_and_layout() {
    setup();
    note_cuda_skip();
    let mut rng = Rng::new(1);
    for &s in &DType::ALL {
        for (name, v) in views(&mut rng, s, true) {
            for &d in &DType::ALL {
                let want = v.astype(d).unwrap();
                let got = gpu_copy(&v, d);
                assert_close(&format!("astype {s}->{d} {name}"), &got, &want, 0.0, 0.0);
            }
        }
        // Full-range integers: wrapping conversions.
        if s.is_integer() {
            let v = random_bits(&mut rng, &[301], s);
            for &d in &DType::ALL {
                let want = v.astype(d).unwrap();
                let got = gpu_copy(&v, d);
                assert_close(&format!("astype bits {s}->{d}"), &got, &want, 0.0, 0.0);
            }
        }
    }
}

/// Copies of transposed views long enough for the tiled transpose kernel: edges that are not
/// multiples of the tile, a batch axis on either side, negative strides, offsets, conversions.
#[test]
fn transposed_copies_through_tiles() {
    setup();
    note_cuda_skip();
    let mut rng = Rng::new(11);
    let s = |a: Option<isize>, b: Option<isize>, c: Option<isize>| IndexItem::Slice {
        start: a,
        stop: b,
        step: c,
    };
    let pairs = [
        (DType::Float32, DType::Float32),
        (DType::Float64, DType::Float16),
        (DType::Int16, DType::Float32),
        (DType::Bool, DType::Bool),
        (DType::UInt8, DType::Int64),
        (DType::BFloat16, DType::Float32),
        (DType::Float16, DType::Float16),
    ];
    for (from, to) in pairs {
        let cases = [
            ("2-D", random(&mut rng, &[70, 45], from, true).t()),
            (
                "batch outside",
                random(&mut rng, &[3, 40, 50], from, true)
                    .permute(&[0, 2, 1])
                    .unwrap(),
            ),
            (
                "batch between",
                random(&mut rng, &[3, 40, 50], from, true)
                    .permute(&[2, 0, 1])
                    .unwrap(),
            ),
            (
                "reversed rows",
                random(&mut rng, &[70, 45], from, true)
                    .index(&[s(None, None, Some(-1))])
                    .unwrap()
                    .t(),
            ),
            (
                "offset slice",
                random(&mut rng, &[80, 60], from, true)
                    .index(&[s(Some(3), Some(70), None), s(Some(5), Some(55), None)])
                    .unwrap()
                    .t(),
            ),
            // Full 64x64 tiles: element pairs per access (even strides and starts)...
            ("full tiles", random(&mut rng, &[150, 130], from, true).t()),
            // ...and one element at a time (odd stride; odd start).
            (
                "full tiles, odd stride",
                random(&mut rng, &[150, 131], from, true).t(),
            ),
            (
                "full tiles, odd start",
                random(&mut rng, &[150, 132], from, true)
                    .index(&[s(None, None, None), s(Some(1), None, None)])
                    .unwrap()
                    .t(),
            ),
        ];
        for (name, v) in cases {
            let want = v.astype(to).unwrap();
            let got = gpu_copy(&v, to);
            assert_close(
                &format!("transpose {from}->{to} {name}"),
                &got,
                &want,
                0.0,
                0.0,
            );
        }
    }
}

#[test]
fn float_to_int_out_of_range_and_rounding() {
    setup();
    let vals = vec![
        f64::NAN,
        f64::INFINITY,
        -f64::INFINITY,
        1e30,
        -1e30,
        3e9,
        -3e9,
        2.5,
        -2.5,
        300.7,
        -300.7,
        65504.0,
        1.0e-8,
        70000.0,
        0.1,
        1.0 + f64::EPSILON,
    ];
    let a = Array::from_vec(vals, &[16], Device::Cpu).unwrap();
    for &src in &[
        DType::Float64,
        DType::Float32,
        DType::Float16,
        DType::BFloat16,
    ] {
        let v = a.astype(src).unwrap();
        for &d in &DType::ALL {
            let want = v.astype(d).unwrap();
            let got = gpu_copy(&v, d);
            assert_close(&format!("astype {src}->{d}"), &got, &want, 0.0, 0.0);
        }
    }
}

#[test]
fn copies_into_strided_broadcast_and_overlapping_destinations() {
    setup();
    let mut rng = Rng::new(2);
    for &d in &[DType::Float32, DType::Int16, DType::Bool, DType::Float64] {
        // Broadcast row into a transposed destination.
        let row = random(&mut rng, &[1, 9], d, false);
        let want = Array::empty(&[9, 6], d, Device::Cpu).unwrap().t();
        want.assign(&row).unwrap();
        let got_base = Array::empty(&[9, 6], d, Device::Cpu).unwrap();
        let got = got_base.t();
        let src = row.broadcast_to(got.shape()).unwrap();
        match cuda() {
            Some(dev) => {
                let g = got_base.to_device(dev).unwrap();
                g.t().assign(&row.to_device(dev).unwrap()).unwrap();
                let back = g.to_device(Device::Cpu).unwrap();
                assert_close("broadcast into transposed", &back.t(), &want, 0.0, 0.0);
            }
            None => {
                gpu::copy_cast(&src, &got).unwrap();
                assert_close("broadcast into transposed", &got, &want, 0.0, 0.0);
            }
        }
        // Fill with a scalar.
        let s = Array::scalar(Scalar::Int(1), d, Device::Cpu).unwrap();
        let out = Array::empty(&[1001], d, Device::Cpu).unwrap();
        gpu::copy_cast(&s.broadcast_to(&[1001]).unwrap(), &out).unwrap();
        let want = Array::empty(&[1001], d, Device::Cpu).unwrap();
        want.fill(Scalar::Int(1)).unwrap();
        assert_close("fill", &out, &want, 0.0, 0.0);
        // Overlapping: a[1:] = a[:-1].
        let a = random(&mut rng, &[100], d, false);
        let b = a.copy().unwrap();
        let sl = |x: Option<isize>, y: Option<isize>| IndexItem::Slice {
            start: x,
            stop: y,
            step: None,
        };
        b.index(&[sl(Some(1), None)])
            .unwrap()
            .assign(&b.index(&[sl(None, Some(-1))]).unwrap())
            .unwrap();
        let src = a.index(&[sl(None, Some(-1))]).unwrap();
        gpu::copy_cast(&src, &a.index(&[sl(Some(1), None)]).unwrap()).unwrap();
        assert_close("overlapping copy", &a, &b, 0.0, 0.0);
    }
}

#[test]
fn affine_fills_every_dtype() {
    setup();
    for &d in &DType::ALL {
        for &(start, step, n) in &[(0.0, 1.0, 1000usize), (-3.5, 0.25, 77), (100.0, -7.0, 13)] {
            let want = Array::empty(&[n], d, Device::Cpu).unwrap();
            let got = match cuda() {
                Some(dev) => ops::arange(start, start + step * n as f64, step, d, dev)
                    .unwrap()
                    .to_device(Device::Cpu)
                    .unwrap(),
                None => {
                    let o = Array::empty(&[n], d, Device::Cpu).unwrap();
                    gpu::affine_fill(&o, start, step).unwrap();
                    o
                }
            };
            let want =
                ops::arange(start, start + step * n as f64, step, d, Device::Cpu).unwrap_or(want);
            assert_close(&format!("arange {d}"), &got, &want, 0.0, 0.0);
        }
    }
}

// ---- elementwise ---------------------------------------------------------------------------------

fn gpu_unary(op: UnaryOp, x: &Array) -> Array {
    match cuda() {
        Some(d) => ops::unary(op, &x.to_device(d).unwrap())
            .unwrap()
            .to_device(Device::Cpu)
            .unwrap(),
        None => {
            let (c, r) = op.dtypes(x.dtype()).unwrap();
            let input = if x.dtype() == c {
                x.clone()
            } else {
                x.astype(c).unwrap()
            };
            let out = Array::empty(x.shape(), r, Device::Cpu).unwrap();
            gpu::unary(op, &input, &out).unwrap();
            out
        }
    }
}

#[test]
fn unary_every_op_dtype_and_layout() {
    setup();
    let mut rng = Rng::new(3);
    for &d in &DType::ALL {
        let vs = views(&mut rng, d, true);
        for op in UnaryOp::ALL {
            if op.dtypes(d).is_err() {
                continue;
            }
            for (name, v) in &vs {
                let Some(want) = native(ops::unary(op, v)) else {
                    return;
                };
                let got = gpu_unary(op, v);
                let rt = match op {
                    UnaryOp::Abs | UnaryOp::Negative | UnaryOp::Positive | UnaryOp::Sign => 0.0,
                    _ => tol(want.dtype()) * 4.0,
                };
                assert_close(&format!("{} {d} {name}", op.name()), &got, &want, rt, 1e-30);
            }
        }
    }
}

fn gpu_binary(op: BinaryOp, a: &Array, b: &Array) -> Array {
    match cuda() {
        Some(d) => ops::binary(op, &a.to_device(d).unwrap(), &b.to_device(d).unwrap())
            .unwrap()
            .to_device(Device::Cpu)
            .unwrap(),
        None => {
            let (c, r) = op.dtypes(a.dtype(), b.dtype()).unwrap();
            let shape = ingot::layout::broadcast_shapes(&[a.shape(), b.shape()]).unwrap();
            let conv = |x: &Array| {
                let x = if x.dtype() == c {
                    x.clone()
                } else {
                    x.astype(c).unwrap()
                };
                x.broadcast_to(&shape).unwrap()
            };
            let out = Array::empty(&shape, r, Device::Cpu).unwrap();
            gpu::binary(op, &conv(a), &conv(b), &out).unwrap();
            out
        }
    }
}

#[test]
fn binary_every_op_dtype_layout_and_broadcast() {
    setup();
    let mut rng = Rng::new(4);
    for &d in &DType::ALL {
        let xs = views(&mut rng, d, true);
        let ys = views(&mut rng, d, true);
        let row = random(&mut rng, &[1, 37], d, true);
        let col = random(&mut rng, &[7, 1], d, true);
        let one = random(&mut rng, &[1], d, false);
        for op in BinaryOp::ALL {
            if op.dtypes(d, d).is_err() {
                continue;
            }
            let mut cases: Vec<(String, Array, Array)> = xs
                .iter()
                .zip(&ys)
                .map(|((n, x), (_, y))| (n.to_string(), x.clone(), y.clone()))
                .collect();
            cases.push(("row x col".into(), col.clone(), row.clone()));
            cases.push(("array, scalar".into(), xs[0].1.clone(), one.clone()));
            cases.push(("scalar, array".into(), one.clone(), xs[0].1.clone()));
            cases.push(("transposed, scalar".into(), xs[1].1.clone(), one.clone()));
            for (name, x, y) in &cases {
                // Integers to negative powers are an error (NumPy's ValueError).
                let y = &if op == BinaryOp::Pow && d.is_signed_integer() {
                    ops::unary(UnaryOp::Abs, y).unwrap()
                } else {
                    y.clone()
                };
                let Some(want) = native(ops::binary(op, x, y)) else {
                    return;
                };
                let got = gpu_binary(op, x, y);
                let rt = match op {
                    BinaryOp::Pow | BinaryOp::Atan2 => tol(want.dtype()) * 4.0,
                    _ => tol(want.dtype()),
                };
                assert_close(&format!("{} {d} {name}", op.name()), &got, &want, rt, 1e-30);
            }
        }
        // Full-range integers: wrapping, shifts, division.
        if d.is_integer() {
            let x = random_bits(&mut rng, &[257], d);
            let y = random_bits(&mut rng, &[257], d);
            let small = random(&mut rng, &[257], d, false);
            for op in BinaryOp::ALL {
                if op.dtypes(d, d).is_err() || op == BinaryOp::Pow {
                    continue;
                }
                for (name, b) in [("bits", &y), ("small", &small)] {
                    let Some(want) = native(ops::binary(op, &x, b)) else {
                        return;
                    };
                    let got = gpu_binary(op, &x, b);
                    // Float results (divide, atan2): the device's libm may differ by an ulp.
                    let rt = tol(want.dtype()) * 4.0;
                    assert_close(&format!("{} {d} {name}", op.name()), &got, &want, rt, 0.0);
                }
            }
        }
    }
}

/// Elementwise ops on operands transposed relative to the output and large enough to be copied
/// contiguous through the tiled transpose first (`untransposed`), next to contiguous, broadcast
/// and aliasing operands.
#[test]
fn elementwise_on_large_transposed_operands() {
    setup();
    note_cuda_skip();
    let mut rng = Rng::new(12);
    for d in [DType::Float32, DType::Int16, DType::Float64] {
        let a = random(&mut rng, &[300, 257], d, false);
        let at = random(&mut rng, &[257, 300], d, false).t();
        let bt = random(&mut rng, &[257, 300], d, false).t();
        let col = random(&mut rng, &[300, 1], d, false);
        for (name, x, y) in [
            ("x.T", &at, &a),
            ("y.T", &a, &at),
            ("both", &at, &bt),
            ("broadcast column", &col, &at),
        ] {
            for op in [BinaryOp::Add, BinaryOp::Multiply] {
                let want = ops::binary(op, x, y).unwrap();
                let got = gpu_binary(op, x, y);
                assert_close(&format!("{op:?} {d} {name}"), &got, &want, 0.0, 0.0);
            }
        }
        let want = ops::unary(UnaryOp::Negative, &at).unwrap();
        assert_close(
            &format!("negative {d} transposed"),
            &gpu_unary(UnaryOp::Negative, &at),
            &want,
            0.0,
            0.0,
        );
    }
    let x = random(&mut rng, &[257, 300], DType::Float32, false).t();
    let want = ops::unary(UnaryOp::Exp, &x).unwrap();
    assert_close(
        "exp transposed",
        &gpu_unary(UnaryOp::Exp, &x),
        &want,
        tol(DType::Float32),
        1.0,
    );
    // where with a transposed condition and values.
    let c = random(&mut rng, &[257, 300], DType::Bool, false).t();
    let (x, y) = (
        random(&mut rng, &[300, 257], DType::Float32, false),
        random(&mut rng, &[257, 300], DType::Float32, false).t(),
    );
    let want = ops::where_(&c, &x, &y).unwrap();
    let got = match cuda() {
        Some(dev) => ops::where_(
            &c.to_device(dev).unwrap(),
            &x.to_device(dev).unwrap(),
            &y.to_device(dev).unwrap(),
        )
        .unwrap()
        .to_device(Device::Cpu)
        .unwrap(),
        None => {
            let out = Array::empty(want.shape(), DType::Float32, Device::Cpu).unwrap();
            gpu::where_(&c, &x, &y, &out).unwrap();
            out
        }
    };
    assert_close("where transposed", &got, &want, 0.0, 0.0);
    // In place with the output's own transpose: a += a.T on the device.
    if let Some(dev) = cuda() {
        let a = random(&mut rng, &[300, 300], DType::Float32, false);
        let want = ops::binary(BinaryOp::Add, &a, &a.t()).unwrap();
        let g = a.to_device(dev).unwrap();
        ops::binary_into(BinaryOp::Add, &g, &g.t(), &g).unwrap();
        assert_close(
            "a += a.T",
            &g.to_device(Device::Cpu).unwrap(),
            &want,
            0.0,
            0.0,
        );
    }
}

#[test]
fn where_every_dtype_with_broadcasting() {
    setup();
    let mut rng = Rng::new(5);
    for &d in &DType::ALL {
        let c = random(&mut rng, &[7, 37], DType::Bool, false);
        let x = random(&mut rng, &[7, 37], d, true);
        let y = random(&mut rng, &[37, 7], d, true).t();
        let row = random(&mut rng, &[37], d, true);
        for (name, cc, a, b) in [
            ("contiguous", &c, &x, &x.copy().unwrap()),
            ("strided", &c, &x, &y),
            ("broadcast", &c, &row, &y),
        ] {
            let Some(want) = native(ops::where_(cc, a, b)) else {
                return;
            };
            let got = match cuda() {
                Some(dev) => ops::where_(
                    &cc.to_device(dev).unwrap(),
                    &a.to_device(dev).unwrap(),
                    &b.to_device(dev).unwrap(),
                )
                .unwrap()
                .to_device(Device::Cpu)
                .unwrap(),
                None => {
                    let out = Array::empty(want.shape(), d, Device::Cpu).unwrap();
                    let sh = want.shape().to_vec();
                    gpu::where_(
                        &cc.broadcast_to(&sh).unwrap(),
                        &a.broadcast_to(&sh).unwrap(),
                        &b.broadcast_to(&sh).unwrap(),
                        &out,
                    )
                    .unwrap();
                    out
                }
            };
            assert_close(&format!("where {d} {name}"), &got, &want, 0.0, 0.0);
        }
    }
}

// ---- reductions ----------------------------------------------------------------------------------

fn gpu_reduce(op: ReduceOp, x: &Array, axes: Option<&[isize]>) -> Array {
    match cuda() {
        Some(d) => ops::reduce(op, &x.to_device(d).unwrap(), axes, false)
            .unwrap()
            .to_device(Device::Cpu)
            .unwrap(),
        None => {
            let axes_n = ops::reduce::normalize_axes(axes, x.ndim()).unwrap();
            let kept: Vec<usize> = (0..x.ndim())
                .map(|i| if axes_n.contains(&i) { 1 } else { x.shape()[i] })
                .collect();
            let out =
                Array::empty(&kept, op.result_dtype(x.dtype()).unwrap(), Device::Cpu).unwrap();
            gpu::reduce(op, x, &axes_n, &out).unwrap();
            let ax: Vec<isize> = axes_n.iter().map(|&a| a as isize).collect();
            out.squeeze(Some(&ax)).unwrap()
        }
    }
}

fn reduce_ops() -> Vec<ReduceOp> {
    vec![
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::ArgMin,
        ReduceOp::ArgMax,
        ReduceOp::All,
        ReduceOp::Any,
        ReduceOp::CountNonzero,
        ReduceOp::Mean,
        ReduceOp::Var { correction: 0.0 },
        ReduceOp::Std { correction: 1.0 },
        // One pass (red_moments) for corrections 0 and 1, composed from sums otherwise.
        ReduceOp::Var { correction: 1.0 },
        ReduceOp::Std { correction: 0.0 },
        ReduceOp::Var { correction: 2.0 },
    ]
}

#[test]
fn reductions_every_op_dtype_and_axis() {
    setup();
    let mut rng = Rng::new(6);
    let s = |a: Option<isize>, b: Option<isize>, c: Option<isize>| IndexItem::Slice {
        start: a,
        stop: b,
        step: c,
    };
    for &d in &DType::ALL {
        let x3 = random(&mut rng, &[6, 33, 70], d, false);
        let xt = random(&mut rng, &[70, 33], d, false).t();
        let xneg = random(&mut rng, &[12, 90], d, true)
            .index(&[s(None, None, Some(-2)), s(None, None, Some(-1))])
            .unwrap();
        let big = random(&mut rng, &[20011], d, false);
        let big_nan = random(&mut rng, &[30000], d, true);
        let cols = random(&mut rng, &[300, 100], d, false);
        // Many rows, few columns: the rows are split into slices (two passes), NaN included.
        let tall = random(&mut rng, &[520, 24], d, true);
        let empty = random(&mut rng, &[4, 0], d, false);
        // Products near 1 so that they neither overflow nor vanish.
        let near1 = if d.is_float() {
            let v = random(&mut rng, &[6, 33, 70], DType::Float64, false);
            let w = ops::binary(
                BinaryOp::Add,
                &ops::binary(
                    BinaryOp::Multiply,
                    &v,
                    &Array::scalar(Scalar::Float(0.05), DType::Float64, Device::Cpu).unwrap(),
                )
                .unwrap_or(v.clone()),
                &Array::scalar(Scalar::Float(1.0), DType::Float64, Device::Cpu).unwrap(),
            )
            .unwrap_or(v);
            w.astype(d).unwrap()
        } else {
            x3.clone()
        };
        let cases: Vec<(&str, &Array, Option<Vec<isize>>)> = vec![
            ("3-d all", &x3, None),
            ("3-d last", &x3, Some(vec![2])),
            ("3-d first", &x3, Some(vec![0])),
            ("3-d middle", &x3, Some(vec![1])),
            ("3-d first+last", &x3, Some(vec![0, 2])),
            ("transposed last", &xt, Some(vec![1])),
            ("transposed first", &xt, Some(vec![0])),
            ("negative strides all", &xneg, None),
            ("negative strides last", &xneg, Some(vec![-1])),
            ("long 1-d", &big, None),
            ("long 1-d with NaN", &big_nan, None),
            ("columns", &cols, Some(vec![0])),
            ("tall columns", &tall, Some(vec![0])),
            ("rows", &cols, Some(vec![1])),
            ("empty axis", &empty, Some(vec![1])),
        ];
        for op in reduce_ops() {
            for (name, x, axes) in &cases {
                let x = if op == ReduceOp::Prod && *name == "3-d all" {
                    &near1
                } else {
                    *x
                };
                if op == ReduceOp::Prod
                    && d.is_float()
                    && x.size() > 100
                    && !std::ptr::eq(x, &near1)
                {
                    continue;
                }
                let axes_ref = axes.as_deref();
                let arg = matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax);
                if arg && axes.as_ref().is_some_and(|a| a.len() != 1) {
                    continue;
                }
                // Min, max and the arg ops of an empty axis are errors (no identity).
                let no_identity = matches!(op, ReduceOp::Min | ReduceOp::Max) || arg;
                if no_identity && x.size() == 0 {
                    continue;
                }
                let Some(want) = native(ops::reduce(op, x, axes_ref, false)) else {
                    return;
                };
                let got = gpu_reduce(op, x, axes_ref);
                let k = (x.size() / want.size().max(1)).max(1) as f64;
                let rt = match op {
                    ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Prod => tol(want.dtype()) * 8.0,
                    ReduceOp::Var { .. } | ReduceOp::Std { .. } => tol(want.dtype()) * 64.0,
                    _ => 0.0,
                };
                let scale = match op {
                    ReduceOp::Sum => k.sqrt(),
                    ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. } => 1.0,
                    _ => 1e-3,
                };
                let what = format!("{} {d} {name}", op.name());
                assert_close(&what, &got, &want, rt, scale);
            }
        }
    }
}

#[test]
fn cumsum_every_dtype_and_axis() {
    setup();
    let mut rng = Rng::new(7);
    for &d in &DType::ALL {
        let x = random(&mut rng, &[9, 41], d, false);
        let xt = random(&mut rng, &[41, 9], d, false).t();
        let long = random(&mut rng, &[50000], d, false);
        let lines = random(&mut rng, &[3, 20001], d, false);
        let lines_t = random(&mut rng, &[9000, 2], d, false).t();
        let columns = random(&mut rng, &[9000, 3], d, false);
        for (name, a, axis) in [
            ("axis 0", &x, Some(0)),
            ("axis 1", &x, Some(1)),
            ("transposed axis 1", &xt, Some(1)),
            ("flattened", &xt, None),
            ("long", &long, Some(0)),
            ("few long lines", &lines, Some(1)),
            ("few long transposed lines", &lines_t, Some(1)),
            ("few long strided lines", &columns, Some(0)),
        ] {
            let Some(want) = native(ops::cumsum(a, axis, None)) else {
                return;
            };
            let got = match cuda() {
                Some(dev) => ops::cumsum(&a.to_device(dev).unwrap(), axis, None)
                    .unwrap()
                    .to_device(Device::Cpu)
                    .unwrap(),
                None => {
                    let (src, ax) = match axis {
                        Some(ax) => (a.clone(), ax as usize),
                        None => (a.reshape(&[-1]).unwrap(), 0),
                    };
                    let r = ReduceOp::Sum.result_dtype(d).unwrap();
                    let src = src.astype(r).unwrap();
                    let out = Array::empty(src.shape(), r, Device::Cpu).unwrap();
                    gpu::cumsum(&src, ax, &out).unwrap();
                    out
                }
            };
            let n = a.size() as f64;
            // 16-bit running sums round at every step: a different order drifts further.
            let rt = if matches!(d, DType::Float16 | DType::BFloat16) && name.contains("long") {
                0.25
            } else {
                tol(want.dtype()) * 8.0
            };
            assert_close(
                &format!("cumsum {d} {name}"),
                &got,
                &want,
                rt,
                n.sqrt() * 4.0,
            );
        }
    }
}

/// A line long enough that its tile totals are themselves scanned in tiles (two levels).
#[test]
fn cumsum_two_level_tiles() {
    setup();
    note_cuda_skip();
    let mut rng = Rng::new(8);
    let n = 4096 * 4096 + 777;
    // int32 kept as int32 (16 elements per thread, wrapping sums compare exactly) and float64
    // (8 per thread).
    for d in [DType::Int32, DType::Float64] {
        let a = random(&mut rng, &[n], d, false);
        let want = ops::cumsum(&a, Some(0), Some(d)).unwrap();
        let got = match cuda() {
            Some(dev) => ops::cumsum(&a.to_device(dev).unwrap(), Some(0), Some(d))
                .unwrap()
                .to_device(Device::Cpu)
                .unwrap(),
            None => {
                let out = Array::empty(&[n], d, Device::Cpu).unwrap();
                gpu::cumsum(&a, 0, &out).unwrap();
                out
            }
        };
        assert_close(&format!("cumsum {d} two levels"), &got, &want, 1e-9, 1e4);
    }
}

/// Cumulative products (`gpu::scan` with `ScanOp::Prod`): every dtype, short and long lines (the
/// tiled three-pass path), integers exact (wrapping products are associative), floats near 1.
#[test]
fn cumprod_every_dtype_and_layout() {
    setup();
    note_cuda_skip();
    let mut rng = Rng::new(9);
    for &d in &DType::ALL {
        let near_one = |rng: &mut Rng, shape: &[usize]| {
            let n: usize = shape.iter().product();
            let v: Vec<f64> = (0..n)
                .map(|i| {
                    if d.is_float() {
                        if i % 97 == 5 {
                            f64::NAN
                        } else if d.size() == 2 {
                            // 16-bit floats round at every step: signs only, so any order agrees.
                            if rng.next().is_multiple_of(2) {
                                1.0
                            } else {
                                -1.0
                            }
                        } else {
                            rng.uniform(0.999, 1.001)
                        }
                    } else {
                        (rng.next() % 5) as f64 - if d.is_signed_integer() { 2.0 } else { 0.0 }
                    }
                })
                .collect();
            Array::from_vec(v, shape, Device::Cpu)
                .unwrap()
                .astype(d)
                .unwrap()
        };
        for (name, a, axis) in [
            ("rows", near_one(&mut rng, &[9, 41]), 1usize),
            ("columns", near_one(&mut rng, &[41, 9]), 0),
            ("long", near_one(&mut rng, &[30_001]), 0),
            ("few long lines", near_one(&mut rng, &[2, 20_001]), 1),
        ] {
            let r = ops::ScanOp::Prod.result_dtype(d).unwrap();
            let Some(want) = native(ops::cumulative(
                ops::ScanOp::Prod,
                &a,
                Some(axis as isize),
                None,
            )) else {
                return;
            };
            let got = match cuda() {
                Some(dev) => ops::cumulative(
                    ops::ScanOp::Prod,
                    &a.to_device(dev).unwrap(),
                    Some(axis as isize),
                    None,
                )
                .unwrap()
                .to_device(Device::Cpu)
                .unwrap(),
                None => {
                    let src = a.astype(r).unwrap();
                    let out = Array::empty(src.shape(), r, Device::Cpu).unwrap();
                    out.fill(Scalar::Int(77)).unwrap();
                    gpu::scan(ops::ScanOp::Prod, &src, axis, &out).unwrap();
                    out
                }
            };
            assert_close(&format!("cumprod {d} {name}"), &got, &want, 1e-4, 0.0);
        }
    }
}

// ---- benchmark (CUDA only) ---------------------------------------------------------------------

/// Bandwidth of the memory-bound ops on `cuda:0` against a device-to-device copy:
/// `INGOT_TEST_CUDA=1 cargo test -p ingot --release --test gpu_ops -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_cuda_bandwidth() {
    let Some(dev) = cuda() else {
        eprintln!("gpu_ops: benchmark skipped (set INGOT_TEST_CUDA=1 on a machine with a GPU)");
        return;
    };
    setup();
    let rt = dev.runtime().unwrap();
    let n = 1usize << 28;
    let x = ops::arange(0.0, n as f64, 1.0, DType::Float32, dev).unwrap();
    let x = ops::unary(UnaryOp::Sin, &x).unwrap();
    let y = ops::unary(UnaryOp::Cos, &x).unwrap();
    let c = ops::binary(BinaryOp::Greater, &x, &y).unwrap();
    let m = x.reshape(&[16384, 16384]).unwrap();
    let time = |f: &mut dyn FnMut()| -> f64 {
        f();
        rt.synchronize().unwrap();
        let reps = 10;
        let t = std::time::Instant::now();
        for _ in 0..reps {
            f();
        }
        rt.synchronize().unwrap();
        t.elapsed().as_secs_f64() / reps as f64
    };
    let bytes4 = (n * 4) as f64;
    let dst = Array::empty(&[n], DType::Float32, dev).unwrap();
    let t_copy = time(&mut || {
        rt.copy_within(x.buffer(), 0, dst.buffer(), 0, n * 4)
            .unwrap();
    });
    let copy_bw = 2.0 * bytes4 / t_copy;
    println!(
        "memcpy d2d: {:.3} ms, {:.0} GB/s",
        t_copy * 1e3,
        copy_bw / 1e9
    );
    let report = |name: &str, bytes: f64, f: &mut dyn FnMut()| {
        let t = time(f);
        let bw = bytes / t;
        println!(
            "{name:<28} {:>8.3} ms {:>7.0} GB/s  {:>5.1}% of copy",
            t * 1e3,
            bw / 1e9,
            100.0 * bw / copy_bw
        );
    };
    report("copy kernel f32", 2.0 * bytes4, &mut || {
        dst.assign(&x).unwrap();
    });
    report("add f32", 3.0 * bytes4, &mut || {
        ops::binary(BinaryOp::Add, &x, &y).unwrap();
    });
    report("multiply f32", 3.0 * bytes4, &mut || {
        ops::binary(BinaryOp::Multiply, &x, &y).unwrap();
    });
    let two = Array::scalar(Scalar::Float(2.0), DType::Float32, dev).unwrap();
    report("multiply f32 by scalar", 2.0 * bytes4, &mut || {
        ops::binary(BinaryOp::Multiply, &x, &two).unwrap();
    });
    report("exp f32", 2.0 * bytes4, &mut || {
        ops::unary(UnaryOp::Exp, &x).unwrap();
    });
    report("sin f32", 2.0 * bytes4, &mut || {
        ops::unary(UnaryOp::Sin, &x).unwrap();
    });
    report("where f32", 3.25 * bytes4, &mut || {
        ops::where_(&c, &x, &y).unwrap();
    });
    report("astype f32->f16", 1.5 * bytes4, &mut || {
        x.astype(DType::Float16).unwrap();
    });
    report("sum f32 (all)", bytes4, &mut || {
        ops::reduce(ReduceOp::Sum, &x, None, false).unwrap();
    });
    report("max f32 (all)", bytes4, &mut || {
        ops::reduce(ReduceOp::Max, &x, None, false).unwrap();
    });
    report("argmax f32 (all)", bytes4, &mut || {
        ops::reduce(ReduceOp::ArgMax, &x, None, false).unwrap();
    });
    report("sum rows 16384^2 (axis 1)", bytes4, &mut || {
        ops::reduce(ReduceOp::Sum, &m, Some(&[1]), false).unwrap();
    });
    report("sum cols 16384^2 (axis 0)", bytes4, &mut || {
        ops::reduce(ReduceOp::Sum, &m, Some(&[0]), false).unwrap();
    });
    report("transpose copy 16384^2", 2.0 * bytes4, &mut || {
        m.t().copy().unwrap();
    });
    report("cumsum f32 (1-d)", 2.0 * bytes4, &mut || {
        ops::cumsum(&x, Some(0), None).unwrap();
    });
}

/// Host-side latency of the launch paths, from Rust (no Python): where the microseconds of a
/// small op go. `INGOT_TEST_CUDA=1 cargo test -p ingot --test gpu_ops -- --ignored --nocapture latency`
#[test]
#[ignore]
fn bench_cuda_latency() {
    use ingot::kernel::{CompileOptions, Dispatch, KernelArg, Library};
    let Some(dev) = cuda() else {
        eprintln!("gpu_ops: benchmark skipped (set INGOT_TEST_CUDA=1 on a machine with a GPU)");
        return;
    };
    setup();
    let rt = dev.runtime().unwrap();
    let per = |f: &mut dyn FnMut()| -> f64 {
        for _ in 0..100 {
            f();
        }
        rt.synchronize().unwrap();
        let mut best = f64::MAX;
        for _ in 0..5 {
            let reps = 2000;
            let t = std::time::Instant::now();
            for _ in 0..reps {
                f();
            }
            rt.synchronize().unwrap();
            best = best.min(t.elapsed().as_secs_f64() / reps as f64);
        }
        best
    };
    let one = |v: f32| Array::from_vec(vec![v], &[1], dev).unwrap();
    let (a, b) = (one(1.0), one(2.0));
    let t_add = per(&mut || {
        ops::binary(BinaryOp::Add, &a, &b).unwrap();
    });
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        kernel void scale(device float *x [[buffer(0)]], constant float &s [[buffer(1)]],\n\
        uint i [[thread_position_in_grid]]) { x[i] = x[i] * s; }\n";
    let lib = Library::compile(src, dev, &CompileOptions::default()).unwrap();
    let k = lib.function("scale").unwrap();
    let xs = Array::from_vec(vec![1.0f32; 32], &[32], dev).unwrap();
    let args = [
        KernelArg::Array(xs.clone()),
        KernelArg::Scalar(Scalar::Float(1.0)),
    ];
    let d = Dispatch::threads(&[32]);
    let t_launch = per(&mut || k.launch(&args, &d).unwrap());
    // The same launch with a 368-byte struct parameter (the size of the strided kernels' Geom).
    let big_src = "#include <metal_stdlib>\nusing namespace metal;\n\
        struct Big { ulong v[46]; };\n\
        kernel void scale_big(device float *x [[buffer(0)]], constant Big &b [[buffer(1)]],\n\
        uint i [[thread_position_in_grid]]) { x[i] = x[i] * float(b.v[3]); }\n";
    let kb = Library::compile(big_src, dev, &CompileOptions::default())
        .unwrap()
        .function("scale_big")
        .unwrap();
    let mut big = vec![0u8; 368];
    big[24] = 1;
    let big_args = [KernelArg::Array(xs.clone()), KernelArg::Bytes(big)];
    let t_big = per(&mut || kb.launch(&big_args, &d).unwrap());
    let t_prepare = per(&mut || {
        k.prepare(&args, &d).unwrap();
    });
    // Host time only: launches queued without waiting (the queue holds far more than 300).
    let enqueue = |f: &mut dyn FnMut()| -> f64 {
        rt.synchronize().unwrap();
        let t = std::time::Instant::now();
        for _ in 0..300 {
            f();
        }
        let e = t.elapsed().as_secs_f64() / 300.0;
        rt.synchronize().unwrap();
        e
    };
    let q_add = enqueue(&mut || {
        ops::binary(BinaryOp::Add, &a, &b).unwrap();
    });
    let q_launch = enqueue(&mut || k.launch(&args, &d).unwrap());
    let empty = per(&mut || {
        Array::empty(&[1], DType::Float32, dev).unwrap();
    });
    let floor = raw_driver_floor();
    println!("1-element add (ops::binary)  {:>7.2} us", t_add * 1e6);
    println!("user kernel launch           {:>7.2} us", t_launch * 1e6);
    println!("  of which prepare (checks)  {:>7.2} us", t_prepare * 1e6);
    println!("  with a 368-byte parameter  {:>7.2} us", t_big * 1e6);
    println!("Array::empty(1)              {:>7.2} us", empty * 1e6);
    println!(
        "enqueue only: add {:.2} us, user kernel {:.2} us",
        q_add * 1e6,
        q_launch * 1e6
    );
    match floor {
        Ok(f) => println!(
            "raw cuLaunchKernel (same host, own stream): {:.2} us; with cuCtxSetCurrent {:.2} us; \
             cuCtxGetCurrent {:.3} us; enqueue only {:.2} us; on the legacy stream {:.2} us",
            f[0] * 1e6,
            f[1] * 1e6,
            f[2] * 1e6,
            f[3] * 1e6,
            f[4] * 1e6
        ),
        Err(e) => println!("raw driver floor unavailable: {e}"),
    }
}

/// The driver's own launch cost on this host, without ingot: a CUDA C kernel of the same shape
/// (one pointer, one float) launched with bare `cuLaunchKernel` in the same loop. Returns
/// [launch, launch with cuCtxSetCurrent before each, cuCtxGetCurrent alone, enqueue only,
/// launch on the legacy default stream].
fn raw_driver_floor() -> Result<[f64; 5], String> {
    use cudarc::driver::result;
    use std::ffi::{c_void, CString};
    let e = |e: &dyn std::fmt::Debug| format!("{e:?}");
    result::init().map_err(|x| e(&x))?;
    let dev = result::device::get(0).map_err(|x| e(&x))?;
    // SAFETY: the device came from `device::get`; everything below uses the retained primary
    // context (the one ingot uses), made current first; handles are used only while alive.
    unsafe {
        let ctx = result::primary_ctx::retain(dev).map_err(|x| e(&x))?;
        result::ctx::set_current(ctx).map_err(|x| e(&x))?;
        let ptx = cudarc::nvrtc::compile_ptx(
            "extern \"C\" __global__ void k(float* x, float s) { x[threadIdx.x] *= s; }",
        )
        .map_err(|x| e(&x))?;
        let image = CString::new(ptx.to_src()).map_err(|x| e(&x))?;
        let module =
            result::module::load_data(image.as_ptr() as *const c_void).map_err(|x| e(&x))?;
        let f =
            result::module::get_function(module, CString::new("k").unwrap()).map_err(|x| e(&x))?;
        let stream =
            result::stream::create(result::stream::StreamKind::NonBlocking).map_err(|x| e(&x))?;
        let buf = result::malloc_sync(128).map_err(|x| e(&x))?;
        let mut ptr = buf;
        let mut s = 1.0f32;
        let (pp, sp) = (
            &mut ptr as *mut u64 as *mut c_void,
            &mut s as *mut f32 as *mut c_void,
        );
        let launch_on = |st: cudarc::driver::sys::CUstream| {
            let mut params = [pp, sp];
            result::launch_kernel(f, (1, 1, 1), (32, 1, 1), 0, st, &mut params).unwrap();
        };
        let mut launch = || launch_on(stream);
        // The whole context, so that the legacy-stream variant below is waited for too.
        let sync = || result::ctx::synchronize().unwrap();
        let best = |with_ctx: bool, launch: &mut dyn FnMut()| {
            let mut best = f64::MAX;
            for round in 0..6 {
                let reps = 2000;
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    if with_ctx {
                        result::ctx::set_current(ctx).unwrap();
                    }
                    launch();
                }
                sync();
                if round > 0 {
                    best = best.min(t.elapsed().as_secs_f64() / reps as f64);
                }
            }
            best
        };
        let plain = best(false, &mut launch);
        let with_ctx = best(true, &mut launch);
        let mut launch_legacy = || launch_on(std::ptr::null_mut());
        let legacy = best(false, &mut launch_legacy);
        let t = std::time::Instant::now();
        for _ in 0..100_000 {
            std::hint::black_box(result::ctx::get_current().unwrap());
        }
        let get = t.elapsed().as_secs_f64() / 100_000.0;
        sync();
        let t = std::time::Instant::now();
        for _ in 0..300 {
            launch();
        }
        let enqueue = t.elapsed().as_secs_f64() / 300.0;
        sync();
        let _ = result::free_sync(buf);
        let _ = result::stream::destroy(stream);
        let _ = result::module::unload(module);
        Ok([plain, with_ctx, get, enqueue, legacy])
    }
}

/// The host cost of the GPU ops path without a GPU: `gpu::binary` of one element on the CPU
/// kernel engine, in a loop (for a profiler: `perf record` this test).
#[test]
#[ignore]
fn bench_gpu_path_host_cost() {
    setup();
    let one = |v: f32| Array::from_vec(vec![v], &[1], Device::Cpu).unwrap();
    let (a, b, out) = (one(1.0), one(2.0), one(0.0));
    gpu::binary(BinaryOp::Add, &a, &b, &out).unwrap();
    let reps = 100_000;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        gpu::binary(BinaryOp::Add, &a, &b, &out).unwrap();
    }
    println!(
        "gpu::binary, 1 element, CPU engine: {:.2} us",
        t.elapsed().as_secs_f64() / reps as f64 * 1e6
    );
}
