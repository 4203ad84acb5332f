// SIMD-group bitwise reductions on uint and integer sums on int:
//   a[gid] = simd_and(x), o[gid] = simd_or(x), e[gid] = simd_xor(x), s[gid] = simd_sum(int(x) - 7)
//   over the 32-lane SIMD-group of each thread (the active lanes of a partial group).
// Buffers: 0 x (uint, in), 1 a, 2 o, 3 e (uint, out), 4 s (int, out).
// Launch: dispatchThreads, 1-D grid of exactly n threads, threadgroup 128.
#include <metal_stdlib>
using namespace metal;

kernel void simd_bitwise(device const uint* x [[buffer(0)]],
                         device uint* a [[buffer(1)]],
                         device uint* o [[buffer(2)]],
                         device uint* e [[buffer(3)]],
                         device int* s [[buffer(4)]],
                         uint gid [[thread_position_in_grid]]) {
    uint v = x[gid];
    a[gid] = simd_and(v);
    o[gid] = simd_or(v);
    e[gid] = simd_xor(v);
    s[gid] = simd_sum(int(v) - 7);
}
