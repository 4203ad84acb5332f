// Every atomic operation on device memory. With v = x[i] (int) for i < n, slots (int32):
//   r[0] += v (fetch_add), r[1] -= v (fetch_sub), r[2] = min(r[2], v), r[3] = max(r[3], v),
//   r[4] &= v, r[5] |= v, r[6] ^= v, r[7] = count of threads whose compare-exchange loop ran
//   (r[7] += 1 implemented with atomic_compare_exchange_weak_explicit), r[8] = some v
//   (atomic_exchange_explicit), u[0] = max over uint(v) (atomic_uint).
// Buffers: 0 x (int, n, in), 1 r (atomic_int, 9, in/out; initialise 0, 0, INT_MAX, INT_MIN, -1,
//   0, 0, 0, 0), 2 u (atomic_uint, 1, in/out; initialise 0), 3 n (constant uint).
// Launch: 1-D grid of exactly n threads, threadgroup 64.
#include <metal_stdlib>
using namespace metal;

kernel void atomic_ops(device const int* x [[buffer(0)]],
                       device atomic_int* r [[buffer(1)]],
                       device atomic_uint* u [[buffer(2)]],
                       constant uint& n [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
    if (i >= n) return;
    int v = x[i];
    atomic_fetch_add_explicit(&r[0], v, memory_order_relaxed);
    atomic_fetch_sub_explicit(&r[1], v, memory_order_relaxed);
    atomic_fetch_min_explicit(&r[2], v, memory_order_relaxed);
    atomic_fetch_max_explicit(&r[3], v, memory_order_relaxed);
    atomic_fetch_and_explicit(&r[4], v, memory_order_relaxed);
    atomic_fetch_or_explicit(&r[5], v, memory_order_relaxed);
    atomic_fetch_xor_explicit(&r[6], v, memory_order_relaxed);
    int expected = atomic_load_explicit(&r[7], memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&r[7], &expected, expected + 1,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
    atomic_exchange_explicit(&r[8], v, memory_order_relaxed);
    atomic_fetch_max_explicit(&u[0], uint(v), memory_order_relaxed);
}
