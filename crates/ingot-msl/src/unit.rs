//! The unit of one entry point: which kernels a per-entry translation leaves out.
//!
//! A library of hundreds of kernels is compiled one entry point at a time
//! ([`crate::Options::entries`]): the translation keeps every declaration the entry may need
//! (types, helpers, templates, constants) but drops the definitions of the other kernels, so
//! the target compiler neither spends time on them nor sees their errors.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::lexer::{Token, TokenKind};
use crate::reflect::Module;
use crate::syntax::Syntax;

/// The host names of `names`, checked against the module's entry points.
pub(crate) fn select(module: &Module, names: &[String], file: &str) -> Result<HashSet<String>> {
    for n in names {
        if module.entry(n).is_none() {
            let all: Vec<&str> = module
                .entry_points
                .iter()
                .map(|e| e.name.as_str())
                .collect();
            return Err(Error::new(
                file,
                1,
                1,
                format!(
                    "no kernel function named `{n}` in this file; available: {}",
                    match all.len() {
                        0 => "none".to_string(),
                        n if n > 24 => format!("{}, ... ({n} in all)", all[..24].join(", ")),
                        _ => all.join(", "),
                    }
                ),
            ));
        }
    }
    Ok(names.iter().cloned().collect())
}

/// Token ranges (inclusive) of the kernel definitions outside `keep` (indices into the
/// syntax's functions) that nothing else names: left out of a per-entry translation.
///
/// A kernel whose name appears outside its own definition and the explicit instantiations
/// (`typedef decltype(k<half>) k_t;`) is kept, since removing it would break that use.
pub(crate) fn unused_kernels(
    src: &str,
    toks: &[Token],
    syn: &Syntax,
    keep: &HashSet<usize>,
) -> Vec<(usize, usize)> {
    let mut candidates: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (d, f) in syn.functions.iter().enumerate() {
        if f.kernel_tok.is_none() || keep.contains(&d) || f.owner.is_some() {
            continue;
        }
        candidates
            .entry(f.name.as_str())
            .or_default()
            .push((f.decl_start, f.body_close));
    }
    // Kept kernels of the same name (overloads, a template and a plain kernel) keep theirs.
    for &d in keep {
        if let Some(f) = syn.functions.get(d) {
            candidates.remove(f.name.as_str());
        }
    }
    let instantiations: Vec<(usize, usize)> = syn
        .instantiations
        .iter()
        .map(|i| (i.start, i.end))
        .collect();
    let inside =
        |ranges: &[(usize, usize)], i: usize| ranges.iter().any(|&(a, b)| a <= i && i <= b);
    let mut named_elsewhere: HashSet<&str> = HashSet::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let s = t.text(src);
        if let Some(ranges) = candidates.get(s) {
            if !inside(ranges, i) && !inside(&instantiations, i) {
                named_elsewhere.insert(s);
            }
        }
    }
    let mut out: Vec<(usize, usize)> = candidates
        .iter()
        .filter(|(name, _)| !named_elsewhere.contains(*name))
        .flat_map(|(_, r)| r.iter().copied())
        .collect();
    out.sort_unstable();
    out
}

#[cfg(test)]
mod tests {
    use crate::{translate, Options, Target};

    const LIB: &str = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> T twice(T x) { return x + x; }
kernel void k_a(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = twice(1.0f); }
kernel void k_b(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = this is not C++; }
template <typename T>
kernel void k_t(device T* o [[buffer(0)]], uint i [[thread_position_in_grid]]) { o[i] = T(2); }
template [[host_name("k_t_float")]] kernel void k_t<float>(device float*, uint);
template [[host_name("k_t_int")]] kernel void k_t<int>(device int*, uint);
"#;

    fn unit(target: Target, names: &[&str]) -> crate::Translation {
        let mut o = Options::new(target);
        o.entries = Some(names.iter().map(|s| s.to_string()).collect());
        translate(LIB, &o).unwrap()
    }

    #[test]
    fn one_entry_drops_the_other_kernels() {
        for target in [Target::Cpu, Target::Cuda] {
            let t = unit(target, &["k_a"]);
            assert_eq!(t.entries.len(), 1, "{target}");
            assert!(t.entries.contains_key("k_a"));
            assert!(
                !t.text.contains("not C++"),
                "{target}: k_b's body is left out"
            );
            assert!(!t.text.contains("ingot_kernel_k_t"), "{target}");
            assert!(t.text.contains("twice"), "{target}: helpers stay");
            // Every entry is still reflected.
            assert_eq!(t.module.entry_points.len(), 4);
            // Line numbers are kept: the user's line 5 is still line 5 after the header.
            let whole = translate(LIB, &Options::new(target)).unwrap();
            assert_eq!(
                t.text.lines().position(|l| l.contains("ingot_kernel_k_a")),
                whole
                    .text
                    .lines()
                    .position(|l| l.contains("ingot_kernel_k_a"))
            );
        }
    }

    #[test]
    fn an_instantiation_keeps_its_template_only() {
        let t = unit(Target::Cpu, &["k_t_int"]);
        assert_eq!(t.entries.keys().collect::<Vec<_>>(), ["k_t_int"]);
        assert!(t.text.contains("ingot_kernel_k_t"));
        assert!(!t.text.contains("ingot_kernel_k_a"));
        assert!(!t.text.contains("not C++"));
    }

    #[test]
    fn unknown_entry_is_an_error() {
        let mut o = Options::new(Target::Cpu);
        o.entries = Some(vec!["nope".into()]);
        let e = translate(LIB, &o).unwrap_err();
        assert!(e.message.contains("no kernel function named `nope`"), "{e}");
        assert!(e.message.contains("k_a"), "{e}");
    }

    #[test]
    fn a_kernel_named_elsewhere_is_kept() {
        let src = "kernel void a(device float* o [[buffer(0)]]) { o[0] = 1; }\n\
                   kernel void b(device float* o [[buffer(0)]]) { o[0] = 2; }\n\
                   typedef decltype(b) b_t;\n";
        let mut o = Options::new(Target::Cpu);
        o.entries = Some(vec!["a".into()]);
        let t = translate(src, &o).unwrap();
        assert!(t.text.contains("o[0] = 2"));
    }

    const FC: &str = r#"
constant bool has_w [[function_constant(20)]];
constant int FC_BASE = 100;
constant int scale [[function_constant(FC_BASE + 1)]];
constant bool wide [[function_constant(FC_BASE * 2)]];
kernel void uses_w(device float* o [[buffer(0)]], device const float* w [[buffer(1), function_constant(has_w)]], uint i [[thread_position_in_grid]]) {
    o[i] = has_w ? w[i] * scale : float(scale);
}
kernel void plain(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    o[i] = is_function_constant_defined(wide) ? 1.0f : 2.0f;
}
kernel void uses_wide(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    if (wide) { o[i] = 3.0f; }
}
"#;

    #[test]
    fn constants_are_needed_only_by_the_entries_that_use_them() {
        let m = crate::reflect(FC).unwrap();
        let idx: Vec<Option<u32>> = m.function_constants.iter().map(|c| c.index).collect();
        assert_eq!(idx, [Some(20), Some(101), Some(200)]);
        let mut o = Options::new(Target::Cpu);
        o.entries = Some(vec!["plain".into()]);
        let t = translate(FC, &o).unwrap();
        assert!(t.text.contains("? 1.0f : 2.0f") || t.text.contains("false ?"));
        o.entries = Some(vec!["uses_w".into()]);
        let e = translate(FC, &o).unwrap_err();
        assert!(e.message.contains("kernel `uses_w`"), "{e}");
        assert!(e.message.contains("`has_w` (bool, index 20)"), "{e}");
        assert!(e.message.contains("`scale` (int, index 101)"), "{e}");
        assert!(!e.message.contains("wide"), "{e}");
        o.constants.insert("20".into(), "true".into());
        o.constants.insert("scale".into(), "3".into());
        let t = translate(FC, &o).unwrap();
        assert!(t.module.entry("uses_w").unwrap().params[1].active);
        o.entries = Some(vec!["plain".into()]);
        o.constants.clear();
        o.constants.insert("wide".into(), "true".into());
        let t = translate(FC, &o).unwrap();
        assert!(t.text.contains("true ? "), "{}", t.text);
    }

    #[test]
    fn a_constant_tested_for_definition_needs_no_value() {
        let src = "constant int k [[function_constant(1)]];\n\
                   kernel void p(device int* o [[buffer(0)]]) { o[0] = is_function_constant_defined(k) ? k : -1; }\n";
        let mut o = Options::new(Target::Cpu);
        o.entries = Some(vec!["p".into()]);
        let t = translate(src, &o).unwrap();
        assert!(t.text.contains("int k = int();"), "{}", t.text);
        assert!(t.text.contains("false ? "), "{}", t.text);
        o.constants.insert("k".into(), "4".into());
        let t = translate(src, &o).unwrap();
        assert!(t.text.contains("int k = 4;"), "{}", t.text);
        assert!(t.text.contains("true ? "), "{}", t.text);
    }

    #[test]
    fn reflection_needs_no_constants() {
        let o = Options::new(Target::Cpu);
        let m = crate::reflect_with(FC, &o).unwrap();
        assert_eq!(m.entry_points.len(), 3);
        let w = &m.entry("uses_w").unwrap().params[1];
        assert!(!w.active, "a gate without a value is false");
        let mut o = Options::new(Target::Cpu);
        o.constants.insert("has_w".into(), "true".into());
        let m = crate::reflect_with(FC, &o).unwrap();
        assert!(m.entry("uses_w").unwrap().params[1].active);
    }
}
