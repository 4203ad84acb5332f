//! Selections, searches and indexing with arrays (`nonzero`, `unique`, `searchsorted`, `isin`,
//! `take`, `take_along_axis`, `index_get`/`index_set`): the native CPU backend against
//! references computed here, and the GPU kernels (`select.metal`, `gather.metal`, run on the
//! CPU kernel engine through `ops::set_cpu_ops_through_kernels`) against the native backend.
//! With `INGOT_TEST_CUDA=1` the kernel side runs on `cuda:0` instead.

use std::sync::Mutex;

use ingot::ops::{self, IndexKey};
use ingot::{Array, DType, Device, IndexItem, Scalar};

/// The kernels-on-CPU switch is process-wide: tests that flip it take this lock.
static SWITCH: Mutex<()> = Mutex::new(());

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
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn setup() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ingot-cache");
    if std::env::var_os("INGOT_CACHE_DIR").is_none() {
        std::env::set_var("INGOT_CACHE_DIR", dir);
    }
}

fn cuda() -> Option<Device> {
    (std::env::var("INGOT_TEST_CUDA").ok().as_deref() == Some("1")).then_some(Device::Cuda(0))
}

/// Values from a small set (duplicates), with zeros, and NaN/inf/-0.0 for floats.
fn data(rng: &mut Rng, shape: &[usize], dtype: DType, spread: u64) -> Array {
    let n: usize = shape.iter().product();
    let vals: Vec<f64> = (0..n)
        .map(|_| {
            let r = rng.next();
            if dtype.is_float() && r.is_multiple_of(11) {
                [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0][(r >> 8) as usize % 5]
            } else if dtype == DType::Bool {
                (r % 2) as f64
            } else {
                let v = ((r >> 16) % spread) as f64;
                if dtype.is_signed_integer() || dtype.is_float() {
                    v - (spread / 2) as f64
                } else {
                    v
                }
            }
        })
        .collect();
    Array::from_vec(vals, shape, Device::Cpu)
        .unwrap()
        .astype(dtype)
        .unwrap()
}

/// `f` on the native backend and on the kernels (the CPU engine, or cuda:0), both results on
/// the host.
fn both<T>(f: impl Fn(Device) -> T, back: impl Fn(T) -> Vec<Array>) -> (Vec<Array>, Vec<Array>) {
    let _g = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
    ops::set_cpu_ops_through_kernels(false);
    let native = back(f(Device::Cpu));
    let kernels = match cuda() {
        Some(d) => back(f(d))
            .into_iter()
            .map(|a| a.to_device(Device::Cpu).unwrap())
            .collect(),
        None => {
            ops::set_cpu_ops_through_kernels(true);
            let r = back(f(Device::Cpu));
            ops::set_cpu_ops_through_kernels(false);
            r
        }
    };
    (native, kernels)
}

fn on(a: &Array, d: Device) -> Array {
    a.to_device(d).unwrap()
}

/// Byte equality of two arrays of one shape and dtype (NaN payloads compared as NaN).
fn same(what: &str, got: &Array, want: &Array) {
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
            assert!(
                (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits(),
                "{what}: element {i}: got {a}, want {b}"
            );
        }
    } else {
        assert_eq!(got.to_bytes().unwrap(), want.to_bytes().unwrap(), "{what}");
    }
}

fn f64s(a: &Array) -> Vec<f64> {
    a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap()
}

fn i64s(a: &Array) -> Vec<i64> {
    a.to_vec::<i64>().unwrap()
}

#[test]
fn nonzero_matches_reference_and_kernels() {
    setup();
    let mut rng = Rng::new(1);
    for &d in &DType::ALL {
        for shape in [
            vec![1usize],
            vec![0],
            vec![33],
            vec![4097],
            vec![3, 1500],
            vec![2, 3, 700],
        ] {
            let x = data(&mut rng, &shape, d, 3);
            let want: Vec<i64> = f64s(&x)
                .iter()
                .enumerate()
                .filter(|(_, v)| **v != 0.0)
                .map(|(i, _)| i as i64)
                .collect();
            let (n, k) = both(|dev| ops::flat_nonzero(&on(&x, dev)).unwrap(), |a| vec![a]);
            assert_eq!(i64s(&n[0]), want, "nonzero {d} {shape:?}");
            same(&format!("nonzero kernels {d} {shape:?}"), &k[0], &n[0]);
        }
    }
    let x = data(&mut rng, &[3, 5, 7], DType::Int16, 3);
    let coords = ops::nonzero(&x).unwrap();
    let flat = i64s(&ops::flat_nonzero(&x).unwrap());
    for (j, &p) in flat.iter().enumerate() {
        let p = p as usize;
        let c: Vec<i64> = coords.iter().map(|a| i64s(a)[j]).collect();
        assert_eq!(c, vec![(p / 35) as i64, (p / 7 % 5) as i64, (p % 7) as i64]);
    }
    assert!(
        ops::nonzero(&Array::scalar(Scalar::Int(1), DType::Int8, Device::Cpu).unwrap()).is_err()
    );
}

/// The reference `unique`: sorted distinct values (NaNs each distinct, -0 == 0), first
/// positions, inverse, counts.
fn unique_ref(v: &[f64]) -> (Vec<f64>, Vec<i64>, Vec<i64>, Vec<i64>) {
    let mut order: Vec<usize> = (0..v.len()).collect();
    let key = |x: f64| if x.is_nan() { (1, 0.0) } else { (0, x + 0.0) };
    order.sort_by(|&a, &b| key(v[a]).partial_cmp(&key(v[b])).unwrap());
    let (mut vals, mut first, mut counts) = (vec![], vec![], vec![]);
    let mut inv = vec![0i64; v.len()];
    for (p, &i) in order.iter().enumerate() {
        let new = p == 0 || v[i].is_nan() || key(v[i]) != key(v[order[p - 1]]);
        if new {
            vals.push(v[i] + 0.0);
            first.push(i as i64);
            counts.push(0);
        }
        *counts.last_mut().unwrap() += 1;
        inv[i] = vals.len() as i64 - 1;
    }
    (vals, first, inv, counts)
}

/// Every part of `unique(x)` (values, indices, inverse, counts): natively and through the kernels.
fn unique_parts(x: &Array) -> (Vec<Array>, Vec<Array>) {
    both(
        |dev| ops::unique(&on(x, dev), true, true, true).unwrap(),
        |u| {
            vec![
                u.values,
                u.indices.unwrap(),
                u.inverse.unwrap(),
                u.counts.unwrap(),
            ]
        },
    )
}

/// `parts` (as `unique_parts` gives them) against `unique_ref`.
fn check_unique(what: &str, x: &Array, parts: &[Array]) {
    let (vals, first, inv, counts) = unique_ref(&f64s(x));
    let got: Vec<f64> = f64s(&parts[0]).iter().map(|v| v + 0.0).collect();
    assert_eq!(got.len(), vals.len(), "{what}: count");
    for (a, b) in got.iter().zip(&vals) {
        assert!((a.is_nan() && b.is_nan()) || a == b, "{what}: {a} vs {b}");
    }
    assert_eq!(i64s(&parts[1]), first, "{what}: first positions");
    assert_eq!(parts[2].shape(), x.shape(), "{what}: inverse shape");
    assert_eq!(i64s(&parts[2]), inv, "{what}: inverse");
    assert_eq!(i64s(&parts[3]), counts, "{what}: counts");
}

#[test]
fn unique_matches_reference_and_kernels() {
    setup();
    let mut rng = Rng::new(2);
    for &d in &DType::ALL {
        for shape in [
            vec![1usize],
            vec![0],
            vec![100],
            vec![2049],
            vec![30, 300],
            vec![9001],
        ] {
            let spread = if shape.iter().product::<usize>() > 3000 {
                5000
            } else {
                40
            };
            let x = data(&mut rng, &shape, d, spread);
            let (n, k) = unique_parts(&x);
            let what = format!("unique {d} {shape:?}");
            check_unique(&what, &x, &n);
            for (i, name) in ["values", "indices", "inverse", "counts"]
                .iter()
                .enumerate()
            {
                same(&format!("{what} kernels {name}"), &k[i], &n[i]);
            }
            // Values alone (no permutation on the way).
            let (n1, k1) = both(
                |dev| ops::unique(&on(&x, dev), false, false, false).unwrap(),
                |u| vec![u.values],
            );
            assert_eq!(n1[0].size(), n[0].size(), "{what}: values only");
            same(&format!("{what} values only, kernels"), &k1[0], &n1[0]);
        }
    }
}

/// Many tiles (a one-pass compaction's look-back crosses windows of 32 tiles) with many and with
/// few distinct values, and values repeated over several whole tiles (tiles where no value
/// starts: counts completed across them); each part checked against the reference.
#[test]
fn unique_over_many_tiles() {
    setup();
    let mut rng = Rng::new(21);
    for (d, n, spread) in [
        (DType::Float32, 300_001usize, 1u64 << 40),
        (DType::Int64, 200_000, 700),
        (DType::UInt8, 150_000, 256),
        (DType::Int32, 100_003, 5),
    ] {
        let x = data(&mut rng, &[n], d, spread);
        let (_, k) = unique_parts(&x);
        check_unique(
            &format!("unique {d} [{n}] (spread {spread}), kernels"),
            &x,
            &k,
        );
    }
}

#[test]
fn searchsorted_and_isin_match_reference_and_kernels() {
    setup();
    let mut rng = Rng::new(3);
    for &d in &DType::ALL {
        for (m, n) in [(0usize, 5usize), (1, 7), (50, 300), (3000, 1000)] {
            let s = ops::sort(&data(&mut rng, &[m], d, 60), 0, false).unwrap();
            let v = data(&mut rng, &[n], d, 70);
            let (sv, vv) = (f64s(&s), f64s(&v));
            let lt = |a: f64, b: f64| if b.is_nan() { !a.is_nan() } else { a < b };
            for right in [false, true] {
                let want: Vec<i64> = vv
                    .iter()
                    .map(|&x| {
                        sv.iter()
                            .filter(|&&e| if right { !lt(x, e) } else { lt(e, x) })
                            .count() as i64
                    })
                    .collect();
                let (nat, ker) = both(
                    |dev| ops::searchsorted(&on(&s, dev), &on(&v, dev), right, None).unwrap(),
                    |a| vec![a],
                );
                assert_eq!(i64s(&nat[0]), want, "searchsorted {d} m={m} right={right}");
                same(&format!("searchsorted kernels {d} {m}"), &ker[0], &nat[0]);
            }
            let x2 = data(&mut rng, &[m], d, 60);
            let x2v = f64s(&x2);
            for invert in [false, true] {
                let want: Vec<u8> = vv
                    .iter()
                    .map(|&x| (x2v.contains(&x) != invert) as u8)
                    .collect();
                let (nat, ker) = both(
                    |dev| ops::isin(&on(&v, dev), &on(&x2, dev), invert).unwrap(),
                    |a| vec![a],
                );
                assert_eq!(nat[0].to_bytes().unwrap(), want, "isin {d} m={m}");
                same(&format!("isin kernels {d} {m}"), &ker[0], &nat[0]);
            }
        }
    }
    // A sorter, and promotion of an integer array with float values.
    let x = Array::from_vec(vec![30i64, 10, 20], &[3], Device::Cpu).unwrap();
    let sorter = Array::from_vec(vec![1i64, 2, 0], &[3], Device::Cpu).unwrap();
    let v = Array::from_vec(vec![15.5f64, 30.0, -1.0], &[3], Device::Cpu).unwrap();
    let (nat, ker) = both(
        |dev| ops::searchsorted(&on(&x, dev), &on(&v, dev), true, Some(&on(&sorter, dev))).unwrap(),
        |a| vec![a],
    );
    assert_eq!(i64s(&nat[0]), vec![1, 3, 0]);
    same("searchsorted sorter kernels", &ker[0], &nat[0]);
}

fn s(a: Option<isize>, b: Option<isize>, c: Option<isize>) -> IndexKey {
    IndexKey::Item(IndexItem::Slice {
        start: a,
        stop: b,
        step: c,
    })
}

fn int_array(v: Vec<i64>, shape: &[usize]) -> Array {
    Array::from_vec(v, shape, Device::Cpu).unwrap()
}

/// The reference gather for one integer array on one axis of a 2-D or 3-D array.
fn take_ref(x: &[f64], shape: &[usize], idx: &[i64], axis: usize) -> Vec<f64> {
    let n = shape[axis] as i64;
    let pre: usize = shape[..axis].iter().product();
    let post: usize = shape[axis + 1..].iter().product();
    let mut out = Vec::new();
    for p in 0..pre {
        for &i in idx {
            let i = if i < 0 { i + n } else { i } as usize;
            for q in 0..post {
                out.push(x[(p * shape[axis] + i) * post + q]);
            }
        }
    }
    out
}

#[test]
fn take_and_integer_indexing_match_reference_and_kernels() {
    setup();
    let mut rng = Rng::new(4);
    for &d in &DType::ALL {
        let x = data(&mut rng, &[6, 7, 5], d, 1000);
        let xv = f64s(&x);
        let idx: Vec<i64> = (0..11).map(|_| rng.below(13) as i64 - 6).collect();
        for axis in 0..3 {
            let n = [6, 7, 5][axis] as i64;
            let idx: Vec<i64> = idx.iter().map(|&i| i.clamp(-n, n - 1)).collect();
            let ia = int_array(idx.clone(), &[idx.len()]);
            let (nat, ker) = both(
                |dev| ops::take(&on(&x, dev), &on(&ia, dev), Some(axis as isize)).unwrap(),
                |a| vec![a],
            );
            let want = take_ref(&xv, &[6, 7, 5], &idx, axis);
            let got = f64s(&nat[0]);
            assert_eq!(got.len(), want.len());
            for (a, b) in got.iter().zip(&want) {
                assert!((a.is_nan() && b.is_nan()) || a == b, "take {d} axis {axis}");
            }
            same(&format!("take kernels {d} axis {axis}"), &ker[0], &nat[0]);
        }
    }
    // Mixed keys: arrays adjacent or separated, ints, slices, new axes, broadcasting, strided
    // and negative-stride sources; each against the same key on the kernels.
    let x = data(&mut rng, &[5, 6, 7, 4], DType::Float32, 1000);
    let xs = x
        .index(&[IndexItem::Slice {
            start: None,
            stop: None,
            step: Some(-1),
        }])
        .unwrap();
    let a = int_array(vec![0, 4, -1, 2], &[4]);
    let b = int_array(vec![1, 5, 0], &[3, 1]);
    let keys: Vec<(&str, Vec<IndexKey>, Vec<usize>)> = vec![
        ("a", vec![IndexKey::Array(a.clone())], vec![4, 6, 7, 4]),
        (
            "[:, b]",
            vec![s(None, None, None), IndexKey::Array(b.clone())],
            vec![5, 3, 1, 7, 4],
        ),
        (
            "[a, b] broadcast",
            vec![IndexKey::Array(a.clone()), IndexKey::Array(b.clone())],
            vec![3, 4, 7, 4],
        ),
        (
            "[a, :, b] separated",
            vec![
                IndexKey::Array(a.clone()),
                s(None, None, None),
                IndexKey::Array(b.clone()),
            ],
            vec![3, 4, 6, 4],
        ),
        (
            "[1, :, a] int and array separated",
            vec![
                IndexKey::Item(IndexItem::Int(1)),
                s(None, None, None),
                IndexKey::Array(a.clone()),
            ],
            vec![4, 6, 4],
        ),
        (
            "[:, 2, a] adjacent",
            vec![
                s(None, None, None),
                IndexKey::Item(IndexItem::Int(2)),
                IndexKey::Array(a.clone()),
            ],
            vec![5, 4, 4],
        ),
        (
            "[None, ..., a, ::2]",
            vec![
                IndexKey::Item(IndexItem::NewAxis),
                IndexKey::Item(IndexItem::Ellipsis),
                IndexKey::Array(a.clone()),
                s(None, None, Some(2)),
            ],
            vec![1, 5, 6, 4, 2],
        ),
    ];
    for src in [&x, &xs] {
        for (name, key, shape) in &keys {
            let (nat, ker) = both(
                |dev| {
                    let k: Vec<IndexKey> = key
                        .iter()
                        .map(|k| match k {
                            IndexKey::Array(a) => IndexKey::Array(on(a, dev)),
                            i => i.clone(),
                        })
                        .collect();
                    ops::index_get(&on(src, dev), &k).unwrap()
                },
                |a| vec![a],
            );
            assert_eq!(nat[0].shape(), &shape[..], "{name}: shape");
            same(&format!("index {name} kernels"), &ker[0], &nat[0]);
        }
    }
    // Element check of the separated case against explicit loops.
    let r = ops::index_get(&x, &keys[3].1).unwrap();
    let xv = f64s(&x);
    let rv = f64s(&r);
    let av = [0usize, 4, 4, 2];
    let bv = [1usize, 5, 0];
    for i in 0..3 {
        for j in 0..4 {
            for k in 0..6 {
                for l in 0..4 {
                    let want = xv[((av[j] * 6 + k) * 7 + bv[i]) * 4 + l];
                    let got = rv[((i * 4 + j) * 6 + k) * 4 + l];
                    assert!((want.is_nan() && got.is_nan()) || want == got);
                }
            }
        }
    }
    // Out of range: an Index error on both backends.
    let bad = int_array(vec![0, 6], &[2]);
    for kernels in [false, true] {
        let _g = SWITCH.lock().unwrap_or_else(|p| p.into_inner());
        ops::set_cpu_ops_through_kernels(kernels);
        let e = ops::take(&x, &bad, Some(0)).unwrap_err();
        ops::set_cpu_ops_through_kernels(false);
        assert!(matches!(e, ingot::Error::Index(_)), "{e}");
    }
}

/// `x[m]` for a boolean mask of x's whole shape: the row-major selection computed here, the
/// native backend and the kernels.
fn full_mask_read(x: &Array, m: &Array, what: &str) {
    let (xv, mv) = (f64s(x), m.to_bytes().unwrap());
    let (nat, ker) = both(
        |dev| ops::index_get(&on(x, dev), &[IndexKey::Array(on(m, dev))]).unwrap(),
        |a| vec![a],
    );
    let want: Vec<f64> = (0..xv.len())
        .filter(|&i| mv[i] != 0)
        .map(|i| xv[i])
        .collect();
    assert_eq!(nat[0].shape(), &[want.len()]);
    let got = f64s(&nat[0]);
    for (a, b) in got.iter().zip(&want) {
        assert!((a.is_nan() && b.is_nan()) || a == b, "{what}");
    }
    same(&format!("{what} kernels"), &ker[0], &nat[0]);
}

#[test]
fn masks_read_and_write_like_numpy() {
    setup();
    let mut rng = Rng::new(5);
    for &d in &[
        DType::Float64,
        DType::Int8,
        DType::Bool,
        DType::UInt16,
        DType::BFloat16,
    ] {
        let x = data(&mut rng, &[9, 8, 3], d, 50);
        let xv = f64s(&x);
        let m = data(&mut rng, &[9, 8], DType::Bool, 2);
        let mv = m.to_bytes().unwrap();
        let want: Vec<f64> = (0..72)
            .filter(|&i| mv[i] != 0)
            .flat_map(|i| xv[i * 3..i * 3 + 3].to_vec())
            .collect();
        let (nat, ker) = both(
            |dev| ops::index_get(&on(&x, dev), &[IndexKey::Array(on(&m, dev))]).unwrap(),
            |a| vec![a],
        );
        assert_eq!(nat[0].shape(), &[want.len() / 3, 3]);
        let got = f64s(&nat[0]);
        for (a, b) in got.iter().zip(&want) {
            assert!((a.is_nan() && b.is_nan()) || a == b, "mask read {d}");
        }
        same(&format!("mask read kernels {d}"), &ker[0], &nat[0]);
        // A mask of x's whole shape (the GPU's one-pass compaction).
        let mf = data(&mut rng, &[9, 8, 3], DType::Bool, 2);
        full_mask_read(&x, &mf, &format!("full mask read {d}"));
        // x[mask] = scalar and x[mask] = values of the selection's shape.
        let count = want.len() / 3;
        let vals = data(&mut rng, &[count, 3], d, 50);
        for value in [
            Array::scalar(Scalar::Int(1), d, Device::Cpu).unwrap(),
            vals.clone(),
            data(&mut rng, &[3], d, 50),
        ] {
            let (nat, ker) = both(
                |dev| {
                    let t = on(&x, dev).copy().unwrap();
                    ops::index_set(&t, &[IndexKey::Array(on(&m, dev))], &on(&value, dev)).unwrap();
                    t
                },
                |a| vec![a],
            );
            let tv = f64s(&nat[0]);
            let vv = f64s(&value.broadcast_to(&[count, 3]).unwrap());
            let mut c = 0;
            for i in 0..72 {
                for j in 0..3 {
                    let want = if mv[i] != 0 {
                        vv[c * 3 + j]
                    } else {
                        xv[i * 3 + j]
                    };
                    let got = tv[i * 3 + j];
                    assert!(
                        (want.is_nan() && got.is_nan()) || want == got,
                        "mask write {d}"
                    );
                }
                c += (mv[i] != 0) as usize;
            }
            same(&format!("mask write kernels {d}"), &ker[0], &nat[0]);
        }
    }
    // Full-shape masks over several compaction tiles (4096 elements), dense and sparse.
    for (d, spread) in [(DType::Float32, 2), (DType::Int64, 9), (DType::UInt16, 40)] {
        let x = data(&mut rng, &[3001, 5], d, 1000);
        let m = data(&mut rng, &[3001, 5], DType::Int32, spread);
        let m = ops::binary(
            ops::BinaryOp::Equal,
            &m,
            &Array::scalar(Scalar::Int(0), DType::Int32, Device::Cpu).unwrap(),
        )
        .unwrap();
        full_mask_read(&x, &m, &format!("tiled mask read {d}"));
    }
    // A mask of the whole array, a 0-d mask, a mask with a mismatched shape.
    let x = data(&mut rng, &[4, 5], DType::Int32, 9);
    let m = data(&mut rng, &[4, 5], DType::Bool, 2);
    let r = ops::index_get(&x, &[IndexKey::Array(m.clone())]).unwrap();
    assert_eq!(r.ndim(), 1);
    let t = Array::scalar(Scalar::Bool(true), DType::Bool, Device::Cpu).unwrap();
    assert_eq!(
        ops::index_get(&x, &[IndexKey::Array(t)]).unwrap().shape(),
        &[1, 4, 5]
    );
    let f = Array::scalar(Scalar::Bool(false), DType::Bool, Device::Cpu).unwrap();
    assert_eq!(
        ops::index_get(&x, &[IndexKey::Array(f)]).unwrap().shape(),
        &[0, 4, 5]
    );
    let wrong = data(&mut rng, &[5], DType::Bool, 2);
    assert!(matches!(
        ops::index_get(&x, &[IndexKey::Array(wrong)]),
        Err(ingot::Error::Index(_))
    ));
}

#[test]
fn integer_assignment_and_take_along_axis() {
    setup();
    let mut rng = Rng::new(6);
    for &d in &[DType::Float32, DType::Int64, DType::UInt8, DType::Float16] {
        let x = data(&mut rng, &[6, 5], d, 100);
        let rows = int_array(vec![4, 0, -1], &[3]);
        let value = data(&mut rng, &[3, 1], d, 100);
        let (nat, ker) = both(
            |dev| {
                let t = on(&x, dev).copy().unwrap();
                let key = [IndexKey::Array(on(&rows, dev)), s(Some(1), Some(4), None)];
                ops::index_set(&t, &key, &on(&value, dev)).unwrap();
                t
            },
            |a| vec![a],
        );
        let (xv, tv, vv) = (f64s(&x), f64s(&nat[0]), f64s(&value));
        for r in 0..6 {
            for c in 0..5 {
                let k = [4usize, 0, 5].iter().position(|&q| q == r);
                let want = match k {
                    Some(k) if (1..4).contains(&c) => vv[k],
                    _ => xv[r * 5 + c],
                };
                let got = tv[r * 5 + c];
                assert!(
                    (want.is_nan() && got.is_nan()) || want == got,
                    "set {d} {r} {c}"
                );
            }
        }
        same(&format!("set kernels {d}"), &ker[0], &nat[0]);
        // take_along_axis with argsort, and with broadcasting indices.
        for axis in [0isize, 1] {
            let (nat, ker) = both(
                |dev| {
                    let xd = on(&x, dev);
                    let i = ops::argsort(&xd, axis, false).unwrap();
                    vec![
                        ops::take_along_axis(&xd, &i, axis).unwrap(),
                        ops::sort(&xd, axis, false).unwrap(),
                    ]
                },
                |v| v,
            );
            same(&format!("take_along sorted {d} {axis}"), &nat[0], &nat[1]);
            same(&format!("take_along kernels {d} {axis}"), &ker[0], &nat[0]);
        }
        let idx = int_array(vec![2, -1, 0], &[1, 3]);
        let (nat, ker) = both(
            |dev| ops::take_along_axis(&on(&x, dev), &on(&idx, dev), 1).unwrap(),
            |a| vec![a],
        );
        assert_eq!(nat[0].shape(), &[6, 3]);
        let rv = f64s(&nat[0]);
        for r in 0..6 {
            for (j, &c) in [2usize, 4, 0].iter().enumerate() {
                let (a, b) = (rv[r * 3 + j], xv[r * 5 + c]);
                assert!((a.is_nan() && b.is_nan()) || a == b);
            }
        }
        same(
            &format!("take_along broadcast kernels {d}"),
            &ker[0],
            &nat[0],
        );
    }
}
