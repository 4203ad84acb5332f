// simdgroup_matrix through threadgroup memory, half inputs with float accumulation, transpose:
//   out = transpose(X) * Y + I for 8x8 half matrices X, Y (row-major), computed in float;
//   X and Y are staged in threadgroup memory; the result is stored transposed into the
//   threadgroup tile and copied out, so out_t = (transpose(X) * Y + I)^T.
// Buffers: 0 X (half, 64, in), 1 Y (half, 64, in), 2 out_t (float, 64, out).
// Launch: dispatchThreadgroups with 1 group of exactly 32 threads.
#include <metal_stdlib>
using namespace metal;

kernel void simdgroup_matrix_tg(device const half* X [[buffer(0)]],
                                device const half* Y [[buffer(1)]],
                                device float* out_t [[buffer(2)]],
                                uint lid [[thread_index_in_threadgroup]]) {
    threadgroup half xs[64];
    threadgroup half ys[64];
    threadgroup float res[64];
    for (uint i = lid; i < 64; i += 32) {
        xs[i] = X[i];
        ys[i] = Y[i];
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    simdgroup_half8x8 x;
    simdgroup_half8x8 y;
    simdgroup_load(x, xs, 8, ulong2(0, 0), true);
    simdgroup_load(y, ys, 8);
    simdgroup_float8x8 id = simdgroup_float8x8(1.0f);
    simdgroup_float8x8 r;
    simdgroup_multiply_accumulate(r, x, y, id);
    simdgroup_store(r, res, 8, ulong2(0, 0), true);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint i = lid; i < 64; i += 32) {
        out_t[i] = res[i];
    }
}
