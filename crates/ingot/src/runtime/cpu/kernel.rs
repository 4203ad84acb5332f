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
use super::memory::CpuMemory;
use crate::cache;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::kernel::{
    translation_error, BoundArg, CompileOptions, CompiledFunction, CompiledLibrary, KernelBackend,
    LaunchParams, MathMode,
};

/// `int ingot_cpu_<name>(const ingot::launch*, void* const*, uint32_t, uint32_t)`.
type EntryFn = unsafe extern "C" fn(*const LaunchParams, *const *mut c_void, u32, u32) -> i32;
/// `const char* ingot_cpu_last_error()`.
type LastErrorFn = unsafe extern "C" fn() -> *const c_char;

/// Version of the engine's cache entries (bump when the key or the ABI changes).
const CACHE_VERSION: &str = "ingot-cpu-kernel-v1";

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
        // A library compiled before in this process with the same source and options is a
        // lookup: no translation, no hashing of the translation.
        let mut h0 = blake3::Hasher::new();
        h0.update(CACHE_VERSION.as_bytes());
        h0.update(&(source.len() as u64).to_le_bytes());
        h0.update(source.as_bytes());
        h0.update(options.file().as_bytes());
        h0.update(options.math_mode.name().as_bytes());
        for (k, v) in &options.constants {
            h0.update(format!("\0{k}={}", scalar_literal(*v)).as_bytes());
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
        let mut topts = ingot_msl::Options::new(ingot_msl::Target::Cpu);
        topts.file_name = options.file().to_string();
        topts.fast_math = options.math_mode == MathMode::Fast;
        for (k, v) in &options.constants {
            topts.constants.insert(k.clone(), scalar_literal(*v));
        }
        let t = ingot_msl::translate(source, &topts).map_err(translation_error)?;
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

        let so = self.load_or_build(&key, &t.text, &compiler, options, files, &phash)?;
        let mut functions = HashMap::new();
        for e in &t.module.entry_points {
            let symbol = t
                .entries
                .get(&e.name)
                .cloned()
                .unwrap_or_else(|| format!("ingot_cpu_{}", e.name));
            functions.insert(e.name.clone(), symbol);
        }
        let lib: Arc<dyn CompiledLibrary> = Arc::new(CpuLibrary {
            module: t.module,
            symbols: functions,
            so,
        });
        if let Ok(mut m) = libraries().lock() {
            m.insert(source_key, lib.clone());
        }
        Ok(lib)
    }
}

/// A function-constant value as C++ literal text.
fn scalar_literal(v: crate::dtype::Scalar) -> String {
    use crate::dtype::Scalar;
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => {
            if f.is_finite() {
                let s = format!("{f:?}");
                if s.contains(['.', 'e', 'E']) {
                    s
                } else {
                    format!("{s}.0")
                }
            } else {
                // Not expressible as a literal; the translator rejects it with the constant's name.
                format!("{f}")
            }
        }
        // Function constants are bool, integer or real (checked when they are given).
        Scalar::Complex(re, _) => scalar_literal(Scalar::Float(re)),
    }
}

impl CpuKernelBackend {
    fn load_or_build(
        &self,
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
        let dir = cache::dir("cpu")?;
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
        let so = Arc::new(so);
        if let Ok(mut m) = memory.lock() {
            m.insert(key.to_string(), so.clone());
        }
        Ok(so)
    }
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
    let r = compiler.compile(
        &tmp_cpp,
        &tmp_so,
        options.math_mode,
        &options.include_dirs,
        prelude,
        options.file(),
    );
    let _ = std::fs::remove_file(&tmp_cpp);
    if let Err(e) = r {
        let _ = std::fs::remove_file(&tmp_so);
        return Err(e);
    }
    cache::install(&tmp_so, path)
}

/// Loads a private copy of `path`, unlinked once loaded. The process's mapping then never
/// depends on the cache file: another process (or a test) that rewrites or truncates a cache
/// entry in place cannot turn the loaded code into a SIGBUS.
fn load_private_copy(path: &Path) -> std::result::Result<libloading::Library, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let private = std::env::temp_dir().join(format!(
        "ingot-{}-{}.so",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let loaded = match std::fs::copy(path, &private) {
        // SAFETY: as for `open`: a file this engine built (checked by its key right after).
        Ok(_) => unsafe { libloading::Library::new(&private) },
        // No writable temporary folder: load the cache entry itself.
        Err(_) => unsafe { libloading::Library::new(path) },
    };
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
    Ok(SharedObject {
        lib,
        last_error,
        path: path.to_path_buf(),
    })
}

struct CpuLibrary {
    module: ingot_msl::Module,
    symbols: HashMap<String, String>,
    so: Arc<SharedObject>,
}

impl CompiledLibrary for CpuLibrary {
    fn module(&self) -> &ingot_msl::Module {
        &self.module
    }

    fn function(&self, name: &str) -> Result<Arc<dyn CompiledFunction>> {
        let entry = self
            .module
            .entry(name)
            .ok_or_else(|| Error::KernelArgument(format!("no kernel function named {name:?}")))?;
        let symbol = self
            .symbols
            .get(name)
            .cloned()
            .unwrap_or_else(|| format!("ingot_cpu_{name}"));
        let missing = |what: &str, e: libloading::Error| {
            Error::Compile(format!(
                "kernel `{name}`: {what} missing from {}: {e}",
                self.so.path.display()
            ))
        };
        // SAFETY: the wrapper of ABI.md has exactly this signature.
        let f: EntryFn = unsafe {
            self.so
                .lib
                .get::<EntryFn>(format!("{symbol}\0").as_bytes())
                .map(|s| *s)
                .map_err(|e| missing(&symbol, e))?
        };
        let nslots = entry.abi.len();
        let sizes = if nslots == 0 {
            Vec::new()
        } else {
            // SAFETY: `<symbol>_sizes` is a `const uint32_t[]` with one entry per ABI slot.
            unsafe {
                let p = self
                    .so
                    .lib
                    .get::<*const u32>(format!("{symbol}_sizes\0").as_bytes())
                    .map_err(|e| missing("the slot sizes", e))?;
                std::slice::from_raw_parts(*p, nslots).to_vec()
            }
        };
        Ok(Arc::new(CpuFunction {
            name: name.to_string(),
            entry: f,
            last_error: self.so.last_error,
            sizes,
            max_threads: entry
                .max_total_threads_per_threadgroup
                .unwrap_or(1024)
                .min(1024),
            _so: self.so.clone(),
        }))
    }
}

struct CpuFunction {
    name: String,
    entry: EntryFn,
    last_error: Option<LastErrorFn>,
    sizes: Vec<u32>,
    max_threads: u32,
    _so: Arc<SharedObject>,
}

/// Host bytes for a bytes slot, 64-byte aligned (any MSL type's alignment).
#[repr(C, align(64))]
#[derive(Copy, Clone)]
struct Aligned([u8; 64]);

fn aligned_copy(b: &[u8]) -> Vec<Aligned> {
    let mut v = vec![Aligned([0; 64]); b.len().div_ceil(64).max(1)];
    // SAFETY: `v` holds at least `b.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), v.as_mut_ptr() as *mut u8, b.len()) };
    v
}

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
        let mut storage: Vec<Vec<Aligned>> = Vec::new();
        let mut ptrs = Vec::with_capacity(args.len());
        for a in args {
            match a {
                BoundArg::Buffer {
                    buffer,
                    offset,
                    nbytes,
                    ..
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
                    ptrs.push(unsafe { base.add(*offset) } as *mut c_void);
                }
                BoundArg::Bytes(b) => {
                    let v = aligned_copy(b);
                    ptrs.push(v.as_ptr() as *mut c_void);
                    storage.push(v);
                }
            }
        }
        if ptrs.is_empty() {
            ptrs.push(std::ptr::null_mut());
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
        let ptrs = Ptrs(ptrs);
        let threads_in_group = launch.tg.iter().map(|&t| t as u64).product::<u64>().max(1);
        let workers = rayon::current_num_threads().max(1) as u64;
        // Enough chunks to balance uneven groups, few enough to keep the per-call cost small:
        // about 4 per worker, and at least ~4096 threads per chunk.
        let min_groups = 4096u64.div_ceil(threads_in_group);
        let chunk = (total as u64)
            .div_ceil(workers * 4)
            .max(min_groups)
            .min(total as u64) as u32;
        let nchunks = total.div_ceil(chunk);
        let run = |c: u32| -> Result<()> {
            let begin = c * chunk;
            let end = begin.saturating_add(chunk).min(total);
            // SAFETY: the wrapper's contract (ABI.md): launch block and one pointer per slot.
            let rc = unsafe { (self.entry)(launch, ptrs.get(), begin, end) };
            if rc == 0 {
                return Ok(());
            }
            let msg = self
                .last_error
                // SAFETY: returns a NUL-terminated thread-local string (or null).
                .map(|f| unsafe { f() })
                .filter(|p| !p.is_null())
                // SAFETY: non-null and NUL-terminated.
                .map(|p| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
                .unwrap_or_else(|| format!("error code {rc}"));
            Err(Error::Device(format!("kernel `{}`: {msg}", self.name)))
        };
        if nchunks == 1 {
            run(0)
        } else {
            (0..nchunks).into_par_iter().try_for_each(run)
        }
    }
}
