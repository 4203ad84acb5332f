//! GNU range designators in a local array's initialiser: `float s[N] = { [0 ... N-1] = v };`
//! (ggml, candle's quantized kernels). Metal's compiler (clang) accepts them; C++ compilers do
//! not (g++: "expected identifier before numeric constant"). Such a declaration inside a
//! function body becomes the array followed by a loop that stores `v` at each index of the
//! range, on the same line: `float s[N]; for (int ingot_rK = 0; ingot_rK <= N-1; ++ingot_rK)
//! s[ingot_rK] = (v);`. Other forms (several designators, namespace scope, `const` arrays) are
//! left as they are.

use crate::edit::Edit;

impl Edit<'_> {
    /// The token matching the bracket at `open` (`(`/`[`/`{`), forwards.
    pub(crate) fn matching(&self, open: usize, o: &str, c: &str) -> Option<usize> {
        let mut depth = 0i32;
        for k in open..self.toks.len() {
            if self.is(k, o) {
                depth += 1;
            } else if self.is(k, c) {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
        }
        None
    }

    /// Whether token `i` is inside a function body (the nearest enclosing `{` follows `)`, a
    /// statement or another block).
    fn in_body(&self, i: usize) -> bool {
        let mut depth = 0i32;
        for k in (0..i).rev() {
            if self.is(k, "}") {
                depth += 1;
            } else if self.is(k, "{") {
                if depth == 0 {
                    return k > 0
                        && matches!(self.text(k - 1), ")" | "{" | "}" | ";" | "else" | "do");
                }
                depth -= 1;
            }
        }
        false
    }

    pub(crate) fn range_initialisers(&mut self) {
        let n = self.toks.len();
        for eq in 0..n {
            if !(self.is(eq, "=") && self.is(eq + 1, "{") && self.is(eq + 2, "[")) {
                continue;
            }
            let (brace, lb) = (eq + 1, eq + 2);
            let (Some(rb), Some(close)) =
                (self.matching(lb, "[", "]"), self.matching(brace, "{", "}"))
            else {
                continue;
            };
            let Some(dots) = (lb + 1..rb).find(|&k| self.is(k, "...")) else {
                continue;
            };
            if !self.is(rb + 1, "=") || !self.is(close + 1, ";") || rb + 2 >= close {
                continue;
            }
            // One designator: no `,` at depth 0 in the value.
            let mut depth = 0i32;
            let several = (rb + 2..close).any(|k| {
                match self.text(k) {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    "," if depth == 0 => return true,
                    _ => {}
                }
                false
            });
            // The declarator: `NAME [ dims ]` right before the `=`.
            if several || !self.is(eq - 1, "]") {
                continue;
            }
            let mut k = eq - 1;
            let mut d = 0i32;
            let open = loop {
                if self.is(k, "]") {
                    d += 1;
                } else if self.is(k, "[") {
                    d -= 1;
                    if d == 0 {
                        break Some(k);
                    }
                }
                if k == 0 {
                    break None;
                }
                k -= 1;
            };
            let Some(open) = open else { continue };
            if open == 0
                || self.toks[open - 1].kind != crate::lexer::TokenKind::Ident
                || !self.in_body(eq)
                || self.split_replacement(eq, close)
            {
                continue;
            }
            // `const` arrays cannot be stored into afterwards.
            let mut s = open - 1;
            while s > 0 && !matches!(self.text(s - 1), ";" | "{" | "}" | ")") {
                s -= 1;
                if self.is(s, "const") || self.is(s, "constexpr") || self.is(s, "static") {
                    break;
                }
            }
            if self.is(s, "const") || self.is(s, "constexpr") || self.is(s, "static") {
                continue;
            }
            let name = self.out(open - 1);
            let lo = self.line_text(lb + 1, dots - 1);
            let hi = self.line_text(dots + 1, rb - 1);
            let val = self.line_text(rb + 2, close - 1);
            let r = format!("ingot_r{eq}");
            self.repl[eq] = Some(format!(
                "; for (int {r} = ({lo}); {r} <= ({hi}); ++{r}) {name}[{r}] = ({val})"
            ));
            for j in eq + 1..=close {
                self.prefix.remove(&j);
                self.repl[j] = Some(String::new());
            }
        }
    }
}
