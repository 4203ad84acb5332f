// 64-bit integers: out[i] = a[i] * b[i] + (a[i] >> 3) (ulong, wrapping), s[i] = long(a[i]) - 2^40,
//   and a 2-component ulong2 view: v[i] = ulong2(a[i], b[i]) ^ ulong2(0xFF).
// Buffers: 0 a (uint64, in), 1 b (uint64, in), 2 out (uint64, out), 3 s (int64, out),
//   4 v (ulong2 = 2 x uint64, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void long_types(device const ulong* a [[buffer(0)]],
                       device const ulong* b [[buffer(1)]],
                       device ulong* out [[buffer(2)]],
                       device long* s [[buffer(3)]],
                       device ulong2* v [[buffer(4)]],
                       uint i [[thread_position_in_grid]]) {
    ulong x = a[i];
    ulong y = b[i];
    out[i] = x * y + (x >> 3);
    s[i] = long(x) - (1l << 40);
    v[i] = ulong2(x, y) ^ ulong2(0xFFul);
}
