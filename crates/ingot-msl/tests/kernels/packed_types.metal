// packed_float3 (12-byte) input and output next to float3 arithmetic:
//   out[i] = packed_float3(float3(p[i]) * 2.0f + float3(1, 2, 3)); len[i] = length(float3(p[i]))
// Buffers: 0 p (packed_float3 = 3 x float32, in), 1 out (packed_float3, out), 2 len (float, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void packed_types(device const packed_float3* p [[buffer(0)]],
                         device packed_float3* out [[buffer(1)]],
                         device float* len [[buffer(2)]],
                         uint i [[thread_position_in_grid]]) {
    float3 v = float3(p[i]);
    out[i] = packed_float3(v * 2.0f + float3(1.0f, 2.0f, 3.0f));
    len[i] = length(v);
}
