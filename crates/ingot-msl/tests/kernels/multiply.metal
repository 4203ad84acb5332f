// metalcompute's helloABC: c[i] = a[i] * b[i] (float32).
// Buffers: 0 a (float, in), 1 b (float, in), 2 c (float, out).
// Launch: 1-D grid of exactly n threads (metalcompute form kernel(n, a, b, c)), any threadgroup.
#include <metal_stdlib>
using namespace metal;

kernel void multiply(const device float *a [[buffer(0)]],
                     const device float *b [[buffer(1)]],
                     device float *c [[buffer(2)]],
                     uint id [[thread_position_in_grid]]) {
    c[id] = a[id] * b[id];
}
