//! Declarations among a kernel body's simple statements: which names a statement declares,
//! their types as text, and their initialisers, so the former can keep per-thread values in
//! per-thread arrays. Anything it cannot read with certainty is `Unknown` (the former then
//! declines the kernel rather than guess).

use super::stmt::Span;
use crate::lexer::{Token, TokenKind};

#[derive(Debug, Clone)]
pub(crate) enum Init {
    None,
    /// `= expr`: the expression's tokens.
    Assign(Span),
    /// `(args)` or `{args}`: the tokens with their brackets.
    Direct(Span),
}

#[derive(Debug, Clone)]
pub(crate) struct Var {
    pub name: String,
    /// The storage type as a type-id (`float`, `const float*`, `float[4]`); for a reference,
    /// the pointer type that stores it.
    pub storage: String,
    pub is_ref: bool,
    pub is_array: bool,
    pub init: Init,
}

#[derive(Debug, Clone)]
pub(crate) enum Decl {
    /// Not a declaration: an expression statement.
    Expr,
    /// The same for every thread of a group (`typedef`, `using`, `constexpr`, `static`, a
    /// threadgroup variable): runs once per group.
    Uniform,
    Vars(Vec<Var>),
    /// A declaration the former cannot hoist (`auto`, `decltype`, unreadable): the reason.
    Unknown(&'static str),
}

const QUALIFIERS: &[&str] = &["const", "volatile", "thread", "typename", "register"];
const MULTIWORD: &[&str] = &["unsigned", "signed", "long", "short", "int", "char"];
const NOT_TYPES: &[&str] = &[
    "return",
    "delete",
    "throw",
    "sizeof",
    "new",
    "co_await",
    "co_yield",
    "co_return",
    "else",
    "case",
    "default",
    "goto",
    "this",
    "true",
    "false",
    "nullptr",
];

pub(crate) struct Reader<'a> {
    pub src: &'a str,
    pub toks: &'a [Token],
}

impl<'a> Reader<'a> {
    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    fn is_ident(&self, i: usize) -> bool {
        self.toks.get(i).is_some_and(|t| t.kind == TokenKind::Ident)
    }

    fn join(&self, a: usize, b: usize) -> String {
        let mut s = String::new();
        for i in a..b {
            if !s.is_empty() {
                let prev = self.toks[i - 1];
                if prev.end != self.toks[i].start {
                    s.push(' ');
                }
            }
            s.push_str(self.text(i));
        }
        s
    }

    /// The matching `>` of the `<` at `i`, counting nested brackets.
    fn close_angle(&self, i: usize, end: usize) -> Option<usize> {
        let mut angle = 0;
        let mut paren = 0;
        for k in i..end {
            match self.text(k) {
                "(" | "[" | "{" => paren += 1,
                ")" | "]" | "}" => paren -= 1,
                "<" if paren == 0 => angle += 1,
                ">" if paren == 0 => {
                    angle -= 1;
                    if angle == 0 {
                        return Some(k);
                    }
                }
                ";" => return None,
                _ => {}
            }
        }
        None
    }

    /// The end of the type starting at `i` (qualifiers, a possibly qualified and templated name
    /// or a multi-word builtin type), or `None`.
    fn type_end(&self, mut i: usize, end: usize) -> Option<usize> {
        let start = i;
        while i < end && QUALIFIERS.contains(&self.text(i)) {
            i += 1;
        }
        if MULTIWORD.contains(&self.text(i)) {
            while i < end && MULTIWORD.contains(&self.text(i)) {
                i += 1;
            }
        } else {
            if self.text(i) == "::" {
                i += 1;
            }
            loop {
                if !self.is_ident(i) || NOT_TYPES.contains(&self.text(i)) {
                    return None;
                }
                i += 1;
                if self.text(i) == "<" {
                    i = self.close_angle(i, end)? + 1;
                }
                if self.text(i) == "::" {
                    i += 1;
                    continue;
                }
                break;
            }
        }
        while i < end && matches!(self.text(i), "const" | "volatile") {
            i += 1;
        }
        (i > start).then_some(i)
    }

    /// Reads the simple statement `s` (its `;` included).
    pub fn decl(&self, s: Span) -> Decl {
        let end = s.b.saturating_sub(1);
        let first = self.text(s.a);
        if s.is_empty() || end <= s.a {
            return Decl::Expr;
        }
        if matches!(
            first,
            "typedef" | "using" | "static_assert" | "constexpr" | "static" | "enum"
        ) || (s.a..end).any(|i| self.text(i) == "tg_var")
        {
            return Decl::Uniform;
        }
        if matches!(first, "struct" | "class" | "union") {
            return Decl::Unknown("a local struct");
        }
        let Some(tend) = self.type_end(s.a, end) else {
            return Decl::Expr;
        };
        // A declaration: the type is followed by a declarator (`x`, `*p`, `&r`, `x[4]`).
        let mut k = tend;
        while matches!(self.text(k), "*" | "&" | "const") {
            k += 1;
        }
        if !self.is_ident(k) || NOT_TYPES.contains(&self.text(k)) {
            return Decl::Expr;
        }
        if !matches!(self.text(k + 1), "=" | ";" | "[" | "(" | "{" | ",") || k + 1 > end {
            return Decl::Expr;
        }
        // `=` right after `<`/`>` is a comparison or shift, not an initialiser.
        let base = self.join(s.a, tend);
        let words: Vec<&str> = base.split_whitespace().collect();
        if words
            .iter()
            .any(|w| w.starts_with("auto") || w.starts_with("decltype"))
        {
            return Decl::Unknown("a variable declared with auto or decltype");
        }
        let base_unqualified = {
            let mut w = words.clone();
            while w
                .first()
                .is_some_and(|x| QUALIFIERS.contains(x) && *x != "typename")
            {
                w.remove(0);
            }
            w.join(" ")
        };
        let mut vars = Vec::new();
        let mut i = tend;
        loop {
            let mut ptr = String::new();
            let mut is_ref = false;
            while matches!(self.text(i), "*" | "&" | "const") {
                match self.text(i) {
                    "*" => ptr.push('*'),
                    "&" => is_ref = true,
                    _ => {
                        if ptr.is_empty() {
                            return Decl::Unknown("a declarator the former cannot read");
                        }
                    }
                }
                i += 1;
            }
            if !self.is_ident(i) {
                return Decl::Unknown("a declarator the former cannot read");
            }
            let name = self.text(i).to_string();
            i += 1;
            let mut suffix = String::new();
            while self.text(i) == "[" {
                let Some(c) = self.close(i, end) else {
                    return Decl::Unknown("an array bound the former cannot read");
                };
                suffix.push_str(&self.join(i, c + 1));
                i = c + 1;
            }
            let init = match self.text(i) {
                "=" => {
                    let a = i + 1;
                    let b = self.until_comma(a, end);
                    i = b;
                    Init::Assign(Span { a, b })
                }
                "(" | "{" => {
                    let Some(c) = self.close(i, end) else {
                        return Decl::Unknown("an initialiser the former cannot read");
                    };
                    let sp = Span { a: i, b: c + 1 };
                    i = c + 1;
                    Init::Direct(sp)
                }
                _ => Init::None,
            };
            // Pointers keep their pointee's const; a plain value's own const is dropped from
            // the storage (it is assigned once, when its declaration runs).
            let ty = if ptr.is_empty() {
                base_unqualified.clone()
            } else {
                format!("{base}{ptr}")
            };
            if is_ref && !suffix.is_empty() {
                return Decl::Unknown("a reference to an array");
            }
            let storage = if is_ref {
                format!("{base}{ptr}*")
            } else {
                format!("{ty}{suffix}")
            };
            vars.push(Var {
                name,
                storage,
                is_ref,
                is_array: !suffix.is_empty(),
                init,
            });
            if i >= end {
                break;
            }
            if self.text(i) != "," {
                return Decl::Unknown("a declaration the former cannot read");
            }
            i += 1;
        }
        Decl::Vars(vars)
    }

    fn close(&self, open: usize, end: usize) -> Option<usize> {
        let mut d = 0;
        for k in open..end {
            match self.text(k) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => {
                    d -= 1;
                    if d == 0 {
                        return Some(k);
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The first top-level `,` at or after `a` that is followed by another declarator (a
    /// comma inside template arguments, `f<a, b>(x)`, is not), or `end`.
    fn until_comma(&self, a: usize, end: usize) -> usize {
        let mut d = 0;
        for k in a..end {
            match self.text(k) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => d -= 1,
                "," if d == 0 && self.declarator_at(k + 1, end) => return k,
                _ => {}
            }
        }
        end
    }

    /// True when `[i, end)` starts with a declarator: `*`/`&`s, a name (not a keyword), then
    /// `=`, `[`, `,`, the end, or a bracketed initialiser followed by `,` or the end.
    fn declarator_at(&self, mut i: usize, end: usize) -> bool {
        while matches!(self.text(i), "*" | "&") {
            i += 1;
        }
        if !self.is_ident(i)
            || NOT_TYPES.contains(&self.text(i))
            || matches!(
                self.text(i),
                "decltype" | "static_cast" | "reinterpret_cast" | "const_cast" | "as_type"
            )
        {
            return false;
        }
        let n = i + 1;
        if n >= end {
            return true;
        }
        match self.text(n) {
            "=" | "[" | "," => true,
            "(" | "{" => self
                .close(n, end)
                .is_some_and(|c| c + 1 >= end || self.text(c + 1) == ","),
            _ => false,
        }
    }
}
