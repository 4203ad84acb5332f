//! Checked mode ([`crate::Options::checked`]): bounds-checked pointers.
//!
//! Every pointer type with an address space in the user's code (`device float*`,
//! `const constant Params*`, `threadgroup half*`: parameters, locals, helper parameters, casts)
//! is written `ingot::chk<T>` (`prelude/ingot/checked.h`), a pointer that carries the buffer it
//! points into. The wrappers build each buffer parameter from the bound buffer's length and
//! each `[[threadgroup(n)]]` parameter from the threadgroup allocation's length, and hand every
//! pointer the launch's fault record (see ABI.md, "Checked mode"):
//!
//! - CPU: `args[nslots + k]` is slot k's length in bytes, `args[2 * nslots]` the record.
//! - CUDA: after the slots, one `unsigned long long` length per slot, then the record pointer.
//!
//! Not rewritten: pointers without an address space (`thread` pointers are the thread's own),
//! `device void*`, pointers to pointers, pointer members of structs (their layout is the host's),
//! and threadgroup arrays declared in a function body (`threadgroup float tile[64]`: indexed
//! directly, they are not pointers; a pointer made from one is unchecked).

use crate::lexer::{Token, TokenKind};
use crate::reflect::is_threadgroup_var_decl;
use crate::syntax::{Ctx, Syntax};

/// The preprocessor line that turns on the runtime's checked paths (first in the translation).
pub(crate) const DEFINE: &str = "#define INGOT_CHECKED 1\n";
/// The include that declares `ingot::chk` (after the prelude).
pub(crate) const INCLUDE: &str = "#include <ingot/checked.h>\n";

/// Tokens `first..=last` to be replaced by `text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Replacement {
    pub first: usize,
    pub last: usize,
    pub text: String,
}

/// The replacements that make every address-space pointer type of the user's code checked.
/// `replaced(k)` is token k's replacement so far, if any (an instantiation line blanked out, a
/// threadgroup declaration, a program-scope `constant`); `type_text` writes a type for the
/// target.
pub(crate) fn pointer_types<'r>(
    src: &str,
    toks: &[Token],
    syn: &Syntax,
    replaced: impl Fn(usize) -> Option<&'r str>,
    type_text: impl Fn(&str) -> String,
) -> Vec<Replacement> {
    let done = |k: usize| replaced(k).is_some();
    let txt = |k: usize| toks.get(k).map(|t| t.text(src)).unwrap_or("");
    let mut out = Vec::new();
    let n = toks.len();
    let mut i = 0;
    while i < n {
        let t = toks[i];
        let s = txt(i);
        let is_space =
            t.kind == TokenKind::Ident && matches!(s, "device" | "constant" | "threadgroup");
        let after_member = i > 0 && matches!(txt(i - 1), "." | "->" | "::");
        if !is_space
            || after_member
            || replaced(i) == Some("INGOT_PROGRAM_CONSTANT")
            || syn.ctx.get(i) == Some(&Ctx::Class)
            || (s == "threadgroup" && is_threadgroup_var_decl(src, toks, &syn.ctx, i))
        {
            i += 1;
            continue;
        }
        let Some(r) = pointer_at(i, n, &txt, &done, &type_text) else {
            i += 1;
            continue;
        };
        i = r.0.last + 1;
        out.push(r.0);
        out.extend(r.1);
    }
    out
}

/// The rewrite of the pointer type whose address-space keyword is token `i`, and the extra
/// replacements around it (a `restrict` after the star, a cast keyword before it).
fn pointer_at<'s>(
    i: usize,
    n: usize,
    txt: &impl Fn(usize) -> &'s str,
    done: &impl Fn(usize) -> bool,
    type_text: &impl Fn(&str) -> String,
) -> Option<(Replacement, Vec<Replacement>)> {
    let mut first = i;
    // Metal's `constant` address space is read-only: `constant P*` is a pointer to const (the
    // wrappers pass it as one).
    let mut is_const = txt(i) == "constant";
    if i > 0 && txt(i - 1) == "const" {
        first = i - 1;
        is_const = true;
    }
    let mut words: Vec<&str> = Vec::new();
    let mut depth = 0i32;
    let mut j = i + 1;
    let star = loop {
        if j >= n || j > i + 64 {
            return None;
        }
        let w = txt(j);
        match w {
            "<" => depth += 1,
            ">" => depth -= 1,
            "*" if depth == 0 => break j,
            "&" | "&&" | "(" | ")" | ";" | "=" | "[" | "]" | "{" | "}" | "device" | "constant"
            | "threadgroup" | "thread"
                if depth == 0 =>
            {
                return None
            }
            "," if depth == 0 => return None,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        if depth == 0 && w == "const" {
            is_const = true;
        } else {
            words.push(w);
        }
        j += 1;
    };
    if done(star) || txt(star + 1) == "*" {
        return None;
    }
    let named = words.iter().any(|w| {
        w.chars()
            .next()
            .is_some_and(|c| c.is_alphabetic() || c == '_')
    });
    if !named || words == ["void"] || words == ["volatile", "void"] {
        return None;
    }
    let ty = type_text(&crate::reflect::join_words(&words));
    let text = format!("ingot::chk<{}{ty}>", if is_const { "const " } else { "" });
    let mut extra = Vec::new();
    let mut k = star + 1;
    while matches!(
        txt(k),
        "restrict" | "__restrict" | "__restrict__" | "INGOT_RESTRICT"
    ) {
        extra.push(Replacement {
            first: k,
            last: k,
            text: String::new(),
        });
        k += 1;
    }
    if first >= 2
        && txt(first - 1) == "<"
        && matches!(
            txt(first - 2),
            "reinterpret_cast" | "static_cast" | "const_cast"
        )
    {
        extra.push(Replacement {
            first: first - 2,
            last: first - 2,
            text: "ingot::chk_cast".to_string(),
        });
    }
    Some((
        Replacement {
            first,
            last: star,
            text,
        },
        extra,
    ))
}

/// CPU wrapper: the value of buffer parameter `param` (slot `slot` of `nslots`).
pub(crate) fn cpu_buffer_arg(ptr_ty: &str, slot: usize, nslots: usize, param: usize) -> String {
    format!(
        "ingot::chk_make(({ptr_ty})args[{slot}], (unsigned long long)(__UINTPTR_TYPE__)args[{len}], {param}u, (ingot::chk_record*)args[{rec}])",
        len = nslots + slot,
        rec = 2 * nslots,
    )
}

/// CPU wrapper: the value of `[[threadgroup(n)]]` parameter `param`.
pub(crate) fn cpu_threadgroup_arg(ptr_ty: &str, n: u32, nslots: usize, param: usize) -> String {
    format!(
        "ingot::chk_make(({ptr_ty})ingot::cpu::tgmem({n}u), (unsigned long long)L->tgmem_size[{n}], {param}u, (ingot::chk_record*)args[{rec}])",
        n = n & 7,
        rec = 2 * nslots,
    )
}

/// CPU wrapper: the statement that tells a fault the running thread's position.
pub(crate) const CPU_THREAD: &str = "ingot::chk_pos = t.thread_position_in_grid;";

/// CUDA wrapper: the extra parameters after the slots.
pub(crate) fn cuda_params(slots: &[usize]) -> Vec<String> {
    let mut v: Vec<String> = slots
        .iter()
        .map(|s| format!("unsigned long long ingot_len{s}"))
        .collect();
    v.push("ingot::chk_record* ingot_rec".to_string());
    v
}

/// CUDA wrapper: the value of buffer parameter `param` in slot `slot`.
pub(crate) fn cuda_buffer_arg(slot: usize, param: usize) -> String {
    format!("ingot::chk_make(a{slot}, ingot_len{slot}, {param}u, ingot_rec)")
}

/// CUDA wrapper: the value of `[[threadgroup(n)]]` parameter `param`.
pub(crate) fn cuda_threadgroup_arg(ptr_ty: &str, n: u32, param: usize) -> String {
    format!(
        "ingot::chk_make(({ptr_ty})(ingot_smem + L.tgmem_offset[{n}]), (unsigned long long)L.tgmem_size[{n}], {param}u, ingot_rec)",
        n = n & 7
    )
}

/// Adds checked mode's define (first) and include (after the prelude's) to a translation's
/// header (which ends with the `#line 1` of the user's file).
pub(crate) fn add_to_header(text: &mut String) {
    let at = text.find('\n').map_or(0, |k| k + 1);
    text.insert_str(at, DEFINE);
    let line = text.rfind("#line 1 ").unwrap_or(text.len());
    text.insert_str(line, INCLUDE);
}
