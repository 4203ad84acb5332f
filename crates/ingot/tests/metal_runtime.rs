//! The Metal runtime on Apple hardware: allocation, copies, zero-copy wrapping, command batching,
//! the pipeline cache, errors at synchronisation, float64 refusal, matmul.
//!
//! Runs on macOS with `cargo test -p ingot --features metal --test metal_runtime`; every test
//! uses `metal:0` and is skipped (passes with a note) on a Mac without a Metal device.
#![cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]

use std::sync::Arc;

use ingot::kernel::{CompileOptions, Dispatch, KernelArg, KernelBackend, Library};
use ingot::runtime::metal::{self, MetalRuntime};
use ingot::runtime::Runtime;
use ingot::{Array, DType, Device, Scalar};

const DEV: Device = Device::Metal(0);

fn runtime() -> Option<Arc<MetalRuntime>> {
    if metal::device_count() == 0 {
        eprintln!("no Metal device: test skipped");
        return None;
    }
    Some(metal::runtime(0).expect("metal:0 opens"))
}

const ADD: &str = r#"
#include <metal_stdlib>
using namespace metal;
kernel void add_one(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    x[i] = x[i] + 1.0f;
}
"#;

#[test]
fn device_properties_and_registry() {
    let Some(rt) = runtime() else { return };
    let p = rt.properties();
    assert!(!p.name.is_empty());
    assert!(p.max_threads_per_threadgroup[0] >= 256);
    assert!(p.max_threadgroup_memory >= 16 * 1024);
    assert!(p.max_buffer_length > 0);
    assert_eq!(rt.device(), DEV);
    assert!(ingot::runtime::available_gpus().contains(&DEV));
    assert!(DEV.is_available());
}

#[test]
fn allocation_copies_and_host_pointer() {
    let Some(rt) = runtime() else { return };
    let buf = rt.allocate(1000).unwrap();
    assert_eq!(buf.nbytes(), 1000);
    assert!(buf.memory_as::<metal::MetalMemory>().is_some());
    let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
    rt.copy_from_host(&data, &buf, 0).unwrap();
    let mut back = vec![0u8; 1000];
    rt.copy_to_host(&buf, 0, &mut back).unwrap();
    assert_eq!(back, data);
    // Partial copies at offsets.
    rt.copy_from_host(&[7, 8, 9], &buf, 500).unwrap();
    let mut three = [0u8; 3];
    rt.copy_to_host(&buf, 500, &mut three).unwrap();
    assert_eq!(three, [7, 8, 9]);
    // Out of range is an error, never a crash.
    assert!(rt.copy_from_host(&[0; 16], &buf, 990).is_err());
    assert!(rt.copy_to_host(&buf, 999, &mut [0u8; 2]).is_err());
    // The host pointer is the shared contents.
    rt.synchronize().unwrap();
    let p = buf.host_ptr().expect("shared memory has a host address");
    // SAFETY: 1000 bytes of shared memory, no GPU work queued.
    let view = unsafe { std::slice::from_raw_parts(p, 1000) };
    assert_eq!(&view[500..503], &[7, 8, 9]);
    // Device-side copy (blit), including an overlapping one in the same buffer.
    let other = rt.allocate(1000).unwrap();
    rt.copy_within(&buf, 0, &other, 0, 1000).unwrap();
    let mut back2 = vec![0u8; 1000];
    rt.copy_to_host(&other, 0, &mut back2).unwrap();
    assert_eq!(&back2[..500], &data[..500]);
    rt.copy_within(&other, 0, &other, 10, 100).unwrap();
    let mut shifted = vec![0u8; 100];
    rt.copy_to_host(&other, 10, &mut shifted).unwrap();
    assert_eq!(&shifted[..], &data[..100]);
}

#[test]
fn memory_info_counts_and_pool_reuse() {
    let Some(rt) = runtime() else { return };
    rt.synchronize().unwrap();
    let before = rt.memory_info();
    let a = rt.allocate(1 << 20).unwrap();
    let during = rt.memory_info();
    assert!(during.used >= before.used + (1 << 20));
    assert!(during.buffers > before.buffers);
    assert!(during.peak >= during.used);
    drop(a);
    let after = rt.memory_info();
    assert!(after.pool >= 1 << 20, "freed buffer is cached: {after:?}");
    let _b = rt.allocate(1 << 20).unwrap();
    assert!(rt.memory_info().pool < after.pool, "cached buffer reused");
    rt.empty_cache();
    assert_eq!(rt.memory_info().pool, 0);
    assert!(rt.memory_info().total > 0);
}

#[test]
fn zero_copy_wrap_of_page_aligned_memory() {
    let Some(rt) = runtime() else { return };
    let page = metal::page_size();
    let layout = std::alloc::Layout::from_size_align(4 * page, page).unwrap();
    // SAFETY: non-zero size.
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    assert!(!ptr.is_null());
    struct Owner(
        *mut u8,
        std::alloc::Layout,
        Arc<std::sync::atomic::AtomicBool>,
    );
    // SAFETY: the owner only frees the allocation.
    unsafe impl Send for Owner {}
    impl Drop for Owner {
        fn drop(&mut self) {
            // SAFETY: allocated above with this layout, freed once.
            unsafe { std::alloc::dealloc(self.0, self.1) };
            self.2.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
    let freed = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let owner = Box::new(Owner(ptr, layout, freed.clone()));
    // SAFETY: the allocation is valid until `owner` is dropped.
    let buf = unsafe { rt.wrap_host(ptr, 4 * page, owner, true) }
        .unwrap()
        .expect("page-aligned memory wraps");
    assert_eq!(buf.host_ptr(), Some(ptr), "no copy was made");
    // A kernel writes the host memory in place.
    let n = (4 * page / 4) as u32;
    let x = Array::from_parts(
        Arc::new(buf),
        ingot::layout::Layout::contiguous(&[n as usize]),
        DType::Float32,
    )
    .unwrap();
    let lib = Library::compile(ADD, DEV, &CompileOptions::default()).unwrap();
    lib.function("add_one")
        .unwrap()
        .call(n, &[x.clone().into()])
        .unwrap();
    rt.synchronize().unwrap();
    // SAFETY: the GPU finished; the memory is still owned by the wrapped buffer.
    let host = unsafe { std::slice::from_raw_parts(ptr as *const f32, n as usize) };
    assert!(host.iter().all(|&v| v == 1.0));
    drop(x);
    rt.synchronize().unwrap();
    // Metal frees the buffer (and drops the owner) once nothing references it.
    for _ in 0..100 {
        if freed.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(freed.load(std::sync::atomic::Ordering::SeqCst));
    // Misaligned memory is refused (the caller copies instead).
    let mut v = [0u8; 100];
    // SAFETY: `v` outlives the call; a length that is not a page multiple is never wrapped.
    let r = unsafe { rt.wrap_host(v.as_mut_ptr(), 100, Box::new(()), false) }.unwrap();
    assert!(r.is_none());
}

#[test]
fn many_dispatches_then_one_read() {
    let Some(_rt) = runtime() else { return };
    let lib = Library::compile(ADD, DEV, &CompileOptions::default()).unwrap();
    let k = lib.function("add_one").unwrap();
    let x = Array::from_vec(vec![0.0f32; 4096], &[4096], DEV).unwrap();
    // More dispatches than one batch holds: several command buffers, committed in order.
    let n = metal::batch_limit() * 3 + 7;
    for _ in 0..n {
        k.call(4096, &[x.clone().into()]).unwrap();
    }
    let v = x.to_vec::<f32>().unwrap();
    assert!(v.iter().all(|&e| e == n as f32), "{}", v[0]);
}

#[test]
fn dispatch_threads_and_groups_edges() {
    let Some(_rt) = runtime() else { return };
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void mark(device uint* out [[buffer(0)]], constant uint& w [[buffer(1)]],
                 uint2 p [[thread_position_in_grid]], uint2 g [[threads_per_grid]]) {
    if (p.x < w) { out[p.y * w + p.x] = p.y * 1000 + p.x + 1; }
}
"#;
    let lib = Library::compile(src, DEV, &CompileOptions::default()).unwrap();
    let k = lib.function("mark").unwrap();
    let out = Array::empty(&[7 * 13], DType::UInt32, DEV).unwrap();
    out.fill(Scalar::Int(0)).unwrap();
    k.launch(
        &[out.clone().into(), KernelArg::Scalar(Scalar::Int(13))],
        &Dispatch::threads(&[13, 7])
            .with_threadgroup(&[8, 4])
            .unwrap(),
    )
    .unwrap();
    let v = out.to_vec::<u32>().unwrap();
    for y in 0..7u32 {
        for x in 0..13u32 {
            assert_eq!(v[(y * 13 + x) as usize], y * 1000 + x + 1);
        }
    }
    // Groups: 2 x 1 groups of 8 x 7 threads cover 16 x 7 positions; x >= 13 writes nothing.
    out.fill(Scalar::Int(0)).unwrap();
    k.launch(
        &[out.clone().into(), KernelArg::Scalar(Scalar::Int(13))],
        &Dispatch::groups(&[2, 1]).with_threadgroup(&[8, 7]).unwrap(),
    )
    .unwrap();
    assert_eq!(out.to_vec::<u32>().unwrap(), v);
}

#[test]
fn threadgroup_memory_and_constants() {
    let Some(_rt) = runtime() else { return };
    let src = r#"
#include <metal_stdlib>
using namespace metal;
constant uint SCALE [[function_constant(0)]];
kernel void rev(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],
                threadgroup float* tmp [[threadgroup(0)]],
                uint l [[thread_position_in_threadgroup]], uint n [[threads_per_threadgroup]],
                uint g [[threadgroup_position_in_grid]]) {
    tmp[l] = x[g * n + l];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    y[g * n + l] = tmp[n - 1 - l] * float(SCALE);
}
"#;
    let mut opts = CompileOptions::default();
    opts.constants.insert("SCALE".into(), Scalar::Int(3));
    let lib = Library::compile(src, DEV, &opts).unwrap();
    let k = lib.function("rev").unwrap();
    let x = Array::from_vec((0..64).map(|i| i as f32).collect(), &[64], DEV).unwrap();
    let y = Array::empty(&[64], DType::Float32, DEV).unwrap();
    k.launch(
        &[x.into(), y.clone().into()],
        &Dispatch::groups(&[2])
            .with_threadgroup(&[32])
            .unwrap()
            .with_threadgroup_memory(0, 32 * 4),
    )
    .unwrap();
    let v = y.to_vec::<f32>().unwrap();
    for g in 0..2 {
        for l in 0..32 {
            assert_eq!(v[g * 32 + l], ((g * 32 + 31 - l) * 3) as f32);
        }
    }
}

#[test]
fn pipeline_cache_is_keyed_by_source_name_and_constants() {
    let Some(_rt) = runtime() else { return };
    let backend = metal::runtime(0).unwrap().kernel_engine();
    let src = r#"
#include <metal_stdlib>
using namespace metal;
constant int K [[function_constant(0)]];
kernel void put(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = K; }
"#;
    let with = |k: i64| {
        let mut o = CompileOptions::default();
        o.constants.insert("K".into(), Scalar::Int(k));
        o
    };
    let l1 = backend.compile(src, &with(1)).unwrap();
    let l2 = backend.compile(src, &with(1)).unwrap();
    let none = ingot::kernel::Constants::new();
    let f1 = l1.function("put", &none).unwrap().function;
    let f2 = l2.function("put", &none).unwrap().function;
    assert!(
        Arc::ptr_eq(&f1, &f2),
        "same source and constants: same pipeline"
    );
    let libraries = backend.library_count();
    let pipelines = backend.pipeline_count();
    let l3 = backend.compile(src, &with(2)).unwrap();
    let f3 = l3.function("put", &none).unwrap().function;
    assert!(!Arc::ptr_eq(&f1, &f3), "other constants: another pipeline");
    assert_eq!(backend.pipeline_count(), pipelines + 1);
    assert_eq!(
        backend.library_count(),
        libraries,
        "constants specialise the function, not the library"
    );
    // And the values really differ.
    let o = Array::empty(&[4], DType::Int32, DEV).unwrap();
    Library::compile(src, DEV, &with(2))
        .unwrap()
        .function("put")
        .unwrap()
        .call(4, &[o.clone().into()])
        .unwrap();
    assert_eq!(o.to_vec::<i32>().unwrap(), vec![2; 4]);
}

#[test]
fn compile_errors_name_the_file() {
    let Some(_rt) = runtime() else { return };
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = undefined_name; }\n";
    let opts = CompileOptions {
        file_name: "broken.metal".into(),
        ..Default::default()
    };
    let lib = Library::compile(src, DEV, &opts).unwrap();
    let err = lib.function("f").unwrap_err().to_string();
    assert!(err.contains("broken.metal"), "{err}");
    assert!(err.contains("undefined_name"), "{err}");
}

#[test]
fn device_errors_surface_at_synchronisation_with_kernel_names() {
    let Some(rt) = runtime() else { return };
    rt.synchronize().unwrap();
    // An infinite loop trips the GPU watchdog (command buffer status Error, timeout).
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void spin_forever(device atomic_uint* flag [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    while (atomic_load_explicit(flag, memory_order_relaxed) == 0u) { }
}
"#;
    if std::env::var_os("INGOT_METAL_TEST_WATCHDOG").is_none() {
        eprintln!("set INGOT_METAL_TEST_WATCHDOG=1 to run the GPU-timeout test (takes seconds)");
        return;
    }
    let lib = Library::compile(src, DEV, &CompileOptions::default()).unwrap();
    let flag = Array::from_vec(vec![0u32], &[1], DEV).unwrap();
    lib.function("spin_forever")
        .unwrap()
        .call(1, &[flag.into()])
        .expect("launch is queued without error");
    let err = rt.synchronize().unwrap_err().to_string();
    assert!(err.contains("spin_forever"), "{err}");
    // The device stays usable afterwards.
    let x = Array::from_vec(vec![1.0f32, 2.0], &[2], DEV).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1.0, 2.0]);
}

#[test]
fn float64_is_refused() {
    let Some(_rt) = runtime() else { return };
    assert!(metal::check_dtype(DType::Float64).is_err());
    assert!(metal::check_dtype(DType::Float32).is_ok());
    let e = Array::empty(&[4], DType::Float64, DEV).unwrap_err();
    assert!(e.to_string().contains("float64"), "{e}");
    // Explicit conversion is the way in.
    let host = Array::from_vec(vec![1.5f64, 2.5], &[2], Device::Cpu).unwrap();
    let on_gpu = host.astype(DType::Float32).unwrap().to_device(DEV).unwrap();
    assert_eq!(on_gpu.to_vec::<f32>().unwrap(), vec![1.5, 2.5]);
}

#[test]
fn matmul_matches_the_cpu() {
    let Some(_rt) = runtime() else { return };
    let (m, k, n) = (70, 33, 130);
    let a: Vec<f32> = (0..m * k).map(|i| ((i % 11) as f32 - 5.0) / 3.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i % 7) as f32 - 3.0) / 2.0).collect();
    let ca = Array::from_vec(a.clone(), &[m, k], Device::Cpu).unwrap();
    let cb = Array::from_vec(b.clone(), &[k, n], Device::Cpu).unwrap();
    let want = ingot::ops::matmul::matmul(&ca, &cb)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    let ga = Array::from_vec(a, &[m, k], DEV).unwrap();
    let gb = Array::from_vec(b, &[k, n], DEV).unwrap();
    let got = ingot::ops::matmul::matmul(&ga, &gb)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} != {w}");
    }
    // Broadcast batch: (3, m, k) @ (k, n).
    let a3 = Array::from_vec(
        (0..3 * m * k).map(|i| (i % 5) as f32).collect(),
        &[3, m, k],
        DEV,
    )
    .unwrap();
    let r = ingot::ops::matmul::matmul(&a3, &gb).unwrap();
    assert_eq!(r.shape(), &[3, m, n]);
    let want3 = ingot::ops::matmul::matmul(&a3.to_device(Device::Cpu).unwrap(), &cb)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    for (g, w) in r.to_vec::<f32>().unwrap().iter().zip(&want3) {
        assert!((g - w).abs() <= 1e-4 * (1.0 + w.abs()), "{g} != {w}");
    }
}

#[test]
fn kernel_timing_is_positive() {
    let Some(_rt) = runtime() else { return };
    let lib = Library::compile(ADD, DEV, &CompileOptions::default()).unwrap();
    let x = Array::from_vec(vec![0.0f32; 1 << 16], &[1 << 16], DEV).unwrap();
    let t = lib
        .function("add_one")
        .unwrap()
        .time(&[x.into()], &Dispatch::threads(&[1 << 16]))
        .unwrap();
    assert!(t > 0.0 && t < 10.0, "{t}");
}
