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

// One SIMD-group exchange of a work-item loop statement: wi_n lanes of `tsize` bytes, the lanes
// that deposited (by SIMD-group), lanes outside the branch that deposited a shuffle operand,
// the SIMD-groups whose inactive slots are zeroed already, and the source line each
// SIMD-group's deposits came from (lanes of one SIMD-group at different lines diverged).
struct wi_slot {
  uint32_t tsize;
  char* dep;
  size_t cap;
  uint32_t active[32];
  uint32_t passive[32];
  uint32_t line[32];
  uint32_t ready;
  // A reduction's result, by SIMD-group, once its first lane computed it in the consume pass
  // (every lane of the SIMD-group gets the same value): `memo` has bit g set, memo_op[g] is
  // the function, memo_val[g] the value.
  uint32_t memo;
  const void* memo_op[32];
  alignas(16) unsigned char memo_val[32][16];
};

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
  // Mode::WorkItems: the thread running a deposit (1), consume (2) or passive deposit (3) pass,
  // the group's size, and the exchanges of the statement being run. A statement makes one
  // exchange per SIMD-group function it reaches (a helper may reach several): the k-th call a
  // lane makes uses slot k. Deposit pass p fills slot p (calls before it read their slots,
  // calls after it return the lane's own value); the consume pass reads every slot.
  uint32_t wi_lane, wi_phase, wi_n;
  uint32_t wi_k;         // calls the running lane has made in this pass
  uint32_t wi_pass;      // the slot this deposit pass fills
  uint32_t wi_nslots;    // slots filled for the statement
  uint32_t wi_deposited; // a lane deposited in this pass
  uint32_t wi_more;      // a lane made a call after its deposit in this pass (another follows)
  wi_slot* wi_slots;
  uint32_t wi_slots_cap;
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

// Slot k of the statement, made empty (its buffer kept); false when out of memory.
inline bool wi_slot_reset(sched_state& s, uint32_t k) {
  if (k >= 4096) {
    set_error("ingot cpu: a statement makes more than 4096 SIMD-group exchanges (INGOT_CPU_ENGINE=fibers runs it)");
    return false;
  }
  if (k >= s.wi_slots_cap) {
    uint32_t cap = s.wi_slots_cap ? s.wi_slots_cap * 2 : 8;
    while (cap <= k) cap *= 2;
    wi_slot* ns = (wi_slot*)calloc(cap, sizeof(wi_slot));
    if (!ns) {
      set_error("ingot cpu: cannot allocate SIMD-group exchange slots");
      return false;
    }
    if (s.wi_slots) {
      memcpy(ns, s.wi_slots, sizeof(wi_slot) * s.wi_slots_cap);
      free(s.wi_slots);
    }
    s.wi_slots = ns;
    s.wi_slots_cap = cap;
  }
  wi_slot& w = s.wi_slots[k];
  w.tsize = 0;
  w.ready = 0;
  w.memo = 0;
  for (int g = 0; g < 32; ++g) w.active[g] = w.passive[g] = w.line[g] = 0;
  return true;
}

inline void wi_deposit(sched_state& s, wi_slot& w, const void* v, uint32_t tsize, uint32_t line) {
  if (w.tsize == 0) {
    size_t need = (size_t)((s.wi_n + 31) & ~31u) * tsize;
    if (need > w.cap) {
      free(w.dep);
      w.dep = (char*)aligned_alloc(64, (need + 63) & ~(size_t)63);
      w.cap = w.dep ? need : 0;
      if (!w.dep) {
        set_error("ingot cpu: cannot allocate %zu bytes for a SIMD-group exchange", need);
        return;
      }
    }
    w.tsize = tsize;
  }
  uint32_t sg = s.wi_lane >> 5;
  if (tsize != w.tsize || s.wi_lane >= s.wi_n) {
    set_error(
        "ingot cpu: lanes of one SIMD-group reached different SIMD-group functions in one "
        "statement (divergent calls inside a helper; INGOT_CPU_ENGINE=fibers runs the kernel)");
    return;
  }
  if (line) {
    if (w.line[sg] == 0)
      w.line[sg] = line;
    else if (w.line[sg] != line) {
      set_error(
          "ingot cpu: lanes of one SIMD-group reached SIMD-group functions at lines %u and %u "
          "in one exchange (divergent calls inside a helper; INGOT_CPU_ENGINE=fibers runs the "
          "kernel)", w.line[sg], line);
      return;
    }
  }
  memcpy(w.dep + (size_t)s.wi_lane * tsize, v, tsize);
  if (s.wi_phase == 1)
    w.active[sg] |= 1u << (s.wi_lane & 31);
  else
    w.passive[sg] |= 1u << (s.wi_lane & 31);
}

inline void wi_consume(sched_state& s, wi_slot& w, void* out, uint32_t tsize, uint32_t voff) {
  uint32_t lane = s.wi_lane, sg = lane >> 5, me = lane & 31;
  if (tsize != w.tsize || !w.dep) {
    set_error("ingot cpu: a SIMD-group function read lanes that did not take part (internal error)");
    memset(out, 0, voff + (size_t)tsize * 32);
    return;
  }
  char* base = w.dep + (size_t)sg * 32 * tsize;
  uint32_t act = w.active[sg], seen = act | w.passive[sg];
  if (!(w.ready & (1u << sg))) {
    // Lanes that did not deposit read as zero (as in the fiber engine).
    for (uint32_t k = 0; k < 32; ++k)
      if (!((seen >> k) & 1u)) memset(base + (size_t)k * tsize, 0, tsize);
    w.ready |= 1u << sg;
  }
  memcpy(out, &act, 4);
  memcpy((char*)out + 4, &me, 4);
  memcpy((char*)out + voff, base, (size_t)tsize * 32);
}

// The lane alone (the result of a call in a deposit pass, discarded).
inline void wi_alone(sched_state& s, const void* v, void* out, uint32_t tsize, uint32_t voff) {
  memset((char*)out + voff, 0, (size_t)tsize * 32);
  memcpy((char*)out + voff + (size_t)(s.wi_lane & 31) * tsize, v, tsize);
  uint32_t me = s.wi_lane & 31, bit = 1u << me;
  memcpy(out, &bit, 4);
  memcpy((char*)out + 4, &me, 4);
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
  if (s.cur == CUR_WI && s.wi_phase != 0) {
    uint32_t k = s.wi_k++;
    if (s.wi_phase == 2) {
      if (k >= s.wi_nslots) {
        set_error("ingot cpu: a SIMD-group function the deposit passes did not reach (internal error)");
        memset(out, 0, voff + (size_t)tsize * 32);
        return;
      }
      wi_consume(s, s.wi_slots[k], out, tsize, voff);
      return;
    }
    if (k < s.wi_pass) {
      wi_consume(s, s.wi_slots[k], out, tsize, voff);
      return;
    }
    if (k == s.wi_pass) {
      wi_deposit(s, s.wi_slots[k], v, tsize, line);
      s.wi_deposited = 1;
    } else {
      s.wi_more = 1;
    }
    wi_alone(s, v, out, tsize, voff);
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

// Mode::WorkItems, consume pass: a SIMD-group reduction whose value every lane shares takes it
// from the first lane of its SIMD-group that computed it (`op` names the function), instead of
// reading the 32 deposits again. wi_memo_get returns true with the value in `out` (the
// exchange counted), wi_memo_put records the value after the exchange.
template <class T>
__attribute__((always_inline)) inline bool wi_memo_get(T& out, const void* op) {
  detail::sched_state& s = detail::g_sched;
  if (sizeof(T) > 16 || s.cur != detail::CUR_WI || s.wi_phase != 2 || s.wi_k >= s.wi_nslots)
    return false;
  detail::wi_slot& w = s.wi_slots[s.wi_k];
  uint32_t sg = s.wi_lane >> 5;
  if (!((w.memo >> sg) & 1u) || w.memo_op[sg] != op) return false;
  memcpy(&out, w.memo_val[sg], sizeof(T));
  s.wi_k += 1;
  return true;
}
template <class T>
__attribute__((always_inline)) inline void wi_memo_put(const T& v, const void* op) {
  detail::sched_state& s = detail::g_sched;
  if (sizeof(T) > 16 || s.cur != detail::CUR_WI || s.wi_phase != 2 || s.wi_k == 0) return;
  detail::wi_slot& w = s.wi_slots[s.wi_k - 1];
  uint32_t sg = s.wi_lane >> 5;
  w.memo |= 1u << sg;
  w.memo_op[sg] = op;
  memcpy(w.memo_val[sg], &v, sizeof(T) > 16 ? 16 : sizeof(T));
}

// Mode::WorkItems, deposit pass: the call's exchange handled without building the 32-lane
// result (a deposit pass's result is discarded; the caller returns its own operand). True
// when handled; false when the call must read an earlier slot (a replayed helper's later
// exchange) or outside a deposit pass.
template <class T>
__attribute__((always_inline)) inline bool wi_deposit_only(const T& v, uint32_t line) {
  detail::sched_state& s = detail::g_sched;
  if (s.cur != detail::CUR_WI || (s.wi_phase != 1 && s.wi_phase != 3)) return false;
  uint32_t k = s.wi_k;
  if (k < s.wi_pass) return false;
  s.wi_k = k + 1;
  if (k == s.wi_pass) {
    detail::wi_slot& w = s.wi_slots[k];
    uint32_t sg = s.wi_lane >> 5;
    if (w.tsize == sizeof(T) && s.wi_lane < s.wi_n && (line == 0 || w.line[sg] == line)) {
      memcpy(w.dep + (size_t)s.wi_lane * sizeof(T), &v, sizeof(T));
      if (s.wi_phase == 1)
        w.active[sg] |= 1u << (s.wi_lane & 31);
      else
        w.passive[sg] |= 1u << (s.wi_lane & 31);
    } else {
      detail::wi_deposit(s, w, &v, (uint32_t)sizeof(T), line);
    }
    s.wi_deposited = 1;
  } else {
    s.wi_more = 1;
  }
  return true;
}

// Mode::WorkItems, consume pass: the deposit of lane `src` of the caller's SIMD-group (zero when
// that lane did not deposit), read directly instead of copying the 32 deposits; `self` gets
// the caller's lane. False outside a consume pass (the caller then exchanges as usual).
template <class T>
__attribute__((always_inline)) inline bool wi_peek(unsigned int src, T& out, unsigned int& self) {
  detail::sched_state& s = detail::g_sched;
  if (s.cur != detail::CUR_WI || s.wi_phase != 2 || s.wi_k >= s.wi_nslots) return false;
  detail::wi_slot& w = s.wi_slots[s.wi_k];
  if (w.tsize != sizeof(T) || !w.dep) return false;
  uint32_t sg = s.wi_lane >> 5;
  self = s.wi_lane & 31u;
  s.wi_k += 1;
  src &= 31u;
  if (!(((w.active[sg] | w.passive[sg]) >> src) & 1u)) {
    memset(&out, 0, sizeof(T));
    return true;
  }
  memcpy(&out, w.dep + ((size_t)sg * 32 + src) * sizeof(T), sizeof(T));
  return true;
}
// The caller's lane (Mode::WorkItems; any mode: see simd_lane).
__attribute__((always_inline)) inline unsigned int wi_self() {
  return detail::g_sched.wi_lane & 31u;
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

  // The first deposit pass of a statement (slot 0).
  void deposit_begin() const {
    detail::sched_state& s = detail::g_sched;
    s.wi_pass = 0;
    s.wi_nslots = 1;
    s.wi_deposited = 0;
    s.wi_more = 0;
    detail::wi_slot_reset(s, 0);
  }
  // After deposit pass p: true when a lane called a SIMD-group function after its deposit (a
  // helper makes more exchanges), so pass p + 1 follows; false when every exchange is filled.
  bool next_pass() const {
    detail::sched_state& s = detail::g_sched;
    if (!s.wi_more || s.err) {
      s.wi_nslots = s.wi_pass + (s.wi_deposited ? 1 : 0);
      return false;
    }
    s.wi_pass += 1;
    s.wi_nslots = s.wi_pass + 1;
    s.wi_deposited = 0;
    s.wi_more = 0;
    return detail::wi_slot_reset(s, s.wi_pass);
  }
  void consume_begin() const {
    detail::sched_state& s = detail::g_sched;
    for (uint32_t k = 0; k < s.wi_nslots; ++k) s.wi_slots[k].ready = s.wi_slots[k].memo = 0;
  }
  // Thread i runs a deposit (1), consume (2) or passive deposit (3: a lane outside the branch
  // offering its operand to shuffles) pass of a SIMD-group function; 0: neither.
  __attribute__((always_inline)) void at(uint32_t i, uint32_t phase) const {
    detail::sched_state& s = detail::g_sched;
    s.wi_lane = i;
    s.wi_phase = phase;
    s.wi_k = 0;
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
