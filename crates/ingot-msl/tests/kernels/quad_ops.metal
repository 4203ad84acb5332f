// Quad-group (4 lanes) functions. With v = x[gid], q = thread_index_in_quadgroup:
//   o[gid*5 + 0] = quad_sum(v), 1 = quad_shuffle(v, 3 - q), 2 = quad_shuffle_xor(v, 1),
//   3 = quad_broadcast(v, 0), 4 = quad_prefix_inclusive_sum(v)   (within each group of 4 lanes)
// Buffers: 0 x (float, in), 1 o (float, 5 per thread, out).
// Launch: dispatchThreadgroups with groups of exactly 32 threads.
#include <metal_stdlib>
using namespace metal;

kernel void quad_ops(device const float* x [[buffer(0)]],
                     device float* o [[buffer(1)]],
                     uint gid [[thread_position_in_grid]],
                     ushort q [[thread_index_in_quadgroup]]) {
    float v = x[gid];
    o[gid * 5 + 0] = quad_sum(v);
    o[gid * 5 + 1] = quad_shuffle(v, ushort(3 - q));
    o[gid * 5 + 2] = quad_shuffle_xor(v, 1);
    o[gid * 5 + 3] = quad_broadcast(v, 0);
    o[gid * 5 + 4] = quad_prefix_inclusive_sum(v);
}
