//! Prints how long each phase takes on a generated 2,000-line file (`cargo run --release
//! --example phase_timing`).
use std::time::Instant;

fn main() {
    let mut s = String::from("#include <metal_stdlib>\nusing namespace metal;\n");
    let mut i = 0;
    while s.lines().count() < 2000 {
        s.push_str(&format!(
            "
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
template [[host_name(\"k{i}_f32\")]] [[kernel]] decltype(k{i}<float>) k{i}<float>;
template [[host_name(\"k{i}_f16\")]] [[kernel]] decltype(k{i}<half>) k{i}<half>;
"
        ));
        i += 1;
    }
    for _ in 0..3 {
        let t = Instant::now();
        let toks = ingot_msl::lexer::lex(&s, "f", false).unwrap();
        let t1 = t.elapsed();
        let syn = ingot_msl::syntax::analyse(&s, "f", &toks).unwrap();
        let t2 = t.elapsed();
        let _ = syn;
        let _m = ingot_msl::reflect(&s).unwrap();
        let t3 = t.elapsed();
        let _ =
            ingot_msl::translate(&s, &ingot_msl::Options::new(ingot_msl::Target::Cuda)).unwrap();
        let t4 = t.elapsed();
        println!(
            "lex {t1:?} analyse {:?} reflect {:?} translate {:?}",
            t2 - t1,
            t3 - t2,
            t4 - t3
        );
    }
}
