// Tiled matrix multiply with threadgroup tiles: C = A * B, row-major float32,
// A is M x K, B is K x N, C is M x N; out-of-range tile elements load as 0.
//   struct Dims { uint M; uint N; uint K; }
// Buffers: 0 A (float, in), 1 B (float, in), 2 C (float, out), 3 dims (Dims).
// Launch: dispatchThreadgroups with (ceil(N/16), ceil(M/16)) groups of (16, 16) threads;
//   thread (x, y) of group (gx, gy) computes C[gy*16 + y][gx*16 + x] when inside.
#include <metal_stdlib>
using namespace metal;

#define TILE 16

struct Dims {
    uint M;
    uint N;
    uint K;
};

kernel void matmul_tiled(device const float* A [[buffer(0)]],
                         device const float* B [[buffer(1)]],
                         device float* C [[buffer(2)]],
                         constant Dims& d [[buffer(3)]],
                         uint2 gid [[thread_position_in_grid]],
                         uint2 lid [[thread_position_in_threadgroup]]) {
    threadgroup float As[TILE][TILE];
    threadgroup float Bs[TILE][TILE];
    uint row = gid.y;
    uint col = gid.x;
    float acc = 0.0f;
    for (uint t = 0; t < (d.K + TILE - 1) / TILE; ++t) {
        uint ak = t * TILE + lid.x;
        uint bk = t * TILE + lid.y;
        As[lid.y][lid.x] = (row < d.M && ak < d.K) ? A[row * d.K + ak] : 0.0f;
        Bs[lid.y][lid.x] = (bk < d.K && col < d.N) ? B[bk * d.N + col] : 0.0f;
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint k = 0; k < TILE; ++k) {
            acc = fma(As[lid.y][k], Bs[k][lid.x], acc);
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (row < d.M && col < d.N) {
        C[row * d.N + col] = acc;
    }
}
