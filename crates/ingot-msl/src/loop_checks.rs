//! Checked mode on the CPU: every loop tests, on each iteration, whether the launch was asked to
//! stop (Ctrl-C, interpreter exit), so that a single threadgroup that never ends can be
//! interrupted. The condition of `while (c)`, `do ... while (c)` and `for (i; c; s)` becomes
//! `ingot::chk_running() && (c)` (an empty `for` condition becomes `ingot::chk_running()`); the
//! loop then ends at its next iteration and the engine reports the interrupt. Range-based `for`
//! has no condition to extend and is left as it is. `chk_running` (prelude `checked.h`) is one
//! thread-local read and one load, and `true` in constant evaluation, so `constexpr` functions
//! with loops keep working.

use crate::edit::Edit;

/// The test every checked loop makes.
const RUNNING: &str = "ingot::chk_running()";

impl Edit<'_> {
    /// A removed token (a left-out kernel, a disabled function-constant branch).
    fn removed(&self, i: usize) -> bool {
        matches!(&self.repl[i], Some(r) if r.is_empty())
    }

    pub(crate) fn loop_checks(&mut self) {
        for kw in 0..self.toks.len() {
            let is_while = self.is(kw, "while");
            if !(is_while || self.is(kw, "for")) || !self.is(kw + 1, "(") || self.removed(kw) {
                continue;
            }
            let open = kw + 1;
            let Some(close) = self.matching(open, "(", ")") else {
                continue;
            };
            if close == open + 1 || self.removed(open) || self.removed(close) {
                continue;
            }
            let (first, last) = if is_while {
                (open + 1, close - 1)
            } else {
                // The two `;` at the parenthesis' own depth; none: a range-based `for`.
                let mut depth = 0i32;
                let mut semis = Vec::new();
                for k in open + 1..close {
                    match self.text(k) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth -= 1,
                        ";" if depth == 0 => semis.push(k),
                        _ => {}
                    }
                }
                let &[s1, s2] = semis.as_slice() else {
                    continue;
                };
                if s2 == s1 + 1 {
                    self.prefix
                        .entry(s2)
                        .or_default()
                        .push_str(&format!(" {RUNNING} "));
                    continue;
                }
                (s1 + 1, s2 - 1)
            };
            if self.split_replacement(first, last) {
                continue;
            }
            self.wrap(first, last, &format!("{RUNNING} && ("), ")");
        }
    }
}
