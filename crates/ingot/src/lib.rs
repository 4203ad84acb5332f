//! ingot: GPU array computing and Metal Shading Language kernels on Metal, CUDA and CPU.
//!
//! Layers, each calling only downward (`scripts/check_layers.py` checks it in CI):
//! - [`ops`]: array operations by category, dispatched to a backend (native CPU code, or the
//!   built-in MSL kernels on GPUs); also the [`Array`] methods that move data;
//! - [`kernel`]: user MSL kernels: compile, reflect, bind arguments, launch;
//!   [`translate`]: what a kernel becomes on a target, without its device;
//! - [`array`]: [`Array`], a buffer + [`Layout`] + [`DType`] on a [`Device`], and its views;
//! - [`runtime`]: the device contract ([`runtime::Runtime`], [`runtime::KernelBackend`]), the
//!   registry of backends, and the backends (`cpu`, `cuda`, `metal`), one folder each;
//! - [`device`], [`dtype`], [`layout`], [`cache`], [`error`]: the vocabulary everything shares;
//!   [`progress`]: the progress line of long compiles.
//!
//! ```
//! use ingot::{Array, Device, ops};
//! let a = Array::from_vec(vec![1.0f32, 2.0], &[2], Device::Cpu).unwrap();
//! assert_eq!(a.shape(), &[2]);
//! ```

pub mod array;
pub mod cache;
pub mod device;
pub mod dtype;
pub mod error;
pub mod kernel;
pub mod layout;
pub mod ops;
pub mod progress;
pub mod runtime;
pub mod translate;

pub use array::Array;
pub use device::Device;
pub use dtype::{DType, Scalar};
pub use error::{Error, Result};
pub use layout::{IndexItem, Layout};
pub use runtime::{default_device, devices};
