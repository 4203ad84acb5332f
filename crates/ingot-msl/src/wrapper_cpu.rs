//! The CPU entry wrapper: `extern "C" int ingot_cpu_<name>(L, args, group_begin, group_end)`.
//!
//! See ABI.md, "CPU". The wrapper unpacks `args` into the user's parameter types and runs the
//! user's function for every thread of the groups `[group_begin, group_end)` through
//! `ingot::cpu::run_groups<Mode>`, which the CPU runtime header implements.

use crate::reflect::{EntryPoint, ParamKind};
use crate::wrapper_common::{builtin_value, gated_off_value, size_of, WrapperArg};

/// Emits the wrapper of `e`, which calls `callee` for every thread, or `group` (the work-item
/// loop form, `wiloops`) once per threadgroup; returns (symbol, code).
/// `checked`: buffer and threadgroup parameters become `ingot::chk` (see `checked.rs`).
pub(crate) fn emit(
    e: &EntryPoint,
    callee: &str,
    group: Option<&str>,
    args: &[WrapperArg],
    checked: bool,
) -> (String, String) {
    let symbol = format!("ingot_cpu_{}", e.name);
    let mode = if group.is_some() {
        "WorkItems"
    } else if e.features.needs_fibers() {
        "Fibers"
    } else {
        "Loop"
    };
    let mut sizes = Vec::new();
    for p in e.abi_params() {
        let i = e
            .params
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .unwrap_or(0);
        if let Some(a) = args.get(i) {
            sizes.push(size_of(a));
        }
    }
    if sizes.is_empty() {
        sizes.push("0".to_string());
    }
    let mut call = Vec::new();
    for (i, p) in e.params.iter().enumerate() {
        let Some(a) = args.get(i) else { continue };
        if !p.active {
            call.push(gated_off_value(p).to_string());
            continue;
        }
        let v = match p.kind {
            ParamKind::Buffer if checked && p.is_pointer => {
                crate::checked::cpu_buffer_arg(&a.ptr_ty, p.abi_slot.unwrap_or(0), e.abi.len(), i)
            }
            ParamKind::Threadgroup if checked => crate::checked::cpu_threadgroup_arg(
                &a.ptr_ty,
                p.threadgroup_index.unwrap_or(0),
                e.abi.len(),
                i,
            ),
            ParamKind::Buffer => {
                let slot = p.abi_slot.unwrap_or(0);
                if p.is_pointer {
                    format!("({})args[{slot}]", a.ptr_ty)
                } else {
                    format!("*({})args[{slot}]", a.ptr_ty)
                }
            }
            ParamKind::Bytes => {
                let slot = p.abi_slot.unwrap_or(0);
                format!("*(const {}*)args[{slot}]", a.value_ty)
            }
            ParamKind::Threadgroup => format!(
                "({})ingot::cpu::tgmem({}u)",
                a.ptr_ty,
                p.threadgroup_index.unwrap_or(0)
            ),
            ParamKind::Builtin => match p.role {
                Some(r) => builtin_value(p, a, r, "t"),
                None => "{}".to_string(),
            },
        };
        call.push(v);
    }
    let per_thread = if checked {
        crate::checked::CPU_THREAD
    } else {
        ""
    };
    let (lambda, target) = match group {
        Some(g) => {
            call.push("ingot_g".to_string());
            (
                "const ingot::cpu::thread_ids& t, const ingot::cpu::wi_group& ingot_g",
                g,
            )
        }
        None => ("const ingot::cpu::thread_ids& t", callee),
    };
    let code = format!(
        "extern \"C\" INGOT_EXPORT const uint32_t {symbol}_sizes[] = {{{sizes}}};\nextern \"C\" INGOT_EXPORT int {symbol}(const ingot::launch* L, void* const* args, uint32_t group_begin, uint32_t group_end) {{\n  (void)args;\n  return ingot::cpu::run_groups<ingot::cpu::Mode::{mode}>(L, group_begin, group_end, [&]({lambda}) {{\n    (void)t;{per_thread}\n    {target}({call});\n  }});\n}}\n",
        sizes = sizes.join(", "),
        call = call.join(", "),
    );
    (symbol, code)
}
