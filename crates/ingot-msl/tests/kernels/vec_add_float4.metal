// Elementwise on float4 vectors with swizzles and scalar mixing:
//   out[i] = (a[i] + b[i]) * s  then  out[i].xy = out[i].yx  (swap the first two components),
//   out[i].w = dot(a[i], b[i]).
// Buffers: 0 a (float4 = 4 x float32, in), 1 b (float4, in), 2 out (float4, out),
//          3 s (constant float, a scalar).
// Launch: 1-D grid of exactly n threads (n float4 elements).
#include <metal_stdlib>
using namespace metal;

kernel void vec_add_float4(device const float4* a [[buffer(0)]],
                           device const float4* b [[buffer(1)]],
                           device float4* out [[buffer(2)]],
                           constant float& s [[buffer(3)]],
                           uint i [[thread_position_in_grid]]) {
    float4 r = (a[i] + b[i]) * s;
    r.xy = r.yx;
    r.w = dot(a[i], b[i]);
    out[i] = r;
}
