// Per-pixel RGBA8 image operation on a 2-D grid: invert colour, keep alpha, and a greyscale plane:
//   out[p] = uchar4(255 - rgb, a); grey[p] = uchar(dot(float3(rgb) / 255, (0.299, 0.587, 0.114))
//   * 255 + 0.5) for pixel p = y * width + x.
// Buffers: 0 in (uchar4, width*height, in), 1 out (uchar4, out), 2 grey (uchar, out),
//   3 width (constant uint).
// Launch: dispatchThreads with a 2-D grid (width, height), threadgroup (16, 8).
#include <metal_stdlib>
using namespace metal;

kernel void uchar_image(device const uchar4* in [[buffer(0)]],
                        device uchar4* out [[buffer(1)]],
                        device uchar* grey [[buffer(2)]],
                        constant uint& width [[buffer(3)]],
                        uint2 pos [[thread_position_in_grid]]) {
    uint p = pos.y * width + pos.x;
    uchar4 c = in[p];
    out[p] = uchar4(uchar3(255) - c.rgb, c.a);
    float3 rgb = float3(c.rgb) / 255.0f;
    grey[p] = uchar(dot(rgb, float3(0.299f, 0.587f, 0.114f)) * 255.0f + 0.5f);
}
