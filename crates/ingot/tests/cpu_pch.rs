//! The CPU engine's precompiled prelude: built once in the kernel cache, used by later
//! compiles, rebuilt when damaged; kernels compiled against it give the same results. One test
//! in its own binary: it points `INGOT_CACHE_DIR` at a fresh folder for the whole process.

use ingot::kernel::{CompileOptions, Library};
use ingot::{Array, Device};

fn pch_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(dir.join("cpu"))
        .map(|r| r.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("pch-") && n.ends_with(".gch"))
    });
    v
}

fn run_scale(factor: f32, seed: u64) -> Option<()> {
    let src = format!(
        "#include <metal_stdlib>\nusing namespace metal;\nkernel void k(device const float* a [[buffer(0)]], device float* b [[buffer(1)]], uint i [[thread_position_in_grid]]) {{ b[i] = a[i] * {factor:.1}f + 1.0f; }}\n"
    );
    let lib = match Library::compile(&src, Device::Cpu, &CompileOptions::default()) {
        Ok(l) => l,
        Err(e) if e.to_string().contains("no C++ compiler") => return None,
        Err(e) => panic!("{e}"),
    };
    let n = 1000usize;
    let mut x = seed;
    let a: Vec<f32> = (0..n)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 40) as f32 / 16777216.0 - 0.5
        })
        .collect();
    let aa = Array::from_vec(a.clone(), &[n], Device::Cpu).unwrap();
    let bb = Array::from_vec(vec![f32::NAN; n], &[n], Device::Cpu).unwrap();
    lib.function("k")
        .unwrap()
        .call(n as u32, &[aa.into(), bb.clone().into()])
        .unwrap();
    let got = bb.to_vec::<f32>().unwrap();
    for (g, v) in got.iter().zip(&a) {
        assert_eq!(*g, v * factor + 1.0);
    }
    Some(())
}

#[test]
fn precompiled_prelude_is_built_once_and_healed() {
    let dir = std::env::temp_dir().join(format!("ingot-pch-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("INGOT_CACHE_DIR", &dir);
    std::env::remove_var("INGOT_CPU_PCH");
    if run_scale(2.0, 1).is_none() {
        return;
    }
    let files = pch_files(&dir);
    if files.is_empty() {
        // Not GCC: the engine compiles without a precompiled header.
        let v = std::process::Command::new("c++").arg("--version").output();
        assert!(v.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("clang")));
        return;
    }
    assert_eq!(files.len(), 1, "{files:?}");
    let before = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    // A second kernel reuses it.
    run_scale(3.0, 2).unwrap();
    assert_eq!(pch_files(&dir), files);
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
        before
    );
    // A damaged one is rebuilt before use and the kernel still compiles and runs.
    std::fs::write(&files[0], b"not a precompiled header").unwrap();
    run_scale(5.0, 3).unwrap();
    let healed = std::fs::read(&files[0]).unwrap();
    assert!(healed.len() > 1000 && !healed.starts_with(b"not a precompiled"));
    // Switched off, kernels compile without it.
    std::env::set_var("INGOT_CPU_PCH", "0");
    run_scale(7.0, 4).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}
