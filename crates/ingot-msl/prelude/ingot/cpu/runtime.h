// ingot CPU runtime: runs the threadgroups of a translated MSL kernel on the calling OS thread.
//
// Mode::Loop   - every thread of a group in a plain nested loop (no barrier / SIMD / tg memory).
// Mode::WorkItems - the translator's group function runs once per group: its threads as loops
//                between barriers and SIMD-group functions, under active masks (ingot-msl
//                src/wiloops); SIMD-group functions deposit every active lane's operand in one
//                pass and read them in the next (wi_group).
// Mode::Fibers - every thread of a group is a fiber with its own stack; barriers and SIMD-group
//                collectives switch between fibers in user space (hand-written context switch,
//                no system call). One OS thread runs all fibers of a group.
// See crates/ingot-msl/ABI.md for the contract.
#pragma once
#ifndef INGOT_CPU_RUNTIME_H
#define INGOT_CPU_RUNTIME_H

#include <ingot/launch.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <type_traits>

#ifndef INGOT_EXPORT
#define INGOT_EXPORT __attribute__((visibility("default")))
#endif

// ---------------------------------------------------------------------------------------------
// Context switch. ingot_fiber_switch(save, to): saves the callee-saved state on the current
// stack, stores the stack pointer to *save, loads `to` as the stack pointer and restores.
// ingot_fiber_start: the first "return address" of a new fiber; calls fn(arg), never returns.
// Weak + hidden so that several translation units of one shared object may include this.
// ---------------------------------------------------------------------------------------------
extern "C" void ingot_fiber_switch(void** save, void* to);
extern "C" void ingot_fiber_start();

#if defined(__APPLE__)
#define INGOT_ASM_SYM(n) "_" #n
#define INGOT_ASM_DECL(n) ".weak_definition _" #n "\n.private_extern _" #n "\n"
#define INGOT_ASM_END(n) ""
#define INGOT_ASM_BEGIN ".text\n"
#define INGOT_ASM_FINISH ""
#else
#define INGOT_ASM_SYM(n) #n
#define INGOT_ASM_DECL(n) ".weak " #n "\n.hidden " #n "\n.type " #n ",%function\n"
#define INGOT_ASM_END(n) ".size " #n ", .-" #n "\n"
#define INGOT_ASM_BEGIN ".pushsection .text\n"
#define INGOT_ASM_FINISH ".popsection\n"
#endif

#if defined(__x86_64__)
// System V: callee-saved rbx rbp r12-r15. MXCSR and the x87 control word are not switched:
// kernels never change them, and fldcw/ldmxcsr would dominate the cost of a switch.
__asm__(INGOT_ASM_BEGIN
        ".p2align 4\n" INGOT_ASM_DECL(ingot_fiber_switch) INGOT_ASM_SYM(ingot_fiber_switch) ":\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n" INGOT_ASM_END(ingot_fiber_switch)
        ".p2align 4\n" INGOT_ASM_DECL(ingot_fiber_start) INGOT_ASM_SYM(ingot_fiber_start) ":\n"
        "  movq %r12, %rdi\n"
        "  callq *%r13\n"
        "  ud2\n" INGOT_ASM_END(ingot_fiber_start) INGOT_ASM_FINISH);
#elif defined(__aarch64__)
// AAPCS64: callee-saved x19-x28, x29 (fp), x30 (lr), d8-d15.
__asm__(INGOT_ASM_BEGIN
        ".p2align 4\n" INGOT_ASM_DECL(ingot_fiber_switch) INGOT_ASM_SYM(ingot_fiber_switch) ":\n"
        "  sub sp, sp, #160\n"
        "  stp x19, x20, [sp, #0]\n"
        "  stp x21, x22, [sp, #16]\n"
        "  stp x23, x24, [sp, #32]\n"
        "  stp x25, x26, [sp, #48]\n"
        "  stp x27, x28, [sp, #64]\n"
        "  stp x29, x30, [sp, #80]\n"
        "  stp d8, d9, [sp, #96]\n"
        "  stp d10, d11, [sp, #112]\n"
        "  stp d12, d13, [sp, #128]\n"
        "  stp d14, d15, [sp, #144]\n"
        "  mov x9, sp\n"
        "  str x9, [x0]\n"
        "  mov sp, x1\n"
        "  ldp x19, x20, [sp, #0]\n"
        "  ldp x21, x22, [sp, #16]\n"
        "  ldp x23, x24, [sp, #32]\n"
        "  ldp x25, x26, [sp, #48]\n"
        "  ldp x27, x28, [sp, #64]\n"
        "  ldp x29, x30, [sp, #80]\n"
        "  ldp d8, d9, [sp, #96]\n"
        "  ldp d10, d11, [sp, #112]\n"
        "  ldp d12, d13, [sp, #128]\n"
        "  ldp d14, d15, [sp, #144]\n"
        "  add sp, sp, #160\n"
        "  ret\n" INGOT_ASM_END(ingot_fiber_switch)
        ".p2align 4\n" INGOT_ASM_DECL(ingot_fiber_start) INGOT_ASM_SYM(ingot_fiber_start) ":\n"
        "  mov x0, x19\n"
        "  blr x20\n"
        "  brk #1\n" INGOT_ASM_END(ingot_fiber_start) INGOT_ASM_FINISH);
#else
#error "ingot CPU runtime: fibers are implemented for x86-64 and aarch64 only"
#endif

namespace ingot {
namespace cpu {

enum class Mode { Loop, Fibers, WorkItems };

// Field names are the builtin role names (ABI.md).
struct thread_ids {
  uint32_t thread_position_in_grid[3];
  uint32_t thread_position_in_threadgroup[3];
  uint32_t threadgroup_position_in_grid[3];
  uint32_t threads_per_threadgroup[3];
  uint32_t threadgroups_per_grid[3];
  uint32_t threads_per_grid[3];
  uint32_t dispatch_threads_per_threadgroup[3];
  uint32_t thread_index_in_threadgroup;
  uint32_t thread_index_in_simdgroup;
  uint32_t simdgroup_index_in_threadgroup;
  uint32_t simdgroups_per_threadgroup;
  uint32_t threads_per_simdgroup;
  uint32_t thread_execution_width;
  uint32_t quadgroup_index_in_threadgroup;
  uint32_t thread_index_in_quadgroup;
};

// Result of a SIMD-group exchange: `active` has bit i set for each lane that took part,
// `self` is the caller's lane, v[i] the value lane i deposited (zero for inactive lanes).
template <class T>
struct lanes {
  uint32_t active;
  uint32_t self;
  T v[32];
};

namespace detail {

enum : uint8_t { F_READY = 0, F_BARRIER = 1, F_EXCHANGE = 2, F_DONE = 3 };
// cur: i + 1 while fiber i runs; 0 outside run_groups
enum : int { CUR_IDLE = 0, CUR_SCHED = -1, CUR_SOLO = -2, CUR_LOOP = -3, CUR_WI = -4 };

struct fiber {
  void* sp;
  const void* site;     // exchange call site
  uint32_t line;        // the call's source line (0: unknown); earlier lines resolve first
  const void* deposit;  // the value this lane contributes
  void* result;         // lanes<T>* to fill
  uint32_t tsize, voff;
  uint8_t state;
  thread_ids ids;
};

static const uint64_t kCanary = 0x1d6f07c4a5e3b2d1ull;
static const size_t kCanaryWords = 8;  // one cache line at the bottom of each stack

struct sched_state {
  fiber* fibers;
  uint32_t nfibers_cap;
  char* stacks;          // nfibers_cap stacks, `stride` bytes apart, lowest first
  size_t stacks_bytes;
  size_t stack_size;
  size_t stride;         // stack_size + an odd number of cache lines (no cache-set aliasing)
  void* main_sp;
  int cur;  // see CUR_*
  void* body;
  void (*invoke)(void*, const thread_ids&);
  char* tgmem;
  size_t tgmem_cap;
  uint32_t tgmem_off[8];
  int err;
  char msg[512];
  unsigned long long stop0;  // *stop_epoch when the running launch began
  // Mode::WorkItems: the thread running a deposit (1) or consume (2) pass, the group's size,
  // the deposits (wi_n lanes of wi_tsize bytes), the lanes that deposited, by SIMD-group, and
  // which SIMD-groups' inactive slots were zeroed already in this consume pass.
  uint32_t wi_lane, wi_phase, wi_n, wi_tsize;
  char* wi_dep;
  size_t wi_dep_cap;
  uint32_t wi_active[32];
  uint32_t wi_passive[32];  // lanes outside the branch that deposited a shuffle operand
  uint32_t wi_ready;
  char* arena;  // per-group scratch: masks and per-thread arrays
  size_t arena_cap, arena_used;
};

inline thread_local sched_state g_sched;

// The engine's stop counter (it grows on Ctrl-C and at interpreter exit), set once after the
// shared object is loaded (`ingot_cpu_set_stop_epoch`); checked-mode loops compare it with the
// value their launch began with (`ingot::chk_running`).
inline const volatile unsigned long long* stop_epoch = nullptr;

inline void set_error(const char* fmt, ...) {
  sched_state& s = g_sched;
  if (s.err) return;  // keep the first message
  s.err = 1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s.msg, sizeof s.msg, fmt, ap);
  va_end(ap);
}

inline size_t stack_size_bytes() {
  static size_t sz = [] {
    size_t kb = 128;
    if (const char* e = getenv("INGOT_CPU_STACK_KB")) {
      long v = atol(e);
      if (v >= 16 && v <= 65536) kb = (size_t)v;
    }
    return kb * 1024;
  }();
  return sz;
}

inline bool ensure_fibers(sched_state& s, uint32_t n) {
  if (n <= s.nfibers_cap) return true;
  uint32_t cap = 32;
  while (cap < n) cap *= 2;
  if (s.stacks) munmap(s.stacks, s.stacks_bytes);
  free(s.fibers);
  s.stacks = nullptr;
  s.nfibers_cap = 0;
  s.stack_size = stack_size_bytes();
  s.stride = s.stack_size + 17 * 64;
  size_t bytes = (size_t)cap * s.stride + 4096;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#ifdef MAP_NORESERVE
  flags |= MAP_NORESERVE;
#endif
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  s.fibers = (fiber*)calloc(cap, sizeof(fiber));
  if (p == MAP_FAILED || !s.fibers) {
    if (p != MAP_FAILED) munmap(p, bytes);
    free(s.fibers);
    s.fibers = nullptr;
    set_error("ingot cpu: cannot allocate %u fiber stacks of %zu bytes", cap, s.stack_size);
    return false;
  }
  mprotect(p, 4096, PROT_NONE);  // guard page below the lowest stack
  s.stacks = (char*)p;
  s.stacks_bytes = bytes;
  s.nfibers_cap = cap;
  return true;
}

inline void release_stacks(sched_state& s) {
  // Keep the mapping (fast next launch) but let the kernel reclaim the pages when it needs them.
#ifdef MADV_FREE
  if (s.stacks) madvise(s.stacks, s.stacks_bytes, MADV_FREE);
#endif
}

inline void fiber_main(void* arg) {
  sched_state& s = g_sched;
  fiber* f = (fiber*)arg;
  s.invoke(s.body, f->ids);
  f->state = F_DONE;
  ingot_fiber_switch(&f->sp, s.main_sp);
  __builtin_trap();
}

inline void init_fiber_stack(sched_state& s, uint32_t i) {
  fiber& f = s.fibers[i];
  char* lo = s.stacks + (size_t)i * s.stride;
  uint64_t* canary = (uint64_t*)(lo + (i == 0 ? 4096 : 0));
  for (size_t k = 0; k < kCanaryWords; ++k) canary[k] = kCanary;
  uintptr_t top = ((uintptr_t)(lo + s.stack_size) & ~(uintptr_t)15) - 16;
  uint64_t* a = (uint64_t*)top;
#if defined(__x86_64__)
  a[-1] = (uint64_t)(uintptr_t)&ingot_fiber_start;  // return address
  a[-2] = 0;                                          // rbp
  a[-3] = 0;                                          // rbx
  a[-4] = (uint64_t)(uintptr_t)&f;                    // r12: argument
  a[-5] = (uint64_t)(uintptr_t)&fiber_main;           // r13: function
  a[-6] = 0;                                          // r14
  a[-7] = 0;                                          // r15
  f.sp = (void*)(a - 7);
#elif defined(__aarch64__)
  uint64_t* b = a - 20;  // 160 bytes
  for (int k = 0; k < 20; ++k) b[k] = 0;
  b[0] = (uint64_t)(uintptr_t)&f;                    // x19: argument
  b[1] = (uint64_t)(uintptr_t)&fiber_main;           // x20: function
  b[11] = (uint64_t)(uintptr_t)&ingot_fiber_start;   // x30
  f.sp = (void*)b;
#endif
}

inline bool canary_ok(sched_state& s, uint32_t i) {
  const uint64_t* c = (const uint64_t*)(s.stacks + (size_t)i * s.stride + (i == 0 ? 4096 : 0));
  uint64_t bad = 0;
  for (size_t k = 0; k < kCanaryWords; ++k) bad |= c[k] ^ kCanary;
  return bad == 0;
}

// Switch from the running fiber back to the scheduler.
inline void yield_to_sched(sched_state& s) {
  fiber* f = &s.fibers[s.cur - 1];
  ingot_fiber_switch(&f->sp, s.main_sp);
}

// Complete every pending exchange; returns true when at least one was completed.
inline bool resolve_exchanges(sched_state& s, uint32_t n) {
  bool any = false;
  for (uint32_t base = 0; base < n; base += 32) {
    uint32_t end = base + 32 < n ? base + 32 : n;
    uint32_t pending = 0;
    for (uint32_t i = base; i < end; ++i)
      if (s.fibers[i].state == F_EXCHANGE) pending |= 1u << (i - base);
    // Only the exchanges at the earliest source line complete this round: lanes that are at a
    // later call wait for the others to get there (they reconverge, as on Apple's GPUs).
    uint32_t low = 0xffffffffu;
    for (uint32_t m = pending; m; m &= m - 1) {
      uint32_t l = s.fibers[base + (uint32_t)__builtin_ctz(m)].line;
      if (l < low) low = l;
    }
    for (uint32_t m = pending; m; m &= m - 1) {
      uint32_t i = base + (uint32_t)__builtin_ctz(m);
      if (s.fibers[i].line != low) pending &= ~(1u << (i - base));
    }
    while (pending) {
      uint32_t first = base + (uint32_t)__builtin_ctz(pending);
      const void* site = s.fibers[first].site;
      uint32_t mask = 0;
      for (uint32_t m = pending; m; m &= m - 1) {
        uint32_t i = base + (uint32_t)__builtin_ctz(m);
        if (s.fibers[i].site == site) mask |= 1u << (i - base);
      }
      pending &= ~mask;
      fiber& f0 = s.fibers[first];
      uint32_t tsize = f0.tsize, voff = f0.voff;
      char* r0 = (char*)f0.result;
      memset(r0 + voff, 0, (size_t)tsize * 32);
      for (uint32_t m = mask; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        memcpy(r0 + voff + (size_t)l * tsize, s.fibers[base + l].deposit, tsize);
      }
      memcpy(r0, &mask, 4);
      size_t total = voff + (size_t)tsize * 32;
      for (uint32_t m = mask; m; m &= m - 1) {
        uint32_t l = (uint32_t)__builtin_ctz(m);
        fiber& f = s.fibers[base + l];
        if (&f != &f0) memcpy(f.result, r0, total);
        memcpy((char*)f.result + 4, &l, 4);
        f.state = F_READY;
      }
      any = true;
    }
  }
  return any;
}

#if defined(INGOT_CHECKED)
// Checked mode: the threads waiting at a barrier must all wait at the same one.
inline bool barrier_sites_agree(sched_state& s, uint32_t n) {
  int first = -1;
  for (uint32_t i = 0; i < n; ++i) {
    const fiber& f = s.fibers[i];
    if (f.state != F_BARRIER) continue;
    if (first < 0) {
      first = (int)i;
    } else if (f.line != s.fibers[first].line) {
      const uint32_t* g = f.ids.threadgroup_position_in_grid;
      set_error(
          "checked mode: threads %u and %u of threadgroup (%u, %u, %u) reached different "
          "barriers (a barrier in divergent control flow)",
          (unsigned)first, i, g[0], g[1], g[2]);
      return false;
    }
  }
  return true;
}

// A barrier is named by its source line (the optimiser may copy one call into several paths).
inline void barrier_at_site(uint32_t line) {
  sched_state& s = g_sched;
  fiber& f = s.fibers[s.cur - 1];
  f.line = line;
  f.state = F_BARRIER;
  yield_to_sched(s);
}
#endif

inline void run_fiber_group(sched_state& s, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    s.fibers[i].state = F_READY;
    init_fiber_stack(s, i);
  }
  for (;;) {
    uint32_t done = 0, at_barrier = 0;
    for (uint32_t i = 0; i < n; ++i) {
      fiber& f = s.fibers[i];
      if (f.state == F_READY) {
        s.cur = (int)i + 1;
        ingot_fiber_switch(&s.main_sp, f.sp);
        s.cur = CUR_SCHED;
        if (!canary_ok(s, i)) {
          set_error(
              "ingot cpu: thread %u of a threadgroup overflowed its %zu-byte fiber stack "
              "(set INGOT_CPU_STACK_KB)",
              i, s.stack_size);
          return;
        }
        if (s.err) return;
      }
      if (f.state == F_DONE) ++done;
      else if (f.state == F_BARRIER) ++at_barrier;
    }
    if (done == n) return;
    // Every live fiber is blocked now. SIMD-group exchanges complete first (they only need
    // their SIMD-group to be blocked); then a barrier where every live thread waits releases.
    if (resolve_exchanges(s, n)) continue;
#if defined(INGOT_CHECKED)
    if (at_barrier + done == n && !barrier_sites_agree(s, n)) return;
#endif
    if (at_barrier + done == n) {
      for (uint32_t i = 0; i < n; ++i)
        if (s.fibers[i].state == F_BARRIER) s.fibers[i].state = F_READY;
      continue;
    }
    set_error("ingot cpu: threadgroup deadlock (internal error)");
    return;
  }
}

inline void wi_deposit(sched_state& s, const void* v, uint32_t tsize) {
  if (s.wi_tsize == 0) {
    size_t need = (size_t)((s.wi_n + 31) & ~31u) * tsize;
    if (need > s.wi_dep_cap) {
      free(s.wi_dep);
      s.wi_dep = (char*)aligned_alloc(64, (need + 63) & ~(size_t)63);
      s.wi_dep_cap = s.wi_dep ? need : 0;
      if (!s.wi_dep) {
        set_error("ingot cpu: cannot allocate %zu bytes for a SIMD-group exchange", need);
        return;
      }
    }
    s.wi_tsize = tsize;
  }
  if (tsize != s.wi_tsize || s.wi_lane >= s.wi_n) {
    set_error("ingot cpu: inconsistent SIMD-group exchange (internal error)");
    return;
  }
  memcpy(s.wi_dep + (size_t)s.wi_lane * tsize, v, tsize);
  if (s.wi_phase == 1)
    s.wi_active[s.wi_lane >> 5] |= 1u << (s.wi_lane & 31);
  else
    s.wi_passive[s.wi_lane >> 5] |= 1u << (s.wi_lane & 31);
}

inline void wi_consume(sched_state& s, void* out, uint32_t tsize, uint32_t voff) {
  uint32_t lane = s.wi_lane, sg = lane >> 5, me = lane & 31;
  if (tsize != s.wi_tsize || !s.wi_dep) {
    set_error("ingot cpu: a SIMD-group function read lanes that did not take part (internal error)");
    memset(out, 0, voff + (size_t)tsize * 32);
    return;
  }
  char* base = s.wi_dep + (size_t)sg * 32 * tsize;
  uint32_t act = s.wi_active[sg], seen = act | s.wi_passive[sg];
  if (!(s.wi_ready & (1u << sg))) {
    // Lanes that did not deposit read as zero (as in the fiber engine).
    for (uint32_t k = 0; k < 32; ++k)
      if (!((seen >> k) & 1u)) memset(base + (size_t)k * tsize, 0, tsize);
    s.wi_ready |= 1u << sg;
  }
  memcpy(out, &act, 4);
  memcpy((char*)out + 4, &me, 4);
  memcpy((char*)out + voff, base, (size_t)tsize * 32);
}

__attribute__((noinline)) inline void exchange_core(const void* v, void* out, uint32_t tsize,
                                                    uint32_t voff, uint32_t line) {
  const void* site = __builtin_return_address(0);
  sched_state& s = g_sched;
  if (s.cur > 0) {
    fiber& f = s.fibers[s.cur - 1];
    f.site = site;
    f.line = line;
    f.deposit = v;
    f.result = out;
    f.tsize = tsize;
    f.voff = voff;
    f.state = F_EXCHANGE;
    yield_to_sched(s);
    return;
  }
  if (s.cur == CUR_WI && (s.wi_phase == 1 || s.wi_phase == 3)) {
    wi_deposit(s, v, tsize);
    // The deposit pass's result is discarded: the lane alone.
    memset((char*)out + voff, 0, (size_t)tsize * 32);
    memcpy((char*)out + voff + (size_t)(s.wi_lane & 31) * tsize, v, tsize);
    uint32_t me = s.wi_lane & 31, bit = 1u << me;
    memcpy(out, &bit, 4);
    memcpy((char*)out + 4, &me, 4);
    return;
  }
  if (s.cur == CUR_WI && s.wi_phase == 2) {
    wi_consume(s, out, tsize, voff);
    return;
  }
  if (s.cur == CUR_WI)
    set_error(
        "ingot cpu: a SIMD-group function the work-item loop former did not see (internal "
        "error; INGOT_CPU_ENGINE=fibers runs the kernel with fibers)");
  else if (s.cur != CUR_SOLO)
    set_error("ingot cpu: a SIMD-group function ran in a kernel scheduled without fibers");
  // A single thread: it is the whole SIMD-group.
  memset((char*)out + voff, 0, (size_t)tsize * 32);
  memcpy((char*)out + voff, v, tsize);
  uint32_t one = 1, zero = 0;
  memcpy(out, &one, 4);
  memcpy((char*)out + 4, &zero, 4);
}

}  // namespace detail

// threadgroup_barrier / simdgroup_barrier
__attribute__((always_inline)) inline void barrier(uint32_t line = 0) {
  detail::sched_state& s = detail::g_sched;
  if (s.cur > 0) {
#if defined(INGOT_CHECKED)
    detail::barrier_at_site(line);
    return;
#endif
    (void)line;
    s.fibers[s.cur - 1].state = detail::F_BARRIER;
    detail::yield_to_sched(s);
    return;
  }
  if (s.cur == detail::CUR_WI)
    detail::set_error(
        "ingot cpu: a barrier the work-item loop former did not see (internal error; "
        "INGOT_CPU_ENGINE=fibers runs the kernel with fibers)");
  else if (s.cur != detail::CUR_SOLO)
    detail::set_error("ingot cpu: threadgroup_barrier in a kernel scheduled without fibers");
}

// Every active lane of the caller's SIMD-group deposits `v`; the lanes blocked at this same
// call site form the active set. always_inline so that each call site of a wrapper that is
// itself always_inline gets its own return address inside exchange_core.
template <class T>
__attribute__((always_inline)) inline lanes<T> simd_exchange(const T& v, uint32_t line = 0) {
  static_assert(std::is_trivially_copyable<T>::value, "simd_exchange needs a trivially copyable type");
  lanes<T> r;
  detail::exchange_core(&v, &r, (uint32_t)sizeof(T), (uint32_t)offsetof(lanes<T>, v), line);
  return r;
}

// The calling thread's lane in its SIMD-group (0 outside a fiber).
inline uint32_t simd_lane() {
  detail::sched_state& s = detail::g_sched;
  if (s.cur == detail::CUR_WI) return s.wi_lane & 31u;
  return s.cur > 0 ? s.fibers[s.cur - 1].ids.thread_index_in_simdgroup : 0u;
}

// Static threadgroup variable number ID: one storage per group in flight (per OS thread).
template <class T, int ID>
inline T& tg_var() {
  alignas(alignof(T) > 16 ? alignof(T) : 16) static thread_local unsigned char storage[sizeof(T)];
  return *reinterpret_cast<T*>(storage);
}

// Dynamic threadgroup memory [[threadgroup(n)]] of the group being run.
inline void* tgmem(uint32_t n) {
  detail::sched_state& s = detail::g_sched;
  return s.tgmem + s.tgmem_off[n & 7];
}

namespace detail {
// Thread (x, y, z) of the group at grid origin `o`, linear index `lin`.
__attribute__((always_inline)) inline void place(thread_ids& u, const uint32_t* o, uint32_t x,
                                                 uint32_t y, uint32_t z, uint32_t lin) {
  u.thread_position_in_grid[0] = o[0] + x;
  u.thread_position_in_grid[1] = o[1] + y;
  u.thread_position_in_grid[2] = o[2] + z;
  u.thread_position_in_threadgroup[0] = x;
  u.thread_position_in_threadgroup[1] = y;
  u.thread_position_in_threadgroup[2] = z;
  u.thread_index_in_threadgroup = lin;
  u.thread_index_in_simdgroup = lin & 31;
  u.simdgroup_index_in_threadgroup = lin >> 5;
  u.thread_index_in_quadgroup = lin & 3;
  u.quadgroup_index_in_threadgroup = lin >> 2;
}
}  // namespace detail

// The group a Mode::WorkItems group function runs: its threads, their ids, scratch memory
// (reset for every group) and the SIMD-group exchange's passes.
struct wi_group {
  uint32_t n;
  uint32_t b[3], o[3];
  thread_ids base;

  // Thread i's ids (i = thread_index_in_threadgroup).
  __attribute__((always_inline)) thread_ids ids(uint32_t i) const {
    thread_ids u = base;
    uint32_t x = i, y = 0, z = 0;
    if (b[1] * b[2] != 1) {
      x = i % b[0];
      y = (i / b[0]) % b[1];
      z = i / (b[0] * b[1]);
    }
    detail::place(u, o, x, y, z, i);
    return u;
  }

  // Scratch for `count` objects of T (64-byte aligned), valid until the group ends.
  template <class T>
  T* alloc(size_t count = 0) const {
    detail::sched_state& s = detail::g_sched;
    size_t bytes = (sizeof(T) * (count ? count : n) + 63) & ~(size_t)63;
    if (s.arena_used + bytes > s.arena_cap) {
      detail::set_error(
          "ingot cpu: a work-item loop kernel needs more than %zu bytes of per-thread scratch "
          "(internal error)", s.arena_cap);
      static thread_local unsigned char junk[1 << 16] __attribute__((aligned(64)));
      return (T*)junk;
    }
    T* p = (T*)(s.arena + s.arena_used);
    s.arena_used += bytes;
    return p;
  }
  uint8_t* mask() const { return alloc<uint8_t>(); }

  // Makes room for `count` allocations of n elements of `per_thread` bytes in all (called
  // first, before any allocation of the group).
  bool reserve(size_t per_thread, uint32_t count) const {
    detail::sched_state& s = detail::g_sched;
    size_t need = per_thread * n + (size_t)count * 64 + 64;
    if (need > s.arena_cap) {
      free(s.arena);
      s.arena = (char*)aligned_alloc(64, (need + 63) & ~(size_t)63);
      s.arena_cap = s.arena ? need : 0;
      if (!s.arena) {
        detail::set_error("ingot cpu: cannot allocate %zu bytes of per-thread scratch", need);
        return false;
      }
    }
    s.arena_used = 0;
    return true;
  }

  void deposit_begin() const {
    detail::sched_state& s = detail::g_sched;
    s.wi_tsize = 0;
    for (int k = 0; k < 32; ++k) s.wi_active[k] = s.wi_passive[k] = 0;
  }
  void consume_begin() const { detail::g_sched.wi_ready = 0; }
  // Thread i runs a deposit (1), consume (2) or passive deposit (3: a lane outside the branch
  // offering its operand to shuffles) pass of a SIMD-group function; 0: neither.
  __attribute__((always_inline)) void at(uint32_t i, uint32_t phase) const {
    detail::sched_state& s = detail::g_sched;
    s.wi_lane = i;
    s.wi_phase = phase;
  }
};

template <Mode M, class F>
inline int run_groups(const ingot::launch* L, uint32_t group_begin, uint32_t group_end, F&& body) {
  using B = typename std::remove_reference<F>::type;
  detail::sched_state& s = detail::g_sched;
  s.err = 0;
  s.msg[0] = 0;
  s.stop0 = detail::stop_epoch ? *detail::stop_epoch : 0ull;

  // dynamic threadgroup memory: each [[threadgroup(n)]] 16-byte aligned
  size_t total = 0;
  for (int i = 0; i < 8; ++i) {
    s.tgmem_off[i] = (uint32_t)total;
    total += ((size_t)L->tgmem_size[i] + 15) & ~(size_t)15;
  }
  if (total > s.tgmem_cap) {
    free(s.tgmem);
    s.tgmem = (char*)aligned_alloc(64, (total + 63) & ~(size_t)63);
    s.tgmem_cap = s.tgmem ? total : 0;
    if (!s.tgmem) {
      detail::set_error("ingot cpu: cannot allocate %zu bytes of threadgroup memory", total);
      return 1;
    }
  }

  const uint32_t G0 = L->groups[0], G1 = L->groups[1];
  thread_ids t;
  for (int d = 0; d < 3; ++d) {
    t.threadgroups_per_grid[d] = L->groups[d];
    t.threads_per_grid[d] = L->grid[d];
    t.dispatch_threads_per_threadgroup[d] = L->tg[d];
  }
  t.threads_per_simdgroup = 32;
  t.thread_execution_width = 32;

  int saved_cur = s.cur;
  bool used_fibers = false;
  for (uint32_t g = group_begin; g < group_end; ++g) {
    uint32_t gc[3] = {g % G0, (g / G0) % G1, g / (G0 * G1)};
    uint32_t b[3], o[3];
    for (int d = 0; d < 3; ++d) {
      t.threadgroup_position_in_grid[d] = gc[d];
      o[d] = gc[d] * L->tg[d];
      uint32_t rem = L->grid[d] > o[d] ? L->grid[d] - o[d] : 0;
      b[d] = rem < L->tg[d] ? rem : L->tg[d];
      t.threads_per_threadgroup[d] = b[d];
    }
    const uint32_t n = b[0] * b[1] * b[2];
    if (n == 0) continue;
    t.simdgroups_per_threadgroup = (n + 31) / 32;

    if constexpr (M == Mode::Loop) {
      s.cur = detail::CUR_LOOP;
      for (uint32_t z = 0; z < b[2]; ++z) {
        for (uint32_t y = 0; y < b[1]; ++y) {
          // The innermost induction variable is the grid position itself, compared with `<`,
          // so the compiler sees that `uint` indices do not wrap and vectorises the body.
          const uint32_t row = (z * b[1] + y) * b[0] - o[0];
          const uint32_t x0 = o[0], x1 = o[0] + b[0];
          for (uint32_t gx = x0; gx < x1; ++gx) {
            thread_ids u = t;
            const uint32_t x = gx - x0;
            u.thread_position_in_grid[0] = gx;
            u.thread_position_in_grid[1] = o[1] + y;
            u.thread_position_in_grid[2] = o[2] + z;
            u.thread_position_in_threadgroup[0] = x;
            u.thread_position_in_threadgroup[1] = y;
            u.thread_position_in_threadgroup[2] = z;
            const uint32_t lin = row + gx;
            u.thread_index_in_threadgroup = lin;
            u.thread_index_in_simdgroup = lin & 31;
            u.simdgroup_index_in_threadgroup = lin >> 5;
            u.thread_index_in_quadgroup = lin & 3;
            u.quadgroup_index_in_threadgroup = lin >> 2;
            body(u);
          }
        }
      }
      if (s.err) break;
      continue;
    }

    if constexpr (M == Mode::WorkItems) {
      s.arena_used = 0;
      s.cur = detail::CUR_WI;
      s.wi_n = n;
      s.wi_phase = 0;
      wi_group g;
      g.n = n;
      for (int d = 0; d < 3; ++d) {
        g.b[d] = b[d];
        g.o[d] = o[d];
      }
      g.base = t;
      thread_ids u = g.ids(0);
      body(u, g);
      if (s.err) break;
      continue;
    }

    if constexpr (M != Mode::WorkItems) {
      if (n == 1) {  // one thread: no fiber needed, barriers are no-ops
        s.cur = detail::CUR_SOLO;
        thread_ids u = t;
        for (int d = 0; d < 3; ++d) {
          u.thread_position_in_grid[d] = o[d];
          u.thread_position_in_threadgroup[d] = 0;
        }
        u.thread_index_in_threadgroup = u.thread_index_in_simdgroup = 0;
        u.simdgroup_index_in_threadgroup = 0;
        u.thread_index_in_quadgroup = u.quadgroup_index_in_threadgroup = 0;
        body(u);
        if (s.err) break;
        continue;
      }

      if (!detail::ensure_fibers(s, n)) break;
      used_fibers = true;
      s.body = (void*)&body;
      s.invoke = [](void* p, const thread_ids& ids) { (*(B*)p)(ids); };
      for (uint32_t z = 0, lin = 0; z < b[2]; ++z)
        for (uint32_t y = 0; y < b[1]; ++y)
          for (uint32_t x = 0; x < b[0]; ++x, ++lin) {
            thread_ids& u = s.fibers[lin].ids;
            u = t;
            detail::place(u, o, x, y, z, lin);
          }
      s.cur = detail::CUR_SCHED;
      detail::run_fiber_group(s, n);
      if (s.err) break;
    }
  }
  s.cur = saved_cur;
  if (used_fibers) detail::release_stacks(s);
  return s.err ? 1 : 0;
}

}  // namespace cpu
}  // namespace ingot

extern "C" __attribute__((weak)) INGOT_EXPORT const char* ingot_cpu_last_error() {
  return ingot::cpu::detail::g_sched.msg;
}

extern "C" __attribute__((weak)) INGOT_EXPORT void ingot_cpu_set_stop_epoch(
    const volatile unsigned long long* p) {
  ingot::cpu::detail::stop_epoch = p;
}

#endif
