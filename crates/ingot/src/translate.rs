//! What a user kernel becomes on a target, without compiling it or needing the target's device.
//!
//! [`translate`] runs the same translation the CUDA and CPU backends run before they compile
//! (same options: function constants, math mode, include folders, defines), and returns the
//! C++ text with the reflection of every entry point as the kernel API sees it
//! ([`ParamInfo`]). `python -m ingot translate` prints the text; `python -m ingot check` uses
//! the reflection for targets whose device is absent.
//!
//! ```
//! use ingot::kernel::CompileOptions;
//! use ingot::translate::{translate, Target};
//! let src = "#include <metal_stdlib>\nusing namespace metal;\n\
//!            kernel void twice(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] *= 2; }\n";
//! let t = translate(src, Target::Cuda, &CompileOptions::default()).unwrap();
//! assert!(t.text.contains("__global__"));
//! assert_eq!(t.entries[0].name, "twice");
//! assert_eq!(t.entries[0].params[0].index, Some(0));
//! ```

use crate::dtype::Scalar;
use crate::error::Result;
use crate::kernel::{CompileOptions, MathMode, ParamInfo};
use crate::runtime::kernel::translation_error;

pub use ingot_msl::{FunctionConstant, Target};

/// One entry point of a [`Translation`].
#[derive(Clone, Debug)]
pub struct EntryInfo {
    /// The host name (what `lib.function(name)` takes).
    pub name: String,
    /// The symbol of its wrapper in the translated text.
    pub symbol: String,
    /// The file of its definition (the user's file or an included header).
    pub file: String,
    /// 1-based line of its definition.
    pub line: u32,
    /// Its parameters in declaration order, as the kernel API binds them.
    pub params: Vec<ParamInfo>,
    /// `[[max_total_threads_per_threadgroup(n)]]` when the kernel declares it.
    pub max_total_threads_per_threadgroup: Option<u32>,
    /// Static `threadgroup` variable declarations reachable from the kernel.
    pub static_threadgroup_decls: u32,
    /// CPU target: how the CPU engine runs it (`loop ...`, `work-item loops`, `fibers (why)`).
    pub cpu_mode: Option<String>,
}

/// The translation of a source for one target.
#[derive(Clone, Debug)]
pub struct Translation {
    /// The target it was written for.
    pub target: Target,
    /// The C++ translation unit (CUDA C++ for NVRTC, or C++17 for the host compiler).
    pub text: String,
    /// The entry points, in source order.
    pub entries: Vec<EntryInfo>,
    /// The file's function constants.
    pub function_constants: Vec<FunctionConstant>,
}

/// Translates `source` for `target` with `options` (nothing is compiled; no device is needed).
///
/// Errors are those of compiling for that target before its compiler runs:
/// [`crate::Error::Compile`] with `file:line:column: error: message`, or
/// [`crate::Error::KernelArgument`] for a missing or unknown function constant.
pub fn translate(source: &str, target: Target, options: &CompileOptions) -> Result<Translation> {
    let mut o = ingot_msl::Options::new(target);
    o.file_name = options.file().to_string();
    o.fast_math = options.math_mode == MathMode::Fast;
    o.include_dirs = options.include_dirs.clone();
    o.defines = options.defines.clone();
    o.work_items = crate::runtime::kernel::cpu_work_items();
    for (k, v) in &options.constants {
        o.constants.insert(k.clone(), literal(*v));
    }
    let t = ingot_msl::translate(source, &o).map_err(translation_error)?;
    let entries = t
        .module
        .entry_points
        .iter()
        .map(|e| EntryInfo {
            name: e.name.clone(),
            symbol: t.entries.get(&e.name).cloned().unwrap_or_default(),
            file: e.file.clone(),
            line: e.line,
            params: e.params.iter().map(ParamInfo::from_msl).collect(),
            max_total_threads_per_threadgroup: e.max_total_threads_per_threadgroup,
            static_threadgroup_decls: e.features.static_threadgroup_decls,
            cpu_mode: t.cpu_modes.get(&e.name).map(|m| m.to_string()),
        })
        .collect();
    Ok(Translation {
        target,
        text: t.text,
        entries,
        function_constants: t.module.function_constants,
    })
}

/// A function-constant value as C++ literal text (as the backends write it).
fn literal(v: Scalar) -> String {
    match v {
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::UInt(u) => u.to_string(),
        Scalar::Float(f) => format!("{f:?}"),
        // Function constants are bool, integer or real (checked when they are given).
        Scalar::Complex(re, _) => format!("{re:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dtype::DType;
    use crate::kernel::{Access, ParamRole};

    const SRC: &str = "#include <metal_stdlib>\nusing namespace metal;\n\
        constant bool use_bias [[function_constant(0)]];\n\
        kernel void axpy(const device float* x [[buffer(0)]], device float* y [[buffer(1)]],\n\
                         constant float& a [[buffer(2)]], threadgroup float* tmp [[threadgroup(0)]],\n\
                         uint i [[thread_position_in_grid]]) { y[i] += a * x[i] * BIAS; }\n";

    fn options() -> CompileOptions {
        let mut o = CompileOptions {
            file_name: "axpy.metal".into(),
            ..Default::default()
        };
        o.constants.insert("use_bias".into(), Scalar::Bool(true));
        o.defines.insert("BIAS".into(), "3.0f".into());
        o
    }

    #[test]
    fn reflects_parameters_as_the_kernel_api_binds_them() {
        for target in [Target::Cuda, Target::Cpu] {
            let t = translate(SRC, target, &options()).unwrap();
            assert_eq!(t.target, target);
            assert!(t.text.contains("a * x[i] * 3.0f"), "{}", t.text);
            assert_eq!(t.function_constants.len(), 1);
            assert_eq!(t.function_constants[0].name, "use_bias");
            let e = &t.entries[0];
            assert_eq!(
                (e.name.as_str(), e.file.as_str(), e.line),
                ("axpy", "axpy.metal", 4)
            );
            assert!(t.text.contains(&e.symbol), "{}", e.symbol);
            let p = &e.params;
            assert_eq!(p.len(), 5);
            assert_eq!(
                (p[0].kind, p[0].index, p[0].access),
                (ParamRole::Buffer, Some(0), Access::Read)
            );
            assert_eq!(p[0].dtype, Some(DType::Float32));
            assert_eq!(
                (p[1].kind, p[1].access),
                (ParamRole::Buffer, Access::ReadWrite)
            );
            assert_eq!((p[2].kind, p[2].index), (ParamRole::Bytes, Some(2)));
            assert_eq!((p[3].kind, p[3].index), (ParamRole::Threadgroup, Some(0)));
            assert_eq!(
                (p[4].kind, p[4].role),
                (ParamRole::Builtin, Some("thread_position_in_grid"))
            );
        }
    }

    #[test]
    fn errors_carry_the_users_file_and_line() {
        let bad = "kernel void f(device float* x [[buffer(0)]]) {\n  x[0] = 1;\n  }}\n";
        let o = CompileOptions {
            file_name: "bad.metal".into(),
            ..Default::default()
        };
        let e = translate(bad, Target::Cpu, &o).unwrap_err().to_string();
        assert!(e.starts_with("bad.metal:3:"), "{e}");
    }
}
