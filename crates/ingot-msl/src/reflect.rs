//! Reflection: the entry points of a file, their parameters and features, as plain data.
//!
//! The runtime uses this to validate and bind arguments (buffer indices, pointee types, bytes
//! sizes), to compute builtin roles and to pick the CPU execution strategy.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::lexer::{lex, significant, Token, TokenKind};
use crate::syntax::{analyse, parse_int, Ctx, FunctionDef, Syntax};
use crate::types::{parse_type, TypeInfo};

/// Everything reflection finds in one file.
#[derive(Debug, Clone, Serialize)]
pub struct Module {
    /// Entry points, in source order (plain kernels first, then instantiations).
    pub entry_points: Vec<EntryPoint>,
    /// The file's function constants.
    pub function_constants: Vec<FunctionConstant>,
}

impl Module {
    /// Moves lines of the preprocessed text to the user's files and lines.
    pub(crate) fn relocate(&mut self, map: &crate::preprocess::LineMap) {
        for e in &mut self.entry_points {
            let (f, l) = map.lookup(e.line);
            e.file = f.to_string();
            e.line = l;
            for p in &mut e.params {
                p.line = map.lookup(p.line).1;
            }
        }
        for c in &mut self.function_constants {
            c.line = map.lookup(c.line).1;
        }
    }

    /// The entry point with host name `name`.
    pub fn entry(&self, name: &str) -> Option<&EntryPoint> {
        self.entry_points.iter().find(|e| e.name == name)
    }
}

/// `constant T name [[function_constant(index)]];`
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionConstant {
    /// The constant's name.
    pub name: String,
    /// Its declared type (`bool`, `int`, `float`, ...).
    pub ty: String,
    /// The index in the attribute (when a literal).
    pub index: Option<u32>,
    /// 1-based line of the declaration.
    pub line: u32,
}

/// One entry point (a kernel the host can launch).
#[derive(Debug, Clone, Serialize)]
pub struct EntryPoint {
    /// The host name: the function's name, or the `host_name` of an instantiation.
    pub name: String,
    /// The C++ function it runs (the template's name for an instantiation).
    pub function: String,
    /// Template arguments of an instantiation (empty for a plain kernel).
    pub template_args: Vec<String>,
    /// The file of the kernel's definition (the user's file, or an included header).
    pub file: String,
    /// 1-based line of the kernel's definition.
    pub line: u32,
    /// The parameters in declaration order.
    pub params: Vec<Param>,
    /// Indices into `params` of the ABI slots, in slot order (active buffers and bytes by
    /// buffer index).
    pub abi: Vec<usize>,
    /// `[[max_total_threads_per_threadgroup(n)]]`.
    pub max_total_threads_per_threadgroup: Option<u32>,
    /// `[[ingot::min_threadgroups_per_core(n)]]`, an ingot extension: on CUDA, the kernel is
    /// compiled for at least `n` resident threadgroups of `max_total_threads_per_threadgroup`
    /// threads on a multiprocessor (`__launch_bounds__`'s second argument: the compiler keeps
    /// to the registers that allow it). Other targets ignore it; Metal's compiler does not know
    /// it, so a source for Metal too defines it away there.
    pub min_threadgroups_per_core: Option<u32>,
    /// What the kernel (and everything it may call) uses.
    pub features: Features,
    /// Index into the file's function definitions (internal).
    #[serde(skip)]
    pub(crate) def: usize,
}

impl EntryPoint {
    /// The ABI slots' parameters in slot order.
    pub fn abi_params(&self) -> impl Iterator<Item = &Param> {
        self.abi.iter().filter_map(|&i| self.params.get(i))
    }
}

/// What an entry point uses, over its body and the user functions it may call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Features {
    /// `threadgroup_barrier` / `simdgroup_barrier`.
    pub barriers: bool,
    /// SIMD-group functions (`simd_sum`, `simd_shuffle`, ...).
    pub simdgroup: bool,
    /// Quad-group functions (`quad_sum`, `quad_shuffle`, ...).
    pub quad: bool,
    /// Any threadgroup memory (static declarations, dynamic parameters, pointers).
    pub threadgroup_memory: bool,
    /// Dynamic threadgroup memory parameters (`[[threadgroup(n)]]`).
    pub dynamic_threadgroup_memory: bool,
    /// Number of static `threadgroup` variable declarations reachable from the entry point.
    pub static_threadgroup_decls: u32,
    /// Atomic types or functions.
    pub atomics: bool,
    /// `simdgroup_matrix` types and functions.
    pub simdgroup_matrix: bool,
}

impl Features {
    /// True when the CPU engine must run the kernel with fibers (`Mode::Fibers`): threads of
    /// a group interact (barriers, SIMD-group functions, shared memory).
    pub fn needs_fibers(&self) -> bool {
        self.barriers
            || self.simdgroup
            || self.quad
            || self.threadgroup_memory
            || self.simdgroup_matrix
    }

    fn merge(&mut self, o: &Features) {
        self.barriers |= o.barriers;
        self.simdgroup |= o.simdgroup;
        self.quad |= o.quad;
        self.threadgroup_memory |= o.threadgroup_memory;
        self.dynamic_threadgroup_memory |= o.dynamic_threadgroup_memory;
        self.static_threadgroup_decls += o.static_threadgroup_decls;
        self.atomics |= o.atomics;
        self.simdgroup_matrix |= o.simdgroup_matrix;
    }
}

/// How a parameter is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// A pointer (or non-const `device` reference) bound to a buffer.
    Buffer,
    /// A scalar or struct bound from host bytes (`constant T&`, by value).
    Bytes,
    /// Dynamic threadgroup memory (`threadgroup T* p [[threadgroup(n)]]`).
    Threadgroup,
    /// A builtin role (`[[thread_position_in_grid]]`, ...).
    Builtin,
}

/// An MSL address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressSpace {
    /// `device`
    Device,
    /// `constant`
    Constant,
    /// `threadgroup`
    Threadgroup,
    /// `thread`
    Thread,
}

/// The builtin roles a kernel parameter can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum BuiltinRole {
    ThreadPositionInGrid,
    ThreadPositionInThreadgroup,
    ThreadIndexInThreadgroup,
    ThreadgroupPositionInGrid,
    ThreadsPerThreadgroup,
    ThreadgroupsPerGrid,
    ThreadsPerGrid,
    ThreadIndexInSimdgroup,
    SimdgroupIndexInThreadgroup,
    SimdgroupsPerThreadgroup,
    ThreadsPerSimdgroup,
    DispatchThreadsPerThreadgroup,
    ThreadExecutionWidth,
    QuadgroupIndexInThreadgroup,
    ThreadIndexInQuadgroup,
}

impl BuiltinRole {
    /// True for the roles whose value differs between the threads of one threadgroup.
    pub fn is_per_thread(self) -> bool {
        matches!(
            self,
            BuiltinRole::ThreadPositionInGrid
                | BuiltinRole::ThreadPositionInThreadgroup
                | BuiltinRole::ThreadIndexInThreadgroup
                | BuiltinRole::ThreadIndexInSimdgroup
                | BuiltinRole::SimdgroupIndexInThreadgroup
                | BuiltinRole::QuadgroupIndexInThreadgroup
                | BuiltinRole::ThreadIndexInQuadgroup
        )
    }

    /// All roles.
    pub const ALL: [BuiltinRole; 15] = [
        BuiltinRole::ThreadPositionInGrid,
        BuiltinRole::ThreadPositionInThreadgroup,
        BuiltinRole::ThreadIndexInThreadgroup,
        BuiltinRole::ThreadgroupPositionInGrid,
        BuiltinRole::ThreadsPerThreadgroup,
        BuiltinRole::ThreadgroupsPerGrid,
        BuiltinRole::ThreadsPerGrid,
        BuiltinRole::ThreadIndexInSimdgroup,
        BuiltinRole::SimdgroupIndexInThreadgroup,
        BuiltinRole::SimdgroupsPerThreadgroup,
        BuiltinRole::ThreadsPerSimdgroup,
        BuiltinRole::DispatchThreadsPerThreadgroup,
        BuiltinRole::ThreadExecutionWidth,
        BuiltinRole::QuadgroupIndexInThreadgroup,
        BuiltinRole::ThreadIndexInQuadgroup,
    ];

    /// The attribute name, also the field name in `ingot::cpu::thread_ids`.
    pub fn name(self) -> &'static str {
        match self {
            BuiltinRole::ThreadPositionInGrid => "thread_position_in_grid",
            BuiltinRole::ThreadPositionInThreadgroup => "thread_position_in_threadgroup",
            BuiltinRole::ThreadIndexInThreadgroup => "thread_index_in_threadgroup",
            BuiltinRole::ThreadgroupPositionInGrid => "threadgroup_position_in_grid",
            BuiltinRole::ThreadsPerThreadgroup => "threads_per_threadgroup",
            BuiltinRole::ThreadgroupsPerGrid => "threadgroups_per_grid",
            BuiltinRole::ThreadsPerGrid => "threads_per_grid",
            BuiltinRole::ThreadIndexInSimdgroup => "thread_index_in_simdgroup",
            BuiltinRole::SimdgroupIndexInThreadgroup => "simdgroup_index_in_threadgroup",
            BuiltinRole::SimdgroupsPerThreadgroup => "simdgroups_per_threadgroup",
            BuiltinRole::ThreadsPerSimdgroup => "threads_per_simdgroup",
            BuiltinRole::DispatchThreadsPerThreadgroup => "dispatch_threads_per_threadgroup",
            BuiltinRole::ThreadExecutionWidth => "thread_execution_width",
            BuiltinRole::QuadgroupIndexInThreadgroup => "quadgroup_index_in_threadgroup",
            BuiltinRole::ThreadIndexInQuadgroup => "thread_index_in_quadgroup",
        }
    }

    /// True for the roles with three components (`uint3`-like); false for the scalar ones.
    pub fn is_vector(self) -> bool {
        matches!(
            self,
            BuiltinRole::ThreadPositionInGrid
                | BuiltinRole::ThreadPositionInThreadgroup
                | BuiltinRole::ThreadgroupPositionInGrid
                | BuiltinRole::ThreadsPerThreadgroup
                | BuiltinRole::ThreadgroupsPerGrid
                | BuiltinRole::ThreadsPerGrid
                | BuiltinRole::DispatchThreadsPerThreadgroup
        )
    }

    /// The role named `name`.
    pub fn from_name(name: &str) -> Option<BuiltinRole> {
        BuiltinRole::ALL.into_iter().find(|r| r.name() == name)
    }
}

/// One kernel parameter.
#[derive(Debug, Clone, Serialize)]
pub struct Param {
    /// The declared name.
    pub name: String,
    /// How it is bound.
    pub kind: ParamKind,
    /// Buffer index (buffer and bytes parameters).
    pub buffer_index: Option<u32>,
    /// Threadgroup memory index (threadgroup parameters).
    pub threadgroup_index: Option<u32>,
    /// The address space written in the type.
    pub address_space: Option<AddressSpace>,
    /// The declared type as written, template parameters substituted
    /// (`device const float*`, `constant Params&`, `uint3`).
    pub ty: String,
    /// The value type: the pointee of a pointer or reference, else the type itself, without
    /// address space or `const` (`float`, `Params`, `uint3`).
    pub pointee: String,
    /// The pointee is `const` (or in the `constant` address space).
    pub is_const: bool,
    /// Declared as a pointer.
    pub is_pointer: bool,
    /// Declared as a reference.
    pub is_reference: bool,
    /// `pointee` parsed, when it is a known MSL type.
    pub info: Option<TypeInfo>,
    /// Byte size of `pointee` with MSL layout, when known (MSL types, and structs of the file
    /// whose fields all have known sizes).
    pub size: Option<u32>,
    /// The builtin role (builtin parameters).
    pub role: Option<BuiltinRole>,
    /// The function constant that gates the parameter (`[[function_constant(name)]]`).
    pub gate: Option<String>,
    /// False when a gate is false in this translation (the parameter is not in the ABI).
    pub active: bool,
    /// Slot in the wrapper's ABI (active buffer and bytes parameters).
    pub abi_slot: Option<usize>,
    /// 1-based line of the parameter.
    pub line: u32,
    /// Token indices of the type (internal).
    #[serde(skip)]
    pub(crate) type_toks: Vec<usize>,
}

/// Reflects `source` (errors name the file `<source>`).
pub fn reflect(source: &str) -> Result<Module> {
    reflect_named(source, "<source>")
}

/// Reflects `source`, naming `file` in errors.
pub fn reflect_named(source: &str, file: &str) -> Result<Module> {
    // A byte-order mark would end up mid-file after the header.
    let source = source.strip_prefix('\u{feff}').unwrap_or(source);
    let pre = crate::preprocess::preprocess(source, file, &[])?;
    let source: &str = &pre.text;
    let run = || -> Result<Module> {
        let toks = significant(&lex(source, file, false)?);
        let syn = analyse(source, file, &toks)?;
        build(source, file, &toks, &syn)
    };
    let mut m = run().map_err(|e| pre.map.fix(e))?;
    m.relocate(&pre.map);
    Ok(m)
}

/// Builds the module from an analysed file (shared with the translator).
pub(crate) fn build(src: &str, file: &str, toks: &[Token], syn: &Syntax) -> Result<Module> {
    check_unsupported(src, file, toks, None)?;
    let graph = CallGraph::new(src, toks, syn);
    let layouts = struct_layouts(src, toks, syn);
    let mut entry_points = Vec::new();
    let mut seen: HashMap<String, u32> = HashMap::new();
    let at = |i: usize| toks.get(i).map(|t| (t.line, t.col)).unwrap_or((1, 1));
    for (d, f) in syn.functions.iter().enumerate() {
        if f.kernel_tok.is_none() || !f.template_params.is_empty() {
            continue;
        }
        let host = f
            .attrs
            .iter()
            .find(|a| a.name == "host_name")
            .and_then(|a| a.args.first())
            .and_then(|a| crate::syntax::unquote(a))
            .unwrap_or_else(|| f.name.clone());
        let e = entry(src, file, toks, syn, &graph, &layouts, d, f, host, &[], &[])?;
        entry_points.push(e);
    }
    for inst in &syn.instantiations {
        let def = syn.functions.iter().position(|f| {
            f.name == inst.function && f.kernel_tok.is_some() && !f.template_params.is_empty()
        });
        let Some(d) = def else {
            let (l, c) = at(inst.start);
            return Err(Error::new(
                file,
                l,
                c,
                format!(
                    "instantiation `{}` names `{}`, which is not a kernel template defined in this file",
                    inst.host_name, inst.function
                ),
            ));
        };
        let f = &syn.functions[d];
        let mut args = inst.args.clone();
        if args.len() < f.template_params.len() && !inst.param_types.is_empty() {
            args = deduce(src, toks, f, &inst.args, &inst.param_types);
        }
        let e = entry(
            src,
            file,
            toks,
            syn,
            &graph,
            &layouts,
            d,
            f,
            inst.host_name.clone(),
            &f.template_params,
            &args,
        )?;
        entry_points.push(e);
    }
    check_kernels_seen(src, file, toks, syn)?;
    for e in &entry_points {
        if !is_identifier(&e.name) {
            return Err(Error::new(
                file,
                e.line,
                1,
                format!("host name `{}` is not a valid C identifier", e.name),
            ));
        }
        if let Some(prev) = seen.insert(e.name.clone(), e.line) {
            return Err(Error::new(
                file,
                e.line,
                1,
                format!(
                    "entry point `{}` is defined twice (first on line {prev})",
                    e.name
                ),
            ));
        }
    }
    let function_constants = syn
        .function_constants
        .iter()
        .map(|c| FunctionConstant {
            name: c.name.clone(),
            ty: c.ty.clone(),
            index: c.index,
            line: at(c.start).0,
        })
        .collect();
    Ok(Module {
        entry_points,
        function_constants,
    })
}

/// Template arguments of `f` for an instantiation that writes its parameter types (C++
/// deduction, for the forms kernels use: a template parameter standing for a whole type or a
/// template argument, `device T* x`, `constant Params<N>* p`). `given` are the arguments written
/// explicitly; deduction stops at the first parameter it cannot bind (its default, if any,
/// then applies).
fn deduce(
    src: &str,
    toks: &[Token],
    f: &FunctionDef,
    given: &[String],
    inst_params: &[Vec<String>],
) -> Vec<String> {
    let tparams = &f.template_params;
    let mut bound: HashMap<String, String> =
        tparams.iter().cloned().zip(given.iter().cloned()).collect();
    // `const` may be written before or after the address space: it does not take part.
    let strip = |w: &[&str]| -> Vec<String> {
        w.iter()
            .filter(|w| **w != "const")
            .map(|w| w.to_string())
            .collect()
    };
    for (p, inst) in f.params.iter().zip(inst_params) {
        let def_words: Vec<&str> = p.type_toks.iter().map(|&k| toks[k].text(src)).collect();
        let def = strip(&def_words);
        let inst = strip(&inst.iter().map(String::as_str).collect::<Vec<_>>());
        let (mut i, mut j) = (0, 0);
        while i < def.len() && j < inst.len() {
            let d = def[i].as_str();
            if tparams.iter().any(|t| t == d) && !bound.contains_key(d) {
                // Take inst tokens up to the def's next token, at bracket depth 0.
                let next = def.get(i + 1).map(String::as_str);
                let mut depth = 0i32;
                let start = j;
                while j < inst.len() {
                    let w = inst[j].as_str();
                    if depth == 0 && Some(w) == next {
                        break;
                    }
                    match w {
                        "<" | "(" | "[" => depth += 1,
                        ">" | ")" | "]" => depth -= 1,
                        ">>" => depth -= 2,
                        _ => {}
                    }
                    j += 1;
                }
                if j == start {
                    break;
                }
                bound.insert(d.to_string(), inst[start..j].join(" "));
                i += 1;
                continue;
            }
            if let Some(v) = bound.get(d) {
                // A bound parameter stands for its tokens.
                let n = v.split(' ').count();
                j += n;
                i += 1;
                continue;
            }
            if d != inst[j] {
                break;
            }
            i += 1;
            j += 1;
        }
    }
    let mut out = Vec::new();
    for t in tparams {
        match bound.get(t.as_str()) {
            Some(v) => out.push(v.clone()),
            None => break,
        }
    }
    out
}

/// A `kernel` definition that the structural pass did not record (a construct it misread)
/// must fail loudly: a file whose kernels silently reflect as none must never pass.
fn check_kernels_seen(src: &str, file: &str, toks: &[Token], syn: &Syntax) -> Result<()> {
    let mut covered: Vec<(usize, usize)> = syn
        .functions
        .iter()
        .map(|f| (f.decl_start, f.params_open))
        .chain(syn.instantiations.iter().map(|i| (i.start, i.end)))
        .collect();
    covered.sort_unstable();
    // Running maximum of the ends, so one binary search answers "inside some range".
    let mut max_end = Vec::with_capacity(covered.len());
    let mut m = 0;
    for &(_, e) in &covered {
        m = m.max(e);
        max_end.push(m);
    }
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokenKind::Ident
            || t.text(src) != "kernel"
            || syn.ctx.get(i) == Some(&Ctx::Body)
        {
            continue;
        }
        let n = covered.partition_point(|r| r.0 <= i);
        if n > 0 && max_end[n - 1] >= i {
            continue;
        }
        // Only a definition counts (a prototype `kernel void f(...);` declares no entry point).
        let mut k = i + 1;
        let mut depth = 0i32;
        while k < toks.len() {
            match toks[k].text(src) {
                "(" | "[" => depth += 1,
                ")" | "]" => depth -= 1,
                ";" if depth <= 0 => break,
                "{" if depth <= 0 => {
                    return Err(Error::new(
                        file,
                        t.line,
                        t.col,
                        "ingot could not read this kernel's declaration (please report it)",
                    ));
                }
                _ => {}
            }
            k += 1;
        }
    }
    Ok(())
}

/// True for a C identifier.
pub(crate) fn is_identifier(s: &str) -> bool {
    let mut b = s.bytes();
    matches!(b.next(), Some(c) if c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Errors for MSL features ingot does not support, naming the target when there is one.
pub(crate) fn check_unsupported(
    src: &str,
    file: &str,
    toks: &[Token],
    target: Option<crate::Target>,
) -> Result<()> {
    let suffix = match target {
        Some(t) => format!("on the {t} target"),
        None => "by ingot".to_string(),
    };
    for t in toks {
        if t.kind != TokenKind::Ident {
            continue;
        }
        let s = t.text(src);
        let what = if s.starts_with("texture")
            && matches!(
                s,
                "texture1d"
                    | "texture1d_array"
                    | "texture2d"
                    | "texture2d_array"
                    | "texture3d"
                    | "texturecube"
                    | "texturecube_array"
                    | "texture2d_ms"
                    | "texture2d_ms_array"
                    | "texture_buffer"
            )
            || s.starts_with("depth2d")
            || s == "depthcube"
            || s == "sampler"
        {
            "textures are"
        } else if matches!(s, "imageblock" | "threadgroup_imageblock") {
            "imageblocks are"
        } else if matches!(
            s,
            "acceleration_structure" | "intersection_function_table" | "visible_function_table"
        ) || s.starts_with("raytracing")
        {
            "ray tracing and function tables are"
        } else if s == "indirect_command_buffer" || s == "command_buffer" {
            "indirect command buffers are"
        } else {
            continue;
        };
        return Err(Error::new(
            file,
            t.line,
            t.col,
            format!("{what} not supported {suffix} (`{s}`)"),
        ));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn entry(
    src: &str,
    file: &str,
    toks: &[Token],
    syn: &Syntax,
    graph: &CallGraph,
    layouts: &HashMap<String, (u32, u32)>,
    d: usize,
    f: &FunctionDef,
    host: String,
    tparams: &[String],
    targs: &[String],
) -> Result<EntryPoint> {
    let line = toks.get(f.name_tok).map(|t| t.line).unwrap_or(1);
    let subst: HashMap<&str, &str> = tparams
        .iter()
        .map(String::as_str)
        .zip(targs.iter().map(String::as_str))
        .collect();
    let mut params = Vec::new();
    let mut next_buffer = 0u32;
    let mut next_tg = 0u32;
    let mut used_buffers: HashMap<u32, String> = HashMap::new();
    for p in &f.params {
        let (pl, pc) = toks
            .get(p.start)
            .map(|t| (t.line, t.col))
            .unwrap_or((line, 1));
        let perr = |msg: String| Error::new(file, pl, pc, msg);
        let words: Vec<&str> = p.type_toks.iter().map(|&k| toks[k].text(src)).collect();
        let mut ty = substitute(&words, &subst);
        // `coherent(system)`: a memory-coherence qualifier, no part of the type.
        if let Some(c) = ty.iter().position(|w| w == "coherent") {
            let end = if ty.get(c + 1).map(String::as_str) == Some("(") {
                ty.iter()
                    .skip(c)
                    .position(|w| w == ")")
                    .map_or(c, |e| c + e)
            } else {
                c
            };
            ty.drain(c..=end);
        }
        let mut address_space = None;
        let mut is_const = false;
        let mut is_pointer = false;
        let mut is_reference = false;
        let mut value_words: Vec<String> = Vec::new();
        let mut k = 0;
        let tyw: Vec<&str> = ty.iter().map(String::as_str).collect();
        while k < tyw.len() {
            let w = tyw[k];
            match w {
                "device" => address_space = Some(AddressSpace::Device),
                "constant" => {
                    address_space = Some(AddressSpace::Constant);
                    is_const = true;
                }
                "threadgroup" => address_space = Some(AddressSpace::Threadgroup),
                "thread" => address_space = Some(AddressSpace::Thread),
                "const" if !is_pointer => is_const = true,
                "const" | "volatile" | "restrict" | "__restrict" | "struct" => {}
                "*" => is_pointer = true,
                // `constant T name[N]`: an array parameter is a pointer.
                "[" => {
                    is_pointer = true;
                    break;
                }
                "&" | "&&" => is_reference = true,
                "metal" if tyw.get(k + 1) == Some(&"::") => k += 1,
                _ if !is_pointer && !is_reference => value_words.push(w.to_string()),
                _ => {}
            }
            k += 1;
        }
        let vw: Vec<&str> = value_words.iter().map(String::as_str).collect();
        let info = parse_type(&vw);
        let pointee = join_words(&vw);
        let size = match info {
            Some(i) => Some(i.size),
            None => layouts.get(&pointee).map(|l| l.0),
        };
        let mut buffer_attr = None;
        let mut tg_attr = None;
        let mut role = None;
        let mut gate = None;
        for a in &p.attrs {
            let arg0 = a.args.first().map(String::as_str).unwrap_or("");
            match a.name.as_str() {
                "buffer" => {
                    buffer_attr = Some(index_value(arg0, syn).ok_or_else(|| {
                        perr(format!(
                            "buffer index `{arg0}` of `{}` is not an integer constant",
                            p.name
                        ))
                    })?)
                }
                "threadgroup" => {
                    tg_attr = Some(index_value(arg0, syn).ok_or_else(|| {
                        perr(format!(
                            "threadgroup index `{arg0}` of `{}` is not an integer constant",
                            p.name
                        ))
                    })?)
                }
                "function_constant" => gate = Some(arg0.to_string()),
                "texture" | "sampler" => {
                    return Err(perr(format!(
                        "textures are not supported by ingot (parameter `{}`)",
                        p.name
                    )))
                }
                "maybe_unused" => {}
                other => match BuiltinRole::from_name(other) {
                    Some(r) => role = Some(r),
                    None => {
                        return Err(perr(format!(
                            "parameter attribute `{other}` of `{}` is not supported",
                            p.name
                        )))
                    }
                },
            }
        }
        let kind = if role.is_some() {
            ParamKind::Builtin
        } else if address_space == Some(AddressSpace::Threadgroup) || tg_attr.is_some() {
            ParamKind::Threadgroup
        } else if is_pointer || (is_reference && !is_const) {
            ParamKind::Buffer
        } else {
            ParamKind::Bytes
        };
        let mut buffer_index = None;
        let mut threadgroup_index = None;
        match kind {
            ParamKind::Buffer | ParamKind::Bytes => {
                let idx = buffer_attr.unwrap_or(next_buffer);
                next_buffer = next_buffer.max(idx.saturating_add(1));
                if let Some(other) = used_buffers.insert(idx, p.name.clone()) {
                    return Err(perr(format!(
                        "buffer index {idx} of `{}` is already used by `{other}`",
                        p.name
                    )));
                }
                buffer_index = Some(idx);
            }
            ParamKind::Threadgroup => {
                if !is_pointer {
                    return Err(perr(format!(
                        "threadgroup parameter `{}` must be a pointer (`threadgroup T* {} [[threadgroup(n)]]`)",
                        p.name, p.name
                    )));
                }
                let idx = tg_attr.unwrap_or(next_tg);
                next_tg = next_tg.max(idx.saturating_add(1));
                if idx >= 8 {
                    return Err(perr(format!(
                        "threadgroup index {idx} of `{}` is above 7",
                        p.name
                    )));
                }
                threadgroup_index = Some(idx);
            }
            ParamKind::Builtin => {}
        }
        if p.name.is_empty() {
            return Err(perr("kernel parameters must be named".to_string()));
        }
        params.push(Param {
            name: p.name.clone(),
            kind,
            buffer_index,
            threadgroup_index,
            address_space,
            ty: join_words(&tyw),
            pointee,
            is_const,
            is_pointer,
            is_reference,
            info,
            size,
            role,
            gate,
            active: true,
            abi_slot: None,
            line: pl,
            type_toks: p.type_toks.clone(),
        });
    }
    // Roots: the template arguments and every name in the declaration (default template
    // arguments, functor parameter types) besides the body.
    let mut roots: Vec<String> = targs.to_vec();
    roots.extend(
        (f.decl_start..f.body_open)
            .filter_map(|k| toks.get(k))
            .filter(|t| t.kind == TokenKind::Ident)
            .map(|t| t.text(src).to_string()),
    );
    let mut features = graph.features(f, &roots);
    if params.iter().any(|p| p.kind == ParamKind::Threadgroup) {
        features.dynamic_threadgroup_memory = true;
        features.threadgroup_memory = true;
    }
    if params.iter().any(|p| p.info.is_some_and(|i| i.atomic)) {
        features.atomics = true;
    }
    let max_total_threads_per_threadgroup = f
        .attrs
        .iter()
        .find(|a| a.name == "max_total_threads_per_threadgroup")
        .and_then(|a| a.args.first())
        .and_then(|a| index_value(a, syn));
    let min_threadgroups_per_core = f
        .attrs
        .iter()
        .find(|a| a.name == "ingot::min_threadgroups_per_core")
        .and_then(|a| a.args.first())
        .and_then(|a| index_value(a, syn))
        .filter(|&n| n > 0);
    let mut e = EntryPoint {
        name: host,
        function: f.name.clone(),
        template_args: targs.to_vec(),
        file: file.to_string(),
        line,
        params,
        abi: Vec::new(),
        max_total_threads_per_threadgroup,
        min_threadgroups_per_core,
        features,
        def: d,
    };
    assign_abi(&mut e);
    Ok(e)
}

/// Size and alignment of the file's plain structs (fields of known types only; no bases,
/// no bit-fields, no `alignas`), by name.
pub(crate) fn struct_layouts(
    src: &str,
    toks: &[Token],
    syn: &Syntax,
) -> HashMap<String, (u32, u32)> {
    let mut out: HashMap<String, (u32, u32)> = HashMap::new();
    // Structs may use structs defined before them: repeat until nothing changes.
    for _ in 0..8 {
        let mut changed = false;
        for (name, bodies) in &syn.classes {
            if out.contains_key(name) || bodies.len() != 1 || name.is_empty() {
                continue;
            }
            if let Some(l) = layout_of(src, toks, bodies[0], &out) {
                out.insert(name.clone(), l);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    out
}

fn layout_of(
    src: &str,
    toks: &[Token],
    (open, close): (usize, usize),
    known: &HashMap<String, (u32, u32)>,
) -> Option<(u32, u32)> {
    let txt = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    // A base class (`struct A : B {`) or a template: unknown.
    let mut k = open;
    while k > 0 {
        k -= 1;
        match txt(k) {
            ":" => return None,
            "struct" | "class" | "union" => {
                if txt(k) == "union" || (k > 0 && txt(k - 1) == ">") {
                    return None;
                }
                break;
            }
            _ => {}
        }
    }
    let (mut offset, mut align) = (0u32, 1u32);
    let mut start = open + 1;
    let mut i = open + 1;
    // Index of the token closing the bracket at `j`, within the body.
    let skip_balanced = |j: usize| -> usize {
        let (o, c) = if txt(j) == "(" {
            ("(", ")")
        } else {
            ("{", "}")
        };
        let mut depth = 0;
        for k in j..close {
            if txt(k) == o {
                depth += 1;
            } else if txt(k) == c {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
        }
        close
    };
    while i < close {
        match txt(i) {
            // Member functions (and constructors): skip their declaration or definition.
            "(" => {
                let mut k = skip_balanced(i) + 1;
                while k < close && !matches!(txt(k), ";" | "{") {
                    k += 1;
                }
                if txt(k) == "{" {
                    k = skip_balanced(k);
                }
                i = k + 1;
                start = i;
                continue;
            }
            // Static members and type aliases take no room.
            "static" | "using" | "typedef" | "friend" => {
                while i < close && txt(i) != ";" {
                    i += 1;
                }
                i += 1;
                start = i;
                continue;
            }
            "{" | "alignas" | ":" | "template" | "enum" | "struct" | "union" | "class" => {
                return None;
            }
            ";" => {
                if i > start {
                    let (_, fields) = field_layout(src, toks, start, i, known)?;
                    for (size, count) in fields {
                        offset = offset.checked_add(align_pad(offset, size.1))?;
                        offset = offset.checked_add(size.0.checked_mul(count)?)?;
                        align = align.max(size.1);
                    }
                }
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < close {
        return None;
    }
    let total = offset.checked_add(align_pad(offset, align))?;
    Some((total, align))
}

fn align_pad(offset: u32, align: u32) -> u32 {
    let a = align.max(1);
    (a - offset % a) % a
}

/// One field statement `T a, b[4];`: ((size, align) of T, [(layout, element count)]).
#[allow(clippy::type_complexity)]
fn field_layout(
    src: &str,
    toks: &[Token],
    a: usize,
    b: usize,
    known: &HashMap<String, (u32, u32)>,
) -> Option<((u32, u32), Vec<((u32, u32), u32)>)> {
    let words: Vec<&str> = (a..b).map(|k| toks[k].text(src)).collect();
    let mut decls: Vec<&[&str]> = words.split(|w| *w == ",").collect();
    let first = decls.first_mut()?;
    // The first declarator's name: the last identifier before `[` (or the end).
    let end = first.iter().position(|w| *w == "[").unwrap_or(first.len());
    if end < 2 {
        return None;
    }
    let ty_words: Vec<&str> = first[..end - 1]
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "const" | "volatile" | "device" | "constant" | "thread"))
        .collect();
    let ty_words: Vec<&str> = match ty_words.as_slice() {
        ["metal", "::", rest @ ..] => rest.to_vec(),
        _ => ty_words,
    };
    let is_ptr = ty_words.last() == Some(&"*");
    let layout = if is_ptr {
        (8, 8)
    } else if let Some(t) = parse_type(&ty_words) {
        (t.size, t.align)
    } else {
        *known.get(&join_words(&ty_words))?
    };
    let first_decl: &[&str] = &first[end - 1..];
    let mut out = Vec::new();
    for (n, d) in decls.iter().enumerate() {
        let d: &[&str] = if n == 0 { first_decl } else { d };
        let mut count = 1u32;
        let mut k = 1;
        if d.first()
            .is_none_or(|w| !w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        {
            return None;
        }
        while k < d.len() {
            match (d.get(k), d.get(k + 1), d.get(k + 2)) {
                (Some(&"["), Some(n), Some(&"]")) => {
                    count = count.checked_mul(parse_int(n)?)?;
                    k += 3;
                }
                _ => return None,
            }
        }
        out.push((layout, count));
    }
    Some((layout, out))
}

/// Recomputes `abi` and `abi_slot` from the active buffer and bytes parameters.
pub(crate) fn assign_abi(e: &mut EntryPoint) {
    let mut slots: Vec<usize> = (0..e.params.len())
        .filter(|&i| {
            let p = &e.params[i];
            p.active && matches!(p.kind, ParamKind::Buffer | ParamKind::Bytes)
        })
        .collect();
    slots.sort_by_key(|&i| e.params[i].buffer_index.unwrap_or(u32::MAX));
    for p in &mut e.params {
        p.abi_slot = None;
    }
    for (slot, &i) in slots.iter().enumerate() {
        e.params[i].abi_slot = Some(slot);
    }
    e.abi = slots;
}

/// An index attribute argument: an integer literal, or a macro / program constant naming one.
fn index_value(arg: &str, syn: &Syntax) -> Option<u32> {
    if let Some(v) = parse_int(arg) {
        return Some(v);
    }
    if let Some(body) = syn.macros.get(arg.trim()) {
        return parse_int(body.trim().trim_start_matches('(').trim_end_matches(')'));
    }
    // A constant expression (macros are already expanded: `BLOCK / 64` arrives as `128/64`).
    crate::preprocess::eval_int(arg)
        .filter(|v| *v >= 0)
        .and_then(|v| u32::try_from(v).ok())
}

fn substitute(words: &[&str], subst: &HashMap<&str, &str>) -> Vec<String> {
    words
        .iter()
        .map(|w| {
            subst
                .get(w)
                .map(|s| s.to_string())
                .unwrap_or_else(|| w.to_string())
        })
        .collect()
}

/// Joins words with a space only between two word-like ones.
pub(crate) fn join_words(words: &[&str]) -> String {
    let mut out = String::new();
    let mut prev_word = false;
    for w in words {
        let word = w
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        if word && prev_word {
            out.push(' ');
        }
        out.push_str(w);
        prev_word = w
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    }
    out
}

/// True when the `threadgroup` token at `i` starts a variable declaration in a function body
/// (not a pointer or reference, not a cast or template argument).
pub(crate) fn is_threadgroup_var_decl(src: &str, toks: &[Token], ctx: &[Ctx], i: usize) -> bool {
    if ctx.get(i) != Some(&Ctx::Body) {
        return false;
    }
    let prev_ok = match i.checked_sub(1).and_then(|p| toks.get(p)) {
        None => true,
        Some(p) => {
            matches!(p.kind, TokenKind::Preprocessor | TokenKind::AttrClose)
                || matches!(p.text(src), ";" | "{" | "}" | ":" | "static")
        }
    };
    if !prev_ok {
        return false;
    }
    let mut depth = 0i32;
    for t in toks.iter().skip(i + 1) {
        match t.text(src) {
            "<" | "(" => depth += 1,
            ">" | ")" => depth -= 1,
            "*" | "&" | "&&" if depth == 0 => return false,
            ";" | "=" | "," | "[" | "{" if depth == 0 => return true,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    false
}

/// Names of the file's functions, classes and macros (kernels aside) that reach a barrier, a
/// SIMD-group or quad-group function or `simdgroup_matrix`: the CPU's work-item loop former
/// does not look into helpers.
pub(crate) fn collective_helpers(src: &str, toks: &[Token], syn: &Syntax) -> HashSet<String> {
    let graph = CallGraph::new(src, toks, syn);
    let mut out = HashSet::new();
    let kernels: HashSet<&str> = syn
        .functions
        .iter()
        .filter(|f| f.kernel_tok.is_some())
        .map(|f| f.name.as_str())
        .collect();
    for name in graph.nodes.keys() {
        if kernels.contains(name.as_str()) {
            continue;
        }
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack = vec![name.as_str()];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = graph.nodes.get(n) {
                let f = &node.feats;
                if f.barriers || f.simdgroup || f.quad || f.simdgroup_matrix {
                    out.insert(name.clone());
                    break;
                }
                for r in &node.refs {
                    if graph.nodes.contains_key(r.as_str()) {
                        stack.push(r.as_str());
                    }
                }
            }
        }
    }
    out
}

/// Of `helpers` ([`collective_helpers`]), the names whose calls a work-item loop statement can
/// replay (one deposit pass per SIMD-group exchange the call makes): functions that reach no
/// barrier or `simdgroup_matrix`, take every parameter by value, and only compute (see
/// [`crate::purity::body_is_pure`]), as everything they reach; and classes whose members that
/// reach SIMD-group functions are such functions (so `Sum<float>` may be a template argument and
/// `op.simd_reduce(x)` replays). A call operator never replays (its calls are not seen by name).
pub(crate) fn replay_helpers(
    src: &str,
    toks: &[Token],
    syn: &Syntax,
    helpers: &HashSet<String>,
) -> HashSet<String> {
    let graph = CallGraph::new(src, toks, syn);
    // Per function definition: does it only compute?
    let pure_def = |src: &str, toks: &[Token], f: &FunctionDef| -> bool {
        let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
        if f.kernel_tok.is_some() {
            return false;
        }
        let mut locals: Vec<String> = Vec::new();
        // `operator()(a, b)`: the syntax reads the first `()` as the parameters.
        if f.name == "operator" && text(f.name_tok + 1) == "(" && text(f.name_tok + 2) == ")" {
            let open = f.name_tok + 3;
            if text(open) != "(" {
                return false;
            }
            let mut depth = 0i32;
            let mut last: Option<&str> = None;
            let mut in_default = false;
            for k in open..f.body_open {
                let t = text(k);
                match t {
                    "(" | "<" | "[" | "{" => depth += 1,
                    ")" | ">" | "]" | "}" => depth -= 1,
                    _ => {}
                }
                if depth == 1 && matches!(t, "*" | "&" | "&&" | "device" | "threadgroup") {
                    return false;
                }
                if depth == 2 && text(k) == "[" {
                    return false;
                }
                if (depth == 1 && t == ",") || (depth == 0 && t == ")") {
                    if let Some(n) = last.take() {
                        locals.push(n.to_string());
                    }
                    in_default = false;
                    if depth == 0 {
                        break;
                    }
                    continue;
                }
                if depth == 1 && t == "=" {
                    in_default = true;
                }
                if depth == 1
                    && !in_default
                    && toks.get(k).is_some_and(|t| t.kind == TokenKind::Ident)
                {
                    last = Some(t);
                }
            }
        }
        for p in &f.params {
            if p.type_toks
                .iter()
                .any(|&k| matches!(text(k), "*" | "&" | "&&" | "[" | "device" | "threadgroup"))
            {
                return false;
            }
            if let Some(n) = p.name_tok {
                if text(n + 1) == "[" {
                    return false;
                }
            }
            locals.push(p.name.clone());
        }
        locals.extend(crate::purity::declared_names(
            src,
            toks,
            f.body_open,
            f.body_close,
        ));
        crate::purity::body_is_pure(src, toks, f.body_open, f.body_close + 1, &locals)
    };
    // Names every definition of which is pure (classes: by their member functions).
    let mut impure: HashSet<String> = HashSet::new();
    let mut defined: HashSet<String> = HashSet::new();
    // Operators by their symbol: a body names `operator` for `operator()(a, b)`, and an impure
    // `operator+=` elsewhere says nothing of the call operators.
    let key = |src: &str, toks: &[Token], f: &FunctionDef| -> String {
        if f.name.starts_with("operator") {
            let next = toks.get(f.name_tok + 1).map(|t| t.text(src)).unwrap_or("");
            format!("operator{next}")
        } else {
            f.name.clone()
        }
    };
    let mut called: HashMap<String, HashSet<String>> = HashMap::new();
    for f in &syn.functions {
        let refs = called_names(src, toks, f.body_open, f.body_close);
        called
            .entry(f.name.clone())
            .or_default()
            .extend(refs.iter().cloned());
        if let Some(o) = &f.owner {
            called.entry(o.clone()).or_default().extend(refs);
        }
        defined.insert(f.name.clone());
        if !pure_def(src, toks, f) {
            impure.insert(key(src, toks, f));
            if let Some(o) = &f.owner {
                impure.insert(o.clone());
            }
        }
    }
    // Macros the preprocessor left (the prelude's) are opaque.
    for name in syn.macros.keys() {
        impure.insert(name.clone());
    }
    let replayable = |name: &str| -> bool {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack = vec![name];
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            let Some(node) = graph.nodes.get(n) else {
                continue;
            };
            let bad = if n == "operator" {
                impure.contains("operator(")
            } else {
                impure.contains(n)
            };
            if bad || node.feats.barriers || node.feats.simdgroup_matrix {
                return false;
            }
            for r in called.get(n).into_iter().flatten() {
                if graph.nodes.contains_key(r.as_str()) {
                    stack.push(r.as_str());
                }
            }
        }
        true
    };
    let mut out: HashSet<String> = helpers
        .iter()
        .chain(defined.iter().filter(|d| {
            graph
                .nodes
                .get(d.as_str())
                .is_some_and(|n| n.feats.simdgroup || n.feats.quad)
        }))
        .filter(|h| defined.contains(h.as_str()))
        .filter(|h| replayable(h))
        .cloned()
        .collect();
    // A call operator is called through its object's name, which the former cannot see.
    out.remove("operator");
    // Classes: every member reaching a SIMD-group function replays.
    for h in helpers {
        let members: Vec<&FunctionDef> = syn
            .functions
            .iter()
            .filter(|f| f.owner.as_deref() == Some(h.as_str()))
            .collect();
        if members.is_empty() {
            continue;
        }
        // What a member reaches: its own body, then the graph by name.
        let reaches = |f: &FunctionDef| -> bool {
            let own = scan(src, toks, &syn.ctx, f.body_open, f.body_close + 1);
            let mut seen: HashSet<&str> = HashSet::new();
            let mut stack: Vec<&str> = own.refs.iter().map(|r| r.as_str()).collect();
            let mut feats = own.feats;
            while let Some(n) = stack.pop() {
                if !seen.insert(n) {
                    continue;
                }
                if let Some(node) = graph.nodes.get(n) {
                    feats.merge(&node.feats);
                    stack.extend(node.refs.iter().map(|r| r.as_str()));
                }
            }
            feats.simdgroup || feats.quad || feats.barriers || feats.simdgroup_matrix
        };
        let ok = members.iter().all(|f| !reaches(f) || out.contains(&f.name));

        if ok {
            out.insert(h.clone());
        }
    }
    out
}

/// Names tokens `a..b` call or name as a type: followed by `(`, `<` or `::`, or by a name (a
/// declaration `Op op;`); not a member after `.`/`->` unless called. Variables that happen to
/// share a function's name are left out.
fn called_names(src: &str, toks: &[Token], a: usize, b: usize) -> HashSet<String> {
    let text = |i: usize| toks.get(i).map(|t| t.text(src)).unwrap_or("");
    let mut out = HashSet::new();
    for k in a..b.min(toks.len()) {
        if toks[k].kind != TokenKind::Ident {
            continue;
        }
        let next = text(k + 1);
        let strong = matches!(next, "(" | "<" | "::")
            || (toks.get(k + 1).is_some_and(|t| t.kind == TokenKind::Ident)
                && !matches!(text(k.wrapping_sub(1)), "." | "->"));
        if strong {
            out.insert(text(k).to_string());
        }
    }
    out
}

/// The per-name features and references of the file's functions, classes and macros.
struct CallGraph {
    nodes: HashMap<String, Node>,
    /// `features` results by (function, extra names): a library instantiates one template
    /// hundreds of times with the same roots.
    memo: std::cell::RefCell<HashMap<(String, Vec<String>), Features>>,
}

#[derive(Default, Clone)]
struct Node {
    feats: Features,
    refs: HashSet<String>,
}

impl CallGraph {
    fn new(src: &str, toks: &[Token], syn: &Syntax) -> CallGraph {
        let mut nodes: HashMap<String, Node> = HashMap::new();
        for f in &syn.functions {
            let node = scan(src, toks, &syn.ctx, f.body_open, f.body_close + 1);
            let mut names = vec![f.name.clone()];
            if let Some(o) = &f.owner {
                names.push(o.clone());
            }
            for n in names {
                let e = nodes.entry(n).or_default();
                e.feats.merge(&node.feats);
                e.refs.extend(node.refs.iter().cloned());
            }
        }
        for (name, body) in &syn.macros {
            if let Ok(mt) = lex(body, "", false) {
                let mt = significant(&mt);
                let ctx = vec![Ctx::Body; mt.len()];
                let node = scan(body, &mt, &ctx, 0, mt.len());
                let e = nodes.entry(name.clone()).or_default();
                e.feats.merge(&node.feats);
                e.refs.extend(node.refs);
            }
        }
        CallGraph {
            nodes,
            memo: Default::default(),
        }
    }

    /// Features of `f` and of everything reachable from its body and `extra` names
    /// (template arguments naming functor classes, names in the declaration).
    fn features(&self, f: &FunctionDef, extra: &[String]) -> Features {
        let key = (f.name.clone(), extra.to_vec());
        if let Some(hit) = self.memo.borrow().get(&key) {
            return *hit;
        }
        let out = self.features_uncached(f, extra);
        self.memo.borrow_mut().insert(key, out);
        out
    }

    fn features_uncached(&self, f: &FunctionDef, extra: &[String]) -> Features {
        let mut out = Features::default();
        let mut seen: HashSet<&str> = HashSet::new();
        let mut stack: Vec<&str> = vec![f.name.as_str()];
        for a in extra {
            for w in a.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
                if !w.is_empty() {
                    stack.push(w);
                }
            }
        }
        // Static declarations are counted once per function name.
        while let Some(n) = stack.pop() {
            if !seen.insert(n) {
                continue;
            }
            if let Some(node) = self.nodes.get(n) {
                out.merge(&node.feats);
                for r in &node.refs {
                    if self.nodes.contains_key(r.as_str()) && !seen.contains(r.as_str()) {
                        stack.push(r.as_str());
                    }
                }
            }
        }
        out
    }
}

/// Direct features and referenced identifiers of tokens `[a, b)`.
fn scan(src: &str, toks: &[Token], ctx: &[Ctx], a: usize, b: usize) -> Node {
    let mut n = Node::default();
    for i in a..b.min(toks.len()) {
        let t = &toks[i];
        if t.kind != TokenKind::Ident {
            continue;
        }
        let s = t.text(src);
        let called = toks.get(i + 1).is_some_and(|x| x.text(src) == "(");
        match s {
            "threadgroup_barrier" | "simdgroup_barrier" | "barrier" => n.feats.barriers = true,
            "threadgroup" => {
                n.feats.threadgroup_memory = true;
                if is_threadgroup_var_decl(src, toks, ctx, i) {
                    n.feats.static_threadgroup_decls += 1;
                }
            }
            _ if s.starts_with("simdgroup_") => {
                n.feats.simdgroup_matrix = true;
                n.feats.simdgroup = true;
            }
            _ if s.starts_with("simd_") && (called || !is_simd_vector_type(s)) => {
                n.feats.simdgroup = true
            }
            _ if s.starts_with("quad_") && called => n.feats.quad = true,
            _ if s.starts_with("atomic") => n.feats.atomics = true,
            _ => {}
        }
        n.refs.insert(s.to_string());
    }
    n
}

/// `simd_float4` and friends from `<simd/simd.h>` are vector types, not SIMD-group functions.
fn is_simd_vector_type(s: &str) -> bool {
    let rest = s.trim_start_matches("simd_").trim_start_matches("packed_");
    let base = rest.trim_end_matches(|c: char| c.is_ascii_digit() || c == 'x');
    matches!(
        base,
        "float"
            | "half"
            | "int"
            | "uint"
            | "short"
            | "ushort"
            | "char"
            | "uchar"
            | "long"
            | "ulong"
            | "double"
            | "bool"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ScalarKind;

    const ADD: &str = r#"
#include <metal_stdlib>
using namespace metal;
struct Params { uint n; float alpha; };
kernel void saxpy(device const float* x [[buffer(0)]],
                  device float* y,
                  constant Params& p [[buffer(3)]],
                  constant float& beta,
                  uint3 gid [[thread_position_in_grid]],
                  ushort lane [[thread_index_in_simdgroup]]) {
    if (gid.x < p.n) y[gid.x] += p.alpha * x[gid.x] + beta;
}
"#;

    #[test]
    fn plain_kernel_parameters() {
        let m = reflect(ADD).unwrap();
        assert_eq!(m.entry_points.len(), 1);
        let e = &m.entry_points[0];
        assert_eq!(e.name, "saxpy");
        assert_eq!(e.line, 5);
        let p = &e.params;
        assert_eq!(p[0].kind, ParamKind::Buffer);
        assert_eq!(p[0].buffer_index, Some(0));
        assert!(p[0].is_const);
        assert_eq!(p[0].pointee, "float");
        assert_eq!(p[0].address_space, Some(AddressSpace::Device));
        assert_eq!(p[1].buffer_index, Some(1));
        assert!(!p[1].is_const);
        assert_eq!(p[2].kind, ParamKind::Bytes);
        assert_eq!(p[2].buffer_index, Some(3));
        assert_eq!(p[2].pointee, "Params");
        assert!(p[2].info.is_none());
        assert_eq!(p[2].size, Some(8));
        assert_eq!(p[3].size, Some(4));
        assert_eq!(p[3].buffer_index, Some(4));
        assert_eq!(p[3].info.unwrap().scalar, ScalarKind::F32);
        assert_eq!(p[4].kind, ParamKind::Builtin);
        assert_eq!(p[4].role, Some(BuiltinRole::ThreadPositionInGrid));
        assert_eq!(p[4].info.unwrap().lanes, 3);
        assert_eq!(p[5].role, Some(BuiltinRole::ThreadIndexInSimdgroup));
        assert_eq!(p[5].info.unwrap().scalar, ScalarKind::U16);
        assert_eq!(e.abi, [0, 1, 2, 3]);
        assert!(!e.features.needs_fibers());
    }

    #[test]
    fn struct_sizes_follow_msl_layout() {
        let src = "typedef struct { int32_t a; uint64_t b; float c; } T;\nkernel void t(constant T& t) {}\n";
        assert_eq!(
            reflect(src).unwrap().entry_points[0].params[0].size,
            Some(24)
        );
        let src = "struct A { float3 v; half h; };\nstruct B { A a[2]; packed_float3 p; char c; };\nstruct C : A { int x; };\nstruct D { float f() { return 0; } static constant int N = 2; float g; D() thread {} };\n\
                   kernel void k(constant A& a, constant B& b, constant C& c, constant D& d) {}";
        let m = reflect(src).unwrap();
        let p = &m.entry_points[0].params;
        assert_eq!(p[0].size, Some(32));
        assert_eq!(p[1].size, Some(80));
        assert_eq!(p[2].size, None);
        assert_eq!(
            p[3].size,
            Some(4),
            "methods and static members take no room"
        );
    }

    #[test]
    fn templates_and_instantiations() {
        let src = r#"
template <typename T>
[[kernel]] void add(device const T* a, device const T* b, device T* c,
                    uint i [[thread_position_in_grid]]) { c[i] = a[i] + b[i]; }
template [[host_name("add_f32")]] [[kernel]] decltype(add<float>) add<float>;
template [[host_name("add_f16")]] [[kernel]] decltype(add<half>) add<half>;
"#;
        let m = reflect(src).unwrap();
        assert_eq!(m.entry_points.len(), 2);
        let e = m.entry("add_f16").unwrap();
        assert_eq!(e.function, "add");
        assert_eq!(e.template_args, ["half"]);
        assert_eq!(e.params[2].pointee, "half");
        assert_eq!(e.params[2].ty, "device half*");
        assert_eq!(e.params[2].info.unwrap().size, 2);
        assert_eq!(e.params[3].role, Some(BuiltinRole::ThreadPositionInGrid));
        assert_eq!(e.line, 3);
    }

    #[test]
    fn gates_features_and_constants() {
        let src = r#"
constant bool has_bias [[function_constant(0)]];
float helper(float x) { threadgroup_barrier(mem_flags::mem_threadgroup); return x; }
float outer(float x) { return helper(x); }
[[kernel, max_total_threads_per_threadgroup(256)]]
void k(device float* out [[buffer(0)]],
       device const float* bias [[buffer(1), function_constant(has_bias)]],
       threadgroup float* scratch [[threadgroup(0)]],
       uint tid [[thread_index_in_threadgroup]]) {
    threadgroup float tile[64];
    threadgroup atomic_uint counter;
    out[tid] = outer(simd_sum(1.0f));
}
"#;
        let m = reflect(src).unwrap();
        assert_eq!(m.function_constants[0].name, "has_bias");
        assert_eq!(m.function_constants[0].index, Some(0));
        let e = &m.entry_points[0];
        assert_eq!(e.max_total_threads_per_threadgroup, Some(256));
        assert_eq!(e.min_threadgroups_per_core, None);
        assert_eq!(e.params[1].gate.as_deref(), Some("has_bias"));
        assert_eq!(e.params[2].kind, ParamKind::Threadgroup);
        assert_eq!(e.params[2].threadgroup_index, Some(0));
        let f = e.features;
        assert!(f.barriers, "barrier found through two calls");
        assert!(f.simdgroup);
        assert!(f.atomics);
        assert!(f.dynamic_threadgroup_memory);
        assert_eq!(f.static_threadgroup_decls, 2);
        assert!(f.needs_fibers());
    }

    #[test]
    fn default_template_arguments_reach_features() {
        let src = "struct Red { float operator()(float x) { return simd_sum(x); } };\n\
                   template <typename T, typename Op = Red> kernel void k(device T* a, uint i [[thread_position_in_grid]]) { a[i] = Op()(a[i]); }\n\
                   template [[host_name(\"k_f\")]] [[kernel]] decltype(k<float>) k<float>;\n";
        let m = reflect(src).unwrap();
        assert!(m.entry_points[0].features.simdgroup);
    }

    #[test]
    fn errors() {
        let e = reflect("kernel void f(texture2d<float> t [[texture(0)]]) {}").unwrap_err();
        assert_eq!((e.line, e.column), (1, 15));
        assert!(e.message.contains("textures are not supported"));
        let e = reflect(
            "kernel void f(device float* a [[buffer(1)]],\n device float* b [[buffer(1)]]) {}",
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("already used"));
        let e = reflect("kernel void f(float4 p [[stage_in]]) {}").unwrap_err();
        assert!(e.message.contains("stage_in"));
        let e = reflect("template [[host_name(\"x\")]] [[kernel]] decltype(g<float>) g<float>;")
            .unwrap_err();
        assert!(e.message.contains("not a kernel template"));
    }
}
