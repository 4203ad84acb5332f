// Mandelbrot image with a uniform struct and uchar4 (RGBA8) output.
//   struct Uniforms { float2 origin; float2 step; uint width; uint height; uint max_iter; }
//   (32 bytes: origin at 0, step at 8, width 16, height 20, max_iter 24, padding to 32).
//   Pixel (x, y): c = origin + float2(x, y) * step; z = 0; iterate z = z^2 + c while |z|^2 <= 4,
//   at most max_iter times; n = iterations done. Colour: n == max_iter -> (0, 0, 0, 255), else
//   t = n / max_iter: (uchar(255 * t), uchar(255 * sqrt(t)), uchar(255 * (1 - t)), 255)
//   (conversion truncates toward zero).
// Buffers: 0 image (uchar4, width * height, row-major, out), 1 u (Uniforms).
// Launch: 2-D grid of exactly (width, height) threads, e.g. threadgroup (16, 16).
#include <metal_stdlib>
using namespace metal;

struct Uniforms {
    float2 origin;
    float2 step;
    uint width;
    uint height;
    uint max_iter;
};

kernel void mandelbrot(device uchar4* image [[buffer(0)]],
                       constant Uniforms& u [[buffer(1)]],
                       uint2 gid [[thread_position_in_grid]]) {
    if (gid.x >= u.width || gid.y >= u.height) return;
    float2 c = u.origin + float2(gid) * u.step;
    float2 z = float2(0.0f);
    uint n = 0;
    while (n < u.max_iter && dot(z, z) <= 4.0f) {
        z = float2(z.x * z.x - z.y * z.y, 2.0f * z.x * z.y) + c;
        n++;
    }
    uchar4 colour;
    if (n == u.max_iter) {
        colour = uchar4(0, 0, 0, 255);
    } else {
        float t = float(n) / float(u.max_iter);
        colour = uchar4(uchar(255.0f * t), uchar(255.0f * sqrt(t)), uchar(255.0f * (1.0f - t)), 255);
    }
    image[gid.y * u.width + gid.x] = colour;
}
