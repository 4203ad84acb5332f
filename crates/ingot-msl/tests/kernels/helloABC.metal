// metalcompute's README example, verbatim: C = A * B (float32), with the `#include ...;` quirk.
// Buffers: 0 A (float, in), 1 B (float, in), 2 C (float, out).
// Launch: metalcompute form helloABC(count, A, B, C): 1-D grid of exactly `count` threads.
#include <metal_stdlib>;
using namespace metal;
kernel void helloABC(const device float *A [[buffer(0)]],
                       const device float *B [[buffer(1)]],
                       device float *C [[buffer(2)]],
                       uint id [[thread_position_in_grid]]) {
    C[id] = A[id] * B[id];
}
