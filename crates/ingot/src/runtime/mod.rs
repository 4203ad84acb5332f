//! The low-level device contract and its backends.
//!
//! A runtime owns one device: it allocates and frees memory, copies between host and device and
//! within the device, waits for queued work, and hands out the device's kernel engine. Everything
//! above it (arrays, kernels, ops) talks to devices only through [`Runtime`], [`Buffer`] and
//! [`KernelBackend`].
//!
//! - `backend.rs`: the traits a backend implements ([`Backend`], [`Runtime`]);
//! - `memory.rs`: [`Buffer`] and the [`DeviceMemory`] trait of each backend's memory;
//! - `kernel.rs`: the kernel-engine contract ([`KernelBackend`], [`LaunchParams`], ...);
//! - `gemm.rs`: the arguments of the optional BLAS capability ([`Runtime::gemm`]);
//! - `solver.rs`: the arguments of the optional dense-solver capability ([`Runtime::solver`]);
//! - `fft.rs`: the arguments of the optional FFT capability ([`Runtime::fft`]);
//! - `pool.rs`: the caching allocator every backend uses;
//! - `registry.rs`: the list of backends and the runtime of each device.
//!
//! A backend is one folder here (`cpu`, `cuda`, `metal`) that uses only the files above; adding
//! one touches no other backend: its folder, one line in `registry.rs`, its [`Device`] variant.
//!
//! [`Device`]: crate::Device

pub mod backend;
pub mod checked;
pub mod fft;
pub mod gemm;
pub mod kernel;
pub mod memory;
pub mod pool;
pub mod registry;
pub mod solver;
pub mod units;

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(all(feature = "metal", any(target_os = "macos", ingot_metal_typecheck)))]
pub mod metal;

pub use backend::{Backend, Runtime};
pub use fft::{FftJob, FftKind};
pub use gemm::{Gemm, GemmOperand};
pub use kernel::{
    BoundArg, CompileOptions, CompiledFunction, CompiledLibrary, KernelBackend, LaunchParams,
    MathMode,
};
pub use memory::{Buffer, DeviceMemory, MemoryInfo};
pub use registry::{
    available_gpus, check_dtype, default_device, devices, get, pop_current_device,
    push_current_device, set_process_device,
};
pub use solver::{Matrices, Solver, SolverJob, SvdDriver, Vectors};
