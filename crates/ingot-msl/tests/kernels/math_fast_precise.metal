// fast:: and precise:: namespaces and half overloads: per element
//   o[i*4 + 0] = fast::exp(x), 1 = precise::exp(x), 2 = float(metal::sin(half(x))),
//   3 = fast::divide(x, 3.0f)   (fast variants: ~1e-6 relative tolerance; half: ~1e-3)
// Buffers: 0 x (float, in, |x| <= 4), 1 o (float, 4 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>

kernel void math_fast_precise(device const float* x [[buffer(0)]],
                              device float* o [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
    float v = x[i];
    o[i * 4 + 0] = metal::fast::exp(v);
    o[i * 4 + 1] = metal::precise::exp(v);
    o[i * 4 + 2] = float(metal::sin(half(v)));
    o[i * 4 + 3] = metal::fast::divide(v, 3.0f);
}
