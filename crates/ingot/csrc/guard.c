/* Fault containment for CPU kernels (see crates/ingot/src/runtime/cpu/guard.rs).
 *
 * ingot_guarded_call runs a kernel entry with a jump point armed on the calling thread; a
 * SIGSEGV or SIGBUS raised while it is armed (the kernel touched a guard page behind a buffer,
 * or any other address it may not) jumps back and returns INGOT_GUARD_FAULT with the address.
 * Outside a kernel the handler passes the signal on to the handler installed before it.
 * This is C because Rust cannot call setjmp. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>

typedef int (*ingot_entry_fn)(const void*, void* const*, uint32_t, uint32_t);

#define INGOT_GUARD_FAULT (-0x1F4017)

static __thread sigjmp_buf* tls_jump;
static __thread volatile sig_atomic_t tls_armed;
static __thread void* volatile tls_addr;
static __thread volatile int tls_sig;

static struct sigaction old_segv, old_bus;
static volatile int installed;

static void pass_on(int sig, siginfo_t* si, void* uc) {
  struct sigaction* old = sig == SIGSEGV ? &old_segv : &old_bus;
  if (old->sa_flags & SA_SIGINFO) {
    if (old->sa_sigaction) {
      old->sa_sigaction(sig, si, uc);
      return;
    }
  } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN) {
    old->sa_handler(sig);
    return;
  }
  /* Default action: restore it; returning re-executes the faulting instruction. */
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, NULL);
}

static void handler(int sig, siginfo_t* si, void* uc) {
  if (tls_armed && tls_jump) {
    tls_armed = 0;
    tls_addr = si ? si->si_addr : 0;
    tls_sig = sig;
    siglongjmp(*tls_jump, 1);
  }
  pass_on(sig, si, uc);
}

/* Installs the handler once per process (chaining to the handlers found). Returns 0. */
int ingot_guard_install(void) {
  if (__atomic_exchange_n(&installed, 1, __ATOMIC_SEQ_CST)) return 0;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = handler;
  /* NODEFER: the handler leaves by siglongjmp without restoring the signal mask. */
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
  return 0;
}

/* Calls f(L, args, begin, end) with the fault jump armed. Returns f's result, or
 * INGOT_GUARD_FAULT with *addr and *sig set. */
int ingot_guarded_call(ingot_entry_fn f, const void* L, void* const* args, uint32_t begin,
                       uint32_t end, void** addr, int* sig) {
  sigjmp_buf jb;
  sigjmp_buf* volatile prev = tls_jump;
  if (sigsetjmp(jb, 0)) {
    tls_jump = prev;
    *addr = tls_addr;
    *sig = tls_sig;
    return INGOT_GUARD_FAULT;
  }
  tls_jump = &jb;
  tls_armed = 1;
  int rc = f(L, args, begin, end);
  tls_armed = 0;
  tls_jump = prev;
  return rc;
}
