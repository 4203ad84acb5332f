//! The conditional operator with Metal's operand conversions.
//!
//! In the preludes `half` and `bfloat` are classes that convert implicitly to and from `float`
//! and the integers (Metal code relies on both directions: `half h = 1.0f;`, `float f = h;`).
//! C++ rejects `c ? h : 1.0f` and `c ? 0 : h` for such a class as ambiguous (each operand
//! converts to the other's type), where Metal applies the usual arithmetic conversions: half
//! against float gives float, an integer against half gives half. No class design removes the
//! ambiguity without breaking one of the implicit directions, so the translation states the
//! conversion: each operand `x` of a conditional with other operand `y` becomes
//! `static_cast<ingot::tern_t<decltype((x)), decltype((y))>>(x)`. `tern_t` is `decltype((x))`
//! itself (lvalues stay lvalues, `void` stays `void`) except for the half/bfloat mixes above,
//! so every conditional C++ already accepted keeps its meaning.
//!
//! Only conditionals in function bodies are rewritten. Operands are found on the token
//! stream. The second operand ends at the matching `:`; the
//! third at the first `,` `;` `)` `]` `}` or unmatched `:` outside brackets. A `<` or `>` there
//! may close a template argument list the conditional sits in (`A<c ? 1 : 2>`), so a third
//! operand with an angle bracket the scan cannot place (`static_cast<T>(...)` pairs, a
//! comparison in a nested conditional's condition is one) is left alone, as are operands with
//! preprocessor lines or lambdas: those conditionals are written as they were.

use crate::edit::Edit;
use crate::lexer::TokenKind;

/// Longest operand text copied into a `decltype` (nested conditionals copy their operands
/// again at each level).
const MAX_COPY: usize = 2000;

impl Edit<'_> {
    /// Token `i` touches token `i + 1` (`>` `>` is a shift or two closers, `<` `=` is `<=`).
    fn adjacent(&self, i: usize) -> bool {
        match (self.toks.get(i), self.toks.get(i + 1)) {
            (Some(a), Some(b)) => a.end == b.start,
            _ => false,
        }
    }

    /// Rewrites every conditional operator of the translation (innermost first, so an outer
    /// one copies its operands with the inner rewrites done).
    pub(crate) fn ternaries(&mut self) {
        let qs: Vec<usize> = (0..self.toks.len()).filter(|&i| self.is(i, "?")).collect();
        for &q in qs.iter().rev() {
            // Only in function bodies: a conditional in a class or namespace scope constant is
            // left alone (g++ 12 crashes on `decltype` of a template parameter in a static
            // member's initialiser, MLX's steel loaders), and mixes half there are rare.
            if self.ctx.get(q) != Some(&crate::syntax::Ctx::Body) {
                continue;
            }
            if let Some((colon, end)) = self.operands(q) {
                self.conditional(q + 1, colon - 1, colon + 1, end);
            }
        }
    }

    /// The `:` of the conditional at `q` and the last token of its third operand.
    fn operands(&self, q: usize) -> Option<(usize, usize)> {
        let n = self.toks.len();
        let mut depth = 0i32;
        let mut pending = 0i32;
        let mut k = q + 1;
        let colon = loop {
            if k >= n {
                return None;
            }
            if self.is(k, "(") || self.is(k, "[") || self.is(k, "{") {
                depth += 1;
            } else if self.is(k, ")") || self.is(k, "]") || self.is(k, "}") {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            } else if depth == 0 && self.is(k, ";") {
                return None;
            } else if depth == 0 && self.is(k, "?") {
                pending += 1;
            } else if depth == 0 && self.is(k, ":") {
                if pending == 0 {
                    break k;
                }
                pending -= 1;
            }
            k += 1;
        };
        if colon == q + 1 {
            return None;
        }
        let mut depth = 0i32;
        let mut angle = 0i32;
        let mut pending = 0i32;
        // A bare `<` or `>` seen: a comparison if a nested conditional follows (`c1 ? x :
        // v > 0 ? y : z`), else it may close a template argument list around us.
        let mut unsure = false;
        let mut k = colon + 1;
        let mut last = None;
        while k < n {
            let t = self.toks[k];
            if t.kind == TokenKind::AttrOpen || t.kind == TokenKind::AttrClose {
                return None;
            }
            let opener = self.is(k, "(") || self.is(k, "[") || self.is(k, "{");
            let closer = self.is(k, ")") || self.is(k, "]") || self.is(k, "}");
            if opener {
                depth += 1;
            } else if closer {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            } else if depth == 0 {
                if self.is(k, ",") || self.is(k, ";") {
                    if angle > 0 {
                        return None;
                    }
                    break;
                }
                if self.is(k, "?") {
                    pending += 1;
                    unsure = false;
                } else if self.is(k, ":") {
                    if pending == 0 {
                        break;
                    }
                    pending -= 1;
                } else if self.is(k, "<") {
                    if self.adjacent(k) && (self.is(k + 1, "<") || self.is(k + 1, "=")) {
                        k += 2;
                        last = Some(k - 1);
                        continue;
                    }
                    let cast = k > 0
                        && matches!(
                            self.toks[k - 1].text(self.src),
                            "static_cast" | "reinterpret_cast" | "const_cast" | "as_type"
                        );
                    if cast {
                        angle += 1;
                    } else {
                        unsure = true;
                    }
                } else if self.is(k, ">") {
                    if angle > 0 {
                        angle -= 1;
                    } else if self.adjacent(k) && self.is(k + 1, "=") {
                        k += 2;
                        last = Some(k - 1);
                        continue;
                    } else {
                        unsure = true;
                    }
                }
            }
            last = Some(k);
            k += 1;
        }
        if depth != 0 || angle != 0 || unsure {
            return None;
        }
        last.map(|l| (colon, l))
    }

    /// Tokens `a..=b` on one line, as the output will write them; None where they cannot be
    /// copied (a preprocessor line, a lambda, a multi-token replacement reaching outside).
    fn render(&self, a: usize, b: usize) -> Option<String> {
        if self.split_replacement(a, b) {
            return None;
        }
        for k in a..=b {
            if self.toks[k].kind == TokenKind::Preprocessor {
                return None;
            }
            // A lambda cannot appear in `decltype` (C++17).
            if self.is(k, "[")
                && (k == a || self.is(k - 1, "(") || self.is(k - 1, ",") || self.is(k - 1, "="))
            {
                return None;
            }
        }
        let out = self.line_text(a, b);
        if out.contains('#') || out.contains("//") || out.len() > MAX_COPY {
            return None;
        }
        Some(out)
    }

    /// Tokens `a..=b` are a number literal (`2`, `-1.5f`): a built-in type.
    fn literal(&self, a: usize, b: usize) -> bool {
        let mut k = a;
        while k < b && (self.is(k, "-") || self.is(k, "+")) {
            k += 1;
        }
        k == b
            && self.toks[k].kind == TokenKind::Number
            && !self.toks[k].text(self.src).ends_with(['h', 'H'])
    }

    fn conditional(&mut self, a0: usize, a1: usize, b0: usize, b1: usize) {
        if self.literal(a0, a1) && self.literal(b0, b1) {
            return;
        }
        let (Some(ra), Some(rb)) = (self.render(a0, a1), self.render(b0, b1)) else {
            return;
        };
        self.wrap(
            a0,
            a1,
            &format!("static_cast<::ingot::tern_t<decltype(({ra})), decltype(({rb}))>>("),
            ")",
        );
        self.wrap(
            b0,
            b1,
            &format!("static_cast<::ingot::tern_t<decltype(({rb})), decltype(({ra}))>>("),
            ")",
        );
    }
}
