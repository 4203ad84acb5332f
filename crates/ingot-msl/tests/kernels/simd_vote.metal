// SIMD-group votes. With p = x[gid] > 0:
//   ballot[gid] = uint(ulong(simd_ballot(p)))   (bit l set when lane l's p is true)
//   all[gid] = simd_all(p), any[gid] = simd_any(p), first[gid] = simd_is_first()
//   mask[gid] = uint(ulong(simd_active_threads_mask()))
// Buffers: 0 x (float, in), 1 ballot, 2 all, 3 any, 4 first, 5 mask (uint, out).
// Launch: dispatchThreads, 1-D grid of exactly n threads, threadgroup 64 (a partial last group has
//   fewer active lanes: mask shows them).
#include <metal_stdlib>
using namespace metal;

kernel void simd_vote_kernel(device const float* x [[buffer(0)]],
                             device uint* ballot [[buffer(1)]],
                             device uint* all_out [[buffer(2)]],
                             device uint* any_out [[buffer(3)]],
                             device uint* first [[buffer(4)]],
                             device uint* mask [[buffer(5)]],
                             uint gid [[thread_position_in_grid]]) {
    bool p = x[gid] > 0.0f;
    simd_vote v = simd_ballot(p);
    ballot[gid] = uint(static_cast<simd_vote::vote_t>(v));
    all_out[gid] = simd_all(p) ? 1 : 0;
    any_out[gid] = simd_any(p) ? 1 : 0;
    first[gid] = simd_is_first() ? 1 : 0;
    mask[gid] = uint(static_cast<simd_vote::vote_t>(simd_active_threads_mask()));
}
