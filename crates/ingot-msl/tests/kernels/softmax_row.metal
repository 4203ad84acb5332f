// Row softmax, one threadgroup per row (candle/MLX style: SIMD-group reductions, then a
// threadgroup combine): out[r][c] = exp(x[r][c] - max_r) / sum_c exp(x[r][c] - max_r).
// Buffers: 0 x (float, rows*cols, in), 1 out (float, out), 2 cols (constant uint).
// Launch: dispatchThreadgroups with (rows) groups of exactly 128 threads (4 SIMD-groups); any cols.
#include <metal_stdlib>
using namespace metal;

kernel void softmax_row(device const float* x [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        constant uint& cols [[buffer(2)]],
                        uint row [[threadgroup_position_in_grid]],
                        uint lid [[thread_index_in_threadgroup]],
                        uint tcount [[threads_per_threadgroup]],
                        uint lane [[thread_index_in_simdgroup]],
                        uint sg [[simdgroup_index_in_threadgroup]],
                        uint nsg [[simdgroups_per_threadgroup]]) {
    threadgroup float partial[32];
    device const float* xr = x + row * cols;
    device float* orow = out + row * cols;

    float m = -INFINITY;
    for (uint c = lid; c < cols; c += tcount) m = max(m, xr[c]);
    m = simd_max(m);
    if (lane == 0) partial[sg] = m;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    m = partial[0];
    for (uint k = 1; k < nsg; ++k) m = max(m, partial[k]);
    threadgroup_barrier(mem_flags::mem_threadgroup);

    float s = 0.0f;
    for (uint c = lid; c < cols; c += tcount) s += exp(xr[c] - m);
    s = simd_sum(s);
    if (lane == 0) partial[sg] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    s = 0.0f;
    for (uint k = 0; k < nsg; ++k) s += partial[k];

    for (uint c = lid; c < cols; c += tcount) orow[c] = exp(xr[c] - m) / s;
}
