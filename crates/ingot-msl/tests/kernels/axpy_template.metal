// A template kernel with explicit instantiations named by host_name: y[i] = a * x[i] + y[i].
// Entry points: axpy_f32 (float), axpy_f16 (half; a is float, the product is rounded to half),
//               axpy_i32 (int; a is converted to int).
// Buffers: 0 x (T, in), 1 y (T, in/out), 2 a (constant float).
// Launch: 1-D grid of exactly n threads.
#include <metal_stdlib>
using namespace metal;

template <typename T>
kernel void axpy(device const T* x [[buffer(0)]],
                 device T* y [[buffer(1)]],
                 constant float& a [[buffer(2)]],
                 uint i [[thread_position_in_grid]]) {
    y[i] = T(a) * x[i] + y[i];
}

template [[host_name("axpy_f32")]] [[kernel]] decltype(axpy<float>) axpy<float>;
template [[host_name("axpy_f16")]] [[kernel]] decltype(axpy<half>) axpy<half>;
template [[host_name("axpy_i32")]] [[kernel]] decltype(axpy<int>) axpy<int>;
