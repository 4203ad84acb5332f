// Threadgroup reduction with a static threadgroup array and barriers (tree reduction):
//   partial[g] = sum of in[g*256 .. g*256+255] (elements past n count as 0).
// Buffers: 0 in (float, n, in), 1 partial (float, one per group, out), 2 n (constant uint).
// Launch: dispatchThreadgroups: ceil(n/256) groups of exactly 256 threads (1-D).
#include <metal_stdlib>
using namespace metal;

kernel void tg_reduce(device const float* in [[buffer(0)]],
                      device float* partial [[buffer(1)]],
                      constant uint& n [[buffer(2)]],
                      uint gid [[thread_position_in_grid]],
                      uint lid [[thread_position_in_threadgroup]],
                      uint group [[threadgroup_position_in_grid]]) {
    threadgroup float shared[256];
    shared[lid] = gid < n ? in[gid] : 0.0f;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint s = 128; s > 0; s >>= 1) {
        if (lid < s) {
            shared[lid] += shared[lid + s];
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lid == 0) {
        partial[group] = shared[0];
    }
}
