// Buffer indices without attributes (ggml style), mixed with one explicit index:
//   out[i] = a[i] * scale + b[i] + offset
// Buffers (implicit order): 0 a (float, in), 1 b (float, in), 5 out (float, out; explicit),
//   6 scale (constant float), 7 offset (constant float) -- implicit indices continue after 5.
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void implicit_indices(device const float* a,
                             device const float* b,
                             device float* out [[buffer(5)]],
                             constant float& scale,
                             constant float& offset,
                             uint i [[thread_position_in_grid]]) {
    out[i] = a[i] * scale + b[i] + offset;
}
