//! Members of anonymous structs (`union { struct { half d; half m; }; half2 dm; }`, ggml's
//! quantized blocks).
//!
//! Metal's `half` is a built-in type; the preludes' `half` and `bfloat` are classes with
//! constructors, and g++ refuses a member "with constructor" in an anonymous aggregate (NVRTC
//! accepts it). Each member type `T` of an anonymous struct nested in a class or union becomes
//! `::ingot::anon_t<T>`: `T` itself, except half and bfloat, which become a storage class with
//! the same bits and no constructor that converts to the 16-bit type and to float and is
//! assigned from anything the 16-bit type is built from.

use crate::edit::Edit;
use crate::lexer::TokenKind;

impl Edit<'_> {
    /// The `}` matching the `{` at `open`.
    fn close_of(&self, open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for k in open..self.toks.len() {
            if self.is(k, "{") {
                depth += 1;
            } else if self.is(k, "}") {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
        }
        None
    }

    /// Whether the `{` at `open` is inside another brace pair that opens a class or union.
    fn nested_in_class(&self, open: usize) -> bool {
        let mut depth = 0i32;
        for k in (0..open).rev() {
            if self.is(k, "}") {
                depth += 1;
            } else if self.is(k, "{") {
                if depth == 0 {
                    // The enclosing brace: a class head is `struct|union|class [name] [: base]`.
                    let mut j = k;
                    while j > 0 {
                        j -= 1;
                        if self.is(j, "struct") || self.is(j, "union") || self.is(j, "class") {
                            return true;
                        }
                        if self.is(j, ";") || self.is(j, "{") || self.is(j, "}") || self.is(j, ")")
                        {
                            return false;
                        }
                    }
                    return false;
                }
                depth -= 1;
            }
        }
        false
    }

    pub(crate) fn anonymous_struct_members(&mut self) {
        let n = self.toks.len();
        for s in 0..n {
            if !(self.is(s, "struct") && self.is(s + 1, "{")) {
                continue;
            }
            let Some(close) = self.close_of(s + 1) else {
                continue;
            };
            if !self.is(close + 1, ";") || !self.nested_in_class(s + 1) {
                continue;
            }
            // Member declarations at depth 0 of the body.
            let mut start = s + 2;
            let mut depth = 0i32;
            for k in s + 2..close {
                if self.is(k, "{") || self.is(k, "(") || self.is(k, "[") {
                    depth += 1;
                } else if self.is(k, "}") || self.is(k, ")") || self.is(k, "]") {
                    depth -= 1;
                } else if depth == 0 && self.is(k, ";") {
                    self.member(start, k);
                    start = k + 1;
                }
            }
        }
    }

    /// Wraps the type of the member declaration `a..end` (`end` is its `;`).
    fn member(&mut self, a: usize, end: usize) {
        // The first declarator's name: the identifier before the first `[ , : =` or `;`.
        let mut k = a;
        while k < end && !(self.is(k, "[") || self.is(k, ",") || self.is(k, ":") || self.is(k, "="))
        {
            if self.is(k, "(")
                || self.is(k, "{")
                || self.toks[k].kind == TokenKind::AttrOpen
                || self.toks[k].kind == TokenKind::Preprocessor
            {
                return;
            }
            k += 1;
        }
        if k < a + 2 || self.toks[k - 1].kind != TokenKind::Ident {
            return;
        }
        let (first, last) = (a, k - 2);
        if self.split_replacement(first, last) {
            return;
        }
        if (first..=last).any(|j| {
            matches!(
                self.text(j),
                "static" | "typedef" | "using" | "friend" | "*" | "&" | "struct" | "union"
            )
        }) {
            return;
        }
        self.wrap(first, last, "::ingot::anon_t<", " >");
    }
}
