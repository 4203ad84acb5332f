// Inclusive prefix sum of each threadgroup's slice using simd_prefix_inclusive_sum, simd_sum and
// threadgroup memory (the Blelloch-free two-level scan used by real kernels):
//   out[g*256 + l] = in[g*256] + ... + in[g*256 + l]   (per group; groups are independent)
//   totals[g] = sum of the group's slice.
// Buffers: 0 in (uint, in), 1 out (uint, out), 2 totals (uint, one per group, out).
// Launch: dispatchThreadgroups with groups of exactly 256 threads (8 SIMD-groups).
#include <metal_stdlib>
using namespace metal;

kernel void block_scan(device const uint* in [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       device uint* totals [[buffer(2)]],
                       uint gid [[thread_position_in_grid]],
                       uint lid [[thread_index_in_threadgroup]],
                       uint group [[threadgroup_position_in_grid]],
                       uint lane [[thread_index_in_simdgroup]],
                       uint sg [[simdgroup_index_in_threadgroup]],
                       uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup uint sg_totals[32];
    uint v = in[gid];
    uint inclusive = simd_prefix_inclusive_sum(v);
    if (lane == 31) {
        sg_totals[sg] = inclusive;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (sg == 0) {
        uint t = lane < nsg ? sg_totals[lane] : 0u;
        uint excl = simd_prefix_exclusive_sum(t);
        uint total = simd_sum(t);
        if (lane < nsg) {
            sg_totals[lane] = excl;
        }
        if (lane == 0) {
            totals[group] = total;
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = inclusive + sg_totals[sg];
    (void)lid;
}
