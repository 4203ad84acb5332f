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
#define METAL_FUNC INGOT_FN
#define METAL_INTERNAL

#include <ingot/launch.h>
#if defined(INGOT_TARGET_CPU)
#include <ingot/cpu/runtime.h>
#endif
#include <ingot/detail/types.h>
#include <ingot/detail/vec.h>
#include <ingot/detail/math.h>
#include <ingot/detail/atomic.h>
#include <ingot/detail/simd.h>
#include <ingot/detail/simdgroup_matrix.h>

#endif
