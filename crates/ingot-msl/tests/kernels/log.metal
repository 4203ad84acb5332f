// The pyobjc recipe's log kernel: out[i] = log(in[i]) (float32, natural log; log(0) = -inf,
// log(x<0) = NaN as in NumPy).
// Buffers: 0 in (float, in), 1 out (float, out).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

kernel void log_kernel(device float *in  [[ buffer(0) ]],
                       device float *out [[ buffer(1) ]],
                       uint id [[ thread_position_in_grid ]]
) {
    out[id] = log(in[id]);  /* log each element *not in-place */
}
