// [[max_total_threads_per_threadgroup(256)]] (a launch bound) and a grid-stride loop over
// threads_per_grid: out[j] = in[j] * in[j] for every j < n, each thread striding by the grid size.
// Buffers: 0 in (float, n, in), 1 out (float, n, out), 2 n (constant uint).
// Launch: dispatchThreads with any 1-D grid (e.g. 1000 threads for n = 10000), threadgroup <= 256.
#include <metal_stdlib>
using namespace metal;

[[max_total_threads_per_threadgroup(256)]]
kernel void grid_stride_square(device const float* in [[buffer(0)]],
                               device float* out [[buffer(1)]],
                               constant uint& n [[buffer(2)]],
                               uint gid [[thread_position_in_grid]],
                               uint total [[threads_per_grid]]) {
    for (uint j = gid; j < n; j += total) {
        out[j] = in[j] * in[j];
    }
}
