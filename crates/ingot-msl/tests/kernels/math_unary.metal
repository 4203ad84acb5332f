// Precise math (NumPy-comparable; tolerance ~2 ulp) on floats, 12 outputs per element:
//   o[i*12 + k] for k = 0 exp, 1 exp2, 2 log, 3 log2, 4 sqrt, 5 rsqrt, 6 sin, 7 cos, 8 tanh,
//   9 pow(|x|, 1.5), 10 atan2(x, 2), 11 erf
// Inputs in (0, 10] for the logs; other inputs give NaN/inf as NumPy does.
// Buffers: 0 x (float, in), 1 o (float, 12 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void math_unary(device const float* x [[buffer(0)]],
                       device float* o [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    float v = x[i];
    device float* r = o + i * 12;
    r[0] = exp(v);
    r[1] = exp2(v);
    r[2] = log(v);
    r[3] = log2(v);
    r[4] = sqrt(v);
    r[5] = rsqrt(v);
    r[6] = sin(v);
    r[7] = cos(v);
    r[8] = tanh(v);
    r[9] = precise::pow(fabs(v), 1.5f);
    r[10] = atan2(v, 2.0f);
    r[11] = erf(v);
}
