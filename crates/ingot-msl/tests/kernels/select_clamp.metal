// Common functions on float4 (component-wise):
//   a = x[i]; o[i*6 + 0] = clamp(a, -1, 1); 1 = mix(a, b, 0.25); 2 = step(0.5, a);
//   3 = smoothstep(0, 1, a); 4 = select(a, b, a > b) (= min(a, b)); 5 = sign(a) + fract(a)
//   with b = y[i].
// Buffers: 0 x (float4, in), 1 y (float4, in), 2 o (float4, 6 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void select_clamp(device const float4* x [[buffer(0)]],
                         device const float4* y [[buffer(1)]],
                         device float4* o [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
    float4 a = x[i];
    float4 b = y[i];
    device float4* r = o + i * 6;
    r[0] = clamp(a, -1.0f, 1.0f);
    r[1] = mix(a, b, 0.25f);
    r[2] = step(0.5f, a);
    r[3] = smoothstep(0.0f, 1.0f, a);
    r[4] = select(a, b, a > b);
    r[5] = sign(a) + fract(a);
}
