// Dynamic threadgroup memory (length set by the host) and threads_per_threadgroup:
//   each group of T threads loads its slice into scratch, reverses it, writes it back:
//   out[g*T + l] = in[g*T + (T-1-l)]  (T = actual threads of the group).
//   Also sums[g] = sum of the slice (computed by thread 0 after a barrier).
// Buffers: 0 in (float, in), 1 out (float, out), 2 sums (float, one per group, out).
// Threadgroup memory: index 0, T * 4 bytes (rounded up to 16).
// Launch: dispatchThreads with a 1-D grid of exactly n threads, threadgroup T (e.g. 64); the last
//   group may be partial (threads_per_threadgroup is its actual size).
#include <metal_stdlib>
using namespace metal;

kernel void reverse_in_group(device const float* in [[buffer(0)]],
                             device float* out [[buffer(1)]],
                             device float* sums [[buffer(2)]],
                             threadgroup float* scratch [[threadgroup(0)]],
                             uint gid [[thread_position_in_grid]],
                             uint lid [[thread_position_in_threadgroup]],
                             uint tcount [[threads_per_threadgroup]],
                             uint group [[threadgroup_position_in_grid]],
                             uint nominal [[dispatch_threads_per_threadgroup]]) {
    scratch[lid] = in[gid];
    threadgroup_barrier(mem_flags::mem_threadgroup);
    out[gid] = scratch[tcount - 1 - lid];
    if (lid == 0) {
        float s = 0.0f;
        for (uint k = 0; k < tcount; ++k) s += scratch[k];
        sums[group] = s;
    }
    (void)nominal;
}
