// Function constants specialise the kernel at compile time and gate an optional argument:
//   constant bool has_bias [[function_constant(0)]];  constant float scale [[function_constant(1)]];
//   out[i] = x[i] * scale (+ bias[i] when has_bias).
// Buffers: 0 x (float, in), 1 out (float, out), 2 bias (float, in; present only when has_bias).
// Constants: has_bias (bool, index 0), scale (float, index 1).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

constant bool has_bias [[function_constant(0)]];
constant float scale [[function_constant(1)]];

kernel void scaled_bias(device const float* x [[buffer(0)]],
                        device float* out [[buffer(1)]],
                        device const float* bias [[buffer(2), function_constant(has_bias)]],
                        uint i [[thread_position_in_grid]]) {
    float v = x[i] * scale;
    if (has_bias) {
        v += bias[i];
    }
    out[i] = v;
}
