// ingot checked mode: bounds-checked pointers for device / constant / threadgroup memory.
//
// In a checked translation (ingot-msl `Options::checked`), every pointer type with an address
// space (`device float*`, `constant Params*`, `threadgroup half*`) is written
// `ingot::chk<T>`: the pointer plus the buffer it came from (start, length in bytes), the
// parameter's index and the launch's fault record. Every access (`p[i]`, `*p`, `p->f`, a
// conversion to a raw pointer) checks that the whole element lies inside the buffer; a
// violation records the first fault (parameter, byte offset, element size, length, thread) in
// the record, which the engine reads after the launch, and the access goes to a scratch cell
// instead of memory it must not touch. Pointers made from raw addresses (`&x[i]` passed on, a
// thread pointer cast) are not checked beyond the access that formed them.
// See crates/ingot-msl/src/checked.rs and docs/design/checked-mode.md.
#pragma once
#ifndef INGOT_CHECKED_H
#define INGOT_CHECKED_H

namespace ingot {

// The fault record; its layout is shared with the engines (Rust `ChkRecord`).
struct chk_record {
  unsigned int state;       // 0 empty, 1 being written, 2 complete
  unsigned int param;       // the entry point's parameter index (declaration order)
  unsigned int size;        // bytes of the element accessed
  unsigned int kind;        // 1 out of bounds, 2 threads of a group at different barriers
  long long offset;         // byte offset of the access from the buffer's start
  unsigned long long length;  // the buffer's length in bytes
  unsigned int pos[3];      // CPU: thread_position_in_grid; CUDA: blockIdx.x, threadIdx.x, 0
  unsigned int count;       // violations seen (saturating)
};

#if defined(INGOT_TARGET_CUDA)
static __device__ __align__(64) unsigned char chk_junk[4096];

__device__ __noinline__ void* chk_fail(chk_record* r, unsigned int param, long long off,
                                       unsigned int size, unsigned long long len) {
  if (r) {
    if (atomicCAS(&r->state, 0u, 1u) == 0u) {
      r->param = param;
      r->size = size;
      r->kind = 1;
      r->offset = off;
      r->length = len;
      r->pos[0] = blockIdx.x;
      r->pos[1] = threadIdx.x;
      r->pos[2] = 0;
      __threadfence();
      atomicExch(&r->state, 2u);
    }
    if (r->count < 0x7fffffffu) atomicAdd(&r->count, 1u);
  }
  return chk_junk;
}
#else
inline thread_local const unsigned int* chk_pos;  // the running thread's position (Loop mode)

__attribute__((noinline)) inline void* chk_fail(chk_record* r, unsigned int param, long long off,
                                                unsigned int size, unsigned long long len) {
  alignas(64) static thread_local unsigned char junk[4096];
  if (r) {
    unsigned int expected = 0;
    if (__atomic_compare_exchange_n(&r->state, &expected, 1u, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
      r->param = param;
      r->size = size;
      r->kind = 1;
      r->offset = off;
      r->length = len;
      const cpu::detail::sched_state& s = cpu::detail::g_sched;
      const unsigned int* p =
          s.cur > 0 ? s.fibers[s.cur - 1].ids.thread_position_in_grid : chk_pos;
      for (int k = 0; k < 3; ++k) r->pos[k] = p ? p[k] : 0u;
      __atomic_store_n(&r->state, 2u, __ATOMIC_RELEASE);
    }
    __atomic_fetch_add(&r->count, 1u, __ATOMIC_RELAXED);
    // Stop the launch after this threadgroup.
    cpu::detail::set_error("checked mode: out-of-bounds access");
  }
  return junk;
}

// Whether the launch may go on: false once the engine's stop counter moved (Ctrl-C, exit).
// Checked loops test it on every iteration (crates/ingot-msl/src/loop_checks.rs); `true` in
// constant evaluation, so `constexpr` functions keep their loops.
constexpr bool chk_running() {
  if (__builtin_is_constant_evaluated()) return true;
  const volatile unsigned long long* e = cpu::detail::stop_epoch;
  return !e || *e == cpu::detail::g_sched.stop0;
}
#endif

template <bool B> struct chk_enable {};
template <> struct chk_enable<true> { typedef int type; };
template <class From, class To> struct chk_implicit {
  static char test(To);
  static long test(...);
  static const bool value = sizeof(test((From)nullptr)) == 1;
};

template <class T>
struct chk {
  T* p;
  const char* base;        // null: not checked (made from a raw address)
  unsigned long long len;  // bytes from base
  chk_record* rec;
  unsigned int param;

  INGOT_SITE_FN chk() : p(nullptr), base(nullptr), len(0), rec(nullptr), param(0) {}
  INGOT_SITE_FN chk(decltype(nullptr)) : p(nullptr), base(nullptr), len(0), rec(nullptr), param(0) {}
  INGOT_SITE_FN chk(T* q, const void* b, unsigned long long n, unsigned int prm, chk_record* r)
      : p(q), base((const char*)b), len(n), rec(r), param(prm) {}
  // From a raw address: not checked.
  INGOT_SITE_FN chk(T* q) : p(q), base(nullptr), len(0), rec(nullptr), param(0) {}
  template <class U, typename chk_enable<!chk_implicit<U*, T*>::value>::type = 0>
  INGOT_SITE_FN explicit chk(U* q) : p((T*)q), base(nullptr), len(0), rec(nullptr), param(0) {}
  // Between checked pointers: the bounds travel with the pointer (as a cast keeps the buffer).
  template <class U, typename chk_enable<chk_implicit<U*, T*>::value>::type = 0>
  INGOT_SITE_FN chk(const chk<U>& o) : p(o.p), base(o.base), len(o.len), rec(o.rec), param(o.param) {}
  template <class U, typename chk_enable<!chk_implicit<U*, T*>::value>::type = 0>
  INGOT_SITE_FN explicit chk(const chk<U>& o)
      : p((T*)o.p), base(o.base), len(o.len), rec(o.rec), param(o.param) {}

  // The address of element i, checked.
  INGOT_SITE_FN T* at(long long i) const {
    static_assert(sizeof(T) <= 4096, "checked mode: element types above 4096 bytes");
    T* q = (T*)((char*)p + i * (long long)sizeof(T));
    if (base) {
      long long off = (long long)((const char*)q - base);
      if (off < 0 || (unsigned long long)off + sizeof(T) > len)
        return (T*)chk_fail(rec, param, off, (unsigned int)sizeof(T), len);
    }
    return q;
  }

  template <class I> INGOT_SITE_FN T& operator[](I i) const { return *at((long long)i); }
  INGOT_SITE_FN T& operator*() const { return *at(0); }
  INGOT_SITE_FN T* operator->() const { return at(0); }
  // A raw pointer for a function that takes one: the first element is checked.
  INGOT_SITE_FN operator T*() const { return p ? at(0) : p; }
  INGOT_SITE_FN explicit operator bool() const { return p != nullptr; }

  template <class I> INGOT_SITE_FN chk operator+(I i) const {
    chk r = *this;
    r.p = (T*)((char*)p + (long long)i * (long long)sizeof(T));
    return r;
  }
  template <class I> INGOT_SITE_FN chk operator-(I i) const { return *this + (-(long long)i); }
  template <class U> INGOT_SITE_FN long long operator-(const chk<U>& o) const {
    return (long long)(p - o.p);
  }
  template <class I> INGOT_SITE_FN chk& operator+=(I i) { return *this = *this + i; }
  template <class I> INGOT_SITE_FN chk& operator-=(I i) { return *this = *this - i; }
  INGOT_SITE_FN chk& operator++() { return *this = *this + 1; }
  INGOT_SITE_FN chk& operator--() { return *this = *this - 1; }
  INGOT_SITE_FN chk operator++(int) { chk r = *this; *this = *this + 1; return r; }
  INGOT_SITE_FN chk operator--(int) { chk r = *this; *this = *this - 1; return r; }

  template <class U> INGOT_SITE_FN bool operator==(const chk<U>& o) const { return (const void*)p == (const void*)o.p; }
  template <class U> INGOT_SITE_FN bool operator!=(const chk<U>& o) const { return (const void*)p != (const void*)o.p; }
  template <class U> INGOT_SITE_FN bool operator<(const chk<U>& o) const { return (const void*)p < (const void*)o.p; }
  template <class U> INGOT_SITE_FN bool operator>(const chk<U>& o) const { return (const void*)p > (const void*)o.p; }
  template <class U> INGOT_SITE_FN bool operator<=(const chk<U>& o) const { return (const void*)p <= (const void*)o.p; }
  template <class U> INGOT_SITE_FN bool operator>=(const chk<U>& o) const { return (const void*)p >= (const void*)o.p; }
  INGOT_SITE_FN bool operator==(decltype(nullptr)) const { return p == nullptr; }
  INGOT_SITE_FN bool operator!=(decltype(nullptr)) const { return p != nullptr; }
};

template <class I, class T> INGOT_SITE_FN chk<T> operator+(I i, const chk<T>& c) { return c + i; }

// The wrapper's constructor of a parameter: the buffer's first element and its length.
template <class T>
INGOT_SITE_FN chk<T> chk_make(T* p, unsigned long long len, unsigned int param, chk_record* r) {
  return chk<T>(p, (const void*)p, len, param, r);
}

// reinterpret_cast / static_cast to a checked pointer type.
template <class To, class From> INGOT_SITE_FN To chk_cast(const From& f) { return (To)f; }

}  // namespace ingot

// Prelude functions that take a raw device pointer through a template parameter (deduction does
// not see the conversion): forwarders that check the first element and pass the address on.
namespace metal {
#define INGOT_CHK_FWD(name)                                                                   \
  template <class A, class... R>                                                              \
  INGOT_SITE_FN auto name(ingot::chk<A> p, R... r)->decltype(name(p.at(0), r...)) {           \
    return name(p.at(0), r...);                                                               \
  }
INGOT_CHK_FWD(atomic_load)
INGOT_CHK_FWD(atomic_load_explicit)
INGOT_CHK_FWD(atomic_store)
INGOT_CHK_FWD(atomic_store_explicit)
INGOT_CHK_FWD(atomic_exchange)
INGOT_CHK_FWD(atomic_exchange_explicit)
INGOT_CHK_FWD(atomic_compare_exchange_weak)
INGOT_CHK_FWD(atomic_compare_exchange_weak_explicit)
INGOT_CHK_FWD(atomic_compare_exchange_strong)
INGOT_CHK_FWD(atomic_compare_exchange_strong_explicit)
INGOT_CHK_FWD(atomic_fetch_add)
INGOT_CHK_FWD(atomic_fetch_add_explicit)
INGOT_CHK_FWD(atomic_fetch_sub)
INGOT_CHK_FWD(atomic_fetch_sub_explicit)
INGOT_CHK_FWD(atomic_fetch_and)
INGOT_CHK_FWD(atomic_fetch_and_explicit)
INGOT_CHK_FWD(atomic_fetch_or)
INGOT_CHK_FWD(atomic_fetch_or_explicit)
INGOT_CHK_FWD(atomic_fetch_xor)
INGOT_CHK_FWD(atomic_fetch_xor_explicit)
INGOT_CHK_FWD(atomic_fetch_min)
INGOT_CHK_FWD(atomic_fetch_min_explicit)
INGOT_CHK_FWD(atomic_fetch_max)
INGOT_CHK_FWD(atomic_fetch_max_explicit)
INGOT_CHK_FWD(atomic_min_explicit)
INGOT_CHK_FWD(atomic_max_explicit)
#undef INGOT_CHK_FWD
template <class M, class U, class... R>
INGOT_SITE_FN auto simdgroup_load(M& d, ingot::chk<U> s, R... r)
    -> decltype(simdgroup_load(d, s.at(0), r...)) {
  return simdgroup_load(d, s.at(0), r...);
}
template <class M, class U, class... R>
INGOT_SITE_FN auto simdgroup_store(const M& a, ingot::chk<U> s, R... r)
    -> decltype(simdgroup_store(a, s.at(0), r...)) {
  return simdgroup_store(a, s.at(0), r...);
}
}  // namespace metal

#endif
