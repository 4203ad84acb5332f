//! User and built-in MSL kernels on CUDA: translate, compile with NVRTC for the device's own
//! architecture, cache the cubin in memory and on disk, and launch with exact Metal semantics.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{result, sys};

use super::context::CudaInner;
use super::driver::check;
use super::nvrtc;
use crate::cache;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::runtime::kernel::{
    constant_literal, stats, BoundArg, CompileOptions, CompiledFunction, CompiledLibrary,
    KernelBackend, LaunchParams, MathMode,
};
use crate::runtime::units::{LazyLibrary, UnitCompiler};

/// Kernel arguments whose parameter pointers are kept on the stack at launch (more use the heap).
const INLINE_ARGS: usize = 32;

/// The kernel engine of one CUDA device.
pub struct CudaKernels {
    inner: Arc<CudaInner>,
    units: Arc<CudaUnits>,
    /// Prepared libraries by a hash of source and options: a second `compile` of the same
    /// source is a lookup, with the units it compiled.
    libraries: Mutex<HashMap<String, Arc<dyn CompiledLibrary>>>,
}

impl CudaKernels {
    /// The engine for the device behind `inner`.
    pub fn new(inner: Arc<CudaInner>) -> CudaKernels {
        CudaKernels {
            units: Arc::new(CudaUnits {
                inner: inner.clone(),
                modules: Mutex::new(HashMap::new()),
            }),
            inner,
            libraries: Mutex::new(HashMap::new()),
        }
    }
}

/// The CUDA [`UnitCompiler`]: one NVRTC compile (one module) per unit.
struct CudaUnits {
    inner: Arc<CudaInner>,
    /// Loaded modules by cache key.
    modules: Mutex<HashMap<String, Arc<LoadedModule>>>,
}

/// A loaded CUDA module; unloaded when the last library or function using it goes.
struct LoadedModule {
    inner: Arc<CudaInner>,
    module: sys::CUmodule,
}

// SAFETY: a CUmodule is a handle usable from any thread with the context current.
unsafe impl Send for LoadedModule {}
unsafe impl Sync for LoadedModule {}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        if self.inner.bind().is_ok() {
            // Queued launches of this module finish first.
            let _ = self.inner.synchronize();
            // SAFETY: the module was loaded by us and is unloaded once.
            let _ = unsafe { result::module::unload(self.module) };
        }
    }
}

/// One entry point of a loaded module.
pub struct CudaFunction {
    inner: Arc<CudaInner>,
    // Keeps the module loaded while the function lives.
    _module: Arc<LoadedModule>,
    func: sys::CUfunction,
    name: String,
    max_threads: u32,
    /// The function's dynamic shared memory limit as last raised (read without the lock on the
    /// launch path; raised under `raise_smem`).
    dynamic_smem_limit: AtomicU32,
    raise_smem: Mutex<()>,
    /// `sizeof` of each ABI slot's type from the reflection (MSL layout; 0 when unknown).
    sizes: Option<Vec<u32>>,
    /// Checked mode: the entry point's reflection (for fault messages), else None.
    checked: Option<ingot_msl::EntryPoint>,
}

// SAFETY: CUfunction handles are usable from any thread with the context current.
unsafe impl Send for CudaFunction {}
unsafe impl Sync for CudaFunction {}

fn arch_of(inner: &CudaInner) -> (i32, i32) {
    inner.properties().compute_capability
}

impl KernelBackend for CudaKernels {
    fn device(&self) -> Device {
        Device::Cuda(self.inner.ordinal())
    }

    fn compile(&self, source: &str, options: &CompileOptions) -> Result<Arc<dyn CompiledLibrary>> {
        let mut parts: Vec<Vec<u8>> = vec![
            source.as_bytes().to_vec(),
            options.file().as_bytes().to_vec(),
            options.math_mode.name().as_bytes().to_vec(),
            if options.checked {
                b"checked".to_vec()
            } else {
                b"default".to_vec()
            },
        ];
        for (k, v) in &options.constants {
            parts.push(format!("{k}={}", constant_literal(*v)).into_bytes());
        }
        for (k, v) in &options.defines {
            parts.push(format!("-D{k}={v}").into_bytes());
        }
        for d in &options.include_dirs {
            parts.push(d.to_string_lossy().as_bytes().to_vec());
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        let key = cache::key(&refs);
        if let Some(lib) = self
            .libraries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(lib.clone());
        }
        crate::runtime::kernel::sandbox(source, options, ingot_msl::Target::Cuda)?;
        let lib: Arc<dyn CompiledLibrary> = Arc::new(LazyLibrary::new(
            self.units.clone(),
            ingot_msl::Target::Cuda,
            source,
            options,
        )?);
        self.libraries
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, lib.clone());
        Ok(lib)
    }

    fn max_threadgroup_memory(&self) -> usize {
        (self
            .inner
            .properties()
            .max_shared_memory_per_block_optin
            .max(48 * 1024)) as usize
    }
}

fn load_module(cubin: &[u8]) -> Result<sys::CUmodule> {
    // SAFETY: the image is a complete cubin produced by NVRTC (or a cache entry, which the
    // driver validates: a corrupt one fails here and is recompiled).
    check(
        unsafe { result::module::load_data(cubin.as_ptr() as *const c_void) },
        "cuModuleLoadData",
    )
}

impl UnitCompiler for CudaUnits {
    fn compile_unit(
        &self,
        t: &ingot_msl::Translation,
        options: &CompileOptions,
        names: &[String],
    ) -> Result<Vec<Arc<dyn CompiledFunction>>> {
        let headers = ingot_msl::prelude_files(ingot_msl::Target::Cuda);
        let arch = arch_of(&self.inner);
        let (nv_major, nv_minor) = nvrtc::version()?;
        let mut flags: Vec<String> = vec!["-default-device".to_string()];
        match options.math_mode {
            // IEEE results as NumPy computes them: no contraction of a*b+c into one rounding.
            MathMode::Precise => flags.extend(["--fmad=false".to_string()]),
            MathMode::Fast => flags.push("--use_fast_math".to_string()),
        }
        let mut prelude_bytes = Vec::new();
        for (n, t) in headers {
            prelude_bytes.extend_from_slice(n.as_bytes());
            prelude_bytes.extend_from_slice(t.as_bytes());
        }
        let key = cache::key(&[
            t.text.as_bytes(),
            &prelude_bytes,
            flags.join(" ").as_bytes(),
            format!("sm_{}{} nvrtc {nv_major}.{nv_minor}", arch.0, arch.1).as_bytes(),
        ]);
        let cached = self
            .modules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned();
        let module = match cached {
            Some(m) => m,
            None => {
                self.inner.bind()?;
                let module = match cache::read("cuda", &key, "cubin")
                    .and_then(|c| load_module(&c).ok())
                {
                    Some(m) => {
                        stats::record_disk();
                        m
                    }
                    None => {
                        let progress = crate::progress::Progress::start(format!(
                            "compiling {} for cuda (NVRTC)",
                            options.file()
                        ));
                        let cubin =
                            nvrtc::compile_cubin(&t.text, options.file(), headers, arch, &flags)?;
                        drop(progress);
                        stats::record_compiled();
                        let m = load_module(&cubin)?;
                        // A cache that cannot be written only costs a recompile next time.
                        let _ = cache::write("cuda", &key, "cubin", &cubin);
                        m
                    }
                };
                let m = Arc::new(LoadedModule {
                    inner: self.inner.clone(),
                    module,
                });
                self.modules
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key, m.clone());
                m
            }
        };
        names
            .iter()
            .map(|name| {
                let f: Arc<dyn CompiledFunction> =
                    self.function(&module, t, name, options.checked)?;
                Ok(f)
            })
            .collect()
    }
}

impl CudaUnits {
    /// The entry point `name` of a loaded unit.
    fn function(
        &self,
        module: &Arc<LoadedModule>,
        t: &ingot_msl::Translation,
        name: &str,
        checked: bool,
    ) -> Result<Arc<CudaFunction>> {
        self.inner.bind()?;
        let symbol = t.entries.get(name).map_or(name, String::as_str);
        let cname = CString::new(symbol)
            .map_err(|_| Error::Value(format!("kernel name {name:?} contains a NUL byte")))?;
        // SAFETY: the module is loaded; the name is NUL-terminated.
        let func = check(
            unsafe { result::module::get_function(module.module, cname) },
            &format!("cuModuleGetFunction({name})"),
        )?;
        let max_threads = unsafe {
            result::function::get_function_attribute(
                func,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
            )
        }
        .unwrap_or(1024)
        .clamp(1, 1024) as u32;
        // 0 marks a slot whose size the reflection does not know (not checked).
        let sizes = t.module.entry(name).map(|ep| {
            ep.abi
                .iter()
                .map(|&i| ep.params.get(i).and_then(|p| p.size).unwrap_or(0))
                .collect::<Vec<u32>>()
        });
        Ok(Arc::new(CudaFunction {
            inner: self.inner.clone(),
            _module: module.clone(),
            func,
            name: name.to_string(),
            max_threads,
            dynamic_smem_limit: AtomicU32::new(48 * 1024),
            raise_smem: Mutex::new(()),
            sizes,
            checked: if checked {
                t.module.entry(name).cloned()
            } else {
                None
            },
        }))
    }
}

/// One kernel launch: grid of blocks, block of threads, and the launch block for the wrapper.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub params: LaunchParams,
    pub blocks: u32,
    pub threads: u32,
}

/// True when a launch is one CUDA launch: a dispatch in groups, or a 1-D dispatch in threads.
fn is_single(l: &LaunchParams) -> bool {
    let multi_d = l.grid[1] > 1 || l.grid[2] > 1 || l.tg[1] > 1 || l.tg[2] > 1;
    l.exact == 0 || !multi_d
}

/// The whole grid as one region.
fn whole(l: &LaunchParams) -> Result<Region> {
    let mut p = *l;
    p.origin = [0; 3];
    p.region = l.groups;
    p.block = l.tg;
    region_of(p)
}

/// `LaunchParams::exact` bit the CUDA wrapper reads as "a linear region": one thread and one
/// group along axes 1 and 2, both at 0, so that it computes axis 0 alone (ABI.md, "CUDA").
pub const LAUNCH_LINEAR: u32 = 2;

fn region_of(mut p: LaunchParams) -> Result<Region> {
    let linear = p.block[1] <= 1
        && p.block[2] <= 1
        && p.region[1] <= 1
        && p.region[2] <= 1
        && p.origin[1] == 0
        && p.origin[2] == 0;
    if linear {
        p.exact |= LAUNCH_LINEAR;
    }
    let blocks: u64 = p.region.iter().map(|&r| r as u64).product();
    let threads: u64 = p.block.iter().map(|&b| b as u64).product();
    if blocks > i32::MAX as u64 {
        return Err(Error::Value(format!(
            "dispatch of {blocks} threadgroups exceeds the CUDA limit of {}",
            i32::MAX
        )));
    }
    Ok(Region {
        params: p,
        blocks: blocks as u32,
        threads: threads as u32,
    })
}

/// Splits a launch into CUDA launches that reproduce Metal's semantics exactly:
/// a dispatch in groups is one launch; a dispatch in threads is one launch in 1-D (threads past
/// the grid return at entry) and up to 8 in 2-D/3-D, where the edge groups run with their real,
/// smaller size so that SIMD-groups follow the actual width.
pub fn regions(l: &LaunchParams) -> Result<Vec<Region>> {
    let total_groups = l.total_groups();
    if total_groups == 0 || l.grid.contains(&0) {
        return Ok(Vec::new());
    }
    if is_single(l) {
        return Ok(vec![whole(l)?]);
    }
    let parts: [Vec<(u32, u32, u32)>; 3] = [0, 1, 2].map(|d| {
        let (full, rest) = (l.grid[d] / l.tg[d], l.grid[d] % l.tg[d]);
        let mut v = Vec::new();
        if full > 0 {
            v.push((0, full, l.tg[d]));
        }
        if rest > 0 {
            v.push((full, 1, rest));
        }
        v
    });
    let mut out = Vec::new();
    for &(ox, nx, bx) in &parts[0] {
        for &(oy, ny, by) in &parts[1] {
            for &(oz, nz, bz) in &parts[2] {
                let mut p = *l;
                p.origin = [ox, oy, oz];
                p.region = [nx, ny, nz];
                p.block = [bx, by, bz];
                out.push(region_of(p)?);
            }
        }
    }
    Ok(out)
}

impl CompiledFunction for CudaFunction {
    fn max_total_threads_per_threadgroup(&self) -> u32 {
        self.max_threads
    }

    fn slot_sizes(&self) -> Option<&[u32]> {
        self.sizes.as_deref()
    }

    fn launch(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<()> {
        if let Some(entry) = &self.checked {
            return self.launch_checked(launch, args, entry);
        }
        // The common case (1-D, or a dispatch in groups) is one region: no allocation.
        let single;
        let split;
        let regions: &[Region] = if is_single(launch) {
            if launch.total_groups() == 0 || launch.grid.contains(&0) {
                return Ok(());
            }
            single = [whole(launch)?];
            &single
        } else {
            split = regions(launch)?;
            &split
        };
        if regions.is_empty() {
            return Ok(());
        }
        self.inner.bind()?;
        let smem = launch.tgmem_total() as u32;
        self.ensure_smem_limit(smem)?;
        // Storage the parameter array points into; it lives until every cuLaunchKernel returned.
        // Small argument lists (all real kernels) stay on the stack: this is the launch hot path.
        let n_buffers = args
            .iter()
            .filter(|a| matches!(a, BoundArg::Buffer { .. }))
            .count();
        let mut pointers_inline = [0u64; INLINE_ARGS];
        let mut pointers_heap = Vec::new();
        let pointers: &mut [u64] = if n_buffers <= INLINE_ARGS {
            &mut pointers_inline[..n_buffers]
        } else {
            pointers_heap.resize(n_buffers, 0);
            &mut pointers_heap
        };
        let buffers = args.iter().filter_map(|a| match a {
            BoundArg::Buffer { buffer, offset, .. } => Some((buffer, *offset)),
            BoundArg::Bytes(_) => None,
        });
        for (slot, (buffer, offset)) in pointers.iter_mut().zip(buffers) {
            let base = buffer.device_ptr().ok_or_else(|| {
                Error::DeviceMismatch(format!(
                    "{}: a buffer on {} passed to a CUDA kernel",
                    self.name,
                    buffer.device()
                ))
            })?;
            *slot = base + offset as u64;
        }
        let mut raw_inline = [std::ptr::null_mut::<c_void>(); INLINE_ARGS + 1];
        let mut raw_heap = Vec::new();
        let raw: &mut [*mut c_void] = if args.len() < INLINE_ARGS {
            &mut raw_inline[..args.len() + 1]
        } else {
            raw_heap.resize(args.len() + 1, std::ptr::null_mut());
            &mut raw_heap
        };
        for r in regions {
            let mut params = r.params;
            raw[0] = &mut params as *mut LaunchParams as *mut c_void;
            let mut next_ptr = 0usize;
            for (slot, a) in raw[1..].iter_mut().zip(args) {
                *slot = match a {
                    BoundArg::Buffer { .. } => {
                        next_ptr += 1;
                        &mut pointers[next_ptr - 1] as *mut u64 as *mut c_void
                    }
                    BoundArg::Bytes(bytes) => bytes.as_ptr() as *mut c_void,
                };
            }
            // SAFETY: `raw` has one pointer per kernel parameter in the wrapper's order
            // (`ingot::launch`, then one per ABI slot), each valid for the call.
            unsafe {
                result::launch_kernel(
                    self.func,
                    (r.blocks, 1, 1),
                    (r.threads, 1, 1),
                    smem,
                    self.inner.stream(),
                    raw,
                )
            }
            .map_err(|e| self.inner.fault(e, &format!("launching {}", self.name)))?;
        }
        self.inner.note_launch(&self.name);
        Ok(())
    }

    fn time(&self, launch: &LaunchParams, args: &[BoundArg]) -> Result<f64> {
        if self.checked.is_some() {
            let t0 = std::time::Instant::now();
            self.launch(launch, args)?;
            return Ok(t0.elapsed().as_secs_f64());
        }
        self.inner.bind()?;
        let flags = sys::CUevent_flags::CU_EVENT_DEFAULT;
        let start = check(result::event::create(flags), "cuEventCreate")?;
        let end = check(result::event::create(flags), "cuEventCreate")?;
        let timed = (|| -> Result<f64> {
            // SAFETY: events and stream belong to the bound context.
            unsafe {
                check(
                    result::event::record(start, self.inner.stream()),
                    "cuEventRecord",
                )?;
                self.launch(launch, args)?;
                check(
                    result::event::record(end, self.inner.stream()),
                    "cuEventRecord",
                )?;
                result::event::synchronize(end)
                    .map_err(|e| self.inner.fault(e, &format!("timing {}", self.name)))?;
                let ms = check(result::event::elapsed(start, end), "cuEventElapsedTime")?;
                Ok(ms as f64 / 1e3)
            }
        })();
        // SAFETY: created above, destroyed once.
        unsafe {
            let _ = result::event::destroy(start);
            let _ = result::event::destroy(end);
        }
        timed
    }

    fn synchronize(&self) -> Result<()> {
        self.inner.synchronize()
    }
}

impl CudaFunction {
    fn ensure_smem_limit(&self, bytes: u32) -> Result<()> {
        if bytes <= self.dynamic_smem_limit.load(Ordering::Acquire) {
            return Ok(());
        }
        // Raised under a lock: two threads raising to different sizes must not leave the
        // attribute below the recorded limit.
        let _raising = self.raise_smem.lock().unwrap_or_else(|p| p.into_inner());
        if bytes <= self.dynamic_smem_limit.load(Ordering::Acquire) {
            return Ok(());
        }
        // SAFETY: raising a function attribute of a loaded function.
        unsafe {
            check(
                result::function::set_function_attribute(
                    self.func,
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes as i32,
                ),
                &format!(
                    "{}: {bytes} bytes of threadgroup memory exceed the device's limit",
                    self.name
                ),
            )?;
        }
        self.dynamic_smem_limit.store(bytes, Ordering::Release);
        Ok(())
    }
}

impl CudaFunction {
    /// A launch of a checked kernel: after the slots, each slot's length in bytes and a fault
    /// record in device memory (ABI.md, "Checked mode"). Each region is waited for and its
    /// record read, so a violation is raised by this call with the thread that made it.
    fn launch_checked(
        &self,
        launch: &LaunchParams,
        args: &[BoundArg],
        entry: &ingot_msl::EntryPoint,
    ) -> Result<()> {
        use crate::runtime::checked::{cuda_position, fault, ChkRecord};
        if launch.total_groups() == 0 || launch.grid.contains(&0) {
            return Ok(());
        }
        let regions = regions(launch)?;
        self.inner.bind()?;
        let smem = launch.tgmem_total() as u32;
        self.ensure_smem_limit(smem)?;
        let mut pointers = Vec::with_capacity(args.len());
        for a in args {
            pointers.push(match a {
                BoundArg::Buffer { buffer, offset, .. } => {
                    let base = buffer.device_ptr().ok_or_else(|| {
                        Error::DeviceMismatch(format!(
                            "{}: a buffer on {} passed to a CUDA kernel",
                            self.name,
                            buffer.device()
                        ))
                    })?;
                    base + *offset as u64
                }
                BoundArg::Bytes(_) => 0,
            });
        }
        let mut lengths: Vec<u64> = args
            .iter()
            .map(|a| match a {
                BoundArg::Buffer { nbytes, .. } => *nbytes as u64,
                BoundArg::Bytes(b) => b.len() as u64,
            })
            .collect();
        let size = std::mem::size_of::<ChkRecord>();
        // SAFETY: a plain device allocation in the bound context, freed below.
        let mut record_ptr: u64 = check(unsafe { result::malloc_sync(size) }, "cuMemAlloc")?;
        let outcome = (|| -> Result<()> {
            for r in &regions {
                let zero = [ChkRecord::default()];
                // SAFETY: `record_ptr` holds one record.
                check(
                    unsafe { result::memcpy_htod_sync(record_ptr, &zero) },
                    "cuMemcpyHtoD",
                )?;
                let mut params = r.params;
                let mut raw: Vec<*mut c_void> = Vec::with_capacity(2 * args.len() + 2);
                raw.push(&mut params as *mut LaunchParams as *mut c_void);
                for (k, a) in args.iter().enumerate() {
                    raw.push(match a {
                        BoundArg::Buffer { .. } => &mut pointers[k] as *mut u64 as *mut c_void,
                        BoundArg::Bytes(bytes) => bytes.as_ptr() as *mut c_void,
                    });
                }
                for l in lengths.iter_mut() {
                    raw.push(l as *mut u64 as *mut c_void);
                }
                raw.push(&mut record_ptr as *mut u64 as *mut c_void);
                // SAFETY: one pointer per wrapper parameter (launch block, slots, lengths,
                // record), each valid for the call.
                unsafe {
                    result::launch_kernel(
                        self.func,
                        (r.blocks, 1, 1),
                        (r.threads, 1, 1),
                        smem,
                        self.inner.stream(),
                        &mut raw,
                    )
                }
                .map_err(|e| self.inner.fault(e, &format!("launching {}", self.name)))?;
                self.inner.synchronize()?;
                let mut rec = [ChkRecord::default()];
                // SAFETY: as above; the launch has finished.
                check(
                    unsafe { result::memcpy_dtoh_sync(&mut rec, record_ptr) },
                    "cuMemcpyDtoH",
                )?;
                if rec[0].hit() {
                    let pos = cuda_position(&r.params, rec[0].pos[0], rec[0].pos[1]);
                    return Err(fault(&self.name, Some(entry), &rec[0], pos));
                }
            }
            Ok(())
        })();
        // SAFETY: allocated above; no launch uses it any more (each was waited for).
        let _ = unsafe { result::free_sync(record_ptr) };
        self.inner.note_launch(&self.name);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lp(grid: [u32; 3], tg: [u32; 3], exact: bool) -> LaunchParams {
        let groups = [0, 1, 2].map(|d| grid[d].div_ceil(tg[d]));
        LaunchParams {
            grid,
            tg,
            groups,
            origin: [0; 3],
            region: groups,
            block: tg,
            exact: exact as u32,
            ..Default::default()
        }
    }

    #[test]
    fn one_d_is_one_launch() {
        let r = regions(&lp([1000, 1, 1], [256, 1, 1], true)).unwrap();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].blocks, r[0].threads), (4, 256));
        assert_eq!(r[0].params.exact, 1 | LAUNCH_LINEAR);
    }

    #[test]
    fn only_regions_along_axis_0_are_linear() {
        // A 1-D grid of 2-D groups is split (edges of 1 row): still linear in every region.
        let r = regions(&lp([100, 1, 1], [16, 4, 1], true)).unwrap();
        assert!(r.iter().all(|x| x.params.exact & LAUNCH_LINEAR != 0));
        // 2-D grids: no region is.
        let r = regions(&lp([100, 30, 1], [16, 8, 1], true)).unwrap();
        assert!(r.iter().all(|x| x.params.exact == 1));
        // Groups along two axes (a dispatch in groups): not linear, not exact.
        let r = regions(&lp([64, 64, 1], [64, 1, 1], false)).unwrap();
        assert_eq!(r[0].params.exact, 0);
        let r = regions(&lp([64, 1, 1], [64, 1, 1], false)).unwrap();
        assert_eq!(r[0].params.exact, LAUNCH_LINEAR);
    }

    #[test]
    fn two_d_edges_get_their_own_block_shape() {
        let r = regions(&lp([100, 30, 1], [16, 8, 1], true)).unwrap();
        // x: 6 full + edge of 4; y: 3 full + edge of 6.
        assert_eq!(r.len(), 4);
        let threads: u64 = r.iter().map(|x| x.blocks as u64 * x.threads as u64).sum();
        assert_eq!(threads, 100 * 30);
        let corner = r
            .iter()
            .find(|x| x.params.origin == [6, 3, 0])
            .expect("corner region");
        assert_eq!(corner.params.block, [4, 6, 1]);
        assert_eq!(corner.blocks, 1);
    }

    #[test]
    fn groups_dispatch_is_one_launch_and_empty_is_none() {
        let mut l = lp([64, 64, 1], [8, 8, 1], false);
        l.exact = 0;
        assert_eq!(regions(&l).unwrap().len(), 1);
        assert!(regions(&lp([0, 4, 1], [8, 8, 1], true)).unwrap().is_empty());
    }
}
