#include <metal_stdlib>

using namespace metal;

#define N_SIMDWIDTH 32 // assuming SIMD group size is 32

typedef struct {
    int32_t  ne00;
    int32_t  ne01;
    uint64_t nb01;
    float    eps;
} ggml_metal_kargs_norm;

constexpr constant static float kvalues_iq4nl_f[4] = {
    -127.f, -104.f, -83.f, -65.f,
};

// general-purpose kernel for addition of two tensors
kernel void kernel_add(
        constant ggml_metal_kargs_norm & args,
        device const char * src0,
        device       char * dst,
        uint3   tgpig[[threadgroup_position_in_grid]],
        ushort3 tpitg[[thread_position_in_threadgroup]],
        ushort3   ntg[[threads_per_threadgroup]]) {
    const int64_t i01 = tgpig.x;
    device const float * x = (device const float *) (src0 + i01*args.nb01);
    device       float * y = (device       float *) (dst  + i01*args.nb01);
    for (int i00 = tpitg.x; i00 < args.ne00; i00 += ntg.x) {
        y[i00] = x[i00] + kvalues_iq4nl_f[i00 % 4];
    }
}

template<typename T>
kernel void kernel_rms_norm(
        constant ggml_metal_kargs_norm & args,
        device const char * src0,
        device       char * dst,
        threadgroup float  * shmem_f32 [[threadgroup(0)]],
        uint   tgpig[[threadgroup_position_in_grid]],
        ushort tpitg[[thread_position_in_threadgroup]],
        ushort sgitg[[simdgroup_index_in_threadgroup]],
        ushort tiisg[[thread_index_in_simdgroup]],
        ushort   ntg[[threads_per_threadgroup]]) {
    if (sgitg == 0) {
        shmem_f32[tiisg] = 0.0f;
    }
    device const T * x = (device const T *) (src0 + tgpig*args.nb01);
    float sumf = 0.0f;
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        sumf += dot(x[i00], x[i00]);
    }
    sumf = simd_sum(sumf);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (tiisg == 0) {
        shmem_f32[sgitg] = sumf;
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    sumf = shmem_f32[tiisg];
    sumf = simd_sum(sumf);
    const float mean  = sumf/args.ne00;
    const float scale = 1.0f/sqrt(mean + args.eps);
    device T * y = (device T *) (dst + tgpig*args.nb01);
    for (int i00 = tpitg; i00 < args.ne00; i00 += ntg) {
        y[i00] = x[i00] * scale;
    }
}

typedef decltype(kernel_rms_norm<float4>) kernel_rms_norm_t;

template [[host_name("kernel_rms_norm")]]   kernel kernel_rms_norm_t kernel_rms_norm<float>;
template [[host_name("kernel_rms_norm_4")]] kernel kernel_rms_norm_t kernel_rms_norm<float4>;
