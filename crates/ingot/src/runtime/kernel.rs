//! The contract between the device-independent kernel API and a device's kernel engine.
//!
//! Each backend (`cpu`, `cuda`, `metal`) implements [`KernelBackend`] once and hands it out
//! through [`super::Runtime::kernels`]. Everything above it — reflection, argument validation,
//! dispatch sizes — is done by `crate::kernel` before the backend sees a launch, so a backend
//! only compiles source and runs already-checked launches. The vocabulary both sides share
//! (compile options, the launch block, bound arguments) lives here, below both.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::memory::Buffer;
use crate::device::Device;
use crate::dtype::Scalar;
use crate::error::{Error, Result};

/// Floating-point semantics of a compiled library.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum MathMode {
    /// IEEE semantics: no contraction into FMA, no reassociation (the default on every backend).
    #[default]
    Precise,
    /// The compiler's fast-math mode (Metal's default; `-ffast-math` on the CPU).
    Fast,
}

impl MathMode {
    /// Parses `"precise"` or `"fast"`.
    pub fn parse(s: &str) -> Result<MathMode> {
        match s {
            "precise" => Ok(MathMode::Precise),
            "fast" => Ok(MathMode::Fast),
            _ => Err(Error::Value(format!(
                "math_mode must be 'precise' or 'fast', got {s:?}"
            ))),
        }
    }

    /// `"precise"` or `"fast"`.
    pub fn name(self) -> &'static str {
        match self {
            MathMode::Precise => "precise",
            MathMode::Fast => "fast",
        }
    }
}

/// The error of a failed MSL translation: a bad function-constant value is an argument error
/// (the caller gave it), an Apple-only construct "not supported", everything else a compile
/// error.
pub fn translation_error(e: ingot_msl::Error) -> Error {
    if e.unsupported {
        Error::Unsupported(e.to_string())
    } else if e.message.contains("function constant") {
        Error::KernelArgument(e.to_string())
    } else {
        Error::Compile(e.to_string())
    }
}

/// Function-constant values keyed by the constant's name or by its index as decimal text.
pub type Constants = BTreeMap<String, Scalar>;

/// A function-constant value as C++ (and MSL) literal text.
pub fn constant_literal(v: Scalar) -> String {
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => {
            let s = format!("{f:?}");
            if f.is_finite() && !s.contains(['.', 'e', 'E']) {
                format!("{s}.0")
            } else {
                // Not finite: not a literal; the translator rejects it naming the constant.
                s
            }
        }
        // Function constants are bool, integer or real (checked when they are given).
        Scalar::Complex(re, _) => constant_literal(Scalar::Float(re)),
    }
}

/// `constants` over the library's `base` values (a function's value wins), as C++ literals.
pub fn merged_constants(base: &Constants, constants: &Constants) -> BTreeMap<String, String> {
    base.iter()
        .chain(constants.iter())
        .map(|(k, v)| (k.clone(), constant_literal(*v)))
        .collect()
}

/// Applies `ingot_msl::sandbox` (no assembly, `extern`, host headers or host functions).
pub fn sandbox(source: &str, options: &CompileOptions, target: ingot_msl::Target) -> Result<()> {
    let headers: Vec<&str> = ingot_msl::prelude_files(target)
        .iter()
        .map(|(n, _)| *n)
        .collect();
    ingot_msl::sandbox::check_with_defines(
        source,
        options.file(),
        &options.include_dirs,
        &headers,
        &options.defines,
    )
    .map_err(translation_error)
}

/// Whether the CPU engine forms work-item loops for kernels with barriers and SIMD-group
/// functions (the default) or runs them with fibers (`INGOT_CPU_ENGINE=fibers`).
pub fn cpu_work_items() -> bool {
    std::env::var("INGOT_CPU_ENGINE").map_or(true, |v| v.trim() != "fibers")
}

/// Everything a backend needs to compile a library.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// Function-constant values keyed by the constant's name or by its index as decimal text,
    /// given when the library is compiled (the older form; values given when a function is
    /// obtained are merged over these).
    pub constants: Constants,
    /// Precise (default) or fast math.
    pub math_mode: MathMode,
    /// Extra directories searched by `#include "..."` in the user's source.
    pub include_dirs: Vec<std::path::PathBuf>,
    /// The file name errors refer to (`<source>` when empty).
    pub file_name: String,
    /// Checked mode: every access through a `device`/`constant`/`threadgroup` pointer is
    /// bounds-checked against the bound buffer, and a violation is [`Error::KernelFault`].
    pub checked: bool,
    /// Macros defined before the source, like a compiler's `-D NAME=VALUE` (an empty value
    /// defines `1`).
    pub defines: BTreeMap<String, String>,
    /// The source is generated by ingot (`ingot.fuse`): every buffer index in it is the
    /// generator's, in bounds by construction, so the CPU engine gives the kernel small arrays'
    /// memory directly instead of guarded scratch copies (a third of a small warm call).
    /// Users' sources never set it.
    pub generated: bool,
}

impl CompileOptions {
    /// The file name for messages and `#line` directives.
    pub fn file(&self) -> &str {
        if self.file_name.is_empty() {
            "<source>"
        } else {
            &self.file_name
        }
    }
}

/// The launch block passed to every kernel (C++ `ingot::launch` of `ingot-msl/ABI.md`).
///
/// The layout is part of the ABI: 35 `u32`s, in this order.
#[repr(C)]
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct LaunchParams {
    /// `threads_per_grid` (for a dispatch in groups: groups * threadgroup size).
    pub grid: [u32; 3],
    /// `dispatch_threads_per_threadgroup`: the nominal threadgroup size.
    pub tg: [u32; 3],
    /// `threadgroups_per_grid`.
    pub groups: [u32; 3],
    /// Group coordinate of this region's first group (CUDA regions; 0 on the CPU).
    pub origin: [u32; 3],
    /// Groups in this region (CUDA regions; `groups` on the CPU).
    pub region: [u32; 3],
    /// Threads per group in this region (CUDA regions; `tg` on the CPU).
    pub block: [u32; 3],
    /// 1 for a dispatch in threads (positions `>= grid` do not run); the CUDA backend adds
    /// bit 1 to its linear regions (`runtime::cuda::kernel::LAUNCH_LINEAR`).
    pub exact: u32,
    /// Byte offset of `[[threadgroup(n)]]` in the group's dynamic threadgroup memory.
    pub tgmem_offset: [u32; 8],
    /// Byte length of `[[threadgroup(n)]]` (a multiple of 16).
    pub tgmem_size: [u32; 8],
}

const _: () = assert!(std::mem::size_of::<LaunchParams>() == 35 * 4);

impl LaunchParams {
    /// Number of threadgroups in the whole dispatch.
    pub fn total_groups(&self) -> u64 {
        self.groups.iter().map(|&g| g as u64).product()
    }

    /// Total dynamic threadgroup memory of one group, in bytes.
    pub fn tgmem_total(&self) -> usize {
        self.tgmem_size.iter().map(|&s| s as usize).sum()
    }
}

/// One argument, validated and ready for the device: one per ABI slot, in slot order.
#[derive(Clone, Debug)]
pub enum BoundArg {
    /// A buffer slot: the memory, the byte offset of the first element, the bytes the array
    /// covers from there, and whether the kernel may write it.
    Buffer {
        /// The device memory.
        buffer: Arc<Buffer>,
        /// Byte offset of the array's first element in `buffer`.
        offset: usize,
        /// Bytes from `offset` that belong to the argument.
        nbytes: usize,
        /// True for a writable (non-const `device`) parameter.
        writable: bool,
    },
    /// A bytes slot (`constant T&`): the value's bytes with the kernel's layout of `T`
    /// (shared: a prepared launch reuses its bound scalars on every call).
    Bytes(Arc<[u8]>),
}

/// A device's kernel engine.
pub trait KernelBackend: Send + Sync {
    /// The device it runs on.
    fn device(&self) -> Device;

    /// Prepares MSL `source`: reflects every entry point but compiles none. Each entry
    /// point's unit is compiled when it is first asked for ([`CompiledLibrary::unit`]).
    /// Errors in the file as a whole (syntax the front end cannot follow) are
    /// [`Error::Compile`] with the user's file and line.
    fn compile(&self, source: &str, options: &CompileOptions) -> Result<Arc<dyn CompiledLibrary>>;

    /// The largest threadgroup the device allows for any kernel (1024 on every backend).
    fn max_threads_per_threadgroup(&self) -> u32 {
        1024
    }

    /// The most dynamic threadgroup memory one group may use, in bytes.
    fn max_threadgroup_memory(&self) -> usize;

    /// True when the engine compiles MSL with Apple's own compiler and `metal_stdlib` (Metal),
    /// false when ingot translates it (whose prelude adds functions Apple's library lacks, such
    /// as `expm1` and `log1p`).
    fn native_msl(&self) -> bool {
        false
    }
}

/// One entry point of a compiled unit: its reflection (function constants applied) and the
/// launchable function.
#[derive(Clone)]
pub struct CompiledEntry {
    /// The entry's reflection as compiled: gated parameters active or not, ABI slots.
    pub entry: ingot_msl::EntryPoint,
    /// The compiled code.
    pub function: Arc<dyn CompiledFunction>,
}

/// A library: the reflection of every entry point, and the units compiled from it so far.
pub trait CompiledLibrary: Send + Sync {
    /// The reflection of the source with the library's own function constants applied (a
    /// gate without a value is false; a function's constants may change its parameters).
    fn module(&self) -> &ingot_msl::Module;

    /// Compiles (or finds in the memory or disk cache) one unit holding the entry points
    /// `names` (host names known to exist in [`CompiledLibrary::module`]), specialised with
    /// `constants` merged over the library's. Returns them in `names` order. An error names
    /// the entry points; a constant the unit uses without a value is
    /// [`Error::KernelArgument`] naming it.
    fn unit(&self, names: &[String], constants: &Constants) -> Result<Vec<CompiledEntry>>;

    /// The entry point `name` in a unit of its own.
    fn function(&self, name: &str, constants: &Constants) -> Result<CompiledEntry> {
        let mut v = self.unit(&[name.to_string()], constants)?;
        v.pop()
            .ok_or_else(|| Error::Compile(format!("kernel `{name}`: the unit is empty")))
    }

    /// How many distinct units this library has compiled or loaded (one per set of entry
    /// points and function-constant values).
    fn units(&self) -> usize;
}

/// Process-wide counts of unit compilations, for tests and benchmarks.
pub mod stats {
    use std::sync::atomic::{AtomicU64, Ordering};

    static COMPILED: AtomicU64 = AtomicU64::new(0);
    static DISK: AtomicU64 = AtomicU64::new(0);

    /// A unit was compiled by the device compiler (g++, NVRTC, Metal).
    pub fn record_compiled() {
        COMPILED.fetch_add(1, Ordering::Relaxed);
    }

    /// A unit was loaded from the disk cache.
    pub fn record_disk() {
        DISK.fetch_add(1, Ordering::Relaxed);
    }

    /// (units compiled, units loaded from the disk cache) since the process started.
    pub fn get() -> (u64, u64) {
        (
            COMPILED.load(Ordering::Relaxed),
            DISK.load(Ordering::Relaxed),
        )
    }
}

/// One launchable entry point.
pub trait CompiledFunction: Send + Sync {
    /// The largest threadgroup this kernel can be launched with
    /// (`[[max_total_threads_per_threadgroup]]`, or the device's limit).
    fn max_total_threads_per_threadgroup(&self) -> u32;

    /// `sizeof(T)` of each ABI slot as the device compiler laid it out, when known
    /// (the CPU engine reads `ingot_cpu_<name>_sizes`). Used to check struct arguments.
    fn slot_sizes(&self) -> Option<&[u32]>;

    /// Runs (or queues) the kernel. `args` has one entry per ABI slot, already validated;
    /// `launch` is complete for a single region (`origin` 0, `region == groups`,
    /// `block == tg`): a backend that needs regions (CUDA, 2-D/3-D exact grids) splits it.
    fn launch(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<()>;

    /// Runs the kernel once and returns the device time in seconds. The default runs
    /// [`CompiledFunction::launch`], waits for the device and measures the host clock.
    fn time(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<f64> {
        self.synchronize()?;
        let t = std::time::Instant::now();
        self.launch(launch, args)?;
        self.synchronize()?;
        Ok(t.elapsed().as_secs_f64())
    }

    /// Waits for this kernel's queued launches (no-op for a synchronous backend).
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}
