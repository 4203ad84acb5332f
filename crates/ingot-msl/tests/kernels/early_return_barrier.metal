// Threads that return early still count as arrived at later barriers:
//   threads with lid >= active return at once; the others fill shared[lid] = in[gid] * 2, wait at a
//   barrier, then out[gid] = shared[(lid + 1) % active]. Threads that returned write nothing.
// Buffers: 0 in (float, in), 1 out (float, out), 2 active (constant uint, <= 128).
// Launch: dispatchThreadgroups with groups of exactly 128 threads (1-D); out entries of returned
//   threads keep their old values.
#include <metal_stdlib>
using namespace metal;

kernel void early_return_barrier(device const float* in [[buffer(0)]],
                                 device float* out [[buffer(1)]],
                                 constant uint& active [[buffer(2)]],
                                 uint gid [[thread_position_in_grid]],
                                 uint lid [[thread_position_in_threadgroup]]) {
    threadgroup float shared[128];
    if (lid >= active) {
        return;
    }
    shared[lid] = in[gid] * 2.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = shared[(lid + 1) % active];
}
