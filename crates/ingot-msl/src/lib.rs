//! Metal Shading Language front end: lexing, reflection and translation to CUDA C++ and host
//! C++.
//!
//! - [`reflect`] lists a file's entry points, their parameters (buffer indices, types, builtin
//!   roles, gates) and features.
//! - [`translate`] rewrites a file for a [`Target`] and appends one wrapper per entry point with
//!   the uniform ABI described in `ABI.md`.
//! - [`prelude_files`] gives the C++ headers the translation includes.

pub mod error;
pub mod lexer;
pub mod prelude;
pub mod preprocess;
pub mod reflect;
pub mod rewrite;
pub mod syntax;
pub mod target;
pub mod types;
mod wrapper_common;
mod wrapper_cpu;
mod wrapper_cuda;

pub use error::{Error, Result};
pub use prelude::prelude_files;
pub use reflect::{
    reflect, reflect_named, AddressSpace, BuiltinRole, EntryPoint, Features, FunctionConstant,
    Module, Param, ParamKind,
};
pub use rewrite::{translate, Options, Translation};
pub use target::Target;
pub use types::{ScalarKind, TypeInfo};
