// ingot prelude: atomics (device and threadgroup memory) and memory orders.
#pragma once

namespace metal {

enum memory_order {
  memory_order_relaxed = 0,
  memory_order_consume = 1,
  memory_order_acquire = 2,
  memory_order_release = 3,
  memory_order_acq_rel = 4,
  memory_order_seq_cst = 5
};
enum thread_scope { thread_scope_thread, thread_scope_simdgroup, thread_scope_threadgroup, thread_scope_device };

// atomic<T> has the size and alignment of T and is trivially default-constructible, so arrays of
// it can live in device buffers and `threadgroup` (shared) memory.
template <class T> struct atomic {
  T __value;
  typedef T value_type;
};
typedef atomic<int> atomic_int;
typedef atomic<unsigned int> atomic_uint;
typedef atomic<float> atomic_float;
typedef atomic<bool> atomic_bool;
typedef atomic<long> atomic_long;
typedef atomic<unsigned long> atomic_ulong;
static_assert(sizeof(atomic_uint) == 4 && sizeof(atomic_float) == 4, "atomic layout");

namespace detail {
#if defined(INGOT_TARGET_CPU)
INGOT_FN int cpu_order(memory_order o) {
  switch (o) {
    case memory_order_relaxed: return __ATOMIC_RELAXED;
    case memory_order_consume:
    case memory_order_acquire: return __ATOMIC_ACQUIRE;
    case memory_order_release: return __ATOMIC_RELEASE;
    case memory_order_acq_rel: return __ATOMIC_ACQ_REL;
    default: return __ATOMIC_SEQ_CST;
  }
}
template <class T> INGOT_FN T a_load(volatile T* p, memory_order o) {
  T r;
  __atomic_load((T*)p, &r, o == memory_order_relaxed ? __ATOMIC_RELAXED : __ATOMIC_SEQ_CST);
  return r;
}
template <class T> INGOT_FN void a_store(volatile T* p, T v, memory_order o) {
  __atomic_store((T*)p, &v, o == memory_order_relaxed ? __ATOMIC_RELAXED : __ATOMIC_SEQ_CST);
}
template <class T> INGOT_FN T a_exchange(volatile T* p, T v, memory_order o) {
  T r;
  __atomic_exchange((T*)p, &v, &r, cpu_order(o));
  return r;
}
template <class T> INGOT_FN bool a_cas(volatile T* p, T* expected, T desired, memory_order o) {
  return __atomic_compare_exchange((T*)p, expected, &desired, false, cpu_order(o), __ATOMIC_RELAXED);
}
#define INGOT_CPU_RMW(name, builtin)                                               \
  template <class T> INGOT_FN T a_##name(volatile T* p, T v, memory_order o) {     \
    if constexpr (ingot::tt::is_integral<T>::value) {                              \
      return builtin((T*)p, v, cpu_order(o));                                      \
    } else {                                                                       \
      return a_rmw_cas(p, v, o, [](T a, T b) { return a_##name##_op(a, b); });     \
    }                                                                              \
  }
template <class T, class F> INGOT_FN T a_rmw_cas(volatile T* p, T v, memory_order o, F f) {
  T old = a_load(p, memory_order_relaxed);
  while (!a_cas(p, &old, f(old, v), o)) {
  }
  return old;
}
template <class T> INGOT_FN T a_add_op(T a, T b) { return a + b; }
template <class T> INGOT_FN T a_sub_op(T a, T b) { return a - b; }
INGOT_CPU_RMW(add, __atomic_fetch_add)
INGOT_CPU_RMW(sub, __atomic_fetch_sub)
#undef INGOT_CPU_RMW
template <class T> INGOT_FN T a_and(volatile T* p, T v, memory_order o) { return __atomic_fetch_and((T*)p, v, cpu_order(o)); }
template <class T> INGOT_FN T a_or(volatile T* p, T v, memory_order o) { return __atomic_fetch_or((T*)p, v, cpu_order(o)); }
template <class T> INGOT_FN T a_xor(volatile T* p, T v, memory_order o) { return __atomic_fetch_xor((T*)p, v, cpu_order(o)); }
template <class T> INGOT_FN T a_min(volatile T* p, T v, memory_order o) {
  T old = a_load(p, memory_order_relaxed);
  while (!(v < old) ? false : !a_cas(p, &old, v, o)) {
  }
  return old;
}
template <class T> INGOT_FN T a_max(volatile T* p, T v, memory_order o) {
  T old = a_load(p, memory_order_relaxed);
  while (!(old < v) ? false : !a_cas(p, &old, v, o)) {
  }
  return old;
}
INGOT_FN void a_fence(memory_order o) {
  if (o != memory_order_relaxed) __atomic_thread_fence(cpu_order(o));
}
#else  // CUDA
template <class T> struct cuda_word {
  typedef typename ingot::tt::conditional<sizeof(T) == 8, unsigned long long,
                                          typename ingot::tt::conditional<sizeof(T) == 4, unsigned int, unsigned short>::type>::type type;
};
INGOT_FN void a_fence(memory_order o) {
  if (o != memory_order_relaxed) __threadfence();
}
template <class T> INGOT_FN T a_load(volatile T* p, memory_order o) {
  T r = *p;
  a_fence(o);
  return r;
}
template <class T> INGOT_FN void a_store(volatile T* p, T v, memory_order o) {
  a_fence(o);
  *p = v;
}
template <class T> INGOT_FN bool a_cas(volatile T* p, T* expected, T desired, memory_order o) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 2, "atomic of this size");
  typedef typename cuda_word<T>::type W;
  W e = bitcast<W>(*expected), d = bitcast<W>(desired);
  a_fence(o);
  W old = atomicCAS((W*)p, e, d);
  a_fence(o);
  if (old == e) return true;
  *expected = bitcast<T>(old);
  return false;
}
template <class T, class F> INGOT_FN T a_rmw_cas(volatile T* p, T v, memory_order o, F f) {
  T old = *p;
  while (!a_cas(p, &old, f(old, v), o)) {
  }
  return old;
}
template <class T> INGOT_FN T a_exchange(volatile T* p, T v, memory_order o) {
  typedef typename cuda_word<T>::type W;
  if constexpr (sizeof(T) == 2) {
    return a_rmw_cas(p, v, o, [](T, T b) { return b; });
  } else {
    a_fence(o);
    T r = bitcast<T>(atomicExch((W*)p, bitcast<W>(v)));
    a_fence(o);
    return r;
  }
}
// native add for int/unsigned/unsigned long long/float/double; the others through CAS
template <class T> INGOT_FN T a_add(volatile T* p, T v, memory_order o) {
  a_fence(o);
  T r;
  if constexpr (ingot::tt::is_same<T, float>::value || ingot::tt::is_same<T, double>::value ||
                ingot::tt::is_same<T, int>::value || ingot::tt::is_same<T, unsigned int>::value) {
    r = atomicAdd((T*)p, v);
  } else if constexpr (ingot::tt::is_integral<T>::value && sizeof(T) == 8) {
    r = (T)atomicAdd((unsigned long long*)p, (unsigned long long)v);
  } else {
    r = a_rmw_cas(p, v, memory_order_relaxed, [](T a, T b) { return T(a + b); });
  }
  a_fence(o);
  return r;
}
template <class T> INGOT_FN T a_sub(volatile T* p, T v, memory_order o) {
  if constexpr (ingot::tt::is_integral<T>::value) return a_add(p, T(0 - v), o);
  else return a_add(p, T(-v), o);
}
#define INGOT_CUDA_BITOP(name, fn, op)                                                         \
  template <class T> INGOT_FN T a_##name(volatile T* p, T v, memory_order o) {                 \
    a_fence(o);                                                                                \
    T r;                                                                                       \
    if constexpr (sizeof(T) == 4) r = (T)fn((unsigned int*)p, (unsigned int)v);                \
    else if constexpr (sizeof(T) == 8) r = (T)fn((unsigned long long*)p, (unsigned long long)v); \
    else r = a_rmw_cas(p, v, memory_order_relaxed, [](T a, T b) { return T(a op b); });        \
    a_fence(o);                                                                                \
    return r;                                                                                  \
  }
INGOT_CUDA_BITOP(and, atomicAnd, &)
INGOT_CUDA_BITOP(or, atomicOr, |)
INGOT_CUDA_BITOP(xor, atomicXor, ^)
#undef INGOT_CUDA_BITOP
#define INGOT_CUDA_MINMAX(name, fn, better)                                                    \
  template <class T> INGOT_FN T a_##name(volatile T* p, T v, memory_order o) {                 \
    a_fence(o);                                                                                \
    T r;                                                                                       \
    if constexpr (ingot::tt::is_same<T, int>::value || ingot::tt::is_same<T, unsigned int>::value) \
      r = fn((T*)p, v);                                                                        \
    else if constexpr (ingot::tt::is_integral<T>::value && sizeof(T) == 8 && ingot::tt::is_signed_int<T>::value) \
      r = (T)fn((long long*)p, (long long)v);                                                  \
    else if constexpr (ingot::tt::is_integral<T>::value && sizeof(T) == 8)                     \
      r = (T)fn((unsigned long long*)p, (unsigned long long)v);                                \
    else {                                                                                     \
      T old = *p;                                                                              \
      while ((better) && !a_cas(p, &old, v, memory_order_relaxed)) {                           \
      }                                                                                        \
      r = old;                                                                                 \
    }                                                                                          \
    a_fence(o);                                                                                \
    return r;                                                                                  \
  }
INGOT_CUDA_MINMAX(min, atomicMin, v < old)
INGOT_CUDA_MINMAX(max, atomicMax, old < v)
#undef INGOT_CUDA_MINMAX
#endif
}  // namespace detail

#define INGOT_ATOMIC_API(name, impl)                                                               \
  template <class T>                                                                              \
  INGOT_FN T atomic_##name##_explicit(volatile atomic<T>* obj, INGOT_ND(T) v, memory_order o) {   \
    return detail::impl(&obj->__value, v, o);                                                     \
  }                                                                                               \
  template <class T>                                                                              \
  INGOT_FN T atomic_##name##_explicit(volatile atomic<T>* obj, INGOT_ND(T) v, memory_order o,     \
                                      thread_scope) {                                             \
    return detail::impl(&obj->__value, v, o);                                                     \
  }                                                                                               \
  template <class T> INGOT_FN T atomic_##name(volatile atomic<T>* obj, INGOT_ND(T) v) {           \
    return detail::impl(&obj->__value, v, memory_order_seq_cst);                                  \
  }
INGOT_ATOMIC_API(fetch_add, a_add)
INGOT_ATOMIC_API(fetch_sub, a_sub)
INGOT_ATOMIC_API(fetch_and, a_and)
INGOT_ATOMIC_API(fetch_or, a_or)
INGOT_ATOMIC_API(fetch_xor, a_xor)
INGOT_ATOMIC_API(fetch_min, a_min)
INGOT_ATOMIC_API(fetch_max, a_max)
INGOT_ATOMIC_API(exchange, a_exchange)
#undef INGOT_ATOMIC_API
// Metal 3.1's 64-bit atomic_min_explicit / atomic_max_explicit on atomic<ulong>: no fetch, no
// result (PyTorch's scatter amin/amax on int64 through a sign-flipped ulong).
#define INGOT_ATOMIC_NOFETCH(name, impl)                                                           \
  template <class T>                                                                              \
  INGOT_FN void atomic_##name##_explicit(volatile atomic<T>* obj, INGOT_ND(T) v, memory_order o) { \
    (void)detail::impl(&obj->__value, v, o);                                                      \
  }                                                                                               \
  template <class T>                                                                              \
  INGOT_FN void atomic_##name##_explicit(volatile atomic<T>* obj, INGOT_ND(T) v, memory_order o,  \
                                         thread_scope) {                                          \
    (void)detail::impl(&obj->__value, v, o);                                                      \
  }
INGOT_ATOMIC_NOFETCH(min, a_min)
INGOT_ATOMIC_NOFETCH(max, a_max)
#undef INGOT_ATOMIC_NOFETCH

template <class T> INGOT_FN T atomic_load_explicit(const volatile atomic<T>* obj, memory_order o) {
  return detail::a_load((volatile T*)&obj->__value, o);
}
template <class T> INGOT_FN T atomic_load(const volatile atomic<T>* obj) {
  return detail::a_load((volatile T*)&obj->__value, memory_order_seq_cst);
}
template <class T> INGOT_FN void atomic_store_explicit(volatile atomic<T>* obj, INGOT_ND(T) v, memory_order o) {
  detail::a_store(&obj->__value, v, o);
}
template <class T> INGOT_FN void atomic_store(volatile atomic<T>* obj, INGOT_ND(T) v) {
  detail::a_store(&obj->__value, v, memory_order_seq_cst);
}
template <class T>
INGOT_FN bool atomic_compare_exchange_weak_explicit(volatile atomic<T>* obj, T* expected, INGOT_ND(T) desired,
                                                    memory_order success, memory_order) {
  return detail::a_cas(&obj->__value, expected, desired, success);
}
template <class T>
INGOT_FN bool atomic_compare_exchange_strong_explicit(volatile atomic<T>* obj, T* expected, INGOT_ND(T) desired,
                                                      memory_order success, memory_order) {
  return detail::a_cas(&obj->__value, expected, desired, success);
}
template <class T>
INGOT_FN bool atomic_compare_exchange_weak(volatile atomic<T>* obj, T* expected, INGOT_ND(T) desired) {
  return detail::a_cas(&obj->__value, expected, desired, memory_order_seq_cst);
}
template <class T>
INGOT_FN bool atomic_compare_exchange_strong(volatile atomic<T>* obj, T* expected, INGOT_ND(T) desired) {
  return detail::a_cas(&obj->__value, expected, desired, memory_order_seq_cst);
}

}  // namespace metal

using metal::atomic_bool;
using metal::atomic_float;
using metal::atomic_int;
using metal::atomic_uint;
using metal::atomic_long;
using metal::atomic_ulong;
