//! A light structural view of an MSL file, built from its tokens.
//!
//! This is not a C++ parser. It finds what the translator and the reflection need: scopes
//! (namespace, class, function body), function definitions with their parameters and
//! attributes, explicit template instantiations with `host_name`, function constants,
//! program-scope `constant` variables, struct field names and `#define`s. Every token gets the
//! kind of scope it sits in, which is what the rewriter's context rules look at.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, Result};
use crate::lexer::{Token, TokenKind};

/// Kind of scope a token sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// Global or namespace scope (also `extern "C" {}`, and initializers at that scope).
    Namespace,
    /// Directly inside a struct/class/union/enum body.
    Class,
    /// Inside a function body (any depth).
    Body,
}

/// One `[[...]]` item: `buffer(0)` gives name `buffer`, args `["0"]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attr {
    /// The attribute name, namespace included when given (`gnu::always_inline`).
    pub name: String,
    /// Top-level comma-separated argument texts, tokens joined.
    pub args: Vec<String>,
    /// Token index of the `[[` this item is in.
    pub open: usize,
    /// Token index of the matching `]]`.
    pub close: usize,
}

/// One parameter of a function definition.
#[derive(Debug, Clone)]
pub struct ParamSyntax {
    /// Token indices of the parameter (attributes included), `[start, end)`.
    pub start: usize,
    /// One past the last token.
    pub end: usize,
    /// The declared name ("" when unnamed).
    pub name: String,
    /// Index of the name token, when named.
    pub name_tok: Option<usize>,
    /// Token indices of the type (everything but the name and the attributes).
    pub type_toks: Vec<usize>,
    /// The parameter's attributes.
    pub attrs: Vec<Attr>,
}

/// A function definition (with a body).
#[derive(Debug, Clone)]
pub struct FunctionDef {
    /// The unqualified name (`operator()` for call operators).
    pub name: String,
    /// Token index of the name.
    pub name_tok: usize,
    /// The class that owns it, when defined in a class body or as `Class::name`.
    pub owner: Option<String>,
    /// Enclosing named namespaces, outermost first.
    pub namespaces: Vec<String>,
    /// First token of the declaration (`template` or the first specifier).
    pub decl_start: usize,
    /// Names of the template parameters (empty when not a template).
    pub template_params: Vec<String>,
    /// Token index of `kernel` (or of the `[[` holding `kernel`), when an entry point.
    pub kernel_tok: Option<usize>,
    /// Attributes written in the declaration outside the parameter list.
    pub attrs: Vec<Attr>,
    /// The parameters.
    pub params: Vec<ParamSyntax>,
    /// Token index of `(` opening the parameters.
    pub params_open: usize,
    /// Token index of the body's `{`.
    pub body_open: usize,
    /// Token index of the body's `}`.
    pub body_close: usize,
}

/// `template [[host_name("x")]] [[kernel]] decltype(f<T>) f<T>;`
#[derive(Debug, Clone)]
pub struct Instantiation {
    /// The host name.
    pub host_name: String,
    /// The instantiated function's unqualified name.
    pub function: String,
    /// Namespace qualifier as written (`ns::`), may be empty.
    pub qualifier: String,
    /// Template argument texts.
    pub args: Vec<String>,
    /// The parameter types written in a full-signature instantiation (`template [[host_name("f")]]
    /// [[kernel]] void f(device float* x, ...);`), each as its token texts (name and attributes
    /// left out): the template arguments not written are deduced from them.
    pub param_types: Vec<Vec<String>>,
    /// Token range of the whole statement, `;` included.
    pub start: usize,
    /// Index of the `;`.
    pub end: usize,
}

/// `constant T name [[function_constant(i)]];`
#[derive(Debug, Clone)]
pub struct FunctionConstantDecl {
    /// The constant's name.
    pub name: String,
    /// Its type text.
    pub ty: String,
    /// The index given in the attribute, when it is a literal.
    pub index: Option<u32>,
    /// Token range of the declaration, `;` included.
    pub start: usize,
    /// Index of the `;`.
    pub end: usize,
}

/// The structure of a file.
#[derive(Debug, Default)]
pub struct Syntax {
    /// Scope kind of every token.
    pub ctx: Vec<Ctx>,
    /// Function definitions, in source order.
    pub functions: Vec<FunctionDef>,
    /// Explicit instantiations that name an entry point.
    pub instantiations: Vec<Instantiation>,
    /// Function constants.
    pub function_constants: Vec<FunctionConstantDecl>,
    /// Program-scope `constant` variables with an initializer: name -> initializer token range.
    pub program_constants: HashMap<String, (usize, usize)>,
    /// Names declared as struct/class fields.
    pub fields: HashSet<String>,
    /// `#define NAME body`: name -> body text.
    pub macros: HashMap<String, String>,
    /// Class bodies: class name -> token ranges of its bodies (for call-graph features).
    pub classes: HashMap<String, Vec<(usize, usize)>>,
}

/// Joins token texts, with a space only between two word-like tokens.
pub fn join(src: &str, toks: &[Token], idx: impl IntoIterator<Item = usize>) -> String {
    let mut out = String::new();
    let mut prev_word = false;
    for i in idx {
        let Some(t) = toks.get(i) else { continue };
        let word = matches!(t.kind, TokenKind::Ident | TokenKind::Number);
        if word && prev_word {
            out.push(' ');
        }
        out.push_str(t.text(src));
        prev_word = word;
    }
    out
}

/// Walks the tokens and builds a [`Syntax`]. `toks` must not contain comments.
pub fn analyse(src: &str, file: &str, toks: &[Token]) -> Result<Syntax> {
    Walker {
        src,
        file,
        toks,
        syn: Syntax::default(),
    }
    .run()
}

#[derive(Debug, Clone)]
enum Scope {
    Namespace(Option<String>),
    Class(String),
    Function(usize),
    /// A brace block at namespace/class scope that is not a scope of declarations
    /// (initializer, enum body): the statement goes on after it.
    Init(Ctx),
    Block,
}

struct Walker<'a> {
    src: &'a str,
    file: &'a str,
    toks: &'a [Token],
    syn: Syntax,
}

impl<'a> Walker<'a> {
    fn txt(&self, i: usize) -> &'a str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    fn is(&self, i: usize, s: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is(self.src, s))
    }

    fn kind(&self, i: usize) -> Option<TokenKind> {
        self.toks.get(i).map(|t| t.kind)
    }

    fn err_at(&self, i: usize, msg: impl Into<String>) -> Error {
        let (l, c) = self
            .toks
            .get(i)
            .or(self.toks.last())
            .map(|t| (t.line, t.col))
            .unwrap_or((1, 1));
        Error::new(self.file, l, c, msg)
    }

    fn run(mut self) -> Result<Syntax> {
        let n = self.toks.len();
        let mut stack: Vec<(Scope, usize)> = Vec::new();
        let mut stmt_start = 0usize;
        // Parentheses open in the current namespace/class-scope statement: a `{` inside them is
        // a braced initialiser (`static_assert(T{1} == ...)`, a default argument `= Int<0>{}`),
        // not a scope.
        let mut paren = 0i32;
        self.syn.ctx = Vec::with_capacity(n);
        let mut i = 0;
        while i < n {
            let ctx = match stack.last() {
                None => Ctx::Namespace,
                Some((Scope::Namespace(_), _)) => Ctx::Namespace,
                Some((Scope::Class(_), _)) => Ctx::Class,
                Some((Scope::Init(c), _)) => *c,
                Some((Scope::Function(_), _)) | Some((Scope::Block, _)) => Ctx::Body,
            };
            self.syn.ctx.push(ctx);
            let tok = self.toks[i];
            let in_body = ctx == Ctx::Body;
            let in_init = matches!(stack.last(), Some((Scope::Init(_), _)));
            if tok.kind == TokenKind::Preprocessor {
                self.record_macro(i);
                if !in_body && !in_init {
                    stmt_start = i + 1;
                }
                i += 1;
                continue;
            }
            if tok.kind != TokenKind::Punct {
                i += 1;
                continue;
            }
            match tok.text(self.src) {
                "(" if !in_body && !in_init => paren += 1,
                ")" if !in_body && !in_init => paren -= 1,
                "{" if !in_body && !in_init && paren > 0 => stack.push((Scope::Init(ctx), i)),
                "{" => {
                    paren = 0;
                    if in_body || in_init {
                        stack.push((Scope::Block, i));
                    } else {
                        let scope = self.classify(stmt_start, i, &stack)?;
                        let keeps_statement = matches!(scope, Scope::Init(_));
                        stack.push((scope, i));
                        if !keeps_statement {
                            stmt_start = i + 1;
                        }
                    }
                }
                "}" => {
                    let Some((scope, open)) = stack.pop() else {
                        return Err(self.err_at(i, "unmatched `}`"));
                    };
                    match scope {
                        Scope::Function(f) => {
                            if let Some(def) = self.syn.functions.get_mut(f) {
                                def.body_close = i;
                            }
                            stmt_start = i + 1;
                        }
                        Scope::Class(mut name) => {
                            // `typedef struct { ... } Name;`
                            if name.is_empty()
                                && self.kind(i + 1) == Some(TokenKind::Ident)
                                && self.is(i + 2, ";")
                            {
                                name = self.txt(i + 1).to_string();
                            }
                            self.syn.classes.entry(name).or_default().push((open, i));
                            stmt_start = i + 1;
                            // `struct S {...} s;` / `};`: the statement goes on to the `;`,
                            // which only ends an (empty) statement.
                        }
                        Scope::Namespace(_) => stmt_start = i + 1,
                        Scope::Init(_) | Scope::Block => {}
                    }
                }
                ";" if !in_body && !in_init => {
                    paren = 0;
                    self.statement(stmt_start, i, ctx)?;
                    stmt_start = i + 1;
                }
                ":" if ctx == Ctx::Class
                    && matches!(
                        self.txt(i.wrapping_sub(1)),
                        "public" | "private" | "protected"
                    ) =>
                {
                    stmt_start = i + 1;
                }
                _ => {}
            }
            i += 1;
        }
        if let Some((_, open)) = stack.last() {
            return Err(self.err_at(*open, "unmatched `{`"));
        }
        Ok(self.syn)
    }

    fn record_macro(&mut self, i: usize) {
        let text = self.txt(i);
        let rest = text.trim_start_matches('#').trim_start();
        let Some(rest) = rest.strip_prefix("define") else {
            return;
        };
        let rest = rest.trim_start();
        let name_len = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if name_len == 0 {
            return;
        }
        let name = &rest[..name_len];
        let body = &rest[name_len..];
        self.syn.macros.insert(name.to_string(), body.to_string());
    }

    /// Skips a balanced `<...>` starting at `i` (which is `<`); returns the index after `>`.
    fn skip_angles(&self, i: usize, end: usize) -> usize {
        let mut depth = 0i32;
        let mut paren = 0i32;
        let mut j = i;
        while j < end {
            match self.txt(j) {
                "(" | "[" => paren += 1,
                ")" | "]" => paren -= 1,
                // `sizeof(T) < 8` compares: no argument list opens after `)` or a number.
                "<" if paren == 0
                    && j > i
                    && (self.is(j - 1, ")") || self.kind(j - 1) == Some(TokenKind::Number)) => {}
                "<" if paren == 0 => depth += 1,
                ">" if paren == 0 => {
                    depth -= 1;
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        end
    }

    /// Index of the token matching the bracket at `i` (`(`/`[`/`{`), or `end` when none.
    fn matching(&self, i: usize, end: usize) -> usize {
        let (o, c) = match self.txt(i) {
            "(" => ("(", ")"),
            "[" => ("[", "]"),
            "{" => ("{", "}"),
            _ => return end,
        };
        let mut depth = 0;
        let mut j = i;
        while j < end {
            if self.kind(j) == Some(TokenKind::Punct) {
                let t = self.txt(j);
                if t == o {
                    depth += 1;
                } else if t == c {
                    depth -= 1;
                    if depth == 0 {
                        return j;
                    }
                }
            }
            j += 1;
        }
        end
    }

    /// Index of the `]]` closing the `[[` at `i`.
    fn attr_close(&self, i: usize, end: usize) -> usize {
        (i + 1..end)
            .find(|&j| self.kind(j) == Some(TokenKind::AttrClose))
            .unwrap_or(end)
    }

    /// Parses the items of the attribute `[[` at `open` .. `]]` at `close`.
    fn attrs_in(&self, open: usize, close: usize) -> Vec<Attr> {
        let mut out = Vec::new();
        let mut j = open + 1;
        while j < close {
            if self.is(j, ",") {
                j += 1;
                continue;
            }
            let mut name = String::new();
            while j < close && !self.is(j, "(") && !self.is(j, ",") {
                name.push_str(self.txt(j));
                j += 1;
            }
            let mut args = Vec::new();
            if self.is(j, "(") {
                let m = self.matching(j, close);
                let mut cur: Vec<usize> = Vec::new();
                let mut depth = 0;
                for k in j + 1..m {
                    match self.txt(k) {
                        "(" | "[" | "{" => depth += 1,
                        ")" | "]" | "}" => depth -= 1,
                        "," if depth == 0 => {
                            args.push(join(self.src, self.toks, cur.drain(..)));
                            continue;
                        }
                        _ => {}
                    }
                    cur.push(k);
                }
                if !cur.is_empty() {
                    args.push(join(self.src, self.toks, cur));
                }
                j = m + 1;
            }
            if !name.is_empty() {
                out.push(Attr {
                    name,
                    args,
                    open,
                    close,
                });
            }
        }
        out
    }

    /// Decides what a `{` at namespace or class scope opens, from its statement's tokens.
    fn classify(&mut self, s: usize, brace: usize, stack: &[(Scope, usize)]) -> Result<Scope> {
        let ctx = match stack.last() {
            Some((Scope::Class(_), _)) => Ctx::Class,
            _ => Ctx::Namespace,
        };
        let mut j = s;
        while matches!(self.txt(j), "inline" | "export") && j < brace {
            j += 1;
        }
        if self.is(j, "namespace") {
            let name = (j + 1..brace)
                .find(|&k| self.kind(k) == Some(TokenKind::Ident))
                .map(|k| self.txt(k).to_string());
            return Ok(Scope::Namespace(name));
        }
        if self.is(j, "extern") && self.kind(j + 1) == Some(TokenKind::Str) && j + 2 == brace {
            return Ok(Scope::Namespace(None));
        }
        let mut template_params = Vec::new();
        if self.is(j, "template") && self.is(j + 1, "<") {
            let close = self.skip_angles(j + 1, brace);
            template_params = self.template_param_names(j + 1, close);
            j = close;
        }
        let mut c = j;
        while self.kind(c) == Some(TokenKind::AttrOpen) || self.is(c, "typedef") {
            c = if self.is(c, "typedef") {
                c + 1
            } else {
                self.attr_close(c, brace) + 1
            };
        }
        if matches!(self.txt(c), "struct" | "class" | "union") {
            let mut k = c + 1;
            let mut name = String::new();
            while k < brace {
                match self.kind(k) {
                    Some(TokenKind::AttrOpen) => k = self.attr_close(k, brace),
                    Some(TokenKind::Ident) if self.is(k + 1, "(") => {
                        k = self.matching(k + 1, brace)
                    }
                    Some(TokenKind::Ident) => {
                        name = self.txt(k).to_string();
                        break;
                    }
                    _ => {}
                }
                k += 1;
            }
            return Ok(Scope::Class(name));
        }
        if self.is(c, "enum") {
            return Ok(Scope::Init(ctx));
        }
        // A function: an identifier (or operator) followed by `(`, before any `=`.
        let mut k = j;
        while k < brace {
            match self.kind(k) {
                Some(TokenKind::AttrOpen) => {
                    k = self.attr_close(k, brace) + 1;
                    continue;
                }
                // (`operator=`, and `operator<=` / `operator>=`, which lex as two tokens.)
                Some(TokenKind::Punct)
                    if self.is(k, "=")
                        && !self.is(k.wrapping_sub(1), "operator")
                        && !(self.is(k.wrapping_sub(2), "operator")
                            && matches!(self.txt(k.wrapping_sub(1)), "<" | ">")) =>
                {
                    return Ok(Scope::Init(ctx))
                }
                Some(TokenKind::Punct) if self.is(k, "(") => {
                    let prev = self.txt(k.wrapping_sub(1));
                    if matches!(
                        prev,
                        "decltype" | "alignas" | "__attribute__" | "sizeof" | "noexcept"
                    ) {
                        k = self.matching(k, brace) + 1;
                        continue;
                    }
                    return self.function(s, j, k, brace, template_params, stack);
                }
                // `operator<(...)` names an operator; it opens no template argument list.
                Some(TokenKind::Punct)
                    if self.is(k, "<") && k > j && !self.is(k - 1, "operator") =>
                {
                    k = self.skip_angles(k, brace);
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
        Ok(Scope::Init(ctx))
    }

    fn template_param_names(&self, open: usize, close: usize) -> Vec<String> {
        let mut names = Vec::new();
        let mut last_ident: Option<&str> = None;
        let mut depth = 0;
        let mut in_default = false;
        for k in open + 1..close.saturating_sub(1) {
            let t = self.txt(k);
            match t {
                "<" | "(" => depth += 1,
                ">" | ")" => depth -= 1,
                "," if depth == 0 => {
                    if let Some(n) = last_ident.take() {
                        names.push(n.to_string());
                    }
                    in_default = false;
                    continue;
                }
                "=" if depth == 0 => in_default = true,
                _ => {}
            }
            if depth == 0 && !in_default && self.kind(k) == Some(TokenKind::Ident) {
                last_ident = Some(t);
            }
            // A function-pointer parameter names itself inside parentheses:
            // `void (*dequantize)(device const B*, short, thread float4x4&)`.
            if depth == 1
                && !in_default
                && self.kind(k) == Some(TokenKind::Ident)
                && matches!(self.txt(k - 1), "*" | "&")
                && self.txt(k - 2) == "("
            {
                last_ident = Some(t);
            }
        }
        if let Some(n) = last_ident {
            names.push(n.to_string());
        }
        names
    }

    /// Records a function definition whose parameter list opens at `open`.
    fn function(
        &mut self,
        s: usize,
        after_template: usize,
        open: usize,
        brace: usize,
        template_params: Vec<String>,
        stack: &[(Scope, usize)],
    ) -> Result<Scope> {
        // The name: the identifier before `(`, or `operator` + its symbol.
        let mut name_tok = open.wrapping_sub(1);
        let mut name = self.txt(name_tok).to_string();
        if let Some(op) = (after_template..open).find(|&k| self.is(k, "operator")) {
            name_tok = op;
            name = join(self.src, self.toks, op..open).replace(' ', "");
        } else if self.is(name_tok, ">") {
            // An explicit specialisation `template<> bool f<3>(...) {...}`: the name is before
            // the `<...>`.
            let mut depth = 0i32;
            let mut q = name_tok;
            while q > after_template {
                match self.txt(q) {
                    ">" => depth += 1,
                    ">>" => depth += 2,
                    "<" => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                q -= 1;
            }
            if depth != 0 || self.kind(q.wrapping_sub(1)) != Some(TokenKind::Ident) {
                return Ok(Scope::Init(Ctx::Namespace));
            }
            name_tok = q - 1;
            name = self.txt(name_tok).to_string();
        } else if self.kind(name_tok) != Some(TokenKind::Ident) {
            // `)(`, `](`: not a function definition we understand; a plain block.
            return Ok(Scope::Init(Ctx::Namespace));
        }
        let close = self.matching(open, brace);
        if close >= brace {
            return Err(self.err_at(open, "unbalanced `(` in a declaration"));
        }
        let mut owner = None;
        if self.is(name_tok.wrapping_sub(1), "::") {
            owner = Some(self.txt(name_tok.wrapping_sub(2)).to_string());
        }
        let mut namespaces = Vec::new();
        for (sc, _) in stack {
            match sc {
                Scope::Namespace(Some(n)) => namespaces.push(n.clone()),
                Scope::Class(c) => owner = Some(c.clone()),
                _ => {}
            }
        }
        let mut attrs = Vec::new();
        let mut kernel_tok = None;
        let mut k = after_template;
        while k < brace {
            if k == open {
                k = close + 1;
                continue;
            }
            if self.kind(k) == Some(TokenKind::AttrOpen) {
                let c = self.attr_close(k, brace);
                let items = self.attrs_in(k, c);
                if items.iter().any(|a| a.name == "kernel") {
                    kernel_tok.get_or_insert(k);
                }
                attrs.extend(items);
                k = c + 1;
                continue;
            }
            if k < open && self.is(k, "kernel") {
                kernel_tok.get_or_insert(k);
            }
            if k < open && (self.is(k, "vertex") || self.is(k, "fragment")) && kernel_tok.is_none()
            {
                let what = self.txt(k);
                return Err(self.err_at(
                    k,
                    format!("{what} functions are not supported by ingot (compute kernels only)"),
                ));
            }
            k += 1;
        }
        let params = self.params(open, close);
        self.syn.functions.push(FunctionDef {
            name,
            name_tok,
            owner,
            namespaces,
            decl_start: s,
            template_params,
            kernel_tok,
            attrs,
            params,
            params_open: open,
            body_open: brace,
            body_close: brace,
        });
        Ok(Scope::Function(self.syn.functions.len() - 1))
    }

    fn params(&self, open: usize, close: usize) -> Vec<ParamSyntax> {
        let mut out = Vec::new();
        let mut start = open + 1;
        let mut depth = 0i32;
        let mut k = open + 1;
        while k <= close {
            let t = self.txt(k);
            if self.kind(k) == Some(TokenKind::AttrOpen) {
                k = self.attr_close(k, close) + 1;
                continue;
            }
            match t {
                "(" | "[" | "{" | "<" => depth += 1,
                ")" | "]" | "}" | ">" if k < close => depth -= 1,
                _ => {}
            }
            if k == close || (t == "," && depth == 0) {
                if k > start {
                    out.push(self.param(start, k));
                }
                start = k + 1;
            }
            k += 1;
        }
        // `(void)` declares no parameter.
        if out.len() == 1 && out[0].type_toks.len() == 1 && self.is(out[0].type_toks[0], "void") {
            out.clear();
        }
        out
    }

    fn param(&self, start: usize, end: usize) -> ParamSyntax {
        let mut attrs = Vec::new();
        let mut plain = Vec::new();
        let mut k = start;
        while k < end {
            if self.kind(k) == Some(TokenKind::AttrOpen) {
                let c = self.attr_close(k, end);
                attrs.extend(self.attrs_in(k, c));
                k = c + 1;
                continue;
            }
            plain.push(k);
            k += 1;
        }
        // Drop a default argument.
        if let Some(eq) = plain.iter().position(|&k| self.is(k, "=")) {
            plain.truncate(eq);
        }
        let mut name = String::new();
        let mut name_tok = None;
        // An array declarator `T name[N]`: the name is before the `[`; the brackets stay in the
        // type (the parameter is a pointer, as in C).
        if plain.len() >= 4 && self.is(*plain.last().unwrap_or(&0), "]") {
            if let Some(open) = plain.iter().position(|&k| self.is(k, "[")) {
                if open >= 2 && self.kind(plain[open - 1]) == Some(TokenKind::Ident) {
                    name = self.txt(plain[open - 1]).to_string();
                    name_tok = Some(plain[open - 1]);
                    plain.remove(open - 1);
                }
            }
        }
        if plain.len() >= 2 && name_tok.is_none() {
            if let Some(&last) = plain.last() {
                if self.kind(last) == Some(TokenKind::Ident) {
                    name = self.txt(last).to_string();
                    name_tok = Some(last);
                    plain.pop();
                }
            }
        }
        ParamSyntax {
            start,
            end,
            name,
            name_tok,
            type_toks: plain,
            attrs,
        }
    }

    /// A `;`-terminated statement at namespace or class scope.
    fn statement(&mut self, s: usize, semi: usize, ctx: Ctx) -> Result<()> {
        if ctx == Ctx::Class {
            for k in s..semi {
                if self.kind(k) == Some(TokenKind::Ident)
                    && matches!(self.txt(k + 1), ";" | "," | "=" | "[" | "{" | ":")
                {
                    self.syn.fields.insert(self.txt(k).to_string());
                }
            }
            return Ok(());
        }
        if self.is(s, "template") && !self.is(s + 1, "<") {
            return self.instantiation(s, semi);
        }
        // Program-scope `constant` declarations.
        let mut j = s;
        while matches!(self.txt(j), "static" | "constexpr" | "inline") && j < semi {
            j += 1;
        }
        if !self.is(j, "constant") {
            return Ok(());
        }
        let mut attrs = Vec::new();
        let mut attr_at = None;
        for k in j..semi {
            if self.kind(k) == Some(TokenKind::AttrOpen) {
                let c = self.attr_close(k, semi);
                attrs.extend(self.attrs_in(k, c));
                attr_at.get_or_insert(k);
            }
        }
        if let Some(fc) = attrs.iter().find(|a| a.name == "function_constant") {
            let at = attr_at.unwrap_or(semi);
            let name_tok = at.wrapping_sub(1);
            if self.kind(name_tok) != Some(TokenKind::Ident) || name_tok <= j {
                return Err(self.err_at(at, "expected a name before `[[function_constant]]`"));
            }
            let ty = join(
                self.src,
                self.toks,
                (j + 1..name_tok).filter(|&k| !self.is(k, "const")),
            );
            let index = fc
                .args
                .first()
                .and_then(|a| parse_int(a).or_else(|| self.const_index(a)));
            self.syn.function_constants.push(FunctionConstantDecl {
                name: self.txt(name_tok).to_string(),
                ty,
                index,
                start: s,
                end: semi,
            });
            return Ok(());
        }
        if let Some(eq) = (j..semi).find(|&k| self.is(k, "=")) {
            let name_tok = eq.wrapping_sub(1);
            if self.kind(name_tok) == Some(TokenKind::Ident) {
                self.syn
                    .program_constants
                    .insert(self.txt(name_tok).to_string(), (eq + 1, semi));
            }
        }
        Ok(())
    }

    /// A function-constant index written as an expression (`FC_BASE + 1`), with the
    /// program-scope integer constants declared so far.
    fn const_index(&self, expr: &str) -> Option<u32> {
        fn lookup(this: &Walker<'_>, name: &str, depth: u32) -> Option<i64> {
            let &(a, b) = this.syn.program_constants.get(name)?;
            let text = join(this.src, this.toks, a..b);
            if depth > 16 {
                return None;
            }
            crate::consteval::eval_int(&text, &|n| lookup(this, n, depth + 1))
        }
        let v = crate::consteval::eval_int(expr, &|n| lookup(self, n, 0))?;
        u32::try_from(v).ok()
    }

    fn instantiation(&mut self, s: usize, semi: usize) -> Result<()> {
        let mut host_name = None;
        let mut k = s + 1;
        let mut body_start = s + 1;
        while k < semi {
            // The declaration's attributes end where its parameters or `decltype(` begin (the
            // parameters have attributes of their own).
            if self.is(k, "(") {
                break;
            }
            if self.kind(k) == Some(TokenKind::AttrOpen) {
                let c = self.attr_close(k, semi);
                for a in self.attrs_in(k, c) {
                    if a.name == "host_name" {
                        let raw = a.args.first().cloned().unwrap_or_default();
                        host_name = Some((raw, k));
                    }
                }
                k = c + 1;
                body_start = k;
                continue;
            }
            k += 1;
        }
        let Some((raw, at)) = host_name else {
            return Ok(());
        };
        let host =
            unquote(&raw).ok_or_else(|| self.err_at(at, "host_name expects a string literal"))?;
        // The function: after `decltype(...)` when present, else the name before `<...>(`
        // (full signature) or before `<...>;` (a typedef'd function type).
        let mut j;
        if let Some(d) = (body_start..semi).find(|&k| self.is(k, "decltype")) {
            j = self.matching(d + 1, semi) + 1;
        } else {
            let p = (body_start..semi)
                .find(|&k| self.is(k, "("))
                .unwrap_or(semi);
            // Walk back over `<...>` to the name.
            let mut b = p;
            if p > body_start && self.is(p - 1, ">") {
                let mut depth = 0;
                let mut q = p - 1;
                loop {
                    match self.txt(q) {
                        ">" => depth += 1,
                        "<" => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    if q <= body_start {
                        break;
                    }
                    q -= 1;
                }
                b = q;
            }
            j = b.saturating_sub(1);
            while j > body_start + 1 && self.is(j - 1, "::") {
                j -= 2;
            }
        }
        let mut qualifier = String::new();
        while self.kind(j) == Some(TokenKind::Ident) && self.is(j + 1, "::") {
            qualifier.push_str(self.txt(j));
            qualifier.push_str("::");
            j += 2;
        }
        if self.kind(j) != Some(TokenKind::Ident) {
            return Err(self.err_at(
                j.min(semi),
                "cannot find the function this instantiation names",
            ));
        }
        let function = self.txt(j).to_string();
        let mut args = Vec::new();
        if self.is(j + 1, "<") {
            let close = self.skip_angles(j + 1, semi);
            let mut cur = Vec::new();
            let mut depth = 0;
            for k in j + 2..close.saturating_sub(1) {
                match self.txt(k) {
                    "<" | "(" | "[" => depth += 1,
                    ">" | ")" | "]" => depth -= 1,
                    "," if depth == 0 => {
                        args.push(join(self.src, self.toks, cur.drain(..)));
                        continue;
                    }
                    _ => {}
                }
                cur.push(k);
            }
            if !cur.is_empty() {
                args.push(join(self.src, self.toks, cur));
            }
        }
        let mut param_types = Vec::new();
        let mut after = j + 1;
        if self.is(after, "<") {
            after = self.skip_angles(after, semi);
        }
        if self.is(after, "(") {
            let close = self.matching(after, semi);
            for p in self.params(after, close) {
                param_types.push(
                    p.type_toks
                        .iter()
                        .map(|&k| self.txt(k).to_string())
                        .collect(),
                );
            }
        }
        self.syn.instantiations.push(Instantiation {
            host_name: host,
            function,
            qualifier,
            args,
            param_types,
            start: s,
            end: semi,
        });
        Ok(())
    }
}

/// `"abc"` -> `abc`; adjacent literals concatenate (`"vv_" "Add"` -> `vv_Add`, as macros
/// using `#` produce). Escapes are kept as written (host names have none).
pub fn unquote(s: &str) -> Option<String> {
    let mut out = String::new();
    let mut rest = s.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let inner = rest.strip_prefix('"')?;
        let mut end = None;
        let mut escaped = false;
        for (i, c) in inner.char_indices() {
            match c {
                '\\' if !escaped => escaped = true,
                '"' if !escaped => {
                    end = Some(i);
                    break;
                }
                _ => escaped = false,
            }
        }
        let end = end?;
        out.push_str(&inner[..end]);
        rest = inner[end + 1..].trim_start();
    }
    Some(out)
}

/// Parses a decimal, hex or octal integer literal with optional `u`/`l` suffixes.
pub fn parse_int(s: &str) -> Option<u32> {
    let s = s.trim().trim_end_matches(['u', 'U', 'l', 'L']);
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()?
    } else if s.len() > 1 && s.starts_with('0') {
        u64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<u64>().ok()?
    };
    u32::try_from(v).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex;

    fn syn(src: &str) -> Syntax {
        let toks = lex(src, "t", false).unwrap();
        analyse(src, "t", &toks).unwrap()
    }

    #[test]
    fn finds_functions_and_scopes() {
        let src = "namespace a { struct S { float xy; float f() thread { return xy; } }; }\n\
                   template <typename T, int N = 4> [[kernel]] void k(device T* p [[buffer(1)]], uint i [[thread_position_in_grid]]) { p[i] = 0; }\n\
                   template [[host_name(\"k_f\")]] [[kernel]] decltype(k<float>) k<float>;";
        let s = syn(src);
        assert_eq!(s.functions.len(), 2);
        assert_eq!(s.functions[0].name, "f");
        assert_eq!(s.functions[0].owner.as_deref(), Some("S"));
        assert_eq!(s.functions[0].namespaces, ["a"]);
        let k = &s.functions[1];
        assert!(k.kernel_tok.is_some());
        assert_eq!(k.template_params, ["T", "N"]);
        assert_eq!(k.params.len(), 2);
        assert_eq!(k.params[0].name, "p");
        assert_eq!(k.params[0].attrs[0].name, "buffer");
        assert_eq!(k.params[0].attrs[0].args, ["1"]);
        assert_eq!(s.instantiations.len(), 1);
        assert_eq!(s.instantiations[0].host_name, "k_f");
        assert_eq!(s.instantiations[0].function, "k");
        assert_eq!(s.instantiations[0].args, ["float"]);
        assert!(s.fields.contains("xy"));
    }

    #[test]
    fn string_concatenation_in_host_names() {
        assert_eq!(
            unquote("\"vv_\" \"Add\"\"f32\"").as_deref(),
            Some("vv_Addf32")
        );
        assert_eq!(unquote("\"a\"").as_deref(), Some("a"));
        assert_eq!(unquote("a"), None);
        assert_eq!(unquote("\"a"), None);
        assert_eq!(unquote(""), None);
    }

    #[test]
    fn function_constants_and_program_constants() {
        let s = syn("constant bool has_w [[function_constant(3)]];\nconstant float PI = 3.14f;\nconstant bool no_w = !has_w;");
        assert_eq!(s.function_constants.len(), 1);
        assert_eq!(s.function_constants[0].name, "has_w");
        assert_eq!(s.function_constants[0].ty, "bool");
        assert_eq!(s.function_constants[0].index, Some(3));
        assert!(s.program_constants.contains_key("PI"));
        assert!(s.program_constants.contains_key("no_w"));
    }

    #[test]
    fn unbalanced_braces_are_errors() {
        let src = "kernel void f() {\n";
        let toks = lex(src, "t", false).unwrap();
        let e = analyse(src, "t", &toks).unwrap_err();
        assert_eq!((e.line, e.column), (1, 17));
        let src = "}";
        let toks = lex(src, "t", false).unwrap();
        assert!(analyse(src, "t", &toks).is_err());
    }
}
