// An integer function constant as a loop bound and an optional one with a default:
//   constant int taps [[function_constant(0)]];
//   constant bool abs_flag [[function_constant(1)]]; optional: abs() is applied when a value is
//   given for it (any value), through is_function_constant_defined.
//   out[i] = sum_{k < taps} w[k] * x[i + k]  (then abs() when abs_flag is given).
// Buffers: 0 x (float, n + taps - 1 elements, in), 1 w (float, taps, in), 2 out (float, n, out).
// Constants: taps (int, index 0), abs_flag (bool, index 1, optional).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

constant int taps [[function_constant(0)]];
constant bool abs_flag [[function_constant(1)]];
constant bool use_abs = is_function_constant_defined(abs_flag);

kernel void fir(device const float* x [[buffer(0)]],
                device const float* w [[buffer(1)]],
                device float* out [[buffer(2)]],
                uint i [[thread_position_in_grid]]) {
    float acc = 0.0f;
    for (int k = 0; k < taps; ++k) {
        acc = fma(w[k], x[i + k], acc);
    }
    out[i] = use_abs ? abs(acc) : acc;
}
