// Every builtin's value per thread, 3-D (uint3 forms) plus the scalar ones. For the thread at grid
// position p, row = (p.z * grid.y + p.y) * grid.x + p.x, out[row * 24 + k] for k =
//   0..2 thread_position_in_grid      3..5 thread_position_in_threadgroup
//   6..8 threadgroup_position_in_grid 9..11 threads_per_threadgroup (actual)
//   12..14 threadgroups_per_grid      15..17 threads_per_grid
//   18 thread_index_in_threadgroup    19 thread_index_in_simdgroup
//   20 simdgroup_index_in_threadgroup 21 simdgroups_per_threadgroup
//   22 threads_per_simdgroup (32)     23 thread_execution_width (32)
// Buffers: 0 out (uint, 24 per thread, out).
// Launch: dispatchThreads with a 3-D grid such as (9, 5, 3), threadgroup (4, 2, 2).
#include <metal_stdlib>
using namespace metal;

kernel void builtins_3d(device uint* out [[buffer(0)]],
                        uint3 p [[thread_position_in_grid]],
                        uint3 l [[thread_position_in_threadgroup]],
                        uint3 g [[threadgroup_position_in_grid]],
                        uint3 tpg [[threads_per_threadgroup]],
                        uint3 groups [[threadgroups_per_grid]],
                        uint3 grid [[threads_per_grid]],
                        uint index [[thread_index_in_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint nsg [[simdgroups_per_threadgroup]],
                        uint width [[threads_per_simdgroup]],
                        uint exec_width [[thread_execution_width]]) {
    device uint* o = out + ((p.z * grid.y + p.y) * grid.x + p.x) * 24;
    o[0] = p.x; o[1] = p.y; o[2] = p.z;
    o[3] = l.x; o[4] = l.y; o[5] = l.z;
    o[6] = g.x; o[7] = g.y; o[8] = g.z;
    o[9] = tpg.x; o[10] = tpg.y; o[11] = tpg.z;
    o[12] = groups.x; o[13] = groups.y; o[14] = groups.z;
    o[15] = grid.x; o[16] = grid.y; o[17] = grid.z;
    o[18] = index; o[19] = lane; o[20] = sg; o[21] = nsg;
    o[22] = width; o[23] = exec_width;
}
