//! Shuffles whose source lane may be outside the branch (CUDA target).
//!
//! `if (l >= d) x += simd_shuffle_up(x, d);` reads lanes that do not take the branch. Apple's
//! GPUs give the source lane's current value and real scans rely on it; CUDA's `__shfl_sync`
//! is undefined for a source lane outside its mask. When the guarded statement is one expression
//! statement holding one shuffle or broadcast whose arguments only read variables, and the
//! condition only reads variables, the shuffle is evaluated by the whole SIMD-group before the
//! guard:
//!
//! ```text
//! if (c) x += simd_shuffle_up(x, d);   =>   { auto ingot_shfl1 = simd_shuffle_up(x, d); if (c) x += ingot_shfl1; }
//! ```
//!
//! Nothing else in the statement runs earlier, and the value is the same for the lanes that
//! take the branch. (The CPU's work-item loop engine gives the same values without this: lanes
//! outside the branch offer their operand to the shuffle.)

use crate::edit::Edit;
use crate::lexer::TokenKind;

const SHUFFLES: &[&str] = &[
    "simd_shuffle",
    "simd_shuffle_up",
    "simd_shuffle_down",
    "simd_shuffle_xor",
    "simd_shuffle_rotate_up",
    "simd_shuffle_rotate_down",
    "simd_broadcast",
    "quad_shuffle",
    "quad_shuffle_up",
    "quad_shuffle_down",
    "quad_shuffle_xor",
    "quad_broadcast",
];

impl Edit<'_> {
    pub(crate) fn guarded_shuffles(&mut self) {
        let n = self.toks.len();
        let mut count = 0;
        for i in 0..n {
            if !self.is(i, "if") || self.ctx.get(i) != Some(&crate::syntax::Ctx::Body) {
                continue;
            }
            let Some(close) = self.closing(i + 1) else {
                continue;
            };
            if !self.is(i + 1, "(") || !self.pure(i + 2, close) {
                continue;
            }
            // The guarded statement: `stmt;` or `{ stmt; }`.
            let (a, braced) = if self.is(close + 1, "{") {
                (close + 2, true)
            } else {
                (close + 1, false)
            };
            let Some(semi) =
                (a..n).find(|&k| self.is(k, ";") || self.is(k, "{") || self.is(k, "}"))
            else {
                continue;
            };
            if !self.is(semi, ";") || (braced && !self.is(semi + 1, "}")) {
                continue;
            }
            let end = if braced { semi + 1 } else { semi };
            if self.is(end + 1, "else")
                || matches!(
                    self.text(a),
                    "if" | "for" | "while" | "do" | "return" | "switch"
                )
            {
                continue;
            }
            let calls: Vec<usize> = (a..semi)
                .filter(|&k| {
                    self.toks[k].kind == TokenKind::Ident
                        && (self.text(k).starts_with("simd_") || self.text(k).starts_with("quad_"))
                        && self.is(k + 1, "(")
                })
                .collect();
            if calls.len() != 1 || !SHUFFLES.contains(&self.text(calls[0])) {
                continue;
            }
            let c = calls[0];
            let Some(cc) = self.closing(c + 1) else {
                continue;
            };
            if !self.pure(c + 2, cc)
                || (c..=cc).any(|k| self.repl[k].is_some() || self.prefix.contains_key(&k))
            {
                continue;
            }
            if self.split_replacement(i, end) {
                continue;
            }
            count += 1;
            let name = format!("ingot_shfl{count}");
            let call = self.line_text(c, cc);
            self.wrap(i, end, &format!("{{ auto {name} = {call}; "), " }");
            self.repl[c] = Some(name);
            for k in c + 1..=cc {
                self.repl[k] = Some(String::new());
            }
        }
    }

    /// The `)` closing the `(` at `open`.
    fn closing(&self, open: usize) -> Option<usize> {
        if !self.is(open, "(") {
            return None;
        }
        let mut d = 0;
        for k in open..self.toks.len() {
            if self.is(k, "(") {
                d += 1;
            } else if self.is(k, ")") {
                d -= 1;
                if d == 0 {
                    return Some(k);
                }
            } else if self.is(k, ";") || self.is(k, "{") || self.is(k, "}") {
                return None;
            }
        }
        None
    }

    /// Tokens `a..b` only read variables (see `purity::reads_only`).
    fn pure(&self, a: usize, b: usize) -> bool {
        crate::purity::reads_only(self.src, self.toks, a, b)
    }
}
