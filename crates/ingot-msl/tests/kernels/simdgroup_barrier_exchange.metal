// simdgroup_barrier between a write and a read by another lane of the same SIMD-group, through
// threadgroup memory (no threadgroup_barrier): out[gid] = in[gid ^ 1] (neighbour swap in pairs).
// Buffers: 0 in (float, in), 1 out (float, out).
// Launch: dispatchThreadgroups with groups of exactly 64 threads.
#include <metal_stdlib>
using namespace metal;

kernel void simdgroup_barrier_exchange(device const float* in [[buffer(0)]],
                                       device float* out [[buffer(1)]],
                                       uint gid [[thread_position_in_grid]],
                                       uint lid [[thread_index_in_threadgroup]]) {
    threadgroup float buf[64];
    buf[lid] = in[gid];
    simdgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = buf[lid ^ 1];
}
