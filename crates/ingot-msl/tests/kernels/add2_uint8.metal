// The pyobjc recipe's add2 kernel on bytes: in[i] = in[i] + 2 (uint8, wraps modulo 256), in place.
// Buffers: 0 in (uint8, in/out).
// Launch: 1-D grid of exactly n threads (n = array length), any threadgroup size.
#include <metal_stdlib>
using namespace metal;

kernel void add2_kernel(device uint8_t *in  [[ buffer(0) ]],
                        uint id [[ thread_position_in_grid ]]) {
    in[id] = in[id] + 2;    /* add 2 in-place */
}
