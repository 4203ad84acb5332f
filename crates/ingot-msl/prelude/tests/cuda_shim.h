// Stub declarations of the CUDA device API, ONLY so that g++ -fsyntax-only can check the CUDA
// prelude on a machine without CUDA. Never used for real code (NVRTC provides the real ones).
#pragma once
#include <math.h>
#define __device__
#define __global__
#define __host__
#define __shared__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
struct ingot_shim_dim3 { unsigned int x, y, z; };
extern ingot_shim_dim3 threadIdx, blockIdx, blockDim, gridDim;
void __syncthreads();
void __syncwarp(unsigned int mask = 0xffffffffu);
void __threadfence();
void __threadfence_block();
unsigned int __activemask();
unsigned int __shfl_sync(unsigned int m, unsigned int v, int src, int w = 32);
unsigned int __shfl_down_sync(unsigned int m, unsigned int v, unsigned int d, int w = 32);
unsigned int __shfl_up_sync(unsigned int m, unsigned int v, unsigned int d, int w = 32);
unsigned int __shfl_xor_sync(unsigned int m, unsigned int v, int x, int w = 32);
unsigned int __ballot_sync(unsigned int m, int p);
int __all_sync(unsigned int m, int p);
int __any_sync(unsigned int m, int p);
int __ffs(int);
int __clz(int);
int __clzll(long long);
int __popc(unsigned int);
int __popcll(unsigned long long);
unsigned int __brev(unsigned int);
unsigned long long __brevll(unsigned long long);
long long __mul64hi(long long, long long);
unsigned long long __umul64hi(unsigned long long, unsigned long long);
int atomicAdd(int*, int);
unsigned int atomicAdd(unsigned int*, unsigned int);
unsigned long long atomicAdd(unsigned long long*, unsigned long long);
float atomicAdd(float*, float);
double atomicAdd(double*, double);
unsigned short atomicCAS(unsigned short*, unsigned short, unsigned short);
unsigned int atomicCAS(unsigned int*, unsigned int, unsigned int);
unsigned long long atomicCAS(unsigned long long*, unsigned long long, unsigned long long);
unsigned int atomicExch(unsigned int*, unsigned int);
unsigned long long atomicExch(unsigned long long*, unsigned long long);
unsigned int atomicAnd(unsigned int*, unsigned int);
unsigned long long atomicAnd(unsigned long long*, unsigned long long);
unsigned int atomicOr(unsigned int*, unsigned int);
unsigned long long atomicOr(unsigned long long*, unsigned long long);
unsigned int atomicXor(unsigned int*, unsigned int);
unsigned long long atomicXor(unsigned long long*, unsigned long long);
int atomicMin(int*, int);
unsigned int atomicMin(unsigned int*, unsigned int);
long long atomicMin(long long*, long long);
unsigned long long atomicMin(unsigned long long*, unsigned long long);
int atomicMax(int*, int);
unsigned int atomicMax(unsigned int*, unsigned int);
long long atomicMax(long long*, long long);
unsigned long long atomicMax(unsigned long long*, unsigned long long);
float __sinf(float);
float __cosf(float);
float __tanf(float);
float __expf(float);
float __exp10f(float);
float __logf(float);
float __log2f(float);
float __log10f(float);
float __powf(float, float);
float __fdividef(float, float);
float rsqrtf(float);
double rsqrt(double);
float sinpif(float);
double sinpi(double);
float cospif(float);
double cospi(double);
