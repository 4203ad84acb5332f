//! MSL kernels on Metal: the user's source compiled natively (`newLibraryWithSource`), a
//! pipeline cache keyed by source, function name and function-constant values, argument binding
//! at the reflected buffer indices, and `dispatchThreads` / `dispatchThreadgroups` encoded into the
//! device's batched command buffer.
//!
//! Reflection (which parameter takes which argument, function constants applied) comes from
//! ingot-msl, exactly as on the CUDA and CPU backends, so argument checking is the same
//! everywhere; Metal only compiles and runs.
//!
//! Compile options: precise math by default (`fastMathEnabled = NO`, and on macOS 15 or later
//! `mathMode = MTLMathModeSafe` and `mathFloatingPointFunctions = Precise`); `math_mode="fast"`
//! selects Metal's fast math. The MSL language version is the newest the OS supports unless
//! `INGOT_METAL_LANGUAGE_VERSION` (`"3.1"`, `"2.4"`...) names one. `#include "file"` is resolved
//! against `include_dirs` by inlining the file (Metal's runtime compiler has no include path).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::c_void;
use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex};

use objc2::rc::{autoreleasepool, Retained};
use objc2::runtime::{NSObjectProtocol, ProtocolObject};
use objc2::sel;
use objc2_foundation::NSString;
use objc2_metal::{
    MTLBlitCommandEncoder, MTLBuffer, MTLCompileOptions, MTLComputeCommandEncoder,
    MTLComputePipelineState, MTLDataType, MTLDevice, MTLFunction, MTLFunctionConstantValues,
    MTLLanguageVersion, MTLLibrary, MTLMathFloatingPointFunctions, MTLMathMode, MTLSize,
};

use super::context::MetalInner;
use super::memory::MetalMemory;
use crate::cache;
use crate::device::Device;
use crate::dtype::{DType, Scalar};
use crate::error::{Error, Result};
use crate::runtime::kernel::{
    merged_constants, stats, translation_error, BoundArg, CompileOptions, CompiledEntry,
    CompiledFunction, CompiledLibrary, Constants, KernelBackend, LaunchParams, MathMode,
};
use crate::runtime::memory::Buffer;
use ingot_msl::{AddressSpace, ScalarKind};

type MtlLibrary = Retained<ProtocolObject<dyn MTLLibrary>>;
type MtlPipeline = Retained<ProtocolObject<dyn MTLComputePipelineState>>;
type Pipelines = Arc<Mutex<HashMap<String, Arc<MetalFunction>>>>;
type Libraries = Arc<Mutex<HashMap<String, MtlLibrary>>>;

/// The largest `setBytes` Metal accepts; bigger bytes arguments go through a buffer.
const MAX_SET_BYTES: usize = 4096;
/// macOS requires offsets into buffers bound to `constant` address-space parameters to be
/// multiples of 256 bytes.
const CONSTANT_OFFSET_ALIGN: usize = 256;

/// The kernel engine of one Metal device.
pub struct MetalKernels {
    inner: Arc<MetalInner>,
    /// Compiled `MTLLibrary`s by source key (source, math mode, language version).
    libraries: Libraries,
    /// Pipelines by (source key, function name, function-constant values).
    pipelines: Pipelines,
}

impl MetalKernels {
    /// The engine for the device behind `inner`.
    pub fn new(inner: Arc<MetalInner>) -> MetalKernels {
        MetalKernels {
            inner,
            libraries: Arc::new(Mutex::new(HashMap::new())),
            pipelines: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Number of distinct compute pipelines created so far (one per source, function and
    /// function-constant values).
    pub fn pipeline_count(&self) -> usize {
        self.pipelines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }

    /// Number of distinct Metal libraries compiled so far.
    pub fn library_count(&self) -> usize {
        self.libraries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len()
    }
}

/// A library: the reflection with the library's function constants applied; the
/// `MTLLibrary` is compiled when its first function is asked for, and each function (per
/// function-constant values) becomes a pipeline then.
pub struct MetalLibrary {
    inner: Arc<MetalInner>,
    /// The user's source (for reflections with other constants).
    source: String,
    /// The source with `include_dirs` headers inlined (what Metal compiles).
    text: String,
    options: CompileOptions,
    source_key: String,
    reflection: ingot_msl::Module,
    /// Reflections by function-constant values (other than the library's).
    reflections: Mutex<HashMap<String, ingot_msl::Module>>,
    file: String,
    libraries: Libraries,
    pipelines: Pipelines,
    /// The pipeline keys this library built or found.
    built: Mutex<HashSet<String>>,
}

/// Where one ABI slot binds.
#[derive(Clone, Copy, Debug)]
struct Slot {
    /// `[[buffer(n)]]`.
    index: u32,
    /// A pointer into the `constant` address space (offset alignment rule).
    constant: bool,
}

/// One entry point: its compute pipeline and binding table.
pub struct MetalFunction {
    inner: Arc<MetalInner>,
    pipeline: MtlPipeline,
    name: String,
    max_threads: u32,
    slots: Vec<Slot>,
}

impl MetalFunction {
    /// The kernel's host name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `threadExecutionWidth` of the pipeline (32 on Apple GPUs).
    pub fn thread_execution_width(&self) -> usize {
        self.pipeline.threadExecutionWidth()
    }
}

fn language_version() -> Option<MTLLanguageVersion> {
    let v = std::env::var("INGOT_METAL_LANGUAGE_VERSION").ok()?;
    let (major, minor) = v.trim().split_once('.')?;
    let (major, minor) = (major.parse::<usize>().ok()?, minor.parse::<usize>().ok()?);
    Some(MTLLanguageVersion((major << 16) + minor))
}

/// Replaces `#include "name"` lines whose file is found in `dirs` with the file's text
/// (recursively, each file once), framed by `#line` directives.
fn inline_includes(
    source: &str,
    file: &str,
    dirs: &[PathBuf],
    seen: &mut HashSet<PathBuf>,
    depth: u32,
) -> Result<String> {
    if dirs.is_empty() {
        return Ok(source.to_string());
    }
    if depth > 32 {
        return Err(Error::Compile(format!(
            "{file}: #include nesting deeper than 32"
        )));
    }
    let mut out = String::with_capacity(source.len());
    for (n, line) in source.lines().enumerate() {
        let t = line.trim_start();
        let name = t
            .strip_prefix('#')
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix("include"))
            .map(str::trim)
            .and_then(|r| r.strip_prefix('"'))
            .and_then(|r| r.split_once('"'))
            .map(|(name, _)| name);
        let found = name.and_then(|name| dirs.iter().map(|d| d.join(name)).find(|p| p.is_file()));
        match found {
            Some(path) => {
                let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
                if seen.insert(canon) {
                    let text = std::fs::read_to_string(&path).map_err(|e| Error::Io {
                        context: format!("reading {}", path.display()),
                        source: e,
                    })?;
                    let shown = path.display().to_string();
                    let body = inline_includes(&text, &shown, dirs, seen, depth + 1)?;
                    out.push_str(&format!("#line 1 \"{}\"\n", escape(&shown)));
                    out.push_str(&body);
                    if !body.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&format!("#line {} \"{}\"\n", n + 2, escape(file)));
                } else {
                    out.push('\n');
                }
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    Ok(out)
}

fn escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace(['\n', '\r'], " ")
}

/// The reflection of `source` with `constants` applied (the same analysis the CUDA and CPU
/// backends use).
fn reflect(
    source: &str,
    options: &CompileOptions,
    constants: &Constants,
) -> Result<ingot_msl::Module> {
    let mut o = ingot_msl::Options::new(ingot_msl::Target::Cuda);
    o.file_name = options.file().to_string();
    o.include_dirs = options.include_dirs.clone();
    o.constants = merged_constants(&options.constants, constants);
    o.fast_math = options.math_mode == MathMode::Fast;
    o.defines = options.defines.clone();
    ingot_msl::reflect_with(source, &o)
        .or_else(|e| {
            // A construct the CUDA target rejects may still be fine for Metal: plain
            // reflection is enough when no function constant changes the parameters.
            if options.constants.is_empty() && constants.is_empty() {
                ingot_msl::reflect_named(source, options.file()).map_err(|_| e)
            } else {
                Err(e)
            }
        })
        .map_err(translation_error)
}

/// `text` preceded by one `#define` per user define, then a `#line 1` so that the Metal
/// compiler's messages keep the user's line numbers.
fn with_defines(text: String, file: &str, defines: &BTreeMap<String, String>) -> String {
    if defines.is_empty() {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 64 * defines.len());
    for (name, value) in defines {
        let value = ingot_msl::preprocess::define_body(value);
        out.push_str(&format!("#define {name} {value}\n"));
    }
    out.push_str(&format!("#line 1 \"{}\"\n", escape(file)));
    out.push_str(&text);
    out
}

fn compile_error(file: &str, e: &objc2_foundation::NSError) -> Error {
    let msg = e.localizedDescription().to_string();
    // The Metal compiler calls the source "program_source".
    let msg = msg.replace("program_source", file);
    Error::Compile(format!("{file}: Metal compilation failed:\n{msg}"))
}

impl KernelBackend for MetalKernels {
    fn device(&self) -> Device {
        Device::Metal(self.inner.index())
    }

    fn compile(&self, source: &str, options: &CompileOptions) -> Result<Arc<dyn CompiledLibrary>> {
        let reflection = reflect(source, options, &Constants::new())?;
        let file = options.file().to_string();
        let text = inline_includes(source, &file, &options.include_dirs, &mut HashSet::new(), 0)?;
        let text = with_defines(text, &file, &options.defines);
        let version = language_version();
        let source_key = cache::key(&[
            text.as_bytes(),
            options.math_mode.name().as_bytes(),
            format!("{:?}", version.map(|v| v.0)).as_bytes(),
        ]);
        Ok(Arc::new(MetalLibrary {
            inner: self.inner.clone(),
            source: source.to_string(),
            text,
            options: options.clone(),
            source_key,
            reflection,
            reflections: Mutex::new(HashMap::new()),
            file,
            libraries: self.libraries.clone(),
            pipelines: self.pipelines.clone(),
            built: Mutex::new(HashSet::new()),
        }))
    }

    fn native_msl(&self) -> bool {
        true
    }

    fn max_threads_per_threadgroup(&self) -> u32 {
        let m = self.inner.properties().max_threads_per_threadgroup;
        (m[0].clamp(1, 1024)) as u32
    }

    fn max_threadgroup_memory(&self) -> usize {
        self.inner.properties().max_threadgroup_memory
    }
}

/// The Metal data type of a function constant declared as `ty`, and the dtype of its bytes.
fn constant_type(ty: &str) -> Option<(MTLDataType, DType)> {
    Some(match ScalarKind::from_name(ty.trim())? {
        ScalarKind::Bool => (MTLDataType::Bool, DType::Bool),
        ScalarKind::I8 => (MTLDataType::Char, DType::Int8),
        ScalarKind::U8 => (MTLDataType::UChar, DType::UInt8),
        ScalarKind::I16 => (MTLDataType::Short, DType::Int16),
        ScalarKind::U16 => (MTLDataType::UShort, DType::UInt16),
        ScalarKind::I32 => (MTLDataType::Int, DType::Int32),
        ScalarKind::U32 => (MTLDataType::UInt, DType::UInt32),
        ScalarKind::I64 => (MTLDataType::Long, DType::Int64),
        ScalarKind::U64 => (MTLDataType::ULong, DType::UInt64),
        ScalarKind::F16 => (MTLDataType::Half, DType::Float16),
        ScalarKind::BF16 => (MTLDataType::BFloat, DType::BFloat16),
        ScalarKind::F32 => (MTLDataType::Float, DType::Float32),
        ScalarKind::F64 => return None,
    })
}

/// The bytes of `v` as a constant of `dtype`, refusing values the type cannot hold.
fn constant_bytes(name: &str, v: Scalar, dtype: DType) -> Result<Vec<u8>> {
    let bad = || {
        Error::Value(format!(
            "function constant `{name}`: {v:?} does not fit its type {dtype}"
        ))
    };
    if dtype.is_signed_integer() || dtype.is_unsigned_integer() {
        let (lo, hi): (i128, i128) = match dtype {
            DType::Int8 => (i8::MIN as i128, i8::MAX as i128),
            DType::Int16 => (i16::MIN as i128, i16::MAX as i128),
            DType::Int32 => (i32::MIN as i128, i32::MAX as i128),
            DType::Int64 => (i64::MIN as i128, i64::MAX as i128),
            DType::UInt8 => (0, u8::MAX as i128),
            DType::UInt16 => (0, u16::MAX as i128),
            DType::UInt32 => (0, u32::MAX as i128),
            _ => (0, u64::MAX as i128),
        };
        let x: i128 = match v {
            Scalar::Bool(b) => b as i128,
            Scalar::Int(i) => i as i128,
            Scalar::UInt(u) => u as i128,
            Scalar::Float(f) if f.fract() == 0.0 && f.abs() < 1.8e19 => f as i128,
            Scalar::Float(_) | Scalar::Complex(..) => return Err(bad()),
        };
        if x < lo || x > hi {
            return Err(bad());
        }
    }
    Ok(v.to_bytes(dtype))
}

impl MetalLibrary {
    /// The `MTLLibrary`, compiled by Metal on first use (shared by every library object of the
    /// same source).
    fn library(&self) -> Result<MtlLibrary> {
        let mut libs = self.libraries.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(l) = libs.get(&self.source_key) {
            return Ok(l.clone());
        }
        let fast = self.options.math_mode == MathMode::Fast;
        let lib = autoreleasepool(|_| {
            let opts = MTLCompileOptions::new();
            #[allow(deprecated)]
            opts.setFastMathEnabled(fast);
            if opts.respondsToSelector(sel!(setMathMode:)) {
                opts.setMathMode(if fast {
                    MTLMathMode::Fast
                } else {
                    MTLMathMode::Safe
                });
            }
            if opts.respondsToSelector(sel!(setMathFloatingPointFunctions:)) {
                opts.setMathFloatingPointFunctions(if fast {
                    MTLMathFloatingPointFunctions::Fast
                } else {
                    MTLMathFloatingPointFunctions::Precise
                });
            }
            if let Some(v) = language_version() {
                opts.setLanguageVersion(v);
            }
            let src = NSString::from_str(&self.text);
            // Shown (on an interactive stderr) while the Metal compiler runs over 2 s.
            let _progress =
                crate::progress::Progress::start(format!("compiling {} for metal", self.file));
            self.inner
                .device()
                .newLibraryWithSource_options_error(&src, Some(&opts))
                .map_err(|e| compile_error(&self.file, &e))
        })?;
        stats::record_compiled();
        libs.insert(self.source_key.clone(), lib.clone());
        Ok(lib)
    }

    /// The reflection with `constants` over the library's.
    fn reflection_for(&self, constants: &Constants, key: &str) -> Result<ingot_msl::Module> {
        if constants.is_empty() {
            return Ok(self.reflection.clone());
        }
        let mut m = self.reflections.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(r) = m.get(key) {
            return Ok(r.clone());
        }
        let r = reflect(&self.source, &self.options, constants)?;
        m.insert(key.to_string(), r.clone());
        Ok(r)
    }

    fn make_function(
        &self,
        library: &MtlLibrary,
        name: &str,
        constants: &Constants,
        reflection: &ingot_msl::Module,
    ) -> Result<Retained<ProtocolObject<dyn MTLFunction>>> {
        let ns_name = NSString::from_str(name);
        if reflection.function_constants.is_empty() {
            return library.newFunctionWithName(&ns_name).ok_or_else(|| {
                Error::Compile(format!(
                    "{}: the Metal library has no function named {name:?}",
                    self.file
                ))
            });
        }
        let values = MTLFunctionConstantValues::new();
        let merged = self.options.constants.iter().chain(constants.iter());
        for (key, v) in merged {
            let Some(c) = reflection
                .function_constants
                .iter()
                .find(|c| c.name == *key || c.index.is_some_and(|i| i.to_string() == *key))
            else {
                return Err(Error::KernelArgument(format!(
                    "{}: no function constant named `{key}`",
                    self.file
                )));
            };
            let Some((mtl_type, dtype)) = constant_type(&c.ty) else {
                return Err(Error::Unsupported(format!(
                    "function constant `{}` of type `{}` on Metal",
                    c.name, c.ty
                )));
            };
            let bytes = constant_bytes(&c.name, *v, dtype)?;
            let Some(ptr) = NonNull::new(bytes.as_ptr() as *mut c_void) else {
                continue;
            };
            // SAFETY: `bytes` holds one value of `mtl_type` (sizes agree by construction) and
            // lives across the call; Metal copies the value.
            unsafe {
                values.setConstantValue_type_withName(ptr, mtl_type, &NSString::from_str(&c.name))
            };
        }
        library
            .newFunctionWithName_constantValues_error(&ns_name, &values)
            .map_err(|e| compile_error(&format!("kernel `{name}`: {}", self.file), &e))
    }

    fn pipeline(
        &self,
        name: &str,
        constants: &Constants,
        constants_key: &str,
        reflection: &ingot_msl::Module,
    ) -> Result<Arc<MetalFunction>> {
        let key = format!("{}\0{name}\0{constants_key}", self.source_key);
        let f = self.find_or_build(&key, name, constants, reflection)?;
        self.built
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key);
        Ok(f)
    }

    fn find_or_build(
        &self,
        key: &str,
        name: &str,
        constants: &Constants,
        reflection: &ingot_msl::Module,
    ) -> Result<Arc<MetalFunction>> {
        if let Some(f) = self
            .pipelines
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return Ok(f.clone());
        }
        let entry = reflection.entry(name).ok_or_else(|| {
            Error::KernelArgument(format!("no kernel function named {name:?} in this library"))
        })?;
        let slots = entry
            .abi_params()
            .enumerate()
            .map(|(i, p)| Slot {
                index: p.buffer_index.unwrap_or(i as u32),
                constant: p.address_space == Some(AddressSpace::Constant) && p.is_pointer,
            })
            .collect();
        let library = self.library()?;
        let pipeline = autoreleasepool(|_| -> Result<MtlPipeline> {
            let function = self.make_function(&library, name, constants, reflection)?;
            self.inner
                .device()
                .newComputePipelineStateWithFunction_error(&function)
                .map_err(|e| compile_error(&self.file, &e))
        })?;
        let max_threads = pipeline.maxTotalThreadsPerThreadgroup().clamp(1, 1024) as u32;
        let f = Arc::new(MetalFunction {
            inner: self.inner.clone(),
            pipeline,
            name: name.to_string(),
            max_threads,
            slots,
        });
        let mut map = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        // Another thread may have built the same pipeline meanwhile: keep the first.
        Ok(map.entry(key.to_string()).or_insert(f).clone())
    }
}

impl CompiledLibrary for MetalLibrary {
    fn module(&self) -> &ingot_msl::Module {
        &self.reflection
    }

    fn unit(&self, names: &[String], constants: &Constants) -> Result<Vec<CompiledEntry>> {
        let constants_key = self
            .options
            .constants
            .iter()
            .chain(constants.iter())
            .map(|(k, v)| format!("{k}={v:?}"))
            .collect::<Vec<_>>()
            .join(";");
        let reflection = self.reflection_for(constants, &constants_key)?;
        names
            .iter()
            .map(|name| {
                let function: Arc<dyn CompiledFunction> =
                    self.pipeline(name, constants, &constants_key, &reflection)?;
                let entry = reflection.entry(name).cloned().ok_or_else(|| {
                    Error::KernelArgument(format!("no kernel function named {name:?}"))
                })?;
                Ok(CompiledEntry { entry, function })
            })
            .collect()
    }

    fn units(&self) -> usize {
        self.built.lock().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// One argument resolved to what the encoder binds.
enum Binding<'a> {
    Buffer(&'a ProtocolObject<dyn MTLBuffer>, usize),
    Bytes(&'a [u8]),
}

fn mtl_size(v: [u32; 3]) -> MTLSize {
    MTLSize {
        width: v[0] as usize,
        height: v[1] as usize,
        depth: v[2] as usize,
    }
}

impl MetalFunction {
    /// Resolves every argument to a Metal binding. Bytes too large for `setBytes` and
    /// constant-space buffers at a misaligned offset are staged through temporary buffers,
    /// returned in `temps` (they must live until the dispatch is encoded).
    fn resolve<'a>(
        &self,
        launch: &LaunchParams,
        args: &'a [BoundArg],
        temps: &'a mut Vec<TempBuffer>,
    ) -> Result<Vec<(u32, Binding<'a>)>> {
        let dynamic = launch_tgmem(launch);
        let fixed = self.pipeline.staticThreadgroupMemoryLength();
        let limit = self.inner.properties().max_threadgroup_memory;
        if dynamic + fixed > limit {
            return Err(Error::KernelArgument(format!(
                "kernel `{}`: {dynamic} bytes of threadgroup memory plus the kernel's {fixed} \
                 static bytes exceed the device's {limit} bytes",
                self.name
            )));
        }
        if args.len() != self.slots.len() {
            return Err(Error::KernelArgument(format!(
                "kernel `{}` takes {} buffer/bytes arguments, {} were bound",
                self.name,
                self.slots.len(),
                args.len()
            )));
        }
        // First pass: create the staging buffers (so that `temps` is not borrowed while filled).
        let mut staged: Vec<Option<usize>> = Vec::with_capacity(args.len());
        for (a, slot) in args.iter().zip(&self.slots) {
            match a {
                BoundArg::Bytes(b) if b.len() > MAX_SET_BYTES => {
                    temps.push(TempBuffer::Fresh(self.inner.buffer_with_bytes(b)?));
                    staged.push(Some(temps.len() - 1));
                }
                BoundArg::Buffer {
                    buffer,
                    offset,
                    nbytes,
                    ..
                } if slot.constant && offset % CONSTANT_OFFSET_ALIGN != 0 => {
                    let m = self.memory_of(buffer)?;
                    let tmp = MetalMemory::temp(&self.inner, *nbytes)?;
                    let (src, dst) = (m.mtl_buffer(), tmp.mtl_buffer());
                    let (off, len) = (*offset, *nbytes);
                    if len > 0 {
                        self.inner.encode_blit("argument staging copy", |blit| {
                            // SAFETY: `off..off + len` lies in the argument's buffer (checked by
                            // the kernel API's binding) and `tmp` holds at least `len` bytes.
                            unsafe {
                                blit.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size(
                                    src, off, dst, 0, len,
                                )
                            }
                        })?;
                    }
                    temps.push(TempBuffer::Pooled(tmp));
                    staged.push(Some(temps.len() - 1));
                }
                _ => staged.push(None),
            }
        }
        let temps: &'a Vec<TempBuffer> = temps;
        let mut out = Vec::with_capacity(args.len());
        for ((a, slot), st) in args.iter().zip(&self.slots).zip(staged) {
            let binding = match (st, a) {
                (Some(t), _) => Binding::Buffer(temps[t].buffer(), 0),
                (None, BoundArg::Buffer { buffer, offset, .. }) => {
                    Binding::Buffer(self.memory_of(buffer)?.mtl_buffer(), *offset)
                }
                (None, BoundArg::Bytes(b)) => Binding::Bytes(b),
            };
            out.push((slot.index, binding));
        }
        Ok(out)
    }

    fn memory_of<'b>(&self, buffer: &'b Buffer) -> Result<&'b MetalMemory> {
        match buffer.memory_as::<MetalMemory>() {
            Some(m) if Arc::ptr_eq(m.inner(), &self.inner) => Ok(m),
            _ => Err(Error::DeviceMismatch(format!(
                "kernel `{}` runs on metal:{}, an argument is on {}",
                self.name,
                self.inner.index(),
                buffer.device()
            ))),
        }
    }

    /// Records the pipeline, the arguments, the threadgroup memory and the dispatch.
    fn encode(
        &self,
        enc: &ProtocolObject<dyn MTLComputeCommandEncoder>,
        launch: &LaunchParams,
        bindings: &[(u32, Binding<'_>)],
    ) {
        enc.setComputePipelineState(&self.pipeline);
        for (index, b) in bindings {
            let index = *index as usize;
            match b {
                // SAFETY: the buffer is a live Metal buffer of this device and the offset lies
                // inside it (the kernel API checked the argument's range).
                Binding::Buffer(buf, offset) => unsafe {
                    enc.setBuffer_offset_atIndex(Some(buf), *offset, index)
                },
                Binding::Bytes(bytes) => {
                    // Metal rejects zero-length bytes; a zero-sized slot binds 16 zero bytes.
                    let zero = [0u8; 16];
                    let data: &[u8] = if bytes.is_empty() { &zero } else { bytes };
                    if let Some(ptr) = NonNull::new(data.as_ptr() as *mut c_void) {
                        // SAFETY: `data` is valid for `data.len()` (at most 4 KiB) bytes during
                        // the call; Metal copies them.
                        unsafe { enc.setBytes_length_atIndex(ptr, data.len(), index) };
                    }
                }
            }
        }
        for (i, &size) in launch.tgmem_size.iter().enumerate() {
            if size > 0 {
                // SAFETY: `size` is a multiple of 16 within the device limit (checked by the
                // kernel API) and `i` < 8 is a `[[threadgroup(i)]]` index of the kernel.
                unsafe { enc.setThreadgroupMemoryLength_atIndex(size as usize, i) };
            }
        }
        if launch.exact != 0 {
            enc.dispatchThreads_threadsPerThreadgroup(mtl_size(launch.grid), mtl_size(launch.tg));
        } else {
            enc.dispatchThreadgroups_threadsPerThreadgroup(
                mtl_size(launch.groups),
                mtl_size(launch.tg),
            );
        }
    }
}

/// A staging buffer that lives until its dispatch has been encoded.
enum TempBuffer {
    /// From the pool: queued work is ordered before any reuse.
    Pooled(MetalMemory),
    /// Fresh (holds host bytes written before encoding).
    Fresh(Retained<ProtocolObject<dyn MTLBuffer>>),
}

impl TempBuffer {
    fn buffer(&self) -> &ProtocolObject<dyn MTLBuffer> {
        match self {
            TempBuffer::Pooled(m) => m.mtl_buffer(),
            TempBuffer::Fresh(b) => b,
        }
    }
}

fn launch_tgmem(launch: &LaunchParams) -> usize {
    launch.tgmem_size.iter().map(|&s| s as usize).sum()
}

fn is_empty(launch: &LaunchParams) -> bool {
    launch.grid.contains(&0) || launch.groups.contains(&0) || launch.tg.contains(&0)
}

impl CompiledFunction for MetalFunction {
    fn max_total_threads_per_threadgroup(&self) -> u32 {
        self.max_threads
    }

    fn slot_sizes(&self) -> Option<&[u32]> {
        None
    }

    fn launch(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<()> {
        if is_empty(launch) {
            return Ok(());
        }
        let mut temps = Vec::new();
        let bindings = self.resolve(launch, args, &mut temps)?;
        self.inner
            .encode_compute(&self.name, |enc| self.encode(enc, launch, &bindings))
    }

    fn time(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<f64> {
        if is_empty(launch) {
            return Ok(0.0);
        }
        let mut temps = Vec::new();
        let bindings = self.resolve(launch, args, &mut temps)?;
        self.inner
            .time_compute(&self.name, |enc| self.encode(enc, launch, &bindings))
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_range_checked() {
        assert!(constant_bytes("n", Scalar::Int(300), DType::UInt8).is_err());
        assert!(constant_bytes("n", Scalar::Float(1.5), DType::Int32).is_err());
        assert_eq!(
            constant_bytes("n", Scalar::Int(7), DType::Int32).unwrap(),
            7i32.to_ne_bytes()
        );
        assert_eq!(constant_type("bool").map(|t| t.1), Some(DType::Bool));
        assert!(constant_type("double").is_none());
    }

    #[test]
    fn includes_are_inlined_from_the_given_dirs() {
        let dir = std::env::temp_dir().join(format!("ingot-metal-inc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("h.h"), "#define K 3\n").unwrap();
        let src = "#include \"h.h\"\n#include <metal_stdlib>\nkernel void f() {}\n";
        let out = inline_includes(
            src,
            "k.metal",
            std::slice::from_ref(&dir),
            &mut HashSet::new(),
            0,
        )
        .unwrap();
        assert!(out.contains("#define K 3"));
        assert!(out.contains("#include <metal_stdlib>"));
        assert!(out.contains("#line 2 \"k.metal\""));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
