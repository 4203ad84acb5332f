// Program-scope constants: a constant array, a constant struct and a constexpr scalar:
//   out[i] = x[i] * weights[i % 5] + offsets.a + offsets.b * float(kScale)
//   weights = {0.5, 1, 2, 4, 8}, offsets = {1.0, 0.25}, kScale = 3.
// Buffers: 0 x (float, in), 1 out (float, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

struct Offsets {
    float a;
    float b;
};

constant float weights[5] = {0.5f, 1.0f, 2.0f, 4.0f, 8.0f};
constant Offsets offsets = {1.0f, 0.25f};
constant constexpr int kScale = 3;

kernel void program_constants(device const float* x [[buffer(0)]],
                              device float* out [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
    out[i] = x[i] * weights[i % 5] + offsets.a + offsets.b * float(kScale);
}
