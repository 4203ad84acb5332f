//! Code generation of the work-item loop form (see `mod.rs` for the model).

use std::collections::HashSet;

use super::decl::{Decl, Init, Reader, Var};
use super::stmt::{Span, Stmt};
use crate::lexer::{Token, TokenKind};

/// What the caller knows about the kernel's parameters.
pub(crate) struct Params {
    /// Per-thread builtin parameters: name -> the expression of its value from `ingot_t`.
    pub per_thread: Vec<(String, String, String)>,
    /// Every parameter name, with whether it is a pointer.
    pub all: Vec<(String, bool)>,
}

/// A per-thread variable kept in a per-thread array.
struct Hoisted {
    name: String,
    storage_name: String,
    is_ref: bool,
}

/// One level of the mask chain: the mask array's name.
#[derive(Clone)]
struct Level {
    mask: String,
    /// For a loop's `L` (iteration mask) and `C` (this iteration's body mask).
    loop_id: Option<(usize, bool)>,
}

pub(crate) struct Former<'a> {
    src: &'a str,
    toks: &'a [Token],
    collectives: &'a HashSet<String>,
    /// Helpers that only make SIMD-group exchanges and have no effect (see
    /// `reflect::replay_helpers`): a call runs as many deposit passes as it makes exchanges.
    replay: &'a HashSet<String>,
    params: &'a Params,
    out: String,
    /// Storage types and allocations, written at the top of the group function (so a mask or
    /// array inside a loop is allocated once per group).
    types: String,
    allocs: String,
    /// `sizeof` of each per-thread element allocated.
    sizes: Vec<String>,
    /// Hoisted variables in scope, innermost last (a scope is a Vec).
    scopes: Vec<Vec<Hoisted>>,
    chain: Vec<Level>,
    region: Vec<String>,
    n: usize,
    loops: usize,
    /// Names already used for hoisted storage (each name once per kernel).
    used_names: HashSet<String>,
    /// Parameters the body modifies: per-thread copies.
    modified_params: Vec<String>,
    /// Every name the body declares (a per-thread value unless proven uniform).
    locals: HashSet<String>,
    /// Locals declared at group level by a uniform loop (the same for every thread).
    uniform_locals: HashSet<String>,
    /// Compile-time declarations of the kernel's outermost block moved to the top of the group
    /// function (so per-thread storage types may name them), by first token.
    moved: HashSet<usize>,
    /// The kernel has no `return`: its root mask stays all ones, so loops under it test no
    /// mask (and the compiler may vectorise them).
    root_clean: bool,
    pub refusal: Option<String>,
}

fn uses(text: &str, name: &str) -> bool {
    let b = text.as_bytes();
    let mut from = 0;
    while let Some(k) = text[from..].find(name) {
        let s = from + k;
        let e = s + name.len();
        let ok_l = s == 0 || !(b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_');
        let ok_r = e >= b.len() || !(b[e].is_ascii_alphanumeric() || b[e] == b'_');
        if ok_l && ok_r {
            return true;
        }
        from = e;
    }
    false
}

impl<'a> Former<'a> {
    pub fn new(
        src: &'a str,
        toks: &'a [Token],
        collectives: &'a HashSet<String>,
        replay: &'a HashSet<String>,
        params: &'a Params,
    ) -> Former<'a> {
        Former {
            src,
            toks,
            collectives,
            replay,
            params,
            out: String::new(),
            types: String::new(),
            allocs: String::new(),
            sizes: Vec::new(),
            scopes: vec![Vec::new()],
            chain: Vec::new(),
            region: Vec::new(),
            n: 0,
            loops: 0,
            used_names: HashSet::new(),
            modified_params: Vec::new(),
            locals: HashSet::new(),
            uniform_locals: HashSet::new(),
            moved: HashSet::new(),
            root_clean: false,
            refusal: None,
        }
    }

    fn refuse(&mut self, why: impl Into<String>) {
        if self.refusal.is_none() {
            self.refusal = Some(why.into());
        }
    }

    fn text(&self, i: usize) -> &'a str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    /// The source text of a span (original spacing).
    fn span_text(&self, s: Span) -> &'a str {
        if s.is_empty() {
            return "";
        }
        let a = self.toks[s.a].start;
        let b = self.toks[s.b - 1].end;
        self.src.get(a..b).unwrap_or("")
    }

    /// A new mask (one byte per thread), allocated at the top of the group function.
    fn new_mask(&mut self) -> String {
        let m = self.fresh("m");
        self.allocs
            .push_str(&format!("  uint8_t* {m} = ingot_g.mask();\n"));
        self.sizes.push("1".into());
        m
    }

    /// Per-thread storage of type-id `ty` named `name` (`name_t` is its type).
    fn new_storage(&mut self, name: &str, ty: &str) {
        self.types.push_str(&format!("  using {name}_t = {ty};\n"));
        self.allocs.push_str(&format!(
            "  {name}_t* {name} = ingot_g.alloc<{name}_t>();\n"
        ));
        self.sizes.push(format!("sizeof({name}_t)"));
    }

    fn fresh(&mut self, stem: &str) -> String {
        self.n += 1;
        format!("ingot_{stem}{}", self.n)
    }

    /// Collective calls in `s`: (first token, close paren). A call of a replayed helper
    /// starts at its object (`op.simd_reduce(x)` from `op`).
    fn collective_calls(&self, s: Span) -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let p = super::stmt::Parser {
            src: self.src,
            toks: self.toks,
        };
        for i in s.a..s.b {
            let t = self.toks[i];
            if t.kind != TokenKind::Ident || self.text(i + 1) != "(" {
                continue;
            }
            let member = matches!(self.text(i.wrapping_sub(1)), "." | "->");
            let name = self.text(i);
            if self.collectives.contains(name) && !member {
                if let Some(c) = p.close_of(i + 1) {
                    v.push((i, c));
                }
            } else if self.replay.contains(name) {
                let mut a = i;
                while a >= s.a + 2
                    && matches!(self.text(a - 1), "." | "->")
                    && self.toks[a - 2].kind == TokenKind::Ident
                {
                    a -= 2;
                }
                if let Some(c) = p.close_of(i + 1) {
                    v.push((a, c));
                }
            }
        }
        v
    }

    /// True when the call starting at `a` is a replayed helper (not one SIMD-group function).
    fn is_replay(&self, a: usize) -> bool {
        !self.collectives.contains(self.text(a)) || self.text(a + 1) != "("
    }

    /// The deposit pass(es) of the call `call` (starting at token `a`): one pass for a
    /// SIMD-group function, one a exchange for a replayed helper.
    fn deposit_passes(&self, head: &str, a: usize, call: &str) -> String {
        if self.is_replay(a) {
            format!(
                "  ingot_g.deposit_begin();\n  do {{\n{head}    ingot_g.at(ingot_i, 1);\n    (void)({call});\n  }}\n  }} while (ingot_g.next_pass());\n  ingot_g.consume_begin();\n"
            )
        } else {
            format!(
                "  ingot_g.deposit_begin();\n{head}    ingot_g.at(ingot_i, 1);\n    (void)({call});\n  }}\n  ingot_g.consume_begin();\n"
            )
        }
    }

    fn has_split(&self, s: &Stmt) -> bool {
        let sp = span_of(s);
        sp.is_some_and(|sp| !self.collective_calls(sp).is_empty() || self.has_barrier(sp))
    }

    /// True when `s` ends the current region: a split point, or a declaration that runs once
    /// per group.
    fn ends_region(&self, s: &Stmt) -> bool {
        if self.has_split(s) {
            return true;
        }
        let r = Reader {
            src: self.src,
            toks: self.toks,
        };
        matches!(s, Stmt::Simple(sp) if matches!(r.decl(*sp), Decl::Uniform))
    }

    fn has_barrier(&self, s: Span) -> bool {
        (s.a..s.b).any(|i| {
            matches!(self.text(i), "threadgroup_barrier" | "simdgroup_barrier")
                && self.text(i + 1) == "("
        })
    }

    fn find_modified_params(&mut self, body: Span) {
        let assign = [
            "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--",
        ];
        let mut out = Vec::new();
        for (name, is_ptr) in &self.params.all {
            let mut modified = false;
            for i in body.a..body.b {
                if self.text(i) != name.as_str() || self.toks[i].kind != TokenKind::Ident {
                    continue;
                }
                if matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::") {
                    continue;
                }
                let prev = self.text(i.wrapping_sub(1));
                let next = self.text(i + 1);
                let next_adjacent_eq = |k: usize| {
                    self.text(k + 1) == "="
                        && self
                            .toks
                            .get(k + 1)
                            .is_some_and(|t| t.start == self.toks[k].end)
                };
                let direct_assign = (assign.contains(&next)
                    && !(next == "=" && self.text(i + 2) == "="))
                    || (matches!(next, "<" | ">")
                        && self.text(i + 2) == next
                        && next_adjacent_eq(i + 2));
                let unary_addr = prev == "&"
                    && !matches!(
                        self.toks.get(i.wrapping_sub(2)).map(|t| t.kind),
                        Some(TokenKind::Ident | TokenKind::Number)
                    )
                    && !matches!(self.text(i.wrapping_sub(2)), ")" | "]");
                let pre = matches!(prev, "++" | "--");
                let member = !is_ptr && matches!(next, "." | "[");
                if direct_assign || unary_addr || pre || member {
                    modified = true;
                    break;
                }
            }
            if modified {
                out.push(name.clone());
            }
        }
        self.modified_params = out;
    }

    /// Forms the group function body from the kernel body's statements `body` (the tokens
    /// between its braces, `span`).
    pub fn form(&mut self, body: &[Stmt], span: Span) -> Option<String> {
        self.find_modified_params(span);
        self.collect_locals(body);
        self.root_clean = !(span.a..span.b).any(|i| self.text(i) == "return");
        let root = self.new_mask();
        self.out.push_str(&format!(
            "  for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) {root}[ingot_i] = 1;\n"
        ));
        self.chain.push(Level {
            mask: root,
            loop_id: None,
        });
        // Modified parameters: per-thread copies, initialised from the parameter.
        let mods = self.modified_params.clone();
        for p in &mods {
            let storage_name = self.fresh(&format!("w_{p}_"));
            let per_thread = self
                .params
                .per_thread
                .iter()
                .find(|(n, _, _)| n == p)
                .map(|(_, _, v)| v.clone());
            let ty = format!("std::remove_cv_t<std::remove_reference_t<decltype({p})>>");
            self.new_storage(&storage_name, &ty);
            match per_thread {
                Some(v) => self.region.push(format!("{storage_name}[ingot_i] = {v};")),
                None => {
                    let alias = self.fresh(&format!("pv_{p}_"));
                    self.out
                        .push_str(&format!("  const auto& {alias} = {p};\n"));
                    self.region
                        .push(format!("{storage_name}[ingot_i] = {alias};"));
                }
            }
            self.scopes[0].push(Hoisted {
                name: p.clone(),
                storage_name,
                is_ref: false,
            });
        }
        self.flush();
        self.move_constants(body);
        self.sequence(body);
        self.flush();
        if self.refusal.is_some() {
            return None;
        }
        let reserve = format!(
            "  if (!ingot_g.reserve((size_t)({}), {}u)) return;\n",
            self.sizes.join(" + "),
            self.sizes.len()
        );
        Some(format!(
            "{}{reserve}{}{}",
            self.types, self.allocs, self.out
        ))
    }

    /// Moves the outermost block's `constexpr`, `using` and `typedef` declarations that name
    /// no runtime local to the top of the group function: they are the same for every thread,
    /// and per-thread storage declared there may use them (`constexpr int n = 4; float x[n];`).
    fn move_constants(&mut self, body: &[Stmt]) {
        let r = Reader {
            src: self.src,
            toks: self.toks,
        };
        for st in body {
            let Stmt::Simple(sp) = st else { continue };
            let sp = *sp;
            // `const int N = 16 / sizeof(T);` is a constant expression too (and names a
            // template argument later): it moves when its value is the same in every thread.
            let compile_time = matches!(r.decl(sp), Decl::Uniform)
                && matches!(self.text(sp.a), "constexpr" | "using" | "typedef");
            let const_scalar = self.text(sp.a) == "const"
                && matches!(r.decl(sp), Decl::Vars(ref v) if v.len() == 1 && !v[0].is_ref && !v[0].is_array);
            if !(compile_time || const_scalar) || self.has_split(st) {
                continue;
            }
            if const_scalar
                && (sp.a..sp.b).any(|i| {
                    let w = self.text(i);
                    self.toks[i].kind == TokenKind::Ident
                        && !matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::")
                        && (self.params.per_thread.iter().any(|(n, _, _)| n == w)
                            || self.modified_params.iter().any(|p| p == w)
                            || self.collectives.contains(w)
                            || self.replay.contains(w)
                            || w.starts_with("atomic"))
                })
            {
                continue;
            }
            let Some(name) = self.declared_name(sp) else {
                continue;
            };
            let runtime = (sp.a..sp.b).any(|i| {
                self.toks[i].kind == TokenKind::Ident
                    && !matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::")
                    && self.text(i) != name
                    && self.locals.contains(self.text(i))
                    && !self.uniform_locals.contains(self.text(i))
            });
            if runtime {
                continue;
            }
            let t = self.span_text(sp).to_string();
            self.types.push_str(&format!("  {t}\n"));
            self.moved.insert(sp.a);
            self.locals.remove(&name);
            self.uniform_locals.insert(name);
        }
    }

    fn sequence(&mut self, stmts: &[Stmt]) {
        for (k, s) in stmts.iter().enumerate() {
            if self.refusal.is_some() {
                return;
            }
            // A name used only before the next split point stays a local of its region.
            let from = if self.ends_region(s) {
                k + 1
            } else {
                (k + 1..stmts.len())
                    .find(|&j| self.ends_region(&stmts[j]))
                    .unwrap_or(stmts.len())
            };
            let later: Vec<&Stmt> = stmts[from..].iter().collect();
            self.statement(s, &later);
        }
    }

    fn later_text(&self, later: &[&Stmt]) -> String {
        let mut s = String::new();
        for st in later {
            if let Some(sp) = span_of(st) {
                s.push_str(self.span_text(sp));
                s.push('\n');
            }
        }
        s
    }

    /// A statement of a block that holds split points (so its declarations may be needed by
    /// later regions).
    fn statement(&mut self, s: &Stmt, later: &[&Stmt]) {
        let later_text = self.later_text(later);
        if !self.has_split(s) {
            match s {
                Stmt::Simple(sp) => self.simple(*sp, &later_text),
                _ => {
                    let t = self.render(s, 0);
                    self.region.push(t);
                }
            }
            return;
        }
        match s {
            Stmt::Block(v) => {
                self.flush();
                self.scopes.push(Vec::new());
                self.out.push_str("  {\n");
                self.sequence(v);
                self.flush();
                self.out.push_str("  }\n");
                self.scopes.pop();
            }
            Stmt::Simple(sp) => {
                if self.has_barrier(*sp) {
                    let calls = self.collective_calls(*sp);
                    let only_barrier = calls.is_empty()
                        && matches!(self.text(sp.a), "threadgroup_barrier" | "simdgroup_barrier")
                        && super::stmt::Parser {
                            src: self.src,
                            toks: self.toks,
                        }
                        .close_of(sp.a + 1)
                            == Some(sp.b - 2);
                    if !only_barrier {
                        self.refuse("a barrier inside an expression");
                        return;
                    }
                    self.flush();
                    return;
                }
                self.collective_simple(*sp, &later_text);
            }
            Stmt::If { cond, then, els } if self.is_uniform(*cond, &[]) => {
                // The same for every thread: one branch runs, under the parent's mask.
                self.flush();
                let c = self.span_text(*cond).to_string();
                self.out.push_str(&format!("  if ({c})\n"));
                self.uniform_body(then);
                if let Some(e) = els {
                    self.out.push_str("  else\n");
                    self.uniform_body(e);
                }
            }
            Stmt::If { cond, then, els } => {
                self.flush();
                let parent = self
                    .chain
                    .last()
                    .map(|l| l.mask.clone())
                    .unwrap_or_default();
                let m = self.new_mask();
                let c = self.span_text(*cond).to_string();
                let set = format!("{m}[ingot_i] = ({c}) ? 1 : 0;");
                self.guarded_eval(*cond, &set, &format!("{m}[ingot_i] = 0;"), &parent);
                let em = if els.is_some() {
                    let em = self.new_mask();
                    self.out.push_str(&format!(
                        "  for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) {em}[ingot_i] = {parent}[ingot_i] && !{m}[ingot_i];\n"
                    ));
                    Some(em)
                } else {
                    None
                };
                self.branch(then, &m);
                if let (Some(e), Some(em)) = (els, em) {
                    self.branch(e, &em);
                }
            }
            Stmt::For {
                init,
                cond,
                inc,
                body,
            } if self.uniform_for(*init, *cond, *inc, body).is_some() => {
                self.flush();
                let var = self.uniform_for(*init, *cond, *inc, body).flatten();
                let i = if init.is_empty() {
                    String::new()
                } else {
                    self.span_text(*init).to_string()
                };
                let c = self.span_text(*cond).to_string();
                let n = self.span_text(*inc).to_string();
                self.out
                    .push_str(&format!("  {{\n  {i}\n  for (; {c}; {n})\n"));
                let added = var.is_some_and(|v| self.uniform_locals.insert(v));
                self.uniform_body(body);
                if added {
                    if let Some(v) = self.uniform_for(*init, *cond, *inc, body).flatten() {
                        self.uniform_locals.remove(&v);
                    }
                }
                self.out.push_str("  }\n");
            }
            Stmt::While { cond, body }
                if self.is_uniform(*cond, &[]) && !self.breaks_out(body, 0) =>
            {
                self.flush();
                let c = self.span_text(*cond).to_string();
                self.out.push_str(&format!("  while ({c})\n"));
                self.uniform_body(body);
            }
            Stmt::For {
                init,
                cond,
                inc,
                body,
            } => {
                self.flush();
                self.scopes.push(Vec::new());
                if !init.is_empty() {
                    if !self.collective_calls(*init).is_empty() {
                        self.refuse("a SIMD-group function in a for-loop's initialiser");
                    }
                    // The loop variable is read by the condition and the increment.
                    let mut rest = format!("{}\n{}\n", self.span_text(*cond), self.span_text(*inc));
                    rest.push_str(&self.later_text(&[body.as_ref()]));
                    self.simple(*init, &rest);
                    self.flush();
                }
                if !self.collective_calls(*inc).is_empty() {
                    self.refuse("a SIMD-group function in a for-loop's increment");
                }
                self.split_loop(Some(*cond), body, Some(*inc), false);
                self.scopes.pop();
            }
            Stmt::While { cond, body } => {
                self.flush();
                self.split_loop(Some(*cond), body, None, false);
            }
            Stmt::Do { body, cond } => {
                self.flush();
                self.split_loop(Some(*cond), body, None, true);
            }
            Stmt::Return(_) | Stmt::Break | Stmt::Continue => {
                let t = self.render(s, 0);
                self.region.push(t);
            }
            Stmt::Opaque(_) => {
                self.refuse(
                    "a barrier or SIMD-group function inside a switch, range-for or if constexpr",
                );
            }
        }
    }

    /// A branch or loop body in a scope of its own, run once per group under the innermost
    /// mask of the chain.
    fn uniform_body(&mut self, s: &Stmt) {
        self.scopes.push(Vec::new());
        self.out.push_str("  {\n");
        match s {
            Stmt::Block(v) => self.sequence(v),
            other => self.statement(other, &[]),
        }
        self.flush();
        self.out.push_str("  }\n");
        self.scopes.pop();
    }

    /// Every name declared anywhere in the body.
    fn collect_locals(&mut self, stmts: &[Stmt]) {
        for st in stmts {
            self.collect_locals_in(st);
        }
    }

    fn collect_locals_in(&mut self, st: &Stmt) {
        let r = Reader {
            src: self.src,
            toks: self.toks,
        };
        let simple = |me: &mut Self, sp: Span| {
            if sp.is_empty() {
                return;
            }
            match r.decl(sp) {
                Decl::Vars(v) => me.locals.extend(v.into_iter().map(|x| x.name)),
                Decl::Unknown(_) | Decl::Uniform => {
                    if let Some(n) = me.declared_name(sp) {
                        me.locals.insert(n);
                    }
                }
                Decl::Expr => {}
            }
        };
        match st {
            Stmt::Block(v) => {
                for x in v {
                    self.collect_locals_in(x);
                }
            }
            Stmt::If { then, els, .. } => {
                self.collect_locals_in(then);
                if let Some(e) = els {
                    self.collect_locals_in(e);
                }
            }
            Stmt::For { init, body, .. } => {
                simple(self, *init);
                self.collect_locals_in(body);
            }
            Stmt::While { body, .. } | Stmt::Do { body, .. } => self.collect_locals_in(body),
            Stmt::Simple(sp) => simple(self, *sp),
            Stmt::Opaque(sp) => {
                // Names declared in a switch or range-for: every identifier counts.
                for i in sp.a..sp.b {
                    if self.toks[i].kind == TokenKind::Ident {
                        self.locals.insert(self.text(i).to_string());
                    }
                }
            }
            Stmt::Return(_) | Stmt::Break | Stmt::Continue => {}
        }
    }

    /// The name a declaration the former does not hoist introduces: `using N =`, the last
    /// name of a `typedef`, the reference of a threadgroup variable (`T (&N)[k] = tg_var...`),
    /// else the name before the first top-level `=`, `(`, `{`, `[`, `,` or `;`.
    fn declared_name(&self, sp: Span) -> Option<String> {
        let t = |i: usize| self.text(i);
        if t(sp.a) == "using" && t(sp.a + 2) == "=" {
            return Some(t(sp.a + 1).to_string());
        }
        if t(sp.a) == "typedef" {
            return (sp.a..sp.b)
                .rev()
                .find(|&i| self.toks[i].kind == TokenKind::Ident)
                .map(|i| t(i).to_string());
        }
        if let Some(k) = (sp.a + 1..sp.b).find(|&k| t(k) == "&" && t(k - 1) == "(") {
            return Some(t(k + 1).to_string());
        }
        let (mut d, mut angle) = (0, 0);
        for i in sp.a..sp.b {
            match t(i) {
                "<" => angle += 1,
                ">" => angle -= 1,
                "=" | "(" | "{" | "[" | "," | ";" if d == 0 && angle <= 0 && i > sp.a => {
                    let p = i - 1;
                    return (self.toks[p].kind == TokenKind::Ident).then(|| t(p).to_string());
                }
                _ => {}
            }
            match t(i) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => d -= 1,
                _ => {}
            }
        }
        None
    }

    /// True when `sp` has the same value in every thread of the group: it reads no per-thread
    /// builtin, modified parameter or body-declared variable (but `extra` and the uniform loop
    /// variables in scope), and calls no SIMD-group or atomic function.
    fn is_uniform(&self, sp: Span, extra: &[&str]) -> bool {
        (sp.a..sp.b).all(|i| {
            let t = self.toks[i];
            if t.kind != TokenKind::Ident {
                return true;
            }
            if matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::") && i > sp.a {
                return true;
            }
            let name = self.text(i);
            if self.collectives.contains(name)
                || self.replay.contains(name)
                || name.starts_with("atomic")
                || matches!(name, "threadgroup_barrier" | "simdgroup_barrier")
            {
                return false;
            }
            if extra.contains(&name) || self.uniform_locals.contains(name) {
                return true;
            }
            let per_thread_param = self.params.per_thread.iter().any(|(n, _, _)| n == name);
            !(self.locals.contains(name)
                || per_thread_param
                || self.modified_params.iter().any(|p| p == name))
        })
    }

    /// `Some(loop variable)` when a `for` loop is the same in every thread: its initialiser
    /// declares at most one variable from uniform values (or is empty), its condition and
    /// increment are uniform given that variable, the body never assigns it and has no
    /// `break`/`continue` of its own.
    fn uniform_for(
        &self,
        init: Span,
        cond: Span,
        inc: Span,
        body: &Stmt,
    ) -> Option<Option<String>> {
        let r = Reader {
            src: self.src,
            toks: self.toks,
        };
        let var = if init.is_empty() {
            None
        } else {
            match r.decl(init) {
                Decl::Vars(v) if v.len() == 1 && !v[0].is_ref && !v[0].is_array => {
                    let init_span = match &v[0].init {
                        super::decl::Init::Assign(s) | super::decl::Init::Direct(s) => *s,
                        super::decl::Init::None => return None,
                    };
                    if !self.is_uniform(init_span, &[]) {
                        return None;
                    }
                    Some(v[0].name.clone())
                }
                _ => return None,
            }
        };
        let extra: Vec<&str> = var.iter().map(|s| s.as_str()).collect();
        if !self.is_uniform(cond, &extra) || !self.is_uniform(inc, &extra) {
            return None;
        }
        if self.breaks_out(body, 0) {
            return None;
        }
        if let (Some(v), Some(bs)) = (&var, span_of(body)) {
            if self.assigns(bs, v) {
                return None;
            }
        }
        Some(var)
    }

    /// True when `name` is assigned, incremented or has its address taken in `sp`.
    fn assigns(&self, sp: Span, name: &str) -> bool {
        let ops = [
            "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "++", "--",
        ];
        (sp.a..sp.b).any(|i| {
            if self.text(i) != name || self.toks[i].kind != TokenKind::Ident {
                return false;
            }
            if matches!(self.text(i.wrapping_sub(1)), "." | "->" | "::") {
                return false;
            }
            let next = self.text(i + 1);
            let prev = self.text(i.wrapping_sub(1));
            (ops.contains(&next) && !(next == "=" && self.text(i + 2) == "="))
                || (matches!(next, "<" | ">")
                    && self.text(i + 2) == next
                    && self.text(i + 3) == "=")
                || matches!(prev, "++" | "--" | "&")
                || matches!(next, "." | "[")
        })
    }

    /// True when `s` holds a `break` or `continue` (or, with `inner == 0`, one not inside a
    /// nested loop or switch) that belongs to the loop whose body it is.
    fn breaks_out(&self, s: &Stmt, inner: usize) -> bool {
        match s {
            Stmt::Break | Stmt::Continue => inner == 0,
            Stmt::Block(v) => v.iter().any(|x| self.breaks_out(x, inner)),
            Stmt::If { then, els, .. } => {
                self.breaks_out(then, inner)
                    || els.as_ref().is_some_and(|e| self.breaks_out(e, inner))
            }
            Stmt::For { body, .. } | Stmt::While { body, .. } | Stmt::Do { body, .. } => {
                self.breaks_out(body, inner + 1)
            }
            Stmt::Opaque(sp) => {
                inner == 0 && (sp.a..sp.b).any(|i| self.text(i) == "continue")
                    || (self.text(sp.a) == "for" && (sp.a..sp.b).any(|i| self.text(i) == "break"))
            }
            Stmt::Simple(_) | Stmt::Return(_) => false,
        }
    }

    fn branch(&mut self, s: &Stmt, mask: &str) {
        self.chain.push(Level {
            mask: mask.to_string(),
            loop_id: None,
        });
        self.uniform_body(s);
        self.chain.pop();
    }

    /// A loop whose body holds split points: the iteration mask `L` and the body mask `C`.
    fn split_loop(&mut self, cond: Option<Span>, body: &Stmt, inc: Option<Span>, do_while: bool) {
        let parent = self
            .chain
            .last()
            .map(|l| l.mask.clone())
            .unwrap_or_default();
        self.loops += 1;
        let id = self.loops;
        let l = self.new_mask();
        let c = self.new_mask();
        let any = self.fresh("any");
        self.out.push_str(&format!(
            "  for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) {l}[ingot_i] = {parent}[ingot_i];\n  for (;;) {{\n    bool {any} = false;\n"
        ));
        let cond_text = cond
            .filter(|c| !c.is_empty())
            .map(|c| self.span_text(c).to_string());
        let eval_cond = |me: &mut Self| {
            let set = match &cond_text {
                Some(t) => format!("{l}[ingot_i] = ({t}) ? 1 : 0; {any} |= {l}[ingot_i] != 0;"),
                None => format!("{any} = true;"),
            };
            match cond {
                Some(cs) if !cs.is_empty() => me.guarded_eval(cs, &set, "", &l),
                _ => me.out.push_str(&format!(
                    "    for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) if ({l}[ingot_i]) {any} = true;\n"
                )),
            }
            me.out.push_str(&format!("    if (!{any}) break;\n"));
        };
        if !do_while {
            eval_cond(self);
        }
        self.out.push_str(&format!(
            "    for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) {c}[ingot_i] = {l}[ingot_i];\n"
        ));
        self.chain.push(Level {
            mask: l.clone(),
            loop_id: Some((id, false)),
        });
        self.chain.push(Level {
            mask: c.clone(),
            loop_id: Some((id, true)),
        });
        self.uniform_body(body);
        self.chain.pop();
        if let Some(inc) = inc.filter(|i| !i.is_empty()) {
            let t = format!("{};", self.span_text(inc));
            self.region.push(t);
            self.flush();
        }
        if do_while {
            self.out.push_str(&format!("    {any} = false;\n"));
            eval_cond(self);
        }
        self.chain.pop();
        self.out.push_str("  }\n");
    }

    /// Evaluates `set` (which reads the span `cond`) for every thread active in `mask`, with
    /// `inactive` for the others; a SIMD-group function in `cond` takes two passes.
    fn guarded_eval(&mut self, cond: Span, set: &str, inactive: &str, mask: &str) {
        let calls = self.collective_calls(cond);
        if self.has_barrier(cond) {
            self.refuse("a barrier inside a condition");
            return;
        }
        if calls.len() > 1 {
            self.refuse("two SIMD-group functions in one condition");
            return;
        }
        let text = self.span_text(cond).to_string();
        let head = self.loop_head(mask, &text, inactive);
        if let Some(&(a, b)) = calls.first() {
            let call = self.span_text(Span { a, b: b + 1 }).to_string();
            let passes = self.deposit_passes(&head, a, &call);
            self.out.push_str(&passes);
            self.out.push_str(&format!(
                "{head}    ingot_g.at(ingot_i, 2);\n    {set}\n  }}\n"
            ));
            self.out.push_str("  ingot_g.at(0, 0);\n");
        } else {
            self.out.push_str(&format!("{head}    {set}\n  }}\n"));
        }
    }

    /// `for` over the threads active in `mask`, with the builtins and bindings `text` uses.
    fn loop_head(&self, mask: &str, text: &str, inactive: &str) -> String {
        let all_active = self.root_clean && self.chain.first().is_some_and(|l| l.mask == mask);
        let check = if all_active {
            String::new()
        } else {
            format!("    if (!{mask}[ingot_i]) {{ {inactive} continue; }}\n")
        };
        let mut s = format!(
            "  for (uint32_t ingot_i = 0; ingot_i < ingot_n; ++ingot_i) {{\n{check}    const ::ingot::cpu::thread_ids ingot_t = ingot_g.ids(ingot_i);\n    (void)ingot_t;\n"
        );
        for (name, ty, v) in &self.params.per_thread {
            if uses(text, name) && !self.is_hoisted(name) {
                s.push_str(&format!("    {ty} {name} = {v}; (void){name};\n"));
            }
        }
        let mut bound: HashSet<&str> = HashSet::new();
        for scope in self.scopes.iter().rev() {
            for h in scope.iter().rev() {
                if !bound.insert(h.name.as_str()) || !uses(text, &h.name) {
                    continue;
                }
                if h.is_ref {
                    s.push_str(&format!(
                        "    auto& {} = *{}[ingot_i];\n",
                        h.name, h.storage_name
                    ));
                } else {
                    s.push_str(&format!(
                        "    {}_t& {} = {}[ingot_i];\n",
                        h.storage_name, h.name, h.storage_name
                    ));
                }
            }
        }
        s
    }

    fn is_hoisted(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|sc| sc.iter().any(|h| h.name == name))
    }

    /// A simple statement without split points: a declaration whose names later statements
    /// use is hoisted; the rest joins the current region.
    fn simple(&mut self, sp: Span, later_text: &str) {
        if self.moved.contains(&sp.a) {
            return;
        }
        let r = Reader {
            src: self.src,
            toks: self.toks,
        };
        match r.decl(sp) {
            Decl::Expr => {
                let t = self.span_text(sp).to_string();
                self.region.push(t);
            }
            Decl::Uniform if self.moved.contains(&sp.a) => {}
            Decl::Uniform => {
                self.flush();
                let t = self.span_text(sp).to_string();
                self.out.push_str(&format!("  {t}\n"));
            }
            Decl::Unknown(why) => {
                let t = self.span_text(sp).to_string();
                // Not needed later: stays a declaration inside its region.
                if self.declares_used_later(sp, later_text) {
                    self.refuse(why);
                } else {
                    self.region.push(t);
                }
            }
            Decl::Vars(vars) => {
                if !vars.iter().any(|v| uses(later_text, &v.name)) {
                    let t = self.span_text(sp).to_string();
                    self.region.push(t);
                    return;
                }
                for v in vars {
                    self.hoist(v);
                }
            }
        }
    }

    /// True when the name a declaration the former cannot read introduces (the identifier
    /// before its first top-level `=`, `(`, `{`, `[`, `,` or `;`) appears in `later`.
    fn declares_used_later(&self, sp: Span, later: &str) -> bool {
        let mut d = 0;
        let mut angle = 0;
        for i in sp.a..sp.b {
            match self.text(i) {
                "<" => angle += 1,
                ">" => angle -= 1,
                "=" | "(" | "{" | "[" | "," | ";" if d == 0 && angle <= 0 => {
                    let name = self.text(i.wrapping_sub(1));
                    return i == sp.a || uses(later, name);
                }
                _ => {}
            }
            match self.text(i) {
                "(" | "[" | "{" => d += 1,
                ")" | "]" | "}" => d -= 1,
                _ => {}
            }
        }
        true
    }

    fn hoist(&mut self, v: Var) {
        if !self.used_names.insert(v.name.clone()) {
            self.refuse(format!(
                "the name `{}` is declared twice across barriers",
                v.name
            ));
            return;
        }
        // The storage is declared at the top of the group function: its type may not name
        // anything the body declares (`constexpr int n = 4; float x[n];`).
        if let Some(w) = v
            .storage
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .find(|w| !w.is_empty() && self.locals.contains(*w))
        {
            self.refuse(format!(
                "the type of `{}` names `{w}`, declared in the kernel",
                v.name
            ));
            return;
        }
        let storage_name = self.fresh(&format!("w_{}_", v.name));
        self.new_storage(&storage_name, &v.storage);
        let name = v.name.clone();
        let init = match &v.init {
            Init::None => None,
            Init::Assign(s) => Some(self.span_text(*s).to_string()),
            Init::Direct(s) => Some(format!("{storage_name}_t{}", self.span_text(*s))),
        };
        self.scopes.last_mut().expect("scope").push(Hoisted {
            name: name.clone(),
            storage_name: storage_name.clone(),
            is_ref: v.is_ref,
        });
        if let Some(init) = init {
            if v.is_ref {
                let e = match &v.init {
                    Init::Assign(_) => format!("{storage_name}[ingot_i] = &({init});"),
                    _ => {
                        self.refuse("a reference initialised with brackets");
                        return;
                    }
                };
                self.region.push(e);
            } else if v.is_array {
                // Arrays cannot be assigned: initialise a temporary and copy it in.
                self.region.push(format!(
                    "{{ {storage_name}_t ingot_tmp = {init}; ::memcpy(&{name}, &ingot_tmp, sizeof ingot_tmp); }}"
                ));
            } else {
                self.region.push(format!("{name} = {init};"));
            }
        }
    }

    /// A simple statement with one SIMD-group function: a deposit pass, then the statement.
    fn collective_simple(&mut self, sp: Span, later: &str) {
        let calls = self.collective_calls(sp);
        if calls.len() != 1 {
            self.refuse("two SIMD-group functions in one statement");
            return;
        }
        let (a, b) = calls[0];
        self.flush();
        let call = self.span_text(Span { a, b: b + 1 }).to_string();
        let mask = self
            .chain
            .last()
            .map(|l| l.mask.clone())
            .unwrap_or_default();
        // The statement itself as a region of its own (its declaration hoisted as usual).
        self.simple(sp, later);
        let body = std::mem::take(&mut self.region);
        let text = format!("{}\n{}", call, body.join("\n"));
        let head = self.loop_head(&mask, &text, "");
        if self.is_replay(a) {
            let passes = self.deposit_passes(&head, a, &call);
            self.out.push_str(&passes);
        } else if self.passive_ok(a, b) {
            self.out.push_str("  ingot_g.deposit_begin();\n");
            // A shuffle of a pure operand: lanes outside the branch deposit too (not as
            // active lanes), so a lane reading one gets its current value, as on Apple's GPUs.
            let all = self.loop_head("ingot_all", &text, "");
            let all = all.replace("    if (!ingot_all[ingot_i]) {  continue; }\n", "");
            self.out.push_str(&format!(
                "{all}    ingot_g.at(ingot_i, {mask}[ingot_i] ? 1 : 3);\n    (void)({call});\n  }}\n  ingot_g.consume_begin();\n"
            ));
        } else {
            let passes = self.deposit_passes(&head, a, &call);
            self.out.push_str(&passes);
        }
        let label = self.fresh("next");
        let mut stmts = String::new();
        for t in &body {
            stmts.push_str("    ");
            stmts.push_str(t);
            stmts.push('\n');
        }
        self.out.push_str(&format!(
            "{head}    ingot_g.at(ingot_i, 2);\n    {{\n{stmts}    }}\n    {label}:;\n  }}\n  ingot_g.at(0, 0);\n"
        ));
    }

    /// True when the call `a..=b` is a shuffle or broadcast whose arguments only read
    /// variables (no call, assignment, increment or indexing), so it can be evaluated for lanes
    /// that do not execute it.
    fn passive_ok(&self, a: usize, b: usize) -> bool {
        let name = self.text(a);
        let shuffle = [
            "simd_shuffle",
            "simd_broadcast",
            "quad_shuffle",
            "quad_broadcast",
        ]
        .iter()
        .any(|p| name.starts_with(p));
        shuffle && crate::purity::reads_only(self.src, self.toks, a + 2, b)
    }

    /// Writes the pending region as one loop over the active threads.
    fn flush(&mut self) {
        if self.region.is_empty() {
            return;
        }
        let body = std::mem::take(&mut self.region);
        let label = self.fresh("next");
        let text = body.join("\n").replace("INGOT_WI_NEXT", &label);
        let mask = self
            .chain
            .last()
            .map(|l| l.mask.clone())
            .unwrap_or_default();
        let head = self.loop_head(&mask, &text, "");
        self.out.push_str(&format!(
            "{head}    {{\n{text}\n    }}\n    {label}:;\n  }}\n"
        ));
    }

    /// The code that ends thread `ingot_i`'s part in the current region: clears the masks of
    /// the chain from the innermost up to (and including) `upto`.
    fn exit(&self, upto: usize) -> String {
        let mut s = String::from("{ ");
        for l in self.chain[upto..].iter() {
            s.push_str(&format!("{}[ingot_i] = 0; ", l.mask));
        }
        s.push_str("goto INGOT_WI_NEXT; }");
        s
    }

    /// Renders a statement without split points for a region; `inner` counts the loops and
    /// switches inside it that own `break`/`continue`.
    fn render(&mut self, s: &Stmt, inner: usize) -> String {
        match s {
            Stmt::Block(v) => {
                let parts: Vec<String> = v.iter().map(|x| self.render(x, inner)).collect();
                format!("{{ {} }}", parts.join("\n"))
            }
            Stmt::If { cond, then, els } => {
                let c = self.span_text(*cond).to_string();
                let t = self.render(then, inner);
                match els {
                    Some(e) => {
                        let e = self.render(e, inner);
                        format!("if ({c}) {t} else {e}")
                    }
                    None => format!("if ({c}) {t}"),
                }
            }
            Stmt::For {
                init,
                cond,
                inc,
                body,
            } => {
                let i = if init.is_empty() {
                    ";".to_string()
                } else {
                    self.span_text(*init).to_string()
                };
                let c = self.span_text(*cond).to_string();
                let n = self.span_text(*inc).to_string();
                let b = self.render(body, inner + 1);
                format!("for ({i} {c}; {n}) {b}")
            }
            Stmt::While { cond, body } => {
                let c = self.span_text(*cond).to_string();
                let b = self.render(body, inner + 1);
                format!("while ({c}) {b}")
            }
            Stmt::Do { body, cond } => {
                let c = self.span_text(*cond).to_string();
                let b = self.render(body, inner + 1);
                format!("do {b} while ({c});")
            }
            Stmt::Return(_) => self.exit(0),
            Stmt::Break | Stmt::Continue if inner > 0 => {
                if matches!(s, Stmt::Break) {
                    "break;".into()
                } else {
                    "continue;".into()
                }
            }
            Stmt::Break | Stmt::Continue => {
                let want_c = matches!(s, Stmt::Continue);
                // The innermost split loop's L (break) or C (continue).
                let pos = self.chain.iter().rposition(|l| {
                    l.loop_id
                        .is_some_and(|(_, is_c)| if want_c { is_c } else { !is_c })
                });
                match pos {
                    Some(p) => self.exit(p),
                    None => {
                        self.refuse("break or continue outside a loop");
                        String::new()
                    }
                }
            }
            Stmt::Simple(sp) => self.span_text(*sp).to_string(),
            Stmt::Opaque(sp) => {
                let has = |me: &Self, w: &str| (sp.a..sp.b).any(|i| me.text(i) == w);
                if has(self, "return") || has(self, "continue") || has(self, "goto") {
                    self.refuse("return, continue or goto inside a switch");
                }
                if inner == 0 && self.text(sp.a) == "for" && has(self, "break") {
                    self.refuse("break inside a range-for");
                }
                self.span_text(*sp).to_string()
            }
        }
    }
}

/// The token span a statement covers (`None` for `break`/`continue`).
fn span_of(s: &Stmt) -> Option<Span> {
    match s {
        Stmt::Simple(sp) | Stmt::Opaque(sp) | Stmt::Return(sp) => Some(*sp),
        Stmt::Break | Stmt::Continue => None,
        Stmt::Block(v) => {
            let a = v.iter().find_map(span_of)?;
            let b = v.iter().rev().find_map(span_of)?;
            Some(Span { a: a.a, b: b.b })
        }
        Stmt::If { cond, then, els } => {
            let end = els
                .as_ref()
                .and_then(|e| span_of(e))
                .or_else(|| span_of(then))
                .map_or(cond.b, |s| s.b);
            Some(Span { a: cond.a, b: end })
        }
        Stmt::For { init, body, .. } => {
            let end = span_of(body).map_or(init.b, |s| s.b);
            Some(Span { a: init.a, b: end })
        }
        Stmt::While { cond, body } => {
            let end = span_of(body).map_or(cond.b, |s| s.b);
            Some(Span { a: cond.a, b: end })
        }
        Stmt::Do { body, cond } => {
            let a = span_of(body).map_or(cond.a, |s| s.a);
            Some(Span { a, b: cond.b })
        }
    }
}
