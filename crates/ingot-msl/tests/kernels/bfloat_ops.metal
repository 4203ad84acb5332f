// bfloat (bfloat16) arithmetic and conversions:
//   y[i] = bfloat(float(x[i]) * 2.0f + 1.0f)   (computed in float, rounded to bfloat, RNE)
//   z[i] = x[i] * s                            (bfloat * float -> float)
//   w[i] = bfloat(max(float(x[i]), 0.0f))      (ReLU)
// Buffers: 0 x (bfloat16, in), 1 y (bfloat16, out), 2 z (float, out), 3 w (bfloat16, out),
//   4 s (constant float).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void bfloat_ops(device const bfloat* x [[buffer(0)]],
                       device bfloat* y [[buffer(1)]],
                       device float* z [[buffer(2)]],
                       device bfloat* w [[buffer(3)]],
                       constant float& s [[buffer(4)]],
                       uint i [[thread_position_in_grid]]) {
    bfloat b = x[i];
    float f = float(b);
    y[i] = bfloat(f * 2.0f + 1.0f);
    z[i] = b * s;
    w[i] = bfloat(max(f, 0.0f));
}
