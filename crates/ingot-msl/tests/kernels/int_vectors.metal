// Integer and bool vectors: with a = x[i] (int4), b = y[i] (int4):
//   o[i*3 + 0] = (a + b) * 2 - (a >> 1)
//   o[i*3 + 1] = select(a, b, a < b) % 7      (per component; C++ remainder semantics)
//   o[i*3 + 2] = int4(a == b) + int4(all(a > 0)) + (a & 0xF) + abs(b)
// Buffers: 0 x (int4, in), 1 y (int4, in), 2 o (int4, 3 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void int_vectors(device const int4* x [[buffer(0)]],
                        device const int4* y [[buffer(1)]],
                        device int4* o [[buffer(2)]],
                        uint i [[thread_position_in_grid]]) {
    int4 a = x[i];
    int4 b = y[i];
    o[i * 3 + 0] = (a + b) * 2 - (a >> 1);
    o[i * 3 + 1] = select(a, b, a < b) % 7;
    o[i * 3 + 2] = int4(a == b) + int4(all(a > 0) ? 1 : 0) + (a & 0xF) + abs(b);
}
