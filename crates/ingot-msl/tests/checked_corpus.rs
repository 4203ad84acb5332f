//! Checked mode over the kernel corpus (tests/kernels/*.metal): every kernel translates in
//! checked mode for both targets, the CPU translations compile (syntax and types, with the real
//! prelude) and the CUDA translations parse under the stub header `prelude/tests/cuda_shim.h`
//! (NVRTC is the real check, on the GPU machine). The runtime behaviour is tested from Python
//! (tests/test_faults.py).
//!
//! `INGOT_MSL_EMIT_CUDA_CHECKED=DIR cargo test -p ingot-msl --test checked_corpus` also writes the
//! checked CUDA translations and the CUDA prelude to DIR for `tests/nvrtc_check.py DIR`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use ingot_msl::{prelude_files, translate, Options, Target};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

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

/// Constants for the corpus files that need them (one specialisation each).
fn constants(stem: &str) -> Vec<(&'static str, &'static str)> {
    match stem {
        "function_constants" => vec![("has_bias", "true"), ("scale", "2.0f")],
        "function_constant_loop" => vec![("taps", "3")],
        "layernorm" => vec![("has_weight", "true")],
        _ => vec![],
    }
}

fn translations(target: Target) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/kernels"))
        .expect("tests/kernels")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "metal"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for path in files {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let source = std::fs::read_to_string(&path).unwrap();
        let mut opts = Options::new(target);
        opts.file_name = format!("{stem}.metal");
        opts.checked = true;
        for (k, v) in constants(&stem) {
            opts.constants.insert(k.to_string(), v.to_string());
        }
        match translate(&source, &opts) {
            Ok(t) => out.push((stem, t.text)),
            Err(e) => failures.push(format!("{stem} ({target}): {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "checked translation failed:\n{}",
        failures.join("\n")
    );
    out
}

fn write_prelude(root: &Path, target: Target) {
    for (name, text) in prelude_files(target) {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
}

fn check_all(target: Target, extra: &[String]) {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler found; set INGOT_CXX");
        return;
    };
    let dir = std::env::temp_dir().join(format!(
        "ingot-checked-corpus-{}-{}",
        target,
        std::process::id()
    ));
    let include = dir.join("include");
    write_prelude(&include, target);
    let cases = translations(target);
    let failures = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some((name, text)) = cases.get(i) else {
                    return;
                };
                let src = dir.join(format!("{name}.cpp"));
                std::fs::write(&src, text).unwrap();
                let out = Command::new(&cxx)
                    .args(["-std=c++17", "-fsyntax-only", "-w", "-x", "c++"])
                    .args(extra)
                    .arg("-I")
                    .arg(&include)
                    .arg(&src)
                    .output()
                    .unwrap();
                if !out.status.success() {
                    let msg = String::from_utf8_lossy(&out.stderr);
                    let head: String = msg.lines().take(12).collect::<Vec<_>>().join("\n");
                    failures.lock().unwrap().push(format!("{name}:\n{head}"));
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} checked {target} translations do not compile:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn checked_cpu_translations_compile() {
    check_all(Target::Cpu, &[]);
}

#[test]
fn checked_cuda_translations_parse_under_the_stub_header() {
    if let Ok(dir) = std::env::var("INGOT_MSL_EMIT_CUDA_CHECKED") {
        let dir = PathBuf::from(dir);
        write_prelude(&dir.join("include"), Target::Cuda);
        for (name, text) in translations(Target::Cuda) {
            std::fs::write(dir.join(format!("{name}.cu")), text).unwrap();
        }
    }
    let shim = crate_dir().join("prelude/tests/cuda_shim.h");
    check_all(
        Target::Cuda,
        &["-include".to_string(), shim.display().to_string()],
    );
}
