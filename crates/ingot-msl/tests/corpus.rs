//! The kernel corpus (tests/kernels/*.metal): every kernel translates for both targets, and the
//! CPU translation compiles with the system C++ compiler (`g++ -std=c++17 -O1 -c`) against the
//! embedded prelude. The CUDA translation is syntax-checked with g++ under the stub header
//! `prelude/tests/cuda_shim.h` (the real check is NVRTC: see tests/nvrtc_check.py).
//!
//! `INGOT_MSL_EMIT_CUDA=DIR cargo test -p ingot-msl --test corpus` also writes every CUDA
//! translation (`DIR/<kernel>[__<variant>].cu`) and the CUDA prelude (`DIR/include/...`) for
//! `nvrtc_check.py`; `INGOT_MSL_EMIT_CPU=DIR` writes the CPU translations (`.cpp`) and prelude
//! for `cuda_run_check.py --cpu`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use ingot_msl::{prelude_files, translate, Options, Target};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Function-constant values per kernel file: each entry is one specialisation to build.
fn variants(stem: &str) -> Vec<(&'static str, Vec<(&'static str, &'static str)>)> {
    match stem {
        "function_constants" => vec![
            ("bias", vec![("has_bias", "true"), ("scale", "2.0f")]),
            ("nobias", vec![("has_bias", "false"), ("1", "0.5f")]),
        ],
        "function_constant_loop" => vec![
            ("taps3", vec![("taps", "3")]),
            ("taps5abs", vec![("0", "5"), ("abs_flag", "true")]),
        ],
        "layernorm" => vec![
            ("weight", vec![("has_weight", "true")]),
            ("noweight", vec![("has_weight", "false")]),
        ],
        _ => vec![("", vec![])],
    }
}

fn kernels() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(crate_dir().join("tests/kernels"))
        .expect("tests/kernels")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "metal"))
        .collect();
    files.sort();
    files
}

struct Case {
    name: String,
    target: Target,
    text: String,
}

/// Translates every kernel and variant for `target`; panics with every failure listed.
fn translate_all(target: Target) -> Vec<Case> {
    let mut out = Vec::new();
    let mut failures = Vec::new();
    for path in kernels() {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let source = std::fs::read_to_string(&path).unwrap();
        let header = source.lines().next().unwrap_or("");
        assert!(
            header.starts_with("//"),
            "{stem}.metal must start with a comment saying what it computes"
        );
        for (variant, constants) in variants(&stem) {
            let mut opts = Options::new(target);
            opts.file_name = format!("{stem}.metal");
            opts.constants = constants
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>();
            let name = if variant.is_empty() {
                stem.clone()
            } else {
                format!("{stem}__{variant}")
            };
            match translate(&source, &opts) {
                Ok(t) => {
                    assert!(
                        !t.module.entry_points.is_empty(),
                        "{name}: no entry point reflected"
                    );
                    out.push(Case {
                        name,
                        target,
                        text: t.text,
                    })
                }
                Err(e) => failures.push(format!("{name} ({target}): {e}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "translation failed:\n{}",
        failures.join("\n")
    );
    out
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

fn write_prelude(root: &Path, target: Target) {
    for (name, text) in prelude_files(target) {
        let p = root.join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
}

/// Compiles every case with `args` (in parallel over the machine's cores); returns the failures.
fn compile_all(cxx: &str, cases: &[Case], dir: &Path, ext: &str, args: &[String]) -> Vec<String> {
    let failures = Mutex::new(Vec::new());
    let next = Mutex::new(0usize);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(case) = cases.get(i) else { break };
                let src = dir.join(format!("{}.{ext}", case.name));
                std::fs::write(&src, &case.text).unwrap();
                let out = Command::new(cxx)
                    .args(args)
                    .arg(&src)
                    .arg("-o")
                    .arg(dir.join(format!("{}.o", case.name)))
                    .output()
                    .expect("run the C++ compiler");
                if !out.status.success() {
                    failures.lock().unwrap().push(format!(
                        "{} ({}):\n{}",
                        case.name,
                        case.target,
                        String::from_utf8_lossy(&out.stderr)
                    ));
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

fn work_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("ingot-msl-corpus-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn corpus_has_at_least_40_kernels() {
    let n = kernels().len();
    assert!(n >= 40, "only {n} corpus kernels");
}

#[test]
fn corpus_translates_for_cuda_and_cpu() {
    let cuda = translate_all(Target::Cuda);
    let cpu = translate_all(Target::Cpu);
    assert_eq!(cuda.len(), cpu.len());
    for c in &cuda {
        assert!(c.text.contains("INGOT_TARGET_CUDA"), "{}", c.name);
        assert!(c.text.contains("__global__"), "{}: no CUDA entry", c.name);
    }
    for c in &cpu {
        assert!(c.text.contains("INGOT_TARGET_CPU"), "{}", c.name);
        assert!(c.text.contains("ingot_cpu_"), "{}: no CPU entry", c.name);
    }
    if let Ok(dir) = std::env::var("INGOT_MSL_EMIT_CPU") {
        let dir = PathBuf::from(dir);
        write_prelude(&dir.join("include"), Target::Cpu);
        for c in &cpu {
            std::fs::write(dir.join(format!("{}.cpp", c.name)), &c.text).unwrap();
        }
        eprintln!(
            "wrote {} CPU translations and the prelude to {}",
            cpu.len(),
            dir.display()
        );
    }
    if let Ok(dir) = std::env::var("INGOT_MSL_EMIT_CUDA") {
        let dir = PathBuf::from(dir);
        write_prelude(&dir.join("include"), Target::Cuda);
        for c in &cuda {
            std::fs::write(dir.join(format!("{}.cu", c.name)), &c.text).unwrap();
        }
        eprintln!(
            "wrote {} CUDA translations and the prelude to {}",
            cuda.len(),
            dir.display()
        );
    }
}

#[test]
fn corpus_cpu_translations_compile() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (g++, c++, clang++) found; set INGOT_CXX");
        return;
    };
    let cases = translate_all(Target::Cpu);
    let dir = work_dir("cpu");
    write_prelude(&dir.join("include"), Target::Cpu);
    let args: Vec<String> = ["-std=c++17", "-O1", "-c", "-fPIC", "-I"]
        .iter()
        .map(|s| s.to_string())
        .chain([dir.join("include").display().to_string()])
        .collect();
    let failures = compile_all(&cxx, &cases, &dir, "cpp", &args);
    assert!(
        failures.is_empty(),
        "{} of {} CPU translations do not compile:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corpus_cuda_translations_parse_under_the_stub_header() {
    let Some(cxx) = compiler() else {
        eprintln!("skipped: no C++ compiler (g++, c++, clang++) found; set INGOT_CXX");
        return;
    };
    let cases = translate_all(Target::Cuda);
    let dir = work_dir("cuda");
    write_prelude(&dir.join("include"), Target::Cuda);
    let shim = crate_dir().join("prelude/tests/cuda_shim.h");
    let args: Vec<String> = ["-std=c++17", "-fsyntax-only", "-x", "c++", "-include"]
        .iter()
        .map(|s| s.to_string())
        .chain([shim.display().to_string(), "-I".to_string()])
        .chain([dir.join("include").display().to_string()])
        .collect();
    let failures = compile_all(&cxx, &cases, &dir, "cu", &args);
    assert!(
        failures.is_empty(),
        "{} of {} CUDA translations do not parse:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
    let _ = std::fs::remove_dir_all(&dir);
}
