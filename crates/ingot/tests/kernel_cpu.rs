//! User MSL kernels through the Rust API on the default device (`INGOT_DEVICE`, else the best
//! available): compile, reflect, validate, launch. Skipped (with a message) when the device is
//! the CPU and no C++ compiler is installed.

use ingot::kernel::{Access, CompileOptions, Dispatch, KernelArg, Library, ParamRole};
use ingot::{Array, DType, Device, Error, Scalar};

fn device() -> Device {
    ingot::default_device().expect("default device")
}

/// The library, or `None` (test skipped) when the CPU has no C++ compiler.
fn compile(src: &str) -> Option<Library> {
    compile_with(src, &CompileOptions::default())
}

fn compile_with(src: &str, opts: &CompileOptions) -> Option<Library> {
    match Library::compile(src, device(), opts) {
        Ok(l) => Some(l),
        Err(Error::Compile(m)) if m.contains("no C++ compiler") || m.contains("INGOT_CXX") => {
            eprintln!("skipped: no C++ compiler for CPU kernels ({m})");
            None
        }
        Err(e) => panic!("compile failed: {e}"),
    }
}

const MUL: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void mul(const device float* a [[buffer(0)]],
                const device float* b [[buffer(1)]],
                device float* c [[buffer(2)]],
                uint id [[thread_position_in_grid]]) {
    c[id] = a[id] * b[id];
}
kernel void scale(device float* x [[buffer(0)]], constant float& s [[buffer(1)]],
                  constant uint& n [[buffer(2)]], uint id [[thread_position_in_grid]]) {
    if (id < n) x[id] = x[id] * s;
}
"#;

fn poisoned(n: usize) -> Array {
    Array::from_vec(vec![f32::NAN; n], &[n], device()).unwrap()
}

#[test]
fn multiply_metalcompute_form() {
    let Some(lib) = compile(MUL) else { return };
    assert_eq!(lib.functions(), vec!["mul", "scale"]);
    let k = lib.function("mul").unwrap();
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let (aa, bb) = (
        Array::from_vec(a.clone(), &[n], device()).unwrap(),
        Array::from_vec(b.clone(), &[n], device()).unwrap(),
    );
    let c = poisoned(n);
    k.call(n as u32, &[aa.into(), bb.into(), c.clone().into()])
        .unwrap();
    let got = c.to_vec::<f32>().unwrap();
    for i in 0..n {
        assert_eq!(got[i], a[i] * b[i], "element {i}");
    }
}

#[test]
fn reflection() {
    let Some(lib) = compile(MUL) else { return };
    let k = lib.function("scale").unwrap();
    let p = k.parameters();
    assert_eq!(p.len(), 4);
    assert_eq!(p[0].name, "x");
    assert_eq!(p[0].kind, ParamRole::Buffer);
    assert_eq!(p[0].dtype, Some(DType::Float32));
    assert_eq!(p[0].access, Access::ReadWrite);
    assert_eq!(p[1].kind, ParamRole::Bytes);
    assert_eq!(p[1].access, Access::Read);
    assert_eq!(p[2].dtype, Some(DType::UInt32));
    assert_eq!(p[3].kind, ParamRole::Builtin);
    assert_eq!(p[3].role, Some("thread_position_in_grid"));
    let m = lib.function("mul").unwrap();
    assert_eq!(m.parameters()[0].access, Access::Read);
}

#[test]
fn scalars_and_bad_arguments() {
    let Some(lib) = compile(MUL) else { return };
    let k = lib.function("scale").unwrap();
    let x = Array::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[4], device()).unwrap();
    k.launch(
        &[x.clone().into(), 2.0f32.into(), 3u32.into()],
        &Dispatch::threads(&[4]),
    )
    .unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![2.0, 4.0, 6.0, 4.0]);

    let kerr = |r: ingot::Result<()>, needle: &str| match r {
        Err(Error::KernelArgument(m)) => assert!(m.contains(needle), "{m} lacks {needle}"),
        other => panic!("expected KernelArgument({needle}), got {other:?}"),
    };
    let d = Dispatch::threads(&[4]);
    kerr(k.launch(&[x.clone().into()], &d), "`s`");
    kerr(
        k.launch(
            &[x.clone().into(), 1.0f32.into(), 1u32.into(), 1u32.into()],
            &d,
        ),
        "too many",
    );
    kerr(
        k.launch(
            &[
                x.clone().into(),
                1.0f32.into(),
                KernelArg::Scalar(Scalar::Int(-1)),
            ],
            &d,
        ),
        "out of range",
    );
    let xi = Array::from_vec(vec![1i32, 2], &[2], device()).unwrap();
    kerr(
        k.launch(&[xi.into(), 1.0f32.into(), 1u32.into()], &d),
        "float32",
    );
    let strided = Array::from_vec(vec![1.0f32; 8], &[8], device())
        .unwrap()
        .index(&[ingot::IndexItem::Slice {
            start: Some(0),
            stop: None,
            step: Some(2),
        }])
        .unwrap();
    kerr(
        k.launch(&[strided.into(), 1.0f32.into(), 1u32.into()], &d),
        "contiguous",
    );
    kerr(
        k.launch(
            &[x.clone().into(), 1.0f32.into(), 1u32.into()],
            &Dispatch::threads(&[4]).with_threadgroup(&[2048]).unwrap(),
        ),
        "maximum",
    );
    match lib.function("nope") {
        Err(Error::KernelArgument(m)) => assert!(m.contains("mul, scale"), "{m}"),
        other => panic!("{other:?}"),
    }
    // Still works afterwards.
    k.launch(&[x.clone().into(), 0.5f32.into(), 1u32.into()], &d)
        .unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 4.0, 6.0, 4.0]);
}

#[test]
fn compile_errors_name_the_users_line() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  x[i] = undefined_thing;\n}\n";
    let opts = CompileOptions {
        file_name: "bad.metal".into(),
        ..Default::default()
    };
    // The library is only reflected; the kernel's unit compiles when it is obtained.
    let Some(lib) = compile_with(src, &opts) else {
        return;
    };
    match lib.function("f") {
        Err(Error::Compile(m)) => {
            if m.contains("no C++ compiler") {
                return;
            }
            assert!(m.contains("bad.metal:4"), "{m}");
            assert!(m.contains("undefined_thing"), "{m}");
            assert!(m.contains("kernel `f`"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

const REDUCE: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void block_sum(const device float* x [[buffer(0)]], device float* out [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      threadgroup float* tmp [[threadgroup(0)]],
                      uint gid [[thread_position_in_grid]], uint lid [[thread_position_in_threadgroup]],
                      uint tgid [[threadgroup_position_in_grid]], uint tgsize [[threads_per_threadgroup]]) {
    tmp[lid] = gid < n ? x[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = tgsize / 2; s > 0; s >>= 1) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) out[tgid] = tmp[0];
}
kernel void hist(const device uint* x [[buffer(0)]], device atomic_uint* bins [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    atomic_fetch_add_explicit(&bins[x[i] % 16], 1u, memory_order_relaxed);
}
"#;

#[test]
fn threadgroup_reduction_and_atomics() {
    let Some(lib) = compile(REDUCE) else { return };
    let k = lib.function("block_sum").unwrap();
    let n = 256 * 37;
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let xa = Array::from_vec(x.clone(), &[n], device()).unwrap();
    let out = poisoned(37);
    let d = Dispatch::groups(&[37])
        .with_threadgroup(&[256])
        .unwrap()
        .with_threadgroup_memory(0, 256 * 4);
    k.launch(
        &[xa.clone().into(), out.clone().into(), (n as u32).into()],
        &d,
    )
    .unwrap();
    let got = out.to_vec::<f32>().unwrap();
    for g in 0..37 {
        let want: f32 = x[g * 256..(g + 1) * 256].iter().sum();
        assert_eq!(got[g], want, "group {g}");
    }
    // Missing threadgroup memory is an argument error.
    let d2 = Dispatch::groups(&[37]).with_threadgroup(&[256]).unwrap();
    assert!(matches!(
        k.launch(&[xa.into(), out.into(), (n as u32).into()], &d2),
        Err(Error::KernelArgument(m)) if m.contains("tmp")
    ));

    let h = lib.function("hist").unwrap();
    let n = 100_000;
    let v: Vec<u32> = (0..n as u32)
        .map(|i| i.wrapping_mul(2654435761) >> 7)
        .collect();
    let bins = Array::from_vec(vec![0u32; 16], &[16], device()).unwrap();
    h.call(
        n as u32,
        &[
            Array::from_vec(v.clone(), &[n], device()).unwrap().into(),
            bins.clone().into(),
        ],
    )
    .unwrap();
    let mut want = [0u32; 16];
    for x in v {
        want[(x % 16) as usize] += 1;
    }
    assert_eq!(bins.to_vec::<u32>().unwrap(), want.to_vec());
}

#[test]
fn timing_and_empty_grid() {
    let Some(lib) = compile(MUL) else { return };
    let k = lib.function("mul").unwrap();
    let a = Array::from_vec(vec![1.0f32; 64], &[64], device()).unwrap();
    let c = poisoned(64);
    let t = k
        .time(
            &[a.clone().into(), a.clone().into(), c.clone().into()],
            &Dispatch::threads(&[64]),
        )
        .unwrap();
    assert!((0.0..10.0).contains(&t));
    k.call(0, &[a.clone().into(), a.into(), c.into()]).unwrap();
}
