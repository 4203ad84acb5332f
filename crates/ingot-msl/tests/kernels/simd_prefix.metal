// SIMD-group prefix operations within each 32-lane SIMD-group (lane order):
//   inc[gid] = simd_prefix_inclusive_sum(x), exc[gid] = simd_prefix_exclusive_sum(x),
//   pin[gid] = simd_prefix_inclusive_product(y), pex[gid] = simd_prefix_exclusive_product(y)
//   (exclusive: lane 0 gets 0 for sums and 1 for products), iexc[gid] = simd_prefix_exclusive_sum(k)
//   for k = uint input.
// Buffers: 0 x (float, in), 1 y (float, in), 2 k (uint, in), 3 inc, 4 exc, 5 pin, 6 pex (float, out),
//   7 iexc (uint, out).
// Launch: dispatchThreads, 1-D grid of exactly n threads, threadgroup 96.
#include <metal_stdlib>
using namespace metal;

kernel void simd_prefix(device const float* x [[buffer(0)]],
                        device const float* y [[buffer(1)]],
                        device const uint* k [[buffer(2)]],
                        device float* inc [[buffer(3)]],
                        device float* exc [[buffer(4)]],
                        device float* pin [[buffer(5)]],
                        device float* pex [[buffer(6)]],
                        device uint* iexc [[buffer(7)]],
                        uint gid [[thread_position_in_grid]]) {
    inc[gid] = simd_prefix_inclusive_sum(x[gid]);
    exc[gid] = simd_prefix_exclusive_sum(x[gid]);
    pin[gid] = simd_prefix_inclusive_product(y[gid]);
    pex[gid] = simd_prefix_exclusive_product(y[gid]);
    iexc[gid] = simd_prefix_exclusive_sum(k[gid]);
}
