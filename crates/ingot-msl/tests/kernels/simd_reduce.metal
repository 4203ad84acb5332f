// SIMD-group reductions over 32-lane groups: for every thread,
//   sum[gid] = simd_sum(x), prod[gid] = simd_product(x), mn[gid] = simd_min(x), mx[gid] = simd_max(x)
//   where each SIMD-group is 32 consecutive threads of the threadgroup (a partial last group
//   reduces over its real threads only).
// Buffers: 0 x (float, in), 1 sum, 2 prod, 3 mn, 4 mx (float, out, one per thread).
// Launch: dispatchThreads, 1-D grid of exactly n threads, threadgroup 64 (SIMD-groups of 32).
#include <metal_stdlib>
using namespace metal;

kernel void simd_reduce(device const float* x [[buffer(0)]],
                        device float* sum [[buffer(1)]],
                        device float* prod [[buffer(2)]],
                        device float* mn [[buffer(3)]],
                        device float* mx [[buffer(4)]],
                        uint gid [[thread_position_in_grid]]) {
    float v = x[gid];
    sum[gid] = simd_sum(v);
    prod[gid] = simd_product(v);
    mn[gid] = simd_min(v);
    mx[gid] = simd_max(v);
}
