// Global float sum with atomic_float (order of additions varies: compare with a tolerance):
//   total[0] += x[i] for every i < n, via SIMD-group partial sums (one atomic per SIMD-group).
// Buffers: 0 x (float, n, in), 1 total (atomic_float = float32, 1, in/out: zero it first),
//   2 n (constant uint).
// Launch: dispatchThreadgroups with ceil(n/256) groups of 256.
#include <metal_stdlib>
using namespace metal;

kernel void atomic_float_sum(device const float* x [[buffer(0)]],
                             device atomic_float* total [[buffer(1)]],
                             constant uint& n [[buffer(2)]],
                             uint gid [[thread_position_in_grid]],
                             uint lane [[thread_index_in_simdgroup]]) {
    float v = gid < n ? x[gid] : 0.0f;
    float s = simd_sum(v);
    if (lane == 0) {
        atomic_fetch_add_explicit(total, s, memory_order_relaxed);
    }
}
