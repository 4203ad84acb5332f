// Every builtin's value per thread, 2-D (uint2 forms). For the thread at grid position (x, y),
// row = y * gw + x (gw = threads_per_grid.x), out[row * 16 + k] for k =
//   0,1 thread_position_in_grid        2,3 thread_position_in_threadgroup
//   4,5 threadgroup_position_in_grid   6,7 threads_per_threadgroup (actual: edge groups smaller)
//   8,9 threadgroups_per_grid          10,11 threads_per_grid
//   12,13 dispatch_threads_per_threadgroup   14 thread_index_in_threadgroup
//   15 thread_index_in_simdgroup + 100 * simdgroup_index_in_threadgroup
// Buffers: 0 out (uint, 16 per thread of the grid, out).
// Launch: dispatchThreads with a 2-D grid such as (37, 11), threadgroup (8, 4): non-uniform edges.
#include <metal_stdlib>
using namespace metal;

kernel void builtins_2d(device uint* out [[buffer(0)]],
                        uint2 pos [[thread_position_in_grid]],
                        uint2 lpos [[thread_position_in_threadgroup]],
                        uint2 group [[threadgroup_position_in_grid]],
                        uint2 tpg [[threads_per_threadgroup]],
                        uint2 groups [[threadgroups_per_grid]],
                        uint2 grid [[threads_per_grid]],
                        uint2 nominal [[dispatch_threads_per_threadgroup]],
                        uint index [[thread_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]]) {
    device uint* o = out + (pos.y * grid.x + pos.x) * 16;
    o[0] = pos.x;     o[1] = pos.y;
    o[2] = lpos.x;    o[3] = lpos.y;
    o[4] = group.x;   o[5] = group.y;
    o[6] = tpg.x;     o[7] = tpg.y;
    o[8] = groups.x;  o[9] = groups.y;
    o[10] = grid.x;   o[11] = grid.y;
    o[12] = nominal.x; o[13] = nominal.y;
    o[14] = index;
    o[15] = lane + 100 * sg;
}
