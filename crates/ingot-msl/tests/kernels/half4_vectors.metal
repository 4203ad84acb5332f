// half4 vectors: out[i] = half4(clamp(float4(in[i]) * 2.0f, -1.0f, 1.0f)) + in[i].wzyx
// (component-wise; conversion between half4 and float4 is explicit).
// Buffers: 0 in (half4 = 4 x float16, in), 1 out (half4, out).
// Launch: 1-D grid of exactly n threads (n half4 elements).
#include <metal_stdlib>
using namespace metal;

kernel void half4_vectors(device const half4* in [[buffer(0)]],
                          device half4* out [[buffer(1)]],
                          uint i [[thread_position_in_grid]]) {
    half4 v = in[i];
    float4 f = clamp(float4(v) * 2.0f, -1.0f, 1.0f);
    out[i] = half4(f) + v.wzyx;
}
