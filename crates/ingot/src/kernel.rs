//! User kernels: compile MSL source, reflect its entry points, bind arguments, launch.
//!
//! ```no_run
//! use ingot::kernel::{Dispatch, Library, KernelArg, CompileOptions};
//! use ingot::{Array, Device};
//! let src = r#"
//!     #include <metal_stdlib>
//!     using namespace metal;
//!     kernel void mul(const device float* a [[buffer(0)]], const device float* b [[buffer(1)]],
//!                     device float* c [[buffer(2)]], uint i [[thread_position_in_grid]]) {
//!         c[i] = a[i] * b[i];
//!     }"#;
//! let lib = Library::compile(src, Device::Cpu, &CompileOptions::default()).unwrap();
//! let k = lib.function("mul").unwrap();
//! let a = Array::from_vec(vec![1.0f32, 2.0, 3.0], &[3], Device::Cpu).unwrap();
//! let c = Array::empty(&[3], ingot::DType::Float32, Device::Cpu).unwrap();
//! k.launch(&[a.clone().into(), a.into(), c.clone().into()], &Dispatch::threads(&[3])).unwrap();
//! assert_eq!(c.to_vec::<f32>().unwrap(), vec![1.0, 4.0, 9.0]);
//! ```
//!
//! # Compilation per entry point
//!
//! [`Library::compile`] reflects every entry point and compiles none. An entry point is
//! compiled when first obtained ([`Library::function`], [`Library::function_with`] with
//! function-constant values, [`Library::prepare`] for several in parallel), in a unit of its
//! own (the other kernels' definitions are left out of the translated text), cached in memory
//! and on disk. A kernel whose code does not compile fails when it is obtained, naming it; the
//! others are not affected.
//!
//! # Arguments
//!
//! Positional arguments bind to the kernel's buffer and bytes parameters in **buffer-index
//! order** (the ABI order of `ingot-msl/ABI.md`; for the usual kernel this is declaration
//! order). Builtin-role and `[[threadgroup(n)]]` parameters take no argument.
//!
//! - A **buffer** parameter (`device T*`, `constant T*`) takes an [`Array`] on the kernel's
//!   device. The array's dtype must be the pointee's element type: `float*` takes float32,
//!   `atomic_uint*` uint32, and a vector pointee `float4*` takes float32 arrays whose byte size
//!   is a multiple of `sizeof(float4)` (16; also for `float3`, which is padded to 16 bytes in
//!   MSL). Byte pointers (`uchar*`, `char*`, `uint8_t*`, `int8_t*`, `void*`) and pointers to
//!   structs accept any dtype. A writable parameter (a pointer to non-const `device` memory)
//!   needs a writable, contiguous array; the kernel writes it in place. A read-only parameter
//!   needs a contiguous array too (a kernel sees raw memory): `ingot::ops::contiguous_inputs`
//!   replaces non-contiguous arrays of read-only parameters by contiguous copies, as the Python
//!   API does. Host bytes ([`KernelArg::Bytes`]) are accepted for read-only buffer parameters
//!   (copied to a temporary buffer).
//! - A **bytes** parameter (`constant T&`) takes a [`KernelArg::Scalar`] converted to `T` with
//!   a range check (an integer parameter rejects out-of-range and non-integral values), or
//!   [`KernelArg::Bytes`] of exactly `sizeof(T)` (structs, vectors), or a small array whose
//!   elements fill a vector `T` (`float3` from 3 float32 values).
//!
//! # Dispatch
//!
//! [`Dispatch::threads`] counts threads (Metal `dispatchThreads`: exactly that many run, edge
//! groups are smaller); [`Dispatch::groups`] counts threadgroups (`dispatchThreadgroups`).
//! Without an explicit threadgroup size: 1-D `min(grid, 256)` rounded up to a multiple of 32;
//! 2-D `16 x 16` and 3-D `8 x 8 x 4`, each axis clipped to the grid (for a dispatch in threads);
//! always clipped to the kernel's maximum threads per threadgroup.

use std::collections::BTreeMap;
use std::sync::Arc;

pub use crate::runtime::kernel::{
    stats, BoundArg, CompileOptions, CompiledEntry, CompiledFunction, CompiledLibrary, Constants,
    KernelBackend, LaunchParams, MathMode,
};

use crate::array::Array;
use crate::device::Device;
use crate::dtype::{DType, Kind, Scalar};
use crate::error::{Error, Result};
use ingot_msl::{ParamKind, ScalarKind};

/// Checked mode's default: true when `INGOT_CHECKED` is set to anything but `0`, `false`,
/// `no`, `off` or nothing.
pub fn checked_from_env() -> bool {
    std::env::var("INGOT_CHECKED").is_ok_and(|v| {
        !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no" | "off"
        )
    })
}

/// The kernel engine of `device`.
pub fn backend(device: Device) -> Result<Arc<dyn KernelBackend>> {
    device.runtime()?.kernels()
}

/// A compiled MSL source file: a set of entry points for one device.
#[derive(Clone)]
pub struct Library {
    device: Device,
    compiled: Arc<dyn CompiledLibrary>,
    backend: Arc<dyn KernelBackend>,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Library(device={}, functions={:?})",
            self.device,
            self.functions()
        )
    }
}

impl Library {
    /// Prepares `source` for `device`: reflects every entry point and compiles none. Each
    /// entry point is compiled (in a unit of its own, cached in memory and on disk) when it is
    /// first obtained with [`Library::function`], [`Library::function_with`],
    /// [`Library::unit`] or [`Library::prepare`]. Function constants given in `options` apply
    /// to every function; those a function needs may also be given when it is obtained.
    pub fn compile(source: &str, device: Device, options: &CompileOptions) -> Result<Library> {
        let backend = backend(device)?;
        let compiled = backend.compile(source, options)?;
        Ok(Library {
            device,
            compiled,
            backend,
        })
    }

    /// The device the library runs on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The host names of the entry points, in source order.
    pub fn functions(&self) -> Vec<String> {
        self.compiled
            .module()
            .entry_points
            .iter()
            .map(|e| e.name.clone())
            .collect()
    }

    /// The reflection of the source (the library's own function constants applied).
    pub fn module(&self) -> &ingot_msl::Module {
        self.compiled.module()
    }

    /// How many units (sets of entry points with their function-constant values) this
    /// library has compiled or loaded so far.
    pub fn compiled_units(&self) -> usize {
        self.compiled.units()
    }

    fn check_name(&self, name: &str) -> Result<()> {
        if self.compiled.module().entry(name).is_some() {
            return Ok(());
        }
        Err(Error::KernelArgument(format!(
            "no kernel function named {name:?} in this library; available: {}",
            list_or_none(&self.functions())
        )))
    }

    /// The entry point `name`, compiled on first use with the library's function constants.
    /// An unknown name is [`Error::KernelArgument`] listing the available ones.
    pub fn function(&self, name: &str) -> Result<Kernel> {
        self.function_with(name, &Constants::new())
    }

    /// The entry point `name` specialised with `constants` (function-constant values by name,
    /// or by index written in decimal), merged over the library's: Metal's
    /// `newFunctionWithName:constantValues:`. Each specialisation is compiled once and cached.
    /// Only the constants the entry's code uses are required; a missing one is
    /// [`Error::KernelArgument`] naming it.
    pub fn function_with(&self, name: &str, constants: &Constants) -> Result<Kernel> {
        self.check_name(name)?;
        let c = self.compiled.function(name, constants)?;
        Ok(self.kernel(name, c))
    }

    /// Compiles the entry points `names` together, as one unit (one compiler run), and
    /// returns them in that order. For families of kernels that share most of their code.
    pub fn unit(&self, names: &[&str], constants: &Constants) -> Result<Vec<Kernel>> {
        for n in names {
            self.check_name(n)?;
        }
        let owned: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let v = self.compiled.unit(&owned, constants)?;
        Ok(names
            .iter()
            .zip(v)
            .map(|(n, c)| self.kernel(n, c))
            .collect())
    }

    /// Compiles each of `names` in a unit of its own, the units in parallel, and returns the
    /// kernels in that order (the first error, if any, names its entry point).
    pub fn prepare(&self, names: &[&str], constants: &Constants) -> Result<Vec<Kernel>> {
        use rayon::prelude::*;
        for n in names {
            self.check_name(n)?;
        }
        names
            .par_iter()
            .map(|n| self.function_with(n, constants))
            .collect()
    }

    fn kernel(&self, name: &str, c: CompiledEntry) -> Kernel {
        let CompiledEntry { entry, function } = c;
        let max_threads = function
            .max_total_threads_per_threadgroup()
            .min(self.backend.max_threads_per_threadgroup())
            .max(1);
        let params: Vec<ParamInfo> = entry.params.iter().map(ParamInfo::from_msl).collect();
        let mut args: Vec<usize> = (0..params.len())
            .filter(|&i| params[i].arg_position.is_some())
            .collect();
        args.sort_by_key(|&i| params[i].arg_position);
        Kernel {
            inner: Arc::new(KernelInner {
                name: name.to_string(),
                device: self.device,
                entry,
                params,
                args,
                function,
                max_threads,
                max_tgmem: self.backend.max_threadgroup_memory(),
            }),
        }
    }
}

fn list_or_none(names: &[String]) -> String {
    // A library of hundreds of kernels would bury the message: name the first ones.
    const SHOWN: usize = 24;
    if names.is_empty() {
        "none (the source defines no kernel)".to_string()
    } else if names.len() > SHOWN {
        format!(
            "{}, ... ({} in all)",
            names[..SHOWN].join(", "),
            names.len()
        )
    } else {
        names.join(", ")
    }
}

/// How a parameter is bound.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ParamRole {
    /// A pointer bound to an array (`device T*`, `constant T*`).
    Buffer,
    /// A value bound from host bytes (`constant T&`).
    Bytes,
    /// Dynamic threadgroup memory (`threadgroup T* [[threadgroup(n)]]`), sized at launch.
    Threadgroup,
    /// A builtin value (`[[thread_position_in_grid]]`, ...), supplied by the device.
    Builtin,
}

impl ParamRole {
    /// `"buffer"`, `"bytes"`, `"threadgroup"` or `"builtin"`.
    pub fn name(self) -> &'static str {
        match self {
            ParamRole::Buffer => "buffer",
            ParamRole::Bytes => "bytes",
            ParamRole::Threadgroup => "threadgroup",
            ParamRole::Builtin => "builtin",
        }
    }
}

/// Whether the kernel may write a parameter.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// `const` or `constant` memory, bytes, builtins.
    Read,
    /// A pointer to non-const `device` (or threadgroup) memory.
    ReadWrite,
}

impl Access {
    /// `"read"` or `"read_write"`.
    pub fn name(self) -> &'static str {
        match self {
            Access::Read => "read",
            Access::ReadWrite => "read_write",
        }
    }
}

/// The reflection of one kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamInfo {
    /// The declared name.
    pub name: String,
    /// How it is bound.
    pub kind: ParamRole,
    /// `[[buffer(n)]]` (explicit or implied) for buffers and bytes, `[[threadgroup(n)]]` for
    /// threadgroup memory, `None` for builtins.
    pub index: Option<u32>,
    /// The element dtype of the pointee (`float4*` -> float32, `atomic_uint*` -> uint32,
    /// `uchar*` -> uint8, which accepts any dtype); `None` for `void*`, structs and template
    /// types ingot does not know.
    pub dtype: Option<DType>,
    /// Lanes of a vector pointee (`float4` -> 4; 1 for scalars).
    pub lanes: u32,
    /// Size in bytes of the pointee in MSL layout, when known.
    pub value_size: Option<usize>,
    /// True when a buffer parameter accepts arrays of any dtype (byte pointers, structs).
    pub any_dtype: bool,
    /// Read-only or writable.
    pub access: Access,
    /// The builtin role's attribute name (`thread_position_in_grid`...).
    pub role: Option<&'static str>,
    /// The declared type as written (`device const float*`).
    pub type_name: String,
    /// The value type (`float`, `Params`).
    pub pointee: String,
    /// Position among the launch arguments (`None` for builtins, threadgroup memory and
    /// parameters removed by a false function constant).
    pub arg_position: Option<usize>,
    /// 1-based line of the declaration.
    pub line: u32,
}

fn dtype_of(s: ScalarKind) -> DType {
    match s {
        ScalarKind::Bool => DType::Bool,
        ScalarKind::I8 => DType::Int8,
        ScalarKind::U8 => DType::UInt8,
        ScalarKind::I16 => DType::Int16,
        ScalarKind::U16 => DType::UInt16,
        ScalarKind::I32 => DType::Int32,
        ScalarKind::U32 => DType::UInt32,
        ScalarKind::I64 => DType::Int64,
        ScalarKind::U64 => DType::UInt64,
        ScalarKind::F16 => DType::Float16,
        ScalarKind::BF16 => DType::BFloat16,
        ScalarKind::F32 => DType::Float32,
        ScalarKind::F64 => DType::Float64,
    }
}

impl ParamInfo {
    /// The kernel API's view of a reflected MSL parameter.
    pub(crate) fn from_msl(p: &ingot_msl::Param) -> ParamInfo {
        let kind = match p.kind {
            ParamKind::Buffer => ParamRole::Buffer,
            ParamKind::Bytes => ParamRole::Bytes,
            ParamKind::Threadgroup => ParamRole::Threadgroup,
            ParamKind::Builtin => ParamRole::Builtin,
        };
        let info = p.info;
        let dtype = info.map(|t| dtype_of(t.scalar));
        let byte_pointer = matches!(
            info,
            Some(t) if t.lanes == 1 && t.columns == 0 && !t.atomic
                && matches!(t.scalar, ScalarKind::U8 | ScalarKind::I8)
        );
        let access = match kind {
            ParamRole::Buffer | ParamRole::Threadgroup if !p.is_const => Access::ReadWrite,
            _ => Access::Read,
        };
        let index = match kind {
            ParamRole::Buffer | ParamRole::Bytes => p.buffer_index,
            ParamRole::Threadgroup => p.threadgroup_index,
            ParamRole::Builtin => None,
        };
        ParamInfo {
            name: p.name.clone(),
            kind,
            index,
            dtype,
            lanes: info.map_or(1, |t| t.lanes.max(1) * t.columns.max(1)),
            value_size: p.size.map(|s| s as usize).or(info.map(|t| t.size as usize)),
            any_dtype: kind == ParamRole::Buffer && (info.is_none() || byte_pointer),
            access,
            role: p.role.map(|r| r.name()),
            type_name: p.ty.clone(),
            pointee: p.pointee.clone(),
            arg_position: if p.active { p.abi_slot } else { None },
            line: p.line,
        }
    }

    fn describe(&self) -> String {
        match self.index {
            Some(i) if self.kind == ParamRole::Threadgroup => {
                format!("parameter `{}` ([[threadgroup({i})]])", self.name)
            }
            Some(i) => format!(
                "parameter `{}` ([[buffer({i})]], {})",
                self.name, self.type_name
            ),
            None => format!("parameter `{}`", self.name),
        }
    }
}

/// One launch argument.
#[derive(Clone, Debug)]
pub enum KernelArg {
    /// An array, bound as a buffer (written in place for writable parameters).
    Array(Array),
    /// A number, bound to a `constant T&` parameter converted to `T`.
    Scalar(Scalar),
    /// Raw host bytes: a struct or vector for `constant T&`, or data for a read-only buffer.
    Bytes(Vec<u8>),
}

/// A launch with its dispatch and trailing arguments checked and converted once
/// ([`Kernel::prepare_launch`]).
#[derive(Clone, Debug)]
pub struct PreparedLaunch {
    launch: LaunchParams,
    head: usize,
    tail: Vec<BoundArg>,
}

impl From<Array> for KernelArg {
    fn from(a: Array) -> Self {
        KernelArg::Array(a)
    }
}

impl From<&Array> for KernelArg {
    fn from(a: &Array) -> Self {
        KernelArg::Array(a.clone())
    }
}

impl From<Scalar> for KernelArg {
    fn from(s: Scalar) -> Self {
        KernelArg::Scalar(s)
    }
}

impl From<Vec<u8>> for KernelArg {
    fn from(b: Vec<u8>) -> Self {
        KernelArg::Bytes(b)
    }
}

macro_rules! scalar_arg {
    ($($t:ty => $v:ident as $c:ty),*) => {$(
        impl From<$t> for KernelArg {
            fn from(x: $t) -> Self {
                KernelArg::Scalar(Scalar::$v(x as $c))
            }
        }
    )*};
}
scalar_arg!(i8 => Int as i64, i16 => Int as i64, i32 => Int as i64, i64 => Int as i64,
    u8 => UInt as u64, u16 => UInt as u64, u32 => UInt as u64, u64 => UInt as u64,
    f32 => Float as f64, f64 => Float as f64);

impl From<bool> for KernelArg {
    fn from(b: bool) -> Self {
        KernelArg::Scalar(Scalar::Bool(b))
    }
}

/// The extent of a dispatch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Grid {
    /// Threads per grid (Metal `dispatchThreads`): exactly this many threads run.
    Threads {
        /// Threads along x, y, z.
        grid: [u32; 3],
        /// 1, 2 or 3: how many axes were given (chooses the default threadgroup shape).
        dims: u8,
    },
    /// Threadgroups per grid (Metal `dispatchThreadgroups`): every group is full.
    Groups {
        /// Groups along x, y, z.
        groups: [u32; 3],
        /// 1, 2 or 3: how many axes were given.
        dims: u8,
    },
}

/// How a kernel is launched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dispatch {
    /// The grid, in threads or in groups.
    pub grid: Grid,
    /// Threads per threadgroup; `None` picks the default (see the module docs).
    pub threadgroup: Option<[u32; 3]>,
    /// Bytes of dynamic threadgroup memory for each `[[threadgroup(n)]]` index.
    pub threadgroup_memory: BTreeMap<u32, usize>,
}

fn dims3(shape: &[u32], what: &str) -> Result<([u32; 3], u8)> {
    if shape.is_empty() || shape.len() > 3 {
        return Err(Error::KernelArgument(format!(
            "{what} must have 1 to 3 dimensions, got {}",
            shape.len()
        )));
    }
    let mut out = [1u32; 3];
    out[..shape.len()].copy_from_slice(shape);
    Ok((out, shape.len() as u8))
}

impl Dispatch {
    /// A dispatch of exactly `grid` threads (1 to 3 axes; panics on more than 3 axes —
    /// use [`Dispatch::try_threads`] with untrusted input).
    pub fn threads(grid: &[u32]) -> Dispatch {
        Dispatch::try_threads(grid).expect("1 to 3 axes")
    }

    /// A dispatch of exactly `grid` threads (1 to 3 axes).
    pub fn try_threads(grid: &[u32]) -> Result<Dispatch> {
        let (grid, dims) = dims3(grid, "grid")?;
        Ok(Dispatch {
            grid: Grid::Threads { grid, dims },
            threadgroup: None,
            threadgroup_memory: BTreeMap::new(),
        })
    }

    /// A dispatch of `groups` threadgroups (1 to 3 axes; panics on more than 3 axes —
    /// use [`Dispatch::try_groups`] with untrusted input).
    pub fn groups(groups: &[u32]) -> Dispatch {
        Dispatch::try_groups(groups).expect("1 to 3 axes")
    }

    /// A dispatch of `groups` threadgroups (1 to 3 axes).
    pub fn try_groups(groups: &[u32]) -> Result<Dispatch> {
        let (groups, dims) = dims3(groups, "groups")?;
        Ok(Dispatch {
            grid: Grid::Groups { groups, dims },
            threadgroup: None,
            threadgroup_memory: BTreeMap::new(),
        })
    }

    /// Sets the threadgroup size (1 to 3 axes, missing axes are 1).
    pub fn with_threadgroup(mut self, tg: &[u32]) -> Result<Dispatch> {
        self.threadgroup = Some(dims3(tg, "threadgroup")?.0);
        Ok(self)
    }

    /// Sets the dynamic threadgroup memory of `[[threadgroup(index)]]`.
    pub fn with_threadgroup_memory(mut self, index: u32, nbytes: usize) -> Dispatch {
        self.threadgroup_memory.insert(index, nbytes);
        self
    }
}

/// A launchable entry point of a [`Library`]. Cheap to clone.
#[derive(Clone)]
pub struct Kernel {
    inner: Arc<KernelInner>,
}

struct KernelInner {
    name: String,
    device: Device,
    entry: ingot_msl::EntryPoint,
    params: Vec<ParamInfo>,
    /// Indices into `params` of the parameters that take an argument, in argument order
    /// (computed once: launches are on the hot path).
    args: Vec<usize>,
    function: Arc<dyn CompiledFunction>,
    max_threads: u32,
    max_tgmem: usize,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel({}, device={})",
            self.inner.name, self.inner.device
        )
    }
}

/// The largest dynamic threadgroup memory index (`[[threadgroup(n)]]`, n < 8).
pub const MAX_THREADGROUP_INDICES: u32 = 8;

impl Kernel {
    /// The entry point's host name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The device it runs on.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Every parameter, in declaration order.
    pub fn parameters(&self) -> &[ParamInfo] {
        &self.inner.params
    }

    /// The parameters that take a launch argument, in argument order.
    pub fn arguments(&self) -> Vec<&ParamInfo> {
        self.argument_params().collect()
    }

    /// The parameters that take a launch argument, in argument order, without allocating.
    pub fn argument_params(&self) -> impl ExactSizeIterator<Item = &ParamInfo> + '_ {
        self.inner.args.iter().map(|&i| &self.inner.params[i])
    }

    /// The reflection of the entry point.
    pub fn entry_point(&self) -> &ingot_msl::EntryPoint {
        &self.inner.entry
    }

    /// The largest threadgroup this kernel accepts.
    pub fn max_total_threads_per_threadgroup(&self) -> u32 {
        self.inner.max_threads
    }

    /// Validates and launches. Arrays are written in place; on an asynchronous device the
    /// launch is queued (reading a result synchronises).
    pub fn launch(&self, args: &[KernelArg], dispatch: &Dispatch) -> Result<()> {
        let (launch, bound) = self.prepare(args, dispatch)?;
        if launch.total_groups() == 0 {
            return Ok(());
        }
        self.inner.function.launch(&launch, &bound)
    }

    /// The metalcompute form: a 1-D grid of exactly `count` threads.
    pub fn call(&self, count: u32, args: &[KernelArg]) -> Result<()> {
        self.launch(args, &Dispatch::threads(&[count]))
    }

    /// Validates, launches, waits, and returns the device time of the launch in seconds.
    pub fn time(&self, args: &[KernelArg], dispatch: &Dispatch) -> Result<f64> {
        let (launch, bound) = self.prepare(args, dispatch)?;
        if launch.total_groups() == 0 {
            return Ok(0.0);
        }
        self.inner.function.time(&launch, &bound)
    }

    /// Checks `args` and `dispatch` against the reflection and returns what the backend runs.
    pub fn prepare(
        &self,
        args: &[KernelArg],
        dispatch: &Dispatch,
    ) -> Result<(LaunchParams, Vec<BoundArg>)> {
        let bound = self.bind(args)?;
        let launch = self.resolve(dispatch)?;
        Ok((launch, bound))
    }

    /// The launch block for `dispatch`, validated against the kernel's limits.
    pub fn resolve(&self, dispatch: &Dispatch) -> Result<LaunchParams> {
        let k = &self.inner;
        let max = k.max_threads;
        let (tg, grid, groups, exact) = match dispatch.grid {
            Grid::Threads { grid, dims } => {
                let tg = match dispatch.threadgroup {
                    Some(tg) => tg,
                    None => default_threadgroup(Some(grid), dims, max),
                };
                check_tg(&k.name, tg, max)?;
                let mut groups = [0u32; 3];
                for a in 0..3 {
                    groups[a] = grid[a].div_ceil(tg[a]);
                }
                (tg, grid, groups, 1)
            }
            Grid::Groups { groups, dims } => {
                let tg = match dispatch.threadgroup {
                    Some(tg) => tg,
                    None => default_threadgroup(None, dims, max),
                };
                check_tg(&k.name, tg, max)?;
                let mut grid = [0u32; 3];
                for a in 0..3 {
                    grid[a] = groups[a].checked_mul(tg[a]).ok_or_else(|| {
                        Error::KernelArgument(format!(
                            "kernel `{}`: {} groups of {} threads along axis {a} exceed 2^32 threads",
                            k.name, groups[a], tg[a]
                        ))
                    })?;
                }
                (tg, grid, groups, 0)
            }
        };
        if groups.iter().map(|&g| g as u64).product::<u64>() > u32::MAX as u64 {
            return Err(Error::KernelArgument(format!(
                "kernel `{}`: {groups:?} threadgroups exceed 2^32 groups",
                k.name
            )));
        }
        let mut launch = LaunchParams {
            grid,
            tg,
            groups,
            origin: [0; 3],
            region: groups,
            block: tg,
            exact,
            ..Default::default()
        };
        // Dynamic threadgroup memory.
        for (&i, _) in dispatch.threadgroup_memory.iter() {
            let declared = k
                .params
                .iter()
                .any(|p| p.kind == ParamRole::Threadgroup && p.index == Some(i));
            if !declared {
                return Err(Error::KernelArgument(format!(
                    "kernel `{}` has no [[threadgroup({i})]] parameter (threadgroup_memory given for index {i}){}",
                    k.name,
                    self.threadgroup_hint()
                )));
            }
        }
        let mut offset = 0usize;
        for p in k.params.iter().filter(|p| p.kind == ParamRole::Threadgroup) {
            let i = p.index.unwrap_or(0);
            if i >= MAX_THREADGROUP_INDICES {
                return Err(Error::KernelArgument(format!(
                    "kernel `{}`: {} uses threadgroup index {i}; at most {} are supported",
                    k.name,
                    p.describe(),
                    MAX_THREADGROUP_INDICES
                )));
            }
            let Some(&n) = dispatch.threadgroup_memory.get(&i) else {
                return Err(Error::KernelArgument(format!(
                    "kernel `{}`: {} needs threadgroup memory: pass threadgroup_memory={{{i}: nbytes}}",
                    k.name,
                    p.describe()
                )));
            };
            let size = n.div_ceil(16) * 16;
            if size == 0 {
                return Err(Error::KernelArgument(format!(
                    "kernel `{}`: {} was given 0 bytes of threadgroup memory",
                    k.name,
                    p.describe()
                )));
            }
            launch.tgmem_offset[i as usize] = offset as u32;
            launch.tgmem_size[i as usize] = size as u32;
            offset += size;
            if offset > k.max_tgmem {
                return Err(Error::KernelArgument(format!(
                    "kernel `{}`: {offset} bytes of threadgroup memory exceed the device's {} bytes",
                    k.name, k.max_tgmem
                )));
            }
        }
        Ok(launch)
    }

    fn threadgroup_hint(&self) -> String {
        let tg: Vec<String> = self
            .inner
            .params
            .iter()
            .filter(|p| p.kind == ParamRole::Threadgroup)
            .map(|p| format!("`{}` (index {})", p.name, p.index.unwrap_or(0)))
            .collect();
        if tg.is_empty() {
            String::new()
        } else {
            format!("; threadgroup parameters: {}", tg.join(", "))
        }
    }

    /// Checks every argument against its parameter and converts it for the device.
    pub fn bind(&self, args: &[KernelArg]) -> Result<Vec<BoundArg>> {
        let k = &self.inner;
        if args.len() != k.args.len() {
            let params = self.arguments();
            let names: Vec<String> = params
                .iter()
                .map(|p| format!("{} [[buffer({})]]", p.name, p.index.unwrap_or(0)))
                .collect();
            let sig = if names.is_empty() {
                "no arguments".to_string()
            } else {
                names.join(", ")
            };
            return Err(if args.len() < params.len() {
                let missing: Vec<&str> = params[args.len()..]
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect();
                Error::KernelArgument(format!(
                    "kernel `{}`: missing argument{} for parameter{} {} (takes {} argument{}: {sig}; got {})",
                    k.name,
                    plural(missing.len()),
                    plural(missing.len()),
                    missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
                    params.len(),
                    plural(params.len()),
                    args.len()
                ))
            } else {
                Error::KernelArgument(format!(
                    "kernel `{}`: too many arguments: takes {} ({sig}), got {}",
                    k.name,
                    params.len(),
                    args.len()
                ))
            });
        }
        self.argument_params()
            .zip(args)
            .map(|(p, a)| self.bind_one(p, a))
            .collect()
    }

    fn bind_one(&self, p: &ParamInfo, a: &KernelArg) -> Result<BoundArg> {
        match p.kind {
            ParamRole::Buffer => self.bind_buffer(p, a),
            _ => {
                let slot_size = p
                    .arg_position
                    .and_then(|s| self.inner.function.slot_sizes().and_then(|v| v.get(s)))
                    .map(|&s| s as usize)
                    .filter(|&s| s > 0);
                self.bind_bytes(p, a, slot_size)
            }
        }
    }

    /// A launch of this kernel whose dispatch and last arguments (`tail`) are fixed, checked
    /// and converted once: [`Kernel::launch_prepared`] then binds only the `head` leading
    /// arguments of each call. `ingot.fuse` runs every warm call of a generated kernel so.
    pub fn prepare_launch(
        &self,
        head: usize,
        tail: &[KernelArg],
        dispatch: &Dispatch,
    ) -> Result<PreparedLaunch> {
        let n = self.inner.args.len();
        if head + tail.len() != n {
            return Err(Error::KernelArgument(format!(
                "kernel `{}` takes {n} arguments: a prepared launch of {head} per call and {} fixed does not match",
                self.inner.name,
                tail.len()
            )));
        }
        let bound = self
            .argument_params()
            .skip(head)
            .zip(tail)
            .map(|(p, a)| self.bind_one(p, a))
            .collect::<Result<Vec<_>>>()?;
        Ok(PreparedLaunch {
            launch: self.resolve(dispatch)?,
            head,
            tail: bound,
        })
    }

    /// Launches a [`PreparedLaunch`] of this kernel with `head` as its leading arguments.
    pub fn launch_prepared(&self, prepared: &PreparedLaunch, head: &[KernelArg]) -> Result<()> {
        if head.len() != prepared.head {
            return Err(Error::KernelArgument(format!(
                "kernel `{}`: the prepared launch takes {} leading arguments, got {}",
                self.inner.name,
                prepared.head,
                head.len()
            )));
        }
        let mut bound = Vec::with_capacity(head.len() + prepared.tail.len());
        for (p, a) in self.argument_params().zip(head) {
            bound.push(self.bind_one(p, a)?);
        }
        bound.extend(prepared.tail.iter().cloned());
        if prepared.launch.total_groups() == 0 {
            return Ok(());
        }
        self.inner.function.launch(&prepared.launch, &bound)
    }

    fn arg_error(&self, p: &ParamInfo, msg: impl std::fmt::Display) -> Error {
        Error::KernelArgument(format!(
            "kernel `{}`, {}: {msg}",
            self.inner.name,
            p.describe()
        ))
    }

    fn bind_buffer(&self, p: &ParamInfo, a: &KernelArg) -> Result<BoundArg> {
        let writable = p.access == Access::ReadWrite;
        // Borrowed in the common case (an array argument): launches are on the hot path.
        let array: std::borrow::Cow<'_, Array> = match a {
            KernelArg::Array(a) => std::borrow::Cow::Borrowed(a),
            KernelArg::Bytes(b) => {
                if writable {
                    return Err(self.arg_error(
                        p,
                        "the kernel writes this buffer: pass an array, not host bytes",
                    ));
                }
                std::borrow::Cow::Owned(Array::from_bytes(
                    b,
                    &[b.len()],
                    DType::UInt8,
                    self.inner.device,
                )?)
            }
            KernelArg::Scalar(s) => {
                return Err(self.arg_error(
                    p,
                    format!("expects an array (a buffer), got the scalar {s:?}"),
                ))
            }
        };
        if array.device() != self.inner.device {
            return Err(self.arg_error(
                p,
                format!(
                    "array is on {}, the kernel runs on {} (move it with to_device)",
                    array.device(),
                    self.inner.device
                ),
            ));
        }
        if !p.any_dtype && !matches!(a, KernelArg::Bytes(_)) {
            if let Some(want) = p.dtype {
                // MSL has no complex type: complex arrays bind to `float2`/`double2` pointers.
                let complex_pair = array.dtype().is_complex()
                    && array.dtype().real_dtype() == want
                    && p.lanes == 2;
                if array.dtype() != want && !complex_pair {
                    return Err(self.arg_error(
                        p,
                        format!(
                            "expects {want} data ({}), got an array of {}",
                            p.pointee,
                            array.dtype()
                        ),
                    ));
                }
                if let Some(vs) = p.value_size.filter(|_| p.lanes > 1) {
                    if !array.nbytes().is_multiple_of(vs) {
                        return Err(self.arg_error(
                            p,
                            format!(
                                "an array of {} bytes is not a whole number of {} ({vs} bytes each)",
                                array.nbytes(),
                                p.pointee
                            ),
                        ));
                    }
                }
            }
        }
        let array = if writable {
            if !array.is_writable() {
                return Err(self.arg_error(
                    p,
                    "the kernel writes this buffer but the array is read-only",
                ));
            }
            if !array.is_contiguous() {
                return Err(self.arg_error(
                    p,
                    "the kernel writes this buffer but the array is not contiguous (pass a contiguous array, e.g. a copy)",
                ));
            }
            array
        } else if array.is_contiguous() {
            array
        } else {
            return Err(self.arg_error(
                p,
                "a kernel reads raw memory but the array is not contiguous (pass a contiguous array; ingot::ops::contiguous_inputs copies them)",
            ));
        };
        let esize = array.dtype().size();
        Ok(BoundArg::Buffer {
            buffer: array.buffer().clone(),
            offset: array.layout().offset() * esize,
            nbytes: array.nbytes(),
            writable,
        })
    }

    fn bind_bytes(
        &self,
        p: &ParamInfo,
        a: &KernelArg,
        slot_size: Option<usize>,
    ) -> Result<BoundArg> {
        let size = slot_size.or(p.value_size);
        let scalar_dtype = p.dtype.filter(|_| p.lanes == 1);
        match a {
            KernelArg::Scalar(s) => {
                let Some(dt) = scalar_dtype else {
                    return Err(self.arg_error(
                        p,
                        format!(
                            "expects {} bytes for {} (bytes, a NumPy structured scalar or an array), got the scalar {s:?}",
                            size.map_or("the".to_string(), |n| n.to_string()),
                            p.pointee
                        ),
                    ));
                };
                let v = convert_scalar(*s, dt).map_err(|m| self.arg_error(p, m))?;
                Ok(BoundArg::Bytes(v.into()))
            }
            KernelArg::Bytes(b) => {
                if let Some(n) = size {
                    if b.len() != n {
                        return Err(self.arg_error(
                            p,
                            format!(
                                "expects {n} bytes (sizeof({})), got {} bytes",
                                p.pointee,
                                b.len()
                            ),
                        ));
                    }
                }
                Ok(BoundArg::Bytes(b.as_slice().into()))
            }
            KernelArg::Array(arr) => {
                let bytes = arr.to_bytes()?;
                if let Some(dt) = p.dtype {
                    if arr.dtype() != dt {
                        return Err(self.arg_error(
                            p,
                            format!(
                                "expects {dt} values ({}), got an array of {}",
                                p.pointee,
                                arr.dtype()
                            ),
                        ));
                    }
                    if arr.size() as u32 == p.lanes {
                        let mut v = bytes;
                        if let Some(n) = size {
                            v.resize(n.max(v.len()), 0);
                        }
                        return Ok(BoundArg::Bytes(v.into()));
                    }
                }
                match size {
                    Some(n) if bytes.len() != n => Err(self.arg_error(
                        p,
                        format!(
                            "expects {n} bytes (sizeof({})), got an array of {} bytes",
                            p.pointee,
                            bytes.len()
                        ),
                    )),
                    _ => Ok(BoundArg::Bytes(bytes.into())),
                }
            }
        }
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Converts a scalar to the bytes of `dt`, refusing values that do not fit.
fn convert_scalar(s: Scalar, dt: DType) -> std::result::Result<Vec<u8>, String> {
    if let (Scalar::Complex(..), false) = (s, dt.is_complex()) {
        return Err(format!("expects a real {dt} value, got the complex {s:?}"));
    }
    match dt.kind() {
        Kind::SignedInt | Kind::UnsignedInt => {
            let s = match s {
                Scalar::Float(f) => {
                    if f.fract() != 0.0 || !f.is_finite() {
                        return Err(format!("expects an integer ({dt}), got {f}"));
                    }
                    if f < 0.0 {
                        Scalar::Int(f as i64)
                    } else {
                        Scalar::UInt(f as u64)
                    }
                }
                Scalar::Bool(b) => Scalar::UInt(b as u64),
                other => other,
            };
            if !s.fits(dt) {
                let info = dt.iinfo().map_err(|e| e.to_string())?;
                let v = match s {
                    Scalar::Int(i) => i.to_string(),
                    Scalar::UInt(u) => u.to_string(),
                    _ => format!("{s:?}"),
                };
                return Err(format!(
                    "{v} is out of range for {dt} ({}..={})",
                    info.min, info.max
                ));
            }
            Ok(s.to_bytes(dt))
        }
        Kind::Bool => match s {
            Scalar::Bool(_) => Ok(s.to_bytes(dt)),
            Scalar::Int(0 | 1) | Scalar::UInt(0 | 1) => Ok(s.to_bytes(dt)),
            other => Err(format!("expects a bool, got {other:?}")),
        },
        Kind::Float => {
            if let Scalar::Float(f) = s {
                let fin = match dt {
                    DType::Float16 => 65504.0,
                    DType::BFloat16 | DType::Float32 => f32::MAX as f64,
                    _ => f64::MAX,
                };
                if f.is_finite() && f.abs() > fin {
                    return Err(format!("{f} overflows {dt}"));
                }
            }
            Ok(s.to_bytes(dt))
        }
        Kind::Complex => Ok(s.to_bytes(dt)),
    }
}

fn default_threadgroup(grid: Option<[u32; 3]>, dims: u8, max: u32) -> [u32; 3] {
    let clip = |want: u32, axis: usize| -> u32 {
        match grid {
            Some(g) => want.min(g[axis].max(1)),
            None => want,
        }
    };
    let mut tg = match dims {
        1 => {
            let n = match grid {
                Some(g) => g[0].clamp(1, 256).div_ceil(32) * 32,
                None => 256,
            };
            [n, 1, 1]
        }
        2 => [clip(16, 0), clip(16, 1), 1],
        _ => [clip(8, 0), clip(8, 1), clip(4, 2)],
    };
    // Respect the kernel's maximum: halve the largest axis until it fits.
    while tg.iter().map(|&t| t as u64).product::<u64>() > max as u64 {
        let i = (0..3).max_by_key(|&i| tg[i]).unwrap_or(0);
        tg[i] = (tg[i] / 2).max(1);
    }
    tg
}

fn check_tg(name: &str, tg: [u32; 3], max: u32) -> Result<()> {
    if tg.contains(&0) {
        return Err(Error::KernelArgument(format!(
            "kernel `{name}`: threadgroup size {tg:?} has a zero axis"
        )));
    }
    let total = tg.iter().map(|&t| t as u64).product::<u64>();
    if total > max as u64 {
        return Err(Error::KernelArgument(format!(
            "kernel `{name}`: threadgroup size {tg:?} = {total} threads exceeds the kernel's maximum of {max} (max_total_threads_per_threadgroup)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_threadgroups() {
        assert_eq!(default_threadgroup(Some([10, 1, 1]), 1, 1024), [32, 1, 1]);
        assert_eq!(
            default_threadgroup(Some([1000, 1, 1]), 1, 1024),
            [256, 1, 1]
        );
        assert_eq!(default_threadgroup(Some([1000, 1, 1]), 1, 64), [64, 1, 1]);
        assert_eq!(default_threadgroup(Some([5, 100, 1]), 2, 1024), [5, 16, 1]);
        assert_eq!(
            default_threadgroup(Some([100, 100, 100]), 3, 1024),
            [8, 8, 4]
        );
        assert_eq!(default_threadgroup(None, 2, 1024), [16, 16, 1]);
        assert_eq!(default_threadgroup(Some([0, 1, 1]), 1, 1024), [32, 1, 1]);
    }

    #[test]
    fn scalar_conversion_checks_range() {
        assert!(convert_scalar(Scalar::Int(-1), DType::UInt32).is_err());
        assert!(convert_scalar(Scalar::Int(300), DType::UInt8).is_err());
        assert!(convert_scalar(Scalar::Float(2.5), DType::Int32).is_err());
        assert_eq!(
            convert_scalar(Scalar::Float(2.0), DType::Int32).unwrap(),
            2i32.to_ne_bytes().to_vec()
        );
        assert!(convert_scalar(Scalar::Float(1e300), DType::Float32).is_err());
        assert_eq!(
            convert_scalar(Scalar::Int(3), DType::Float32).unwrap(),
            3f32.to_ne_bytes().to_vec()
        );
        assert!(convert_scalar(Scalar::Int(2), DType::Bool).is_err());
    }

    #[test]
    fn launch_params_layout() {
        assert_eq!(std::mem::size_of::<LaunchParams>(), 140);
    }
}
