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

/// Keywords that can precede a name without declaring it.
const NOT_A_TYPE: &[&str] = &[
    "return",
    "case",
    "else",
    "goto",
    "throw",
    "new",
    "delete",
    "sizeof",
    "co_return",
    "co_yield",
    "co_await",
    "typename",
    "using",
    "namespace",
    "struct",
    "class",
    "operator",
    "template",
    "do",
];

/// Names tokens `a..b` (a function body) declare, read loosely: a name after a type-like token
/// and before `=`, `;`, `[`, `,`, `(` or `{`. Names it misses count as not local, which only
/// makes [`body_is_pure`] stricter.
pub(crate) fn declared_names(src: &str, toks: &[Token], a: usize, b: usize) -> Vec<String> {
    let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    let mut out = Vec::new();
    for k in a + 1..b.min(toks.len()) {
        if toks[k].kind != TokenKind::Ident || NOT_A_TYPE.contains(&text(k)) {
            continue;
        }
        let prev = k - 1;
        let prev_is_type = match toks[prev].kind {
            TokenKind::Ident => {
                !NOT_A_TYPE.contains(&text(prev))
                    && !matches!(text(prev.wrapping_sub(1)), "." | "->")
            }
            TokenKind::Punct => matches!(text(prev), ">" | "*" | "&"),
            _ => false,
        };
        if prev_is_type
            && matches!(text(k + 1), "=" | ";" | "[" | "," | "(" | "{" | ":")
            && starts_statement(src, toks, a, prev)
        {
            out.push(text(k).to_string());
        }
    }
    out
}

/// True when the type-like tokens ending at `end` (names, `::`, `*`, `&`, `<...>`) begin a
/// statement (after `;`, `{`, `}`, `for (` or at `a`): `T x` declares, `y & x[i]` does not.
fn starts_statement(src: &str, toks: &[Token], a: usize, end: usize) -> bool {
    let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    let mut j = end;
    loop {
        let w = text(j);
        let typeish = match toks[j].kind {
            TokenKind::Ident => !NOT_A_TYPE.contains(&w),
            TokenKind::Punct => matches!(w, "::" | "*" | "&" | "&&" | ">" | "<" | ","),
            TokenKind::Number => true,
            _ => false,
        };
        if w == ">" {
            // skip back over a template argument list
            let mut depth = 0i32;
            while j > a {
                match text(j) {
                    ">" => depth += 1,
                    "<" => depth -= 1,
                    ";" | "{" | "}" => return false,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                j -= 1;
            }
        } else if !typeish || (w == "," && j == end) {
            return matches!(w, ";" | "{" | "}") || (w == "(" && text(j.wrapping_sub(1)) == "for");
        } else if w == "," || w == "<" {
            // a comma or `<` outside a template argument list: an expression
            return false;
        }
        if j == a {
            return true;
        }
        j -= 1;
    }
}

/// True when the function body `a..b` (its braces) only computes: every assignment and
/// increment writes a name in `locals` (its parameters and the names it declares) directly or
/// through `.`/`[]` of a local array or aggregate, never through `*`, `->` or a pointer, and
/// it names no `device` or `threadgroup` memory, atomic or `this`. Calling such a function
/// twice has no effect beyond its result (a work-item loop statement replays it).
pub(crate) fn body_is_pure(
    src: &str,
    toks: &[Token],
    a: usize,
    b: usize,
    locals: &[String],
) -> bool {
    let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    for k in a..b.min(toks.len()) {
        let s = text(k);
        if toks[k].kind == TokenKind::Ident
            && (matches!(s, "device" | "threadgroup" | "this" | "asm" | "volatile")
                || s.starts_with("atomic"))
        {
            return false;
        }
        let touch = |x: usize, y: usize| toks[x].end == toks[y].start;
        // `<<=` / `>>=` lex as three tokens, `<=` / `>=` as two.
        let shift_assign = s == "="
            && k >= a + 2
            && matches!(text(k - 1), "<" | ">")
            && text(k - 2) == text(k - 1)
            && touch(k - 2, k - 1)
            && touch(k - 1, k);
        let assign = shift_assign
            || matches!(s, "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^=")
            || (s == "=" && !(matches!(text(k - 1), "<" | ">" | "!") && touch(k - 1, k)));
        if assign {
            let k = if shift_assign { k - 2 } else { k };
            // Walk back over the left side: names, `.name`, `[...]` groups.
            let mut j = k - 1;
            loop {
                match text(j) {
                    "]" => {
                        let mut depth = 0i32;
                        while j > a {
                            match text(j) {
                                "]" => depth += 1,
                                "[" => depth -= 1,
                                _ => {}
                            }
                            if depth == 0 {
                                break;
                            }
                            j -= 1;
                        }
                        j -= 1;
                    }
                    _ if toks[j].kind == TokenKind::Ident => {
                        if text(j - 1) == "." && toks[j - 2].kind == TokenKind::Ident {
                            j -= 2;
                            continue;
                        }
                        if text(j - 1) == "."
                            || text(j - 1) == "->"
                            || text(j - 1) == "*" && !is_operand_end(src, toks, j - 2)
                        {
                            return false;
                        }
                        if !locals.iter().any(|l| l == text(j)) {
                            return false;
                        }
                        break;
                    }
                    _ => return false,
                }
            }
        }
        if matches!(s, "++" | "--") {
            let next = k + 1;
            let prev = k - 1;
            let name = if toks.get(next).is_some_and(|t| t.kind == TokenKind::Ident) {
                text(next)
            } else if toks[prev].kind == TokenKind::Ident {
                text(prev)
            } else {
                return false;
            };
            if !locals.iter().any(|l| l == name) {
                return false;
            }
        }
    }
    true
}

/// True when token `i` ends an operand (so a `*` after it multiplies).
fn is_operand_end(src: &str, toks: &[Token], i: usize) -> bool {
    toks.get(i).is_some_and(|t| {
        matches!(t.kind, TokenKind::Ident | TokenKind::Number) || matches!(t.text(src), ")" | "]")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::{lex, significant};

    fn pure(body: &str, locals: &[&str]) -> bool {
        let t = significant(&lex(body, "", false).unwrap());
        let mut l: Vec<String> = locals.iter().map(|s| s.to_string()).collect();
        l.extend(declared_names(body, &t, 0, t.len()));
        body_is_pure(body, &t, 0, t.len(), &l)
    }

    #[test]
    fn pure_bodies() {
        assert!(pure(
            "{ Op op; init.val[e] = op(u, init.val[e]); return init.bits; }",
            &["init", "u", "e"]
        ));
        assert!(pure(
            "{ for (short i = 16; i > 0; i /= 2) { v = v + simd_shuffle_down(v, i); } return v; }",
            &["v"]
        ));
        assert!(pure(
            "{ float t[4]; t[0] = 1; t[1] <= 2; return t[0]; }",
            &[]
        ));
        assert!(!pure("{ out[0] = 1; }", &[]));
        assert!(!pure("{ *p = 1; }", &["p"]));
        assert!(!pure("{ this->n = 1; }", &[]));
        assert!(!pure("{ count += 1; }", &[]));
        assert!(!pure("{ count <<= 1; }", &[]));
        assert!(!pure("{ ++count; }", &[]));
        assert!(!pure("{ threadgroup float* q = x; q[0] = 1; }", &["x"]));
    }

    #[test]
    fn declarations_only_at_statement_starts() {
        let body = "{ const uint8_t s = x & km[j]; for (int i = 0; i < 4; ++i) y[i] = s; metal::vec<float, 4> v = 0; float* p = &y[0]; }";
        let t = significant(&lex(body, "", false).unwrap());
        let d = declared_names(body, &t, 0, t.len());
        assert_eq!(d, ["s", "i", "v", "p"]);
    }
}
