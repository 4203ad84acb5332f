//! The CUDA runtime: memory pool, copies, errors. On machines without a CUDA device these tests
//! check that asking for one fails cleanly; with one (`INGOT_TEST_CUDA=1` makes its absence an
//! error) they exercise the device.

#![cfg(feature = "cuda")]

use ingot::runtime::Runtime;
use ingot::{Device, Error};

fn cuda() -> Option<std::sync::Arc<dyn Runtime>> {
    match Device::Cuda(0).runtime() {
        Ok(rt) => Some(rt),
        Err(e) => {
            assert!(
                std::env::var("INGOT_TEST_CUDA").is_err(),
                "INGOT_TEST_CUDA is set but cuda:0 is unavailable: {e}"
            );
            assert!(matches!(e, Error::DeviceUnavailable(_)), "{e:?}");
            eprintln!("skipping: no CUDA device ({e})");
            None
        }
    }
}

fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[test]
fn round_trip_and_copy_within() {
    let Some(rt) = cuda() else { return };
    let data = random_bytes(1 << 20, 0x9e37_79b9_7f4a_7c15 ^ std::process::id() as u64);
    let a = rt.allocate(data.len()).unwrap();
    let b = rt.allocate(data.len()).unwrap();
    rt.copy_from_host(&data, &a, 0).unwrap();
    rt.copy_from_host(&vec![0xA5u8; data.len()], &b, 0).unwrap();
    rt.copy_within(&a, 100, &b, 7, 5000).unwrap();
    let mut back = vec![0u8; data.len()];
    rt.copy_to_host(&b, 0, &mut back).unwrap();
    assert!(back[..7].iter().all(|&v| v == 0xA5));
    assert_eq!(&back[7..5007], &data[100..5100]);
    assert!(back[5007..].iter().all(|&v| v == 0xA5));
    assert!(rt.copy_to_host(&a, data.len() - 1, &mut back[..2]).is_err());
}

#[test]
fn pool_reuses_freed_blocks() {
    let Some(rt) = cuda() else { return };
    let n = 3 << 20;
    let first = rt.allocate(n).unwrap();
    let p = first.device_ptr().unwrap();
    let before = rt.memory_info();
    drop(first);
    let after_free = rt.memory_info();
    assert!(after_free.pool >= n, "{after_free:?}");
    let again = rt.allocate(n - 100).unwrap();
    assert_eq!(
        again.device_ptr().unwrap(),
        p,
        "same size class must reuse the block"
    );
    assert!(before.total > 0 && before.used >= n);
}

#[test]
fn oversized_allocation_is_out_of_memory() {
    let Some(rt) = cuda() else { return };
    let too_much = rt.memory_info().total * 4;
    match rt.allocate(too_much) {
        Err(Error::OutOfMemory { bytes, .. }) => assert_eq!(bytes, too_much),
        other => panic!("expected OutOfMemory, got {other:?}"),
    }
    // The device still works afterwards.
    let b = rt.allocate(1024).unwrap();
    rt.copy_from_host(&[1u8; 1024], &b, 0).unwrap();
    rt.synchronize().unwrap();
}
