//! The built-in kernel library: which module and instantiation each kernel comes from, compiling
//! a library on first use, finding kernels by name or by an allocation-free id, and the launch
//! shapes every op uses.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::device::Device;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernel::{CompileOptions, Dispatch, Kernel, KernelArg, Library};

/// The shared definitions prepended to every module.
const COMMON: &str = include_str!("../../../kernels/common.metal");

/// The kernel modules.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Module {
    Copy,
    Unary,
    Binary,
    Where,
    Reduce,
    Scan,
    Sort,
    Select,
    Gather,
    Random,
    Complex,
}

impl Module {
    fn source(self) -> &'static str {
        match self {
            Module::Copy => include_str!("../../../kernels/copy.metal"),
            Module::Unary => include_str!("../../../kernels/unary.metal"),
            Module::Binary => include_str!("../../../kernels/binary.metal"),
            Module::Where => include_str!("../../../kernels/where.metal"),
            Module::Reduce => include_str!("../../../kernels/reduce.metal"),
            Module::Scan => include_str!("../../../kernels/scan.metal"),
            Module::Sort => include_str!("../../../kernels/sort.metal"),
            // The selections use the sort keys (and sort on the way to `unique` and `isin`).
            Module::Select => concat!(
                include_str!("../../../kernels/sort.metal"),
                "\n",
                include_str!("../../../kernels/select.metal")
            ),
            Module::Gather => include_str!("../../../kernels/gather.metal"),
            Module::Random => include_str!("../../../kernels/random.metal"),
            Module::Complex => include_str!("../../../kernels/cmath.metal"),
        }
    }

    fn file(self) -> &'static str {
        match self {
            Module::Copy => "copy.metal",
            Module::Unary => "unary.metal",
            Module::Binary => "binary.metal",
            Module::Where => "where.metal",
            Module::Reduce => "reduce.metal",
            Module::Scan => "scan.metal",
            Module::Sort => "sort.metal",
            Module::Select => "select.metal",
            Module::Gather => "gather.metal",
            Module::Random => "random.metal",
            Module::Complex => "cmath.metal",
        }
    }
}

/// One explicit instantiation: the host name and the template expression (`copy_contig<float, half>`).
pub(crate) struct Inst {
    pub name: String,
    pub expr: String,
}

impl Inst {
    pub fn new(template: &str, op: &str, dtypes: &[DType], args: &str) -> Inst {
        let mut name = format!("{template}__{op}");
        for d in dtypes {
            name.push('_');
            name.push_str(d.short_name());
        }
        Inst {
            name,
            expr: format!("{template}<{args}>"),
        }
    }
}

/// Whether `device` holds float64 arrays (Metal GPUs do not).
pub(crate) fn has_f64(device: Device) -> bool {
    crate::runtime::check_dtype(device, DType::Float64).is_ok()
}

/// The MSL element type of a dtype in the kernels.
pub(crate) fn ty(d: DType) -> &'static str {
    d.msl_name()
}

/// Whether libraries bundle every op of a module (the CPU engine, where each compile is a C++
/// compiler run) or hold a single op (GPUs).
pub(crate) fn bundle(device: Device) -> bool {
    device == Device::Cpu
}

/// One instantiation of a kernel template, named without building a string: the launch path
/// looks kernels up by this (a small-op launch is a few microseconds; formatting the name and
/// hashing it was a noticeable share of the host time).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct KernelId {
    template: &'static str,
    op: &'static str,
    dtypes: [Option<DType>; 2],
}

impl KernelId {
    /// The instantiation of `template` for `op` over `dtypes` (at most two).
    pub fn new(template: &'static str, op: &'static str, dtypes: &[DType]) -> KernelId {
        debug_assert!(dtypes.len() <= 2);
        KernelId {
            template,
            op,
            dtypes: [dtypes.first().copied(), dtypes.get(1).copied()],
        }
    }

    /// The kernel's name in its library (as [`Inst::new`] names it).
    fn name(&self) -> String {
        let dts: Vec<DType> = self.dtypes.iter().flatten().copied().collect();
        Inst::new(self.template, self.op, &dts, "").name
    }
}

type KernelCache = Mutex<HashMap<(Device, String), Kernel>>;

fn cache() -> &'static KernelCache {
    static CACHE: OnceLock<KernelCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

type LaunchCache = Mutex<HashMap<(Device, KernelId), Kernel>>;

fn launch_cache() -> &'static LaunchCache {
    static CACHE: OnceLock<LaunchCache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The kernel `id`, compiling on a miss the library made of `module` and the instantiations
/// `insts()` (which must include `id`).
pub(crate) fn kernel(
    device: Device,
    module: Module,
    id: KernelId,
    insts: impl FnOnce() -> Vec<Inst>,
) -> Result<Kernel> {
    if let Some(k) = launch_cache().lock().map_err(poisoned)?.get(&(device, id)) {
        return Ok(k.clone());
    }
    let k = kernel_named(device, module, &id.name(), insts)?;
    launch_cache()
        .lock()
        .map_err(poisoned)?
        .insert((device, id), k.clone());
    Ok(k)
}

/// The kernel `name`, compiling on a miss the library made of `module` and the instantiations
/// `insts()` (which must include `name`); every instantiation of the library is cached by name.
fn kernel_named(
    device: Device,
    module: Module,
    name: &str,
    insts: impl FnOnce() -> Vec<Inst>,
) -> Result<Kernel> {
    let key = (device, name.to_string());
    if let Some(k) = cache().lock().map_err(poisoned)?.get(&key) {
        return Ok(k.clone());
    }
    let mut list = insts();
    let mut seen = std::collections::HashSet::new();
    list.retain(|i| seen.insert(i.name.clone()));
    let mut src = device_defines(device)?;
    src.push_str(COMMON);
    src.push('\n');
    src.push_str(module.source());
    src.push('\n');
    for i in &list {
        src.push_str(&format!(
            "template [[host_name(\"{}\")]] [[kernel]] decltype({}) {};\n",
            i.name, i.expr, i.expr
        ));
    }
    let options = CompileOptions {
        file_name: format!("ingot/kernels/{}", module.file()),
        ..CompileOptions::default()
    };
    let lib = Library::compile(&src, device, &options)?;
    // The instantiations share their templates: one unit, one compiler run.
    let names: Vec<&str> = list.iter().map(|i| i.name.as_str()).collect();
    let kernels = lib.unit(&names, &Default::default())?;
    let mut map = cache().lock().map_err(poisoned)?;
    for (i, k) in list.iter().zip(kernels) {
        map.insert((device, i.name.clone()), k);
    }
    map.get(&key).cloned().ok_or_else(|| {
        Error::Compile(format!(
            "internal: kernel {name} missing from its generated library"
        ))
    })
}

/// The shared definitions of the built-in library, its elementwise functors (`op_<name>` of
/// `unary.metal`, `bop_<name>` of `binary.metal`, the `cvt` conversions of `common.metal`) and
/// its reduction accumulators (`red_<name>` and `group_combine` of `reduce.metal`),
/// with the defines `device` needs: the prelude of generated kernels (`ingot.fuse`), so that a
/// fused expression computes each op exactly as the built-in op does.
pub fn functor_source(device: Device) -> Result<String> {
    let mut src = device_defines(device)?;
    for part in [
        COMMON,
        Module::Unary.source(),
        Module::Binary.source(),
        Module::Reduce.source(),
    ] {
        src.push_str(part);
        src.push('\n');
    }
    Ok(src)
}

/// The complex functions of the GPUs (`cmath.metal`: `cop_<name>` functors, `cpow`, the
/// `cunary` and `cpow_parts` kernel templates) with the shared definitions and the defines
/// `device` needs: tests compile it on the CPU engine against the CPU's own complex functions.
pub fn cmath_source(device: Device) -> Result<String> {
    let mut src = device_defines(device)?;
    src.push_str(COMMON);
    src.push('\n');
    src.push_str(Module::Complex.source());
    src.push('\n');
    Ok(src)
}

/// The defines every built-in source starts with on `device`: no float64, native Metal.
fn device_defines(device: Device) -> Result<String> {
    let mut src = String::new();
    if !has_f64(device) {
        src.push_str("#define INGOT_NO_F64 1\n");
    }
    if crate::kernel::backend(device)?.native_msl() {
        src.push_str("#define INGOT_NATIVE_METAL 1\n");
    }
    Ok(src)
}

fn poisoned<T>(_: T) -> Error {
    Error::Device("kernel cache lock poisoned by a panic".into())
}

/// Threads per threadgroup of every kernel.
pub(crate) const TG: u32 = 256;

/// The most threadgroups a grid-stride kernel is given: enough to fill a large GPU several
/// times over (132 multiprocessors x 8 groups of 256 threads on an H100), a few per core on
/// the CPU engine.
pub(crate) fn max_groups(device: Device) -> u32 {
    match device {
        Device::Cpu => 64,
        _ => 1056,
    }
}

/// Threadgroups for `items` units of work of a grid-stride kernel, `per_thread` units each.
pub(crate) fn groups_for(device: Device, items: u64, per_thread: u64) -> u32 {
    let threads = items.div_ceil(per_thread.max(1));
    threads
        .div_ceil(TG as u64)
        .clamp(1, max_groups(device) as u64) as u32
}

/// Threadgroups of a chunked contiguous kernel (`INGOT_CHUNKS` in `common.metal`) over `packs`
/// 16-byte packs: one pass, each group 2 x [`TG`] packs, so that each group streams one
/// contiguous span (capped only on the CPU engine, where a group is a unit of scheduling).
pub(crate) fn chunk_groups(device: Device, packs: u64) -> u32 {
    let cap: u64 = match device {
        Device::Cpu => max_groups(device) as u64,
        _ => 1 << 22,
    };
    packs.div_ceil(2 * TG as u64).clamp(1, cap) as u32
}

/// Launches `k` over `groups` threadgroups of [`TG`] threads.
pub(crate) fn launch(k: &Kernel, args: &[KernelArg], groups: u32) -> Result<()> {
    let d = Dispatch::groups(&[groups.max(1)]).with_threadgroup(&[TG])?;
    k.launch(args, &d)
}
