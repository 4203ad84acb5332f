// Layer norm over rows with an optional weight gated by a function constant, one SIMD-group per row:
//   mean = sum(x)/cols, var = sum((x-mean)^2)/cols, y = (x - mean) * rsqrt(var + eps) [* w[c]]
// Constants: has_weight (bool, index 0).
// Buffers: 0 x (float, rows*cols, in), 1 y (float, out), 2 cols (constant uint),
//   3 eps (constant float), 4 w (float, cols, in; only when has_weight).
// Launch: dispatchThreadgroups with (rows) groups of exactly 32 threads.
#include <metal_stdlib>
using namespace metal;

constant bool has_weight [[function_constant(0)]];

kernel void layernorm(device const float* x [[buffer(0)]],
                      device float* y [[buffer(1)]],
                      constant uint& cols [[buffer(2)]],
                      constant float& eps [[buffer(3)]],
                      device const float* w [[buffer(4), function_constant(has_weight)]],
                      uint row [[threadgroup_position_in_grid]],
                      uint lane [[thread_index_in_simdgroup]]) {
    device const float* xr = x + row * cols;
    float s = 0.0f;
    for (uint c = lane; c < cols; c += 32) s += xr[c];
    float mean = simd_sum(s) / float(cols);
    float v = 0.0f;
    for (uint c = lane; c < cols; c += 32) {
        float d = xr[c] - mean;
        v += d * d;
    }
    float inv = rsqrt(simd_sum(v) / float(cols) + eps);
    for (uint c = lane; c < cols; c += 32) {
        float r = (xr[c] - mean) * inv;
        if (has_weight) r *= w[c];
        y[row * cols + c] = r;
    }
}
