// Batched matrix product C = A @ B for the Metal backend (float32, float16, bfloat16).
//
// A is (batch, m, k), B is (batch, k, n), C is (batch, m, n), all row-major; an operand's batch
// stride is 0 when every batch uses the same matrix. Accumulation is in float32, as BLAS does.
// One threadgroup of 16 x 16 threads (8 SIMD-groups of 32) computes a 64 x 64 tile of C with
// the GPU's matrix units (simdgroup_matrix 8x8): each SIMD-group owns a 16 x 32 block, that is
// 2 x 4 accumulators. The group steps through k 16 at a time with the A and B tiles converted to
// float in threadgroup memory (zero-padded at the edges, so any m, n, k work), then stores the C
// tile through threadgroup memory so that edge tiles write only their valid part.
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
                         uint3 local [[thread_position_in_threadgroup]],
                         uint sg [[simdgroup_index_in_threadgroup]]) {
    threadgroup float as[64 * 16];  // A tile: 64 rows x 16 (k), row-major
    threadgroup float bs[16 * 64];  // B tile: 16 (k) x 64 columns, row-major
    threadgroup float cs[64 * 64];  // C tile, for the bounded store
    const uint tid = local.y * 16 + local.x;
    const uint row0 = group.y * 64;
    const uint col0 = group.x * 64;
    const device T* ab = a + ulong(group.z) * p.a_batch_stride;
    const device T* bb = b + ulong(group.z) * p.b_batch_stride;
    device T* cb = c + ulong(group.z) * ulong(p.m) * ulong(p.n);
    // This SIMD-group's block of the tile: rows sr .. sr + 16, columns sc .. sc + 32.
    const uint sr = (sg / 2) * 16;
    const uint sc = (sg % 2) * 32;
    simdgroup_float8x8 acc[2][4];
    for (uint i = 0; i < 2; ++i) {
        for (uint j = 0; j < 4; ++j) {
            acc[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
        }
    }
    for (uint k0 = 0; k0 < p.k; k0 += 16) {
        for (uint e = tid; e < 1024; e += 256) {
            const uint r = e / 16;
            const uint kk = e % 16;
            const uint gr = row0 + r;
            const uint gk = k0 + kk;
            as[e] = (gr < p.m && gk < p.k) ? float(ab[ulong(gr) * p.k + gk]) : 0.0f;
            const uint kb = e / 64;
            const uint cc = e % 64;
            const uint gkb = k0 + kb;
            const uint gc = col0 + cc;
            bs[e] = (gkb < p.k && gc < p.n) ? float(bb[ulong(gkb) * p.n + gc]) : 0.0f;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        for (uint kk = 0; kk < 16; kk += 8) {
            simdgroup_float8x8 af[2];
            simdgroup_float8x8 bf[4];
            for (uint i = 0; i < 2; ++i) {
                simdgroup_load(af[i], as + (sr + 8 * i) * 16 + kk, 16);
            }
            for (uint j = 0; j < 4; ++j) {
                simdgroup_load(bf[j], bs + kk * 64 + sc + 8 * j, 64);
            }
            for (uint i = 0; i < 2; ++i) {
                for (uint j = 0; j < 4; ++j) {
                    simdgroup_multiply_accumulate(acc[i][j], af[i], bf[j], acc[i][j]);
                }
            }
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    for (uint i = 0; i < 2; ++i) {
        for (uint j = 0; j < 4; ++j) {
            simdgroup_store(acc[i][j], cs + (sr + 8 * i) * 64 + sc + 8 * j, 64);
        }
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint e = tid; e < 4096; e += 256) {
        const uint r = row0 + e / 64;
        const uint col = col0 + e % 64;
        if (r < p.m && col < p.n) {
            cb[ulong(r) * p.n + col] = T(cs[e]);
        }
    }
}

template [[host_name("matmul_float32")]] [[kernel]] decltype(ingot_matmul<float>) ingot_matmul<float>;
template [[host_name("matmul_float16")]] [[kernel]] decltype(ingot_matmul<half>) ingot_matmul<half>;
#if defined(__HAVE_BFLOAT__)
template [[host_name("matmul_bfloat16")]] [[kernel]] decltype(ingot_matmul<bfloat>) ingot_matmul<bfloat>;
#endif
