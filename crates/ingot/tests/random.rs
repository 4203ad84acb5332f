//! `ingot.random`'s stream: the Rust samplers (the CPU device) against the MSL kernels of
//! `kernels/random.metal` run on the CPU kernel engine (which stands in for CUDA and Metal),
//! bit for bit, for every sampler and dtype; Random123's known answers through both; and the
//! distributions' basic statistics. With `INGOT_TEST_CUDA=1` the generator on `cuda:0` is
//! checked against the CPU bit for bit as well.

use ingot::ops::gpu;
use ingot::ops::random::{philox4x32_10, Draw, Generator, Sampler};
use ingot::{Array, DType, Device, Scalar};

/// An output poisoned with 0xA5 bytes, so that unwritten elements show.
fn poisoned(shape: &[usize], dtype: DType) -> Array {
    let n: usize = shape.iter().product();
    Array::from_bytes(&vec![0xA5u8; n * dtype.size()], shape, dtype, Device::Cpu).unwrap()
}

/// The kernel's values for `draw` (on the CPU kernel engine).
fn kernel_values(draw: &Draw, n: usize, dtype: DType) -> Vec<u8> {
    let out = poisoned(&[n], dtype);
    gpu::random::fill(draw, &out).unwrap();
    out.to_bytes().unwrap()
}

/// The Rust values for `draw` (the CPU device's samplers).
fn rust_values(draw: &Draw, n: usize, dtype: DType) -> Vec<u8> {
    let out = poisoned(&[n], dtype);
    ingot::ops::random::fill(draw, &out).unwrap();
    out.to_bytes().unwrap()
}

fn draw(seed: u64, pos: u64, sampler: Sampler) -> Draw {
    Draw {
        key: [seed as u32, (seed >> 32) as u32],
        pos,
        sampler,
    }
}

const SIZES: [usize; 5] = [1, 3, 7, 1000, 4099];
const SEEDS: [(u64, u64); 3] = [(0, 0), (0x0123_4567_89AB_CDEF, 17), (42, (1 << 32) - 3)];

#[test]
fn known_answers_through_both_implementations() {
    // Block 0 of seed 0 is Philox(counter 0, key 0): Random123's first philox4x32 10 vector.
    let want = [0x6627e8d5u32, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8];
    assert_eq!(philox4x32_10([0; 4], [0; 2]), want);
    let d = draw(0, 0, Sampler::Keys);
    let expect: Vec<u8> = [
        want[0] as u64 | (want[1] as u64) << 32,
        want[2] as u64 | (want[3] as u64) << 32,
    ]
    .iter()
    .flat_map(|x| x.to_ne_bytes())
    .collect();
    assert_eq!(rust_values(&d, 2, DType::UInt64), expect);
    assert_eq!(kernel_values(&d, 2, DType::UInt64), expect);
    // The other two vectors, on the counter words a stream position reaches (words 0 and 1):
    // block b of seed k with attempt 0 only matches vectors whose words 2 and 3 are 0, so these
    // check the Rust function alone (the kernel's Philox is the same code path as above).
    assert_eq!(
        philox4x32_10([0xffffffff; 4], [0xffffffff; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
}

#[test]
fn floats_are_bit_identical_on_both_implementations() {
    for sampler in [Sampler::Uniform, Sampler::Normal] {
        for dtype in [
            DType::Float32,
            DType::Float64,
            DType::Float16,
            DType::BFloat16,
        ] {
            for (seed, pos) in SEEDS {
                for n in SIZES {
                    let d = draw(seed, pos, sampler);
                    let (r, k) = (rust_values(&d, n, dtype), kernel_values(&d, n, dtype));
                    assert!(
                        r == k,
                        "{sampler:?} {dtype} seed {seed} pos {pos} n {n}: the kernel differs at byte {:?}",
                        r.iter().zip(&k).position(|(a, b)| a != b)
                    );
                }
            }
        }
    }
}

#[test]
fn integers_are_bit_identical_on_both_implementations() {
    // Ranges: tiny, one with half the words rejected, 2^32 exactly, just above, 2^63 + 1 (heavy
    // 64-bit rejection), the full 2^64.
    let ranges = [
        1u64,
        6,
        (1 << 31) + 1,
        1 << 32,
        (1 << 32) + 1,
        (1 << 63) + 1,
        0,
    ];
    let dtypes = [
        DType::Int64,
        DType::UInt64,
        DType::Int32,
        DType::UInt8,
        DType::Int8,
        DType::Bool,
    ];
    for range in ranges {
        for dtype in dtypes {
            for (seed, pos) in SEEDS {
                for n in SIZES {
                    let low = if dtype == DType::Int8 {
                        (-7i64) as u64
                    } else {
                        3
                    };
                    let d = draw(seed, pos, Sampler::Integers { low, range });
                    let (r, k) = (rust_values(&d, n, dtype), kernel_values(&d, n, dtype));
                    assert!(r == k, "integers range {range} {dtype} seed {seed} n {n}");
                }
            }
        }
    }
}

#[test]
fn integer_values_stay_in_range_and_cover_it() {
    let mut g = Generator::new(7);
    let a = g
        .integers(-3, 4, &[7000], DType::Int16, Device::Cpu)
        .unwrap()
        .to_vec::<i16>()
        .unwrap();
    let mut counts = [0usize; 7];
    for v in &a {
        assert!((-3..4).contains(v), "{v}");
        counts[(*v + 3) as usize] += 1;
    }
    // 1000 expected per value; 5 sigma is about 150.
    assert!(
        counts.iter().all(|&c| (850..1150).contains(&c)),
        "{counts:?}"
    );
    // The full int64 range and a range beyond 2^32.
    let full = g
        .integers(
            i64::MIN as i128,
            i64::MAX as i128 + 1,
            &[4000],
            DType::Int64,
            Device::Cpu,
        )
        .unwrap()
        .to_vec::<i64>()
        .unwrap();
    let neg = full.iter().filter(|&&v| v < 0).count();
    assert!((1800..2200).contains(&neg), "{neg} negative of 4000");
    let big = g
        .integers(0, 3 << 40, &[4000], DType::UInt64, Device::Cpu)
        .unwrap()
        .to_vec::<u64>()
        .unwrap();
    assert!(big.iter().all(|&v| v < 3 << 40));
    assert!(big.iter().filter(|&&v| v >= 2 << 40).count() > 1000);
}

#[test]
fn uniform_and_normal_moments() {
    let mut g = Generator::new(123);
    let n = 200_000;
    let u = g.random(&[n], DType::Float64, Device::Cpu).unwrap();
    let u = u.to_vec::<f64>().unwrap();
    assert!(u.iter().all(|x| (0.0..1.0).contains(x)));
    let mean = u.iter().sum::<f64>() / n as f64;
    let var = u.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
    assert!((mean - 0.5).abs() < 0.005, "{mean}");
    assert!((var - 1.0 / 12.0).abs() < 0.002, "{var}");
    for dtype in [DType::Float64, DType::Float32] {
        let z = g.normal(&[n], dtype, Device::Cpu).unwrap();
        let z = z.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        let kurt = z.iter().map(|x| (x - mean).powi(4)).sum::<f64>() / n as f64 / var.powi(2);
        assert!(mean.abs() < 0.015, "{dtype} mean {mean}");
        assert!((var - 1.0).abs() < 0.02, "{dtype} var {var}");
        assert!((kurt - 3.0).abs() < 0.1, "{dtype} kurtosis {kurt}");
        // The tail: P(|z| > 3) = 0.0027.
        let tail = z.iter().filter(|x| x.abs() > 3.0).count() as f64 / n as f64;
        assert!((tail - 0.0027).abs() < 0.0008, "{dtype} tail {tail}");
    }
    for dtype in [DType::Float16, DType::BFloat16] {
        let u = g.random(&[4000], dtype, Device::Cpu).unwrap();
        let v = u.astype(DType::Float64).unwrap().to_vec::<f64>().unwrap();
        assert!(v.iter().all(|x| (0.0..1.0).contains(x)), "{dtype}");
    }
}

#[test]
fn the_position_advances_by_whole_blocks() {
    let mut g = Generator::new(5);
    let a = g.random(&[5], DType::Float32, Device::Cpu).unwrap();
    assert_eq!(g.position(), 2);
    let b = g.random(&[3], DType::Float64, Device::Cpu).unwrap();
    assert_eq!(g.position(), 4);
    // A generator placed at the same blocks reproduces the draws.
    let mut h = Generator::at(5, 0);
    assert_eq!(
        h.random(&[5], DType::Float32, Device::Cpu)
            .unwrap()
            .to_bytes()
            .unwrap(),
        a.to_bytes().unwrap()
    );
    let mut h = Generator::at(5, 2);
    assert_eq!(
        h.random(&[3], DType::Float64, Device::Cpu)
            .unwrap()
            .to_bytes()
            .unwrap(),
        b.to_bytes().unwrap()
    );
    // The first 4 values of a draw of 5 equal a draw of 4 (the stream does not depend on the
    // draw's length).
    let mut h = Generator::new(5);
    let c = h
        .random(&[4], DType::Float32, Device::Cpu)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(&a.to_vec::<f32>().unwrap()[..4], &c[..]);
}

#[test]
fn sorting_pairs_and_gathering_rows_agree_on_both_implementations() {
    for n in [1usize, 2, 5, 64, 1000, 1025] {
        let mut g = Generator::new(n as u64);
        let keys = g.random(&[n], DType::Float64, Device::Cpu).unwrap();
        // Few distinct keys, so that ties must be broken by index.
        let keys = keys
            .astype(DType::Float32)
            .unwrap()
            .view_as(DType::UInt32)
            .unwrap()
            .astype(DType::UInt64)
            .unwrap();
        let keys = ingot::ops::binary(
            ingot::ops::BinaryOp::BitwiseAnd,
            &keys,
            &Array::scalar(Scalar::UInt(0x7000_0000), DType::UInt64, Device::Cpu).unwrap(),
        )
        .unwrap();
        let a = poisoned(&[n], DType::Int64);
        let b = poisoned(&[n], DType::Int64);
        ingot_sort(&keys, &a, false);
        ingot_sort(&keys, &b, true);
        let (va, vb) = (a.to_vec::<i64>().unwrap(), b.to_vec::<i64>().unwrap());
        assert_eq!(va, vb, "n {n}");
        let k = keys.to_vec::<u64>().unwrap();
        let mut want: Vec<i64> = (0..n as i64).collect();
        want.sort_by_key(|&i| (k[i as usize], i));
        assert_eq!(va, want, "n {n}");
        // Gather rows of a [n, 3] float64 array (24-byte rows) and a [n, 3] int8 one.
        for dtype in [DType::Float64, DType::Int8] {
            let src = if dtype.is_float() {
                g.normal(&[n, 3], dtype, Device::Cpu).unwrap()
            } else {
                g.integers(-100, 100, &[n, 3], dtype, Device::Cpu).unwrap()
            };
            let (o1, o2) = (poisoned(&[n, 3], dtype), poisoned(&[n, 3], dtype));
            let rb = 3 * dtype.size();
            gpu::random::gather_rows(&src, &a, &o2, rb).unwrap();
            let taken = ingot::ops::random::take_along(&src, 0, &a).unwrap();
            o1.assign(&taken).unwrap();
            assert_eq!(o1.to_bytes().unwrap(), o2.to_bytes().unwrap());
            let s = src.to_bytes().unwrap();
            let o = o1.to_bytes().unwrap();
            for (i, &r) in va.iter().enumerate() {
                assert_eq!(
                    &o[i * rb..(i + 1) * rb],
                    &s[r as usize * rb..(r as usize + 1) * rb]
                );
            }
        }
    }
}

/// Sorts with the bitonic kernel, or a plain reference sort.
fn ingot_sort(keys: &Array, out: &Array, kernel: bool) {
    if kernel {
        gpu::random::sort_pairs(keys, out).unwrap();
    } else {
        let n = keys.size();
        let k = keys.to_vec::<u64>().unwrap();
        let mut idx: Vec<i64> = (0..n as i64).collect();
        idx.sort_by_key(|&i| (k[i as usize], i));
        out.assign(&Array::from_vec(idx, &[n], Device::Cpu).unwrap())
            .unwrap();
    }
}

#[test]
fn permutations_are_permutations_and_identical_on_both_implementations() {
    for n in [1usize, 2, 3, 10, 1000, 4097] {
        let mut g = Generator::new(99);
        let p = g
            .permutation(n, Device::Cpu)
            .unwrap()
            .to_vec::<i64>()
            .unwrap();
        let mut s = p.clone();
        s.sort();
        assert_eq!(s, (0..n as i64).collect::<Vec<_>>());
        // The same keys sorted by the kernel give the same permutation.
        let keys = poisoned(&[n], DType::UInt64);
        gpu::random::fill(&draw(99, 0, Sampler::Keys), &keys).unwrap();
        let out = poisoned(&[n], DType::Int64);
        gpu::random::sort_pairs(&keys, &out).unwrap();
        assert_eq!(out.to_vec::<i64>().unwrap(), p, "n {n}");
    }
    // Uniform over the 6 permutations of 3 elements (chi-square, 5 degrees of freedom).
    let mut g = Generator::new(2024);
    let mut counts = std::collections::HashMap::new();
    let trials = 6000;
    for _ in 0..trials {
        let p = g
            .permutation(3, Device::Cpu)
            .unwrap()
            .to_vec::<i64>()
            .unwrap();
        *counts.entry(p).or_insert(0usize) += 1;
    }
    assert_eq!(counts.len(), 6);
    let e = trials as f64 / 6.0;
    let chi: f64 = counts.values().map(|&c| (c as f64 - e).powi(2) / e).sum();
    assert!(chi < 25.0, "chi-square {chi} over {counts:?}");
}

#[test]
fn weighted_choice_agrees_on_both_implementations() {
    let p = Array::from_vec(vec![0.1f64, 0.0, 0.6, 0.3], &[4], Device::Cpu).unwrap();
    let cdf = Array::from_vec(vec![0.1f64, 0.1, 0.7, 1.0], &[4], Device::Cpu).unwrap();
    for n in [1usize, 5, 1001] {
        let d = draw(8, 3, Sampler::Uniform);
        let (a, b) = (poisoned(&[n], DType::Int64), poisoned(&[n], DType::Int64));
        ingot_categorical(&d, &cdf, &a, false);
        ingot_categorical(&d, &cdf, &b, true);
        assert_eq!(a.to_vec::<i64>().unwrap(), b.to_vec::<i64>().unwrap());
        assert!(a
            .to_vec::<i64>()
            .unwrap()
            .iter()
            .all(|&i| i != 1 && (0..4).contains(&i)));
    }
    let d = draw(8, 3, Sampler::Uniform);
    let b = poisoned(&[4], DType::Float64);
    let mut g = Generator::at(8, 3);
    let viaapi = g.choice(4, &[3], false, Some(&p), Device::Cpu).unwrap();
    gpu::random::exp_keys(&d, &p, &b).unwrap();
    let kb = b.to_vec::<f64>().unwrap();
    assert!(kb[1].is_infinite());
    let mut order: Vec<i64> = (0..4).collect();
    order.sort_by(|&i, &j| {
        kb[i as usize]
            .partial_cmp(&kb[j as usize])
            .unwrap()
            .then(i.cmp(&j))
    });
    assert_eq!(viaapi.to_vec::<i64>().unwrap(), order[..3].to_vec());
}

fn ingot_categorical(d: &Draw, cdf: &Array, out: &Array, kernel: bool) {
    if kernel {
        gpu::random::categorical(d, cdf, out).unwrap();
    } else {
        let mut g = Generator::at(8, 3);
        let r = g
            .choice(
                4,
                &[out.size()],
                true,
                Some(&Array::from_vec(vec![0.1f64, 0.0, 0.6, 0.3], &[4], Device::Cpu).unwrap()),
                Device::Cpu,
            )
            .unwrap();
        out.assign(&r).unwrap();
    }
}

#[test]
fn cuda_streams_equal_the_cpu_streams() {
    if std::env::var("INGOT_TEST_CUDA").ok().as_deref() != Some("1") {
        eprintln!("random: cuda:0 cases skipped (set INGOT_TEST_CUDA=1 on a machine with a GPU)");
        return;
    }
    let dev = Device::Cuda(0);
    let mut gc = Generator::new(31337);
    let mut gg = Generator::new(31337);
    for dtype in [
        DType::Float32,
        DType::Float64,
        DType::Float16,
        DType::BFloat16,
    ] {
        for n in [5usize, 1 << 20] {
            let a = gc.random(&[n], dtype, Device::Cpu).unwrap();
            let b = gg.random(&[n], dtype, dev).unwrap();
            assert_eq!(
                a.to_bytes().unwrap(),
                b.to_bytes().unwrap(),
                "random {dtype} {n}"
            );
            let a = gc.normal(&[n], dtype, Device::Cpu).unwrap();
            let b = gg.normal(&[n], dtype, dev).unwrap();
            assert_eq!(
                a.to_bytes().unwrap(),
                b.to_bytes().unwrap(),
                "normal {dtype} {n}"
            );
        }
    }
    for (lo, hi) in [
        (0i128, 10i128),
        (-5, (1 << 33) + 7),
        (i64::MIN as i128, i64::MAX as i128 + 1),
    ] {
        let a = gc
            .integers(lo, hi, &[100_000], DType::Int64, Device::Cpu)
            .unwrap();
        let b = gg.integers(lo, hi, &[100_000], DType::Int64, dev).unwrap();
        assert_eq!(
            a.to_bytes().unwrap(),
            b.to_bytes().unwrap(),
            "integers {lo} {hi}"
        );
    }
    for n in [3usize, 1000, 1 << 20] {
        let a = gc.permutation(n, Device::Cpu).unwrap();
        let b = gg.permutation(n, dev).unwrap();
        assert_eq!(
            a.to_bytes().unwrap(),
            b.to_bytes().unwrap(),
            "permutation {n}"
        );
    }
    let p = Array::from_vec(vec![0.25f64, 0.5, 0.0, 0.25], &[4], Device::Cpu).unwrap();
    for replace in [true, false] {
        let a = gc.choice(4, &[3], replace, Some(&p), Device::Cpu).unwrap();
        let b = gg
            .choice(4, &[3], replace, Some(&p.to_device(dev).unwrap()), dev)
            .unwrap();
        assert_eq!(
            a.to_bytes().unwrap(),
            b.to_bytes().unwrap(),
            "choice replace={replace}"
        );
    }
    let x = gc.normal(&[300, 7], DType::Float32, Device::Cpu).unwrap();
    let y = x.to_device(dev).unwrap();
    let a = gc.permuted(&x, 1).unwrap();
    let b = gg.permuted(&y, 1).unwrap();
    assert_eq!(
        a.to_bytes().unwrap(),
        b.to_bytes().unwrap(),
        "permuted axis 1"
    );
}
