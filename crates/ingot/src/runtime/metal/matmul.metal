// Batched matrix product C = A @ B for the Metal backend (float32, float16, bfloat16).
//
// A is (batch, m, k), B is (batch, k, n), C is (batch, m, n), all row-major; an operand's batch
// stride is 0 when every batch uses the same matrix. Accumulation is in float32 with fma, as
// BLAS does. One threadgroup of 16 x 16 threads computes a 64 x 64 tile of C (4 x 4 outputs per
// thread, rows ty + 16*i and columns tx + 16*j), stepping through k 16 at a time with the A and
// B tiles in threadgroup memory (k-major, padded to 65 to avoid bank conflicts).
#include <metal_stdlib>
using namespace metal;

struct MatmulParams {
    ulong a_batch_stride;
    ulong b_batch_stride;
    uint m;
    uint n;
    uint k;
    uint pad;
};

template <typename T>
kernel void ingot_matmul(const device T* a [[buffer(0)]],
                         const device T* b [[buffer(1)]],
                         device T* c [[buffer(2)]],
                         constant MatmulParams& p [[buffer(3)]],
                         uint3 group [[threadgroup_position_in_grid]],
                         uint3 local [[thread_position_in_threadgroup]]) {
    threadgroup float as[16][65];
    threadgroup float bs[16][65];
    const uint tx = local.x;
    const uint ty = local.y;
    const uint tid = ty * 16 + tx;
    const uint row0 = group.y * 64;
    const uint col0 = group.x * 64;
    const device T* ab = a + ulong(group.z) * p.a_batch_stride;
    const device T* bb = b + ulong(group.z) * p.b_batch_stride;
    device T* cb = c + ulong(group.z) * ulong(p.m) * ulong(p.n);
    float acc[4][4];
    for (uint i = 0; i < 4; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = 0.0f;
        }
    }
    for (uint k0 = 0; k0 < p.k; k0 += 16) {
        for (uint e = tid; e < 1024; e += 256) {
            const uint r = e / 16;
            const uint kk = e % 16;
            const uint gr = row0 + r;
            const uint gk = k0 + kk;
            as[kk][r] = (gr < p.m && gk < p.k) ? float(ab[ulong(gr) * p.k + gk]) : 0.0f;
            const uint kb = e / 64;
            const uint cc = e % 64;
            const uint gkb = k0 + kb;
            const uint gc = col0 + cc;
            bs[kb][cc] = (gkb < p.k && gc < p.n) ? float(bb[ulong(gkb) * p.n + gc]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < 16; ++kk) {
            float av[4];
            float bv[4];
            for (uint i = 0; i < 4; ++i) {
                av[i] = as[kk][ty + 16 * i];
                bv[i] = bs[kk][tx + 16 * i];
            }
            for (uint i = 0; i < 4; ++i) {
                for (uint j = 0; j < 4; ++j) {
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint i = 0; i < 4; ++i) {
        const uint r = row0 + ty + 16 * i;
        if (r >= p.m) {
            continue;
        }
        for (uint j = 0; j < 4; ++j) {
            const uint col = col0 + tx + 16 * j;
            if (col < p.n) {
                cb[ulong(r) * p.n + col] = T(acc[i][j]);
            }
        }
    }
}

template [[host_name("matmul_float32")]] [[kernel]] decltype(ingot_matmul<float>) ingot_matmul<float>;
template [[host_name("matmul_float16")]] [[kernel]] decltype(ingot_matmul<half>) ingot_matmul<half>;
#if defined(__HAVE_BFLOAT__)
template [[host_name("matmul_bfloat16")]] [[kernel]] decltype(ingot_matmul<bfloat>) ingot_matmul<bfloat>;
#endif
