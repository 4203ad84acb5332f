//! `#include "x.h"` from `Options::include_dirs`: macros and kernels of headers are seen, and
//! lines and errors point into the right file.

use ingot_msl::{translate, Options, Target};

fn dir_with(files: &[(&str, &str)]) -> std::path::PathBuf {
    // One folder per call: tests run in parallel and each removes its own folder.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "ingot-msl-inc-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&d).unwrap();
    for (n, t) in files {
        std::fs::write(d.join(n), t).unwrap();
    }
    d
}

#[test]
fn headers_are_inlined_with_line_directives() {
    let header = "#pragma once\n#define BLOCK 128\n\nkernel void from_header(device float* a,\n    uint i [[thread_position_in_grid]]) { a[i] = 0; }\n";
    let d = dir_with(&[("common.h", header)]);
    let src = "#include <metal_stdlib>\n#include \"common.h\"\n#include \"common.h\"\nusing namespace metal;\n[[max_total_threads_per_threadgroup(BLOCK)]]\nkernel void main_k(device float* a [[buffer(BLOCK / 64)]]) { a[0] = 1; }\n";
    let mut o = Options::new(Target::Cpu);
    o.file_name = "main.metal".into();
    o.include_dirs.push(d.clone());
    let t = translate(src, &o).unwrap();
    let h = t.module.entry("from_header").unwrap();
    assert_eq!((h.file.as_str(), h.line), ("common.h", 4));
    let m = t.module.entry("main_k").unwrap();
    assert_eq!((m.file.as_str(), m.line), ("main.metal", 6));
    assert_eq!(m.max_total_threads_per_threadgroup, Some(128));
    assert_eq!(m.params[0].buffer_index, Some(2));
    assert!(t.text.contains("#line 1 \"common.h\"\n"));
    assert!(t.text.contains("#line 3 \"main.metal\""));
    assert!(t.text.contains("#line 4 \"common.h\"\nextern \"C\""));
    assert!(t.text.contains("#line 6 \"main.metal\"\nextern \"C\""));
    assert_eq!(
        t.text.matches("ingot_kernel_from_header(").count(),
        2,
        "pragma once: one definition + one call"
    );
    // Without the folder, the include stays for the target compiler.
    let plain = translate(src, &Options::new(Target::Cpu)).unwrap_err();
    assert!(plain.message.contains("BLOCK"), "{plain}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn errors_inside_headers_name_the_header() {
    let d = dir_with(&[(
        "bad.h",
        "// ok\nkernel void k(device float* a [[buffer(1)]], device float* b [[buffer(1)]]) {}\n",
    )]);
    let mut o = Options::new(Target::Cuda);
    o.file_name = "main.metal".into();
    o.include_dirs.push(d.clone());
    let e = translate("#include \"bad.h\"\nkernel void ok() {}\n", &o).unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("bad.h", 2), "{e}");
    let e = translate(
        "#include \"bad.h\"\nkernel void ok() { int x = ; }\n#if\n",
        &o,
    )
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("main.metal", 3), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn conditionals_after_a_missing_header_are_not_guessed() {
    let src = "#include \"config.h\"\n#ifdef USE_FAST\nkernel void a() {}\n#else\nkernel void b() {}\n#endif\n";
    let e = translate(src, &Options::new(Target::Cpu)).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(
        e.message.contains("USE_FAST") && e.message.contains("config.h"),
        "{e}"
    );
    // Conditionals on names known here are fine.
    let ok = "#include \"config.h\"\n#if __METAL_VERSION__ >= 300\nkernel void a() {}\n#endif\n";
    assert!(translate(ok, &Options::new(Target::Cpu)).is_ok());
}
