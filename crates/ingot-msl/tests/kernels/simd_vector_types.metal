// SIMD-group functions on vector and half values:
//   s[gid] = simd_sum(float4(x, 2x, -x, 1)), h[gid] = float(simd_max(half(x))),
//   d[gid] = simd_shuffle_down(float2(x, gid), 1) (lane 31 keeps its own value),
//   i[gid] = simd_sum(int2(1, lane)).y
// Buffers: 0 x (float, in), 1 s (float4, out), 2 h (float, out), 3 d (float2, out), 4 i (int, out).
// Launch: dispatchThreadgroups with groups of exactly 64 threads.
#include <metal_stdlib>
using namespace metal;

kernel void simd_vector_types(device const float* x [[buffer(0)]],
                              device float4* s [[buffer(1)]],
                              device float* h [[buffer(2)]],
                              device float2* d [[buffer(3)]],
                              device int* i [[buffer(4)]],
                              uint gid [[thread_position_in_grid]],
                              uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    s[gid] = simd_sum(float4(v, 2.0f * v, -v, 1.0f));
    h[gid] = float(simd_max(half(v)));
    d[gid] = simd_shuffle_down(float2(v, float(gid)), 1);
    i[gid] = simd_sum(int2(1, int(lane))).y;
}
