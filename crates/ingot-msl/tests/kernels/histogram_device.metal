// Histogram with device atomics: for each input byte value b, bins[b] += 1 (256 bins, uint).
// Buffers: 0 data (uchar, n, in), 1 bins (atomic_uint = uint32, 256, in/out: zero it first),
//   2 n (constant uint).
// Launch: dispatchThreadgroups with ceil(n/256) groups of 256 (the kernel checks n).
#include <metal_stdlib>
using namespace metal;

kernel void histogram_device(device const uchar* data [[buffer(0)]],
                             device atomic_uint* bins [[buffer(1)]],
                             constant uint& n [[buffer(2)]],
                             uint gid [[thread_position_in_grid]]) {
    if (gid >= n) return;
    atomic_fetch_add_explicit(&bins[data[gid]], 1u, memory_order_relaxed);
}
