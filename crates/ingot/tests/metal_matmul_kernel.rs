//! The Metal backend's matmul kernel (`runtime/metal/matmul.metal`) run on the device that
//! `INGOT_DEVICE` names (default: the CPU kernel engine): the same MSL source, translated for the
//! CPU or CUDA, so its tiling and edge handling are checked on every machine (the Metal backend
//! itself only runs on macOS, where `INGOT_DEVICE=metal` runs it natively).

use ingot::kernel::{CompileOptions, Dispatch, KernelArg, Library};
use ingot::{Array, DType, Device};

const SOURCE: &str = include_str!("../kernels/matmul.metal");

fn device() -> Device {
    std::env::var("INGOT_DEVICE")
        .ok()
        .and_then(|s| s.parse::<Device>().ok())
        .unwrap_or(Device::Cpu)
}

fn params(a_stride: u64, b_stride: u64, m: u32, n: u32, k: u32) -> Vec<u8> {
    let mut p = Vec::new();
    p.extend_from_slice(&a_stride.to_ne_bytes());
    p.extend_from_slice(&b_stride.to_ne_bytes());
    for v in [m, n, k, 0] {
        p.extend_from_slice(&v.to_ne_bytes());
    }
    p
}

fn value(i: usize, salt: usize) -> f32 {
    (((i * 7 + salt * 13) % 17) as f32 - 8.0) / 4.0
}

fn check(batch: usize, m: usize, n: usize, k: usize, share_a: bool) {
    let lib = Library::compile(SOURCE, device(), &CompileOptions::default()).unwrap();
    let f = lib.function("matmul_float32").unwrap();
    let a_batches = if share_a { 1 } else { batch };
    let a: Vec<f32> = (0..a_batches * m * k).map(|i| value(i, 1)).collect();
    let b: Vec<f32> = (0..batch * k * n).map(|i| value(i, 2)).collect();
    let dev = device();
    let xa = Array::from_vec(a.clone(), &[a_batches * m * k], dev).unwrap();
    let xb = Array::from_vec(b.clone(), &[batch * k * n], dev).unwrap();
    let out = Array::empty(&[batch * m * n], DType::Float32, dev).unwrap();
    let a_stride = if share_a { 0 } else { (m * k) as u64 };
    let groups = [n.div_ceil(64) as u32, m.div_ceil(64) as u32, batch as u32];
    let dispatch = Dispatch::try_groups(&groups)
        .unwrap()
        .with_threadgroup(&[16, 16, 1])
        .unwrap();
    f.launch(
        &[
            KernelArg::Array(xa),
            KernelArg::Array(xb),
            KernelArg::Array(out.clone()),
            KernelArg::Bytes(params(
                a_stride,
                (k * n) as u64,
                m as u32,
                n as u32,
                k as u32,
            )),
        ],
        &dispatch,
    )
    .unwrap();
    let got = out.to_vec::<f32>().unwrap();
    for z in 0..batch {
        let ao = if share_a { 0 } else { z * m * k };
        for i in 0..m {
            for j in 0..n {
                let want: f64 = (0..k)
                    .map(|t| a[ao + i * k + t] as f64 * b[z * k * n + t * n + j] as f64)
                    .sum();
                let g = got[z * m * n + i * n + j] as f64;
                assert!(
                    (g - want).abs() <= 1e-4 * (1.0 + want.abs()),
                    "batch {z} ({i}, {j}) of {m}x{k} @ {k}x{n}: {g} != {want}"
                );
            }
        }
    }
}

#[test]
fn single_element() {
    check(1, 1, 1, 1, false);
}

#[test]
fn edges_in_every_direction() {
    check(1, 70, 130, 33, false);
}

#[test]
fn exact_tiles() {
    check(1, 64, 128, 32, false);
}

#[test]
fn batched_with_a_shared_operand() {
    check(3, 17, 65, 20, true);
    check(2, 5, 3, 100, false);
}

#[test]
fn half_and_bfloat_instantiations_exist() {
    let lib = Library::compile(SOURCE, device(), &CompileOptions::default()).unwrap();
    let names = lib.functions();
    for n in ["matmul_float32", "matmul_float16", "matmul_bfloat16"] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
}
