// SIMD-group shuffles. With lane = thread_index_in_simdgroup and v = x[gid]:
//   r[gid*8 + 0] = simd_shuffle(v, (lane * 5) % 32)
//   r[gid*8 + 1] = simd_shuffle_down(v, 3)      (lanes 29..31 keep their own v)
//   r[gid*8 + 2] = simd_shuffle_up(v, 2)        (lanes 0..1 keep their own v)
//   r[gid*8 + 3] = simd_shuffle_xor(v, 5)
//   r[gid*8 + 4] = simd_broadcast(v, 7)
//   r[gid*8 + 5] = simd_broadcast_first(v)
//   r[gid*8 + 6] = simd_shuffle_rotate_down(v, 1)   (lane + 1 mod 32)
//   r[gid*8 + 7] = float(lane)
// Buffers: 0 x (float, in), 1 r (float, 8 per thread, out).
// Launch: dispatchThreadgroups with groups of exactly 64 threads (full SIMD-groups).
#include <metal_stdlib>
using namespace metal;

kernel void simd_shuffles(device const float* x [[buffer(0)]],
                          device float* r [[buffer(1)]],
                          uint gid [[thread_position_in_grid]],
                          uint lane [[thread_index_in_simdgroup]]) {
    float v = x[gid];
    device float* o = r + gid * 8;
    o[0] = simd_shuffle(v, ushort((lane * 5) % 32));
    o[1] = simd_shuffle_down(v, 3);
    o[2] = simd_shuffle_up(v, 2);
    o[3] = simd_shuffle_xor(v, 5);
    o[4] = simd_broadcast(v, 7);
    o[5] = simd_broadcast_first(v);
    o[6] = simd_shuffle_rotate_down(v, 1);
    o[7] = float(lane);
}
