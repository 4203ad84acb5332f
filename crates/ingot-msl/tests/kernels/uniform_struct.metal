// A constant struct with MSL layout (float3 is 16 bytes, aligned to 16; packed_float3 is 12):
//   struct Params { float3 scale; uint n; packed_float3 bias; float gain; }  -> 48 bytes:
//   scale at 0 (16 bytes), n at 16, bias at 20 (3 floats), gain at 32, size 48 (align 16).
//   out[i] = float4((in[i] * p.scale + float3(p.bias)) * p.gain, float(p.n)) for i < p.n.
// Buffers: 0 in (float3 = 16 bytes per element: x, y, z, padding), 1 out (float4), 2 p (Params).
// Launch: grid of groups: dispatchThreadgroups with ceil(n/64) groups of 64 (the kernel checks n).
#include <metal_stdlib>
using namespace metal;

struct Params {
    float3 scale;
    uint n;
    packed_float3 bias;
    float gain;
};

kernel void uniform_struct(device const float3* in [[buffer(0)]],
                           device float4* out [[buffer(1)]],
                           constant Params& p [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
    if (i >= p.n) return;
    float3 v = (in[i] * p.scale + float3(p.bias)) * p.gain;
    out[i] = float4(v, float(p.n));
}
