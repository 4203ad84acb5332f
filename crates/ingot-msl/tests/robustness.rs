//! Truncated and mutated inputs give a translation or a located error, never a panic.
//! (The cargo-fuzz target in `fuzz/` does the same at a much larger scale.)

use ingot_msl::{reflect, translate, Options, Target};

const SEEDS: &[&str] = &[
    include_str!("robustness_inputs/mixed.metal"),
    include_str!("robustness_inputs/macros.metal"),
    include_str!("robustness_inputs/mlx_style.metal"),
    include_str!("robustness_inputs/ggml_style.metal"),
    "template <typename T, int N = 2> [[kernel]] void f(device vec<T, N>* a [[buffer(0)]], threadgroup T* s [[threadgroup(0)]], uint3 g [[thread_position_in_grid]]) { threadgroup T t[N][4], u; a[g.x].xy = a[g.y].yx; }\ntemplate [[host_name(\"f_f\")]] [[kernel]] decltype(f<float, 2>) f<float, 2>;\n",
];

const INSERTS: &[&str] = &[
    "[[",
    "]]",
    "{",
    "}",
    "(",
    ")",
    "<",
    ">",
    "#",
    "\"",
    "'",
    "\\\n",
    "template ",
    "kernel ",
    "threadgroup ",
    "constant ",
    ";",
    ",",
    "[[buffer(",
    "#define X(a) a##a\n",
    "#if 1\n",
    "::",
    ".xy",
    "1.0h",
    "é",
];

fn check(src: &str) {
    if let Err(e) = reflect(src) {
        assert!(e.line >= 1 && e.column >= 1, "{e}");
    }
    for target in [Target::Cuda, Target::Cpu] {
        let mut o = Options::new(target);
        o.constants.insert("has_bias".into(), "true".into());
        let _ = translate(src, &o);
        let _ = translate(src, &Options::new(target));
    }
}

#[test]
fn every_prefix() {
    for s in SEEDS {
        for (i, _) in s.char_indices().step_by(7) {
            check(&s[..i]);
        }
    }
}

#[test]
fn random_mutations() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let rounds: usize = std::env::var("INGOT_MSL_MUTATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    for _ in 0..rounds {
        let seed = SEEDS[(next() % SEEDS.len() as u64) as usize];
        let mut s = seed.to_string();
        for _ in 0..(1 + next() % 4) {
            let mut at = (next() % (s.len() as u64 + 1)) as usize;
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            if next() % 2 == 0 {
                s.insert_str(at, INSERTS[(next() % INSERTS.len() as u64) as usize]);
            } else {
                let mut end = (at + 1 + (next() % 8) as usize).min(s.len());
                while !s.is_char_boundary(end) {
                    end += 1;
                }
                s.replace_range(at..end, "");
            }
        }
        check(&s);
    }
}
