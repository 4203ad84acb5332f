//! Compiles and runs the C++ tests of the CPU prelude (prelude/tests/*.cpp) with the system C++
//! compiler, and checks the CUDA prelude's syntax under a stub header (prelude/tests/cuda_shim.h).
//! Skipped, with a printed reason, when no C++ compiler is installed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn compiler() -> Option<String> {
    if let Ok(cxx) = std::env::var("INGOT_CXX") {
        return Some(cxx);
    }
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

fn prelude_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("prelude")
}

fn out_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ingot-msl-prelude-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compiles `prelude/tests/<src>` with `flags`, runs it, and asserts that it prints `OK`.
fn compile_and_run(src: &str, flags: &[&str]) {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (g++, c++, clang++) found");
        return;
    };
    let tag = format!("{src}{}", flags.join("")).replace(['.', '-', '=', ' '], "_");
    let dir = out_dir(&tag);
    let exe = dir.join("test");
    let out = Command::new(&cxx)
        .arg("-std=c++17")
        .args(flags)
        .arg("-Wall")
        .arg("-Wextra")
        .arg("-Werror")
        .arg("-I")
        .arg(prelude_dir())
        .arg(prelude_dir().join("tests").join(src))
        .arg("-o")
        .arg(&exe)
        .arg("-pthread")
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "{cxx} {src} {flags:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&exe).output().expect("run the test program");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success() && stdout.contains("OK"),
        "{src} {flags:?}: exit {:?}\n{stdout}{}",
        run.status.code(),
        String::from_utf8_lossy(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn runtime_fibers_barriers_and_exchanges() {
    compile_and_run("runtime_test.cpp", &["-O0"]);
    compile_and_run("runtime_test.cpp", &["-O2"]);
}

#[test]
fn prelude_types_math_atomics_and_simd() {
    compile_and_run("prelude_test.cpp", &["-O0"]);
    compile_and_run("prelude_test.cpp", &["-O2"]);
}

#[test]
fn prelude_with_native_tuning() {
    // -march=native takes the F16C/AVX paths where the machine has them
    compile_and_run("prelude_test.cpp", &["-O3", "-march=native"]);
}

#[test]
fn cuda_prelude_syntax_under_a_stub_header() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (g++, c++, clang++) found");
        return;
    };
    let dir = out_dir("cuda_syntax");
    let src = dir.join("cuda_syntax.cpp");
    std::fs::write(
        &src,
        "#include <cuda_shim.h>\n#define INGOT_TARGET_CUDA 1\n#include <metal_stdlib>\n#include <cuda_syntax_test.inc>\n",
    )
    .unwrap();
    let out = Command::new(&cxx)
        .arg("-std=c++17")
        .arg("-fsyntax-only")
        .arg("-Wall")
        .arg("-I")
        .arg(prelude_dir())
        .arg("-I")
        .arg(prelude_dir().join("tests"))
        .arg(&src)
        .output()
        .expect("run the C++ compiler");
    assert!(
        out.status.success(),
        "CUDA prelude under the stub header:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The aarch64 context switch and the `__fp16` conversions, when a cross compiler and
/// qemu-aarch64 are installed (skipped otherwise).
#[test]
fn aarch64_under_qemu_when_available() {
    let have = |c: &str| {
        Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !have("aarch64-linux-gnu-g++") || !have("qemu-aarch64") {
        eprintln!("skipped: aarch64-linux-gnu-g++ or qemu-aarch64 not installed");
        return;
    }
    for src in ["runtime_test.cpp", "prelude_test.cpp"] {
        let dir = out_dir(&format!("aarch64_{}", src.replace('.', "_")));
        let exe = dir.join("test");
        let out = Command::new("aarch64-linux-gnu-g++")
            .args([
                "-std=c++17",
                "-O2",
                "-static",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pthread",
                "-I",
            ])
            .arg(prelude_dir())
            .arg(prelude_dir().join("tests").join(src))
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run aarch64-linux-gnu-g++");
        assert!(
            out.status.success(),
            "aarch64 {src}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new("qemu-aarch64")
            .arg(&exe)
            .output()
            .expect("run qemu");
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            run.status.success() && stdout.contains("OK"),
            "aarch64 {src}: {stdout}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
