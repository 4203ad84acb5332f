//! The `ingot-msl` binary: `translate` and `reflect`.

use std::process::Command;

const SRC: &str = "#include <metal_stdlib>\nusing namespace metal;\nconstant bool has_b [[function_constant(0)]];\nkernel void k(device float* a [[buffer(0)]], device float* b [[buffer(1), function_constant(has_b)]],\n              uint i [[thread_position_in_grid]]) { a[i] = 1.0; }\n";

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ingot-msl"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes SRC to a file of the test's own (tests run in parallel threads of one process).
fn write_src(test: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("ingot-msl-cli-{test}-{}.metal", std::process::id()));
    std::fs::write(&p, SRC).unwrap();
    p
}

#[test]
fn translate_and_reflect() {
    let p = write_src("translate");
    let f = p.to_str().unwrap();
    let (ok, out, err) = run(&[
        "translate",
        f,
        "--target",
        "cuda",
        "--constant",
        "has_b=false",
        "--fast-math",
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("#define INGOT_TARGET_CUDA 1\n#define INGOT_FAST_MATH 1\n"));
    assert!(out.contains("k(const ingot::launch L, float* a0)"));
    let (ok, out, _) = run(&["reflect", f]);
    assert!(ok);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["entry_points"][0]["name"], "k");
    assert_eq!(v["entry_points"][0]["params"][1]["gate"], "has_b");
    assert_eq!(
        v["entry_points"][0]["params"][2]["role"],
        "thread_position_in_grid"
    );
    assert_eq!(v["function_constants"][0]["index"], 0);
    let _ = std::fs::remove_file(&p);
}

#[test]
fn errors_are_reported() {
    let p = write_src("errors");
    let f = p.to_str().unwrap();
    // A constant used only as a gate needs no value: the gated argument is left out.
    let (ok, out, err) = run(&["translate", f, "--target", "cpu"]);
    assert!(ok, "{err}");
    assert!(out.contains("ingot_cpu_k_sizes[] = {sizeof(float)};"));
    let bad = std::env::temp_dir().join(format!("ingot-msl-cli-bad-{}.metal", std::process::id()));
    std::fs::write(&bad, "kernel void k() {\n  int x = \"open;\n}\n").unwrap();
    let (ok, _, err) = run(&["reflect", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains(".metal:2:11: error: unterminated string literal"),
        "{err}"
    );
    let _ = std::fs::remove_file(&bad);
    let (ok, _, err) = run(&["translate", f, "--target", "metal"]);
    assert!(!ok && err.contains("unknown target"));
    let (ok, _, err) = run(&["frobnicate"]);
    assert!(!ok && err.contains("usage"));
    let (ok, _, err) = run(&["reflect", "/nonexistent/file.metal"]);
    assert!(!ok && err.contains("/nonexistent/file.metal"));
    let _ = std::fs::remove_file(&p);
}
