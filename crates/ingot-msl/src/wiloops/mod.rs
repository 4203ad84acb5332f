//! Work-item loops: a kernel with barriers and SIMD-group functions as one C++ function per
//! threadgroup that runs its threads as loops between split points, instead of one fiber per
//! thread (design note: `docs/cpu-engine.md`).
//!
//! The model is a SIMT machine written out in C++, in the spirit of PoCL's work-item loops and
//! MCUDA's source-level fission:
//!
//! - The kernel body is read as statements ([`stmt`]). A statement *splits* when it holds a
//!   barrier or a SIMD-group function. Consecutive statements without one form a *region*: a
//!   loop over the group's threads, which the compiler may vectorise.
//! - Each thread has an *active mask* entry. `if`s and loops that hold split points run once per
//!   group: their condition is computed per thread into a new mask (the parent's and the
//!   condition), the branch or body runs under it. `return`, `break` and `continue` clear the
//!   thread's entries up the chain. SIMD-group functions therefore see exactly the lanes that
//!   are active at that point of the program, as on Apple's GPUs: lanes reconverge after an `if`.
//! - A barrier ends the current region (every active thread has finished it).
//! - A statement with a SIMD-group function runs in two passes over the active threads: the
//!   first evaluates the call in *deposit* mode (each lane's operand is stored), the second runs
//!   the statement, where the call reads every lane's deposit (`ingot::cpu::wi_group`).
//! - Values declared in a split block and used after a split point live in per-thread arrays
//!   ([`decl`]): the declaration becomes an assignment, each region binds the name to its
//!   thread's element. Parameters the body modifies get per-thread copies.
//!
//! Kernels the former cannot read with certainty (helper functions with barriers or SIMD-group
//! functions, `simdgroup_matrix`, `auto` variables live across a split, a split inside a
//! `switch`, ...) keep the fiber engine; [`form`] says why.

mod decl;
mod emit;
pub(crate) mod inline;
mod stmt;

use std::collections::HashSet;

pub(crate) use emit::Params;

use crate::lexer::{lex, significant, TokenKind};

/// The SIMD-group and quad-group functions of the prelude (each makes one exchange).
pub(crate) const COLLECTIVES: &[&str] = &[
    "simd_sum",
    "simd_product",
    "simd_min",
    "simd_max",
    "simd_and",
    "simd_or",
    "simd_xor",
    "simd_prefix_inclusive_sum",
    "simd_prefix_inclusive_product",
    "simd_prefix_exclusive_sum",
    "simd_prefix_exclusive_product",
    "simd_shuffle",
    "simd_broadcast",
    "simd_broadcast_first",
    "simd_shuffle_down",
    "simd_shuffle_up",
    "simd_shuffle_xor",
    "simd_shuffle_rotate_down",
    "simd_shuffle_rotate_up",
    "simd_shuffle_and_fill_down",
    "simd_shuffle_and_fill_up",
    "simd_ballot",
    "simd_active_threads_mask",
    "simd_all",
    "simd_any",
    "simd_is_first",
    "quad_sum",
    "quad_product",
    "quad_min",
    "quad_max",
    "quad_and",
    "quad_or",
    "quad_xor",
    "quad_prefix_inclusive_sum",
    "quad_prefix_inclusive_product",
    "quad_prefix_exclusive_sum",
    "quad_prefix_exclusive_product",
    "quad_shuffle",
    "quad_broadcast",
    "quad_shuffle_down",
    "quad_shuffle_up",
    "quad_shuffle_xor",
    "quad_broadcast_first",
    "quad_all",
    "quad_any",
    "quad_is_first",
];

/// Forms the body of the group function from the translated kernel body `body` (its braces
/// included). `helpers` names the file's functions that hold barriers or SIMD-group functions;
/// `replay` those of them whose calls run as repeated deposit passes (they only make
/// SIMD-group exchanges and have no effect).
/// Returns the body's code (to be placed inside the group function, after `ingot_n` is
/// declared), or why the kernel keeps fibers.
pub(crate) fn form(
    body: &str,
    params: &Params,
    helpers: &HashSet<String>,
    replay: &HashSet<String>,
) -> Result<String, String> {
    let toks = lex(body, "", false).map_err(|e| format!("the body could not be read ({e})"))?;
    let toks = significant(&toks);
    if toks.len() < 2 || toks[0].text(body) != "{" {
        return Err("the body could not be read".into());
    }
    let collectives: HashSet<String> = COLLECTIVES.iter().map(|s| s.to_string()).collect();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let s = t.text(body);
        let called = toks.get(i + 1).is_some_and(|n| n.text(body) == "(");
        if s.starts_with("simdgroup_") && s != "simdgroup_barrier" {
            return Err("it uses simdgroup_matrix".into());
        }
        if s.starts_with("__metal_simd") || s.starts_with("__metal_quad") {
            return Err(format!("it calls `{s}`"));
        }
        if called
            && (s.starts_with("simd_") || s.starts_with("quad_"))
            && !collectives.contains(s)
            && !replay.contains(s)
            && !s.contains("float")
            && !s.contains("int")
            && !s.contains("half")
        {
            return Err(format!("it calls `{s}`"));
        }
        if helpers.contains(s) && !replay.contains(s) {
            return Err(format!(
                "the helper `{s}` holds a barrier or a SIMD-group function"
            ));
        }
        if matches!(s, "goto" | "asm" | "__asm__" | "setjmp" | "longjmp") {
            return Err(format!("it uses `{s}`"));
        }
    }
    let close = toks.len() - 1;
    let parser = stmt::Parser {
        src: body,
        toks: &toks,
    };
    if parser.close_of(0) != Some(close) {
        return Err("the body could not be read".into());
    }
    let stmts = parser
        .block(1, close)
        .ok_or_else(|| "a statement the former cannot read".to_string())?;
    let mut f = emit::Former::new(body, &toks, &collectives, replay, params);
    let out = f.form(&stmts, stmt::Span { a: 1, b: close });
    match (out, f.refusal) {
        (Some(o), None) => Ok(o),
        (_, Some(why)) => Err(why),
        (None, None) => Err("the body could not be formed".into()),
    }
}
