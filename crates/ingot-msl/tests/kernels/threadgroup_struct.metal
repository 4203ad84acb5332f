// Threadgroup arrays of vectors and structs, a threadgroup scalar, and a helper function taking
// a threadgroup pointer:
//   each group of 64 threads stores pairs {x, x*x} and float4(x) into threadgroup memory; thread 0
//   sums them: sums[g] = float4(sum x, sum x^2, count, max x); lid 0 also sets a threadgroup
//   counter read back by every thread: marks[gid] = 64 * g (the group's first index).
// Buffers: 0 x (float, in), 1 sums (float4, one per group, out), 2 marks (uint, out).
// Launch: dispatchThreadgroups with groups of exactly 64 threads.
#include <metal_stdlib>
using namespace metal;

struct Pair {
    float v;
    float sq;
};

static float sum_pairs(threadgroup const Pair* p, uint n, thread float& sq) {
    float s = 0.0f;
    sq = 0.0f;
    for (uint k = 0; k < n; ++k) {
        s += p[k].v;
        sq += p[k].sq;
    }
    return s;
}

kernel void threadgroup_struct(device const float* x [[buffer(0)]],
                               device float4* sums [[buffer(1)]],
                               device uint* marks [[buffer(2)]],
                               uint gid [[thread_position_in_grid]],
                               uint lid [[thread_position_in_threadgroup]],
                               uint group [[threadgroup_position_in_grid]]) {
    threadgroup Pair pairs[64];
    threadgroup float4 vecs[64];
    threadgroup uint first;
    float v = x[gid];
    pairs[lid].v = v;
    pairs[lid].sq = v * v;
    vecs[lid] = float4(v);
    if (lid == 0) first = gid;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) {
        float sq;
        float s = sum_pairs(pairs, 64, sq);
        float m = vecs[0].x;
        for (uint k = 1; k < 64; ++k) m = max(m, vecs[k].w);
        sums[group] = float4(s, sq, 64.0f, m);
    }
    marks[gid] = first;
}
