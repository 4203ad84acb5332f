// ingot: the launch-parameter block shared by the CUDA and CPU targets (see ABI.md).
#pragma once
#ifndef INGOT_LAUNCH_H
#define INGOT_LAUNCH_H

#if defined(INGOT_TARGET_CUDA) && defined(__CUDACC_RTC__)
// NVRTC has no <stdint.h>: its built-in types are enough.
typedef unsigned char uint8_t;
typedef signed char int8_t;
typedef unsigned short uint16_t;
typedef short int16_t;
typedef unsigned int uint32_t;
typedef int int32_t;
// 64-bit: `long`, as in Metal and glibc (a `constant int64_t*` binds to a `constant long*`).
typedef unsigned long uint64_t;
typedef long int64_t;
typedef decltype(sizeof(0)) size_t;
typedef decltype((int*)0 - (int*)0) ptrdiff_t;
#else
#include <stddef.h>
#include <stdint.h>
#endif

namespace ingot {
struct launch {
  uint32_t grid[3];          // threads_per_grid (dispatchThreadgroups: groups * tg)
  uint32_t tg[3];            // dispatch_threads_per_threadgroup: the nominal threadgroup size
  uint32_t groups[3];        // threadgroups_per_grid
  uint32_t origin[3];        // group coordinate of this region's first group
  uint32_t region[3];        // groups in this region
  uint32_t block[3];         // threads per group in this region
  uint32_t exact;            // bit 0: dispatchThreads (positions >= grid return at entry);
                             // bit 1 (CUDA only): a linear region (ABI.md, "CUDA")
  uint32_t tgmem_offset[8];  // byte offset of [[threadgroup(n)]] in dynamic shared memory
  uint32_t tgmem_size[8];    // byte length of [[threadgroup(n)]] (16-byte multiples)
};
static_assert(sizeof(launch) == 35 * 4, "ingot::launch layout");
}  // namespace ingot

#endif
