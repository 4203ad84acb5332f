// ingot prelude: the Metal standard library for MSL kernels translated to CUDA C++ (NVRTC) or
// to host C++17 (g++/clang++). One implementation; the target is chosen by INGOT_TARGET_CUDA or
// INGOT_TARGET_CPU (set by the translation), INGOT_FAST_MATH selects fast:: as the default math.
#pragma once
#ifndef INGOT_METAL_STDLIB_H
#define INGOT_METAL_STDLIB_H

#if defined(INGOT_TARGET_CUDA) && defined(INGOT_TARGET_CPU)
#error "define only one of INGOT_TARGET_CUDA and INGOT_TARGET_CPU"
#endif
#if !defined(INGOT_TARGET_CUDA) && !defined(INGOT_TARGET_CPU)
#error "define INGOT_TARGET_CUDA or INGOT_TARGET_CPU before including <ingot/metal_stdlib.h>"
#endif
#ifndef INGOT_FAST_MATH
#define INGOT_FAST_MATH 0
#endif

#define __METAL__ 1
#define __METAL_VERSION__ 310
#define __HAVE_BFLOAT__ 1
#define __HAVE_SIMDGROUP_MATRIX__ 1
#define __METAL_MACOS__ 1

#if defined(INGOT_TARGET_CUDA)
#define INGOT_FN __device__ __forceinline__
#define INGOT_SITE_FN __device__ __forceinline__
#define INGOT_PROGRAM_CONSTANT __device__ const
#define INGOT_EXPORT
#define INGOT_RESTRICT __restrict__
#else
#define INGOT_FN inline
#define INGOT_SITE_FN __attribute__((always_inline)) inline
#define INGOT_PROGRAM_CONSTANT static const
#define INGOT_EXPORT __attribute__((visibility("default")))
#define INGOT_RESTRICT __restrict__
#endif
// CPU: SIMD-group functions and barriers take the source line of their call (a defaulted
// parameter, filled in where the user calls them). The fiber engine orders pending exchanges
// by it (earlier lines first: lanes reconverge) and checked mode names barriers by it (the
// optimiser may duplicate one call into several machine addresses).
#if defined(INGOT_TARGET_CUDA)
#define INGOT_LINE_PARAM
#define INGOT_LINE_PARAM0
#define INGOT_LINE_ARG
#else
#define INGOT_LINE_PARAM , unsigned ingot_line = __builtin_LINE()
#define INGOT_LINE_PARAM0 unsigned ingot_line = __builtin_LINE()
#define INGOT_LINE_ARG , ingot_line
#endif
#define METAL_FUNC INGOT_FN
#define METAL_INTERNAL

#include <ingot/launch.h>
#if defined(INGOT_TARGET_CPU)
#include <ingot/cpu/runtime.h>
#endif
#if defined(INGOT_TARGET_CUDA)
// NVRTC pre-declares CUDA's own vector types (float3 is 12 bytes there) at global scope. MSL's
// names are redirected to ingot_<name> so that `float3` means MSL's type in translated code.
#define char2 ingot_char2
#define char3 ingot_char3
#define char4 ingot_char4
#define uchar2 ingot_uchar2
#define uchar3 ingot_uchar3
#define uchar4 ingot_uchar4
#define short2 ingot_short2
#define short3 ingot_short3
#define short4 ingot_short4
#define ushort2 ingot_ushort2
#define ushort3 ingot_ushort3
#define ushort4 ingot_ushort4
#define int2 ingot_int2
#define int3 ingot_int3
#define int4 ingot_int4
#define uint2 ingot_uint2
#define uint3 ingot_uint3
#define uint4 ingot_uint4
#define long2 ingot_long2
#define long3 ingot_long3
#define long4 ingot_long4
#define ulong2 ingot_ulong2
#define ulong3 ingot_ulong3
#define ulong4 ingot_ulong4
#define float2 ingot_float2
#define float3 ingot_float3
#define float4 ingot_float4
#endif
#include <ingot/detail/types.h>
#include <ingot/detail/vec.h>
#include <ingot/detail/math.h>
#include <ingot/detail/atomic.h>
#include <ingot/detail/simd.h>
#include <ingot/detail/simdgroup_matrix.h>
#include <ingot/detail/intrinsics.h>
#include <ingot/detail/builtins.h>

#endif
