//! Translation of an MSL file into one C++ translation unit for a [`Target`].
//!
//! The user's code is copied token by token with its whitespace and comments; only the tokens
//! that need it are replaced (qualifiers, attributes, literals, names), and a replacement never
//! changes the number of lines, so the target compiler's line numbers are the user's. The
//! wrappers (one per entry point, `wrapper_cuda.rs` / `wrapper_cpu.rs`) follow the user's code.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::error::{Error, Result};
use crate::lexer::{lex, significant, Token, TokenKind};
use crate::preprocess::LineMap;
use crate::reflect::{
    assign_abi, build, check_unsupported, is_threadgroup_var_decl, EntryPoint, Module,
};
use crate::syntax::{analyse, Ctx, FunctionDef, Syntax};
use crate::target::Target;
use crate::wrapper_common::WrapperArg;
use crate::{wrapper_cpu, wrapper_cuda};

/// Translation options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The target dialect.
    pub target: Target,
    /// The user's file name, used in `#line` directives and errors.
    pub file_name: String,
    /// Function-constant values, keyed by name (or by index written in decimal), as C++ text
    /// (`true`, `3`, `1.5`).
    pub constants: BTreeMap<String, String>,
    /// `math_mode="fast"`: defines `INGOT_FAST_MATH 1`.
    pub fast_math: bool,
    /// Folders searched for `#include "x.h"`: a header found there is inlined (so its macros
    /// and kernels are seen), with `#line` directives naming it. Other includes stay as written.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// Translate only these entry points (host names): the other kernels' definitions are
    /// left out of the text (blank lines keep the numbering) and only these wrappers are
    /// emitted, so the target compiler sees one entry point's unit. Function constants
    /// without a value are then an error only when the unit's code uses them. `None`: every
    /// entry point (a constant without a value used anywhere is an error).
    pub entries: Option<Vec<String>>,
    /// Checked mode: every address-space pointer is bounds-checked (see `checked.rs`); the
    /// wrappers take the buffers' lengths and a fault record (ABI.md, "Checked mode").
    pub checked: bool,
    /// Macros defined before the file, like a compiler's `-D NAME=VALUE` (an empty value
    /// defines `1`): seen by the preprocessor and by the target compiler.
    pub defines: BTreeMap<String, String>,
    /// CPU target: run kernels with barriers and SIMD-group functions as work-item loops where
    /// the translator can form them (`true`, the default), or always with fibers.
    pub work_items: bool,
}

impl Options {
    /// Options for `target` with file name `kernel.metal`, no constants, precise math.
    pub fn new(target: Target) -> Options {
        Options {
            target,
            file_name: "kernel.metal".to_string(),
            constants: BTreeMap::new(),
            fast_math: false,
            include_dirs: Vec::new(),
            entries: None,
            checked: false,
            defines: BTreeMap::new(),
            work_items: true,
        }
    }
}

/// The result of [`translate`].
#[derive(Debug, Clone)]
pub struct Translation {
    /// The C++ translation unit.
    pub text: String,
    /// The reflection, with gates resolved for these options (`Param::active`, `abi`).
    pub module: Module,
    /// Host name -> symbol to look up (CUDA: the host name; CPU: `ingot_cpu_<host name>`).
    pub entries: BTreeMap<String, String>,
    /// CPU target: host name -> how the CPU engine runs the entry point, and why.
    pub cpu_modes: BTreeMap<String, CpuMode>,
}

/// Names the targets define at global scope (C math and CUDA's device math): a user function
/// of the same name defined at global scope is renamed `ingot_user_<name>`.
const GLOBAL_MATH_NAMES: &[&str] = &[
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cbrt",
    "ceil",
    "copysign",
    "cos",
    "cosh",
    "cospi",
    "erf",
    "erfc",
    "erfcinv",
    "erfcx",
    "erfinv",
    "exp",
    "exp10",
    "exp2",
    "expm1",
    "fabs",
    "fdim",
    "floor",
    "fma",
    "fmax",
    "fmin",
    "fmod",
    "frexp",
    "hypot",
    "ilogb",
    "isfinite",
    "isinf",
    "isnan",
    "j0",
    "j1",
    "jn",
    "ldexp",
    "lgamma",
    "llrint",
    "llround",
    "log",
    "log10",
    "log1p",
    "log2",
    "logb",
    "lrint",
    "lround",
    "max",
    "min",
    "modf",
    "nan",
    "nearbyint",
    "nextafter",
    "norm3d",
    "normcdf",
    "normcdfinv",
    "pow",
    "rcbrt",
    "remainder",
    "remquo",
    "rhypot",
    "rint",
    "round",
    "rsqrt",
    "scalbln",
    "scalbn",
    "signbit",
    "sin",
    "sincos",
    "sincospi",
    "sinh",
    "sinpi",
    "sqrt",
    "tan",
    "tanh",
    "tgamma",
    "trunc",
    "y0",
    "y1",
    "yn",
    "expf",
    "logf",
    "sqrtf",
    "sinf",
    "cosf",
    "tanhf",
    "erff",
    "powf",
    "fabsf",
    "floorf",
    "ceilf",
    "fminf",
    "fmaxf",
    "exp2f",
    "log2f",
    "log1pf",
    "expm1f",
    "rsqrtf",
    "roundf",
    "truncf",
    "fmaf",
];

/// Whether Metal's standard library has a function of this [`GLOBAL_MATH_NAMES`] name. C's float
/// variants (`expm1f`, MLX's unary ops) are not Metal's either.
fn in_metal(n: &str) -> bool {
    !NOT_IN_METAL.contains(&n)
        && !n
            .strip_suffix('f')
            .is_some_and(|b| GLOBAL_MATH_NAMES.contains(&b))
}

/// Names of [`GLOBAL_MATH_NAMES`] that Metal's standard library does not have (CUDA's and C's
/// only): a user function of that name gets no forwarder to `metal::` (MLX's `erfinv`).
const NOT_IN_METAL: &[&str] = &[
    "erfcinv",
    "erfcx",
    "erfinv",
    "ilogb",
    "j0",
    "j1",
    "jn",
    "llrint",
    "llround",
    "logb",
    "lrint",
    "lround",
    "nan",
    "nearbyint",
    "norm3d",
    "normcdf",
    "normcdfinv",
    "rcbrt",
    "remquo",
    "rhypot",
    "scalbln",
    "scalbn",
    "sincospi",
];

/// True for MSL's vector and matrix type names (`float4`, `uint3`, `packed_half2`,
/// `float4x4`): the translator writes them `metal::float4`, because NVRTC predeclares CUDA's own
/// `float4`, `uint3`, ... at global scope (with other sizes and no operators).
pub(crate) fn is_vector_type_name(s: &str) -> bool {
    let s = s.strip_prefix("packed_").unwrap_or(s);
    let b = s.as_bytes();
    let n = b.len();
    if n >= 4
        && b[n - 2] == b'x'
        && (b'2'..=b'4').contains(&b[n - 1])
        && (b'2'..=b'4').contains(&b[n - 3])
    {
        return matches!(&s[..n - 3], "float" | "half" | "bfloat" | "double");
    }
    if n >= 2 && (b'2'..=b'4').contains(&b[n - 1]) {
        return matches!(
            &s[..n - 1],
            "float"
                | "half"
                | "bfloat"
                | "int"
                | "uint"
                | "short"
                | "ushort"
                | "char"
                | "uchar"
                | "bool"
                | "long"
                | "ulong"
                | "double"
        );
    }
    false
}

/// Translates `source` for `opts.target`.
pub fn translate(source: &str, opts: &Options) -> Result<Translation> {
    let file = opts.file_name.as_str();
    // A byte-order mark would end up mid-file after the header.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let pre = crate::preprocess::preprocess_with_defines(
        source,
        file,
        &opts.include_dirs,
        &opts.defines,
    )?;
    let mut t = translate_expanded(&pre.text, opts, &pre.map, false).map_err(|e| pre.map.fix(e))?;
    t.module.relocate(&pre.map);
    Ok(t)
}

/// The reflection [`translate`] would return for `opts` (include folders searched, function
/// constants of `opts` applied to the gated parameters), without rewriting anything: what a
/// library needs before any of its entry points is compiled. Constants without a value are
/// not an error here.
pub fn reflect_with(source: &str, opts: &Options) -> Result<Module> {
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let pre = crate::preprocess::preprocess_with_defines(
        source,
        &opts.file_name,
        &opts.include_dirs,
        &opts.defines,
    )?;
    let mut t = translate_expanded(&pre.text, opts, &pre.map, true).map_err(|e| pre.map.fix(e))?;
    t.module.relocate(&pre.map);
    Ok(t.module)
}

/// Translates preprocessed text; errors and reflection lines are still in its coordinates.
/// With `reflect_only`, stops once the reflection is complete (the text stays empty).
fn translate_expanded(
    source: &str,
    opts: &Options,
    map: &LineMap,
    reflect_only: bool,
) -> Result<Translation> {
    let file = opts.file_name.as_str();
    let toks = significant(&lex(source, file, false)?);
    check_unsupported(source, file, &toks, Some(opts.target))?;
    let syn = analyse(source, file, &toks)?;
    let mut module = build(source, file, &toks, &syn)?;
    let mut rw = Rewriter {
        src: source,
        file,
        toks: &toks,
        syn: &syn,
        opts,
        repl: vec![None; toks.len()],
        joined: vec![false; toks.len()],
        prefix: HashMap::new(),
        removed: Vec::new(),
        tg_id: 0,
        user_aliases: HashSet::new(),
    };
    rw.user_aliases = (0..toks.len())
        .filter(|&i| {
            toks[i].kind == TokenKind::Ident
                && is_vector_type_name(rw.txt(i))
                && rw.declares_alias(i)
        })
        .map(|i| rw.txt(i))
        .collect();
    let values = rw.constant_values()?;
    for e in &mut module.entry_points {
        for p in &mut e.params {
            if let Some(g) = &p.gate {
                p.active = rw.eval_gate(g, &values, p.line, 0)?;
            }
        }
        assign_abi(e);
    }
    if reflect_only {
        return Ok(Translation {
            text: String::new(),
            module,
            entries: BTreeMap::new(),
            cpu_modes: BTreeMap::new(),
        });
    }
    let selected = match &opts.entries {
        Some(names) => Some(crate::unit::select(&module, names, file)?),
        None => None,
    };
    let mut unused = Vec::new();
    if let Some(sel) = &selected {
        let keep: HashSet<usize> = module
            .entry_points
            .iter()
            .filter(|e| sel.contains(e.name.as_str()))
            .map(|e| e.def)
            .collect();
        unused = crate::unit::unused_kernels(source, &toks, &syn, &keep);
        for &(a, b) in &unused {
            rw.set_range(a, b, "");
        }
    }
    rw.function_constants(&values, opts.entries.as_deref())?;
    rw.address_space_overloads();
    rw.address_space_function_overloads();
    rw.address_space_specialisations();
    rw.instantiations();
    rw.entry_names(&module);
    if opts.target == Target::Cuda {
        rw.device_functions();
    }
    rw.tokens(&values)?;
    if opts.checked {
        rw.checked_pointers();
    }
    let mut late = crate::edit::Edit {
        src: rw.src,
        ctx: &syn.ctx,
        toks: rw.toks,
        repl: &mut rw.repl,
        joined: &rw.joined,
        prefix: &mut rw.prefix,
    };
    late.anonymous_struct_members();
    if opts.target == Target::Cuda {
        late.guarded_shuffles();
    }
    late.ternaries();
    late.range_initialisers();
    if opts.checked && opts.target == Target::Cpu {
        late.loop_checks();
    }
    // The passes above may write into a left-out kernel (a function constant's `true`/`false`,
    // an overload's new name): the unit must not contain any of it.
    for &(a, b) in &unused {
        rw.set_range(a, b, "");
    }
    let mut text = header(opts);
    if opts.checked {
        crate::checked::add_to_header(&mut text);
    }
    let mut renamed: Vec<&str> = rw.math_renames().into_iter().collect();
    renamed.sort_unstable();
    if !renamed.is_empty() {
        // Calls the user's renamed function could not serve (other argument types) still
        // reach metal's overloads, as they do on Metal where both are visible.
        let spec = match opts.target {
            Target::Cuda => "__device__ inline",
            Target::Cpu => "inline",
        };
        let lines = text.rfind("#line 1 ").unwrap_or(text.len());
        let mut fwd = String::new();
        for n in renamed.into_iter().filter(|n| in_metal(n)) {
            fwd.push_str(&format!(
                "template <class... A> {spec} auto ingot_user_{n}(A... a) -> decltype(::metal::{n}(a...)) {{ return ::metal::{n}(a...); }}\n"
            ));
        }
        text.insert_str(lines, &fwd);
    }
    text.push_str(&rw.output());
    if !text.ends_with('\n') {
        text.push('\n');
    }
    let mut entries = BTreeMap::new();
    let mut cpu_modes = BTreeMap::new();
    let mut groups_emitted: HashSet<usize> = HashSet::new();
    let helpers = if opts.target == Target::Cpu {
        let all = crate::reflect::collective_helpers(source, &toks, &syn);
        let replay = crate::reflect::replay_helpers(source, &toks, &syn, &all);
        Helpers { all, replay }
    } else {
        Helpers::default()
    };
    let emitted = selected
        .as_ref()
        .map_or(!module.entry_points.is_empty(), |s| !s.is_empty());
    if emitted && opts.target == Target::Cuda {
        text.push_str("#line 1 \"<ingot-msl wrappers>\"\n");
        text.push_str(wrapper_cuda::PREAMBLE);
    }
    for e in &module.entry_points {
        if selected
            .as_ref()
            .is_some_and(|s| !s.contains(e.name.as_str()))
        {
            continue;
        }
        let call = rw.callee(e);
        let (efile, eline) = map.lookup(e.line);
        text.push_str(&format!("#line {eline} \"{}\"\n", escape(efile)));
        let args: Vec<WrapperArg> = rw.wrapper_args(e);
        let (symbol, code) = match opts.target {
            Target::Cuda => wrapper_cuda::emit(e, &call, &args, opts.checked),
            Target::Cpu => {
                let mode = cpu_mode(&rw, e, &args, opts, &helpers);
                let group = match &mode {
                    CpuChoice::WorkItems { code, callee } => {
                        // One group function per definition (a template serves many entries).
                        if groups_emitted.insert(e.def) {
                            text.push_str(code);
                            text.push_str(&format!("#line {eline} \"{}\"\n", escape(efile)));
                        }
                        Some(callee.clone())
                    }
                    _ => None,
                };
                let public = mode.public();
                let (sym, mut code) =
                    wrapper_cpu::emit(e, &call, group.as_deref(), &args, opts.checked);
                code.push_str(&format!("// ingot cpu engine: {}: {}\n", e.name, public));
                cpu_modes.insert(e.name.clone(), public);
                (sym, code)
            }
        };
        text.push_str(&code);
        entries.insert(e.name.clone(), symbol);
    }
    Ok(Translation {
        text,
        module,
        entries,
        cpu_modes,
    })
}

/// The file's helpers that reach barriers or SIMD-group functions, for the CPU's work-item
/// loop former: `all` of them, and those whose calls it replays.
#[derive(Default)]
struct Helpers {
    all: HashSet<String>,
    replay: HashSet<String>,
}

/// How the CPU runs an entry point ([`Translation::cpu_modes`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum CpuMode {
    /// No barrier, SIMD-group function or threadgroup memory: a plain loop over the threads.
    Loop,
    /// Work-item loops between barriers and SIMD-group functions (`wiloops`).
    WorkItems,
    /// One fiber per thread, for the reason given.
    Fibers(String),
}

impl std::fmt::Display for CpuMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuMode::Loop => write!(f, "loop (no barrier or SIMD-group function)"),
            CpuMode::WorkItems => write!(f, "work-item loops"),
            CpuMode::Fibers(why) => write!(f, "fibers ({})", why.replace('\n', " ")),
        }
    }
}

/// The mode chosen while translating, with the group function when there is one.
enum CpuChoice {
    Public(CpuMode),
    WorkItems { code: String, callee: String },
}

impl CpuChoice {
    fn public(&self) -> CpuMode {
        match self {
            CpuChoice::Public(m) => m.clone(),
            CpuChoice::WorkItems { .. } => CpuMode::WorkItems,
        }
    }
}

fn cpu_mode(
    rw: &Rewriter,
    e: &EntryPoint,
    args: &[WrapperArg],
    opts: &Options,
    helpers: &Helpers,
) -> CpuChoice {
    if !e.features.needs_fibers() {
        return CpuChoice::Public(CpuMode::Loop);
    }
    if !opts.work_items {
        return CpuChoice::Public(CpuMode::Fibers(
            "work-item loops are turned off (INGOT_CPU_ENGINE=fibers)".into(),
        ));
    }
    if opts.checked {
        return CpuChoice::Public(CpuMode::Fibers(
            "checked mode runs barrier kernels with fibers".into(),
        ));
    }
    match rw.group_function(e, args, helpers) {
        Ok((code, callee)) => CpuChoice::WorkItems { code, callee },
        Err(why) => CpuChoice::Public(CpuMode::Fibers(why)),
    }
}

fn header(opts: &Options) -> String {
    let file = escape(&opts.file_name);
    let (def, extra) = match opts.target {
        Target::Cuda => ("INGOT_TARGET_CUDA", ""),
        Target::Cpu => ("INGOT_TARGET_CPU", "#include <ingot/cpu/runtime.h>\n"),
    };
    // The user's defines reach the target compiler too (headers it includes itself).
    let defines: String = opts
        .defines
        .iter()
        .map(|(n, v)| format!("#define {n} {}\n", crate::preprocess::define_body(v)))
        .collect();
    format!(
        "// generated by ingot-msl {} from {} for {}\n#define {def} 1\n#define INGOT_FAST_MATH {}\n#include <ingot/metal_stdlib.h>\n{extra}{defines}#line 1 \"{file}\"\n",
        env!("CARGO_PKG_VERSION"),
        opts.file_name.replace(['\n', '\r'], " "),
        opts.target,
        u8::from(opts.fast_math),
    )
}

/// Escapes a file name for a `#line` directive.
fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

struct Rewriter<'a> {
    src: &'a str,
    file: &'a str,
    toks: &'a [Token],
    syn: &'a Syntax,
    opts: &'a Options,
    /// Replacement text per token (None: copy the token).
    repl: Vec<Option<String>>,
    /// Per token: the whitespace before it is dropped (newlines kept), because the token is
    /// part of a multi-token replacement.
    joined: Vec<bool>,
    /// Text inserted before a token (CUDA: `__device__ ` on user functions).
    prefix: HashMap<usize, String>,
    /// Token ranges removed whole (a collapsed address-space overload): no prefix is written
    /// inside them, whichever pass ran first.
    removed: Vec<(usize, usize)>,
    /// Next ID for `ingot::cpu::tg_var`.
    tg_id: u32,
    /// Vector/matrix names the file declares itself (`typedef matrix<bfloat, 4, 4>
    /// bfloat4x4;`): the user's everywhere, wrappers' template arguments included.
    user_aliases: HashSet<&'a str>,
}

impl<'a> Rewriter<'a> {
    fn txt(&self, i: usize) -> &'a str {
        self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("")
    }

    fn is(&self, i: usize, s: &str) -> bool {
        self.toks.get(i).is_some_and(|t| t.is(self.src, s))
    }

    fn prev_is(&self, i: usize, s: &str) -> bool {
        i.checked_sub(1).is_some_and(|p| self.is(p, s))
    }

    fn err_at(&self, i: usize, msg: impl Into<String>) -> Error {
        let (l, c) = self.toks.get(i).map(|t| (t.line, t.col)).unwrap_or((1, 1));
        Error::new(self.file, l, c, msg)
    }

    fn set(&mut self, i: usize, s: impl Into<String>) {
        if let Some(r) = self.repl.get_mut(i) {
            *r = Some(s.into());
        }
    }

    /// Replaces tokens `a..=b` by `s` (whitespace between them collapses, newlines stay).
    fn set_range(&mut self, a: usize, b: usize, s: impl Into<String>) {
        self.set(a, s);
        for k in a + 1..=b.min(self.toks.len().saturating_sub(1)) {
            self.set(k, "");
            if let Some(j) = self.joined.get_mut(k) {
                *j = true;
            }
        }
    }

    /// Values of the function constants given in the options (by name, or by index).
    fn constant_values(&self) -> Result<HashMap<String, String>> {
        let mut out = HashMap::new();
        let known: HashSet<&str> = self
            .syn
            .function_constants
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        for c in &self.syn.function_constants {
            let v = self.opts.constants.get(&c.name).or_else(|| {
                c.index
                    .and_then(|i| self.opts.constants.get(&i.to_string()))
            });
            if let Some(v) = v {
                let v = v.trim();
                let ok = !v.is_empty()
                    && v.chars()
                        .all(|ch| ch.is_ascii_alphanumeric() || "._+-".contains(ch));
                if !ok {
                    return Err(self.err_at(
                        c.start,
                        format!(
                            "value `{v}` of function constant `{}` is not a literal",
                            c.name
                        ),
                    ));
                }
                let v = if c.ty == "bool" {
                    match v {
                        "1" | "true" | "True" => "true".to_string(),
                        "0" | "false" | "False" => "false".to_string(),
                        _ => {
                            return Err(self.err_at(
                                c.start,
                                format!(
                                "value `{v}` of bool function constant `{}` is not true or false",
                                c.name
                            ),
                            ))
                        }
                    }
                } else {
                    v.to_string()
                };
                out.insert(c.name.clone(), v);
            }
        }
        for k in self.opts.constants.keys() {
            let by_index = self
                .syn
                .function_constants
                .iter()
                .any(|c| c.index.is_some_and(|i| i.to_string() == *k));
            if !known.contains(k.as_str()) && !by_index {
                return Err(Error::new(
                    self.file,
                    1,
                    1,
                    format!("no function constant named `{k}` in this file"),
                ));
            }
        }
        Ok(out)
    }

    /// Evaluates a function-constant gate (a constant's name) to a bool.
    fn eval_gate(
        &self,
        name: &str,
        values: &HashMap<String, String>,
        line: u32,
        depth: u32,
    ) -> Result<bool> {
        let err = |m: String| Error::new(self.file, line, 1, m);
        if depth > 16 {
            return Err(err(format!("gate `{name}` is defined in terms of itself")));
        }
        let name = name.trim();
        match name {
            "true" => return Ok(true),
            "false" => return Ok(false),
            _ => {}
        }
        if let Some(v) = values.get(name) {
            return Ok(!matches!(v.as_str(), "false" | "0" | "0.0"));
        }
        if self.syn.function_constants.iter().any(|c| c.name == name) {
            return Ok(false);
        }
        if let Some(&(a, b)) = self.syn.program_constants.get(name) {
            let mut pos = a;
            let v = self.eval_or(&mut pos, b, values, line, depth + 1)?;
            if pos != b {
                return Err(err(format!(
                    "cannot evaluate the initializer of gate `{name}`"
                )));
            }
            return Ok(v);
        }
        Err(err(format!(
            "gate `{name}` is not a function constant or a program-scope constant"
        )))
    }

    fn eval_or(
        &self,
        pos: &mut usize,
        end: usize,
        v: &HashMap<String, String>,
        line: u32,
        d: u32,
    ) -> Result<bool> {
        let mut r = self.eval_and(pos, end, v, line, d)?;
        while *pos < end && self.is(*pos, "||") {
            *pos += 1;
            r |= self.eval_and(pos, end, v, line, d)?;
        }
        Ok(r)
    }

    fn eval_and(
        &self,
        pos: &mut usize,
        end: usize,
        v: &HashMap<String, String>,
        line: u32,
        d: u32,
    ) -> Result<bool> {
        let mut r = self.eval_unary(pos, end, v, line, d)?;
        while *pos < end && self.is(*pos, "&&") {
            *pos += 1;
            r &= self.eval_unary(pos, end, v, line, d)?;
        }
        Ok(r)
    }

    fn eval_unary(
        &self,
        pos: &mut usize,
        end: usize,
        v: &HashMap<String, String>,
        line: u32,
        d: u32,
    ) -> Result<bool> {
        let err = || {
            Error::new(
                self.file,
                line,
                1,
                "cannot evaluate a function-constant gate",
            )
        };
        if *pos >= end {
            return Err(err());
        }
        if self.is(*pos, "!") {
            *pos += 1;
            return Ok(!self.eval_unary(pos, end, v, line, d)?);
        }
        if self.is(*pos, "(") {
            *pos += 1;
            let r = self.eval_or(pos, end, v, line, d)?;
            if !self.is(*pos, ")") {
                return Err(err());
            }
            *pos += 1;
            return Ok(r);
        }
        if self.is(*pos, "is_function_constant_defined")
            && self.is(*pos + 1, "(")
            && self.is(*pos + 3, ")")
        {
            let n = self.txt(*pos + 2);
            *pos += 4;
            return Ok(v.contains_key(n));
        }
        let t = self.txt(*pos);
        *pos += 1;
        if let Ok(n) = t.trim_end_matches(['u', 'U']).parse::<i64>() {
            return Ok(n != 0);
        }
        self.eval_gate(t, v, line, d)
    }

    /// Replaces function-constant declarations and `is_function_constant_defined(name)`.
    fn function_constants(
        &mut self,
        values: &HashMap<String, String>,
        entries: Option<&[String]>,
    ) -> Result<()> {
        let in_attr = self.attr_mask();
        // Constants the code uses without a value: (name, index, first use).
        let mut missing: Vec<(String, Option<u32>, String, usize)> = Vec::new();
        // Constants the kept code tests with is_function_constant_defined: without a value
        // their uses are the undefined branch, so they get a placeholder, not an error.
        let tested: HashSet<&str> = (0..self.toks.len())
            .filter(|&i| {
                self.repl[i].is_none()
                    && self.is(i, "is_function_constant_defined")
                    && self.is(i + 1, "(")
                    && self.is(i + 3, ")")
            })
            .map(|i| self.txt(i + 2))
            .collect();
        for c in &self.syn.function_constants {
            let text = match values.get(&c.name) {
                Some(v) => format!(
                    "INGOT_PROGRAM_CONSTANT {} {} = {};",
                    self.rewrite_text(&c.ty.replace("const ", "")),
                    c.name,
                    v
                ),
                None if tested.contains(c.name.as_str()) => {
                    let ty = self.rewrite_text(&c.ty.replace("const ", ""));
                    format!("INGOT_PROGRAM_CONSTANT {ty} {} = {ty}();", c.name)
                }
                None => {
                    // Used anywhere but in its declaration, a gate or is_function_constant_defined?
                    for (i, &attr) in in_attr.iter().enumerate() {
                        if (c.start..=c.end).contains(&i)
                            || self.repl[i].is_some()
                            || attr
                            || self.txt(i) != c.name
                            || self.toks[i].kind != TokenKind::Ident
                            || (self.prev_is(i, "(")
                                && i >= 2
                                && self.is(i - 2, "is_function_constant_defined"))
                            || self.prev_is(i, ".")
                            || self.prev_is(i, "->")
                        {
                            continue;
                        }
                        missing.push((c.name.clone(), c.index, c.ty.clone(), i));
                        break;
                    }
                    String::new()
                }
            };
            self.set_range(c.start, c.end, text);
        }
        if let Some(&(_, _, _, at)) = missing.first() {
            let list: Vec<String> = missing
                .iter()
                .map(|(n, idx, ty, _)| match idx {
                    Some(x) => format!("`{n}` ({ty}, index {x})"),
                    None => format!("`{n}` ({ty})"),
                })
                .collect();
            let example = format!("{{\"{}\": ...}}", missing[0].0);
            let msg = match entries {
                Some([one]) => format!(
                    "kernel `{one}` uses function constant{} without a value: {}; give {} with lib.function(\"{one}\", constants={example})",
                    if missing.len() == 1 { "" } else { "s" },
                    list.join(", "),
                    if missing.len() == 1 { "it" } else { "them" },
                ),
                _ => format!(
                    "function constant{} without a value: {}; give {} with lib.function(name, constants={example}) or at compile time",
                    if missing.len() == 1 { "" } else { "s" },
                    list.join(", "),
                    if missing.len() == 1 { "it" } else { "them" },
                ),
            };
            return Err(self.err_at(at, msg));
        }
        for i in 0..self.toks.len() {
            if self.is(i, "is_function_constant_defined")
                && self.is(i + 1, "(")
                && self.is(i + 3, ")")
            {
                let defined = values.contains_key(self.txt(i + 2));
                self.set_range(i, i + 3, if defined { "true" } else { "false" });
            }
        }
        Ok(())
    }

    /// True for tokens inside `[[...]]` (brackets included).
    fn attr_mask(&self) -> Vec<bool> {
        let mut m = vec![false; self.toks.len()];
        let mut inside = false;
        for (i, t) in self.toks.iter().enumerate() {
            if t.kind == TokenKind::AttrOpen {
                inside = true;
            }
            m[i] = inside;
            if t.kind == TokenKind::AttrClose {
                inside = false;
            }
        }
        m
    }

    /// Member functions overloaded only on the address space of `this` (`S() thread = default;
    /// S() constant = default;`, `f() const thread {}` / `f() const constant {}`) collapse to one
    /// C++ signature once the qualifiers are dropped: the first of each is kept, the others go
    /// (they have the same meaning on targets with one address space).
    fn address_space_overloads(&mut self) {
        const SPACES: &[&str] = &["thread", "threadgroup", "device", "constant"];
        let n = self.toks.len();
        let mut seen: HashSet<(usize, String)> = HashSet::new();
        for i in 0..n {
            if !self.is(i, ")") || self.syn.ctx.get(i) != Some(&Ctx::Class) {
                continue;
            }
            // The qualifiers after the parameter list: cv and at least one address space.
            let mut q = i + 1;
            let mut has_space = false;
            while q < n && (self.is(q, "const") || SPACES.contains(&self.txt(q))) {
                has_space |= SPACES.contains(&self.txt(q));
                q += 1;
            }
            // A member without an address space is recorded too: a later one that differs only
            // in its address space (`MD() = default;` then `MD() threadgroup = default;`)
            // is the same C++ member.
            let plain = !has_space;
            if plain && !(self.is(q, "=") || self.is(q, "{") || self.is(q, ";") || self.is(q, ":"))
            {
                continue;
            }
            // Back to the start of the member declaration.
            let mut depth = 0i32;
            let mut k = i;
            loop {
                match self.txt(k) {
                    ")" => depth += 1,
                    "(" => depth -= 1,
                    ";" | "{" | "}" if depth == 0 => {
                        k += 1;
                        break;
                    }
                    ":" if depth == 0
                        && matches!(
                            self.txt(k.wrapping_sub(1)),
                            "public" | "private" | "protected"
                        ) =>
                    {
                        k += 1;
                        break;
                    }
                    _ => {}
                }
                if k == 0 {
                    break;
                }
                k -= 1;
            }
            let start = k;
            // The end: `;` of a declaration (`= default;`) or the body's `}`.
            let mut end = q;
            while end < n && !self.is(end, ";") && !self.is(end, "{") {
                end += 1;
            }
            if self.is(end, "{") {
                let mut d = 0i32;
                while end < n {
                    match self.txt(end) {
                        "{" => d += 1,
                        "}" => {
                            d -= 1;
                            if d == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    end += 1;
                }
            }
            if end >= n {
                continue;
            }
            // The class scope's opening brace identifies the class.
            let class_open = (0..start)
                .rev()
                .find(|&b| self.is(b, "{") && self.syn.ctx.get(b + 1) == Some(&Ctx::Class))
                .unwrap_or(0);
            let mut key: Vec<&str> = (start..=i).map(|t| self.txt(t)).collect();
            key.extend((i + 1..q).map(|t| self.txt(t)).filter(|w| *w == "const"));
            if !seen.insert((class_open, key.join(" "))) && !plain {
                self.set_range(start, end, "");
                self.removed.push((start, end));
            }
        }
    }

    /// Function definitions that differ only in address spaces (`elem_to_loc(device const int*
    /// shape, ...)` next to `elem_to_loc(constant const int* shape, ...)`) become the same C++
    /// function once the address spaces are rewritten: the first definition is kept.
    fn address_space_function_overloads(&mut self) {
        let mut classes: Vec<(usize, usize)> =
            self.syn.classes.values().flatten().copied().collect();
        classes.sort_unstable();
        let map = |w: &'a str| -> Option<&'a str> {
            match w {
                "device" | "thread" | "threadgroup" => None,
                "constant" => Some("const"),
                _ => Some(w),
            }
        };
        let norm = |words: &mut dyn Iterator<Item = &'a str>| -> String {
            let mut out: Vec<&str> = Vec::new();
            for w in words.filter_map(map) {
                // `const constant T` and `constant const T` are one `const`.
                if w == "const" && out.last() == Some(&"const") {
                    continue;
                }
                out.push(w);
            }
            out.join(" ")
        };
        let mut seen: HashSet<(Option<usize>, String)> = HashSet::new();
        let mut remove = Vec::new();
        let attrs = self.attr_mask();
        for f in &self.syn.functions {
            if f.kernel_tok.is_some() {
                continue;
            }
            let has_space = (f.decl_start..f.body_open).any(|k| {
                matches!(
                    self.txt(k),
                    "device" | "thread" | "threadgroup" | "constant"
                )
            });
            if !has_space {
                continue;
            }
            let class = classes
                .iter()
                .filter(|(o, c)| *o < f.decl_start && f.decl_start < *c)
                .map(|(o, _)| *o)
                .max();
            let head = norm(
                &mut (f.decl_start..f.params_open)
                    .filter(|&k| !attrs[k])
                    .map(|k| self.txt(k)),
            );
            let params: Vec<String> = f
                .params
                .iter()
                .map(|p| norm(&mut p.type_toks.iter().map(|&k| self.txt(k))))
                .collect();
            let close = f.params.last().map(|p| p.end).unwrap_or(f.params_open + 1);
            let tail = norm(&mut (close + 1..f.body_open).map(|k| self.txt(k)));
            let key = format!(
                "{}::{head}({}){tail}",
                f.namespaces.join("::"),
                params.join(",")
            );
            if !seen.insert((class, key)) {
                remove.push((f.decl_start, f.body_close));
            }
        }
        for (a, b) in remove {
            self.set_range(a, b, "");
        }
    }

    /// Partial specialisations that differ only in address spaces (`pointer_element<device
    /// T*>`, `<thread T*>`, ...) are one specialisation once the qualifiers are gone: the first
    /// is kept.
    fn address_space_specialisations(&mut self) {
        const SPACES: &[&str] = &["device", "thread", "threadgroup", "constant"];
        let n = self.toks.len();
        // `>` closing the `<` at `open` (angle brackets only; parentheses nest).
        let close_angle = |rw: &Self, open: usize| -> Option<usize> {
            let mut depth = 0i32;
            for k in open..n {
                match rw.txt(k) {
                    "<" => depth += 1,
                    ">" => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(k);
                        }
                    }
                    ";" | "{" | "}" => return None,
                    _ => {}
                }
            }
            None
        };
        let mut seen: HashSet<String> = HashSet::new();
        let mut remove = Vec::new();
        for t in 0..n {
            if !(self.is(t, "template") && self.is(t + 1, "<")) {
                continue;
            }
            let Some(pe) = close_angle(self, t + 1) else {
                continue;
            };
            let (kw, name) = (pe + 1, pe + 2);
            if !(self.is(kw, "struct") || self.is(kw, "class")) || !self.is(name + 1, "<") {
                continue;
            }
            let Some(ae) = close_angle(self, name + 1) else {
                continue;
            };
            if !(name + 2..ae).any(|k| SPACES.contains(&self.txt(k))) {
                continue;
            }
            let Some(open) = (ae + 1..n).find(|&k| self.is(k, "{") || self.is(k, ";")) else {
                continue;
            };
            if !self.is(open, "{") {
                continue;
            }
            let mut depth = 0i32;
            let Some(close) = (open..n).find(|&k| {
                match self.txt(k) {
                    "{" => depth += 1,
                    "}" => depth -= 1,
                    _ => {}
                }
                depth == 0
            }) else {
                continue;
            };
            // The enclosing scope: the nearest unclosed `{` before the declaration.
            let mut d = 0i32;
            let scope = (0..t)
                .rev()
                .find(|&k| {
                    match self.txt(k) {
                        "}" => d += 1,
                        "{" => {
                            if d == 0 {
                                return true;
                            }
                            d -= 1;
                        }
                        _ => {}
                    }
                    false
                })
                .map_or(-1, |k| k as i64);
            // `constant` is written `const` (a distinct specialisation), the others vanish.
            let words: Vec<&str> = (t..=ae)
                .map(|k| match self.txt(k) {
                    "constant" => "const",
                    w => w,
                })
                .filter(|w| !SPACES.contains(w))
                .collect();
            if !seen.insert(format!("{scope} {}", words.join(" "))) {
                let end = if self.is(close + 1, ";") {
                    close + 1
                } else {
                    close
                };
                remove.push((t, end));
            }
        }
        for (a, b) in remove {
            self.set_range(a, b, "");
        }
    }

    fn instantiations(&mut self) {
        for inst in &self.syn.instantiations {
            self.set_range(inst.start, inst.end, "");
        }
    }

    /// Renames each entry point's function `ingot_kernel_<name>`, everywhere it is named (a
    /// `typedef decltype(f<half>) f_t;` must follow), so the wrapper may take the host name.
    /// Not renamed: calls in function bodies (a kernel cannot be called, so `cross(a, b)` in a
    /// kernel named `cross` calls `metal::cross` or a user overload) and the names of other
    /// functions of the same name (that user overload).
    fn entry_names(&mut self, m: &Module) {
        let names: HashSet<&str> = m
            .entry_points
            .iter()
            .filter_map(|e| self.syn.functions.get(e.def))
            .map(|f| f.name.as_str())
            .collect();
        let others: HashSet<usize> = self
            .syn
            .functions
            .iter()
            .filter(|f| {
                // Member functions too: candle's mlx_sort has a kernel `block_sort` and a static
                // member `KernelMergeSort::block_sort`, called by name in the kernel's body.
                f.kernel_tok.is_none() && names.contains(f.name.as_str())
            })
            .map(|f| f.name_tok)
            .collect();
        for i in 0..self.toks.len() {
            let t = self.toks[i];
            let call_in_body = self.syn.ctx.get(i) == Some(&Ctx::Body) && self.is(i + 1, "(");
            if t.kind == TokenKind::Ident
                && self.repl[i].is_none()
                && names.contains(t.text(self.src))
                && !self.prev_is(i, ".")
                && !self.prev_is(i, "->")
                && !call_in_body
                && !others.contains(&i)
            {
                let new = format!("ingot_kernel_{}", t.text(self.src));
                self.set(i, new);
            }
        }
    }

    /// CUDA: marks every user function definition `__device__` (kernels have `INGOT_FN`), so
    /// the translation also compiles without NVRTC's `-default-device`.
    fn device_functions(&mut self) {
        for f in &self.syn.functions {
            if f.kernel_tok.is_some() {
                continue;
            }
            let mut k = f.decl_start;
            if self.is(k, "template") && self.is(k + 1, "<") {
                let mut depth = 0i32;
                // `<`/`>` inside parentheses are operators: `enable_if_t<(N >= 2), bool>`.
                let mut parens = 0i32;
                while k < f.params_open {
                    match self.txt(k) {
                        "(" => parens += 1,
                        ")" => parens -= 1,
                        _ if parens > 0 => {}
                        "<" => depth += 1,
                        ">" => {
                            depth -= 1;
                            if depth == 0 {
                                k += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    k += 1;
                }
            }
            while k < f.params_open && self.toks[k].kind == TokenKind::AttrOpen {
                while k < f.params_open && self.toks[k].kind != TokenKind::AttrClose {
                    k += 1;
                }
                k += 1;
            }
            let already = (f.decl_start..f.params_open).any(|j| {
                matches!(
                    self.txt(j),
                    "METAL_FUNC" | "INGOT_FN" | "__device__" | "__host__" | "__global__"
                )
            });
            // Only when the declaration starts at this token (not `template` of something else).
            // A declaration another pass removed (a collapsed address-space overload) gets none.
            let removed = self.repl.get(k).is_some_and(|r| r.as_deref() == Some(""));
            if !already
                && !removed
                && k < f.params_open
                && !self.is(k, "template")
                && !self.is(k, "friend")
            {
                self.prefix.insert(k, "__device__ ".to_string());
            }
        }
    }

    /// The expression naming the user's entry function (`::ns::ingot_kernel_f<float>`).
    fn callee(&self, e: &EntryPoint) -> String {
        let mut s = String::new();
        if let Some(f) = self.syn.functions.get(e.def) {
            for n in &f.namespaces {
                s.push_str("::");
                s.push_str(n);
            }
            s.push_str("::");
        }
        s.push_str("ingot_kernel_");
        s.push_str(&e.function);
        if !e.template_args.is_empty() {
            s.push('<');
            s.push_str(
                &e.template_args
                    .iter()
                    .map(|a| self.rewrite_text(a))
                    .collect::<Vec<_>>()
                    .join(", "),
            );
            s.push('>');
        }
        s
    }

    /// Applies the qualifier rules to a short piece of type text (template arguments).
    fn rewrite_text(&self, s: &str) -> String {
        let Ok(toks) = lex(s, self.file, false) else {
            return s.to_string();
        };
        let words: Vec<&str> = toks.iter().map(|t| t.text(s)).collect();
        let mut out: Vec<String> = Vec::new();
        for (k, w) in words.iter().enumerate() {
            let after_scope = k > 0 && words[k - 1] == "::";
            match *w {
                _ if !after_scope
                    && is_vector_type_name(w)
                    && !self.user_aliases.contains(w)
                    && !self.syn.classes.contains_key(*w) =>
                {
                    out.push(format!("::metal::{w}"))
                }
                "device" | "thread" | "threadgroup" => {}
                "constant" => {
                    let adj =
                        (k > 0 && words[k - 1] == "const") || words.get(k + 1) == Some(&"const");
                    if !adj {
                        out.push("const".to_string());
                    }
                }
                _ => out.push(w.to_string()),
            }
        }
        let refs: Vec<&str> = out.iter().map(String::as_str).collect();
        crate::reflect::join_words(&refs)
    }

    /// C++ types of the entry's parameters for the wrapper.
    fn wrapper_args(&self, e: &EntryPoint) -> Vec<WrapperArg> {
        let f = self.syn.functions.get(e.def);
        let subst: HashMap<&str, &str> = match f {
            Some(f) => f
                .template_params
                .iter()
                .map(String::as_str)
                .zip(e.template_args.iter().map(String::as_str))
                .collect(),
            None => HashMap::new(),
        };
        e.params
            .iter()
            .map(|p| {
                let mut value: Vec<String> = Vec::new();
                let mut pconst = false;
                let mut seen_ptr = false;
                let mut in_coherent = false;
                for &k in &p.type_toks {
                    let w = self.txt(k);
                    // `coherent(system)` is no part of the type.
                    if w == "coherent" {
                        in_coherent = self.is(k + 1, "(");
                        continue;
                    }
                    if in_coherent {
                        in_coherent = w != ")";
                        continue;
                    }
                    match w {
                        // `constant T name[N]`: an array parameter is a pointer.
                        "[" => seen_ptr = true,
                        "device" | "thread" | "threadgroup" | "volatile" | "struct"
                        | "restrict" | "__restrict" => {}
                        "constant" | "const" if !seen_ptr => pconst = true,
                        "constant" | "const" => {}
                        "*" | "&" | "&&" => seen_ptr = true,
                        _ if !seen_ptr => {
                            let w = subst.get(w).copied().unwrap_or(w);
                            value.push(w.to_string());
                        }
                        _ => {}
                    }
                }
                let vw: Vec<&str> = value.iter().map(String::as_str).collect();
                let value_ty = self.rewrite_text(&crate::reflect::join_words(&vw));
                let ptr_ty = format!("{}{}*", if pconst { "const " } else { "" }, value_ty);
                WrapperArg { value_ty, ptr_ty }
            })
            .collect()
    }

    /// Checked mode: address-space pointer types become `ingot::chk<T>`.
    fn checked_pointers(&mut self) {
        let reps = crate::checked::pointer_types(
            self.src,
            self.toks,
            self.syn,
            |k| self.repl.get(k).and_then(|r| r.as_deref()),
            |t| self.rewrite_text(t),
        );
        for r in reps {
            self.set_range(r.first, r.last, r.text);
        }
    }

    /// The per-token rules.
    fn tokens(&mut self, values: &HashMap<String, String>) -> Result<()> {
        let _ = values;
        let renames = self.math_renames();
        let user_aliases = self.user_aliases.clone();
        let n = self.toks.len();
        let mut i = 0;
        while i < n {
            if self.repl[i].is_some() {
                i += 1;
                continue;
            }
            let t = self.toks[i];
            match t.kind {
                TokenKind::Preprocessor => self.preprocessor(i),
                TokenKind::AttrOpen => {
                    let close = (i + 1..n)
                        .find(|&k| self.toks[k].kind == TokenKind::AttrClose)
                        .unwrap_or(n.saturating_sub(1));
                    self.attribute(i, close);
                    i = close + 1;
                    continue;
                }
                TokenKind::Number => self.number(i),
                TokenKind::Ident => {
                    let s = t.text(self.src);
                    let after_member = self.prev_is(i, ".") || self.prev_is(i, "->");
                    let after_scope = self.prev_is(i, "::");
                    if after_member {
                        self.swizzle(i);
                    } else if after_scope {
                        // `c10::metal::expm1f(x)`: a namespace's function of a name Metal
                        // lacks is renamed wherever it is named.
                        if renames.contains(s) && !in_metal(s) {
                            self.set(i, format!("ingot_user_{s}"));
                        }
                    } else {
                        if is_vector_type_name(s)
                            && !self.syn.classes.contains_key(s)
                            && !user_aliases.contains(s)
                        {
                            self.set(i, format!("::metal::{s}"));
                            i += 1;
                            continue;
                        }
                        match s {
                            // `__extension__` (GNU; ggml's `GGML_EXTENSION union`): NVRTC
                            // does not know it, and it only silences pedantic warnings.
                            "device" | "thread" | "__extension__" => self.set(i, ""),
                            // `coherent(system) device T*`: every target's memory is coherent
                            // at the scopes its atomics and fences use.
                            "coherent"
                                if self.syn.ctx.get(i) != Some(&Ctx::Body)
                                    || self.is(i + 1, "(") =>
                            {
                                let mut end = i;
                                if self.is(i + 1, "(") {
                                    if let Some(c) = (i + 1..n).find(|&k| self.is(k, ")")) {
                                        end = c;
                                    }
                                }
                                self.set_range(i, end, "");
                                i = end + 1;
                                continue;
                            }
                            // `template <> R operator()(complex64_t x, ...)` inside a class
                            // (MLX binary_ops.h): g++ has no explicit specialisation at class
                            // scope; the non-template overload it becomes is chosen for the
                            // same exact-match calls.
                            "template"
                                if self.syn.ctx.get(i) == Some(&Ctx::Class)
                                    && self.is(i + 1, "<")
                                    && self.is(i + 2, ">")
                                    && !matches!(
                                        self.txt(i + 3),
                                        "struct" | "class" | "union" | "template"
                                    ) =>
                            {
                                self.set_range(i, i + 2, "");
                                i += 3;
                                continue;
                            }
                            "kernel" if self.syn.ctx.get(i) == Some(&Ctx::Namespace) => {
                                self.set(i, "INGOT_FN")
                            }
                            "constant" => self.constant(i),
                            "threadgroup" => self.threadgroup(i)?,
                            _ => {
                                if renames.contains(s) {
                                    self.set(i, format!("ingot_user_{s}"));
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
            i += 1;
        }
        Ok(())
    }

    /// User functions whose names clash with the targets' global math functions: those at
    /// global scope, and those of a namespace when Metal has no function of that name (PyTorch's
    /// `c10::metal::expm1f`, called unqualified through a using-directive, is ambiguous with
    /// CUDA's `::expm1f`; on Metal every `expm1f` is the library's).
    fn math_renames(&self) -> HashSet<&'a str> {
        let mut out = HashSet::new();
        for f in &self.syn.functions {
            if f.owner.is_none()
                && (f.namespaces.is_empty() || !in_metal(&f.name))
                && GLOBAL_MATH_NAMES.contains(&f.name.as_str())
                && !self.prev_is(f.name_tok, "::")
            {
                out.insert(self.txt(f.name_tok));
            }
        }
        out
    }

    fn preprocessor(&mut self, i: usize) {
        let text = self.txt(i);
        let body = text.trim_start().trim_start_matches('#').trim_start();
        if body.starts_with("include") {
            let trimmed = text.trim_end();
            if let Some(stripped) = trimmed.strip_suffix(';') {
                self.set(i, stripped.trim_end().to_string());
            }
            return;
        }
        let Some(rest) = body.strip_prefix("pragma") else {
            return;
        };
        let rest = rest.trim_start();
        if rest.starts_with("METAL") {
            self.set(i, "");
        } else if let Some(loop_) = rest.strip_prefix("clang") {
            let loop_ = loop_.trim_start();
            if !loop_.starts_with("loop") {
                return;
            }
            let compact: String = loop_.chars().filter(|c| !c.is_whitespace()).collect();
            let out = match self.opts.target {
                Target::Cpu => String::new(),
                Target::Cuda => {
                    if compact.contains("unroll(disable)") {
                        "#pragma unroll 1".to_string()
                    } else if let Some(p) = compact.find("unroll_count(") {
                        let n: String = compact[p + 13..]
                            .chars()
                            .take_while(|c| c.is_ascii_digit())
                            .collect();
                        if n.is_empty() {
                            "#pragma unroll".to_string()
                        } else {
                            format!("#pragma unroll {n}")
                        }
                    } else if compact.contains("unroll(") {
                        "#pragma unroll".to_string()
                    } else {
                        String::new()
                    }
                }
            };
            self.set(i, out);
        } else if rest.starts_with("unroll") && self.opts.target == Target::Cpu {
            self.set(i, "");
        }
    }

    fn attribute(&mut self, open: usize, close: usize) {
        // Collect item names at depth 0.
        let mut names = Vec::new();
        let mut depth = 0;
        let mut expect_name = true;
        for k in open + 1..close {
            let s = self.txt(k);
            match s {
                "(" => depth += 1,
                ")" => depth -= 1,
                "," if depth == 0 => expect_name = true,
                _ if depth == 0 && expect_name && self.toks[k].kind == TokenKind::Ident => {
                    names.push(s);
                    expect_name = false;
                }
                _ => {}
            }
        }
        let standard = !names.is_empty()
            && names.iter().all(|n| {
                matches!(
                    *n,
                    "maybe_unused" | "fallthrough" | "nodiscard" | "deprecated" | "noreturn"
                )
            });
        if standard {
            return;
        }
        let kernel = names.contains(&"kernel") && self.syn.ctx.get(open) == Some(&Ctx::Namespace);
        self.set_range(open, close, if kernel { "INGOT_FN" } else { "" });
    }

    /// `1.0h` -> `half(1.0f)`, `1.5bf` -> `bfloat(1.5f)`, and an unsuffixed floating literal
    /// gets `f`: MSL has no `double`, its `1.0` is a `float` (in C++ `max(x, 0.0)` with a float
    /// `x` would not even compile).
    fn number(&mut self, i: usize) {
        let s = self.txt(i);
        if s.starts_with("0x") || s.starts_with("0X") {
            return;
        }
        let (body, ty) = if let Some(b) = s.strip_suffix("bf").or_else(|| s.strip_suffix("BF")) {
            (b, "bfloat")
        } else if let Some(b) = s.strip_suffix('h').or_else(|| s.strip_suffix('H')) {
            (b, "half")
        } else {
            let floating = s.contains(['.', 'e', 'E']);
            let plain = s.bytes().all(|b| {
                b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-' | b'\'')
            });
            if floating && plain {
                self.set(i, format!("{s}f"));
            }
            return;
        };
        if body.is_empty() {
            return;
        }
        let lit = if body.contains(['.', 'e', 'E']) {
            format!("{body}f")
        } else {
            format!("{body}.0f")
        };
        self.set(i, format!("{ty}({lit})"));
    }

    fn swizzle(&mut self, i: usize) {
        let s = self.txt(i);
        let n = s.len();
        if !(2..=4).contains(&n) || self.syn.fields.contains(s) || self.is(i + 1, "(") {
            return;
        }
        let xyzw = s.bytes().all(|b| b"xyzw".contains(&b));
        let rgba = s.bytes().all(|b| b"rgba".contains(&b));
        if !xyzw && !rgba {
            return;
        }
        let assign = matches!(
            self.txt(i + 1),
            "=" | "+=" | "-=" | "*=" | "/=" | "%=" | "&=" | "|=" | "^="
        ) || (self.is(i + 1, "<") && self.is(i + 2, "<") && self.is(i + 3, "="))
            || (self.is(i + 1, ">") && self.is(i + 2, ">") && self.is(i + 3, "="));
        let repeated = s
            .bytes()
            .enumerate()
            .any(|(a, c)| s.bytes().skip(a + 1).any(|d| d == c));
        if assign && !repeated {
            self.set(i, format!("{s}_ref()"));
        } else {
            self.set(i, format!("{s}()"));
        }
    }

    fn constant(&mut self, i: usize) {
        // `f() constant {}`, `S() const constant = default;`: the address space of `this` (a
        // constructor may carry it too), not a `const`.
        let close = if self.prev_is(i, ")") {
            Some(i - 1)
        } else if self.prev_is(i, "const") && self.is(i.wrapping_sub(2), ")") {
            Some(i - 2)
        } else {
            None
        };
        if let Some(close) = close {
            // A constructor cannot be `const`; other members keep the meaning (callable on a
            // read-only object).
            let mut depth = 0i32;
            let mut k = close;
            while k > 0 {
                match self.txt(k) {
                    ")" => depth += 1,
                    "(" => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                k -= 1;
            }
            let name = self.txt(k.wrapping_sub(1));
            if self.syn.classes.contains_key(name) || close + 1 != i {
                self.set(i, "");
            } else {
                self.set(i, "const");
            }
            return;
        }
        let ctx = self.syn.ctx.get(i).copied();
        let prev = i.checked_sub(1).and_then(|p| self.toks.get(p));
        let at_stmt_start = match prev {
            None => true,
            Some(p) => {
                matches!(p.kind, TokenKind::Preprocessor | TokenKind::AttrClose)
                    || matches!(
                        p.text(self.src),
                        ";" | "{" | "}" | "static" | "constexpr" | "inline"
                    )
            }
        };
        // `static constant constexpr const int n`: any `const` among the neighbouring
        // specifiers makes a second one a duplicate.
        let spec = |w: &str| matches!(w, "static" | "const" | "constexpr" | "inline" | "volatile");
        let mut next_const = false;
        let mut k = i + 1;
        while spec(self.txt(k)) {
            next_const |= self.is(k, "const");
            k += 1;
        }
        let mut prev_const = false;
        let mut k = i;
        while k > 0 && spec(self.txt(k - 1)) {
            k -= 1;
            prev_const |= self.is(k, "const");
        }
        // `constant constexpr const float S<6>::table[8][8];`: the out-of-class definition of
        // a static member keeps the member's storage (no `static`, no `__device__`).
        let member_definition = {
            let n = self.toks.len();
            let end = (i + 1..n)
                .find(|&k| matches!(self.txt(k), "[" | "=" | ";" | "{" | "("))
                .unwrap_or(n);
            end >= 2 && self.is(end - 2, "::")
        };
        if ctx == Some(Ctx::Namespace)
            && at_stmt_start
            && !member_definition
            && !self.declares_function(i)
        {
            // INGOT_PROGRAM_CONSTANT brings its own storage class and `const`: drop the user's
            // `static` and `const` around `constant` (`constexpr` stays).
            self.set(i, "INGOT_PROGRAM_CONSTANT");
            let spec = |w: &str| matches!(w, "static" | "const" | "constexpr" | "inline");
            let mut k = i;
            while k > 0 && spec(self.txt(k - 1)) {
                k -= 1;
                if matches!(self.txt(k), "static" | "const") {
                    self.set(k, "");
                }
            }
            let mut k = i + 1;
            while spec(self.txt(k)) {
                if matches!(self.txt(k), "static" | "const") {
                    self.set(k, "");
                }
                k += 1;
            }
            return;
        }
        if next_const || prev_const {
            self.set(i, "");
        } else {
            self.set(i, "const");
        }
    }

    /// True when token `i` is the name a `typedef ... name;` or `using name =` declares (the
    /// user's own `typedef matrix<bfloat, 4, 4> bfloat4x4;` must not become `metal::...`).
    fn declares_alias(&self, i: usize) -> bool {
        if self.prev_is(i, "using") && self.is(i + 1, "=") {
            return true;
        }
        if !self.is(i + 1, ";") {
            return false;
        }
        let mut k = i;
        while k > 0 && i - k < 256 {
            k -= 1;
            match self.txt(k) {
                "typedef" => return true,
                ";" | "{" | "}" => return false,
                _ => {}
            }
        }
        false
    }

    /// True when the declaration starting at `i` declares a function (`constant T& f(...)`).
    fn declares_function(&self, i: usize) -> bool {
        let mut depth = 0i32;
        for k in i + 1..self.toks.len() {
            let t = self.toks[k];
            match t.text(self.src) {
                "<" => depth += 1,
                ">" => depth -= 1,
                "(" if depth == 0 => return k > i + 1 && self.toks[k - 1].kind == TokenKind::Ident,
                ";" | "=" | "{" => return false,
                _ => {}
            }
            if t.kind == TokenKind::AttrOpen {
                return false;
            }
        }
        false
    }

    fn threadgroup(&mut self, i: usize) -> Result<()> {
        if !is_threadgroup_var_decl(self.src, self.toks, &self.syn.ctx, i) {
            self.set(i, "");
            return Ok(());
        }
        if self.opts.target == Target::Cuda {
            // 16-byte aligned, as the CPU form's storage is: kernels view threadgroup arrays as
            // wider types (a uint array as 64-bit keys, floats as float4), which CUDA's natural
            // alignment of the element type would leave misaligned by declaration order.
            self.set(i, "__shared__ __align__(16)");
            // `threadgroup float buf[32] = {0};` (MLX): CUDA refuses an initialiser on shared
            // memory; Metal does not run it either, and the CPU form drops it too.
            let n = self.toks.len();
            let mut depth = 0i32;
            let mut init: Option<usize> = None;
            let mut k = i + 1;
            while k < n {
                match self.txt(k) {
                    "<" | "(" | "[" | "{" => depth += 1,
                    ">" | ")" | "]" | "}" => depth -= 1,
                    "=" if depth == 0 => init = Some(k),
                    "," | ";" if depth == 0 => {
                        if let Some(a) = init.take() {
                            self.set_range(a, k - 1, "");
                        }
                        if self.is(k, ";") {
                            break;
                        }
                    }
                    _ => {}
                }
                k += 1;
            }
            return Ok(());
        }
        // CPU: `threadgroup T a[N], b;` -> `T (&a)[N] = ingot::cpu::tg_var<T[N], ID>(); ...`
        let n = self.toks.len();
        let semi = (i + 1..n)
            .find(|&k| self.is(k, ";"))
            .ok_or_else(|| self.err_at(i, "expected `;` after a threadgroup declaration"))?;
        // Split the declarators at top-level commas.
        let mut parts: Vec<(usize, usize)> = Vec::new();
        let mut start = i + 1;
        let mut depth = 0i32;
        for k in i + 1..semi {
            match self.txt(k) {
                "<" | "(" | "[" | "{" => depth += 1,
                ">" | ")" | "]" | "}" => depth -= 1,
                "," if depth == 0 => {
                    parts.push((start, k));
                    start = k + 1;
                }
                _ => {}
            }
        }
        parts.push((start, semi));
        // The base type: the first part's tokens before its name.
        let (a, b) = parts[0];
        let src = self.src;
        let toks = self.toks;
        let name_at = |lo: usize, hi: usize| -> Option<usize> {
            let end = (lo..hi)
                .find(|&k| toks[k].is(src, "[") || toks[k].is(src, "="))
                .unwrap_or(hi);
            (lo..end).rev().find(|&k| toks[k].kind == TokenKind::Ident)
        };
        let Some(first_name) = name_at(a, b) else {
            return Err(self.err_at(i, "expected a name in this threadgroup declaration"));
        };
        if first_name == a {
            return Err(self.err_at(i, "expected a type in this threadgroup declaration"));
        }
        let base = self.rewrite_text(&crate::syntax::join(self.src, self.toks, a..first_name));
        let mut out = Vec::new();
        for (pi, &(lo, hi)) in parts.iter().enumerate() {
            let name_tok = if pi == 0 {
                Some(first_name)
            } else {
                name_at(lo, hi)
            };
            let Some(nt) = name_tok else {
                let (l, c) = toks.get(lo).map(|t| (t.line, t.col)).unwrap_or((1, 1));
                return Err(Error::new(
                    self.file,
                    l,
                    c,
                    "expected a name in this threadgroup declaration",
                ));
            };
            let end = (nt + 1..hi).find(|&k| toks[k].is(src, "=")).unwrap_or(hi);
            let suffix = crate::syntax::join(src, toks, nt + 1..end);
            let name = toks[nt].text(src);
            let id = self.tg_id;
            self.tg_id += 1;
            if suffix.is_empty() {
                out.push(format!(
                    "{base}& {name} = ingot::cpu::tg_var<{base}, {id}>()"
                ));
            } else {
                out.push(format!(
                    "{base} (&{name}){suffix} = ingot::cpu::tg_var<{base}{suffix}, {id}>()"
                ));
            }
        }
        self.set_range(i, semi - 1, out.join("; "));
        Ok(())
    }

    /// The rewritten user code: gaps copied, tokens replaced; line count preserved.
    /// The output text of tokens `a..=b` (the gaps between them included, not the one before).
    fn output_range(&self, a: usize, b: usize) -> String {
        let pos = self.toks.get(a).map_or(0, |t| t.start);
        self.render(a, b.min(self.toks.len().saturating_sub(1)) + 1, pos)
    }

    /// Tokens `a..b` with the source gaps before each, from source position `pos`.
    fn render(&self, a: usize, b: usize, mut pos: usize) -> String {
        let mut out = String::with_capacity(self.src.len() + self.src.len() / 8);
        for i in a..b {
            let t = &self.toks[i];
            let gap = self.src.get(pos..t.start).unwrap_or("");
            if self.joined[i] {
                out.extend(gap.chars().filter(|&c| c == '\n'));
            } else {
                out.push_str(gap);
            }
            if let Some(p) = self.prefix.get(&i) {
                if !self.removed.iter().any(|&(x, y)| (x..=y).contains(&i)) {
                    out.push_str(p);
                }
            }
            let orig = t.text(self.src);
            match &self.repl[i] {
                None => out.push_str(orig),
                Some(r) => {
                    out.push_str(r);
                    let lost = orig
                        .matches('\n')
                        .count()
                        .saturating_sub(r.matches('\n').count());
                    for _ in 0..lost {
                        out.push('\n');
                    }
                }
            }
            pos = t.end;
        }
        out
    }

    /// The group function of entry `e` for the CPU's work-item loop engine (see `wiloops`):
    /// its code and the callee, or why the entry keeps fibers.
    fn group_function(
        &self,
        e: &EntryPoint,
        args: &[WrapperArg],
        helpers: &Helpers,
    ) -> std::result::Result<(String, String), String> {
        let f = self
            .syn
            .functions
            .get(e.def)
            .ok_or("the kernel's definition was not found")?;
        if f.owner.is_some() {
            return Err("the kernel is a class member".into());
        }
        let mut depth = 0;
        let mut params_close = None;
        for k in f.params_open..f.body_open {
            match self.toks[k].text(self.src) {
                "(" => depth += 1,
                ")" => {
                    depth -= 1;
                    if depth == 0 {
                        params_close = Some(k);
                        break;
                    }
                }
                _ => {}
            }
        }
        let params_close = params_close.ok_or("the parameter list could not be read")?;
        if f.name_tok <= f.decl_start {
            return Err("the declaration could not be read".into());
        }
        let head = self.output_range(f.decl_start, f.name_tok - 1);
        let plist = self.output_range(f.params_open, params_close);
        let plist = plist
            .strip_suffix(')')
            .ok_or("the parameter list could not be read")?;
        let sep = if e.params.is_empty() { "" } else { "," };
        let body = self.output_range(f.body_open, f.body_close);
        let mut per_thread = Vec::new();
        let mut all = Vec::new();
        for (i, p) in e.params.iter().enumerate() {
            all.push((p.name.clone(), p.is_pointer));
            let (Some(role), Some(a)) = (p.role, args.get(i)) else {
                continue;
            };
            if p.kind == crate::reflect::ParamKind::Builtin && role.is_per_thread() {
                let v = crate::wrapper_common::builtin_value(p, a, role, "ingot_t");
                per_thread.push((p.name.clone(), a.value_ty.clone(), v));
            }
        }
        for a in &e.template_args {
            for w in a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if helpers.all.contains(w) && !helpers.replay.contains(w) {
                    return Err(format!(
                        "the template argument `{w}` holds a barrier or a SIMD-group function"
                    ));
                }
            }
        }
        let params = crate::wiloops::Params { per_thread, all };
        let lookup = |name: &str| self.inline_helper(name, helpers);
        let body = crate::wiloops::inline::expand(&body, &lookup)?;
        let code = crate::wiloops::form(&body, &params, &helpers.all, &helpers.replay)?;
        let name = format!("ingot_group_{}", e.function);
        let mut open = String::new();
        let mut close = String::new();
        let mut callee = String::new();
        for n in &f.namespaces {
            open.push_str(&format!("namespace {n} {{ "));
            close.push_str("} ");
            callee.push_str("::");
            callee.push_str(n);
        }
        callee.push_str("::");
        callee.push_str(&name);
        if !e.template_args.is_empty() {
            let targs: Vec<String> = e
                .template_args
                .iter()
                .map(|a| self.rewrite_text(a))
                .collect();
            callee.push_str(&format!("<{}>", targs.join(", ")));
        }
        let text = format!(
            "{open}{head} {name}{plist}{sep} const ::ingot::cpu::wi_group& ingot_g) {{\n  const uint32_t ingot_n = ingot_g.n;\n  (void)ingot_n;\n{code}}}\n{close}\n"
        );
        Ok((text, callee))
    }

    /// The definitions of the free helper `name` (it reaches barriers or SIMD-group functions
    /// and is not replayed) as translated text, for the work-item loop former to inline; None
    /// when it is not such a helper or a definition cannot be read.
    fn inline_helper(
        &self,
        name: &str,
        helpers: &Helpers,
    ) -> Option<Vec<crate::wiloops::inline::Helper>> {
        if !helpers.all.contains(name) || helpers.replay.contains(name) {
            return None;
        }
        let defs: Vec<&FunctionDef> = self
            .syn
            .functions
            .iter()
            .filter(|f| f.name == name)
            .collect();
        if defs.is_empty()
            || defs
                .iter()
                .any(|f| f.owner.is_some() || f.kernel_tok.is_some())
        {
            return None;
        }
        let text = |i: usize| self.toks.get(i).map(|t| t.text(self.src)).unwrap_or("");
        let strip_attrs = |s: String| -> String {
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(a) = rest.find("[[") {
                out.push_str(&rest[..a]);
                match rest[a..].find("]]") {
                    Some(b) => rest = &rest[a + b + 2..],
                    None => {
                        rest = "";
                    }
                }
            }
            out.push_str(rest);
            out.trim().to_string()
        };
        let mut out = Vec::new();
        for f in defs {
            // template <...>
            let mut template = Vec::new();
            let mut head = f.decl_start;
            if text(head) == "template" && text(head + 1) == "<" {
                let mut depth = 0i32;
                let mut close = None;
                for k in head + 1..f.name_tok {
                    let t = text(k);
                    let compare = t == "<"
                        && (text(k - 1) == ")"
                            || self.toks[k - 1].kind == crate::lexer::TokenKind::Number);
                    match t {
                        "<" if !compare => depth += 1,
                        ">" => {
                            depth -= 1;
                            if depth == 0 {
                                close = Some(k);
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                let close = close?;
                let mut from = head + 2;
                let mut d = 0i32;
                for k in head + 2..=close {
                    let t = text(k);
                    let end = k == close;
                    match t {
                        "<" | "(" => d += 1,
                        ">" | ")" if !end => d -= 1,
                        _ => {}
                    }
                    if (t == "," && d == 0) || end {
                        if k > from {
                            let eq = (from..k).find(|&j| text(j) == "=");
                            let decl_end = eq.unwrap_or(k);
                            let pname = (from..decl_end)
                                .rev()
                                .find(|&j| self.toks[j].kind == crate::lexer::TokenKind::Ident)
                                .map(|j| text(j).to_string())
                                .unwrap_or_default();
                            let is_type = matches!(text(from), "typename" | "class");
                            // `typename T` names T; an unnamed `enable_if_t<...> = true` none.
                            let named = decl_end - from >= 2 || is_type;
                            let default =
                                eq.map(|e| self.output_range(e + 1, k - 1).trim().to_string());
                            template.push(crate::wiloops::inline::TemplateParam {
                                name: if named { pname } else { String::new() },
                                is_type,
                                default,
                            });
                        }
                        from = k + 1;
                    }
                }
                head = close + 1;
            }
            // The return type: what stays of the specifiers.
            let mut ret_toks = Vec::new();
            let mut k = head;
            while k < f.name_tok {
                let t = text(k);
                if self.toks[k].kind == crate::lexer::TokenKind::AttrOpen {
                    while k < f.name_tok && text(k) != "]]" {
                        k += 1;
                    }
                } else if t == "__attribute__" {
                    let mut depth = 0;
                    k += 1;
                    while k < f.name_tok {
                        match text(k) {
                            "(" => depth += 1,
                            ")" => {
                                depth -= 1;
                                if depth == 0 {
                                    break;
                                }
                            }
                            _ => {}
                        }
                        k += 1;
                    }
                } else if !matches!(t, "inline" | "static" | "constexpr" | "METAL_FUNC" | "]]") {
                    ret_toks.push(k);
                }
                k += 1;
            }
            let ret = ret_toks
                .iter()
                .map(|&k| self.output_range(k, k).trim().to_string())
                .collect::<Vec<_>>()
                .join(" ");
            let ret = if ret.is_empty() { return None } else { ret };
            let params = f
                .params
                .iter()
                .filter(|p| p.end > p.start)
                .map(|p| {
                    (
                        strip_attrs(self.output_range(p.start, p.end - 1)),
                        p.name.clone(),
                    )
                })
                .collect();
            out.push(crate::wiloops::inline::Helper {
                template,
                ret,
                params,
                body: self.output_range(f.body_open, f.body_close),
            });
        }
        Some(out)
    }

    fn output(&self) -> String {
        let mut out = self.render(0, self.toks.len(), 0);
        let pos = self.toks.last().map_or(0, |t| t.end);
        out.push_str(self.src.get(pos..).unwrap_or(""));
        out
    }
}
