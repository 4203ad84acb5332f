//! Rewriting rules, checked on the emitted text.

use ingot_msl::{translate, Options, ParamKind, Target, Translation};

fn tr(src: &str, target: Target) -> Translation {
    translate(src, &Options::new(target)).unwrap_or_else(|e| panic!("{e}"))
}

fn tr_with(
    src: &str,
    target: Target,
    constants: &[(&str, &str)],
) -> ingot_msl::Result<Translation> {
    let mut o = Options::new(target);
    for (k, v) in constants {
        o.constants.insert(k.to_string(), v.to_string());
    }
    translate(src, &o)
}

/// The user part of the translation (between the first `#line 1` and the first wrapper).
fn user_part(t: &Translation) -> &str {
    let start = t.text.find("#line 1 ").expect("#line 1");
    let body = &t.text[start..];
    let body = &body[body.find('\n').unwrap() + 1..];
    match body.find("\n#line ") {
        Some(end) => &body[..end + 1],
        None => body,
    }
}

#[test]
fn lines_are_kept() {
    let src = "#include <metal_stdlib>;\nusing namespace metal;\n\ntemplate <typename T>\nkernel void f(device T* a [[buffer(0)]],\n  uint i [[thread_position_in_grid]]) {\n  a[i] = 1;\n}\ntemplate [[host_name(\"f_f32\")]]\n[[kernel]] decltype(f<float>) f<float>;\n// end\n";
    for target in [Target::Cuda, Target::Cpu] {
        let t = tr(src, target);
        let user = user_part(&t);
        assert_eq!(user.lines().count(), src.lines().count(), "{user}");
        for (a, b) in user.lines().zip(src.lines()) {
            if b.contains("a[i] = 1") || b.contains("// end") {
                assert_eq!(a, b);
            }
        }
        assert!(user.starts_with("#include <metal_stdlib>\n"));
        assert!(!user.contains("host_name"));
        assert!(user.contains("INGOT_FN void ingot_kernel_f( T* a ,"));
        assert!(
            t.text.contains("#line 5 \"kernel.metal\"\n"),
            "wrapper line"
        );
    }
}

#[test]
fn cuda_wrapper_abi() {
    let src = r#"
struct P { uint n; };
kernel void k(device const float* x [[buffer(1)]], constant P& p [[buffer(0)]],
              device half* y [[buffer(2)]], uint2 g [[thread_position_in_grid]],
              ushort l [[thread_index_in_simdgroup]]) [[max_total_threads_per_threadgroup(128)]] {}
"#;
    let t = tr(src, Target::Cuda);
    assert_eq!(t.entries["k"], "k");
    assert!(
        t.text.contains("extern \"C\" __global__ void __launch_bounds__(128) k(const ingot::launch L, P a0, const float* a1, half* a2)"),
        "{}",
        t.text
    );
    assert!(t.text.contains("::ingot_kernel_k(a1, a0, a2, ::metal::uint2((uint)(ids.thread_position_in_grid[0]), (uint)(ids.thread_position_in_grid[1])), (ushort)(ids.thread_index_in_simdgroup));"));
    assert!(t.text.contains("if (!ingot_ids_init(L, ids)) return;"));
    let e = &t.module.entry_points[0];
    assert_eq!(e.abi, [1, 0, 2]);
    assert_eq!(e.params[1].kind, ParamKind::Bytes);
    assert_eq!(e.params[1].abi_slot, Some(0));
}

/// `[[ingot::min_threadgroups_per_core(n)]]` becomes `__launch_bounds__`'s second argument on
/// CUDA (a macro may supply it, as a source shared with Metal does) and leaves no trace in the
/// CPU translation's code.
#[test]
fn min_threadgroups_per_core_sets_cuda_launch_bounds() {
    let src = r#"
#define OCC(n) [[ingot::min_threadgroups_per_core(n)]]
OCC(6) [[max_total_threads_per_threadgroup(256)]]
kernel void k(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] += 1.0f; }
[[max_total_threads_per_threadgroup(64)]]
kernel void j(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) { x[i] = 0.0f; }
"#;
    let t = tr(src, Target::Cuda);
    assert!(
        t.text
            .contains("__global__ void __launch_bounds__(256, 6) k("),
        "{}",
        t.text
    );
    assert!(t.text.contains("__global__ void __launch_bounds__(64) j("));
    assert_eq!(
        t.module.entry("k").unwrap().min_threadgroups_per_core,
        Some(6)
    );
    assert_eq!(t.module.entry("j").unwrap().min_threadgroups_per_core, None);
    let c = tr(src, Target::Cpu);
    assert!(!user_part(&c).contains("min_threadgroups"), "{}", c.text);
}

#[test]
fn cpu_wrapper_abi_and_mode() {
    let src = r#"
kernel void loop_k(device float* y, constant float& a, uint i [[thread_position_in_grid]]) { y[i] = a; }
kernel void fib_k(device float* y, threadgroup float* s [[threadgroup(1)]],
                  uint i [[thread_index_in_threadgroup]]) {
  s[i] = y[i]; threadgroup_barrier(mem_flags::mem_threadgroup); y[i] = s[0];
}
"#;
    let t = tr(src, Target::Cpu);
    assert_eq!(t.entries["loop_k"], "ingot_cpu_loop_k");
    assert!(t.text.contains("extern \"C\" INGOT_EXPORT const uint32_t ingot_cpu_loop_k_sizes[] = {sizeof(float), sizeof(float)};"));
    assert!(t
        .text
        .contains("ingot::cpu::run_groups<ingot::cpu::Mode::Loop>(L, group_begin, group_end,"));
    assert!(t.text.contains("::ingot_kernel_loop_k((float*)args[0], *(const float*)args[1], (uint)(t.thread_position_in_grid[0]));"));
    // A barrier kernel runs as work-item loops: one group function call per threadgroup.
    assert!(t
        .text
        .contains("ingot::cpu::run_groups<ingot::cpu::Mode::WorkItems>"));
    assert!(t.text.contains("INGOT_FN void ingot_group_fib_k("));
    assert!(t.text.contains("(float*)ingot::cpu::tgmem(1u)"));
    assert!(t.text.contains("ingot_cpu_fib_k_sizes[] = {sizeof(float)}"));
    assert!(t
        .text
        .contains("// ingot cpu engine: fib_k: work-item loops"));
    assert_eq!(t.cpu_modes["fib_k"], ingot_msl::CpuMode::WorkItems);
    assert_eq!(t.cpu_modes["loop_k"], ingot_msl::CpuMode::Loop);
    // ... or with fibers when work-item loops are off.
    let mut o = Options::new(Target::Cpu);
    o.work_items = false;
    let t = translate(src, &o).unwrap();
    assert!(t
        .text
        .contains("ingot::cpu::run_groups<ingot::cpu::Mode::Fibers>"));
    assert!(matches!(
        t.cpu_modes["fib_k"],
        ingot_msl::CpuMode::Fibers(_)
    ));
}

#[test]
fn constant_has_three_meanings() {
    let src = r#"
constant float K = 2.0f;
constant constexpr int N = 4;
static constant const float T[2] = {1, 2};
struct S { static constexpr constant int M = 3; constant float* p; };
float f(constant float* p, constant float& r) { return (constant float*)p == &r; }
"#;
    let t = tr(src, Target::Cpu);
    let u = user_part(&t);
    assert!(u.contains("INGOT_PROGRAM_CONSTANT float K = 2.0f;"));
    assert!(u.contains("INGOT_PROGRAM_CONSTANT constexpr int N = 4;"));
    assert!(u.contains(" INGOT_PROGRAM_CONSTANT  float T[2]"), "{u}");
    assert!(!u.contains("static INGOT_PROGRAM_CONSTANT"));
    assert!(u.contains("static constexpr const int M = 3; const float* p;"));
    assert!(u.contains("float f(const float* p, const float& r) { return (const float*)p == &r; }"));
}

#[test]
fn threadgroup_declarations_by_target() {
    let src = "kernel void k(uint i [[thread_index_in_threadgroup]]) {\n  threadgroup float a[32], b;\n  threadgroup float* p = a;\n  threadgroup atomic_uint c;\n  threadgroup float4 v[2];\n}\n";
    let cpu = tr(src, Target::Cpu);
    let u = user_part(&cpu);
    assert!(u.contains("float (&a)[32] = ingot::cpu::tg_var<float[32], 0>(); float& b = ingot::cpu::tg_var<float, 1>();"), "{u}");
    assert!(u.contains("  float* p = a;"));
    assert!(u.contains("atomic_uint& c = ingot::cpu::tg_var<atomic_uint, 2>();"));
    assert!(u.contains("::metal::float4 (&v)[2] = ingot::cpu::tg_var<::metal::float4[2], 3>();"));
    let cuda = tr(src, Target::Cuda);
    let u = user_part(&cuda);
    assert!(
        u.contains("__shared__ __align__(16) float a[32], b;"),
        "{u}"
    );
    assert!(u.contains("__shared__ __align__(16) atomic_uint c;"));
    let e = &cuda.module.entry_points[0];
    assert_eq!(e.features.static_threadgroup_decls, 3);
    assert!(e.features.needs_fibers());
}

#[test]
fn member_function_qualifiers_swizzles_and_literals() {
    let src = r#"
struct V { float ba; float get() thread const { return ba; } V() threadgroup = default; };
float4 f(float4 v, V s) {
  v.xy = v.zw; v.rgb += v.bgr; float2 q = v.xx; half h = 1.0h + 2h; bfloat b = 1.5bf;
  return v + s.ba;
}
"#;
    let t = tr(src, Target::Cuda);
    let u = user_part(&t);
    assert!(
        u.contains("float get()  const { return ba; } V()  = default;"),
        "{u}"
    );
    assert!(u.contains("v.xy_ref() = v.zw(); v.rgb_ref() += v.bgr(); ::metal::float2 q = v.xx();"));
    assert!(u.contains("half h = half(1.0f) + half(2.0f); bfloat b = bfloat(1.5f);"));
    assert!(
        u.contains("return v + s.ba;"),
        "a field named like a swizzle is left alone"
    );
}

#[test]
fn function_constants_and_gates() {
    let src = r#"
constant bool has_b [[function_constant(0)]];
constant int mode [[function_constant(1)]];
constant bool no_b = !has_b;
kernel void k(device float* a [[buffer(0)]],
              device float* b [[buffer(1), function_constant(has_b)]],
              device float* c [[buffer(2), function_constant(no_b)]],
              uint i [[thread_position_in_grid]]) {
  if (is_function_constant_defined(has_b)) a[i] = b[i];
  a[i] += mode;
}
"#;
    let e = tr_with(src, Target::Cpu, &[("has_b", "true")]).unwrap_err();
    assert!(e.message.contains("`mode` (int, index 1)"), "{e}");
    assert_eq!((e.line, e.column), (10, 11));
    let t = tr_with(src, Target::Cpu, &[("has_b", "1"), ("1", "7")]).unwrap();
    let u = user_part(&t);
    assert!(u.contains("INGOT_PROGRAM_CONSTANT bool has_b = true;"));
    assert!(u.contains("INGOT_PROGRAM_CONSTANT int mode = 7;"));
    let v = tr_with(
        "constant float2 w [[function_constant(0)]];\nfloat f() { return w.x; }\n",
        Target::Cuda,
        &[("w", "1.5")],
    )
    .unwrap();
    assert!(user_part(&v).contains("INGOT_PROGRAM_CONSTANT ::metal::float2 w = 1.5;"));
    assert!(u.contains("if (true) a[i] = b[i];"));
    let e = &t.module.entry_points[0];
    assert!(e.params[1].active);
    assert!(!e.params[2].active);
    assert_eq!(e.abi, [0, 1]);
    assert!(t
        .text
        .contains("((float*)args[0], (float*)args[1], nullptr,"));
    let t = tr_with(src, Target::Cuda, &[("has_b", "false"), ("mode", "0")]).unwrap();
    assert!(
        t.text
            .contains("(const ingot::launch L, float* a0, float* a1)"),
        "{}",
        t.text
    );
    assert!(t.text.contains("(a0, nullptr, a1,"));
    let err = tr_with(src, Target::Cuda, &[("nope", "1")]).unwrap_err();
    assert!(err.message.contains("nope"));
}

#[test]
fn math_name_clashes_are_renamed() {
    let src = "float log1p(float x) { return x; }\nfloat erf(float x);\nfloat g(float y) { return log1p(y) + metal::log1p(y); }\n";
    let t = tr(src, Target::Cpu);
    let u = user_part(&t);
    assert!(u.contains("float ingot_user_log1p(float x)"));
    assert!(u.contains("return ingot_user_log1p(y) + metal::log1p(y);"));
    assert!(
        u.contains("float erf(float x);"),
        "declarations alone are not renamed"
    );
    assert!(t.text.contains("template <class... A> inline auto ingot_user_log1p(A... a) -> decltype(::metal::log1p(a...)) { return ::metal::log1p(a...); }\n#line 1 "));
}

#[test]
fn vector_type_names_are_qualified() {
    // NVRTC predeclares CUDA's float4/uint3 at global scope: MSL's are written ::metal::float4
    // (fully qualified: a user namespace may be called `metal` too, as PyTorch's c10::metal is).
    let src = "kernel void k(device float4* a, device packed_half3* h, device metal::float2* b,\n  uint3 g [[thread_position_in_grid]]) { float4x4 m; a[g.x] = float4(1); }\n";
    let t = tr(src, Target::Cuda);
    let u = user_part(&t);
    assert!(
        u.contains("::metal::float4* a,  ::metal::packed_half3* h,  metal::float2* b,"),
        "{u}"
    );
    assert!(u.contains("::metal::uint3 g ) { ::metal::float4x4 m; a[g.x] = ::metal::float4(1); }"));
    assert!(t.text.contains(
        "(const ingot::launch L, ::metal::float4* a0, ::metal::packed_half3* a1, metal::float2* a2)"
    ));
    assert!(t
        .text
        .contains("::metal::uint3((uint)(ids.thread_position_in_grid[0])"));
}

#[test]
fn float_literals_are_single_precision() {
    let src = "float f(float x) { return max(x, 0.0) + 1e-5 + .5 + 2.f + 1.0f + 3 + 0x1p3 + 1.0L; }\nconstant float& g(constant float* p) { return p[0]; }\n";
    let t = tr(src, Target::Cpu);
    let u = user_part(&t);
    assert!(
        u.contains("return max(x, 0.0f) + 1e-5f + .5f + 2.f + 1.0f + 3 + 0x1p3 + 1.0L;"),
        "{u}"
    );
    assert!(
        u.contains("const float& g(const float* p)"),
        "a function returning a constant reference is not a program constant: {u}"
    );
}

#[test]
fn pragmas() {
    let src = "#pragma METAL internals : enable\nvoid f() {\n#pragma clang loop unroll(full)\nfor (;;) {}\n#pragma clang loop unroll_count(4)\nfor (;;) {}\n}\n";
    let cuda = tr(src, Target::Cuda);
    let u = user_part(&cuda);
    assert!(!u.contains("METAL"));
    assert!(u.contains("#pragma unroll\n"));
    assert!(u.contains("#pragma unroll 4\n"));
    let cpu = tr(src, Target::Cpu);
    assert!(!user_part(&cpu).contains("pragma"));
}

#[test]
fn unsupported_features_are_named() {
    let src = "kernel void k(texture2d<float, access::read> t [[texture(0)]]) {}";
    let e = translate(src, &Options::new(Target::Cuda)).unwrap_err();
    assert_eq!(
        e.to_string(),
        "kernel.metal:1:15: error: textures are not supported on the cuda target (`texture2d`)"
    );
    let e = translate(
        "vertex float4 v() { return 0; }",
        &Options::new(Target::Cpu),
    )
    .unwrap_err();
    assert!(e.message.contains("vertex functions are not supported"));
}

#[test]
fn namespaces_and_functors() {
    let src = r#"
namespace ops {
struct Reduce { float operator()(float x) thread const { return simd_sum(x); } };
template <typename Op> kernel void run(device float* a, uint i [[thread_position_in_grid]]) { a[i] = Op()(a[i]); }
}
template [[host_name("run_sum")]] [[kernel]] decltype(ops::run<ops::Reduce>) ops::run<ops::Reduce>;
"#;
    let t = tr(src, Target::Cpu);
    let e = &t.module.entry_points[0];
    assert_eq!(e.name, "run_sum");
    assert!(
        e.features.simdgroup,
        "the functor's SIMD use reaches the entry point"
    );
    assert!(t
        .text
        .contains("::ops::ingot_kernel_run<ops::Reduce>((float*)args[0]"));
    // The SIMD-group function is in the functor: the work-item loop former does not look
    // into it, so the kernel keeps fibers.
    assert!(t.text.contains("Mode::Fibers"));
    assert!(t.text.contains("fibers (the template argument `Reduce`"));
}

#[test]
fn kernels_defined_by_macros() {
    let src = r#"#include <metal_stdlib>
using namespace metal;
#define UNARY(FN, T, NAME) \
kernel void NAME(constant size_t &dim, device const T *in, device T *out, \
                 uint tid [[thread_position_in_grid]]) { \
    if (tid >= dim) return; out[tid] = T(FN(float(in[tid]))); }
UNARY(exp, float, exp_f32)
#if defined(__HAVE_BFLOAT__) && __METAL_VERSION__ >= 310
UNARY(exp, bfloat, exp_bf16)
#else
UNARY(exp, half, never)
#endif
"#;
    let t = tr(src, Target::Cpu);
    let names: Vec<&str> = t
        .module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["exp_f32", "exp_bf16"]);
    let e = &t.module.entry_points[0];
    assert_eq!(e.line, 7);
    assert_eq!(e.params[1].pointee, "float");
    assert_eq!(e.params[0].info.unwrap().size, 8);
    assert!(t.text.contains("if (tid >= dim) return;"));
    assert_eq!(user_part(&t).lines().count(), src.lines().count());
}

#[test]
fn typedef_instantiations_follow_the_rename() {
    let src = r#"
template <typename T>
kernel void mul(device T* a, uint i [[thread_position_in_grid]]) { a[i] *= 2; }
typedef decltype(mul<float>) mul_t;
template [[host_name("mul_f32")]] kernel mul_t mul<float>;
template [[host_name("mul_f16")]] kernel void mul<half>(device half*, uint);
"#;
    let t = tr(src, Target::Cuda);
    let names: Vec<&str> = t
        .module
        .entry_points
        .iter()
        .map(|e| e.name.as_str())
        .collect();
    assert_eq!(names, ["mul_f32", "mul_f16"]);
    let u = user_part(&t);
    assert!(
        u.contains("typedef decltype(ingot_kernel_mul<float>) mul_t;"),
        "{u}"
    );
    assert!(t.text.contains("::ingot_kernel_mul<half>(a0,"));
}

#[test]
fn ggml_style_reflection() {
    let src = include_str!("robustness_inputs/ggml_style.metal");
    let m = ingot_msl::reflect(src).unwrap();
    let names: Vec<&str> = m.entry_points.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        ["kernel_add", "kernel_rms_norm", "kernel_rms_norm_4"]
    );
    let add = &m.entry_points[0];
    assert_eq!(add.params[0].kind, ParamKind::Bytes);
    assert_eq!(add.params[0].size, Some(24), "typedef struct layout");
    assert_eq!(add.params[1].pointee, "char");
    assert_eq!(add.params[2].buffer_index, Some(2));
    assert_eq!(
        add.params[3].role,
        Some(ingot_msl::BuiltinRole::ThreadgroupPositionInGrid)
    );
    assert_eq!(add.params[4].info.unwrap().lanes, 3);
    assert!(!add.features.needs_fibers());
    let n4 = &m.entry_points[2];
    assert_eq!(n4.template_args, ["float4"]);
    assert!(n4.features.barriers && n4.features.simdgroup);
    assert_eq!(n4.params[3].threadgroup_index, Some(0));
    let t = tr(src, Target::Cuda);
    assert!(t.text.contains(
        "typedef decltype(ingot_kernel_kernel_rms_norm<::metal::float4>) kernel_rms_norm_t;"
    ));
    assert!(t.text.contains("::ingot_kernel_kernel_rms_norm<::metal::float4>(a0, a1, a2, (float*)(ingot_smem + L.tgmem_offset[0])"));
}

#[test]
fn cuda_user_functions_are_device_functions() {
    let src = "struct Op { float operator()(float x) const { return x; } };\ntemplate <typename T> [[nodiscard]] T twice(T x) { return x * 2; }\nMETAL_FUNC float h(float x) { return x; }\nstatic inline float g(float x) { return x; }\nkernel void k(device float* a) { a[0] = g(twice(Op()(1.0f))); }\n";
    let t = tr(src, Target::Cuda);
    let u = user_part(&t);
    assert!(
        u.contains("struct Op { __device__ float operator()(float x) const"),
        "{u}"
    );
    assert!(u.contains("template <typename T> [[nodiscard]] __device__ T twice(T x)"));
    assert!(u.contains("\nMETAL_FUNC float h("));
    assert!(u.contains("__device__ static inline float g("));
    assert!(u.contains("INGOT_FN void ingot_kernel_k("));
    assert!(!tr(src, Target::Cpu).text.contains("__device__"));
}

#[test]
fn byte_order_mark_and_crlf() {
    let src = "\u{feff}#include <metal_stdlib>\r\nusing namespace metal;\r\nkernel void k(device float* a,\r\n  uint i [[thread_position_in_grid]]) { a[i] = 1.0; }\r\n";
    let t = tr(src, Target::Cpu);
    assert!(!t.text.contains('\u{feff}'));
    assert_eq!(t.module.entry_points[0].line, 3);
    assert!(t.text.contains("#line 3 \"kernel.metal\""));
    assert!(t.text.contains("a[i] = 1.0f;"));
}

#[test]
fn defines_reach_the_preprocessor_and_the_target_compiler() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\nkernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n#ifdef DOUBLE_IT\n    x[i] *= SCALE;\n#endif\n}\n";
    for target in [Target::Cuda, Target::Cpu] {
        let mut o = Options::new(target);
        o.defines.insert("SCALE".into(), "2.5f".into());
        o.defines.insert("DOUBLE_IT".into(), String::new());
        let t = translate(src, &o).unwrap_or_else(|e| panic!("{e}"));
        assert!(user_part(&t).contains("x[i] *= 2.5f;"), "{}", t.text);
        assert!(t.text.contains("#define SCALE 2.5f\n"));
        assert!(t.text.contains("#define DOUBLE_IT 1\n"));
        // Without the define the guarded line is gone.
        let plain = tr(src, target);
        assert!(!user_part(&plain).contains("*="));
    }
}

/// A unit of one entry point holds nothing of the kernels it leaves out, not even what later
/// passes write there (an `is_function_constant_defined` folded to `false` once stood alone at
/// file scope, and g++ rejected the unit).
#[test]
fn a_unit_leaves_out_the_other_kernels_entirely() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
        constant bool flag [[function_constant(0)]];\n\
        constant int reps [[function_constant(1)]];\n\
        kernel void keep(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
            o[i] = flag ? 1.0f : 2.0f;\n}\n\
        kernel void drop(device int* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n\
            o[i] = is_function_constant_defined(reps) ? reps : -1;\n}\n";
    for target in [Target::Cpu, Target::Cuda] {
        let mut o = Options::new(target);
        o.constants.insert("flag".into(), "true".into());
        o.entries = Some(vec!["keep".into()]);
        let t = translate(src, &o).unwrap();
        let text = user_part(&t);
        assert!(text.contains("flag ? 1.0f : 2.0f"), "{text}");
        assert!(
            !text.contains("false") && !text.contains("reps :"),
            "{text}"
        );
    }
}

#[test]
fn collapsed_member_overloads_leave_no_annotation_behind() {
    // `apply` overloaded on the address space of `this`: the second goes, and on CUDA the
    // `__device__` of the second must go with it (a dangling one before `};` is a syntax error).
    let src = "#include <metal_stdlib>\nusing namespace metal;\nstruct H {\n  float s;\n  float apply(float v) const thread { return v * s; }\n  float apply(float v) const constant { return v * s; }\n};\nkernel void k(device float* y [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  H h; h.s = 2.0f; y[i] = h.apply(y[i]);\n}\n";
    let t = tr(src, Target::Cuda);
    let user = user_part(&t);
    assert_eq!(user.matches("apply(float v)").count(), 1, "{user}");
    assert_eq!(user.matches("__device__").count(), 1, "{user}");
    assert_eq!(user.lines().count(), src.lines().count(), "{user}");
}

#[test]
fn guarded_shuffles_run_in_the_whole_simdgroup_on_cuda() {
    let src = r#"
kernel void k(device float* a, uint l [[thread_index_in_simdgroup]], uint g [[thread_position_in_grid]]) {
  float x = a[g];
  for (uint d = 1; d < 32; d <<= 1) { if (l >= d) x += simd_shuffle_up(x, d); }
  if (l > 3) { x = x * simd_broadcast(x, 2); }
  if (l >>= 1) x += simd_shuffle_up(x, 1);
  if (l > 0) x += simd_shuffle_up(a[g], 1);
  a[g] = x;
}
"#;
    let t = tr(src, Target::Cuda);
    assert!(t
        .text
        .contains("{ auto ingot_shfl1 = simd_shuffle_up(x, d); if (l >= d) x += ingot_shfl1 ; }"));
    assert!(t.text.contains(
        "{ auto ingot_shfl2 = simd_broadcast(x, 2); if (l > 3) { x = x * ingot_shfl2 ; } }"
    ));
    // An assignment in the condition or an indexed operand: left in the branch.
    assert!(t.text.contains("if (l >>= 1) x += simd_shuffle_up(x, 1);"));
    assert!(t.text.contains("if (l > 0) x += simd_shuffle_up(a[g], 1);"));
    // The CPU's work-item loops give lanes outside the branch without it: lanes outside the
    // branch deposit a pure operand passively (phase 3: the three shuffles of `x`); an indexed
    // operand (`a[g]`) does not.
    let cpu = tr(src, Target::Cpu).text;
    assert!(!cpu.contains("ingot_shfl"));
    assert_eq!(cpu.matches("[ingot_i] ? 1 : 3);").count(), 3, "{cpu}");
}

#[test]
fn work_item_storage_never_names_a_local_of_the_kernel() {
    // `x` lives across the barrier and its type names the body's `n`: the per-thread storage is
    // declared before the body runs. A compile-time constant of the outermost block moves
    // there first (MLX's `constexpr int n_reads`); one in an inner block keeps fibers (it
    // compiled wrongly before either was handled).
    let src = r#"
kernel void k(device float* a, uint i [[thread_index_in_threadgroup]]) {
  constexpr int n = 4;
  float x[n];
  for (int j = 0; j < n; ++j) x[j] = a[i * n + j];
  threadgroup_barrier(mem_flags::mem_threadgroup);
  a[i] = x[0] + x[3];
}
"#;
    let t = tr(src, Target::Cpu);
    assert_eq!(t.cpu_modes["k"], ingot_msl::CpuMode::WorkItems);
    let group = &t.text[t.text.find("ingot_group_k").unwrap()..];
    let moved = group.find("constexpr int n = 4;").unwrap();
    assert!(moved < group.find("using ingot_w_x").unwrap(), "{group}");
    let inner = src
        .replacen("{\n  constexpr", "{ {\n  constexpr", 1)
        .replacen("x[3];\n}", "x[3];\n} }", 1);
    let t = tr(&inner, Target::Cpu);
    assert_eq!(
        t.cpu_modes["k"],
        ingot_msl::CpuMode::Fibers("the type of `x` names `n`, declared in the kernel".into())
    );
}
