//! The CPU kernel engine: MSL translated to C++ by ingot-msl, compiled by the system C++
//! compiler into a shared object, cached on disk and in memory, and run on all cores.
//!
//! A launch splits the linear range of threadgroups into chunks that rayon's workers run
//! through `ingot_cpu_<name>(&launch, args, begin, end)` (see `ingot-msl/ABI.md`, "CPU").
//! The call is synchronous: when [`CompiledFunction::launch`] returns, the arrays hold the
//! results.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CStr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rayon::prelude::*;

use super::compiler;
use super::guard;
use super::memory::CpuMemory;
use crate::cache;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::kernel::{
    constant_literal, stats, BoundArg, CompileOptions, CompiledFunction, CompiledLibrary,
    KernelBackend, LaunchParams,
};
use crate::runtime::units::{LazyLibrary, UnitCompiler};

/// `int ingot_cpu_<name>(const ingot::launch*, void* const*, uint32_t, uint32_t)`.
type EntryFn = guard::Entry;
/// `const char* ingot_cpu_last_error()`.
type LastErrorFn = unsafe extern "C" fn() -> *const c_char;
type SetStopFn = unsafe extern "C" fn(*const u64);

/// Version of the engine's cache entries (bump when the key or the ABI changes).
const CACHE_VERSION: &str = "ingot-cpu-kernel-v2";

/// The CPU's kernel backend (one per process).
pub struct CpuKernelBackend;

impl CpuKernelBackend {
    /// The process-wide backend.
    pub fn shared() -> Arc<dyn KernelBackend> {
        static B: OnceLock<Arc<CpuKernelBackend>> = OnceLock::new();
        B.get_or_init(|| Arc::new(CpuKernelBackend)).clone()
    }
}

/// Compiled libraries by cache key. Loaded shared objects are never unloaded: their code may
/// own thread-local state in rayon's workers.
fn loaded() -> &'static Mutex<HashMap<String, Arc<SharedObject>>> {
    static L: OnceLock<Mutex<HashMap<String, Arc<SharedObject>>>> = OnceLock::new();
    L.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A loaded kernel shared object.
struct SharedObject {
    lib: libloading::Library,
    last_error: Option<LastErrorFn>,
    path: PathBuf,
}

/// Statistics of the last compile call on this thread (for benchmarks and tests).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Found loaded in this process.
    #[default]
    Memory,
    /// Loaded from the disk cache.
    Disk,
    /// Compiled.
    Compiled,
}

thread_local! {
    static LAST_OUTCOME: std::cell::Cell<CacheOutcome> = const { std::cell::Cell::new(CacheOutcome::Memory) };
}

/// Where the last [`KernelBackend::compile`] on this thread found its shared object.
pub fn last_cache_outcome() -> CacheOutcome {
    LAST_OUTCOME.with(|c| c.get())
}

/// Forgets the in-memory cache, so the next compile reads the disk cache (for benchmarks of a
/// cached load; loaded code stays mapped).
pub fn clear_memory_cache() {
    if let Ok(mut m) = loaded().lock() {
        m.clear();
    }
    if let Ok(mut m) = libraries().lock() {
        m.clear();
    }
}

type LibraryMap = Mutex<HashMap<String, Arc<dyn CompiledLibrary>>>;

/// Compiled libraries by a hash of the source and options (the in-process fast path).
fn libraries() -> &'static LibraryMap {
    static L: OnceLock<LibraryMap> = OnceLock::new();
    L.get_or_init(|| Mutex::new(HashMap::new()))
}

fn hex(h: &blake3::Hash) -> String {
    h.to_hex().as_str()[..32].to_string()
}

fn prelude_hash(files: &[(&str, &str)]) -> String {
    static H: OnceLock<String> = OnceLock::new();
    H.get_or_init(|| {
        let mut h = blake3::Hasher::new();
        for (n, c) in files {
            h.update(&(n.len() as u64).to_le_bytes());
            h.update(n.as_bytes());
            h.update(&(c.len() as u64).to_le_bytes());
            h.update(c.as_bytes());
        }
        hex(&h.finalize())
    })
    .clone()
}

/// Hashes the headers a user's include folders hold (name, size, mtime; one level deep), so
/// an edited header recompiles.
fn hash_include_dirs(h: &mut blake3::Hasher, dirs: &[PathBuf]) {
    for d in dirs {
        h.update(d.to_string_lossy().as_bytes());
        let Ok(rd) = std::fs::read_dir(d) else {
            continue;
        };
        let mut entries: Vec<(String, u64, u128)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                let t = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                Some((e.file_name().to_string_lossy().into_owned(), m.len(), t))
            })
            .collect();
        entries.sort();
        for (n, s, t) in entries {
            h.update(n.as_bytes());
            h.update(&s.to_le_bytes());
            h.update(&t.to_le_bytes());
        }
    }
}

impl KernelBackend for CpuKernelBackend {
    fn device(&self) -> Device {
        Device::Cpu
    }

    fn max_threadgroup_memory(&self) -> usize {
        // Host memory; far above any GPU's limit, a guard against absurd sizes.
        1 << 30
    }

    fn compile(&self, source: &str, options: &CompileOptions) -> Result<Arc<dyn CompiledLibrary>> {
        // A library prepared before in this process with the same source and options is a
        // lookup (with the units it compiled): no reflection, no translation.
        let mut h0 = blake3::Hasher::new();
        h0.update(CACHE_VERSION.as_bytes());
        h0.update(&(source.len() as u64).to_le_bytes());
        h0.update(source.as_bytes());
        h0.update(options.file().as_bytes());
        h0.update(options.math_mode.name().as_bytes());
        h0.update(if options.checked {
            b"checked"
        } else {
            b"default"
        });
        h0.update(if options.generated {
            b"generated"
        } else {
            b"user"
        });
        for (k, v) in &options.constants {
            h0.update(format!("\0{k}={}", constant_literal(*v)).as_bytes());
        }
        for (k, v) in &options.defines {
            h0.update(format!("\0-D{k}={v}").as_bytes());
        }
        for (k, v) in ["INGOT_CXX", "PATH"].map(|k| (k, std::env::var(k).unwrap_or_default())) {
            h0.update(format!("\0{k}={v}").as_bytes());
        }
        h0.update(crate::cache::root().to_string_lossy().as_bytes());
        hash_include_dirs(&mut h0, &options.include_dirs);
        let source_key = hex(&h0.finalize());
        if let Some(l) = libraries()
            .lock()
            .ok()
            .and_then(|m| m.get(&source_key).cloned())
        {
            LAST_OUTCOME.with(|c| c.set(CacheOutcome::Memory));
            return Ok(l);
        }
        // Units compile lazily, on first call; a missing or broken compiler is still reported
        // here, where the user asked for the library (its version is probed once per process).
        compiler::find()?;
        // The CPU runs the kernel as native code: what a Metal kernel cannot do is refused.
        crate::runtime::kernel::sandbox(source, options, ingot_msl::Target::Cpu)?;
        let lib: Arc<dyn CompiledLibrary> = Arc::new(LazyLibrary::new(
            Arc::new(CpuUnits),
            ingot_msl::Target::Cpu,
            source,
            options,
        )?);
        if let Ok(mut m) = libraries().lock() {
            m.insert(source_key, lib.clone());
        }
        Ok(lib)
    }
}

/// The CPU's [`UnitCompiler`]: one shared object per unit.
struct CpuUnits;

impl UnitCompiler for CpuUnits {
    fn compile_unit(
        &self,
        t: &ingot_msl::Translation,
        options: &CompileOptions,
        names: &[String],
    ) -> Result<Vec<Arc<dyn CompiledFunction>>> {
        let compiler = compiler::find()?;
        let files = ingot_msl::prelude_files(ingot_msl::Target::Cpu);
        let phash = prelude_hash(files);
        let mut h = blake3::Hasher::new();
        h.update(CACHE_VERSION.as_bytes());
        h.update(t.text.as_bytes());
        h.update(phash.as_bytes());
        for f in compiler::flags(options.math_mode) {
            h.update(f.as_bytes());
            h.update(b"\0");
        }
        h.update(compiler.path.to_string_lossy().as_bytes());
        for a in &compiler.prefix_args {
            h.update(a.as_bytes());
        }
        h.update(compiler.version.as_bytes());
        hash_include_dirs(&mut h, &options.include_dirs);
        let key = hex(&h.finalize());
        let so = load_or_build(&key, &t.text, &compiler, options, files, &phash)?;
        names
            .iter()
            .map(|name| {
                let entry = t.module.entry(name).ok_or_else(|| {
                    Error::KernelArgument(format!("no kernel function named {name:?}"))
                })?;
                let symbol = t
                    .entries
                    .get(name)
                    .cloned()
                    .unwrap_or_else(|| format!("ingot_cpu_{name}"));
                let f: Arc<dyn CompiledFunction> =
                    Arc::new(function(&so, name, &symbol, entry, options)?);
                Ok(f)
            })
            .collect()
    }
}

fn load_or_build(
    key: &str,
    text: &str,
    compiler: &compiler::Compiler,
    options: &CompileOptions,
    files: &[(&str, &str)],
    phash: &str,
) -> Result<Arc<SharedObject>> {
    let memory = loaded();
    if let Some(so) = memory.lock().ok().and_then(|m| m.get(key).cloned()) {
        LAST_OUTCOME.with(|c| c.set(CacheOutcome::Memory));
        return Ok(so);
    }
    let dir = cache::work_dir("cpu")?;
    let path = dir.join(format!("{key}.so"));
    let mut outcome = CacheOutcome::Disk;
    let so = match path.is_file().then(|| open(&path, key)) {
        Some(Ok(so)) => so,
        Some(Err(_)) | None => {
            // Missing or unusable (corrupt, from another key): rebuild, never trust it.
            outcome = CacheOutcome::Compiled;
            let prelude = cache::prelude_dir(&dir, files, phash)?;
            build(&dir, &path, key, text, compiler, options, &prelude)?;
            open(&path, key).map_err(|e| {
                Error::Compile(format!(
                    "the compiled kernel {} does not load: {e}",
                    path.display()
                ))
            })?
        }
    };
    LAST_OUTCOME.with(|c| c.set(outcome));
    match outcome {
        CacheOutcome::Compiled => stats::record_compiled(),
        CacheOutcome::Disk => stats::record_disk(),
        CacheOutcome::Memory => {}
    }
    let so = Arc::new(so);
    if let Ok(mut m) = memory.lock() {
        m.insert(key.to_string(), so.clone());
    }
    Ok(so)
}

/// Compiles `text` into `path` (atomically).
fn build(
    dir: &Path,
    path: &Path,
    key: &str,
    text: &str,
    compiler: &compiler::Compiler,
    options: &CompileOptions,
    prelude: &Path,
) -> Result<()> {
    let tmp_cpp = dir.join(format!("{}.cpp", cache::temp_name(key)));
    let tmp_so = dir.join(format!("{}.so", cache::temp_name(key)));
    let mut src = String::with_capacity(text.len() + 128);
    src.push_str(text);
    // The key, readable after loading: a file renamed or damaged is detected and rebuilt.
    src.push_str(&format!(
        "\n#line 1 \"<ingot cache key>\"\nextern \"C\" __attribute__((visibility(\"default\"))) const char ingot_cpu_cache_key[] = \"{key}\";\n"
    ));
    std::fs::write(&tmp_cpp, src)
        .map_err(|e| Error::io(format!("writing {}", tmp_cpp.display()), e))?;
    let progress = crate::progress::Progress::start(format!(
        "compiling {} for the cpu ({})",
        options.file(),
        compiler.path.display()
    ));
    let pch = super::pch::preamble(text)
        .and_then(|p| super::pch::header(dir, prelude, compiler, options.math_mode, &p));
    let compile = |pch: Option<&Path>| {
        compiler.compile(
            &tmp_cpp,
            &tmp_so,
            options.math_mode,
            &options.include_dirs,
            prelude,
            pch,
            options.file(),
        )
    };
    let mut r = compile(pch.as_deref());
    // A precompiled header the compiler refuses (it says so, naming the file) is never the
    // kernel's fault: compile once more without it.
    if let (Err(Error::Compile(msg)), Some(_)) = (&r, &pch) {
        if msg.contains(".gch") || msg.contains("precompiled") {
            r = compile(None);
        }
    }
    drop(progress);
    let _ = std::fs::remove_file(&tmp_cpp);
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp_so);
        return Err(e);
    }
    // Sealed (cache.rs): a damaged entry is recompiled, never mapped.
    let bytes = std::fs::read(&tmp_so);
    let _ = std::fs::remove_file(&tmp_so);
    let bytes = bytes.map_err(|e| Error::io(format!("reading {}", tmp_so.display()), e))?;
    let tmp_sealed = dir.join(format!("{}.so", cache::temp_name(key)));
    std::fs::write(&tmp_sealed, cache::seal(&bytes))
        .map_err(|e| Error::io(format!("writing {}", tmp_sealed.display()), e))?;
    cache::install(&tmp_sealed, path)
}

/// Loads the payload of the sealed entry `path` from a private copy, unlinked once loaded. The
/// process's mapping then never depends on the cache file: another process (or a test) that
/// rewrites or truncates a cache entry in place cannot turn the loaded code into a SIGBUS, and
/// an entry whose seal does not match (truncated, corrupt, foreign) is never mapped.
fn load_private_copy(path: &Path) -> std::result::Result<libloading::Library, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let payload = cache::unseal(&bytes).ok_or("the entry's seal does not match (damaged)")?;
    let name = format!(
        "ingot-{}-{}.so",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let mut private = std::env::temp_dir().join(&name);
    if std::fs::write(&private, payload).is_err() {
        // No writable temporary folder: next to the entry (the cache folder is writable).
        private = path.with_file_name(format!(".{name}"));
        std::fs::write(&private, payload).map_err(|e| e.to_string())?;
    }
    // SAFETY: as for `open`: a file this engine built (its seal matched; its key is checked
    // right after).
    let loaded = unsafe { libloading::Library::new(&private) };
    let _ = std::fs::remove_file(&private);
    loaded.map_err(|e| e.to_string())
}

/// Loads a cached shared object and checks that it is the one `key` names.
fn open(path: &Path, key: &str) -> std::result::Result<SharedObject, String> {
    // SAFETY: the file was produced by this engine from a translation whose hash is `key`, and
    // that hash is checked below before any kernel symbol is used. Its initialisers are the
    // prelude's (no user code runs at load time).
    let lib = load_private_copy(path)?;
    // SAFETY: `ingot_cpu_cache_key` is a NUL-terminated char array defined by `build`.
    let found = unsafe {
        lib.get::<*const c_char>(b"ingot_cpu_cache_key\0").map(|s| {
            CStr::from_ptr(*s as *const c_char)
                .to_string_lossy()
                .into_owned()
        })
    };
    match found {
        Ok(k) if k == key => {}
        Ok(k) => return Err(format!("cache entry holds key {k}, expected {key}")),
        Err(e) => return Err(format!("cache entry has no key: {e}")),
    }
    // SAFETY: the runtime header defines `const char* ingot_cpu_last_error()`.
    let last_error = unsafe { lib.get::<LastErrorFn>(b"ingot_cpu_last_error\0") }
        .ok()
        .map(|s| *s);
    // SAFETY: the runtime header defines `void ingot_cpu_set_stop_epoch(const volatile
    // unsigned long long*)`.
    let set_stop = unsafe { lib.get::<SetStopFn>(b"ingot_cpu_set_stop_epoch\0") }
        .ok()
        .map(|s| *s);
    if let Some(set) = set_stop {
        // SAFETY: the counter is a static that outlives every kernel; the kernel only reads it.
        unsafe { set(guard::stop_epoch()) };
    }
    Ok(SharedObject {
        lib,
        last_error,
        path: path.to_path_buf(),
    })
}

/// The entry point `name` (wrapper `symbol`) of a loaded unit.
fn function(
    so: &Arc<SharedObject>,
    name: &str,
    symbol: &str,
    entry: &ingot_msl::EntryPoint,
    options: &CompileOptions,
) -> Result<CpuFunction> {
    let missing = |what: &str, e: libloading::Error| {
        Error::Compile(format!(
            "kernel `{name}`: {what} missing from {}: {e}",
            so.path.display()
        ))
    };
    // SAFETY: the wrapper of ABI.md has exactly this signature.
    let f: EntryFn = unsafe {
        so.lib
            .get::<EntryFn>(format!("{symbol}\0").as_bytes())
            .map(|s| *s)
            .map_err(|e| missing(symbol, e))?
    };
    let nslots = entry.abi.len();
    let sizes = if nslots == 0 {
        Vec::new()
    } else {
        // SAFETY: `<symbol>_sizes` is a `const uint32_t[]` with one entry per ABI slot.
        unsafe {
            let p = so
                .lib
                .get::<*const u32>(format!("{symbol}_sizes\0").as_bytes())
                .map_err(|e| missing("the slot sizes", e))?;
            std::slice::from_raw_parts(*p, nslots).to_vec()
        }
    };
    let slot_names = entry
        .abi
        .iter()
        .map(|&i| {
            entry
                .params
                .get(i)
                .map_or(String::new(), |p| p.name.clone())
        })
        .collect();
    Ok(CpuFunction {
        name: name.to_string(),
        entry: f,
        reflection: entry.clone(),
        slot_names,
        checked: options.checked,
        scratch: !options.generated,
        last_error: so.last_error,
        sizes,
        max_threads: entry
            .max_total_threads_per_threadgroup
            .unwrap_or(1024)
            .min(1024),
        _so: so.clone(),
    })
}

struct CpuFunction {
    name: String,
    entry: EntryFn,
    /// The entry point's reflection (parameter names for fault messages).
    reflection: ingot_msl::EntryPoint,
    /// Parameter name of each ABI slot.
    slot_names: Vec<String>,
    /// Compiled in checked mode: the wrapper takes lengths and a fault record.
    checked: bool,
    /// Small buffers are passed through guarded scratch copies (all but generated kernels).
    scratch: bool,
    last_error: Option<LastErrorFn>,
    sizes: Vec<u32>,
    max_threads: u32,
    _so: Arc<SharedObject>,
}

/// Host bytes for a bytes slot, 64-byte aligned (any MSL type's alignment).
#[repr(C, align(64))]
#[derive(Copy, Clone)]
struct Aligned([u8; 64]);

/// 64-byte chunks of a bytes slot (at least one).
fn chunks(b: &[u8]) -> usize {
    b.len().div_ceil(64).max(1)
}

/// Chunks of bytes slots kept on the stack (scalars and small structs); more go to the heap.
const INLINE_CHUNKS: usize = 8;

/// Raw pointers handed to the kernel; shared read-only between the workers.
struct Ptrs(Vec<*mut c_void>);
// SAFETY: the pointers are only passed through to the kernel, which the MSL model lets every
// thread of the grid use at once.
unsafe impl Sync for Ptrs {}
unsafe impl Send for Ptrs {}

impl Ptrs {
    fn get(&self) -> *const *mut c_void {
        self.0.as_ptr()
    }
}

impl CompiledFunction for CpuFunction {
    fn max_total_threads_per_threadgroup(&self) -> u32 {
        self.max_threads
    }

    fn slot_sizes(&self) -> Option<&[u32]> {
        Some(&self.sizes)
    }

    fn launch(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<()> {
        guard::install();
        if guard::shutting_down() {
            return Err(Error::Interrupted(format!(
                "kernel `{}` not started: the process is shutting down",
                self.name
            )));
        }
        // Every bytes slot's value, each at a 64-byte boundary, in one block: on the stack for
        // the usual few scalars (a heap block aligned to 64 is a slow `posix_memalign`).
        let need: usize = args
            .iter()
            .map(|a| match a {
                BoundArg::Bytes(b) => chunks(b),
                BoundArg::Buffer { .. } => 0,
            })
            .sum();
        let mut inline = [Aligned([0; 64]); INLINE_CHUNKS];
        let mut heap = Vec::new();
        let storage: &mut [Aligned] = if need <= INLINE_CHUNKS {
            &mut inline[..need]
        } else {
            heap.resize(need, Aligned([0; 64]));
            &mut heap
        };
        let mut used = 0usize;
        let mut ptrs = Vec::with_capacity(args.len() * 2 + 1);
        let mut lengths = Vec::with_capacity(args.len());
        let mut slots: Vec<SlotMemory> = Vec::with_capacity(args.len());
        for a in args {
            match a {
                BoundArg::Buffer {
                    buffer,
                    offset,
                    nbytes,
                    writable,
                } => {
                    if offset
                        .checked_add(*nbytes)
                        .is_none_or(|e| e > buffer.nbytes())
                    {
                        return Err(Error::KernelArgument(format!(
                            "kernel `{}`: argument range {offset}+{nbytes} outside a buffer of {} bytes",
                            self.name,
                            buffer.nbytes()
                        )));
                    }
                    let Some(m) = buffer.memory_as::<CpuMemory>() else {
                        return Err(Error::KernelArgument(format!(
                            "kernel `{}`: a buffer on {} given to the cpu",
                            self.name,
                            buffer.device()
                        )));
                    };
                    let base = m.as_ptr();
                    // SAFETY: the offset is inside the buffer (checked above).
                    let p = unsafe { base.add(*offset) };
                    ptrs.push(p as *mut c_void);
                    lengths.push(*nbytes);
                    slots.push(SlotMemory {
                        data: p,
                        nbytes: *nbytes,
                        writable: *writable,
                        guard: m.guard_page().map(|g| g as usize),
                        scratch: None,
                    });
                }
                BoundArg::Bytes(b) => {
                    let dst = storage[used..].as_mut_ptr() as *mut u8;
                    // SAFETY: the chunks from `used` hold at least `b.len()` bytes (`need`).
                    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), dst, b.len()) };
                    used += chunks(b);
                    ptrs.push(dst as *mut c_void);
                    lengths.push(b.len());
                    slots.push(SlotMemory::bytes());
                }
            }
        }
        let total = launch.total_groups();
        if total == 0 {
            return Ok(());
        }
        let total = u32::try_from(total).map_err(|_| {
            Error::KernelArgument(format!(
                "kernel `{}`: {total} threadgroups exceed 2^32",
                self.name
            ))
        })?;
        if self.scratch {
            scratch_in(&mut slots, &mut ptrs);
        }
        let mut record = crate::runtime::checked::ChkRecord::default();
        if self.checked {
            // ABI.md "Checked mode": lengths after the slots, then the fault record.
            for &l in &lengths {
                ptrs.push(l as *mut c_void);
            }
            ptrs.push(&mut record as *mut _ as *mut c_void);
        }
        if ptrs.is_empty() {
            ptrs.push(std::ptr::null_mut());
        }
        let ptrs = Ptrs(ptrs);
        let outcome = self.run(launch, &ptrs, total);
        // SAFETY: every worker has finished (rayon joined); the kernel wrote it through `ptrs`.
        let rec = unsafe { std::ptr::read_volatile(&record) };
        if self.checked && rec.hit() && !matches!(outcome, Outcome::Interrupted) {
            scratch_out(&slots);
            return Err(crate::runtime::checked::fault(
                &self.name,
                Some(&self.reflection),
                &rec,
                rec.pos,
            ));
        }
        match outcome {
            Outcome::Done => {
                scratch_out(&slots);
                Ok(())
            }
            Outcome::Failed(msg) => {
                scratch_out(&slots);
                let e = if msg.starts_with("checked mode:") {
                    Error::KernelFault(format!("kernel `{}`: {msg}", self.name))
                } else {
                    Error::Device(format!("kernel `{}`: {msg}", self.name))
                };
                Err(e)
            }
            Outcome::Fault(f) => Err(Error::KernelFault(self.describe_fault(f, &slots))),
            Outcome::Interrupted => {
                scratch_out(&slots);
                Err(Error::Interrupted(format!(
                    "kernel `{}` stopped between threadgroups",
                    self.name
                )))
            }
        }
    }
}

/// Where a buffer slot's bytes are for a launch.
struct SlotMemory {
    /// The array's bytes.
    data: *mut u8,
    nbytes: usize,
    writable: bool,
    /// The guard page behind the array's memory block, if it has one.
    guard: Option<usize>,
    /// The guarded scratch copy the kernel sees instead, if any.
    scratch: Option<*mut u8>,
}

impl SlotMemory {
    fn bytes() -> SlotMemory {
        SlotMemory {
            data: std::ptr::null_mut(),
            nbytes: 0,
            writable: false,
            guard: None,
            scratch: None,
        }
    }

    fn is_buffer(&self) -> bool {
        !self.data.is_null()
    }
}

/// Alignment of a scratch copy (the largest MSL scalar vector, `float4`/`long2`).
const SCRATCH_ALIGN: usize = 16;

/// Moves small buffers into guarded scratch slots (ending at an inaccessible page), unless two
/// arguments share memory (the kernel must then see one copy of it: it runs in place).
fn scratch_in(slots: &mut [SlotMemory], ptrs: &mut [*mut c_void]) {
    let small: Vec<usize> = (0..slots.len())
        .filter(|&k| {
            let s = &slots[k];
            s.is_buffer() && s.nbytes <= guard::SCRATCH_MAX && {
                let (a0, a1) = (s.data as usize, s.data as usize + s.nbytes);
                !slots.iter().enumerate().any(|(j, o)| {
                    j != k && o.is_buffer() && {
                        let (b0, b1) = (o.data as usize, o.data as usize + o.nbytes);
                        a0 < b1.max(b0 + 1) && b0 < a1.max(a0 + 1)
                    }
                })
            }
        })
        .collect();
    if small.is_empty() {
        return;
    }
    let Some(arena) = guard::scratch_slots(small.len()) else {
        return;
    };
    for (&k, base) in small.iter().zip(arena) {
        let s = &mut slots[k];
        let span = s.nbytes.next_multiple_of(SCRATCH_ALIGN);
        // SAFETY: span <= SCRATCH_MAX: inside the slot, ending at its guard page.
        let dst = unsafe { base.add(guard::SCRATCH_MAX - span) };
        // SAFETY: both ranges hold `nbytes`; the scratch slot is this thread's own.
        unsafe { std::ptr::copy_nonoverlapping(s.data, dst, s.nbytes) };
        s.scratch = Some(dst);
        ptrs[k] = dst as *mut c_void;
    }
}

/// Copies the writable scratch copies back into the arrays.
fn scratch_out(slots: &[SlotMemory]) {
    for s in slots {
        if let (Some(src), true) = (s.scratch, s.writable) {
            // SAFETY: as in `scratch_in`.
            unsafe { std::ptr::copy_nonoverlapping(src, s.data, s.nbytes) };
        }
    }
}

/// How a launch ended.
enum Outcome {
    Done,
    /// The kernel returned an error code with this message.
    Failed(String),
    /// A memory fault while the kernel ran.
    Fault(guard::Fault),
    /// Ctrl-C or shutdown.
    Interrupted,
}

impl CpuFunction {
    /// Runs every group: pieces of the group range taken from a shared counter by up to one
    /// worker per core. A piece starts at one group and doubles while it takes under 1 ms (up to
    /// a quarter of a worker's share; halves above 20 ms), so that an interrupt or a fault stops
    /// the launch between threadgroups without costing small launches anything.
    fn run(&self, launch: &LaunchParams, ptrs: &Ptrs, total: u32) -> Outcome {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let threads_in_group = launch.tg.iter().map(|&t| t as u64).product::<u64>().max(1);
        let workers = rayon::current_num_threads().max(1) as u64;
        let total64 = total as u64;
        // The most groups a piece grows to: about 4 pieces per worker. A launch of at most
        // 4096 threads is one piece on the calling thread; larger ones start with one group per
        // piece (an interrupt is seen after one group even when groups are slow).
        let cap = total64.div_ceil(workers * 4).max(1);
        let small = total64 * threads_in_group <= 4096;
        let first = if small { total64 } else { 1 };
        let next = AtomicU64::new(0);
        let stop = AtomicBool::new(false);
        let result: Mutex<Option<Outcome>> = Mutex::new(None);
        let interrupts = guard::interrupts();
        let finish = |o: Outcome| {
            stop.store(true, Ordering::SeqCst);
            if let Ok(mut r) = result.lock() {
                if r.is_none() {
                    *r = Some(o);
                }
            }
        };
        let worker = || {
            let mut piece = first;
            loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                if guard::interrupts() != interrupts || guard::shutting_down() {
                    finish(Outcome::Interrupted);
                    return;
                }
                let begin = next.fetch_add(piece, Ordering::Relaxed);
                if begin >= total64 {
                    return;
                }
                let end = (begin + piece).min(total64);
                let t0 = std::time::Instant::now();
                // SAFETY: the wrapper's contract (ABI.md): launch block and the pointers.
                let rc = unsafe {
                    guard::call(self.entry, launch, ptrs.get(), begin as u32, end as u32)
                };
                match rc {
                    Ok(0) => {}
                    // A checked loop that ended because of an interrupt can leave the group's
                    // threads at different barriers: the interrupt is what the user sees.
                    Ok(_) if guard::interrupts() != interrupts || guard::shutting_down() => {
                        finish(Outcome::Interrupted);
                        return;
                    }
                    Ok(code) => {
                        let msg = self
                            .last_error
                            // SAFETY: returns a NUL-terminated thread-local string (or null).
                            .map(|f| unsafe { f() })
                            .filter(|p| !p.is_null())
                            // SAFETY: non-null and NUL-terminated.
                            .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
                            .unwrap_or_else(|| format!("error code {code}"));
                        finish(Outcome::Failed(msg));
                        return;
                    }
                    Err(f) => {
                        finish(Outcome::Fault(f));
                        return;
                    }
                }
                let dt = t0.elapsed();
                if dt < std::time::Duration::from_millis(1) {
                    piece = (piece * 2).min(cap);
                } else if dt > std::time::Duration::from_millis(20) {
                    piece = (piece / 2).max(1);
                }
            }
        };
        if small || workers == 1 {
            worker();
        } else {
            let n = workers.min(total64) as usize;
            (0..n).into_par_iter().for_each(|_| worker());
        }
        result.into_inner().ok().flatten().unwrap_or(Outcome::Done)
    }

    /// The message for a memory fault: which argument's guard region it hit, if any.
    fn describe_fault(&self, f: guard::Fault, slots: &[SlotMemory]) -> String {
        let sig = if f.signal == 7 || f.signal == 10 {
            "bus error"
        } else {
            "invalid memory access"
        };
        let page = guard::guard_len();
        for (k, s) in slots.iter().enumerate() {
            let name = self.slot_names.get(k).map_or("?", String::as_str);
            let end = match s.scratch {
                Some(p) => p as usize + s.nbytes,
                None => s.data as usize + s.nbytes,
            };
            let guard_end = match (s.scratch, s.guard) {
                (Some(_), _) => Some(end.next_multiple_of(SCRATCH_ALIGN) + page),
                (None, Some(g)) => Some(g + page),
                (None, None) => None,
            };
            if let Some(ge) = guard_end {
                if s.is_buffer() && f.addr >= end && f.addr < ge {
                    return format!(
                        "kernel `{}`: {sig} {} bytes past the end of parameter `{name}` \
                         ({} bytes): the kernel read or wrote outside its buffer (stopped by a \
                         guard page; compile with checked=True to find the index and thread)",
                        self.name,
                        f.addr - end,
                        s.nbytes
                    );
                }
            }
        }
        format!(
            "kernel `{}`: {sig} at address {:#x}, outside every buffer of the launch (the \
             kernel was stopped; memory it wrote before the fault may be changed; compile \
             with checked=True to find the index and thread)",
            self.name, f.addr
        )
    }
}
