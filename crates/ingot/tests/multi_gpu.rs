//! Several CUDA devices in one process: `to_device` between GPUs (peer to peer where the driver
//! allows), its ordering against queued work on both devices, per-thread current devices and the
//! device-mismatch error. Needs two visible GPUs; runs only with `INGOT_TEST_MULTI_GPU=1` (which
//! then makes a missing second GPU an error), and is skipped otherwise.

#![cfg(feature = "cuda")]

use ingot::ops::{self, BinaryOp, ReduceOp};
use ingot::runtime::{self, cuda};
use ingot::{Array, DType, Device, Error, IndexItem};

fn two_gpus() -> bool {
    if std::env::var("INGOT_TEST_MULTI_GPU").as_deref() != Ok("1") {
        eprintln!("skipping: set INGOT_TEST_MULTI_GPU=1 on a machine with 2 GPUs");
        return false;
    }
    let n = cuda::device_count();
    assert!(
        n >= 2,
        "INGOT_TEST_MULTI_GPU=1 but {n} CUDA device(s) are visible"
    );
    true
}

/// Fresh values for each run (xorshift seeded by the process id and `salt`).
fn random_f64(n: usize, salt: u64) -> Vec<f64> {
    let mut x = 0x9e37_79b9_7f4a_7c15 ^ (u64::from(std::process::id()) << 16) ^ salt;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64 * 200.0 - 100.0
        })
        .collect()
}

fn slice(start: isize, stop: isize) -> IndexItem {
    IndexItem::Slice {
        start: Some(start),
        stop: Some(stop),
        step: None,
    }
}

#[test]
fn peer_copy_keeps_values_of_contiguous_and_strided_arrays() {
    if !two_gpus() {
        return;
    }
    eprintln!(
        "peer access cuda:0 -> cuda:1: {}, cuda:1 -> cuda:0: {}",
        cuda::can_access_peer(0, 1),
        cuda::can_access_peer(1, 0)
    );
    let (g0, g1) = (Device::Cuda(0), Device::Cuda(1));
    let host = random_f64(300 * 257, 1);
    let a = Array::from_vec(host.clone(), &[300, 257], g0).unwrap();
    let b = a.to_device(g1).unwrap();
    assert_eq!(b.device(), g1);
    assert_eq!(b.shape(), &[300, 257]);
    assert_eq!(b.to_vec::<f64>().unwrap(), host);

    // A transposed view with an offset: copied to the peer in row-major order of the view.
    let view = a.index(&[slice(7, 290), slice(3, 250)]).unwrap().t();
    let moved = view.to_device(g1).unwrap();
    let want = view
        .to_device(Device::Cpu)
        .unwrap()
        .to_vec::<f64>()
        .unwrap();
    assert_eq!(moved.to_vec::<f64>().unwrap(), want);
    assert_eq!(moved.shape(), &[247, 283]);

    // And back, for another dtype.
    let i = Array::from_vec((0..4099i32).map(|v| v * 7 - 3).collect(), &[4099], g1).unwrap();
    let back = i.to_device(g0).unwrap();
    assert_eq!(back.device(), g0);
    assert_eq!(
        back.to_vec::<i32>().unwrap(),
        (0..4099i32).map(|v| v * 7 - 3).collect::<Vec<_>>()
    );
}

#[test]
fn peer_copy_is_ordered_after_queued_work_and_before_later_work() {
    if !two_gpus() {
        return;
    }
    let (g0, g1) = (Device::Cuda(0), Device::Cuda(1));
    let n = 1 << 22;
    let host = random_f64(n, 2);
    let x = Array::from_vec(host.clone(), &[n], g0).unwrap();
    for round in 0..4 {
        // Queued on cuda:0 and not waited for: the copy must see its result.
        let y = ops::binary(BinaryOp::Multiply, &x, &x).unwrap();
        let z = y.to_device(g1).unwrap();
        drop(y); // its block may be reused on cuda:0 while the copy is still in flight
        let w = ops::binary(BinaryOp::Add, &z, &z).unwrap();
        let got = w.to_vec::<f64>().unwrap();
        for (k, (&g, &v)) in got.iter().zip(&host).enumerate().step_by(4099) {
            assert_eq!(g, 2.0 * v * v, "round {round}, element {k}");
        }
        let s = ops::reduce(ReduceOp::Sum, &z, None, false).unwrap();
        let want: f64 = host.iter().map(|v| v * v).sum();
        let got = s.item().unwrap().to_f64();
        assert!((got - want).abs() <= 1e-9 * want.abs(), "{got} vs {want}");
    }
}

#[test]
fn mixing_devices_raises_and_current_device_is_per_thread() {
    if !two_gpus() {
        return;
    }
    let (g0, g1) = (Device::Cuda(0), Device::Cuda(1));
    let a = Array::from_vec(random_f64(64, 3), &[64], g0).unwrap();
    let b = Array::from_vec(random_f64(64, 4), &[64], g1).unwrap();
    let e = ops::binary(BinaryOp::Add, &a, &b).unwrap_err();
    assert!(matches!(e, Error::DeviceMismatch(_)), "{e:?}");

    runtime::push_current_device(g1).unwrap();
    assert_eq!(runtime::default_device().unwrap(), g1);
    let other = std::thread::spawn(|| runtime::default_device().unwrap())
        .join()
        .unwrap();
    assert_ne!(other, g1, "the current device leaked to another thread");
    assert_eq!(runtime::pop_current_device(), Some(g1));

    let empty = Array::empty(&[0, 5], DType::Float32, g0).unwrap();
    let moved = empty.to_device(g1).unwrap();
    assert_eq!((moved.shape(), moved.device()), (&[0usize, 5][..], g1));
}
