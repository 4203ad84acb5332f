//! The token-level edits the late rewriting passes share: a replacement per token and text
//! inserted before a token, over the rewriter's state (see `rewrite.rs`).

use std::collections::HashMap;

use crate::lexer::{Token, TokenKind};

/// The rewriter's state a late pass reads and extends.
pub(crate) struct Edit<'r> {
    pub src: &'r str,
    /// Per token: the scope it is in.
    pub ctx: &'r [crate::syntax::Ctx],
    pub toks: &'r [Token],
    pub repl: &'r mut [Option<String>],
    pub joined: &'r [bool],
    pub prefix: &'r mut HashMap<usize, String>,
}

impl Edit<'_> {
    /// Token `i` is the punctuator or word `s`.
    pub fn is(&self, i: usize, s: &str) -> bool {
        self.toks
            .get(i)
            .is_some_and(|t| t.kind != TokenKind::Str && t.text(self.src) == s)
    }

    /// Token `i`'s text as written in the source.
    pub fn text(&self, i: usize) -> &str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    /// Token `i`'s text as the output will write it (its replacement, without the prefix).
    pub fn out(&self, i: usize) -> String {
        match &self.repl[i] {
            Some(r) => r.clone(),
            None => self.text(i).to_string(),
        }
    }

    /// Wraps tokens `a..=b` in `open` ... `close`: `open` goes after any text already inserted
    /// before `a`, `close` after any text already appended to `b`.
    pub fn wrap(&mut self, a: usize, b: usize, open: &str, close: &str) {
        self.prefix.entry(a).or_default().push_str(open);
        let mut t = self.out(b);
        t.push_str(close);
        self.repl[b] = Some(t);
    }

    /// Tokens `a..=b` on one line as the output will write them (inserted text included):
    /// a space where the source has a gap, none between touching tokens (`<` `<` is `<<`).
    pub fn line_text(&self, a: usize, b: usize) -> String {
        let mut out = String::new();
        for k in a..=b {
            if k > a && self.toks[k - 1].end != self.toks[k].start {
                out.push(' ');
            }
            if let Some(p) = self.prefix.get(&k) {
                out.push_str(p);
            }
            out.push_str(&self.out(k));
        }
        out.replace(['\n', '\r'], " ")
    }

    /// A multi-token replacement starts before `a` or runs on past `b`: the range cannot be
    /// wrapped on its own.
    pub fn split_replacement(&self, a: usize, b: usize) -> bool {
        self.joined[a] || self.joined.get(b + 1).copied().unwrap_or(false)
    }
}
