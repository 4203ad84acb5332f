//! Faulting user kernels through the Rust API on the CPU: a write past the end of a buffer is
//! `Error::KernelFault` (guard pages in default mode, bounds checks in checked mode) and the
//! process goes on; the sandbox refuses host code. Skipped when no C++ compiler is installed.

use ingot::kernel::{CompileOptions, Dispatch, Library};
use ingot::{Array, Device, Error};

const SCALE: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void scale(device float* x [[buffer(0)]], constant float& s [[buffer(1)]],
                  uint i [[thread_position_in_grid]]) {
    x[i] *= s;
}
"#;

fn compile(src: &str, checked: bool) -> Option<Library> {
    let opts = CompileOptions {
        checked,
        ..Default::default()
    };
    match Library::compile(src, Device::Cpu, &opts) {
        Ok(l) => Some(l),
        Err(Error::Compile(m)) if m.contains("no C++ compiler") || m.contains("INGOT_CXX") => {
            eprintln!("skipped: no C++ compiler for CPU kernels ({m})");
            None
        }
        Err(e) => panic!("compile failed: {e}"),
    }
}

fn values(n: usize, seed: u32) -> Vec<f32> {
    (0..n)
        .map(|i| ((i as u32).wrapping_mul(2_654_435_761) ^ seed) as f32 / u32::MAX as f32)
        .collect()
}

#[test]
fn overrun_in_default_mode_is_a_kernel_fault() {
    let Some(lib) = compile(SCALE, false) else {
        return;
    };
    let k = lib.function("scale").unwrap();
    for n in [8usize, 5000, 70_000] {
        let x = Array::from_vec(values(n, 7), &[n], Device::Cpu).unwrap();
        let d = Dispatch::threads(&[n as u32 + 4096]);
        match k.launch(&[x.clone().into(), 2.0f32.into()], &d) {
            Err(Error::KernelFault(m)) => assert!(m.contains("`x`"), "{m}"),
            other => panic!("n={n}: expected a kernel fault, got {other:?}"),
        }
    }
    // Later launches are correct.
    let n = 1000;
    let v = values(n, 3);
    let x = Array::from_vec(v.clone(), &[n], Device::Cpu).unwrap();
    k.launch(
        &[x.clone().into(), 2.0f32.into()],
        &Dispatch::threads(&[n as u32]),
    )
    .unwrap();
    let got = x.to_vec::<f32>().unwrap();
    for i in 0..n {
        assert_eq!(got[i], v[i] * 2.0, "element {i}");
    }
}

#[test]
fn checked_mode_reports_parameter_index_and_thread() {
    let Some(lib) = compile(SCALE, true) else {
        return;
    };
    let k = lib.function("scale").unwrap();
    let x = Array::from_vec(values(8, 1), &[8], Device::Cpu).unwrap();
    let d = Dispatch::groups(&[8]).with_threadgroup(&[8]).unwrap();
    match k.launch(&[x.clone().into(), 3.0f32.into()], &d) {
        Err(Error::KernelFault(m)) => {
            assert!(m.contains("parameter `x`"), "{m}");
            assert!(m.contains("8 elements (32 bytes)"), "{m}");
            // Threads 8..63 write out of bounds; the first recorded wrote its own index.
            let index: u32 = m
                .split("index ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            assert!((8..64).contains(&index), "{m}");
            assert!(
                m.contains(&format!("thread_position_in_grid ({index}, 0, 0)")),
                "{m}"
            );
        }
        other => panic!("expected a kernel fault, got {other:?}"),
    }
    let v = values(8, 9);
    let x = Array::from_vec(v.clone(), &[8], Device::Cpu).unwrap();
    k.launch(&[x.clone().into(), 3.0f32.into()], &Dispatch::threads(&[8]))
        .unwrap();
    let got = x.to_vec::<f32>().unwrap();
    for i in 0..8 {
        assert_eq!(got[i], v[i] * 3.0);
    }
}

#[test]
fn sandbox_refuses_host_code() {
    let src = "#include <metal_stdlib>\n#include <stdlib.h>\nkernel void f(device int* x [[buffer(0)]]) { x[0] = system(\"true\"); }\n";
    match Library::compile(src, Device::Cpu, &CompileOptions::default()) {
        Err(Error::Compile(m)) => assert!(m.contains("stdlib.h"), "{m}"),
        Err(e) => panic!("expected a compile error, got {e}"),
        Ok(_) => panic!("host code was accepted"),
    }
}
