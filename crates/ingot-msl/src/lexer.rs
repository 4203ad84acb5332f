//! Tokens of MSL source with their positions.
//!
//! The lexer is deliberately C++-shaped rather than MSL-aware: keywords are identifiers (the
//! passes compare texts), `<` and `>` are always single tokens (so `vec<vec<float,2>>` needs no
//! splitting), and `[[` / `]]` become attribute brackets only where they can start or end a C++
//! attribute (`a[b[c]]` is two subscripts). Preprocessor lines are kept as one token each,
//! continuation lines included. Every token knows its byte range, line and column, so the
//! rewriter can copy the user's text verbatim between the tokens it changes.

use crate::error::{Error, Result};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    /// An identifier or a keyword (`kernel`, `device`, `float4`, `my_var`).
    Ident,
    /// A number with its suffix (`1`, `0x1Fu`, `1.0h`, `1e-3f`).
    Number,
    /// A string literal, quotes included.
    Str,
    /// A character literal, quotes included.
    Char,
    /// An operator or punctuation (`(`, `::`, `->`, `+=`, `<`).
    Punct,
    /// `[[`: the start of an attribute.
    AttrOpen,
    /// `]]`: the end of an attribute.
    AttrClose,
    /// A `//` or `/* */` comment (only produced when comments are kept).
    Comment,
    /// A whole preprocessor line (`#include <metal_stdlib>`), continuation lines included.
    Preprocessor,
}

/// One token: kind, byte range in the source and the position of its first character.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Byte offset of the first byte.
    pub start: usize,
    /// Byte offset one past the last byte.
    pub end: usize,
    /// 1-based line of the first character.
    pub line: u32,
    /// 1-based column (in characters) of the first character.
    pub col: u32,
}

impl Token {
    /// The token's text in `src` (the source it was lexed from).
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start..self.end).unwrap_or("")
    }

    /// True when the token is the identifier or punctuation `s`.
    pub fn is(&self, src: &str, s: &str) -> bool {
        matches!(self.kind, TokenKind::Ident | TokenKind::Punct) && self.text(src) == s
    }
}

/// Multi-character punctuators, longest first. `<` and `>` are never combined (see module docs).
const PUNCTS: &[&str] = &[
    "...", "::", "->", "++", "--", "&&", "||", "==", "!=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "##",
];

/// Splits `src` into tokens. Comments are dropped unless `keep_comments`.
/// `file` only names the file in errors.
pub fn lex(src: &str, file: &str, keep_comments: bool) -> Result<Vec<Token>> {
    Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        line: 1,
        line_start: 0,
        file,
        tokens: Vec::new(),
        attr_depth: Vec::new(),
        col_cache: std::cell::Cell::new((0, 1)),
    }
    .run(keep_comments)
}

struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    line: u32,
    line_start: usize,
    file: &'a str,
    tokens: Vec<Token>,
    /// One entry per open attribute: the depth of plain `[` inside it.
    attr_depth: Vec<u32>,
    /// Column cache: (byte offset, column) of the last position asked on the current line.
    col_cache: std::cell::Cell<(usize, u32)>,
}

impl<'a> Lexer<'a> {
    /// 1-based column (in characters) of byte `pos` on the current line; counts from the last
    /// position asked when it is on the same line, so a long line costs linear time overall.
    fn col_of(&self, pos: usize) -> u32 {
        let (cpos, ccol) = self.col_cache.get();
        let (from, base) = if cpos >= self.line_start && cpos <= pos {
            (cpos, ccol)
        } else {
            (self.line_start.min(pos), 1)
        };
        let col = self
            .src
            .get(from..pos)
            .map(|s| base + s.chars().count() as u32)
            .unwrap_or(base);
        self.col_cache.set((pos, col));
        col
    }

    fn err(&self, pos: usize, line: u32, msg: impl Into<String>) -> Error {
        let col = if line == self.line {
            self.col_of(pos)
        } else {
            1
        };
        Error::new(self.file, line, col, msg)
    }

    fn peek(&self, off: usize) -> u8 {
        self.bytes.get(self.pos + off).copied().unwrap_or(0)
    }

    /// Advances one byte, keeping line bookkeeping.
    fn bump(&mut self) {
        if self.peek(0) == b'\n' {
            self.line += 1;
            self.line_start = self.pos + 1;
        }
        self.pos += 1;
    }

    fn push(&mut self, kind: TokenKind, start: usize, line: u32, col: u32) {
        self.tokens.push(Token {
            kind,
            start,
            end: self.pos,
            line,
            col,
        });
    }

    /// True when only spaces/tabs precede `pos` on its line.
    fn at_line_start(&self, pos: usize) -> bool {
        self.bytes
            .get(self.line_start..pos)
            .is_some_and(|s| s.iter().all(|&b| b == b' ' || b == b'\t' || b == b'\r'))
    }

    fn run(mut self, keep_comments: bool) -> Result<Vec<Token>> {
        while self.pos < self.bytes.len() {
            let c = self.peek(0);
            let start = self.pos;
            let line = self.line;
            let col = self.col_of(start);
            match c {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c => self.bump(),
                // A line splice outside a directive (candle: `a ? b : \` + newline) is
                // whitespace; the output copies it with the gap.
                b'\\'
                    if self.peek(1) == b'\n'
                        || (self.peek(1) == b'\r' && self.peek(2) == b'\n') =>
                {
                    self.bump()
                }
                // A UTF-8 byte-order mark at the start of the file is whitespace.
                0xef if start == 0 && self.src.starts_with('\u{feff}') => {
                    self.pos = 3;
                    self.line_start = 3;
                }
                b'/' if self.peek(1) == b'/' => {
                    while self.pos < self.bytes.len() && self.peek(0) != b'\n' {
                        if self.peek(0) == b'\\' && self.peek(1) == b'\n' {
                            self.bump();
                        }
                        self.bump();
                    }
                    if keep_comments {
                        self.push(TokenKind::Comment, start, line, col);
                    }
                }
                b'/' if self.peek(1) == b'*' => {
                    self.bump();
                    self.bump();
                    loop {
                        if self.pos >= self.bytes.len() {
                            return Err(Error::new(self.file, line, col, "unterminated comment"));
                        }
                        if self.peek(0) == b'*' && self.peek(1) == b'/' {
                            self.bump();
                            self.bump();
                            break;
                        }
                        self.bump();
                    }
                    if keep_comments {
                        self.push(TokenKind::Comment, start, line, col);
                    }
                }
                b'#' if self.at_line_start(start) => {
                    while self.pos < self.bytes.len() && self.peek(0) != b'\n' {
                        if self.peek(0) == b'\\'
                            && (self.peek(1) == b'\n'
                                || (self.peek(1) == b'\r' && self.peek(2) == b'\n'))
                        {
                            self.bump();
                            if self.peek(0) == b'\r' {
                                self.bump();
                            }
                        } else if self.peek(0) == b'/' && self.peek(1) == b'*' {
                            // A block comment inside a directive may span lines.
                            self.bump();
                            self.bump();
                            while self.pos < self.bytes.len()
                                && !(self.peek(0) == b'*' && self.peek(1) == b'/')
                            {
                                self.bump();
                            }
                            if self.pos >= self.bytes.len() {
                                return Err(Error::new(
                                    self.file,
                                    line,
                                    col,
                                    "unterminated comment",
                                ));
                            }
                            self.bump();
                        }
                        self.bump();
                    }
                    let mut end = self.pos;
                    while end > start && matches!(self.bytes.get(end - 1), Some(b'\r')) {
                        end -= 1;
                    }
                    self.tokens.push(Token {
                        kind: TokenKind::Preprocessor,
                        start,
                        end,
                        line,
                        col,
                    });
                }
                b'"' | b'\'' => {
                    self.bump();
                    loop {
                        let d = self.peek(0);
                        if self.pos >= self.bytes.len() || d == b'\n' {
                            let what = if c == b'"' { "string" } else { "character" };
                            return Err(Error::new(
                                self.file,
                                line,
                                col,
                                format!("unterminated {what} literal"),
                            ));
                        }
                        if d == b'\\' {
                            self.bump();
                            if self.pos < self.bytes.len() {
                                self.bump();
                            }
                            continue;
                        }
                        self.bump();
                        if d == c {
                            break;
                        }
                    }
                    let kind = if c == b'"' {
                        TokenKind::Str
                    } else {
                        TokenKind::Char
                    };
                    self.push(kind, start, line, col);
                }
                b'0'..=b'9' => self.number(start, line, col),
                b'.' if self.peek(1).is_ascii_digit() => self.number(start, line, col),
                b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                    while matches!(self.peek(0), b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_') {
                        self.bump();
                    }
                    self.push(TokenKind::Ident, start, line, col);
                }
                b'[' => self.open_bracket(start, line, col),
                b']' => self.close_bracket(start, line, col),
                _ if c.is_ascii_punctuation() => {
                    let rest = self.src.get(start..).unwrap_or("");
                    let len = PUNCTS
                        .iter()
                        .find(|p| rest.starts_with(**p))
                        .map(|p| p.len())
                        .unwrap_or(1);
                    for _ in 0..len {
                        self.bump();
                    }
                    self.push(TokenKind::Punct, start, line, col);
                }
                _ => {
                    let ch = self
                        .src
                        .get(start..)
                        .and_then(|s| s.chars().next())
                        .unwrap_or('?');
                    return Err(self.err(start, line, format!("unexpected character `{ch}`")));
                }
            }
        }
        if let Some(last) = self
            .tokens
            .iter()
            .rev()
            .find(|t| t.kind == TokenKind::AttrOpen)
        {
            if !self.attr_depth.is_empty() {
                return Err(Error::new(
                    self.file,
                    last.line,
                    last.col,
                    "unterminated attribute `[[`",
                ));
            }
        }
        Ok(self.tokens)
    }

    /// A pp-number: digits, letters, `_`, `.`, `'` and signs after an exponent letter.
    fn number(&mut self, start: usize, line: u32, col: u32) {
        let hex = self.peek(0) == b'0' && matches!(self.peek(1), b'x' | b'X');
        loop {
            let c = self.peek(0);
            if c.is_ascii_alphanumeric() || c == b'_' || c == b'.' {
                let exp = if hex {
                    matches!(c, b'p' | b'P')
                } else {
                    matches!(c, b'e' | b'E')
                };
                self.bump();
                if exp && matches!(self.peek(0), b'+' | b'-') {
                    self.bump();
                }
            } else if c == b'\'' && self.peek(1).is_ascii_alphanumeric() {
                self.bump();
            } else {
                break;
            }
        }
        self.push(TokenKind::Number, start, line, col);
    }

    /// `[[` always starts an attribute in C++ (a subscript cannot begin with `[`), except
    /// after `operator`; nested plain brackets inside an attribute are counted so that its
    /// `]]` is recognised.
    fn open_bracket(&mut self, start: usize, line: u32, col: u32) {
        let after_operator = self
            .tokens
            .last()
            .is_some_and(|t| t.kind == TokenKind::Ident && t.text(self.src) == "operator");
        if self.peek(1) == b'[' && !after_operator {
            self.bump();
            self.bump();
            self.push(TokenKind::AttrOpen, start, line, col);
            self.attr_depth.push(0);
        } else {
            self.bump();
            if let Some(d) = self.attr_depth.last_mut() {
                *d += 1;
            }
            self.push(TokenKind::Punct, start, line, col);
        }
    }

    fn close_bracket(&mut self, start: usize, line: u32, col: u32) {
        match self.attr_depth.last().copied() {
            Some(0) if self.peek(1) == b']' => {
                self.bump();
                self.bump();
                self.attr_depth.pop();
                self.push(TokenKind::AttrClose, start, line, col);
            }
            Some(d) => {
                if d > 0 {
                    if let Some(x) = self.attr_depth.last_mut() {
                        *x = d - 1;
                    }
                }
                self.bump();
                self.push(TokenKind::Punct, start, line, col);
            }
            None => {
                self.bump();
                self.push(TokenKind::Punct, start, line, col);
            }
        }
    }
}

/// Tokens with comments removed (convenience for passes that never look at comments).
pub fn significant(tokens: &[Token]) -> Vec<Token> {
    tokens
        .iter()
        .copied()
        .filter(|t| t.kind != TokenKind::Comment)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        lex(src, "t.metal", false)
            .unwrap()
            .iter()
            .map(|t| (t.kind, t.text(src).to_string()))
            .collect()
    }

    #[test]
    fn numbers_with_suffixes() {
        let toks = kinds("1.0h 0x1Fu 1e-3f .5 2u 1.5e+10 0x1p-3f");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            ["1.0h", "0x1Fu", "1e-3f", ".5", "2u", "1.5e+10", "0x1p-3f"]
        );
        assert!(toks.iter().all(|t| t.0 == TokenKind::Number));
    }

    #[test]
    fn attributes_versus_subscripts() {
        let toks = kinds("device float* a [[buffer(0)]], x = a[b[c]];");
        assert_eq!(
            toks.iter().filter(|t| t.0 == TokenKind::AttrOpen).count(),
            1
        );
        assert_eq!(
            toks.iter().filter(|t| t.0 == TokenKind::AttrClose).count(),
            1
        );
        let toks = kinds("y = a[b[c[d]]];");
        assert!(toks
            .iter()
            .all(|t| t.0 != TokenKind::AttrOpen && t.0 != TokenKind::AttrClose));
        let toks = kinds("[[kernel]] void f() {}");
        assert_eq!(toks[0].0, TokenKind::AttrOpen);
        assert_eq!(toks[2].0, TokenKind::AttrClose);
        let toks = kinds("uint i [[thread_position_in_grid]]) { x[i[j]] = 1; }");
        assert_eq!(
            toks.iter().filter(|t| t.0 == TokenKind::AttrClose).count(),
            1
        );
    }

    #[test]
    fn positions() {
        let src = "kernel void f(\n  device float* a) {}";
        let toks = lex(src, "t.metal", false).unwrap();
        let dev = toks.iter().find(|t| t.text(src) == "device").unwrap();
        assert_eq!((dev.line, dev.col, dev.start), (2, 3, 17));
    }

    #[test]
    fn preprocessor_lines_with_continuations() {
        let src = "#define F(x) \\\n  (x + 1)\nint y;\n  #include <metal_stdlib>;\n";
        let toks = kinds(src);
        assert_eq!(
            toks[0],
            (TokenKind::Preprocessor, "#define F(x) \\\n  (x + 1)".into())
        );
        assert_eq!(toks[1].1, "int");
        assert_eq!(
            toks[4],
            (TokenKind::Preprocessor, "#include <metal_stdlib>;".into())
        );
    }

    #[test]
    fn comments_and_strings() {
        let src = "a /* x\n y */ b // c\n\"s\\\"t\" 'c'";
        let toks = kinds(src);
        assert_eq!(toks.len(), 4);
        let kept = lex(src, "t", true).unwrap();
        assert_eq!(kept.len(), 6);
        assert_eq!(toks[2].0, TokenKind::Str);
        assert_eq!(toks[3].0, TokenKind::Char);
    }

    #[test]
    fn punctuation_keeps_angle_brackets_single() {
        let toks = kinds("vec<vec<float,2>> a; x >>= 1; p->q::r");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert!(texts.contains(&"->"));
        assert!(texts.contains(&"::"));
        assert_eq!(texts.iter().filter(|t| **t == ">").count(), 4);
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let src = "\u{feff}kernel void f();";
        let toks = lex(src, "t", false).unwrap();
        assert_eq!(toks[0].text(src), "kernel");
        assert_eq!((toks[0].line, toks[0].col), (1, 1));
    }

    #[test]
    fn errors_are_located() {
        let e = lex("int a;\n  /* open", "k.metal", false).unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        assert_eq!(e.to_string(), "k.metal:2:3: error: unterminated comment");
        let e = lex("x = \"abc\n", "k.metal", false).unwrap_err();
        assert_eq!((e.line, e.column), (1, 5));
        let e = lex("int é;", "k.metal", false).unwrap_err();
        assert_eq!((e.line, e.column), (1, 5));
        assert!(lex("[[buffer(0)", "k.metal", false).is_err());
    }
}
