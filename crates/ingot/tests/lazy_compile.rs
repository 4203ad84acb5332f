//! Compilation per entry point through the Rust API on the default device: a library is
//! reflected, each kernel compiled alone when obtained; function constants per function; one
//! kernel that does not compile leaves the others working.

use ingot::kernel::{CompileOptions, Constants, Library};
use ingot::{Array, Device, Error, Scalar};

fn device() -> Device {
    ingot::default_device().expect("default device")
}

fn salt() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("// {nanos} {:?}\n", std::thread::current().id())
}

/// The kernel, or `None` (test skipped) when the CPU has no C++ compiler.
fn skip_without_compiler<T>(r: ingot::Result<T>) -> Option<T> {
    match r {
        Err(Error::Compile(m)) if m.contains("no C++ compiler") || m.contains("INGOT_CXX") => {
            eprintln!("skipped: no C++ compiler for CPU kernels ({m})");
            None
        }
        other => Some(other.unwrap()),
    }
}

fn many(n: usize) -> String {
    let mut s = salt();
    s.push_str("#include <metal_stdlib>\nusing namespace metal;\n");
    for i in 0..n {
        s.push_str(&format!(
            "kernel void k_{i}(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]) {{ o[t] = float(t) * {i}.0f; }}\n"
        ));
    }
    s
}

fn poisoned(n: usize) -> Array {
    Array::from_vec(vec![f32::NAN; n], &[n], device()).unwrap()
}

#[test]
fn obtaining_one_kernel_compiles_one_unit() {
    let lib = Library::compile(&many(200), device(), &CompileOptions::default()).unwrap();
    assert_eq!(lib.functions().len(), 200);
    assert_eq!(lib.compiled_units(), 0);
    let Some(k) = skip_without_compiler(lib.function("k_77")) else {
        return;
    };
    assert_eq!(lib.compiled_units(), 1);
    let o = poisoned(64);
    k.call(64, &[o.clone().into()]).unwrap();
    let want: Vec<f32> = (0..64).map(|t| t as f32 * 77.0).collect();
    assert_eq!(o.to_vec::<f32>().unwrap(), want);
    lib.function("k_77").unwrap();
    assert_eq!(lib.compiled_units(), 1, "a second request is a cache hit");
    let ks = lib
        .prepare(&["k_1", "k_2", "k_3"], &Constants::new())
        .unwrap();
    assert_eq!(ks.len(), 3);
    assert_eq!(lib.compiled_units(), 4);
    for (i, k) in ks.iter().enumerate() {
        let o = poisoned(8);
        k.call(8, &[o.clone().into()]).unwrap();
        let want: Vec<f32> = (0..8).map(|t| (t * (i + 1)) as f32).collect();
        assert_eq!(o.to_vec::<f32>().unwrap(), want);
    }
    match lib.function("k_200") {
        Err(Error::KernelArgument(m)) => {
            assert!(m.contains("k_0, k_1"), "{m}");
            assert!(m.contains("(200 in all)"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}

const FC: &str = r#"
constant bool flip [[function_constant(0)]];
constant int BASE = 4;
constant int add [[function_constant(BASE + 1)]];
constant int unused_here [[function_constant(9)]];
kernel void f(device int* o [[buffer(0)]], device const int* extra [[buffer(1), function_constant(flip)]],
              uint t [[thread_position_in_grid]]) {
    o[t] = (flip ? -int(t) + extra[t] : int(t)) + add;
}
kernel void g(device int* o [[buffer(0)]], uint t [[thread_position_in_grid]]) { o[t] = unused_here; }
"#;

#[test]
fn function_constants_per_function() {
    let src = salt() + FC;
    let lib = Library::compile(&src, device(), &CompileOptions::default()).unwrap();
    let idx: Vec<Option<u32>> = lib
        .module()
        .function_constants
        .iter()
        .map(|c| c.index)
        .collect();
    assert_eq!(idx, [Some(0), Some(5), Some(9)]);
    let missing = lib.function("f");
    match missing {
        Err(Error::KernelArgument(m)) => {
            if m.contains("no C++ compiler") {
                return;
            }
            assert!(m.contains("kernel `f`"), "{m}");
            assert!(m.contains("`flip` (bool, index 0)"), "{m}");
            assert!(m.contains("`add` (int, index 5)"), "{m}");
            assert!(!m.contains("unused_here"), "{m}");
        }
        Err(Error::Compile(m)) if m.contains("no C++ compiler") => return,
        other => panic!("{other:?}"),
    }
    let mut c = Constants::new();
    c.insert("flip".into(), Scalar::Bool(true));
    c.insert("5".into(), Scalar::Int(100));
    let Some(k) = skip_without_compiler(lib.function_with("f", &c)) else {
        return;
    };
    assert_eq!(k.arguments().len(), 2);
    let o = Array::from_vec(vec![i32::MIN; 16], &[16], device()).unwrap();
    let extra = Array::from_vec(
        (0..16).map(|t| t * 10).collect::<Vec<i32>>(),
        &[16],
        device(),
    )
    .unwrap();
    k.call(16, &[o.clone().into(), extra.into()]).unwrap();
    let want: Vec<i32> = (0..16).map(|t| -t + t * 10 + 100).collect();
    assert_eq!(o.to_vec::<i32>().unwrap(), want);
    c.insert("flip".into(), Scalar::Bool(false));
    let k = lib.function_with("f", &c).unwrap();
    assert_eq!(k.arguments().len(), 1);
    let o = Array::from_vec(vec![i32::MIN; 16], &[16], device()).unwrap();
    k.call(16, &[o.clone().into()]).unwrap();
    assert_eq!(
        o.to_vec::<i32>().unwrap(),
        (0..16).map(|t| t + 100).collect::<Vec<i32>>()
    );
    assert_eq!(lib.compiled_units(), 2);
}

#[test]
fn one_bad_kernel_does_not_break_the_others() {
    if device().kind() == "metal" {
        return; // Metal compiles a library as a whole.
    }
    let src = salt()
        + "kernel void ok(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]) { o[t] = 2.0f; }\n\
           kernel void broken(device float* o [[buffer(0)]], uint t [[thread_position_in_grid]]) { o[t] = nowhere_defined(t); }\n";
    let opts = CompileOptions {
        file_name: "two.metal".into(),
        ..Default::default()
    };
    let lib = Library::compile(&src, device(), &opts).unwrap();
    let Some(k) = skip_without_compiler(lib.function("ok")) else {
        return;
    };
    let o = poisoned(4);
    k.call(4, &[o.clone().into()]).unwrap();
    assert_eq!(o.to_vec::<f32>().unwrap(), vec![2.0; 4]);
    match lib.function("broken") {
        Err(Error::Compile(m)) => {
            assert!(m.contains("kernel `broken`"), "{m}");
            assert!(m.contains("two.metal:3"), "{m}");
            assert!(m.contains("nowhere_defined"), "{m}");
        }
        other => panic!("{other:?}"),
    }
}
