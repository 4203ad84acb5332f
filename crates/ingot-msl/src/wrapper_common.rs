//! Pieces shared by the CUDA and CPU wrappers.

use crate::reflect::{BuiltinRole, Param, ParamKind};
use crate::types::ScalarKind;

/// One wrapper argument of the user's entry function, in the user's parameter order.
#[derive(Debug, Clone)]
pub(crate) struct WrapperArg {
    /// The parameter's value type as C++ (`float`, `const Params` without const, `metal::uint3`).
    pub value_ty: String,
    /// Pointer type for buffer/threadgroup parameters (`const float*`).
    pub ptr_ty: String,
}

/// The expression converting builtin role `role` to the parameter's declared type, reading
/// the role's values from `ids` (`t` on the CPU, `ids` on CUDA), whose fields are named after
/// the roles (three-element arrays for the vector roles).
pub(crate) fn builtin_value(p: &Param, a: &WrapperArg, role: BuiltinRole, ids: &str) -> String {
    let lanes = p.info.map(|i| i.lanes).unwrap_or(1);
    let scalar = p
        .info
        .map(|i| i.scalar)
        .unwrap_or(ScalarKind::U32)
        .msl_name();
    let field = role.name();
    let comp = |c: usize| {
        if role.is_vector() {
            format!("{ids}.{field}[{c}]")
        } else if c == 0 {
            format!("{ids}.{field}")
        } else {
            "0u".to_string()
        }
    };
    if lanes == 1 {
        return format!("({})({})", a.value_ty, comp(0));
    }
    let parts: Vec<String> = (0..lanes as usize)
        .map(|c| format!("({scalar})({})", comp(c.min(2))))
        .collect();
    format!("{}({})", a.value_ty, parts.join(", "))
}

/// The argument passed for a parameter removed by a false function-constant gate.
pub(crate) fn gated_off_value(p: &Param) -> &'static str {
    if p.is_pointer || p.kind == ParamKind::Threadgroup {
        "nullptr"
    } else {
        "{}"
    }
}

/// `sizeof` text for an ABI slot's value type (1 for `void`).
pub(crate) fn size_of(a: &WrapperArg) -> String {
    if a.value_ty == "void" {
        "1".to_string()
    } else {
        format!("sizeof({})", a.value_ty)
    }
}
