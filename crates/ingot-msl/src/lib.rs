//! Metal Shading Language front end: lexing, reflection and translation to CUDA C++ and host
//! C++.
//!
//! - [`reflect()`] lists a file's entry points, their parameters (buffer indices, types, builtin
//!   roles, gates) and features.
//! - [`translate`] rewrites a file for a [`Target`] and appends one wrapper per entry point with
//!   the uniform ABI described in `ABI.md`.
//! - [`prelude_files`] gives the C++ headers the translation includes.
//!
//! ```
//! use ingot_msl::{reflect, translate, Options, ParamKind, Target};
//!
//! let src = r#"
//! #include <metal_stdlib>
//! using namespace metal;
//! kernel void scale(device float* x [[buffer(0)]], constant float& a [[buffer(1)]],
//!                   uint i [[thread_position_in_grid]]) { x[i] *= a; }
//! "#;
//! let module = reflect(src)?;
//! let entry = module.entry("scale").unwrap();
//! assert_eq!(entry.params[1].kind, ParamKind::Bytes);
//! assert!(!entry.features.needs_fibers());
//!
//! let t = translate(src, &Options::new(Target::Cpu))?;
//! assert_eq!(t.entries["scale"], "ingot_cpu_scale");
//! assert!(t.text.contains("ingot::cpu::Mode::Loop"));
//! # Ok::<(), ingot_msl::Error>(())
//! ```
//!
//! The pipeline: [`preprocess`] (the file's own macros and `#if`s) -> [`lexer`] -> [`syntax`]
//! (scopes, functions, instantiations) -> [`mod@reflect`] -> `rewrite` (token replacements that keep
//! every line where it was) + one wrapper per entry point (`wrapper_cuda`, `wrapper_cpu`).

mod anon_struct;
mod checked;
pub(crate) mod consteval;
mod edit;
pub mod error;
mod guarded_shuffle;
pub mod lexer;
mod loop_checks;
pub mod prelude;
pub mod preprocess;
mod purity;
mod range_init;
pub mod reflect;
pub mod rewrite;
pub mod sandbox;
pub mod syntax;
pub mod target;
mod ternary;
pub mod types;
mod unit;
mod wiloops;
mod wrapper_common;
mod wrapper_cpu;
mod wrapper_cuda;

pub use error::{Error, Result};
pub use prelude::prelude_files;
pub use reflect::{
    reflect, reflect_named, AddressSpace, BuiltinRole, EntryPoint, Features, FunctionConstant,
    Module, Param, ParamKind,
};
pub use rewrite::{reflect_with, translate, CpuMode, Options, Translation};
pub use target::Target;
pub use types::{ScalarKind, TypeInfo};
