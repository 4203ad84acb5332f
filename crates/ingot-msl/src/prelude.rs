//! The C++ preludes (`<metal_stdlib>` and siblings) for each target, embedded in the crate.
//!
//! The headers live in `prelude/` (C++; see ABI.md "Prelude names"). The translation includes
//! `<ingot/metal_stdlib.h>`; the user's `#include <metal_stdlib>` (and siblings) resolve to tiny
//! headers that include it. The CPU target also gets `ingot/cpu/runtime.h`, the thread-group
//! scheduler (loop and fibers) that the generated entry wrappers call.

use crate::Target;

/// The other parts of Metal's standard library (`<metal_limits>`, `<metal_matrix>`...): each
/// is all of `<metal_stdlib>` here, as the parts above are.
const SIBLING: &str =
    "// part of the ingot Metal standard library\n#pragma once\n#include <ingot/metal_stdlib.h>\n";

const CUDA_FILES: &[(&str, &str)] = &[
    (
        "ingot/metal_stdlib.h",
        include_str!("../prelude/ingot/metal_stdlib.h"),
    ),
    ("ingot/launch.h", include_str!("../prelude/ingot/launch.h")),
    (
        "ingot/checked.h",
        include_str!("../prelude/ingot/checked.h"),
    ),
    (
        "ingot/detail/types.h",
        include_str!("../prelude/ingot/detail/types.h"),
    ),
    (
        "ingot/detail/vec.h",
        include_str!("../prelude/ingot/detail/vec.h"),
    ),
    (
        "ingot/detail/swizzle.h",
        include_str!("../prelude/ingot/detail/swizzle.h"),
    ),
    (
        "ingot/detail/math.h",
        include_str!("../prelude/ingot/detail/math.h"),
    ),
    (
        "ingot/detail/atomic.h",
        include_str!("../prelude/ingot/detail/atomic.h"),
    ),
    (
        "ingot/detail/simd.h",
        include_str!("../prelude/ingot/detail/simd.h"),
    ),
    (
        "ingot/detail/simdgroup_matrix.h",
        include_str!("../prelude/ingot/detail/simdgroup_matrix.h"),
    ),
    (
        "ingot/detail/intrinsics.h",
        include_str!("../prelude/ingot/detail/intrinsics.h"),
    ),
    (
        "ingot/detail/builtins.h",
        include_str!("../prelude/ingot/detail/builtins.h"),
    ),
    ("metal_stdlib", include_str!("../prelude/metal_stdlib")),
    ("metal_math", include_str!("../prelude/metal_math")),
    (
        "metal_simdgroup",
        include_str!("../prelude/metal_simdgroup"),
    ),
    ("metal_atomic", include_str!("../prelude/metal_atomic")),
    ("metal_compute", include_str!("../prelude/metal_compute")),
    ("metal_integer", include_str!("../prelude/metal_integer")),
    ("metal_common", include_str!("../prelude/metal_common")),
    (
        "metal_geometric",
        include_str!("../prelude/metal_geometric"),
    ),
    (
        "metal_relational",
        include_str!("../prelude/metal_relational"),
    ),
    ("metal_numeric", include_str!("../prelude/metal_numeric")),
    ("metal_types", include_str!("../prelude/metal_types")),
    ("metal_pack", include_str!("../prelude/metal_pack")),
    (
        "metal_simdgroup_matrix",
        include_str!("../prelude/metal_simdgroup_matrix"),
    ),
    ("simd/simd.h", include_str!("../prelude/simd/simd.h")),
    ("metal_limits", SIBLING),
    ("metal_matrix", SIBLING),
    ("metal_array", SIBLING),
    ("metal_functional", SIBLING),
    ("metal_type_traits", SIBLING),
    ("metal_utility", SIBLING),
    ("metal_quadgroup", SIBLING),
    ("metal_initializer_list", SIBLING),
    ("metal_extended_vector", SIBLING),
    ("metal_uniform", SIBLING),
    ("metal_config", SIBLING),
    ("metal_compute_utility", SIBLING),
];

const CPU_FILES: &[(&str, &str)] = &[
    (
        "ingot/metal_stdlib.h",
        include_str!("../prelude/ingot/metal_stdlib.h"),
    ),
    ("ingot/launch.h", include_str!("../prelude/ingot/launch.h")),
    (
        "ingot/checked.h",
        include_str!("../prelude/ingot/checked.h"),
    ),
    (
        "ingot/detail/types.h",
        include_str!("../prelude/ingot/detail/types.h"),
    ),
    (
        "ingot/detail/vec.h",
        include_str!("../prelude/ingot/detail/vec.h"),
    ),
    (
        "ingot/detail/swizzle.h",
        include_str!("../prelude/ingot/detail/swizzle.h"),
    ),
    (
        "ingot/detail/math.h",
        include_str!("../prelude/ingot/detail/math.h"),
    ),
    (
        "ingot/detail/atomic.h",
        include_str!("../prelude/ingot/detail/atomic.h"),
    ),
    (
        "ingot/detail/simd.h",
        include_str!("../prelude/ingot/detail/simd.h"),
    ),
    (
        "ingot/detail/simdgroup_matrix.h",
        include_str!("../prelude/ingot/detail/simdgroup_matrix.h"),
    ),
    (
        "ingot/detail/intrinsics.h",
        include_str!("../prelude/ingot/detail/intrinsics.h"),
    ),
    (
        "ingot/detail/builtins.h",
        include_str!("../prelude/ingot/detail/builtins.h"),
    ),
    ("metal_stdlib", include_str!("../prelude/metal_stdlib")),
    ("metal_math", include_str!("../prelude/metal_math")),
    (
        "metal_simdgroup",
        include_str!("../prelude/metal_simdgroup"),
    ),
    ("metal_atomic", include_str!("../prelude/metal_atomic")),
    ("metal_compute", include_str!("../prelude/metal_compute")),
    ("metal_integer", include_str!("../prelude/metal_integer")),
    ("metal_common", include_str!("../prelude/metal_common")),
    (
        "metal_geometric",
        include_str!("../prelude/metal_geometric"),
    ),
    (
        "metal_relational",
        include_str!("../prelude/metal_relational"),
    ),
    ("metal_numeric", include_str!("../prelude/metal_numeric")),
    ("metal_types", include_str!("../prelude/metal_types")),
    ("metal_pack", include_str!("../prelude/metal_pack")),
    (
        "metal_simdgroup_matrix",
        include_str!("../prelude/metal_simdgroup_matrix"),
    ),
    ("simd/simd.h", include_str!("../prelude/simd/simd.h")),
    ("metal_limits", SIBLING),
    ("metal_matrix", SIBLING),
    ("metal_array", SIBLING),
    ("metal_functional", SIBLING),
    ("metal_type_traits", SIBLING),
    ("metal_utility", SIBLING),
    ("metal_quadgroup", SIBLING),
    ("metal_initializer_list", SIBLING),
    ("metal_extended_vector", SIBLING),
    ("metal_uniform", SIBLING),
    ("metal_config", SIBLING),
    ("metal_compute_utility", SIBLING),
    (
        "ingot/cpu/runtime.h",
        include_str!("../prelude/ingot/cpu/runtime.h"),
    ),
];

/// `(include name, contents)` pairs of the prelude headers for `target`.
pub fn prelude_files(target: Target) -> &'static [(&'static str, &'static str)] {
    match target {
        Target::Cuda => CUDA_FILES,
        Target::Cpu => CPU_FILES,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_has_the_main_header_and_the_siblings() {
        for t in [Target::Cuda, Target::Cpu] {
            let files = prelude_files(t);
            for name in [
                "ingot/metal_stdlib.h",
                "metal_stdlib",
                "metal_simdgroup",
                "simd/simd.h",
            ] {
                assert!(
                    files.iter().any(|(n, _)| *n == name),
                    "{name} missing for {t}"
                );
            }
            for (name, text) in files {
                assert!(!text.is_empty(), "{name} is empty");
            }
        }
        assert!(prelude_files(Target::Cpu)
            .iter()
            .any(|(n, _)| *n == "ingot/cpu/runtime.h"));
        assert!(!prelude_files(Target::Cuda)
            .iter()
            .any(|(n, _)| n.starts_with("ingot/cpu/")));
    }
}
