//! A small C preprocessor for the user's macros, run before everything else.
//!
//! Real kernel libraries define kernels through macros (`#define UNARY(NAME) kernel void
//! NAME##_f32(...)`) and select code with `#if`. Reflection must see the expanded code, so this
//! pass evaluates conditionals and expands the file's own `#define`s. It keeps line numbers:
//! directives and inactive lines become blank lines, and an expansion is written on the line of
//! its invocation followed by the newlines the invocation spanned. `#include`, `#pragma` and
//! `#line` stay for the target compiler; macros the file does not define (the prelude's) stay
//! unexpanded. Predefined: `__METAL__`, `__METAL_VERSION__` (310), `__HAVE_BFLOAT__`,
//! `__METAL_IOS__`/`__METAL_MACOS__` undefined.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::lexer::{lex, Token, TokenKind};

/// Most bytes an expansion may produce (guards against exponential macros).
const MAX_OUTPUT: usize = 8 << 20;
/// Deepest nesting of macro expansions.
const MAX_DEPTH: u32 = 64;

#[derive(Debug, Clone)]
struct Macro {
    /// `None` for object-like macros.
    params: Option<Vec<String>>,
    variadic: bool,
    body: String,
}

/// The preprocessed text and where each of its lines comes from.
#[derive(Debug, Clone)]
pub struct Preprocessed<'a> {
    /// The text (borrowed when the file needed no preprocessing).
    pub text: Cow<'a, str>,
    /// Line origins (several files when headers were included).
    pub map: LineMap,
}

/// Maps lines of the preprocessed text back to (file, line) of the user's files.
#[derive(Debug, Clone)]
pub struct LineMap {
    /// (first line in the output, file, its line there), by increasing output line.
    segs: Vec<(u32, String, u32)>,
}

impl LineMap {
    fn identity(file: &str) -> LineMap {
        LineMap {
            segs: vec![(1, file.to_string(), 1)],
        }
    }

    /// The (file, line) that line `line` of the preprocessed text comes from.
    pub fn lookup(&self, line: u32) -> (&str, u32) {
        let i = self.segs.partition_point(|s| s.0 <= line);
        match i.checked_sub(1).and_then(|i| self.segs.get(i)) {
            Some((start, file, l)) => (file.as_str(), l + (line - start)),
            None => (self.segs.first().map(|s| s.1.as_str()).unwrap_or(""), line),
        }
    }

    /// Moves an error located in the preprocessed text to the user's file and line.
    pub fn fix(&self, mut e: Error) -> Error {
        let (f, l) = self.lookup(e.line);
        e.file = f.to_string();
        e.line = l;
        e
    }
}

/// Runs the preprocessor over `src` (see the module docs). `#include "x.h"` / `<x.h>` is
/// inlined when `x.h` is found in `include_dirs` (with `#line` directives around it; `#pragma
/// once` and include guards work); other includes stay for the target compiler. Returns the
/// source unchanged (borrowed) when there is nothing to do.
pub fn preprocess<'a>(
    src: &'a str,
    file: &str,
    include_dirs: &[PathBuf],
) -> Result<Preprocessed<'a>> {
    preprocess_with_defines(src, file, include_dirs, &BTreeMap::new())
}

/// [`preprocess`] with object-like macros defined before the file, as a compiler's
/// `-D NAME=VALUE` options define them (an empty value defines `NAME` as `1`). A name that is
/// not an identifier, or a value spanning lines, is an error naming it.
pub fn preprocess_with_defines<'a>(
    src: &'a str,
    file: &str,
    include_dirs: &[PathBuf],
    defines: &BTreeMap<String, String>,
) -> Result<Preprocessed<'a>> {
    for (name, value) in defines {
        check_define(name, value, file)?;
    }
    let toks = lex(src, file, false)?;
    let needs = !defines.is_empty()
        || toks.iter().any(|t| {
            t.kind == TokenKind::Preprocessor && {
                let d = directive(t.text(src)).0;
                matches!(
                    d,
                    "define"
                        | "if"
                        | "ifdef"
                        | "ifndef"
                        | "undef"
                        | "else"
                        | "elif"
                        | "endif"
                        | "error"
                ) || (d == "include" && (!include_dirs.is_empty() || apple_framework(t.text(src))))
            }
        });
    if !needs {
        return Ok(Preprocessed {
            text: Cow::Borrowed(src),
            map: LineMap::identity(file),
        });
    }
    let mut p = Pre {
        file: file.to_string(),
        macros: HashMap::new(),
        out_len: 0,
        include_dirs: include_dirs.to_vec(),
        segs: vec![(1, file.to_string(), 1)],
        once: HashSet::new(),
        depth: 0,
        unseen: None,
    };
    p.predefine();
    for (name, value) in defines {
        p.macros.insert(
            name.clone(),
            Macro {
                params: None,
                variadic: false,
                body: define_body(value).to_string(),
            },
        );
    }
    let text = p.run(src, &toks, 1)?;
    Ok(Preprocessed {
        text: Cow::Owned(text),
        map: LineMap { segs: p.segs },
    })
}

/// The body of a command-line define: `-D NAME` (empty value) defines `NAME` as `1`.
pub fn define_body(value: &str) -> &str {
    if value.trim().is_empty() {
        "1"
    } else {
        value.trim()
    }
}

/// Checks one command-line define: `name` an identifier, `value` one line.
fn check_define(name: &str, value: &str, file: &str) -> Result<()> {
    let ident = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ident {
        return Err(Error::new(
            file,
            1,
            1,
            format!("define `{name}`: a macro name must be an identifier (letters, digits, _)"),
        ));
    }
    if value.contains(['\n', '\r']) {
        return Err(Error::new(
            file,
            1,
            1,
            format!("define `{name}`: the value must be on one line"),
        ));
    }
    Ok(())
}

/// True for an `#include` of an Apple framework header (`<MetalPerformancePrimitives/...>`,
/// `<Metal/...>`): Metal resolves those from the SDK, and no other target has them.
fn apple_framework(include: &str) -> bool {
    let t = include.trim_start().trim_start_matches('#').trim_start();
    let t = t.strip_prefix("include").unwrap_or(t).trim_start();
    let Some(name) = t.strip_prefix('<').or_else(|| t.strip_prefix('"')) else {
        return false;
    };
    let framework = name.split('/').next().unwrap_or("");
    name.contains('/')
        && matches!(
            framework,
            "MetalPerformancePrimitives" | "MetalPerformanceShaders" | "Metal" | "MetalKit"
        )
}

/// Splits `# name rest` into (`name`, `rest`).
fn directive(text: &str) -> (&str, &str) {
    let t = text.trim_start().trim_start_matches('#').trim_start();
    let n = t
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    (&t[..n], &t[n..])
}

/// Removes backslash-newlines and comments from a directive's text.
fn clean(text: &str) -> String {
    let joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
    match lex(&joined, "", true) {
        Ok(toks) => {
            let mut out = String::new();
            let mut pos = 0;
            for t in toks {
                out.push_str(joined.get(pos..t.start).unwrap_or(""));
                if t.kind == TokenKind::Comment {
                    out.push(' ');
                } else {
                    out.push_str(t.text(&joined));
                }
                pos = t.end;
            }
            out.push_str(joined.get(pos..).unwrap_or(""));
            out
        }
        Err(_) => joined,
    }
}

struct Pre {
    /// The file being read (a header while one is inlined).
    file: String,
    macros: HashMap<String, Macro>,
    out_len: usize,
    include_dirs: Vec<PathBuf>,
    /// Line origins of the output, see [`LineMap`].
    segs: Vec<(u32, String, u32)>,
    /// Headers with `#pragma once` already included.
    once: HashSet<PathBuf>,
    /// Include nesting.
    depth: u32,
    /// The first `#include "x.h"` that was not found: its macros are unknown.
    unseen: Option<String>,
}

struct Cond {
    /// This branch is being emitted.
    active: bool,
    /// Some branch of this `#if` chain has been taken.
    taken: bool,
    /// The enclosing region is active.
    parent: bool,
}

impl Pre {
    fn predefine(&mut self) {
        for (n, v) in [
            ("__METAL__", "1"),
            ("__METAL_VERSION__", "310"),
            ("__HAVE_BFLOAT__", "1"),
        ] {
            self.macros.insert(
                n.to_string(),
                Macro {
                    params: None,
                    variadic: false,
                    body: v.to_string(),
                },
            );
        }
    }

    fn err(&self, t: &Token, msg: impl Into<String>) -> Error {
        Error::new(&self.file, t.line, t.col, msg)
    }

    /// Preprocesses `src` (lexed as `toks`); `base` is the output line its first line lands on.
    fn run(&mut self, src: &str, toks: &[Token], base: u32) -> Result<String> {
        let mut out = String::with_capacity(src.len());
        let mut conds: Vec<Cond> = Vec::new();
        let mut pos = 0;
        let mut i = 0;
        let active = |c: &Vec<Cond>| c.last().map(|c| c.active).unwrap_or(true);
        while i < toks.len() {
            let t = toks[i];
            let gap = src.get(pos..t.start).unwrap_or("");
            let text = t.text(src);
            if t.kind == TokenKind::Preprocessor {
                out.push_str(gap);
                let (d, rest) = directive(text);
                let rest = clean(rest);
                let on = active(&conds);
                let mut keep = false;
                match d {
                    "if" | "ifdef" | "ifndef" => {
                        if on {
                            self.check_unseen(&rest, &t)?;
                        }
                        let v = on
                            && match d {
                                "if" => self.eval(&rest, &t)? != 0,
                                "ifdef" => self.macros.contains_key(first_word(&rest)),
                                _ => !self.macros.contains_key(first_word(&rest)),
                            };
                        conds.push(Cond {
                            active: v,
                            taken: v,
                            parent: on,
                        });
                    }
                    "elif" | "elifdef" | "elifndef" => {
                        let Some(c) = conds.last() else {
                            return Err(self.err(&t, format!("#{d} without #if")));
                        };
                        let (parent, taken) = (c.parent, c.taken);
                        let v = parent
                            && !taken
                            && match d {
                                "elif" => self.eval(&rest, &t)? != 0,
                                "elifdef" => self.macros.contains_key(first_word(&rest)),
                                _ => !self.macros.contains_key(first_word(&rest)),
                            };
                        if let Some(c) = conds.last_mut() {
                            c.active = v;
                            c.taken |= v;
                        }
                    }
                    "else" => {
                        let Some(c) = conds.last_mut() else {
                            return Err(self.err(&t, "#else without #if"));
                        };
                        c.active = c.parent && !c.taken;
                        c.taken = true;
                    }
                    "endif" => {
                        if conds.pop().is_none() {
                            return Err(self.err(&t, "#endif without #if"));
                        }
                    }
                    "define" if on => self.define(&rest, &t)?,
                    "undef" if on => {
                        self.macros.remove(first_word(&rest));
                    }
                    "error" if on => {
                        return Err(self.err(&t, format!("#error{}", rest.trim_end())));
                    }
                    "define" | "undef" | "error" => {}
                    "include" if on => match self.resolve(&rest) {
                        Some(path) => self.include(&path, &rest, &t, text, base, &mut out)?,
                        None if apple_framework(&rest) => {
                            let name = rest.trim().trim_end_matches(';').trim();
                            return Err(Error::unsupported(
                                &self.file,
                                t.line,
                                t.col,
                                format!(
                                    "#include {name}: Apple's frameworks are only available to \
                                     Metal on Apple GPUs (ingot runs MSL on CPU and CUDA without them)"
                                ),
                            ));
                        }
                        None => {
                            let r = rest.trim();
                            if r.starts_with('"') && self.unseen.is_none() {
                                self.unseen = Some(r.trim_matches('"').to_string());
                            }
                            keep = true;
                        }
                    },
                    "pragma" if on && rest.trim() == "once" => {
                        if self.depth == 0 {
                            keep = false;
                        }
                    }
                    _ => keep = on,
                }
                if keep && d == "pragma" && self.depth < 64 {
                    // `#pragma unroll N` may use the file's macros, whose #defines are gone.
                    let mut hide = HashSet::new();
                    match self.rescan(&rest, &mut hide, 0, &t) {
                        Ok(x) => {
                            out.push_str("#pragma ");
                            out.push_str(x.trim());
                            out.extend(text.chars().filter(|&c| c == '\n'));
                        }
                        Err(_) => out.push_str(text),
                    }
                } else if keep {
                    out.push_str(text);
                } else {
                    out.extend(text.chars().filter(|&c| c == '\n'));
                }
                pos = t.end;
                i += 1;
                continue;
            }
            if !active(&conds) {
                out.extend(gap.chars().filter(|&c| c == '\n'));
                out.extend(text.chars().filter(|&c| c == '\n'));
                pos = t.end;
                i += 1;
                continue;
            }
            out.push_str(gap);
            if t.kind == TokenKind::Ident && self.macros.contains_key(text) {
                let mut hide = HashSet::new();
                let (expansion, next) = self.expand_at(src, toks, i, &mut hide, 0)?;
                if let Some(next) = next {
                    push_joined(&mut out, &expansion);
                    let last = toks[next - 1];
                    let span = src.get(t.start..last.end).unwrap_or("");
                    out.extend(span.chars().filter(|&c| c == '\n'));
                    pos = last.end;
                    i = next;
                    continue;
                }
            }
            out.push_str(text);
            pos = t.end;
            i += 1;
        }
        if let Some(t) = toks
            .iter()
            .rev()
            .find(|t| t.kind == TokenKind::Preprocessor)
        {
            if !conds.is_empty() {
                return Err(self.err(t, "#if without #endif"));
            }
        }
        out.push_str(src.get(pos..).unwrap_or(""));
        Ok(out)
    }

    /// After an include that was not found, a conditional on an undefined name cannot be
    /// decided here (the header may define it): an error rather than a silent wrong branch.
    fn check_unseen(&self, expr: &str, at: &Token) -> Result<()> {
        let Some(header) = &self.unseen else {
            return Ok(());
        };
        let Ok(toks) = lex(expr, &self.file, false) else {
            return Ok(());
        };
        for t in toks {
            let w = t.text(expr);
            if t.kind == TokenKind::Ident && w != "defined" && !self.macros.contains_key(w) {
                return Err(self.err(
                    at,
                    format!(
                        "cannot decide this conditional: `{w}` may be defined in \"{header}\", which was not found (add its folder to the include directories)"
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The header named by an `#include` argument, when it is in one of the include folders.
    fn resolve(&self, rest: &str) -> Option<PathBuf> {
        let r = rest.trim();
        let name = r
            .strip_prefix('"')
            .and_then(|x| x.split('"').next())
            .or_else(|| r.strip_prefix('<').and_then(|x| x.split('>').next()))?;
        if name.is_empty() {
            return None;
        }
        self.include_dirs
            .iter()
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    }

    /// Inlines the header at `path` in place of the directive `t` (whose text is `text`).
    fn include(
        &mut self,
        path: &PathBuf,
        rest: &str,
        t: &Token,
        text: &str,
        base: u32,
        out: &mut String,
    ) -> Result<()> {
        let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
        if self.once.contains(&canon) {
            out.extend(text.chars().filter(|&c| c == '\n'));
            return Ok(());
        }
        if self.depth >= 32 {
            return Err(self.err(t, "headers include each other too deeply"));
        }
        let name = rest
            .trim()
            .trim_matches(|c| c == '"' || c == '<' || c == '>')
            .to_string();
        let header = std::fs::read_to_string(path)
            .map_err(|e| self.err(t, format!("cannot read header `{name}`: {e}")))?;
        let header = header
            .strip_prefix('\u{feff}')
            .unwrap_or(&header)
            .to_string();
        let htoks = lex(&header, &name, false)?;
        if htoks.iter().any(|h| {
            h.kind == TokenKind::Preprocessor && {
                let (d, r) = directive(h.text(&header));
                d == "pragma" && r.trim() == "once"
            }
        }) {
            self.once.insert(canon);
        }
        let line_here = base + out.matches('\n').count() as u32;
        out.push_str(&format!("#line 1 \"{}\"\n", escape_line(&name)));
        self.segs.push((line_here + 1, name.clone(), 1));
        let outer = std::mem::replace(&mut self.file, name);
        self.depth += 1;
        let sub = self.run(&header, &htoks, line_here + 1);
        self.depth -= 1;
        self.file = outer;
        out.push_str(&sub?);
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let next = t.line + text.matches('\n').count() as u32 + 1;
        let line_here = base + out.matches('\n').count() as u32;
        out.push_str(&format!("#line {next} \"{}\"", escape_line(&self.file)));
        self.segs.push((line_here + 1, self.file.clone(), next));
        Ok(())
    }

    fn define(&mut self, rest: &str, at: &Token) -> Result<()> {
        let rest = rest.trim_start();
        let n = rest
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        if n == 0 {
            return Err(self.err(at, "#define needs a name"));
        }
        let name = rest[..n].to_string();
        let after = &rest[n..];
        let (params, variadic, body) = if let Some(p) = after.strip_prefix('(') {
            let close = p
                .find(')')
                .ok_or_else(|| self.err(at, "unterminated macro parameter list"))?;
            let mut params = Vec::new();
            let mut variadic = false;
            for raw in p[..close].split(',') {
                let w = raw.trim();
                if w.is_empty() {
                    continue;
                }
                if w == "..." {
                    variadic = true;
                    params.push("__VA_ARGS__".to_string());
                } else if let Some(base) = w.strip_suffix("...") {
                    variadic = true;
                    params.push(base.trim().to_string());
                } else {
                    params.push(w.to_string());
                }
            }
            (Some(params), variadic, p[close + 1..].trim().to_string())
        } else {
            (None, false, after.trim().to_string())
        };
        self.macros.insert(
            name,
            Macro {
                params,
                variadic,
                body,
            },
        );
        Ok(())
    }

    /// Expands the macro invoked at `toks[i]`. Returns the text and the index after the
    /// invocation, or `None` for a function-like macro name not followed by `(`.
    fn expand_at(
        &mut self,
        src: &str,
        toks: &[Token],
        i: usize,
        hide: &mut HashSet<String>,
        depth: u32,
    ) -> Result<(String, Option<usize>)> {
        let t = toks[i];
        let name = t.text(src).to_string();
        let Some(m) = self.macros.get(&name).cloned() else {
            return Ok((name, Some(i + 1)));
        };
        if hide.contains(&name) {
            return Ok((name, Some(i + 1)));
        }
        if depth > MAX_DEPTH {
            return Err(self.err(&t, format!("macro `{name}` expands too deeply")));
        }
        let (body, next) = match &m.params {
            None => (m.body.clone(), i + 1),
            Some(params) => {
                if !toks.get(i + 1).is_some_and(|x| x.is(src, "(")) {
                    return Ok((name, None));
                }
                // Collect the arguments.
                let mut args: Vec<String> = Vec::new();
                let mut cur_start: Option<usize> = None;
                let mut cur_end = 0usize;
                let mut depth_p = 0i32;
                let mut j = i + 1;
                let mut close = None;
                while j < toks.len() {
                    let x = toks[j];
                    let s = x.text(src);
                    if x.kind == TokenKind::Punct {
                        match s {
                            "(" | "[" | "{" => {
                                depth_p += 1;
                                if depth_p == 1 && s == "(" {
                                    j += 1;
                                    continue;
                                }
                            }
                            ")" | "]" | "}" => {
                                depth_p -= 1;
                                if depth_p == 0 && s == ")" {
                                    close = Some(j);
                                    break;
                                }
                            }
                            "," if depth_p == 1
                                && !(m.variadic && args.len() + 1 >= params.len()) =>
                            {
                                args.push(arg_text(src, cur_start, cur_end));
                                cur_start = None;
                                j += 1;
                                continue;
                            }
                            _ => {}
                        }
                    }
                    if x.kind == TokenKind::AttrOpen {
                        depth_p += 1;
                    } else if x.kind == TokenKind::AttrClose {
                        depth_p -= 1;
                    }
                    cur_start.get_or_insert(x.start);
                    cur_end = x.end;
                    j += 1;
                }
                let Some(close) = close else {
                    return Err(self.err(&t, format!("unterminated call of macro `{name}`")));
                };
                if cur_start.is_some() || !args.is_empty() {
                    args.push(arg_text(src, cur_start, cur_end));
                }
                while args.len() < params.len() {
                    args.push(String::new());
                }
                if args.len() > params.len()
                    && !(params.is_empty() && args.len() == 1 && args[0].is_empty())
                {
                    return Err(self.err(
                        &t,
                        format!(
                            "macro `{name}` takes {} arguments, {} given",
                            params.len(),
                            args.len()
                        ),
                    ));
                }
                let body = self.substitute(&m.body, params, &args, hide, depth, &t)?;
                (body, close + 1)
            }
        };
        // Rescan with this macro hidden.
        hide.insert(name.clone());
        let res = self.rescan(&body, hide, depth + 1, &t);
        hide.remove(&name);
        Ok((res?, Some(next)))
    }

    /// Replaces parameters in `body` (with `#` and `##`), arguments fully expanded except
    /// next to `#`/`##`.
    fn substitute(
        &mut self,
        body: &str,
        params: &[String],
        args: &[String],
        hide: &mut HashSet<String>,
        depth: u32,
        at: &Token,
    ) -> Result<String> {
        // A leading `_` keeps a `#` at the start of the body from lexing as a directive.
        let prefixed = format!("_ {body}");
        let body = prefixed.as_str();
        let mut toks = lex(body, &self.file, false).map_err(|e| self.err(at, e.message))?;
        if !toks.is_empty() {
            toks.remove(0);
        }
        let idx = |s: &str| params.iter().position(|p| p == s);
        let mut out = String::new();
        let mut paste_next = false;
        let mut k = 0;
        while k < toks.len() {
            let x = toks[k];
            let s = x.text(body);
            let spaced = k > 0 && x.start > toks[k - 1].end;
            if s == "##" && x.kind == TokenKind::Punct {
                paste_next = true;
                k += 1;
                continue;
            }
            let piece;
            let mut from_arg = false;
            if s == "#" && x.kind == TokenKind::Punct {
                if let Some(p) = toks.get(k + 1).and_then(|n| idx(n.text(body))) {
                    piece = stringify(&args[p]);
                    k += 2;
                } else {
                    piece = s.to_string();
                    k += 1;
                }
            } else if let Some(p) = idx(s).filter(|_| x.kind == TokenKind::Ident) {
                let next_paste = toks.get(k + 1).is_some_and(|n| n.text(body) == "##");
                piece = if paste_next || next_paste {
                    args[p].clone()
                } else {
                    self.rescan(&args[p], hide, depth + 1, at)?
                };
                from_arg = true;
                k += 1;
            } else {
                piece = s.to_string();
                k += 1;
            }
            if paste_next {
                out.push_str(piece.trim_start());
                paste_next = false;
            } else if spaced {
                out.push(' ');
                out.push_str(&piece);
            } else if from_arg {
                push_joined(&mut out, &piece);
            } else {
                out.push_str(&piece);
            }
        }
        Ok(out)
    }

    /// Expands every macro in `text`.
    fn rescan(
        &mut self,
        text: &str,
        hide: &mut HashSet<String>,
        depth: u32,
        at: &Token,
    ) -> Result<String> {
        if depth > MAX_DEPTH {
            return Err(self.err(at, "macro expansion nests too deeply"));
        }
        let toks = lex(text, &self.file, false).map_err(|e| self.err(at, e.message))?;
        let mut out = String::new();
        let mut i = 0;
        let mut prev_end = 0;
        while i < toks.len() {
            let x = toks[i];
            if i > 0 && x.start > prev_end {
                out.push(' ');
            }
            let s = x.text(text);
            if x.kind == TokenKind::Ident && self.macros.contains_key(s) && !hide.contains(s) {
                let (e, next) = self.expand_at(text, &toks, i, hide, depth)?;
                if let Some(n) = next {
                    push_joined(&mut out, &e);
                    prev_end = toks[n - 1].end;
                    i = n;
                    self.out_len += e.len();
                    if self.out_len > MAX_OUTPUT {
                        return Err(self.err(at, "macro expansion is too large"));
                    }
                    continue;
                }
            }
            out.push_str(s);
            prev_end = x.end;
            i += 1;
        }
        Ok(out)
    }

    /// Evaluates an `#if` expression.
    fn eval(&mut self, expr: &str, at: &Token) -> Result<i64> {
        // Replace `defined X` / `defined(X)` before expanding.
        let toks = lex(expr, &self.file, false).map_err(|e| self.err(at, e.message))?;
        let mut pre = String::new();
        let mut i = 0;
        while i < toks.len() {
            let s = toks[i].text(expr);
            if s == "defined" {
                let (name, next) = if toks.get(i + 1).is_some_and(|t| t.text(expr) == "(") {
                    (toks.get(i + 2).map(|t| t.text(expr)).unwrap_or(""), i + 4)
                } else {
                    (toks.get(i + 1).map(|t| t.text(expr)).unwrap_or(""), i + 2)
                };
                pre.push_str(if self.macros.contains_key(name) {
                    " 1 "
                } else {
                    " 0 "
                });
                i = next;
                continue;
            }
            pre.push(' ');
            pre.push_str(s);
            i += 1;
        }
        let mut hide = HashSet::new();
        let expanded = self.rescan(&pre, &mut hide, 0, at)?;
        let toks = lex(&expanded, &self.file, false).map_err(|e| self.err(at, e.message))?;
        let words: Vec<&str> = toks.iter().map(|t| t.text(&expanded)).collect();
        let mut e = Eval { w: &words, i: 0 };
        let v = e
            .ternary()
            .ok_or_else(|| self.err(at, format!("cannot evaluate `#if{expr}`")))?;
        if e.i != words.len() {
            return Err(self.err(at, format!("cannot evaluate `#if{expr}`")));
        }
        Ok(v)
    }
}

/// Appends `piece`, with a space when the two would otherwise merge into another token
/// (`-` `-1` must not become `--1`).
fn push_joined(out: &mut String, piece: &str) {
    let merge = |c: char| c.is_ascii_alphanumeric() || c == '_' || "+-<>=&|*/%!^:.#".contains(c);
    let last = out.chars().last();
    let first = piece.chars().next();
    if let (Some(a), Some(b)) = (last, first) {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        if (word(a) && word(b)) || (!word(a) && !word(b) && merge(a) && merge(b)) {
            out.push(' ');
        }
    }
    out.push_str(piece);
}

/// Evaluates an integer constant expression (`128 / 64`, `(1 << 3) + 1`), as `#if` would.
pub(crate) fn eval_int(text: &str) -> Option<i64> {
    let toks = lex(text, "", false).ok()?;
    // Unlike `#if`, an unknown name is not 0 here.
    if toks
        .iter()
        .any(|t| t.kind != TokenKind::Number && t.kind != TokenKind::Punct)
    {
        return None;
    }
    let words: Vec<&str> = toks.iter().map(|t| t.text(text)).collect();
    let mut e = Eval { w: &words, i: 0 };
    let v = e.ternary()?;
    (e.i == words.len()).then_some(v)
}

/// Escapes a file name for a `#line` directive.
fn escape_line(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

fn first_word(s: &str) -> &str {
    let s = s.trim_start();
    let n = s
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    &s[..n]
}

fn arg_text(src: &str, start: Option<usize>, end: usize) -> String {
    match start {
        Some(s) => src.get(s..end).unwrap_or("").trim().to_string(),
        None => String::new(),
    }
}

fn stringify(arg: &str) -> String {
    let collapsed: Vec<&str> = arg.split_whitespace().collect();
    let s = collapsed.join(" ");
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `#if` expression evaluation over tokens (`<`, `>` come as single tokens; `<=`, `<<` are two).
struct Eval<'a> {
    w: &'a [&'a str],
    i: usize,
}

impl Eval<'_> {
    fn peek(&self, k: usize) -> &str {
        self.w.get(self.i + k).copied().unwrap_or("")
    }

    fn ternary(&mut self) -> Option<i64> {
        let c = self.binary(1)?;
        if self.peek(0) == "?" {
            self.i += 1;
            let a = self.ternary()?;
            if self.peek(0) != ":" {
                return None;
            }
            self.i += 1;
            let b = self.ternary()?;
            return Some(if c != 0 { a } else { b });
        }
        Some(c)
    }

    /// The operator at the cursor: (text, token count, precedence).
    fn op(&self) -> Option<(&'static str, usize, u8)> {
        let (a, b) = (self.peek(0), self.peek(1));
        Some(match (a, b) {
            ("||", _) => ("||", 1, 1),
            ("&&", _) => ("&&", 1, 2),
            ("|", _) => ("|", 1, 3),
            ("^", _) => ("^", 1, 4),
            ("&", _) => ("&", 1, 5),
            ("==", _) => ("==", 1, 6),
            ("!=", _) => ("!=", 1, 6),
            ("<", "=") => ("<=", 2, 7),
            (">", "=") => (">=", 2, 7),
            ("<", "<") => ("<<", 2, 8),
            (">", ">") => (">>", 2, 8),
            ("<", _) => ("<", 1, 7),
            (">", _) => (">", 1, 7),
            ("+", _) => ("+", 1, 9),
            ("-", _) => ("-", 1, 9),
            ("*", _) => ("*", 1, 10),
            ("/", _) => ("/", 1, 10),
            ("%", _) => ("%", 1, 10),
            _ => return None,
        })
    }

    /// Precedence climbing: operators of precedence `min` or higher.
    fn binary(&mut self, min: u8) -> Option<i64> {
        let mut l = self.unary()?;
        while let Some((op, n, prec)) = self.op() {
            if prec < min {
                break;
            }
            self.i += n;
            let r = self.binary(prec + 1)?;
            l = match op {
                "||" => i64::from(l != 0 || r != 0),
                "&&" => i64::from(l != 0 && r != 0),
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => i64::from(l == r),
                "!=" => i64::from(l != r),
                "<=" => i64::from(l <= r),
                ">=" => i64::from(l >= r),
                "<" => i64::from(l < r),
                ">" => i64::from(l > r),
                "<<" => l.wrapping_shl(r as u32),
                ">>" => l.wrapping_shr(r as u32),
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                "/" => l.checked_div(r)?,
                "%" => l.checked_rem(r)?,
                _ => return None,
            };
        }
        Some(l)
    }

    fn unary(&mut self) -> Option<i64> {
        let w = self.peek(0).to_string();
        self.i += 1;
        match w.as_str() {
            "!" => Some(i64::from(self.unary()? == 0)),
            "~" => Some(!self.unary()?),
            "-" => Some(self.unary()?.wrapping_neg()),
            "+" => self.unary(),
            "(" => {
                let v = self.ternary()?;
                if self.peek(0) != ")" {
                    return None;
                }
                self.i += 1;
                Some(v)
            }
            "true" => Some(1),
            "" => None,
            s if s.starts_with(|c: char| c.is_ascii_digit()) => {
                let t = s.trim_end_matches(['u', 'U', 'l', 'L']);
                if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
                    i64::from_str_radix(h, 16).ok()
                } else if t.len() > 1 && t.starts_with('0') {
                    i64::from_str_radix(&t[1..], 8).ok()
                } else {
                    t.parse().ok()
                }
            }
            s if s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => Some(0),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pp(s: &str) -> String {
        preprocess(s, "t", &[]).unwrap().text.into_owned()
    }

    #[test]
    fn untouched_without_macros() {
        let s = "#include <metal_stdlib>\nkernel void f() {}\n";
        assert!(matches!(
            preprocess(s, "t", &[]).unwrap().text,
            std::borrow::Cow::Borrowed(_)
        ));
    }

    #[test]
    fn function_like_macros_with_paste_and_stringify() {
        let s = "#define K(NAME, T) \\\n  kernel void NAME##_f(device T* a) { a[0] = 1; }\n#define S(x) #x\nK(add, float)\nconst char* n = S(a  b);\n";
        let out = pp(s);
        assert_eq!(out.lines().count(), s.lines().count());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[3], "kernel void add_f(device float* a) { a[0] = 1; }");
        assert_eq!(lines[4], "const char* n = \"a b\";");
        // `-X` with X = `-1` must not paste into `--1`.
        assert_eq!(
            pp("#define X -1\nint y = -X;\n").lines().nth(1),
            Some("int y = - -1;")
        );
    }

    #[test]
    fn pragmas_see_the_macros() {
        let out = pp("#define N 4\nvoid f() {\n#pragma unroll N\nfor (;;) {}\n}\n");
        assert_eq!(out.lines().nth(2), Some("#pragma unroll 4"));
        assert_eq!(out.lines().count(), 5);
    }

    #[test]
    fn conditionals() {
        let s = "#define A 2\n#if A >= 2 && defined(__METAL__)\nint yes;\n#else\nint no;\n#endif\n#ifdef B\nint b;\n#elif __METAL_VERSION__ >= 300\nint v3;\n#endif\n";
        let out = pp(s);
        assert!(out.contains("int yes;"));
        assert!(!out.contains("int no;"));
        assert!(!out.contains("int b;"));
        assert!(out.contains("int v3;"));
        assert_eq!(out.lines().count(), s.lines().count());
    }

    #[test]
    fn errors_and_limits() {
        assert!(preprocess("#if 1\nint a;\n", "t", &[]).is_err());
        assert!(preprocess("#endif\n", "t", &[]).is_err());
        let e = preprocess("#error stop here\n", "t", &[]).unwrap_err();
        assert!(e.message.contains("stop here"));
        // Exponential growth is cut off, never a hang or a panic.
        let mut s = String::from("#define A0 x x\n");
        for i in 1..40 {
            s.push_str(&format!("#define A{i} A{} A{}\n", i - 1, i - 1));
        }
        s.push_str("A39\n");
        assert!(preprocess(&s, "t", &[]).is_err());
        // Self-reference stops.
        assert_eq!(
            pp("#define X X + 1\nint y = X;\n").lines().nth(1),
            Some("int y = X + 1;")
        );
    }

    #[test]
    fn command_line_defines() {
        let defs: BTreeMap<String, String> = [("N", "8"), ("FLAG", "")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let s = "#if FLAG\nint a[N];\n#else\nint none;\n#endif\nfloat b = N * 2;\n";
        let out = preprocess_with_defines(s, "t", &[], &defs).unwrap().text;
        assert!(out.contains("int a[8];"), "{out}");
        assert!(!out.contains("int none;"));
        assert!(out.contains("float b = 8 * 2;"));
        // Expanded even when the file has no directive of its own.
        let plain = preprocess_with_defines("int c = N;\n", "t", &[], &defs).unwrap();
        assert_eq!(plain.text, "int c = 8;\n");
        let bad: BTreeMap<String, String> = [("1X".to_string(), "2".to_string())].into();
        let e = preprocess_with_defines("int c;\n", "t", &[], &bad).unwrap_err();
        assert!(e.message.contains("`1X`"), "{}", e.message);
        let multi: BTreeMap<String, String> = [("X".to_string(), "1\n2".to_string())].into();
        assert!(preprocess_with_defines("int c;\n", "t", &[], &multi).is_err());
    }
}
