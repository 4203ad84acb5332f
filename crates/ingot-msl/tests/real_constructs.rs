//! Constructs from public Metal kernel libraries (our own small kernels, one per construct):
//! each reflects with the entry points Metal would list and translates for both targets.

use ingot_msl::{reflect, translate, Options, ParamKind, Target};

fn both(src: &str) -> Vec<ingot_msl::Translation> {
    [Target::Cpu, Target::Cuda]
        .iter()
        .map(|&t| translate(src, &Options::new(t)).unwrap_or_else(|e| panic!("{t}: {e}")))
        .collect()
}

fn names(src: &str) -> Vec<String> {
    let mut n: Vec<String> = reflect(src)
        .unwrap_or_else(|e| panic!("{e}"))
        .entry_points
        .into_iter()
        .map(|e| e.name)
        .collect();
    n.sort();
    n
}

#[test]
fn braced_initialisers_inside_parentheses_at_namespace_scope() {
    // A static_assert with braced temporaries, and default arguments written `T{}`.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
struct P { float a; float b; };
static_assert((P{1.0f, 2.0f}).b == 2.0f, "braces");
template <int N> struct Int { static constexpr int value = N; };
template <typename T>
METAL_FUNC T pick(T x, Int<0> z = Int<0>{}, P p = {}) { return x + T(z.value) + T(p.a); }
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    y[i] = pick(y[i]);
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
}

#[test]
fn array_parameters_are_buffers() {
    let src = r#"
kernel void strided(device const float* x, device float* y,
                    constant const long strides[2],
                    uint2 i [[thread_position_in_grid]]) {
    y[i.y * 4 + i.x] = x[i.x * strides[0] + i.y * strides[1]];
}
"#;
    let m = reflect(src).unwrap();
    let p = &m.entry_points[0].params[2];
    assert_eq!(p.name, "strides");
    assert_eq!(p.kind, ParamKind::Buffer);
    assert_eq!(p.buffer_index, Some(2));
    both(src);
}

#[test]
fn instantiation_with_a_full_signature_deduces_template_arguments() {
    // `template [[host_name]] [[kernel]] void f(params...);` names no template arguments: they
    // are deduced from the parameter types, as C++ does.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <int N> struct Params { int n[N]; };
template <typename T, int N>
[[kernel]] void fill_n(device T* out [[buffer(0)]],
                       const constant Params<N>* p [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    out[i] = T(p->n[N - 1]);
}
#define inst(name, T, n) \
  template [[host_name("fill_" #name "_" #n)]] [[kernel]] void fill_n( \
      device T* out [[buffer(0)]], const constant Params<n>* p [[buffer(1)]], \
      uint i [[thread_position_in_grid]]);
inst(f32, float, 1)
inst(f32, float, 3)
inst(i32, int, 2)
"#;
    assert_eq!(names(src), ["fill_f32_1", "fill_f32_3", "fill_i32_2"]);
    let m = reflect(src).unwrap();
    let e = m.entry("fill_f32_3").unwrap();
    assert_eq!(e.template_args, ["float", "3"]);
    for t in both(src) {
        assert!(t.text.contains("ingot_kernel_fill_n<int, 2>"), "{}", t.text);
    }
}

#[test]
fn explicit_specialisations_before_a_kernel_template() {
    let src = r#"
template <uint M> bool keep(int i, int r);
template <> bool keep</* lower */ 0>(int i, int r) { return i >= r; }
template <> bool keep<1>(int i, int r) { return i < r; }
template <typename T, int M>
kernel void tri(device T* x [[buffer(0)]], uint2 g [[thread_position_in_grid]]) {
    if (!keep<M>(g.x, g.y)) x[g.y * 8 + g.x] = T(0);
}
typedef decltype(tri<float, 0>) tri_t;
template [[host_name("tri_f32_0")]] kernel tri_t tri<float, 0>;
template [[host_name("tri_f32_1")]] kernel tri_t tri<float, 1>;
"#;
    assert_eq!(names(src), ["tri_f32_0", "tri_f32_1"]);
    both(src);
}

#[test]
fn apple_framework_headers_are_unsupported_and_named() {
    let src = "#include <metal_stdlib>\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\nkernel void k(device float* x) {}\n";
    for t in [Target::Cpu, Target::Cuda] {
        let e = translate(src, &Options::new(t)).unwrap_err();
        assert!(e.unsupported, "{e}");
        assert_eq!(e.line, 2);
        assert!(
            e.message
                .contains("MetalPerformancePrimitives/MetalPerformancePrimitives.h"),
            "{e}"
        );
    }
    // Not when it is in an inactive branch.
    let ok = "#ifdef HAS_TENSOR\n#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n#endif\nkernel void k(device float* x) {}\n";
    both(ok);
}

/// Compiles the CPU translation of `src` with the system C++ compiler (`-fsyntax-only`) against
/// the prelude; skipped with a message when there is no compiler.
fn cpu_compiles(name: &str, src: &str) {
    let Some(cxx) = ["g++", "c++", "clang++"].into_iter().find(|c| {
        std::process::Command::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }) else {
        eprintln!("no C++ compiler: {name} not compiled");
        return;
    };
    let dir = std::env::temp_dir().join(format!("ingot-real-{name}-{}", std::process::id()));
    for (f, text) in ingot_msl::prelude_files(Target::Cpu) {
        let p = dir.join("include").join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    let t = translate(src, &Options::new(Target::Cpu)).unwrap_or_else(|e| panic!("{e}"));
    let file = dir.join(format!("{name}.cpp"));
    std::fs::write(&file, &t.text).unwrap();
    let out = std::process::Command::new(cxx)
        .args(["-std=c++17", "-fsyntax-only", "-w", "-I"])
        .arg(dir.join("include"))
        .arg(&file)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "{name}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn address_space_overloads_collapse() {
    // Members overloaded on the address space of `this`, and free functions overloaded on the
    // address space of a pointer: one C++ function each once the qualifiers are gone.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
struct Rng {
    float state;
    Rng() thread = default;
    Rng() threadgroup = default;
    Rng() device = default;
    float next() const thread { return state * 0.5f; }
    float next() const constant { return state * 0.5f; }
};
template <typename T>
METAL_FUNC T at(device const T* p, int i) { return p[i]; }
template <typename T>
METAL_FUNC T at(constant const T* p, int i) { return p[i]; }
template <typename T>
METAL_FUNC T at(device T* p, int i) { return p[i] * T(2); }
kernel void k(device const float* x, device float* y, constant float* c,
              uint i [[thread_position_in_grid]]) {
    Rng r; r.state = at(x, int(i));
    y[i] = r.next() + at(c, 0) + at(y, int(i));
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("overloads", src);
}

#[test]
fn library_header_forms_compile() {
    // Forms from real headers: duplicate `const` around `constant`, a user typedef named like a
    // prelude matrix, constexpr negation of half limits, int -> bfloat, coherent(system),
    // <metal_limits>, and the __metal_* intrinsics with their fast-math flags.
    let src = r#"
#include <metal_stdlib>
#include <metal_limits>
using namespace metal;
#define MTL_CONST static constant constexpr const
MTL_CONST int kBlock = 4;
typedef matrix<bfloat, 4, 4> bfloat4x4;
template <typename T> struct Lim {
    static constexpr constant T lo = -metal::numeric_limits<T>::infinity();
};
template struct Lim<half>;
METAL_FUNC bfloat zero_bf() { bfloat d = 0; return d; }
METAL_FUNC float fast_sin(float x) { return __metal_sin(x, __METAL_MAYBE_FAST_MATH__); }
kernel void k(volatile coherent(system) device uint* flag [[buffer(0)]],
              device float* y [[buffer(1)]], uint i [[thread_position_in_grid]]) {
    bfloat4x4 m;
    y[i] = float(zero_bf()) + fast_sin(float(kBlock)) + float(Lim<half>::lo) + float(m[0][0] * 0);
    flag[0] = 1;
}
"#;
    let m = reflect(src).unwrap();
    let p = &m.entry_points[0].params[0];
    assert_eq!(p.kind, ParamKind::Buffer);
    assert_eq!(p.pointee, "uint");
    both(src);
    cpu_compiles("headers", src);
}

#[test]
fn comparison_and_assignment_operators_are_functions() {
    // `operator<(` is not a template argument list, `operator=(` not an initialiser: the
    // kernel after them must still be seen.
    let src = r#"
struct P { float v; P& operator=(float x) { v = x; return *this; } };
template <typename T> struct C { T a; };
template <typename T> constexpr bool operator<(C<T> x, C<T> y) { return x.a < y.a; }
template <typename T> constexpr bool operator>(C<T> x, C<T> y) { return y < x; }
template <typename T> constexpr bool operator>=(C<T> x, C<T> y) { return !(x < y); }
template <typename T> constexpr bool operator<=(C<T> x, C<T> y) { return !(y < x); }
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    C<float> a{1.0f}, b{2.0f};
    P p; p = (a < b) ? 1.0f : 0.0f;
    y[i] = p.v;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("operators", src);
}

#[test]
fn array_parameters_compile() {
    let src = r#"
kernel void strided(device const float* x, device float* y,
                    constant const long strides[2],
                    uint2 i [[thread_position_in_grid]]) {
    y[i.y * 4 + i.x] = x[i.x * strides[0] + i.y * strides[1]];
}
"#;
    cpu_compiles("array_param", src);
}

#[test]
fn conditional_operator_mixes_half_with_float_and_integers() {
    // `c ? half : float` is float and `c ? 0 : half` is half on Metal; C++ finds both ambiguous
    // for a class type converting both ways. Nested, void, lvalue and template-argument
    // conditionals must keep compiling.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> T relu(T x) { return x < 0 ? 0 : x; }
template <int N> struct Tag { static constexpr int n = N; };
METAL_FUNC void nothing() {}
kernel void k(device const half* x [[buffer(0)]], device float* y [[buffer(1)]],
              device half* z [[buffer(2)]], constant float& mul [[buffer(3)]],
              uint i [[thread_position_in_grid]]) {
    const half h = x[i];
    y[i] = (h > 0) ? h : mul * (exp(h) - 1);
    z[i] = relu(h) + (i > 3 ? h : 2) + half(Tag<(sizeof(half) > 1 ? 1 : 2)>::n);
    float a = 1.0f, b = 2.0f;
    (i > 1 ? a : b) = 3.0f;
    i > 2 ? nothing() : nothing();
    y[i] += a + b + (i > 5 ? h : i > 6 ? 1.0f : float(bfloat(2.0f)));
    y[i] += (i & 1) ? bfloat(1.0f) : h;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("conditional", src);
}

#[test]
fn half_and_bfloat_arithmetic_is_constexpr() {
    // MLX's complex.h static_asserts half arithmetic; the default constructor of a struct
    // overloaded on `thread`/`threadgroup` collapses to one.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> struct cpx {
  T re; T im;
  constexpr cpx(T r, T i) thread : re(r), im(i) {}
  constexpr cpx() thread : re(0), im(0) {}
  constexpr cpx() threadgroup : re(0), im(0) {}
};
template <typename T> constexpr cpx<T> operator*(cpx<T> a, cpx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
static_assert((cpx<half>{1.0h, 2.0h} * cpx<half>{3.0h, 4.0h}).re == -5.0h, "half");
static_assert(bfloat(2.0f) * bfloat(3.0f) == 6.0f, "bfloat");
static_assert(half(65520.0f) == numeric_limits<half>::infinity(), "rounds to inf");
constexpr constant half kH = 0.25h;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  threadgroup cpx<float> s;
  cpx<half> a(kH, -kH);
  y[i] = float((a * a).im) + s.re;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("constexpr_half", src);
}

#[test]
fn numeric_limits_impl_is_specialisable_and_user_math_names() {
    // candle specialises `_numeric_limits_impl` for its own type; MLX defines `erfinv`, which
    // CUDA has globally and Metal does not; ggml writes `__extension__ union`.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> struct indexed { uint i; T val; };
template <typename T> struct _numeric_limits_impl<indexed<T>> {
  static constexpr METAL_FUNC indexed<T> lowest() { return indexed<T>{0, numeric_limits<T>::lowest()}; }
};
float erfinv(float y) { return y * 0.5f; }
typedef struct { __extension__ union { float a; uint b; }; } U;
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  U u; u.a = y[i];
  y[i] = erfinv(u.a) + float(numeric_limits<indexed<half>>::lowest().val);
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("limits_impl", src);
}

#[test]
fn ggml_block_forms_compile() {
    // ggml's quantized blocks: half members of an anonymous struct inside a union (g++ refuses
    // members with constructors there), read as half or float, assigned, addressed; GNU range
    // designators in local arrays; a line splice in the middle of an expression; the
    // two-argument `make_filled_simdgroup_matrix`.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
#define QK 8
typedef half my_half;
typedef struct {
    __extension__ union {
        struct {
            my_half d; // delta
            my_half m, s;
        };
        half2 dm;
    };
    uint8_t qs[QK / 2];
} block_q;
static_assert(sizeof(block_q) == 8 + QK / 2, "layout: half2 aligns the union to 4");
kernel void k(device block_q* b [[buffer(0)]], device float* y [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
    device const block_q* xb = b + i;
    const float d1 = (i & 1) ? (xb->d / 16.h) : xb->d;
    const float md = -8.h * xb->d;
    half h = xb->m;
    device const half* dh = &b[i].d;
    constexpr int NQ = 4;
    float S[NQ] = { [0 ... NQ-1] = -FLT_MAX/2 };
    float T[NQ] = { [ 0 ... NQ - 1 ] = i > 2 ? 1.0h : 2.0f };
    uint16_t mask = (i/4)>1 ? ((i/4)>2 ? 192 : 48) : \
                              ((i/4)>0 ? 12  : 3);
    simdgroup_half8x8 z = make_filled_simdgroup_matrix<half, 8>(0.0h);
    y[i] = d1 + md + float(h) + xb->d * 2.0f + float(xb->dm.x) + xb->qs[0] + S[i % NQ] + T[0]
         + *dh + mask + float(z.thread_elements()[0]);
    b[i].s = y[i];
    b[i].s += 1.0f;
    b[i].m = (half) y[i];
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("ggml_blocks", src);
}

#[test]
fn address_space_specialisations_collapse() {
    // candle's sdpa: `pointer_element<thread T*>`, `<device T*>`, ... are one C++
    // specialisation once the address spaces are gone, and so are reduce.metal's `MD<T>()`
    // and `MD<T>() threadgroup`; reduce.metal also tests Metal's `__is_valid_simdgroup_type`.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> struct pointer_element {};
template <typename T> struct pointer_element<thread T*> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<device T*> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<constant T*> { using type = remove_cv_t<T>; };
template <typename T> struct pointer_element<threadgroup T*> { using type = remove_cv_t<T>; };
template <typename T> constexpr constant bool is_simd_t = __is_valid_simdgroup_type<T>::value;
static_assert(is_simd_t<float> && is_simd_t<half4> && !is_simd_t<bool> && !is_simd_t<long>, "");
template <typename T> struct MD {
    T m;
    float d;
    constexpr MD<T>() = default;
    constexpr MD<T>() threadgroup = default;
};
kernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    typename pointer_element<device float*>::type v = y[i];
    MD<float> md;
    md.m = v;
    y[i] = md.m * 2.0f;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("specialisations", src);
}

#[test]
fn function_pointer_template_parameters() {
    // candle/ggml `kernel_get_rows_q<block_q, nl, dequantize_func>`: the third template
    // parameter is named inside `(*...)`; `void` in the kernel's own parameters is not it.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename type4x4>
void deq(device const float* xb, short il, thread type4x4 & reg) { reg[0][0] = xb[il]; }
template<typename block_q, short nl, void (*dequantize_func)(device const block_q *, short, thread float4x4 &)>
kernel void get_rows(device const void* src [[buffer(0)]], device float* dst [[buffer(1)]],
                     uint i [[thread_position_in_grid]]) {
  float4x4 r;
  dequantize_func((device const block_q*)src, short(i % 4), r);
  dst[i] = r[0][0] * nl;
}
typedef decltype(get_rows<float, 2, deq>) get_rows_t;
template [[host_name("get_rows_f")]] kernel get_rows_t get_rows<float, 2, deq>;
"#;
    assert_eq!(names(src), ["get_rows_f"]);
    let m = reflect(src).unwrap();
    assert_eq!(m.entry_points[0].params[0].pointee, "void");
    both(src);
    cpu_compiles("fn_pointer_param", src);
}

#[test]
fn scalar_arguments_meet_vectors_and_16_bit_types() {
    // ggml: `fmax(0, x)` on float and float4, `c ? slope*half4 : 0.0f`, `half4 v = 0;`,
    // `float4(packed_char4)`, `MAXHALF`; candle: `half4 *= float`, `float4 v = 0.0h`.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <typename T> T relu6(T x) { return (T) (x * fmax(0, fmin(1, x/6 + 0.5))); }
kernel void k(device const float4* x [[buffer(0)]], device const half4* m [[buffer(1)]],
              threadgroup half4* sq [[threadgroup(0)]], device float4* y [[buffer(2)]],
              device const packed_char4* q [[buffer(3)]], constant float& slope [[buffer(4)]],
              uint i [[thread_position_in_grid]]) {
    float4 lmax = fmax(0, x[i]);
    float s = fmax(0, x[i].x) + relu6(x[i].y) + float(MAXHALF) * 0.0f;
    device const half4* pm = (i & 1) ? m : nullptr;
    lmax = fmax(lmax, x[i]*slope + (float4)((pm ? slope*pm[i] : 0.0f)));
    sq[i % 4] = 0;
    half4 hz = 0.5f;
    hz *= slope;
    float4 fz = 0.0h;
    const packed_char4 p = q[i];
    y[i] = lmax + s + float4(sq[0]) + float4(hz) + fmin(x[i], 1) + float4(p) + fz;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("scalar_meets_vector", src);
}

#[test]
fn mlx_common_header_forms_compile() {
    // MLX: bfloat overloads added to namespace metal must not hide metal's own `log`; simd
    // bitwise reductions compiled on float bits; `uint4 k = {a, b, c}` zero-fills; a
    // threadgroup array with an initialiser; `remove_addrspace_t`; the out-of-class definition
    // of a constant static member; `G * g` on simdgroup matrices.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
typedef bfloat bfloat16_t;
namespace metal {
METAL_FUNC bfloat16_t log(bfloat16_t x) { return static_cast<bfloat16_t>(metal::log(static_cast<float>(x))); }
METAL_FUNC bfloat16_t simd_xor(bfloat16_t x) { return static_cast<bfloat16_t>(__metal_simd_xor(static_cast<float>(x))); }
}
inline float my_log1p(float x) { float xp1 = 1.0f + x; return x * (metal::log(xp1) / (xp1 - 1.0f)); }
template <int M> struct Wino {};
template <> struct Wino<6> {
  static constexpr constant float wt[2][2] = {{1.0f, 2.0f}, {3.0f, 4.0f}};
};
constant constexpr const float Wino<6>::wt[2][2];
kernel void k(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
              device uint4* u [[buffer(2)]], device const uint2* key [[buffer(3)]],
              uint i [[thread_position_in_grid]], uint lane [[thread_index_in_simdgroup]]) {
    threadgroup float buf[32] = {0};
    buf[lane] = x[i];
    uint2 kk = key[i];
    uint4 ks = {kk.x, kk.y, kk.x ^ kk.y ^ 0x1BD11BDA};
    float4 a = float4(1, 2, 3, 4);
    float4 b = float4(a.xy, 0, 1) + float4(a.xy, a.zw) + float4(a.xyz, 1) + float4(2, a.yzw);
    remove_addrspace_t<device const float*> p = x;
    simdgroup_float8x8 G, g;
    simdgroup_load(G, x);
    simdgroup_load(g, x + 64);
    simdgroup_float8x8 o = (G * g) * G;
    simdgroup_store(o, y);
    y[i] += my_log1p(p[i]) + float(metal::log(bfloat16_t(2.0f))) + Wino<6>::wt[1][1] + b.x
          + float(simd_xor(bfloat16_t(buf[lane])));
    u[i] = ks;
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("mlx_headers", src);
}

#[test]
fn mlx_kernel_header_forms_compile() {
    // MLX: a member's explicit specialisation inside its class (binary_ops.h), `uniform<T>`
    // and `make_uniform` (gemv.h), a class converting to both float and bfloat cast to half
    // (fp8.h), a class with only `operator bool` assigned to a half (steel_gemm_masked.h).
    let src = r#"
#include <metal_stdlib>
using namespace metal;
typedef bfloat bfloat16_t;
struct fp8 {
  uint8_t bits;
  fp8(float x) thread { bits = uint8_t(x); }
  operator bfloat16_t() thread { return bfloat16_t(float(bits)); }
  operator float() thread { return float(bits); }
};
struct FloorDivide {
  template <typename T> T operator()(T x, T y) thread { return floor(x / y); }
  template <> int operator()(int x, int y) thread { return x / y; }
};
struct NoMask {
  char x;
  constexpr METAL_FUNC operator bool() thread { return true; }
  constexpr METAL_FUNC operator bool() const device { return true; }
};
template <typename T> struct ScaleOp { T scale; };
kernel void k(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  uint8_t s = uint8_t(i);
  half h = half(*(thread fp8*)(&s));
  bfloat b = bfloat(h);
  constexpr const uniform<int> stride = make_uniform(4);
  const uniform<int> n = make_uniform(int(i)) / stride;
  FloorDivide fd;
  ScaleOp<half> op;
  NoMask nm;
  op.scale = nm;
  if (!nm) { y[i] = 0.0f; }
  y[i] = float(h) + float(half(b)) + fd(x[i], 2.0f) + float(fd(int(i), 3)) + n + float(op.scale);
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("mlx_kernel_headers", src);
}

#[test]
fn user_matrix_typedef_as_an_instantiation_argument() {
    // candle quantized: `typedef matrix<bfloat, 4, 4> bfloat4x4;` then
    // `kernel_mul_mm<bfloat, bfloat4x4, ...>`: the wrapper names the user's type, not metal's.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
typedef matrix<bfloat, 4, 4> bfloat4x4;
template <typename T, typename T4x4>
kernel void mm(device const T4x4* a [[buffer(0)]], device float* y [[buffer(1)]],
               uint i [[thread_position_in_grid]]) {
    y[i] = float(a[i][0][0]) + float(T(1));
}
template [[host_name("mm_bf16")]] kernel void mm<bfloat, bfloat4x4>(device const bfloat4x4*, device float*, uint);
"#;
    assert_eq!(names(src), ["mm_bf16"]);
    both(src);
    cpu_compiles("user_matrix_typedef", src);
}

#[test]
fn mlx_bit_builtins_internal_traits_and_bfloat_masks() {
    // MLX: `constexpr short power = __builtin_ctz(radix);` (fft.h, hadamard.h), Metal's
    // internal `_disjunction` under `#pragma METAL internals` (atomic.h), and a class with only
    // `operator bool` assigned to a bfloat (steel_gemm_masked.h, `scale = mask;`). The CUDA
    // prelude defines the builtins NVRTC lacks; both preludes have the traits.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <int R> struct Log { static constant constexpr short value = __builtin_ctz(R); };
static_assert(__builtin_ctzll(1ull << 40) == 40 && __builtin_clrsb(-1) == 31, "constant");
static_assert(__builtin_bitreverse8(1) == 0x80 && __builtin_ctzs(0x100) == 8, "clang's own");
#pragma METAL internals : enable
template <typename T>
constexpr constant bool is_fast = _disjunction<is_same<T, int>, is_same<T, float>>::value;
static_assert(_conjunction<is_same<int, int>>::value && !_disjunction<>::value && _negation<false_type>::value, "more");
#pragma METAL internals : disable
static_assert(is_fast<float> && !is_fast<half>, "_disjunction");
struct NoMask {
  char x;
  constexpr METAL_FUNC operator bool() const device { return true; }
  constexpr METAL_FUNC operator bool() thread { return true; }
};
template <typename T> struct ScaleOp { T scale; };
template <typename T, typename M>
kernel void k(device const M* m [[buffer(0)]], device float* y [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  constexpr short p = __builtin_ctz(Log<64>::value);
  ScaleOp<T> op;
  op.scale = m[i];
  y[i] = float(op.scale) + p + __builtin_popcount(i) + __builtin_ffs(int(i)) +
         __builtin_rotateleft32(i, 3u) + __builtin_clzl(ulong(i) + 1);
}
template [[host_name("k_bf16_nomask")]] kernel void k<bfloat, NoMask>(device const NoMask*, device float*, uint);
template [[host_name("k_bf16_bool")]] kernel void k<bfloat, bool>(device const bool*, device float*, uint);
template [[host_name("k_f16_nomask")]] kernel void k<half, NoMask>(device const NoMask*, device float*, uint);
"#;
    assert_eq!(names(src), ["k_bf16_bool", "k_bf16_nomask", "k_f16_nomask"]);
    both(src);
    cpu_compiles("mlx_builtins_traits_masks", src);
}

/// PyTorch's MPS kernels' header forms (our own kernel): a library namespace that is itself
/// called `metal` (`c10::metal`) naming vector types, `::metal::declval` in a `result_of`,
/// `as_type` with no `using namespace metal`, Metal's vector-aware `is_floating_point_v` /
/// `is_integral_v`, and math builtins given integral arguments (Metal converts them to float).
const LIB_NAMESPACE_METAL: &str = r#"
#include <metal_stdlib>
namespace lib {
namespace metal {
using vec2 = float2;
template <typename F, typename... A>
using result_of = decltype(::metal::declval<F>()(::metal::declval<A>()...));
template <typename T>
constexpr bool is_scalar_fp_v = ::metal::is_floating_point_v<T> && ::metal::is_scalar_v<T>;
inline uint bits(float x) { return as_type<uint>(x); }
inline float from_bits(uint u) { return as_type<float>(u); }
} // namespace metal
struct halve {
  float operator()(float x) const { return 0.5f * x; }
};
template <typename T,
          ::metal::enable_if_t<::metal::is_floating_point_v<T> && !::metal::is_scalar_v<T>, bool> = true>
float total(T v) { return v.x + v.y; }
template <typename T, ::metal::enable_if_t<metal::is_scalar_fp_v<T>, bool> = true>
float total(T v) { return v; }
} // namespace lib
static_assert(metal::is_floating_point_v<half2> && metal::is_integral_v<int4> &&
              metal::is_integral_v<const uchar3> && metal::is_floating_point<bfloat4>::value, "");
static_assert(!metal::is_scalar_v<float2> && !metal::is_floating_point_v<int2> &&
              !metal::is_integral_v<float4> && metal::is_integral<bool>::value, "");
kernel void pt_forms(device const float* x [[buffer(0)]], device const uchar* u [[buffer(1)]],
                     device float* y [[buffer(2)]], uint i [[thread_position_in_grid]]) {
  lib::metal::vec2 v = lib::metal::vec2(x[i], 1.0f);
  lib::metal::result_of<lib::halve, float> h = lib::halve()(x[i]);
  bool odd = (i & 1) != 0;
  y[4 * i + 0] = lib::total(v) + lib::total(h);
  y[4 * i + 1] = ::metal::pow(2, x[i]) + ::metal::trunc(odd) + ::metal::fract(u[i]) +
                 ::metal::precise::log(10) + ::metal::fast::exp2(u[i] & 3);
  y[4 * i + 2] = lib::metal::from_bits(lib::metal::bits(x[i]) ^ 0x80000000u);
  y[4 * i + 3] = ::metal::pow(x[i], 2) + ::metal::pow(3, 2) + ::metal::floor(i) +
                 ::metal::fmax(1, 2) + float(::metal::precise::pow(2, half(0.5h)));
}
"#;

#[test]
fn pytorch_header_forms_compile() {
    assert_eq!(names(LIB_NAMESPACE_METAL), ["pt_forms"]);
    let t = both(LIB_NAMESPACE_METAL);
    // ingot's own names are fully qualified: `metal::float2` would be lib::metal's inside lib.
    assert!(
        t[1].text.contains("using vec2 = ::metal::float2;"),
        "{}",
        t[1].text
    );
    cpu_compiles("pytorch_header_forms", LIB_NAMESPACE_METAL);
}

#[test]
fn kernel_named_like_a_builtin_and_metal_3_1_atomics() {
    // A kernel template named `cross` calling metal::cross and a user overload of the same name
    // (a kernel cannot be called: those calls are not the kernel's); Metal 3.1's 64-bit
    // atomic_min/max_explicit (no fetch); max/min with a scalar first and a vector second.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
static inline int3 cross(int3 a, int3 b) {
  return int3(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}
template <typename T, typename V>
kernel void cross(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  V a = V(T(i), T(1), T(2));
  V b = V(T(3), T(i), T(1));
  out[i] = cross(a, b).z;
}
template [[host_name("cross_float")]] kernel void cross<float, float3>(device float*, uint);
template [[host_name("cross_int")]] kernel void cross<int, int3>(device int*, uint);
kernel void amin_amax(device atomic<ulong>* lo [[buffer(0)]], device atomic<ulong>* hi [[buffer(1)]],
                      device const long* v [[buffer(2)]], device float4* w [[buffer(3)]],
                      uint i [[thread_position_in_grid]]) {
  ulong key = as_type<ulong>(v[i]) ^ 0x8000000000000000ul;
  atomic_min_explicit(lo, key, memory_order_relaxed);
  atomic_max_explicit(hi, key, memory_order_relaxed);
  w[i] = max(0.0f, w[i]) + min(1, w[i]);
}
"#;
    assert_eq!(names(src), ["amin_amax", "cross_float", "cross_int"]);
    for t in both(src) {
        assert!(t.text.contains("out[i] = cross(a, b).z;"), "{}", t.text);
        assert!(
            t.text.contains("static inline ::metal::int3 cross("),
            "{}",
            t.text
        );
    }
    cpu_compiles("kernel_named_cross", src);
}

#[test]
fn comparison_in_a_template_parameter_list_and_int64_t() {
    // `>=` inside a parenthesised template argument is no closing `>` (CUDA: `__device__` goes
    // after the whole template header); `int64_t` is `long`, as in Metal, on both targets.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
template <int N, enable_if_t<(N >= 2), bool> = true>
inline int pick() { return N; }
inline long first(constant long* p) { return p[0]; }
kernel void k(constant int64_t* sizes [[buffer(0)]], device long* out [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = first(sizes) + long(i) + pick<4>();
}
"#;
    let t = both(src);
    assert!(
        t[1].text.contains(
            "template <int N, enable_if_t<(N >= 2), bool> = true>\n__device__ inline int pick()"
        ),
        "{}",
        t[1].text
    );
    let launch = ingot_msl::prelude_files(Target::Cuda)
        .iter()
        .find(|(f, _)| f.ends_with("launch.h"))
        .expect("launch.h");
    assert!(launch.1.contains("typedef long int64_t;"));
    cpu_compiles("template_ge_int64", src);
}

#[test]
fn library_min_max_templates_beside_the_builtins() {
    // A library's own max/min templates seen through using-directives together with Metal's:
    // Metal's plain builtins win for arguments of one type (PyTorch's c10::metal::max). Its own
    // erf template beside ingot's extra erf: the library's wins (Metal has none).
    let src = r#"
#include <metal_stdlib>
using namespace metal;
namespace lib {
template <typename T, typename U>
T max(T a, U b) { return a > T(b) ? a : T(b); }
template <typename T>
enable_if_t<is_floating_point_v<T>, T> min(T a, T b) { return isunordered(a, b) ? NAN : ::metal::min(a, b); }
template <typename T>
float erf(T x) { return tanh(1.2f * float(x)); } // Metal has no erf: libraries bring their own
template <typename T>
enable_if_t<is_floating_point_v<T>, T> maxf(T a, T b) { return a > b ? a : b; }
} // namespace lib
namespace lib2 {
// PyTorch's c10::metal::max(T, T) called with bfloat arguments: Metal has none of its own.
template <typename T>
enable_if_t<is_floating_point_v<T>, T> max(T a, T b) { return isunordered(a, b) ? T(NAN) : (a > b ? a : b); }
inline float pick(bfloat a, bfloat b) { return float(max(a, b)); }
} // namespace lib2
using namespace lib;
kernel void k(device int* out [[buffer(0)]], device half* h [[buffer(1)]], device float* f [[buffer(2)]],
              uint i [[thread_position_in_grid]]) {
  out[i] = max(0, int(i) - 3) + max(out[i], 2L) + min(int(i), 4);
  h[i] = min(h[i], half(1)) + max(h[i], h[0]);
  f[i] = min(f[i], 0.5f) + max(f[i], 1) + float(max(bfloat(f[i]), bfloat(2))) + erf(f[i]);
  f[i] += lib2::pick(bfloat(f[i]), bfloat(3.0f)) + float(metal::min(bfloat(f[i]), bfloat(1.0f)));
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("lib_min_max", src);
}

#[test]
fn namespace_function_named_like_a_cuda_math_function() {
    // A library's `expm1f` (Metal has none; CUDA has `::expm1f`) declared in its namespace and
    // called unqualified through a using-directive and qualified: renamed wherever it is named.
    let src = r#"
#include <metal_stdlib>
namespace mylib {
inline float expm1f(float x);
} // namespace mylib
using namespace mylib;
namespace {
inline float wrap(float a) { return expm1f(a) + mylib::expm1f(a); }
} // namespace
namespace mylib {
inline float expm1f(float x) { return x + 0.5f * x * x; }
} // namespace mylib
kernel void k(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
  out[i] = wrap(float(i)) + ::metal::exp(float(i));
}
"#;
    let t = both(src);
    for t in &t {
        assert!(
            t.text
                .contains("return ingot_user_expm1f(a) + mylib::ingot_user_expm1f(a);"),
            "{}",
            t.text
        );
        assert!(t.text.contains("::metal::exp(float(i))"));
    }
    cpu_compiles("namespace_expm1f", src);
}

/// A kernel and a static member function of the same name (candle's mlx_sort: kernel
/// `block_sort`, member `KernelMergeSort::block_sort` called in the kernel's body): only the
/// kernel is renamed, so the member and its call still agree.
#[test]
fn kernel_named_like_a_member_function() {
    let src = r#"#include <metal_stdlib>
using namespace metal;
template <typename T> struct Sorter {
    static void block_sort(device T* x, uint i) { x[i] = x[i] + T(1); }
};
template <typename T>
kernel void block_sort(device T* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    using S = Sorter<T>;
    S::block_sort(x, i);
}
template [[host_name("block_sort_f32")]] kernel void block_sort<float>(device float*, uint);
"#;
    assert_eq!(names(src), ["block_sort_f32"]);
    both(src);
    cpu_compiles("kernel_named_like_a_member", src);
}

#[test]
fn library_defines_bfloat_min_max_in_namespace_metal() {
    // MLX's bf16_math.h defines Metal's missing bfloat math, min/max included, as plain
    // functions in namespace metal: the prelude must not define the same signatures.
    let src = r#"
#include <metal_stdlib>
using namespace metal;
typedef bfloat bfloat16_t;
namespace metal {
inline bfloat16_t max(bfloat16_t x, bfloat16_t y) { return bfloat16_t(fmax(float(x), float(y))); }
inline bfloat16_t min(bfloat16_t x, bfloat16_t y) { return bfloat16_t(fmin(float(x), float(y))); }
} // namespace metal
kernel void k(device bfloat16_t* b [[buffer(0)]], device float* f [[buffer(1)]],
              uint i [[thread_position_in_grid]]) {
  b[i] = max(b[i], b[0]) + metal::min(b[i], bfloat16_t(1.0f));
  f[i] = max(f[i], 0.5f) + float(max(bfloat(f[i]), bfloat(2.0f)));
}
"#;
    assert_eq!(names(src), ["k"]);
    both(src);
    cpu_compiles("lib_bfloat_min_max", src);
}
