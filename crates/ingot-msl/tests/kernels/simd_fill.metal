// simd_shuffle_and_fill_down/up (sliding windows across two registers):
//   d[gid] = simd_shuffle_and_fill_down(a, b, 4): lane l gets a from lane l+4 when l+4 < 32,
//            else b from lane l+4-32.
//   u[gid] = simd_shuffle_and_fill_up(a, b, 4): lane l gets a from lane l-4 when l >= 4, else
//            b from lane l-4+32.
//   m[gid] = simd_shuffle_and_fill_down(a, b, 2, 8): the same within groups of 8 lanes.
//   where a = x[gid], b = y[gid].
// Buffers: 0 x (float, in), 1 y (float, in), 2 d, 3 u, 4 m (float, out).
// Launch: dispatchThreadgroups with groups of exactly 32 threads.
#include <metal_stdlib>
using namespace metal;

kernel void simd_fill(device const float* x [[buffer(0)]],
                      device const float* y [[buffer(1)]],
                      device float* d [[buffer(2)]],
                      device float* u [[buffer(3)]],
                      device float* m [[buffer(4)]],
                      uint gid [[thread_position_in_grid]]) {
    float a = x[gid];
    float b = y[gid];
    d[gid] = simd_shuffle_and_fill_down(a, b, 4);
    u[gid] = simd_shuffle_and_fill_up(a, b, 4);
    m[gid] = simd_shuffle_and_fill_down(a, b, 2, 8);
}
