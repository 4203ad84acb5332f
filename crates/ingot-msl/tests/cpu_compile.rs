//! Smoke test: a CPU translation plus the prelude compiles with `g++ -std=c++17 -fsyntax-only`.
//!
//! Skipped (with a printed reason) when no C++ compiler is installed or when the prelude has no
//! headers yet.

use std::path::{Path, PathBuf};
use std::process::Command;

use ingot_msl::{prelude_files, translate, Options, Target};

const KERNELS: &str = r#"#include <metal_stdlib>;
using namespace metal;

struct Params { uint n; float alpha; };
constant float SCALE = 2.0f;
static constant float TABLE[2] = {1.0, 2.0};
constexpr constant static int TAPS = 2;
const constant float K3 = 3;

float log1p(float x) { return x + 1.0f; }

template <typename T>
kernel void axpy(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                 constant Params& p [[buffer(2)]], uint3 gid [[thread_position_in_grid]]) {
    if (gid.x >= p.n) return;
    y[gid.x] = T(p.alpha * SCALE) * x[gid.x] + y[gid.x];
}
template [[host_name("axpy_f32")]] [[kernel]] decltype(axpy<float>) axpy<float>;

kernel void scale(device float4* v, constant float& s, ushort2 tid [[thread_position_in_threadgroup]],
                  uint i [[thread_position_in_grid]]) {
    float4 a = v[i];
    a.xy = a.yx * s * TABLE[TAPS - 1] * K3;
    v[i] = a + float4(log1p(0.0f)) + log1p(float4(1.0f));
}
"#;

fn compiler() -> Option<String> {
    ["g++", "c++", "clang++"]
        .into_iter()
        .find(|c| {
            Command::new(c)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .map(str::to_string)
}

/// Writes the prelude into `dir` (from `prelude_files`, or the crate's `prelude/` folder while
/// `prelude_files` is still empty); returns the include root.
fn prelude_root(dir: &Path) -> Option<PathBuf> {
    let files = prelude_files(Target::Cpu);
    if !files.is_empty() {
        for (name, text) in files {
            let p = dir.join("include").join(name);
            std::fs::create_dir_all(p.parent()?).ok()?;
            std::fs::write(&p, text).ok()?;
        }
        return Some(dir.join("include"));
    }
    let disk = Path::new(env!("CARGO_MANIFEST_DIR")).join("prelude");
    disk.join("ingot/metal_stdlib.h").exists().then_some(disk)
}

fn compile(name: &str, src: &str, entries: usize) {
    compile_with(name, src, entries, false);
}

fn compile_with(name: &str, src: &str, entries: usize, checked: bool) -> Option<String> {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (g++, c++, clang++) found");
        return None;
    };
    let dir = std::env::temp_dir().join(format!("ingot-msl-smoke-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let Some(include) = prelude_root(&dir) else {
        eprintln!("skipped: the CPU prelude has no headers yet");
        return None;
    };
    let mut opts = Options::new(Target::Cpu);
    opts.file_name = format!("{name}.metal");
    opts.checked = checked;
    let t = translate(src, &opts).unwrap();
    assert_eq!(t.entries.len(), entries);
    let cpp = dir.join(format!("{name}.cpp"));
    std::fs::write(&cpp, &t.text).unwrap();
    let out = Command::new(&cxx)
        .args(["-std=c++17", "-fsyntax-only", "-I"])
        .arg(&include)
        .arg(&cpp)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{cxx} failed:\n{}\n--- translation ---\n{}",
        String::from_utf8_lossy(&out.stderr),
        t.text
    );
    Some(t.text)
}

/// Checked mode on the CPU: every loop condition tests `ingot::chk_running()` (the engine's stop
/// counter), so that Ctrl-C ends a threadgroup that never would; `constexpr` functions keep
/// their loops (the test is `true` in constant evaluation); range-based `for` is left alone.
#[test]
fn checked_loops_test_the_stop_counter() {
    let src = r#"#include <metal_stdlib>
using namespace metal;
constexpr int tri(int n) { int s = 0; for (int k = 1; k <= n; ++k) s += k; return s; }
static_assert(tri(4) == 10, "constexpr loops still evaluate");
kernel void spin(device float* x [[buffer(0)]], device int* n [[buffer(1)]],
                 uint i [[thread_position_in_grid]]) {
    float a = x[i];
    while (a != -1.0f) { a = a * 0.5f + 1.0f; if (a == 2.0f) break; }
    int k = 0;
    do { k += n[0]; } while (k < 10);
    for (;;) { if (++k > 20) break; }
    int arr[3] = {1, 2, 3};
    for (int v : arr) k += v;
    for (uint j = 0; j < uint(n[1]); j++) { x[j] += float(tri(3)); }
    x[i] = a + float(k);
}
"#;
    let Some(text) = compile_with("checked_loops", src, 1, true) else {
        return;
    };
    for want in [
        "while (ingot::chk_running() && (a != -1.0f))",
        "while (ingot::chk_running() && (k < 10))",
        "for (; ingot::chk_running() ;)",
        "for (int v : arr)",
        "ingot::chk_running() && (j < uint(n[1]))",
        "ingot::chk_running() && (k <= n)",
    ] {
        assert!(text.contains(want), "missing `{want}` in:\n{text}");
    }
    let plain = translate(src, &Options::new(Target::Cpu)).unwrap();
    assert!(!plain.text.contains("chk_running"));
    let mut cuda = Options::new(Target::Cuda);
    cuda.checked = true;
    assert!(!translate(src, &cuda).unwrap().text.contains("chk_running"));
}

#[test]
fn mlx_style_macros_templates_and_functors_compile() {
    let src = include_str!("robustness_inputs/mlx_style.metal");
    let m = ingot_msl::reflect(src).unwrap();
    let names: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["vv_Addfloat32", "vv_Maxfloat16", "row_reduce_add_float32"]
    );
    let r = &m.entry_points[2];
    assert!(r.features.barriers && r.features.simdgroup && r.features.dynamic_threadgroup_memory);
    assert_eq!(r.params[2].pointee, "size_t");
    assert_eq!(m.entry_points[1].params[2].pointee, "half");
    compile("mlx_style", src, 3);
}

#[test]
fn macro_defined_kernels_compile() {
    compile("macros", include_str!("robustness_inputs/macros.metal"), 3);
}

#[test]
fn cpu_translation_compiles_with_the_prelude() {
    compile("smoke", KERNELS, 2);
}
