//! ingot: GPU array computing and Metal Shading Language kernels on Metal, CUDA and CPU.
//!
//! Layers, each calling only downward:
//! - [`array`]: [`Array`], a buffer + [`Layout`] + [`DType`] on a [`Device`];
//! - [`ops`]: array operations by category, dispatched to a backend;
//! - [`runtime`]: the device contract ([`runtime::Runtime`]) and its backends.
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
pub mod runtime;

pub use array::Array;
pub use device::{default_device, devices, Device};
pub use dtype::{DType, Scalar};
pub use error::{Error, Result};
pub use layout::{IndexItem, Layout};
