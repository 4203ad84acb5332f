// Bit casts, numeric limits and constants, per element:
//   o[i*6 + 0] = as_type<uint>(x[i])                 (float bits)
//   1 = as_type<uint>(half2(x[i], -x[i]))           (two float16 bit patterns, low half first)
//   2 = isinf(x[i]) ? 1 : isnan(x[i]) ? 2 : 0
//   3 = as_type<uint>(numeric_limits<float>::max()) (0x7f7fffff)
//   4 = uint(as_type<ushort>(numeric_limits<half>::max())) (0x7bff)
//   5 = as_type<uint>(x[i] > FLT_MAX ? INFINITY : M_PI_F)
// Buffers: 0 x (float, in), 1 o (uint, 6 per element, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void as_type_limits(device const float* x [[buffer(0)]],
                           device uint* o [[buffer(1)]],
                           uint i [[thread_position_in_grid]]) {
    float v = x[i];
    device uint* r = o + i * 6;
    r[0] = as_type<uint>(v);
    r[1] = as_type<uint>(half2(half(v), half(-v)));
    r[2] = isinf(v) ? 1u : (isnan(v) ? 2u : 0u);
    r[3] = as_type<uint>(numeric_limits<float>::max());
    r[4] = uint(as_type<ushort>(numeric_limits<half>::max()));
    r[5] = as_type<uint>(v > FLT_MAX ? INFINITY : M_PI_F);
}
