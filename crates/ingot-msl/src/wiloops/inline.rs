//! Inlining of helper functions that hold barriers or SIMD-group functions, so the former
//! sees every split point in the kernel body (design note: `docs/cpu-engine.md`).
//!
//! A call that is a statement of its own (`h<3>(x, buf, lid);`, `y = h(x);`,
//! `float y = h(x);`) of a free function becomes a block: each parameter a declaration
//! initialised from its argument (references stay references, arrays become pointers), the
//! body with its names renamed apart (a helper inlined twice declares nothing twice) and its
//! template parameters replaced by the call's arguments or their defaults. A `return` at the
//! end assigns the result; earlier ones leave a `do { } while (0)` around the body (not from
//! inside a loop or `switch` of the helper). What it cannot do with certainty (a call inside
//! an expression, overloads of one arity, a template parameter to deduce, a member function)
//! it declines with the reason: the kernel then keeps fibers.

use std::collections::HashMap;

use crate::lexer::{lex, significant, Token, TokenKind};

/// One template parameter of a helper.
#[derive(Debug, Clone)]
pub(crate) struct TemplateParam {
    pub name: String,
    /// `typename` / `class` (else a value).
    pub is_type: bool,
    pub default: Option<String>,
}

/// A helper function's definition, as translated text.
#[derive(Debug, Clone)]
pub(crate) struct Helper {
    pub template: Vec<TemplateParam>,
    /// The return type (`void` for none).
    pub ret: String,
    /// Each parameter: its declaration text (type and name, attributes dropped) and name.
    pub params: Vec<(String, String)>,
    /// The body, braces included.
    pub body: String,
}

/// Most calls inlined into one kernel (a recursive helper or a huge library stops here).
const MAX_INLINED: usize = 64;

/// `body` with every statement-level call of a helper `lookup` knows inlined, repeatedly
/// (helpers calling helpers); or why it cannot be.
pub(crate) fn expand(
    body: &str,
    lookup: &dyn Fn(&str) -> Option<Vec<Helper>>,
) -> Result<String, String> {
    let mut text = body.to_string();
    let mut count = 0usize;
    let mut cache: HashMap<String, Option<Vec<Helper>>> = HashMap::new();
    loop {
        let toks =
            lex(&text, "", false).map_err(|e| format!("the body could not be read ({e})"))?;
        let toks = significant(&toks);
        let Some((a, b, replacement)) = next_call(&text, &toks, lookup, &mut cache, count)? else {
            return Ok(text);
        };
        count += 1;
        if count > MAX_INLINED {
            return Err(format!(
                "more than {MAX_INLINED} helper calls with barriers or SIMD-group functions to inline"
            ));
        }
        let start = toks[a].start;
        let end = toks[b].end;
        text.replace_range(start..end, &replacement);
    }
}

fn text_of<'a>(src: &'a str, toks: &[Token], i: usize) -> &'a str {
    toks.get(i).map(|t| t.text(src)).unwrap_or("")
}

/// Index of the bracket closing the one at `i` (`(`, `[`, `{`, or `<` counted with the
/// others), if any.
fn close_of(src: &str, toks: &[Token], i: usize) -> Option<usize> {
    let open = text_of(src, toks, i);
    let close = match open {
        "(" => ")",
        "[" => "]",
        "{" => "}",
        "<" => ">",
        _ => return None,
    };
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate().skip(i) {
        let s = t.text(src);
        if s == open {
            depth += 1;
        } else if s == close {
            depth -= 1;
            if depth == 0 {
                return Some(k);
            }
        } else if open == "<" && matches!(s, ";" | "{" | "}") {
            return None;
        } else if open == "<" && s == "(" {
            // skip a parenthesised argument
            let mut d = 0i32;
            for (j, u) in toks.iter().enumerate().skip(k) {
                match u.text(src) {
                    "(" => d += 1,
                    ")" => {
                        d -= 1;
                        if d == 0 {
                            return close_of_angle_from(src, toks, i, j + 1, depth);
                        }
                    }
                    _ => {}
                }
            }
            return None;
        }
    }
    None
}

fn close_of_angle_from(
    src: &str,
    toks: &[Token],
    _i: usize,
    from: usize,
    mut depth: i32,
) -> Option<usize> {
    let mut k = from;
    while k < toks.len() {
        match text_of(src, toks, k) {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return Some(k);
                }
            }
            "(" => {
                k = close_of(src, toks, k)?;
            }
            ";" | "{" | "}" => return None,
            _ => {}
        }
        k += 1;
    }
    None
}

/// Splits tokens `a..b` at top-level commas into texts.
fn split_args(src: &str, toks: &[Token], a: usize, b: usize) -> Vec<String> {
    let mut out = Vec::new();
    if a >= b {
        return out;
    }
    let mut depth = 0i32;
    let mut from = a;
    for k in a..b {
        match text_of(src, toks, k) {
            "(" | "[" | "{" | "<" => depth += 1,
            ")" | "]" | "}" | ">" => depth -= 1,
            "," if depth == 0 => {
                out.push(src[toks[from].start..toks[k - 1].end].to_string());
                from = k + 1;
            }
            _ => {}
        }
    }
    if from < b {
        out.push(src[toks[from].start..toks[b - 1].end].to_string());
    }
    out
}

/// The first statement-level helper call: its token range (statement included) and its
/// replacement.
fn next_call(
    src: &str,
    toks: &[Token],
    lookup: &dyn Fn(&str) -> Option<Vec<Helper>>,
    cache: &mut HashMap<String, Option<Vec<Helper>>>,
    count: usize,
) -> Result<Option<(usize, usize, String)>, String> {
    for i in 0..toks.len() {
        if toks[i].kind != TokenKind::Ident {
            continue;
        }
        let name = toks[i].text(src);
        if matches!(text_of(src, toks, i.wrapping_sub(1)), "." | "->" | "::") {
            continue;
        }
        let next = text_of(src, toks, i + 1);
        if next != "(" && next != "<" {
            continue;
        }
        let defs = cache
            .entry(name.to_string())
            .or_insert_with(|| lookup(name))
            .clone();
        let Some(defs) = defs else { continue };
        // Template arguments, then the call's parentheses.
        let (targs, open) = if next == "<" {
            let Some(c) = close_of(src, toks, i + 1) else {
                continue;
            };
            (split_args(src, toks, i + 2, c), c + 1)
        } else {
            (Vec::new(), i + 1)
        };
        if text_of(src, toks, open) != "(" {
            continue;
        }
        let close = close_of(src, toks, open).ok_or("a helper call could not be read")?;
        let args = split_args(src, toks, open + 1, close);
        if text_of(src, toks, close + 1) != ";" {
            return Err(format!(
                "the helper `{name}` (barriers or SIMD-group functions) is called inside an expression"
            ));
        }
        let end = close + 1;
        // What comes before the call: the statement's start.
        let prev = i.wrapping_sub(1);
        let prev_text = text_of(src, toks, prev);
        let (start, form) = if i == 0 || matches!(prev_text, ";" | "{" | "}" | ")" | "else" | ":") {
            (i, Form::Discard)
        } else if prev_text == "=" {
            let mut s = prev;
            while s > 0 && !matches!(text_of(src, toks, s - 1), ";" | "{" | "}") {
                s -= 1;
            }
            if s == prev {
                return Err(format!("the call of the helper `{name}` could not be read"));
            }
            let lhs = src[toks[s].start..toks[prev - 1].end].to_string();
            let last = prev - 1;
            let before = text_of(src, toks, last.wrapping_sub(1));
            let is_decl = last > s
                && toks[last].kind == TokenKind::Ident
                && (toks[last - 1].kind == TokenKind::Ident || matches!(before, ">" | "*" | "&"))
                && !matches!(before, "return");
            if is_decl {
                (s, Form::Declare(lhs))
            } else {
                (s, Form::Assign(lhs))
            }
        } else {
            return Err(format!(
                "the helper `{name}` (barriers or SIMD-group functions) is called inside an expression"
            ));
        };
        let candidates: Vec<&Helper> = defs
            .iter()
            .filter(|h| h.params.len() == args.len())
            .collect();
        let h = match candidates.as_slice() {
            [h] => *h,
            [] => {
                return Err(format!(
                    "no definition of the helper `{name}` takes {} arguments (default arguments are not inlined)",
                    args.len()
                ))
            }
            _ => {
                return Err(format!(
                    "the helper `{name}` has overloads of {} parameters",
                    args.len()
                ))
            }
        };
        let rep = inline_one(name, h, &targs, &args, &form, count)?;
        return Ok(Some((start, end, rep)));
    }
    Ok(None)
}

enum Form {
    /// `h(args);`
    Discard,
    /// `lhs = h(args);`
    Assign(String),
    /// `T name = h(args);` (the text before `=`).
    Declare(String),
}

/// True when `s` is a name, possibly with members and indices (`a`, `a.b[i]`, `p->x`).
fn is_lvalue(s: &str) -> bool {
    let Ok(t) = lex(s, "", false) else {
        return false;
    };
    let t = significant(&t);
    let mut depth = 0i32;
    !t.is_empty()
        && t[0].kind == TokenKind::Ident
        && t.iter().all(|x| {
            let w = x.text(s);
            match w {
                "[" => {
                    depth += 1;
                    true
                }
                "]" => {
                    depth -= 1;
                    true
                }
                _ if depth > 0 => true,
                "." | "->" | "::" => true,
                _ => x.kind == TokenKind::Ident,
            }
        })
}

/// The inlined block for one call.
fn inline_one(
    name: &str,
    h: &Helper,
    targs: &[String],
    args: &[String],
    form: &Form,
    n: usize,
) -> Result<String, String> {
    // Template parameters: the call's arguments, else the defaults.
    let mut subst: HashMap<String, String> = HashMap::new();
    for (k, tp) in h.template.iter().enumerate() {
        let v = match (targs.get(k), &tp.default) {
            (Some(a), _) => a.clone(),
            (None, Some(d)) => d.clone(),
            (None, None) => {
                return Err(format!(
                    "the template parameter `{}` of the helper `{name}` is deduced (not inlined)",
                    tp.name
                ))
            }
        };
        let v = if tp.is_type { v } else { format!("({v})") };
        if !tp.name.is_empty() {
            subst.insert(tp.name.clone(), v);
        }
    }
    if targs.len() > h.template.len() {
        return Err(format!(
            "the helper `{name}` is called with more template arguments than it has"
        ));
    }
    let suffix = format!("_ingot_in{n}");
    // Names the body declares and the parameters: renamed apart.
    let btoks = lex(&h.body, "", false)
        .map_err(|e| format!("the helper `{name}` could not be read ({e})"))?;
    let btoks = significant(&btoks);
    let mut rename: HashMap<String, String> = HashMap::new();
    for (_, p) in &h.params {
        if !p.is_empty() {
            rename.insert(p.clone(), format!("{p}{suffix}"));
        }
    }
    for d in crate::purity::declared_names(&h.body, &btoks, 0, btoks.len()) {
        if !subst.contains_key(&d) {
            rename.insert(d.clone(), format!("{d}{suffix}"));
        }
    }
    let ret_name = format!("ingot_ret{suffix}");
    let ret = substitute(&h.ret, &subst, &HashMap::new());
    let is_void = ret.trim() == "void";
    if is_void && !matches!(form, Form::Discard) {
        return Err(format!("the helper `{name}` returns nothing"));
    }
    if ret
        .split_whitespace()
        .any(|w| w == "auto" || w == "decltype")
    {
        return Err(format!("the helper `{name}` returns `auto`"));
    }
    let (body, early) = returns(&h.body, &btoks, &ret_name, is_void)
        .ok_or_else(|| format!("the helper `{name}` returns from inside a loop or `switch`"))?;
    let body = substitute(&body, &subst, &rename);
    let mut out = String::new();
    if !is_void {
        out.push_str(&format!("{ret} {ret_name}; "));
    }
    out.push_str("{ ");
    for ((decl, pname), arg) in h.params.iter().zip(args) {
        let decl = substitute(decl, &subst, &rename);
        let is_ref = top_level_ref(&decl);
        let is_array = decl.trim_end().ends_with(']');
        if pname.is_empty() {
            out.push_str(&format!("(void)({arg}); "));
            continue;
        }
        let new_name = format!("{pname}{suffix}");
        if is_array {
            // `T x[N]` decays to a pointer.
            let head = decl.split('[').next().unwrap_or("").trim_end();
            let head = head.strip_suffix(&new_name).unwrap_or(head).trim_end();
            out.push_str(&format!("{head}* {new_name} = ({arg}); "));
        } else if is_ref && !is_lvalue(arg) {
            if !decl
                .split_whitespace()
                .any(|w| w == "const" || w == "constant")
            {
                return Err(format!(
                    "the helper `{name}` binds a non-const reference to `{arg}`"
                ));
            }
            let copy = decl.replacen('&', " ", 1);
            out.push_str(&format!("{copy} = ({arg}); "));
        } else {
            out.push_str(&format!("{decl} = ({arg}); "));
        }
    }
    if early {
        out.push_str(&format!("do {body} while (0); "));
    } else {
        out.push_str(&body);
        out.push(' ');
    }
    out.push('}');
    match form {
        Form::Discard => {
            if !is_void {
                out = format!("{{ {out} (void){ret_name}; }}");
            }
        }
        Form::Assign(lhs) => out = format!("{{ {out} {lhs} = {ret_name}; }}"),
        Form::Declare(lhs) => out = format!("{out} {lhs} = {ret_name};"),
    }
    Ok(out)
}

/// True when a parameter declaration is a reference (`T& x`, `thread U& total`).
fn top_level_ref(decl: &str) -> bool {
    let mut depth = 0i32;
    for c in decl.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            '&' if depth == 0 => return true,
            _ => {}
        }
    }
    false
}

/// Identifiers of `text` replaced: `subst` (template parameters) and `rename` (locals), not
/// after `.`, `->` or `::`.
fn substitute(
    text: &str,
    subst: &HashMap<String, String>,
    rename: &HashMap<String, String>,
) -> String {
    let Ok(toks) = lex(text, "", false) else {
        return text.to_string();
    };
    let mut out = String::with_capacity(text.len() + 64);
    let mut pos = 0;
    let mut prev = "";
    for t in &toks {
        let w = t.text(text);
        out.push_str(&text[pos..t.start]);
        let member = matches!(prev, "." | "->" | "::");
        let rep = if t.kind == TokenKind::Ident && !member {
            subst.get(w).or_else(|| rename.get(w))
        } else {
            None
        };
        match rep {
            Some(r) => out.push_str(r),
            None => out.push_str(w),
        }
        pos = t.end;
        if t.kind != TokenKind::Comment {
            prev = w;
        }
    }
    out.push_str(&text[pos..]);
    out
}

/// The body with its `return`s rewritten: the last statement's `return e;` assigns
/// `ret_name`, other `return`s leave the `do { } while (0)` the caller wraps around the body
/// (the second value says whether there are any). None when a `return` is inside a loop or
/// `switch` of the body.
fn returns(body: &str, toks: &[Token], ret_name: &str, is_void: bool) -> Option<(String, bool)> {
    let text = |i: usize| text_of(body, toks, i);
    // Which `{` open loops: the `{` after `for (...)`, `while (...)`, `switch (...)`, `do`.
    let mut loop_brace = vec![false; toks.len()];
    let mut loop_stmt_start = vec![false; toks.len()];
    for k in 0..toks.len() {
        match text(k) {
            "for" | "while" | "switch" if text(k + 1) == "(" => {
                let c = close_of(body, toks, k + 1)?;
                if text(c + 1) == "{" {
                    loop_brace[c + 1] = true;
                } else {
                    loop_stmt_start[c + 1] = true;
                }
            }
            "do" => {
                if text(k + 1) == "{" {
                    loop_brace[k + 1] = true;
                } else {
                    loop_stmt_start[k + 1] = true;
                }
            }
            _ => {}
        }
    }
    let last = toks.len().checked_sub(1)?;
    let mut stack: Vec<bool> = Vec::new();
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut early = false;
    let mut k = 0;
    while k < toks.len() {
        match text(k) {
            "{" => stack.push(loop_brace[k]),
            "}" => {
                stack.pop();
            }
            "return" => {
                let in_loop = stack.iter().any(|&l| l) || loop_stmt_start[k];
                let semi = (k..toks.len()).find(|&j| text(j) == ";")?;
                // The body's final statement: `return e; }`.
                let final_stmt = semi + 1 == last && stack.len() == 1;
                let expr = if semi > k + 1 {
                    Some(body[toks[k + 1].start..toks[semi - 1].end].to_string())
                } else {
                    None
                };
                if expr.is_some() == is_void {
                    return None;
                }
                let assign = expr
                    .map(|e| format!("{ret_name} = ({e}); "))
                    .unwrap_or_default();
                if final_stmt {
                    edits.push((k, semi, assign));
                } else {
                    if in_loop {
                        return None;
                    }
                    early = true;
                    edits.push((k, semi, format!("{{ {assign}break; }}")));
                }
                k = semi;
            }
            _ => {}
        }
        k += 1;
    }
    let mut out = body.to_string();
    for (a, b, rep) in edits.into_iter().rev() {
        out.replace_range(toks[a].start..toks[b].end, &rep);
    }
    Some((out, early))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper(
        template: &[(&str, bool, Option<&str>)],
        ret: &str,
        params: &[(&str, &str)],
        body: &str,
    ) -> Helper {
        Helper {
            template: template
                .iter()
                .map(|(n, t, d)| TemplateParam {
                    name: n.to_string(),
                    is_type: *t,
                    default: d.map(|s| s.to_string()),
                })
                .collect(),
            ret: ret.into(),
            params: params
                .iter()
                .map(|(d, n)| (d.to_string(), n.to_string()))
                .collect(),
            body: body.into(),
        }
    }

    #[test]
    fn inlines_statements() {
        let h = helper(
            &[("N", false, Some("1"))],
            "void",
            &[("float* xs", "xs"), ("uint lane", "lane")],
            "{ if (lane == 0) { for (int i = 0; i < N; i++) xs[i] = 0; } threadgroup_barrier(mem_flags::mem_threadgroup); }",
        );
        let look = |n: &str| (n == "init").then(|| vec![h.clone()]);
        let out = expand("{ float i = 2; init(buf, lid); init<3>(buf, lid); }", &look).unwrap();
        assert!(out.contains("float* xs_ingot_in0 = (buf);"), "{out}");
        assert!(out.contains("i_ingot_in0 < (1)"), "{out}");
        assert!(out.contains("i_ingot_in1 < (3)"), "{out}");
        assert!(out.contains("float i = 2;"), "{out}");
        assert!(!out.contains("init("), "{out}");
    }

    #[test]
    fn results_and_early_returns() {
        let h = helper(
            &[],
            "float",
            &[("float x", "x"), ("thread float& acc", "acc")],
            "{ if (x < 0) return 0.0f; acc += x; threadgroup_barrier(mem_flags::mem_none); return acc * 2; }",
        );
        let look = |n: &str| (n == "h").then(|| vec![h.clone()]);
        let out = expand("{ float y = h(a + 1, s); z = h(b, s); }", &look).unwrap();
        assert!(out.contains("float ingot_ret_ingot_in0;"), "{out}");
        assert!(out.contains("do {"), "{out}");
        assert!(
            out.contains("{ ingot_ret_ingot_in0 = (0.0f); break; }"),
            "{out}"
        );
        assert!(out.contains("float y = ingot_ret_ingot_in0;"), "{out}");
        assert!(out.contains("z = ingot_ret_ingot_in1;"), "{out}");
        assert!(out.contains("thread float& acc_ingot_in0 = (s);"), "{out}");
        // Inside an expression: declined.
        assert!(expand("{ float y = 1 + h(a, s); }", &look).is_err());
    }

    #[test]
    fn declines_returns_in_loops() {
        let h = helper(&[], "void", &[("int n", "n")], "{ for (int i = 0; i < n; ++i) { if (i == 3) return; threadgroup_barrier(mem_flags::mem_none); } }");
        let look = |n: &str| (n == "h").then(|| vec![h.clone()]);
        assert!(expand("{ h(4); }", &look).is_err());
    }
}
