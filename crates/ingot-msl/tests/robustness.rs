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

/// The inputs to mutate: the built-in seeds, plus every `.metal` file of the folder named by
/// `INGOT_MSL_FUZZ_DIR` (long runs over real libraries, kept outside the repository).
fn seeds() -> Vec<String> {
    let mut v: Vec<String> = SEEDS.iter().map(|s| s.to_string()).collect();
    if let Ok(dir) = std::env::var("INGOT_MSL_FUZZ_DIR") {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("INGOT_MSL_FUZZ_DIR={dir}: {e}"))
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "metal"))
            .collect();
        files.sort();
        v.extend(files.iter().filter_map(|p| std::fs::read_to_string(p).ok()));
    }
    v
}

/// Random insertions and deletions over the seeds: `INGOT_MSL_MUTATIONS` rounds (600 by
/// default), from `INGOT_MSL_FUZZ_SEED` (parallel long runs use different seeds).
#[test]
fn random_mutations() {
    let seed_env: u64 = std::env::var("INGOT_MSL_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut state = 0x2545_f491_4f6c_dd1du64 ^ seed_env.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    if state == 0 {
        state = 1;
    }
    let seeds = seeds();
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
        let mut s = seeds[(next() % seeds.len() as u64) as usize].clone();
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
