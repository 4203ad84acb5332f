// Histogram with threadgroup atomics, merged into device bins: 64 bins, value bin = data[i] % 64.
//   Each group clears its local bins, counts its slice with threadgroup atomics, then adds its
//   non-zero counts to the device bins with device atomics.
// Buffers: 0 data (uint, n, in), 1 bins (atomic_uint, 64, in/out: zero it first), 2 n (constant uint).
// Launch: dispatchThreadgroups with ceil(n/128) groups of exactly 128 threads.
#include <metal_stdlib>
using namespace metal;

kernel void histogram_threadgroup(device const uint* data [[buffer(0)]],
                                  device atomic_uint* bins [[buffer(1)]],
                                  constant uint& n [[buffer(2)]],
                                  uint gid [[thread_position_in_grid]],
                                  uint lid [[thread_position_in_threadgroup]]) {
    threadgroup atomic_uint local_bins[64];
    if (lid < 64) {
        atomic_store_explicit(&local_bins[lid], 0u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (gid < n) {
        atomic_fetch_add_explicit(&local_bins[data[gid] % 64], 1u, memory_order_relaxed);
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid < 64) {
        uint c = atomic_load_explicit(&local_bins[lid], memory_order_relaxed);
        if (c != 0) {
            atomic_fetch_add_explicit(&bins[lid], c, memory_order_relaxed);
        }
    }
}
