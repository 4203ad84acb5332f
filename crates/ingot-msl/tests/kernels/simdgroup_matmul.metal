// simdgroup_matrix GEMM: C = A * B for row-major float matrices whose sizes are multiples of 8
// (M x K times K x N). Each threadgroup is one SIMD-group (32 threads) computing the 8x8 tile of
// C at rows 8*group.y, columns 8*group.x, with simdgroup_load / multiply_accumulate / store.
// Also writes the lane layout of the loaded A tile of group (0, 0):
//   layout[lane*2 + k] = thread_elements()[k] of A's first tile (Apple's layout: lane l holds row
//   4*bit4(l) + bits1..2(l), columns 4*bit3(l) + 2*bit0(l) + k).
//   struct Dims { uint M; uint N; uint K; }
// Buffers: 0 A (float, M*K, in), 1 B (float, K*N, in), 2 C (float, M*N, out),
//   3 layout (float, 64, out), 4 d (Dims).
// Launch: dispatchThreadgroups with (N/8, M/8) groups of exactly (32, 1) threads.
#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

struct Dims {
    uint M;
    uint N;
    uint K;
};

kernel void simdgroup_matmul(device const float* A [[buffer(0)]],
                             device const float* B [[buffer(1)]],
                             device float* C [[buffer(2)]],
                             device float* layout [[buffer(3)]],
                             constant Dims& d [[buffer(4)]],
                             uint2 group [[threadgroup_position_in_grid]],
                             ushort lane [[thread_index_in_simdgroup]]) {
    simdgroup_float8x8 acc = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
    simdgroup_float8x8 a;
    simdgroup_float8x8 b;
    for (uint k = 0; k < d.K; k += 8) {
        simdgroup_load(a, A, d.K, ulong2(k, group.y * 8));
        simdgroup_load(b, B, d.N, ulong2(group.x * 8, k));
        simdgroup_multiply_accumulate(acc, a, b, acc);
        if (k == 0 && group.x == 0 && group.y == 0) {
            layout[lane * 2 + 0] = a.thread_elements()[0];
            layout[lane * 2 + 1] = a.thread_elements()[1];
        }
    }
    simdgroup_store(acc, C, d.N, ulong2(group.x * 8, group.y * 8));
}
