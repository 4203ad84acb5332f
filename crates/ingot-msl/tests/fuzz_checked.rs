//! Fuzzing of the translator's checked mode and sandbox (and the default translation alongside):
//! random kernels built from a small MSL grammar rich in pointers, and random mutations of real
//! kernels, must give a translation or a located error, never a panic or a hang.
//!
//! `cargo test -p ingot-msl --test fuzz_checked` runs a short, seeded round (CI).
//! Longer runs: `INGOT_MSL_FUZZ_CASES=200000 INGOT_MSL_FUZZ_SEED=<n> cargo test --release -p
//! ingot-msl --test fuzz_checked -- --nocapture` (results in FUZZING.md).

use std::time::{Duration, Instant};

use ingot_msl::{reflect, sandbox, translate, Options, Target};

const SEEDS: &[&str] = &[
    include_str!("robustness_inputs/mixed.metal"),
    include_str!("robustness_inputs/macros.metal"),
    include_str!("robustness_inputs/mlx_style.metal"),
    include_str!("robustness_inputs/ggml_style.metal"),
    r#"#include <metal_stdlib>
using namespace metal;
struct P { float a; float b; };
float get(device const float* p, uint i) { return p[i]; }
device float* row_of(device float* base, uint r) { return base + r * 4; }
kernel void feat(device const float* x [[buffer(0)]], device float* out [[buffer(1)]],
                 device atomic_uint* count [[buffer(2)]], constant P* ps [[buffer(3)]],
                 threadgroup float* t [[threadgroup(0)]],
                 uint i [[thread_position_in_grid]], uint l [[thread_position_in_threadgroup]]) {
    device const float4* x4 = (device const float4*)x;
    const device float* end = x + 4 * (i + 1);
    device float* r = reinterpret_cast<device float*>(out) + i;
    t[l] = x4[i].x;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (device const float* q = x + 4 * i; q < end; ++q) *r += *q + ps->a + t[0];
    atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
}
"#,
];

/// xorshift64*: a small deterministic generator (no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a>(&mut self, v: &[&'a str]) -> &'a str {
        v[self.below(v.len())]
    }
}

const SPACES: &[&str] = &[
    "device",
    "constant",
    "threadgroup",
    "thread",
    "device const",
    "const device",
    "constant const",
];
const TYPES: &[&str] = &[
    "float",
    "float4",
    "half",
    "uint",
    "int2",
    "P",
    "atomic_int",
    "void",
    "T",
    "vec<float, 2>",
    "metal::float3",
    "packed_float3",
];
const EXPRS: &[&str] = &[
    "x[i]",
    "*x",
    "x + 1",
    "(x + i)[0]",
    "x[i + 1]",
    "y->a",
    "&x[i]",
    "x",
    "nullptr",
    "(device float4*)x",
    "static_cast<device float*>(x)",
    "reinterpret_cast<constant uint*>(x)",
    "x - x",
    "x == y",
    "!x",
    "x++",
    "--x",
    "1.0h",
    "t[i % 4]",
    "get(x, i)",
];
const STMTS: &[&str] = &[
    "x[i] = {e};",
    "{s} {t}* p = {e};",
    "{s} {t}* p = x, *q = y;",
    "if ({e}) {{ threadgroup_barrier(mem_flags::mem_threadgroup); }}",
    "for ({s} {t}* q = x; q < x + 4; ++q) *q = 0;",
    "atomic_fetch_add_explicit(({s} atomic_int*)x, 1, memory_order_relaxed);",
    "auto v = {e};",
    "threadgroup float tile[16]; tile[i % 16] = 1.0f;",
    "return;",
    "asm(\"nop\");",
    "x[i] = system(\"true\");",
    "{s} {t}* {s} * pp = nullptr;",
    "{s} {t}& r = x[0];",
];
const INSERTS: &[&str] = &[
    "device ",
    "constant ",
    "threadgroup ",
    "thread ",
    "*",
    "&",
    "const ",
    "[[",
    "]]",
    "(",
    ")",
    "{",
    "}",
    "<",
    ">",
    ";",
    ",",
    "(device float*)",
    "reinterpret_cast<",
    "static_cast<device ",
    "restrict ",
    "->",
    "::",
    "[",
    "]",
    "#include <stdio.h>\n",
    "#include \"../x.h\"\n",
    "extern \"C\" ",
    "__attribute__((constructor)) ",
    "asm ",
    "std::",
    "__builtin_trap()",
    "#define D device\n",
    "D ",
];

fn program(r: &mut Rng) -> String {
    let mut s =
        String::from("#include <metal_stdlib>\nusing namespace metal;\nstruct P { float a; };\n");
    if r.below(2) == 0 {
        s.push_str("template <typename T>\n");
    }
    s.push_str(&format!(
        "{}kernel void k({} {}* x [[buffer(0)]], {} P* y [[buffer(1)]], threadgroup float* t [[threadgroup(0)]], uint i [[thread_position_in_grid]]) {{\n",
        if r.below(3) == 0 { "[[max_total_threads_per_threadgroup(64)]] " } else { "" },
        r.pick(SPACES),
        r.pick(TYPES),
        r.pick(SPACES),
    ));
    for _ in 0..1 + r.below(8) {
        let st = r.pick(STMTS);
        let st = st
            .replace("{{", "{")
            .replace("}}", "}")
            .replacen("{s}", r.pick(SPACES), 2)
            .replacen("{t}", r.pick(TYPES), 1)
            .replacen("{e}", r.pick(EXPRS), 1);
        s.push_str("    ");
        s.push_str(&st);
        s.push('\n');
    }
    s.push_str("}\n");
    if r.below(3) == 0 {
        s.push_str("template [[host_name(\"k_f\")]] kernel void k<float>(device float*, constant P*, threadgroup float*, uint);\n");
    }
    s
}

fn mutate(r: &mut Rng, src: &str) -> String {
    let mut s = src.to_string();
    for _ in 0..1 + r.below(4) {
        let mut at = r.below(s.len() + 1);
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        match r.below(3) {
            0 => s.insert_str(at, r.pick(INSERTS)),
            1 => {
                let mut end = (at + 1 + r.below(12)).min(s.len());
                while !s.is_char_boundary(end) {
                    end -= 1;
                }
                s.replace_range(at..end, "");
            }
            _ => {
                let mut end = at;
                while end < s.len() && s.as_bytes()[end].is_ascii_alphanumeric() {
                    end += 1;
                }
                s.replace_range(at..end, r.pick(INSERTS).trim());
            }
        }
    }
    s
}

fn exercise(src: &str) {
    let t0 = Instant::now();
    if let Err(e) = reflect(src) {
        assert!(e.line >= 1 && e.column >= 1, "{e}");
    }
    for target in [Target::Cpu, Target::Cuda] {
        for checked in [false, true] {
            let mut o = Options::new(target);
            o.checked = checked;
            if let Err(e) = translate(src, &o) {
                assert!(e.line >= 1 && e.column >= 1, "{e}");
            }
        }
    }
    if let Err(e) = sandbox::check(src, "fuzz.metal", &[], &["metal_stdlib"]) {
        assert!(e.line >= 1 && e.column >= 1, "{e}");
    }
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "took {:?} on:\n{src}",
        t0.elapsed()
    );
}

#[test]
fn random_and_mutated_kernels() {
    let cases: usize = std::env::var("INGOT_MSL_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    let seed: u64 = std::env::var("INGOT_MSL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x1d6f_07c4_a5e3_b2d1);
    let mut r = Rng(seed | 1);
    let t0 = Instant::now();
    for case in 0..cases {
        let src = match case % 3 {
            0 => program(&mut r),
            1 => {
                let p = program(&mut r);
                mutate(&mut r, &p)
            }
            _ => {
                let seed_src = SEEDS[r.below(SEEDS.len())];
                mutate(&mut r, seed_src)
            }
        };
        let ok = std::panic::catch_unwind(|| exercise(&src));
        assert!(ok.is_ok(), "case {case} (seed {seed}) panicked on:\n{src}");
    }
    eprintln!(
        "fuzz_checked: {cases} cases, seed {seed}, {:?}",
        t0.elapsed()
    );
}

#[test]
fn checked_translation_rewrites_every_address_space_pointer() {
    let mut o = Options::new(Target::Cpu);
    o.checked = true;
    let t = translate(SEEDS[4], &o).unwrap();
    let user: String = t
        .text
        .split("#line 1 \"kernel.metal\"")
        .nth(1)
        .unwrap()
        .split("ingot_cpu_feat_sizes")
        .next()
        .unwrap()
        .to_string();
    assert!(!user.contains("float*"), "{user}");
    assert!(user.contains("ingot::chk<const ::metal::float4>"), "{user}");
    assert!(
        user.contains("ingot::chk_cast<ingot::chk<float>>"),
        "{user}"
    );
    assert!(t.text.contains("#include <ingot/checked.h>"));
    assert!(t.text.contains("ingot::chk_make("));
    let mut c = Options::new(Target::Cuda);
    c.checked = true;
    let t = translate(SEEDS[4], &c).unwrap();
    assert!(
        t.text.contains("unsigned long long ingot_len0"),
        "{}",
        t.text
    );
    assert!(t.text.contains("ingot::chk_record* ingot_rec"));
}
