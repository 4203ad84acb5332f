"""Constructs that public Metal kernel libraries use, one small kernel each (our own code, not
upstream's): it compiles on the default device (``INGOT_DEVICE``) and matches a NumPy float64
reference on random inputs, with outputs poisoned before each launch.
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest

import ingot

from conftest import DEVICE, ON_CPU

if ON_CPU and not (os.environ.get("INGOT_CXX") or shutil.which("c++") or shutil.which("g++") or shutil.which("clang++")):
    pytest.skip("no C++ compiler for CPU kernels (install g++ or set INGOT_CXX)", allow_module_level=True)

RNG = np.random.default_rng(int(os.environ.get("INGOT_TEST_SEED", "0") or 0) ^ 0xC0457)


def poison(shape, dtype):
    a = np.empty(shape, dtype=dtype)
    if np.dtype(dtype).kind == "f":
        a.fill(np.nan)
    else:
        a.view(np.uint8).fill(0xAB)
    return ingot.asarray(a, device=DEVICE)


def dev(a):
    return ingot.asarray(a, device=DEVICE)


def host(a):
    return np.asarray(a.to_device("cpu"))


def build(src, name="constructs.metal", **kw):
    return ingot.compile(src, device=DEVICE, file_name=name, **kw)


BRACED = r"""
#include <metal_stdlib>
using namespace metal;
struct Affine { float a; float b; };
static_assert((Affine{2.0f, 3.0f}).b == 3.0f, "braced temporary in a static_assert");
template <int N> struct Int { static constexpr int value = N; };
template <typename T>
METAL_FUNC T apply(T x, Int<1> one = Int<1>{}, Affine p = Affine{2.0f, 3.0f}) {
    return x * T(p.a) + T(p.b) * T(one.value);
}
kernel void affine(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                   uint i [[thread_position_in_grid]]) {
    y[i] = apply(x[i]);
}
"""


@pytest.mark.parametrize("n", [1, 257, 4096])
def test_braced_initialisers_in_parentheses(n):
    k = build(BRACED)["affine"]
    x = RNG.standard_normal(n).astype(np.float32)
    y = poison(n, np.float32)
    k(dev(x), y, grid=n)
    np.testing.assert_allclose(host(y), x.astype(np.float64) * 2.0 + 3.0, rtol=1e-6, atol=1e-6)


ARRAY_PARAM = r"""
#include <metal_stdlib>
using namespace metal;
kernel void gather2d(device const float* x, device float* y,
                     constant const long strides[2],
                     constant const uint& cols,
                     uint2 g [[thread_position_in_grid]]) {
    y[g.y * cols + g.x] = x[g.y * strides[0] + g.x * strides[1]];
}
"""


def test_array_parameter_is_a_buffer():
    k = build(ARRAY_PARAM)["gather2d"]
    assert [p.name for p in k.parameters][:4] == ["x", "y", "strides", "cols"]
    rows, cols = 13, 7
    src = RNG.standard_normal((cols, rows)).astype(np.float32)  # read transposed
    y = poison(rows * cols, np.float32)
    strides = np.array([1, rows], dtype=np.int64)
    k(dev(src.ravel()), y, dev(strides), cols, grid=(cols, rows))
    np.testing.assert_array_equal(host(y).reshape(rows, cols), src.T)


DEDUCED = r"""
#include <metal_stdlib>
using namespace metal;
template <int N> struct Scales { int s[N]; };
template <typename T, int N>
[[kernel]] void scale_last(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                           const constant Scales<N>* p [[buffer(2)]],
                           uint i [[thread_position_in_grid]]) {
    y[i] = x[i] * T(p->s[N - 1]);
}
#define instantiate_scale(name, T, n)                                          \
  template [[host_name("scale_" #name "_" #n)]] [[kernel]] void scale_last(    \
      device const T* x [[buffer(0)]], device T* y [[buffer(1)]],             \
      const constant Scales<n>* p [[buffer(2)]], uint i [[thread_position_in_grid]]);
instantiate_scale(f32, float, 1)
instantiate_scale(f32, float, 3)
instantiate_scale(i32, int, 2)
"""


@pytest.mark.parametrize(
    "name,dtype,n", [("scale_f32_1", np.float32, 1), ("scale_f32_3", np.float32, 3), ("scale_i32_2", np.int32, 2)]
)
def test_full_signature_instantiation_deduces_arguments(name, dtype, n):
    lib = build(DEDUCED)
    assert sorted(lib.functions) == ["scale_f32_1", "scale_f32_3", "scale_i32_2"]
    k = lib[name]
    m = 300
    x = (RNG.standard_normal(m) * 100).astype(dtype)
    scales = RNG.integers(-9, 10, n).astype(np.int32)
    y = poison(m, dtype)
    k(dev(x), y, dev(scales), grid=m)
    np.testing.assert_allclose(host(y), x.astype(np.float64) * scales[-1], rtol=1e-6)


SPECIALISED = r"""
#include <metal_stdlib>
using namespace metal;
template <uint M> bool keep(int col, int row);
template <> bool keep</* lower */ 0>(int col, int row) { return col <= row; }
template <> bool keep</* upper */ 1>(int col, int row) { return col >= row; }
template <typename T, int M>
kernel void tri(device const T* x [[buffer(0)]], device T* y [[buffer(1)]],
                constant uint& n [[buffer(2)]], uint2 g [[thread_position_in_grid]]) {
    uint i = g.y * n + g.x;
    y[i] = keep<M>(int(g.x), int(g.y)) ? x[i] : T(0);
}
typedef decltype(tri<float, 0>) tri_t;
template [[host_name("tril_f32")]] kernel tri_t tri<float, 0>;
template [[host_name("triu_f32")]] kernel tri_t tri<float, 1>;
"""


@pytest.mark.parametrize("which", ["tril_f32", "triu_f32"])
def test_explicit_specialisations_before_a_kernel_template(which):
    k = build(SPECIALISED)[which]
    n = 19
    x = RNG.standard_normal((n, n)).astype(np.float32)
    y = poison(n * n, np.float32)
    k(dev(x.ravel()), y, n, grid=(n, n))
    want = np.tril(x) if which == "tril_f32" else np.triu(x)
    np.testing.assert_array_equal(host(y).reshape(n, n), want)


def test_apple_framework_header_is_unsupported():
    src = "#include <metal_stdlib>\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\nkernel void k(device float* x) {}\n"
    with pytest.raises(ingot.UnsupportedError, match="MetalPerformancePrimitives/MetalPerformancePrimitives.h"):
        build(src, name="nax.metal")


OVERLOADS = r"""
#include <metal_stdlib>
using namespace metal;
struct Halver {
    float scale;
    Halver() thread = default;
    Halver() threadgroup = default;
    float apply(float v) const thread { return v * scale; }
    float apply(float v) const constant { return v * scale; }
};
template <typename T>
METAL_FUNC T load(device const T* p, int i) { return p[i]; }
template <typename T>
METAL_FUNC T load(constant const T* p, int i) { return p[i]; }
kernel void mix_spaces(device const float* x [[buffer(0)]], constant float* c [[buffer(1)]],
                       device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
    Halver h; h.scale = 0.5f;
    y[i] = h.apply(load(x, int(i))) + load(c, 1);
}
"""


def test_address_space_overloads_collapse():
    k = build(OVERLOADS)["mix_spaces"]
    n = 500
    x = RNG.standard_normal(n).astype(np.float32)
    c = RNG.standard_normal(2).astype(np.float32)
    y = poison(n, np.float32)
    k(dev(x), dev(c), y, grid=n)
    np.testing.assert_allclose(host(y), x.astype(np.float64) * 0.5 + c[1], rtol=1e-6, atol=1e-6)


HEADER_FORMS = r"""
#include <metal_stdlib>
#include <metal_limits>
using namespace metal;
#define MTL_CONST static constant constexpr const
MTL_CONST int kShift = 3;
template <typename T> struct Lim {
    static constexpr constant T lo = -metal::numeric_limits<T>::infinity();
};
METAL_FUNC bfloat bf_zero() { bfloat d = 0; return d; }
kernel void forms(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  device float* lo [[buffer(2)]],
                  volatile coherent(system) device uint* flag [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    y[i] = __metal_sin(x[i], __METAL_MAYBE_FAST_MATH__) + float(bf_zero()) + float(kShift);
    if (i == 0) { lo[0] = float(Lim<half>::lo); flag[0] = 7u; }
}
"""


def test_library_header_forms():
    k = build(HEADER_FORMS)["forms"]
    n = 333
    x = RNG.uniform(-3, 3, n).astype(np.float32)
    y = poison(n, np.float32)
    lo = poison(1, np.float32)
    flag = poison(1, np.uint32)
    k(dev(x), y, lo, flag, grid=n)
    np.testing.assert_allclose(host(y), np.sin(x.astype(np.float64)) + 3.0, rtol=1e-5, atol=1e-6)
    assert host(lo)[0] == -np.inf
    assert host(flag)[0] == 7


CONDITIONAL = r"""
#include <metal_stdlib>
using namespace metal;
template <typename T> METAL_FUNC T relu(T x) { return x < 0 ? 0 : x; }
kernel void mixed(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                  device half* r [[buffer(2)]], constant float& mul [[buffer(3)]],
                  uint i [[thread_position_in_grid]]) {
    const half h = half(x[i]);
    // half against float is float on Metal: the float branch is not rounded to half.
    y[i] = (h > 0) ? h : mul * x[i];
    r[i] = relu(h) + ((i & 1) ? h : 2);
}
"""


@pytest.mark.parametrize("n", [1, 300])
def test_conditional_mixes_half_with_float_and_int(n):
    k = build(CONDITIONAL)["mixed"]
    x = RNG.uniform(-4, 4, n).astype(np.float32)
    y = poison(n, np.float32)
    r = poison(n, np.float16)
    k(dev(x), y, r, np.float32(3.0), grid=n)
    h = x.astype(np.float16).astype(np.float64)
    want = np.where(h > 0, h, 3.0 * x.astype(np.float64))
    np.testing.assert_allclose(host(y), want, rtol=1e-6, atol=0)
    odd = (np.arange(n) & 1).astype(bool)
    want_r = np.maximum(h, 0) + np.where(odd, h, 2.0)
    # half + half: one rounding to half (within one half ulp of the exact sum)
    np.testing.assert_allclose(host(r).astype(np.float64), want_r, rtol=2.0**-11, atol=2.0**-24)


BLOCKS = r"""
#include <metal_stdlib>
using namespace metal;
#define QK 8
typedef struct {
    __extension__ union {
        struct {
            half d;
            half m;
        };
        half2 dm;
    };
    uint8_t qs[QK / 2];
} block_q;
static_assert(sizeof(block_q) == 2 * sizeof(half) + QK / 2, "block layout");
kernel void dequant(device const uchar* raw [[buffer(0)]], device float* y [[buffer(1)]],
                    uint b [[thread_position_in_grid]]) {
    device const block_q* xb = (device const block_q*)raw + b;
    const float d = xb->d;
    const float m = xb->m;
    float acc[QK] = { [0 ... QK - 1] = m };
    for (int j = 0; j < QK / 2; ++j) {
        acc[2 * j] += d * (xb->qs[j] & 0x0F);
        acc[2 * j + 1] += d * (xb->qs[j] >> 4);
    }
    for (int j = 0; j < QK; ++j) y[b * QK + j] = acc[j] + float(xb->dm.x - xb->d);
}
"""


def test_quantized_block_with_anonymous_struct():
    k = build(BLOCKS)["dequant"]
    nb = 37
    d = RNG.uniform(0.01, 1, nb).astype(np.float16)
    m = RNG.uniform(-1, 1, nb).astype(np.float16)
    qs = RNG.integers(0, 256, (nb, 4), dtype=np.uint8)
    raw = np.zeros((nb, 8), dtype=np.uint8)
    raw[:, 0:2] = d.view(np.uint8).reshape(nb, 2)
    raw[:, 2:4] = m.view(np.uint8).reshape(nb, 2)
    raw[:, 4:8] = qs
    y = poison(nb * 8, np.float32)
    k(dev(raw.ravel()), y, grid=nb)
    q = np.empty((nb, 8), dtype=np.float64)
    q[:, 0::2] = qs & 0x0F
    q[:, 1::2] = qs >> 4
    want = m.astype(np.float64)[:, None] + d.astype(np.float64)[:, None] * q
    np.testing.assert_allclose(host(y).reshape(nb, 8), want, rtol=1e-6, atol=1e-6)


BROADCASTS = r"""
#include <metal_stdlib>
using namespace metal;
kernel void broadcasts(device const float4* x [[buffer(0)]], device float4* r [[buffer(1)]],
                       device uint4* u [[buffer(2)]], device half4* h [[buffer(3)]],
                       uint i [[thread_position_in_grid]]) {
    r[i] = fmax(0, x[i]) + fmin(1, x[i].x);   // integer first argument: the other's type
    uint4 k = {i, i + 1u, i ^ 0x1BD11BDAu};    // fewer elements: the rest are zero
    u[i] = k;
    half4 z = 0;                                // a scalar broadcasts to half4
    h[i] = (i & 1) ? half4(x[i]) : z;
}
"""


def test_scalar_broadcasts_and_short_brace_initialisers():
    k = build(BROADCASTS)["broadcasts"]
    n = 129
    x = RNG.uniform(-3, 3, (n, 4)).astype(np.float32)
    r = poison(n * 4, np.float32)
    u = poison(n * 4, np.uint32)
    h = poison(n * 4, np.float16)
    k(dev(x.ravel()), r, u, h, grid=n)
    x64 = x.astype(np.float64)
    want = np.maximum(x64, 0) + np.minimum(1.0, x64[:, :1])
    np.testing.assert_allclose(host(r).reshape(n, 4), want, rtol=1e-6, atol=1e-6)
    i = np.arange(n, dtype=np.uint32)
    want_u = np.stack([i, i + 1, i ^ np.uint32(0x1BD11BDA), np.zeros_like(i)], axis=1)
    np.testing.assert_array_equal(host(u).reshape(n, 4), want_u)
    want_h = np.where((i & 1)[:, None].astype(bool), x.astype(np.float16), np.float16(0))
    np.testing.assert_array_equal(host(h).reshape(n, 4), want_h)


MLX_HEADER_BUILTINS = (
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "ingot-msl", "tests", "kernels", "mlx_header_builtins.metal")
)


def _bits_reference(a):
    """The columns of the corpus kernel mlx_header_builtins.metal `bits` (see its header)."""
    a = a.astype(np.uint64)
    n = a.size
    out = np.zeros((n, 12), dtype=np.uint64)
    for j, x in enumerate(int(v) for v in a):
        nz = x != 0
        ctz = (x & -x).bit_length() - 1 if nz else 0
        s = x - (1 << 32) if x >> 31 else x  # as int
        u = ~x & 0xFFFFFFFF if s < 0 else x
        low = (x & 0xFFFF) | 1
        out[j] = [
            ctz + 3 if nz else 0xFFFFFFFF,
            32 - x.bit_length() if nz else 0xFFFFFFFF,
            bin(x).count("1"),
            ctz + 1 if nz else 0,
            bin(x).count("1") & 1,
            32 - u.bit_length() - 1,
            ctz + 20 if nz else 0xFFFFFFFF,
            bin(3 * x).count("1"),
            int(format(x, "032b")[::-1], 2),
            ((x << 7) | (x >> 25)) & 0xFFFFFFFF,
            int.from_bytes(x.to_bytes(4, "little"), "big"),
            16 - low.bit_length(),
        ]
    return out.astype(np.uint32)


def _bf16(x):
    b = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
    return b.astype(np.uint32).view(np.float32)


def test_mlx_bit_builtins_internal_traits_and_bfloat_masks():
    """MLX's headers: `__builtin_ctz` & co. (also in constant expressions; NVRTC has none of
    them, the CUDA prelude defines them), Metal's internal `_disjunction`, and a class with only
    `operator bool` (or a bool) assigned to a bfloat."""
    lib = build(open(MLX_HEADER_BUILTINS).read(), name="mlx_header_builtins.metal")
    n = 300
    a = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    a[:6] = [0, 1, 0x80000000, 0xFFFFFFFF, 0x7FFFFFFF, 0x00010000]
    o = poison(n * 12, np.uint32)
    lib["bits"](dev(a), o, grid=n)
    np.testing.assert_array_equal(host(o).reshape(n, 12), _bits_reference(a))

    r = poison(5, np.uint32)
    lib["route_types"](r, grid=1)
    np.testing.assert_array_equal(host(r), [1, 1, 1, 2, 2])

    x = RNG.uniform(-4, 4, n).astype(np.float32)
    keep = (RNG.integers(0, 2, n)).astype(np.uint8)
    for entry, scale in (("masked_scale_bool", keep.astype(np.float32)), ("masked_scale_nomask", np.ones(n, np.float32))):
        y = poison(n, np.float32)
        lib[entry](dev(x), dev(keep), y, grid=n)
        np.testing.assert_array_equal(host(y), _bf16(x) * scale)


PT_FORMS = r"""
#include <metal_stdlib>
namespace lib {
namespace metal {  // a library namespace called `metal`, as PyTorch's c10::metal
using vec2 = float2;
template <typename F, typename... A>
using result_of = decltype(::metal::declval<F>()(::metal::declval<A>()...));
template <typename T>
constexpr bool is_scalar_fp_v = ::metal::is_floating_point_v<T> && ::metal::is_scalar_v<T>;
inline uint bits(float x) { return as_type<uint>(x); }
inline float from_bits(uint u) { return as_type<float>(u); }
} // namespace metal
struct halve { float operator()(float x) const { return 0.5f * x; } };
template <typename T,
          ::metal::enable_if_t<::metal::is_floating_point_v<T> && !::metal::is_scalar_v<T>, bool> = true>
float total(T v) { return v.x + v.y; }
template <typename T, ::metal::enable_if_t<metal::is_scalar_fp_v<T>, bool> = true>
float total(T v) { return v; }
} // namespace lib
kernel void pt_forms(device const float* x [[buffer(0)]], device const uchar* u [[buffer(1)]],
                     device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  lib::metal::vec2 v = lib::metal::vec2(x[i], 1.0f);
  lib::metal::result_of<lib::halve, float> h = lib::halve()(x[i]);
  bool odd = (i & 1) != 0;
  y[4 * i + 0] = lib::total(v) + lib::total(h);
  // integral arguments of math builtins are converted to float
  y[4 * i + 1] = ::metal::pow(2, x[i]) + ::metal::trunc(odd) + ::metal::fract(u[i]) +
                 ::metal::precise::log(10) + ::metal::fast::exp2(u[i] & 3);
  y[4 * i + 2] = lib::metal::from_bits(lib::metal::bits(x[i]) ^ 0x80000000u);
  y[4 * i + 3] = ::metal::pow(x[i], 2) + ::metal::pow(3, 2) + ::metal::floor(i) +
                 ::metal::fmax(1, 2) + float(::metal::precise::pow(2, half(0.5h)));
}
"""


def test_library_namespace_called_metal_and_integral_math_arguments():
    k = build(PT_FORMS)["pt_forms"]
    n = 203
    x = RNG.uniform(-2, 2, n).astype(np.float32)
    u = RNG.integers(0, 256, n, dtype=np.uint8)
    y = poison(4 * n, np.float32)
    k(dev(x), dev(u), y, grid=n)
    x64 = x.astype(np.float64)
    i = np.arange(n, dtype=np.float64)
    want = np.stack(
        [
            1.5 * x64 + 1.0,
            2.0**x64 + (np.arange(n) & 1) + np.log(10.0) + 2.0 ** (u & 3),
            -x64,
            x64**2 + 9.0 + i + 2.0 + float(np.float16(np.sqrt(2.0))),
        ],
        axis=1,
    )
    np.testing.assert_allclose(host(y).reshape(n, 4), want, rtol=2e-6, atol=1e-5)


ATOMIC_MIN_MAX_64 = r"""
#include <metal_stdlib>
using namespace metal;
// int64 amin/amax through a sign-flipped ulong: Metal 3.1's 64-bit atomic_min/max_explicit
kernel void amin_amax(device atomic<ulong>* lo [[buffer(0)]], device atomic<ulong>* hi [[buffer(1)]],
                      device const long* v [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  ulong key = as_type<ulong>(v[i]) ^ 0x8000000000000000ul;
  atomic_min_explicit(lo, key, memory_order_relaxed);
  atomic_max_explicit(hi, key, memory_order_relaxed);
}
"""


def test_atomic_min_max_on_64_bit_ulong():
    k = build(ATOMIC_MIN_MAX_64)["amin_amax"]
    n = 4099
    v = RNG.integers(-(2**62), 2**62, n, dtype=np.int64)
    lo = dev(np.full(1, np.iinfo(np.uint64).max, dtype=np.uint64))
    hi = dev(np.zeros(1, dtype=np.uint64))
    k(lo, hi, dev(v), grid=n)
    flip = np.uint64(1 << 63)
    assert (host(lo) ^ flip).view(np.int64)[0] == v.min()
    assert (host(hi) ^ flip).view(np.int64)[0] == v.max()


KERNEL_NAMED_CROSS = r"""
#include <metal_stdlib>
using namespace metal;
static inline int3 cross(int3 a, int3 b) {
  return int3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
// A kernel named like a builtin: its calls reach metal::cross and the overload above.
template <typename T, typename V>
kernel void cross(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  V a = V(T(i), T(1), T(2));
  V b = V(T(3), T(i), T(1));
  out[i] = cross(a, b).z;
}
template [[host_name("cross_float")]] kernel void cross<float, float3>(device float*, uint);
template [[host_name("cross_int")]] kernel void cross<int, int3>(device int*, uint);
"""


@pytest.mark.parametrize("name,dtype", [("cross_float", np.float32), ("cross_int", np.int32)])
def test_kernel_named_like_a_builtin(name, dtype):
    k = build(KERNEL_NAMED_CROSS)[name]
    n = 40
    y = poison(n, dtype)
    k(y, grid=n)
    i = np.arange(n)
    np.testing.assert_array_equal(host(y), (i * i - 3).astype(dtype))
