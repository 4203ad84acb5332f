// Builtins declared as ushort / ushort2 / ushort3 and as scalars taking the x component:
//   gid = pos.y * grid.x + pos.x (ushort2 thread_position_in_grid and threads_per_grid),
//   out[gid*6 + 0] = gsx (ushort threadgroup_position_in_grid: the x component),
//   1 = lpos.x, 2 = lpos.y (ushort2 thread_position_in_threadgroup),
//   3 = tg.x + tg.y + tg.z (ushort3 threads_per_threadgroup, actual size),
//   4 = quadgroup_index_in_threadgroup, 5 = thread_index_in_quadgroup (ushort).
// Buffers: 0 out (uint, 6 per thread, out).
// Launch: dispatchThreads, 2-D grid (20, 6), threadgroup (8, 2).
#include <metal_stdlib>
using namespace metal;

kernel void builtins_ushort(device uint* out [[buffer(0)]],
                            ushort2 pos [[thread_position_in_grid]],
                            ushort2 grid [[threads_per_grid]],
                            ushort gsx [[threadgroup_position_in_grid]],
                            ushort2 lpos [[thread_position_in_threadgroup]],
                            ushort3 tg [[threads_per_threadgroup]],
                            ushort quad [[quadgroup_index_in_threadgroup]],
                            ushort qlane [[thread_index_in_quadgroup]]) {
    uint gid = uint(pos.y) * uint(grid.x) + uint(pos.x);
    out[gid * 6 + 0] = gsx;
    out[gid * 6 + 1] = lpos.x;
    out[gid * 6 + 2] = lpos.y;
    out[gid * 6 + 3] = tg.x + tg.y + tg.z;
    out[gid * 6 + 4] = quad;
    out[gid * 6 + 5] = qlane;
}
