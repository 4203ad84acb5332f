// half precision elementwise: y[i] = half(x[i] * alpha + 1.0h), z[i] = float(x[i]) * alpha
// (half * float promotes to float; the result is rounded to half only when stored in y).
// Buffers: 0 x (float16, in), 1 y (float16, out), 2 z (float32, out), 3 alpha (constant float).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void half_scale(device const half* x [[buffer(0)]],
                       device half* y [[buffer(1)]],
                       device float* z [[buffer(2)]],
                       constant float& alpha [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
    half h = x[i];
    float f = h * alpha;          // half * float -> float
    y[i] = half(f) + 1.0h;        // half + half -> half
    z[i] = f;
}
