#include <metal_stdlib>
#pragma METAL internals : enable
using namespace metal;

#define instantiate_kernel(name, func, ...) \
  template [[host_name(name)]] [[kernel]] decltype(func<__VA_ARGS__>) func<__VA_ARGS__>;

struct Add { template <typename T> T operator()(T x, T y) { return x + y; } };
struct Max { template <typename T> T operator()(T x, T y) { return metal::max(x, y); } };

static constant constexpr const int N_READS = 4;

template <typename T, typename U, typename Op>
[[kernel]] void binary_vv(
    device const T* a,
    device const T* b,
    device U* c,
    uint index [[thread_position_in_grid]]) {
  c[index] = Op()(a[index], b[index]);
}

template <typename T, typename Op, int N = N_READS>
[[kernel]] void reduce_rows(
    const device T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    const constant size_t& row_size [[buffer(2)]],
    threadgroup T* shared [[threadgroup(0)]],
    uint gid [[threadgroup_position_in_grid]],
    uint lid [[thread_position_in_threadgroup]],
    uint simd_lane_id [[thread_index_in_simdgroup]],
    uint simd_group_id [[simdgroup_index_in_threadgroup]]) {
  T acc = 0;
  for (size_t i = lid * N; i < row_size; i += 1024 * N) {
    for (int j = 0; j < N && i + j < row_size; j++) acc = Op()(acc, in[gid * row_size + i + j]);
  }
  acc = simd_sum(acc);
  if (simd_lane_id == 0) shared[simd_group_id] = acc;
  threadgroup_barrier(mem_flags::mem_threadgroup);
  if (lid == 0) out[gid] = shared[0];
}

#define instantiate_binary(op, tname, type) \
  instantiate_kernel("vv_" #op #tname, binary_vv, type, type, op)

instantiate_binary(Add, float32, float)
instantiate_binary(Max, float16, half)
instantiate_kernel("row_reduce_add_float32", reduce_rows, float, Add)
