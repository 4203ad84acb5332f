#include <metal_stdlib>
using namespace metal;

#define MAX(x, y) ((x) > (y) ? (x) : (y))

template <typename T> METAL_FUNC T relu(T x) { return MAX(x, T(0)); }

#define UNARY(FN, TYPENAME, FN_NAME) \
kernel void FN_NAME( \
    constant size_t &dim, \
    device const TYPENAME *input,  \
    device TYPENAME *output, \
    uint tid [[ thread_position_in_grid ]] \
) { \
    if (tid >= dim) { \
        return; \
    } \
    output[tid] = TYPENAME(FN(float(input[tid]))); \
}

UNARY(relu, float, relu_f32)
UNARY(relu, half, relu_f16)
#if defined(__HAVE_BFLOAT__)
UNARY(relu, bfloat, relu_bf16)
#endif
