//! The CUDA entry wrapper: `extern "C" __global__ void <name>(const ingot::launch L, ...)`.
//!
//! See ABI.md, "CUDA". The grid is 1-D in blocks and threads; the wrapper re-linearises the
//! thread and group coordinates from the launch block, exits the threads outside an exact grid,
//! and calls the user's function with the builtin roles converted to the declared types.

use crate::reflect::{EntryPoint, ParamKind};
use crate::wrapper_common::{builtin_value, gated_off_value, WrapperArg};

/// Emitted once before the CUDA wrappers: the builtin values of the calling thread.
pub(crate) const PREAMBLE: &str = r#"
struct ingot_ids {
  unsigned int thread_position_in_grid[3], thread_position_in_threadgroup[3],
      threadgroup_position_in_grid[3], threads_per_threadgroup[3], threadgroups_per_grid[3],
      threads_per_grid[3], dispatch_threads_per_threadgroup[3];
  unsigned int thread_index_in_threadgroup, thread_index_in_simdgroup,
      simdgroup_index_in_threadgroup, simdgroups_per_threadgroup, threads_per_simdgroup,
      thread_execution_width, quadgroup_index_in_threadgroup, thread_index_in_quadgroup;
};
/* The fields every launch sets alike, from the thread's index in its group and the group's
   actual size in threads. */
static __device__ __forceinline__ void ingot_ids_lanes(ingot_ids& t, unsigned int local) {
  const unsigned int n = t.threads_per_threadgroup[0] * t.threads_per_threadgroup[1] * t.threads_per_threadgroup[2];
  t.thread_index_in_threadgroup = local;
  t.thread_index_in_simdgroup = local % 32u;
  t.simdgroup_index_in_threadgroup = local / 32u;
  t.simdgroups_per_threadgroup = (n + 31u) / 32u;
  t.threads_per_simdgroup = 32u;
  t.thread_execution_width = 32u;
  t.quadgroup_index_in_threadgroup = local / 4u;
  t.thread_index_in_quadgroup = local % 4u;
}
/* Fills `t` for the calling thread; false when the thread is outside an exact grid. */
static __device__ __forceinline__ bool ingot_ids_init(const ingot::launch& L, ingot_ids& t) {
  const unsigned int local = threadIdx.x;
  const unsigned int b = blockIdx.x;
  if (L.exact & 2u) {
    /* A linear region (the host's flag: one thread and one group along axes 1 and 2, at 0):
       every metalcompute-style launch. Axis 0 alone, so that a one-element-per-thread kernel
       issues its loads after a few instructions, as the same kernel in CUDA C does. */
    const unsigned int g = b + L.origin[0];
    const unsigned int pos = g * L.tg[0] + local;
    if ((L.exact & 1u) && pos >= L.grid[0]) return false;
    for (int c = 0; c < 3; ++c) {
      t.thread_position_in_threadgroup[c] = c == 0 ? local : 0u;
      t.threadgroup_position_in_grid[c] = c == 0 ? g : 0u;
      t.thread_position_in_grid[c] = c == 0 ? pos : 0u;
      t.threads_per_threadgroup[c] = c == 0 ? L.block[0] : 1u;
      t.threadgroups_per_grid[c] = L.groups[c];
      t.threads_per_grid[c] = L.grid[c];
      t.dispatch_threads_per_threadgroup[c] = L.tg[c];
    }
    if (L.exact & 1u) {
      const unsigned int rest = L.grid[0] - g * L.tg[0];
      if (rest < t.threads_per_threadgroup[0]) t.threads_per_threadgroup[0] = rest;
    }
    ingot_ids_lanes(t, local);
    return true;
  }
  unsigned int l[3], g[3];
  if (L.block[1] <= 1u && L.block[2] <= 1u) {
    l[0] = local; l[1] = 0u; l[2] = 0u;
  } else {
    const unsigned int bx = L.block[0] ? L.block[0] : 1u, by = L.block[1] ? L.block[1] : 1u;
    l[0] = local % bx; l[1] = (local / bx) % by; l[2] = local / (bx * by);
  }
  if (L.region[1] <= 1u && L.region[2] <= 1u) {
    g[0] = b + L.origin[0]; g[1] = L.origin[1]; g[2] = L.origin[2];
  } else {
    const unsigned int rx = L.region[0] ? L.region[0] : 1u, ry = L.region[1] ? L.region[1] : 1u;
    g[0] = b % rx + L.origin[0]; g[1] = (b / rx) % ry + L.origin[1]; g[2] = b / (rx * ry) + L.origin[2];
  }
  for (int c = 0; c < 3; ++c) {
    t.thread_position_in_threadgroup[c] = l[c];
    t.threadgroup_position_in_grid[c] = g[c];
    t.thread_position_in_grid[c] = g[c] * L.tg[c] + l[c];
    t.threads_per_threadgroup[c] = L.block[c];
    t.threadgroups_per_grid[c] = L.groups[c];
    t.threads_per_grid[c] = L.grid[c];
    t.dispatch_threads_per_threadgroup[c] = L.tg[c];
  }
  if (L.exact & 1u) {
    for (int c = 0; c < 3; ++c)
      if (t.thread_position_in_grid[c] >= L.grid[c]) return false;
    const unsigned int rest = L.grid[0] - g[0] * L.tg[0];
    if (rest < t.threads_per_threadgroup[0]) t.threads_per_threadgroup[0] = rest;
  }
  ingot_ids_lanes(t, local);
  return true;
}
"#;

/// Emits the wrapper of `e`, which calls `callee`; returns (symbol, code).
/// `checked`: buffer and threadgroup parameters become `ingot::chk` (see `checked.rs`).
pub(crate) fn emit(
    e: &EntryPoint,
    callee: &str,
    args: &[WrapperArg],
    checked: bool,
) -> (String, String) {
    let symbol = e.name.clone();
    let max = e
        .max_total_threads_per_threadgroup
        .unwrap_or(1024)
        .clamp(1, 1024);
    // `[[ingot::min_threadgroups_per_core(n)]]`: the occupancy the registers must allow.
    let bounds = match e.min_threadgroups_per_core {
        Some(n) => format!("{max}, {}", n.clamp(1, 32)),
        None => max.to_string(),
    };
    let mut sig = vec!["const ingot::launch L".to_string()];
    for p in e.abi_params() {
        let i = e
            .params
            .iter()
            .position(|q| std::ptr::eq(q, p))
            .unwrap_or(0);
        let Some(a) = args.get(i) else { continue };
        let slot = p.abi_slot.unwrap_or(0);
        let ty = match p.kind {
            ParamKind::Buffer => a.ptr_ty.clone(),
            _ => a.value_ty.clone(),
        };
        sig.push(format!("{ty} a{slot}"));
    }
    if checked {
        let slots: Vec<usize> = (0..e.abi.len()).collect();
        sig.extend(crate::checked::cuda_params(&slots));
    }
    let mut call = Vec::new();
    for (i, p) in e.params.iter().enumerate() {
        let Some(a) = args.get(i) else { continue };
        if !p.active {
            call.push(gated_off_value(p).to_string());
            continue;
        }
        let slot = p.abi_slot.unwrap_or(0);
        let v = match p.kind {
            ParamKind::Buffer if checked && p.is_pointer => {
                crate::checked::cuda_buffer_arg(slot, i)
            }
            ParamKind::Threadgroup if checked => {
                crate::checked::cuda_threadgroup_arg(&a.ptr_ty, p.threadgroup_index.unwrap_or(0), i)
            }
            ParamKind::Buffer if p.is_pointer => format!("a{slot}"),
            ParamKind::Buffer => format!("*a{slot}"),
            ParamKind::Bytes => format!("a{slot}"),
            ParamKind::Threadgroup => format!(
                "({})(ingot_smem + L.tgmem_offset[{}])",
                a.ptr_ty,
                p.threadgroup_index.unwrap_or(0)
            ),
            ParamKind::Builtin => match p.role {
                Some(r) => builtin_value(p, a, r, "ids"),
                None => "{}".to_string(),
            },
        };
        call.push(v);
    }
    let smem = if e
        .params
        .iter()
        .any(|p| p.kind == ParamKind::Threadgroup && p.active)
    {
        "  extern __shared__ __align__(16) unsigned char ingot_smem[];\n"
    } else {
        ""
    };
    let code = format!(
        "extern \"C\" __global__ void __launch_bounds__({bounds}) {symbol}({sig}) {{\n  ingot_ids ids;\n  if (!ingot_ids_init(L, ids)) return;\n{smem}  {callee}({call});\n}}\n",
        sig = sig.join(", "),
        call = call.join(", "),
    );
    (symbol, code)
}
