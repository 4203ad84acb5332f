//! Times the native CPU kernels on float32 arrays and prints the median ns per element.
//!
//! `cargo run --release -p ingot --example cpu_kernels_timing`

use std::time::Instant;

use ingot::ops::{binary, matmul, reduce, unary, BinaryOp, ReduceOp, UnaryOp};
use ingot::{Array, Device};

fn median_ns(mut f: impl FnMut(), reps: usize) -> f64 {
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_nanos() as f64
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[reps / 2]
}

fn main() {
    for n in [1usize, 1_000, 1_000_000, 10_000_000] {
        let v: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 1e-3).collect();
        let a = Array::from_vec(v.clone(), &[n], Device::Cpu).unwrap();
        let b = Array::from_vec(v, &[n], Device::Cpu).unwrap();
        let reps = if n >= 10_000_000 { 11 } else { 51 };
        let per = |ns: f64| ns / n as f64;
        let add = median_ns(|| drop(binary(BinaryOp::Add, &a, &b).unwrap()), reps);
        let mul = median_ns(|| drop(binary(BinaryOp::Multiply, &a, &b).unwrap()), reps);
        let exp = median_ns(|| drop(unary(UnaryOp::Exp, &a).unwrap()), reps);
        let sin = median_ns(|| drop(unary(UnaryOp::Sin, &a).unwrap()), reps);
        let sum = median_ns(
            || drop(reduce(ReduceOp::Sum, &a, None, false).unwrap()),
            reps,
        );
        let max = median_ns(
            || drop(reduce(ReduceOp::Max, &a, None, false).unwrap()),
            reps,
        );
        let argmax = median_ns(
            || drop(reduce(ReduceOp::ArgMax, &a, None, false).unwrap()),
            reps,
        );
        println!(
            "n={n:>9}  ns/elem: add {:.3}  mul {:.3}  exp {:.3}  sin {:.3}  sum {:.3}  max {:.3}  argmax {:.3}   (add total {:.0} ns)",
            per(add), per(mul), per(exp), per(sin), per(sum), per(max), per(argmax), add
        );
    }
    for n in [1024usize, 2048] {
        let v: Vec<f32> = (0..n * n).map(|i| (i % 17) as f32 * 0.1).collect();
        let a = Array::from_vec(v, &[n, n], Device::Cpu).unwrap();
        let t = median_ns(|| drop(matmul(&a, &a).unwrap()), 5);
        println!(
            "matmul {n}: {:.2} ms ({:.1} GFLOP/s)",
            t / 1e6,
            2.0 * (n as f64).powi(3) / t
        );
    }
}
