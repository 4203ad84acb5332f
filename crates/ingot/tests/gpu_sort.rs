//! Sorting on the GPU backend (`ops::gpu::sort_rows`, kernels `sort.metal`) and on the native CPU
//! backend, against a reference stable sort computed here.
//!
//! Without a GPU the GPU kernels run on the CPU kernel engine (MSL translated to C++, SIMD-group
//! functions and barriers on fibers): bitonic block sorts and radix sorts, every dtype, sizes
//! around the tile edges, batches of rows, descending, NaN, infinities and signed zeros. With
//! `INGOT_TEST_CUDA=1` the same cases also run on `cuda:0` through `ops::sort`/`ops::argsort`.

use ingot::ops::{self, gpu};
use ingot::{Array, DType, Device, IndexItem};

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

/// Values with many duplicates (stability shows), and for floats NaN, +-inf, +-0.
fn data(rng: &mut Rng, shape: &[usize], dtype: DType, spread: u64) -> Array {
    let n: usize = shape.iter().product();
    let vals: Vec<f64> = (0..n)
        .map(|_| {
            let r = rng.next();
            if dtype.is_float() && r.is_multiple_of(13) {
                [
                    f64::NAN,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    0.0,
                    -0.0,
                    -f64::NAN,
                ][(r >> 8) as usize % 6]
            } else if dtype == DType::Bool {
                (r % 2) as f64
            } else {
                let v = (r >> 16) % spread;
                if dtype.is_float() || dtype.is_signed_integer() {
                    v as f64 - (spread / 2) as f64
                } else {
                    v as f64
                }
            }
        })
        .collect();
    Array::from_vec(vals, shape, Device::Cpu)
        .unwrap()
        .astype(dtype)
        .unwrap()
}

/// Full-range bits of an integer dtype.
fn bits(rng: &mut Rng, n: usize, dtype: DType) -> Array {
    let bytes: Vec<u8> = (0..n * dtype.size()).map(|_| rng.next() as u8).collect();
    Array::from_bytes(&bytes, &[n], dtype, Device::Cpu).unwrap()
}

/// A value's place in NumPy's ascending order: integers exactly, floats with -0 == 0, NaN last.
#[derive(Clone, Copy, PartialEq, PartialOrd, Debug)]
enum Ord {
    I(i128),
    F(f64),
    Nan,
}

fn order_values(a: &Array) -> Vec<Ord> {
    let d = a.dtype();
    if d.is_float() {
        let v = a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        v.iter()
            .map(|&x| {
                if x.is_nan() {
                    Ord::Nan
                } else {
                    Ord::F(x + 0.0)
                }
            })
            .collect()
    } else if d == DType::UInt64 {
        let v = a.to_vec::<u64>().unwrap();
        v.iter().map(|&x| Ord::I(x as i128)).collect()
    } else {
        let v = a.astype(DType::Int64).unwrap().to_vec::<i64>().unwrap();
        v.iter().map(|&x| Ord::I(x as i128)).collect()
    }
}

/// Stable argsort of each row (last axis) of the contiguous `a`.
fn reference(a: &Array, descending: bool) -> Vec<i64> {
    let len = *a.shape().last().unwrap();
    let v = order_values(&a.reshape(&[-1]).unwrap());
    let mut out = Vec::with_capacity(v.len());
    for r in 0..v.len() / len.max(1) {
        let row = &v[r * len..(r + 1) * len];
        let mut idx: Vec<usize> = (0..len).collect();
        idx.sort_by(|&i, &j| {
            let o = row[i].partial_cmp(&row[j]).unwrap();
            if descending {
                o.reverse()
            } else {
                o
            }
        });
        out.extend(idx.iter().map(|&i| i as i64));
    }
    out
}

fn to_cpu(a: Array) -> Array {
    a.to_device(Device::Cpu).unwrap()
}

/// (values, indices) of `a` sorted along the last axis by the GPU kernels.
fn gpu_sort(a: &Array, descending: bool) -> (Array, Array) {
    if let Some(dev) = cuda() {
        let x = a.to_device(dev).unwrap();
        return (
            to_cpu(ops::sort(&x, -1, descending).unwrap()),
            to_cpu(ops::argsort(&x, -1, descending).unwrap()),
        );
    }
    let v = Array::empty(a.shape(), a.dtype(), Device::Cpu).unwrap();
    let i = Array::empty(a.shape(), DType::Int64, Device::Cpu).unwrap();
    poison(&v);
    poison(&i);
    gpu::sort_rows(a, Some(&v), None, descending).unwrap();
    gpu::sort_rows(a, None, Some(&i), descending).unwrap();
    (v, i)
}

/// (values, indices) of `a` sorted along the last axis by the radix sort's `scheme` (on CUDA with
/// `INGOT_TEST_CUDA=1`, else on the CPU kernel engine).
fn gpu_sort_with(a: &Array, descending: bool, scheme: gpu::RadixScheme) -> (Array, Array) {
    let dev = cuda().unwrap_or(Device::Cpu);
    let x = a.to_device(dev).unwrap();
    let v = Array::empty(a.shape(), a.dtype(), Device::Cpu).unwrap();
    let i = Array::empty(a.shape(), DType::Int64, Device::Cpu).unwrap();
    poison(&v);
    poison(&i);
    let (v, i) = (v.to_device(dev).unwrap(), i.to_device(dev).unwrap());
    gpu::sort_rows_with(&x, Some(&v), None, descending, Some(scheme)).unwrap();
    gpu::sort_rows_with(&x, None, Some(&i), descending, Some(scheme)).unwrap();
    (to_cpu(v), to_cpu(i))
}

/// Fills an output with 0x5A bytes so that unwritten elements show.
fn poison(a: &Array) {
    let b = vec![0x5Au8; a.nbytes()];
    let p = Array::from_bytes(&b, a.shape(), a.dtype(), Device::Cpu).unwrap();
    a.assign(&p).unwrap();
}

/// Checks indices against the reference and values against the input gathered by them.
fn check(what: &str, a: &Array, values: &Array, indices: &Array, descending: bool) {
    let want = reference(a, descending);
    let got = indices.to_vec::<i64>().unwrap();
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(p) = got.iter().zip(&want).position(|(g, w)| g != w) {
        panic!(
            "{what}: index {p}: got {}, want {} (row length {})",
            got[p],
            want[p],
            a.shape().last().unwrap()
        );
    }
    // Values: the input's order values at the reference positions (NaN payloads may differ).
    let len = *a.shape().last().unwrap();
    let ov = order_values(&a.reshape(&[-1]).unwrap());
    let gv = order_values(&values.reshape(&[-1]).unwrap());
    for (p, &w) in want.iter().enumerate() {
        let row = p / len;
        let expect = ov[row * len + w as usize];
        assert_eq!(gv[p], expect, "{what}: value {p}");
    }
    if values.dtype().is_float() {
        // The sign of each zero survives a sort of values (-0.0 sorts just before +0.0).
        let f = values
            .astype(DType::Float64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap();
        let src = a.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        let neg = |v: &[f64]| {
            v.iter()
                .filter(|x| **x == 0.0 && x.is_sign_negative())
                .count()
        };
        assert_eq!(neg(&f), neg(&src), "{what}: negative zeros");
    }
}

#[test]
fn native_sort_matches_the_reference() {
    let mut rng = Rng::new(1);
    for &d in &DType::ALL {
        for shape in [
            vec![1usize],
            vec![31],
            vec![384],
            vec![1025],
            vec![70_001],
            vec![5, 0],
            vec![40, 33],
            vec![3, 9000],
        ] {
            let a = data(&mut rng, &shape, d, 50);
            for desc in [false, true] {
                let v = ops::sort(&a, -1, desc).unwrap();
                let i = ops::argsort(&a, -1, desc).unwrap();
                check(
                    &format!("native {d} {shape:?} desc={desc}"),
                    &a,
                    &v,
                    &i,
                    desc,
                );
            }
        }
        if d.is_integer() {
            let a = bits(&mut rng, 100_003, d);
            let i = ops::argsort(&a, 0, false).unwrap();
            let v = ops::sort(&a, 0, false).unwrap();
            check(&format!("native {d} full range"), &a, &v, &i, false);
        }
    }
    // Another axis and a strided view.
    let a = data(&mut rng, &[30, 7, 40], DType::Float32, 10);
    let t = a
        .index(&[IndexItem::Slice {
            start: None,
            stop: None,
            step: Some(-2),
        }])
        .unwrap();
    let i = ops::argsort(&t, 0, false).unwrap();
    let moved = t.permute(&[1, 2, 0]).unwrap().copy().unwrap();
    let want_i = ops::argsort(&moved, -1, false).unwrap();
    assert_eq!(
        i.permute(&[1, 2, 0])
            .unwrap()
            .copy()
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        want_i.to_vec::<i64>().unwrap()
    );
}

#[test]
fn gpu_block_sort_every_dtype() {
    setup();
    let mut rng = Rng::new(2);
    for &d in &DType::ALL {
        for shape in [
            vec![1usize],
            vec![2],
            vec![31],
            vec![33],
            vec![1023],
            vec![2048],
            vec![37, 100],
            vec![1000, 3],
            vec![4, 1],
        ] {
            let a = data(&mut rng, &shape, d, 40);
            for desc in [false, true] {
                let (v, i) = gpu_sort(&a, desc);
                check(
                    &format!("block {d} {shape:?} desc={desc}"),
                    &a,
                    &v,
                    &i,
                    desc,
                );
            }
        }
    }
}

#[test]
fn gpu_radix_sort_every_dtype() {
    setup();
    let mut rng = Rng::new(3);
    for &d in &DType::ALL {
        for shape in [vec![2049usize], vec![4097], vec![9001], vec![3, 2500]] {
            let a = data(&mut rng, &shape, d, 300);
            for desc in [false, true] {
                let (v, i) = gpu_sort(&a, desc);
                check(
                    &format!("radix {d} {shape:?} desc={desc}"),
                    &a,
                    &v,
                    &i,
                    desc,
                );
            }
        }
        if d.is_integer() {
            let a = bits(&mut rng, 12_345, d);
            let (v, i) = gpu_sort(&a, false);
            check(&format!("radix {d} full range"), &a, &v, &i, false);
        }
    }
}

/// The top pass ranks with LEAD (lane 0's digit by a ballot): keys whose top byte takes a few
/// values in mixed proportions (float32 integers below 2^20, some negative, as unique's benchmark
/// draws them), one value (small integers), or many (full-range bits) all sort as the reference.
#[test]
fn gpu_radix_sort_top_byte_few_values() {
    setup();
    let mut rng = Rng::new(5);
    let n = 50_001;
    let floats: Vec<f32> = (0..n)
        .map(|_| {
            let r = rng.next();
            let v = ((r >> 20) % (1 << 20)) as f32;
            if r.is_multiple_of(20) {
                -v
            } else {
                v
            }
        })
        .collect();
    let a = Array::from_vec(floats, &[n], Device::Cpu).unwrap();
    for desc in [false, true] {
        let (v, i) = gpu_sort(&a, desc);
        check(&format!("top byte float32 desc={desc}"), &a, &v, &i, desc);
    }
    let small: Vec<i32> = (0..n).map(|_| (rng.next() % 1000) as i32).collect();
    let a = Array::from_vec(small, &[n], Device::Cpu).unwrap();
    let (v, i) = gpu_sort(&a, false);
    check("top byte one value int32", &a, &v, &i, false);
    let a = bits(&mut rng, n, DType::UInt32);
    let (v, i) = gpu_sort(&a, false);
    check("top byte full range uint32", &a, &v, &i, false);
}

#[test]
fn gpu_radix_sort_many_rows_and_long_rows() {
    setup();
    let mut rng = Rng::new(4);
    // 300 rows: two segment passes (row numbers need 9 bits).
    let a = data(&mut rng, &[300, 2100], DType::Float32, 1000);
    let (v, i) = gpu_sort(&a, false);
    check("radix 300 rows", &a, &v, &i, false);
    let a = data(&mut rng, &[100_003], DType::Int64, 1 << 40);
    let (v, i) = gpu_sort(&a, true);
    check("radix 100003 int64 desc", &a, &v, &i, true);
    let a = data(&mut rng, &[100_003], DType::Float32, 1 << 20);
    let (v, i) = gpu_sort(&a, false);
    check("radix 100003 float32", &a, &v, &i, false);
}

/// Both radix schemes (one sweep with a look-back, which sorts up to 2^30 elements, and reduce
/// then scan, which sorts the larger ones) on the cases that exercise their differences: several
/// tiles and a partial one, segment passes (batches of rows), 8-byte keys, keys-only sorts with
/// the LEAD top pass, descending.
#[test]
fn gpu_radix_sort_both_schemes() {
    setup();
    let mut rng = Rng::new(6);
    for scheme in [gpu::RadixScheme::OneSweep, gpu::RadixScheme::ReduceThenScan] {
        for (shape, d, spread) in [
            (vec![20_001usize], DType::Float32, 1u64 << 20),
            (vec![3, 7000], DType::Int32, 1000),
            (vec![300, 2100], DType::Float16, 100),
            (vec![12_289], DType::Int64, 1 << 40),
            (vec![5000], DType::UInt8, 256),
        ] {
            let a = data(&mut rng, &shape, d, spread);
            for desc in [false, true] {
                let (v, i) = gpu_sort_with(&a, desc, scheme);
                check(
                    &format!("{scheme:?} {d} {shape:?} desc={desc}"),
                    &a,
                    &v,
                    &i,
                    desc,
                );
            }
        }
    }
}
