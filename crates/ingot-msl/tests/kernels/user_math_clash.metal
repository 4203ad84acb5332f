// User functions named like global math functions (log1p, erf) and a helper template:
//   out[i] = log1p(x[i]) + erf(x[i]) where the user's own definitions are
//   log1p(v) = log(1 + v) and erf(v) = tanh(1.202760580 * v) (an approximation, on purpose),
//   so out[i] = log(1 + x) + tanh(1.202760580 * x).
// Buffers: 0 x (float, in, x > -1), 1 out (float, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

float log1p(float v) {
    return log(1.0f + v);
}

float erf(float v) {
    return tanh(1.202760580f * v);
}

template <typename T>
T combine(T a, T b) {
    return a + b;
}

kernel void user_math_clash(device const float* x [[buffer(0)]],
                            device float* out [[buffer(1)]],
                            uint i [[thread_position_in_grid]]) {
    out[i] = combine(log1p(x[i]), erf(x[i]));
}
