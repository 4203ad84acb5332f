// The pyobjc recipe's add2 kernel on floats: in[i] = in[i] + 2.0 (float32), in place.
// Buffers: 0 in (float, in/out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;
kernel void add2_kernel(device float *in [[ buffer(0) ]], uint id [[ thread_position_in_grid ]]) { in[id] = in[id] + 2.0; /* add 2 in-place */
}
