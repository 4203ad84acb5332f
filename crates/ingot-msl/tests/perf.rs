//! Translating a 2,000-line file takes under 20 ms (checked in release builds only: debug
//! builds are not optimised, so their timing says nothing).

use ingot_msl::{translate, Options, Target};

/// A 2,000-line file of realistic kernels.
fn big_source() -> String {
    let mut s = String::from("#include <metal_stdlib>\nusing namespace metal;\n");
    let mut i = 0;
    while s.lines().count() < 2000 {
        s.push_str(&format!(
            r#"
struct P{i} {{ uint n; float a; }};
template <typename T>
kernel void k{i}(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                constant P{i}& p [[buffer(2)]],
                uint gid [[thread_position_in_grid]],
                uint lid [[thread_index_in_threadgroup]]) {{
    threadgroup float tile[256];
    tile[lid] = float(x[gid]) * p.a;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    float4 v = float4(tile[lid]);
    v.xy = v.zw * 2.0h;
    if (gid < p.n) y[gid] = T(v.x + simd_sum(v.y));
}}
template [[host_name("k{i}_f32")]] [[kernel]] decltype(k{i}<float>) k{i}<float>;
template [[host_name("k{i}_f16")]] [[kernel]] decltype(k{i}<half>) k{i}<half>;
"#
        ));
        i += 1;
    }
    s
}

#[test]
fn big_file_translates() {
    let src = big_source();
    for target in [Target::Cuda, Target::Cpu] {
        let t = translate(&src, &Options::new(target)).unwrap();
        assert!(t.entries.len() > 200);
    }
}

#[cfg(not(debug_assertions))]
#[test]
fn big_file_translates_under_20_ms() {
    let src = big_source();
    let opts = Options::new(Target::Cuda);
    let _ = translate(&src, &opts).unwrap();
    let best = (0..10)
        .map(|_| {
            let t0 = std::time::Instant::now();
            let _ = translate(&src, &opts).unwrap();
            t0.elapsed()
        })
        .min()
        .unwrap();
    eprintln!("2,000-line translation: {best:?}");
    assert!(best.as_millis() < 20, "translation took {best:?}");
}
