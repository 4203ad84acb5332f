#include <metal_stdlib>;
using namespace metal;
#pragma METAL internals : enable

constant float SCALE = 2.0f;
constant bool has_bias [[function_constant(0)]];
constant bool no_bias = !has_bias;

struct Params { uint n; float alpha; };

float log1p(float x) { return x; }

template <typename T>
struct Sum { T operator()(T a, T b) thread const { return a + b; } };

template <typename T>
[[kernel]] void add(device const T* a [[buffer(0)]], device const T* b, device T* c,
                    constant Params& p [[buffer(5)]],
                    uint3 gid [[thread_position_in_grid]]) {
    if (gid.x >= p.n) return;
    c[gid.x] = Sum<T>()(a[gid.x], b[gid.x]) * T(1.0h);
}
template [[host_name("add_f32")]] [[kernel]] decltype(add<float>) add<float>;
template [[host_name("add_f16")]]
[[kernel]] decltype(add<half>) add<half>;

kernel void reduce(device const float* in [[buffer(0)]],
                   device float* out [[buffer(1)]],
                   device const float* bias [[buffer(2), function_constant(has_bias)]],
                   threadgroup float* dyn [[threadgroup(0)]],
                   ushort2 tid [[thread_position_in_threadgroup]],
                   uint lane [[thread_index_in_simdgroup]]) [[max_total_threads_per_threadgroup(256)]] {
    threadgroup float tile[256], other[2][4];
    threadgroup atomic_uint counter;
    float4 v = float4(1.0f);
    v.xy = v.zw;
    float s = simd_sum(v.x + log1p(SCALE));
    tile[tid.x] = s;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    #pragma clang loop unroll(full)
    for (int i = 0; i < 4; ++i) s += tile[i];
    if (is_function_constant_defined(has_bias)) s += bias[0];
    out[0] = s;
}
