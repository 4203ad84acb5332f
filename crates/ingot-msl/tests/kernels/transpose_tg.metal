// Matrix transpose through a padded threadgroup tile: out[c][r] = in[r][c] for an R x C float
// matrix (row-major in, row-major C x R out).
// Buffers: 0 in (float, R*C, in), 1 out (float, C*R, out), 2 R (constant uint), 3 C (constant uint).
// Launch: dispatchThreadgroups with (ceil(C/32), ceil(R/32)) groups of (32, 8) threads; each
//   thread handles 4 rows of the 32x32 tile.
#include <metal_stdlib>
using namespace metal;

constant constexpr uint TDIM = 32;
constant constexpr uint ROWS = 8;

kernel void transpose_tg(device const float* in [[buffer(0)]],
                         device float* out [[buffer(1)]],
                         constant uint& R [[buffer(2)]],
                         constant uint& C [[buffer(3)]],
                         uint2 group [[threadgroup_position_in_grid]],
                         uint2 lid [[thread_position_in_threadgroup]]) {
    threadgroup float tile[TDIM][TDIM + 1];
    uint x = group.x * TDIM + lid.x;
    for (uint j = 0; j < TDIM; j += ROWS) {
        uint y = group.y * TDIM + lid.y + j;
        if (x < C && y < R) {
            tile[lid.y + j][lid.x] = in[y * C + x];
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    uint ox = group.y * TDIM + lid.x;
    for (uint j = 0; j < TDIM; j += ROWS) {
        uint oy = group.x * TDIM + lid.y + j;
        if (ox < R && oy < C) {
            out[oy * R + ox] = tile[lid.x][lid.y + j];
        }
    }
}
