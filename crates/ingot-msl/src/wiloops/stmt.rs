//! Statements of a translated kernel body: just enough C++ structure for the work-item loop
//! former (blocks, `if`/`else`, `for`, `while`, `do`, `return`, `break`, `continue`, and
//! everything else as a simple statement ending at its `;`). Expressions stay token ranges.

use crate::lexer::{Token, TokenKind};

/// A token range `[a, b)` of the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub a: usize,
    pub b: usize,
}

impl Span {
    pub fn is_empty(&self) -> bool {
        self.a >= self.b
    }
}

#[derive(Debug, Clone)]
pub(crate) enum Stmt {
    Block(Vec<Stmt>),
    If {
        cond: Span,
        then: Box<Stmt>,
        els: Option<Box<Stmt>>,
    },
    /// `for (init; cond; inc) body`; `init` is a simple statement (its `;` included) or empty.
    For {
        init: Span,
        cond: Span,
        inc: Span,
        body: Box<Stmt>,
    },
    While {
        cond: Span,
        body: Box<Stmt>,
    },
    Do {
        body: Box<Stmt>,
        cond: Span,
    },
    Return(Span),
    Break,
    Continue,
    /// An expression or declaration statement, `;` included (an empty statement is `;`).
    Simple(Span),
    /// A statement the former does not look into (`switch`, labels, `goto`, preprocessor
    /// lines, range-`for`): it may not hold a split point.
    Opaque(Span),
}

pub(crate) struct Parser<'a> {
    pub src: &'a str,
    pub toks: &'a [Token],
}

impl<'a> Parser<'a> {
    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    /// The index of the token closing the bracket at `open` (`(`, `[`, `{`), or `None`.
    pub fn close_of(&self, open: usize) -> Option<usize> {
        let mut depth = 0i32;
        for i in open..self.toks.len() {
            match self.text(i) {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                    if depth < 0 {
                        return None;
                    }
                }
                _ => {}
            }
        }
        None
    }

    /// The statements of `[a, b)`.
    pub fn block(&self, mut a: usize, b: usize) -> Option<Vec<Stmt>> {
        let mut out = Vec::new();
        while a < b {
            let (s, next) = self.statement(a, b)?;
            out.push(s);
            a = next;
        }
        Some(out)
    }

    /// One statement starting at `a` (before `b`); returns it and the index after it.
    fn statement(&self, a: usize, b: usize) -> Option<(Stmt, usize)> {
        let t = self.toks.get(a)?;
        if t.kind == TokenKind::Preprocessor {
            return Some((Stmt::Opaque(Span { a, b: a + 1 }), a + 1));
        }
        match self.text(a) {
            "{" => {
                let c = self.close_of(a)?;
                if c >= b {
                    return None;
                }
                Some((Stmt::Block(self.block(a + 1, c)?), c + 1))
            }
            "if" => {
                let mut k = a + 1;
                if self.text(k) == "constexpr" {
                    return self.opaque_compound(a, b);
                }
                if self.text(k) != "(" {
                    return None;
                }
                let c = self.close_of(k)?;
                let cond = Span { a: k + 1, b: c };
                let (then, next) = self.statement(c + 1, b)?;
                k = next;
                if k < b && self.text(k) == "else" {
                    let (els, next) = self.statement(k + 1, b)?;
                    return Some((
                        Stmt::If {
                            cond,
                            then: Box::new(then),
                            els: Some(Box::new(els)),
                        },
                        next,
                    ));
                }
                Some((
                    Stmt::If {
                        cond,
                        then: Box::new(then),
                        els: None,
                    },
                    k,
                ))
            }
            "for" => {
                let k = a + 1;
                if self.text(k) != "(" {
                    return None;
                }
                let c = self.close_of(k)?;
                let semis: Vec<usize> = (k + 1..c)
                    .filter(|&i| self.text(i) == ";" && self.depth_in(k + 1, i) == 0)
                    .collect();
                if semis.len() != 2 {
                    // range-for (`for (auto x : v)`): not looked into
                    let (_, next) = self.statement(c + 1, b)?;
                    return Some((Stmt::Opaque(Span { a, b: next }), next));
                }
                let init = Span {
                    a: k + 1,
                    b: semis[0] + 1,
                };
                let cond = Span {
                    a: semis[0] + 1,
                    b: semis[1],
                };
                let inc = Span {
                    a: semis[1] + 1,
                    b: c,
                };
                let (body, next) = self.statement(c + 1, b)?;
                Some((
                    Stmt::For {
                        init: if init.b - init.a <= 1 {
                            Span {
                                a: init.a,
                                b: init.a,
                            }
                        } else {
                            init
                        },
                        cond,
                        inc,
                        body: Box::new(body),
                    },
                    next,
                ))
            }
            "while" => {
                let k = a + 1;
                if self.text(k) != "(" {
                    return None;
                }
                let c = self.close_of(k)?;
                let (body, next) = self.statement(c + 1, b)?;
                Some((
                    Stmt::While {
                        cond: Span { a: k + 1, b: c },
                        body: Box::new(body),
                    },
                    next,
                ))
            }
            "do" => {
                let (body, next) = self.statement(a + 1, b)?;
                if self.text(next) != "while" || self.text(next + 1) != "(" {
                    return None;
                }
                let c = self.close_of(next + 1)?;
                if self.text(c + 1) != ";" {
                    return None;
                }
                Some((
                    Stmt::Do {
                        body: Box::new(body),
                        cond: Span { a: next + 2, b: c },
                    },
                    c + 2,
                ))
            }
            "return" => {
                let e = self.simple_end(a, b)?;
                Some((Stmt::Return(Span { a: a + 1, b: e }), e + 1))
            }
            "break" if self.text(a + 1) == ";" => Some((Stmt::Break, a + 2)),
            "continue" if self.text(a + 1) == ";" => Some((Stmt::Continue, a + 2)),
            "switch" => self.opaque_compound(a, b),
            "case" | "default" | "goto" | "else" | "try" | "catch" => None,
            _ => {
                // a label `name:` (not `::`)
                if self.text(a + 1) == ":" && self.toks[a].kind == TokenKind::Ident {
                    return None;
                }
                let e = self.simple_end(a, b)?;
                Some((Stmt::Simple(Span { a, b: e + 1 }), e + 1))
            }
        }
    }

    /// `switch (..) { .. }` or `if constexpr (..) ..`: one opaque statement.
    fn opaque_compound(&self, a: usize, b: usize) -> Option<(Stmt, usize)> {
        let mut k = a + 1;
        if self.text(k) == "constexpr" {
            k += 1;
        }
        if self.text(k) != "(" {
            return None;
        }
        let c = self.close_of(k)?;
        let (_, mut next) = self.statement(c + 1, b)?;
        if self.text(a) == "if" && self.text(next) == "else" {
            next = self.statement(next + 1, b)?.1;
        }
        Some((Stmt::Opaque(Span { a, b: next }), next))
    }

    /// Bracket depth at `i` counted from `a`.
    fn depth_in(&self, a: usize, i: usize) -> i32 {
        let mut d = 0;
        for k in a..i {
            match self.text(k) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => d -= 1,
                _ => {}
            }
        }
        d
    }

    /// The `;` ending the simple statement starting at `a`.
    fn simple_end(&self, a: usize, b: usize) -> Option<usize> {
        let mut d = 0i32;
        for i in a..b {
            match self.text(i) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => {
                    d -= 1;
                    if d < 0 {
                        return None;
                    }
                }
                ";" if d == 0 => return Some(i),
                _ => {}
            }
        }
        None
    }
}
