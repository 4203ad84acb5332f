// SIMD-group functions inside divergent branches act over the lanes that take the branch:
//   lanes with lane < limit:  a[gid] = simd_sum(x)  over those lanes only,
//                             b[gid] = simd_prefix_exclusive_sum(1.0) (rank among them),
//                             c[gid] = simd_shuffle_down(x, 1) (from the next lane; lanes whose
//                             next lane is not in the branch read 0, the last of 32 keeps x),
//   other lanes:              a[gid] = simd_max(x) over the other lanes, b[gid] = -1, c[gid] = 0.
// Buffers: 0 x (float, in), 1 a, 2 b, 3 c (float, out), 4 limit (constant uint, 0..32).
// Launch: dispatchThreadgroups with groups of exactly 64 threads.
#include <metal_stdlib>
using namespace metal;

kernel void simd_divergent(device const float* x [[buffer(0)]],
                           device float* a [[buffer(1)]],
                           device float* b [[buffer(2)]],
                           device float* c [[buffer(3)]],
                           constant uint& limit [[buffer(4)]],
                           uint gid [[thread_position_in_grid]],
                           uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    if (lane < limit) {
        a[gid] = simd_sum(v);
        b[gid] = simd_prefix_exclusive_sum(1.0f);
        c[gid] = simd_shuffle_down(v, 1);
    } else {
        a[gid] = simd_max(v);
        b[gid] = -1.0f;
        c[gid] = 0.0f;
    }
}
