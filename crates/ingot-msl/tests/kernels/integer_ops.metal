// Integer functions on uint and int (per element, 10 outputs per element):
//   o[i*10 + 0] = clz(a), 1 = ctz(a), 2 = popcount(a), 3 = reverse_bits(a), 4 = rotate(a, 5),
//   5 = extract_bits(a, 4, 8), 6 = insert_bits(a, 0xF, 8, 4), 7 = mulhi(a, b),
//   8 = add_sat(a, b), 9 = uint(abs(int(a)) + hadd(int(a), int(b)))  (wrapping in uint)
//   with a = x[i], b = y[i].
// Buffers: 0 x (uint, in), 1 y (uint, in), 2 o (uint, 10 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void integer_ops(device const uint* x [[buffer(0)]],
                        device const uint* y [[buffer(1)]],
                        device uint* o [[buffer(2)]],
                        uint i [[thread_position_in_grid]]) {
    uint a = x[i];
    uint b = y[i];
    device uint* r = o + i * 10;
    r[0] = clz(a);
    r[1] = ctz(a);
    r[2] = popcount(a);
    r[3] = reverse_bits(a);
    r[4] = rotate(a, 5u);
    r[5] = extract_bits(a, 4, 8);
    r[6] = insert_bits(a, 0xFu, 8, 4);
    r[7] = mulhi(a, b);
    r[8] = add_sat(a, b);
    r[9] = uint(abs(int(a)) + hadd(int(a), int(b)));
}
