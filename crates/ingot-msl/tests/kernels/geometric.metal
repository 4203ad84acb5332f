// Geometric functions and a column-major matrix:
//   n = normalize(p[i]); out[i] = float4(cross(n, float3(0, 0, 1)), length(p[i]))
//   t[i] = m * float4(p[i], 1.0)  where m is a float4x4 (columns m[0..3], 64 bytes, column-major)
//   d[i] = distance(p[i], float3(1, 2, 3)) + dot(n, n)
// Buffers: 0 p (float3 = 16 bytes each, in), 1 m (constant float4x4), 2 out (float4, out),
//   3 t (float4, out), 4 d (float, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void geometric(device const float3* p [[buffer(0)]],
                      constant float4x4& m [[buffer(1)]],
                      device float4* out [[buffer(2)]],
                      device float4* t [[buffer(3)]],
                      device float* d [[buffer(4)]],
                      uint i [[thread_position_in_grid]]) {
    float3 v = p[i];
    float3 n = normalize(v);
    out[i] = float4(cross(n, float3(0.0f, 0.0f, 1.0f)), length(v));
    t[i] = m * float4(v, 1.0f);
    d[i] = distance(v, float3(1.0f, 2.0f, 3.0f)) + dot(n, n);
}
