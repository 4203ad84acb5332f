//! Purity of a token range: does an expression only read variables?
//!
//! Shared by the work-item loop former (passive shuffle deposits) and the CUDA guarded-shuffle
//! pass: both evaluate a shuffle operand for lanes that do not execute the statement, which is
//! sound only when evaluating it has no effect.

use crate::lexer::{Token, TokenKind};

/// True when tokens `a..b` only read variables: names (not called), numbers, arithmetic,
/// comparisons (`<=` and `>=` lex as two tokens), member access and parentheses; no
/// assignment, increment, call or indexing. Such an expression can be evaluated for a lane that
/// does not execute it.
pub(crate) fn reads_only(src: &str, toks: &[Token], a: usize, b: usize) -> bool {
    let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    let touching = |x: usize, y: usize| {
        toks.get(x)
            .zip(toks.get(y))
            .is_some_and(|(l, r)| l.end == r.start)
    };
    (a..b.min(toks.len())).all(|k| match toks[k].kind {
        TokenKind::Ident => text(k + 1) != "(",
        TokenKind::Number => true,
        TokenKind::Punct => {
            let s = text(k);
            if s == "=" {
                // only the second half of `<=` / `>=` (not `<<=`, `>>=`, `x = y`)
                let p = k.wrapping_sub(1);
                return matches!(text(p), "<" | ">")
                    && touching(p, k)
                    && !(text(p.wrapping_sub(1)) == text(p) && touching(p.wrapping_sub(1), p));
            }
            matches!(
                s,
                "+" | "-"
                    | "*"
                    | "/"
                    | "%"
                    | "&"
                    | "|"
                    | "^"
                    | "~"
                    | "!"
                    | "<"
                    | ">"
                    | "("
                    | ")"
                    | "."
                    | ","
                    | "?"
                    | ":"
                    | "=="
                    | "!="
                    | "&&"
                    | "||"
            )
        }
        _ => false,
    })
}
