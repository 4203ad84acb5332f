//! The C++ preludes (`<metal_stdlib>` and siblings) for each target, embedded in the crate.

use crate::Target;

/// `(include name, contents)` pairs of the prelude headers for `target`.
pub fn prelude_files(target: Target) -> &'static [(&'static str, &'static str)] {
    match target {
        Target::Cuda => &[],
        Target::Cpu => &[],
    }
}
