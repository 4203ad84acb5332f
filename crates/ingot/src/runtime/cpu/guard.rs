//! Containment of CPU kernels: faults, guarded scratch copies, interrupts.
//!
//! - **Faults.** A kernel entry runs through `ingot_guarded_call` (`csrc/guard.c`): a SIGSEGV or
//!   SIGBUS on the thread while the kernel runs (a guard page behind a buffer, or any address the
//!   kernel may not touch) returns to the engine, which raises [`Error::KernelFault`]; outside a
//!   kernel the signal goes to the handler installed before ingot's.
//! - **Guarded scratch copies.** Buffers too small for a guarded block of their own
//!   (`memory::GUARD_MIN`) are copied for the launch into slots of a per-thread arena whose slots
//!   each end at an inaccessible page, and copied back afterwards.
//! - **Interrupts.** A SIGINT handler (chained in front of Python's) counts interrupts; a launch
//!   that sees the count change, or [`request_shutdown`], stops between threadgroups.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `ingot_guarded_call`'s return value for a fault.
const GUARD_FAULT: i32 = -0x1F4017;

/// Buffers up to this size are copied into guarded scratch slots for a launch (the size from
/// which the host allocator gives blocks a guard page of their own, `memory::GUARD_MIN`).
pub(crate) const SCRATCH_MAX: usize = 64 << 10;

/// A fault caught while a kernel ran.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Fault {
    /// The faulting address.
    pub addr: usize,
    /// SIGSEGV or SIGBUS.
    pub signal: i32,
}

/// The kernel entry signature of ABI.md ("CPU").
pub(crate) type Entry = unsafe extern "C" fn(
    *const crate::runtime::kernel::LaunchParams,
    *const *mut std::ffi::c_void,
    u32,
    u32,
) -> i32;

#[cfg(ingot_guard)]
extern "C" {
    fn ingot_guard_install() -> i32;
    fn ingot_guarded_call(
        f: Entry,
        launch: *const crate::runtime::kernel::LaunchParams,
        args: *const *mut std::ffi::c_void,
        begin: u32,
        end: u32,
        addr: *mut *mut std::ffi::c_void,
        sig: *mut i32,
    ) -> i32;
}

/// Installs the fault and interrupt handlers (once; cheap afterwards).
pub(crate) fn install() {
    #[cfg(ingot_guard)]
    {
        // SAFETY: idempotent; installs a handler that only acts on threads running a kernel.
        unsafe { ingot_guard_install() };
    }
    install_sigint();
}

/// Runs `entry` on groups `[begin, end)` with faults contained.
///
/// # Safety
/// `entry`, `launch` and `args` follow ABI.md ("CPU").
pub(crate) unsafe fn call(
    entry: Entry,
    launch: *const crate::runtime::kernel::LaunchParams,
    args: *const *mut std::ffi::c_void,
    begin: u32,
    end: u32,
) -> std::result::Result<i32, Fault> {
    #[cfg(ingot_guard)]
    {
        let mut addr = std::ptr::null_mut();
        let mut sig = 0;
        let rc = ingot_guarded_call(entry, launch, args, begin, end, &mut addr, &mut sig);
        if rc == GUARD_FAULT {
            return Err(Fault {
                addr: addr as usize,
                signal: sig,
            });
        }
        Ok(rc)
    }
    #[cfg(not(ingot_guard))]
    {
        let _ = GUARD_FAULT;
        Ok(entry(launch, args, begin, end))
    }
}

/// A per-thread arena of scratch slots, each [`SCRATCH_MAX`] bytes followed by a guard page.
struct Arena {
    base: *mut u8,
    slots: usize,
}

impl Arena {
    fn stride() -> usize {
        SCRATCH_MAX + page()
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        #[cfg(unix)]
        if !self.base.is_null() {
            // SAFETY: mapped by `scratch_slots` with this length.
            unsafe { libc::munmap(self.base as *mut libc::c_void, self.slots * Arena::stride()) };
        }
    }
}

thread_local! {
    static ARENA: RefCell<Arena> = const { RefCell::new(Arena { base: std::ptr::null_mut(), slots: 0 }) };
}

fn page() -> usize {
    #[cfg(unix)]
    {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 {
            return p as usize;
        }
    }
    4096
}

/// `n` scratch slots of the calling thread: the end of each (where a buffer's bytes end) is
/// followed by an inaccessible page. Valid until the next call on this thread. None when the
/// arena cannot be mapped (the launch then runs without scratch copies).
pub(crate) fn scratch_slots(n: usize) -> Option<Vec<*mut u8>> {
    #[cfg(unix)]
    {
        ARENA.with(|a| {
            let mut a = a.borrow_mut();
            if a.slots < n {
                let slots = n.next_power_of_two().max(4);
                let len = slots * Arena::stride();
                // SAFETY: a fresh private anonymous mapping.
                let p = unsafe {
                    libc::mmap(
                        std::ptr::null_mut(),
                        len,
                        libc::PROT_READ | libc::PROT_WRITE,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return None;
                }
                let base = p as *mut u8;
                for k in 0..slots {
                    // SAFETY: inside the mapping just made.
                    unsafe {
                        libc::mprotect(
                            base.add(k * Arena::stride() + SCRATCH_MAX) as *mut libc::c_void,
                            page(),
                            libc::PROT_NONE,
                        )
                    };
                }
                *a = Arena { base, slots };
            }
            // SAFETY: each slot lies inside the arena.
            Some(
                (0..n)
                    .map(|k| unsafe { a.base.add(k * Arena::stride()) })
                    .collect(),
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = n;
        None
    }
}

/// The size of the inaccessible region behind a scratch slot or a guarded block.
pub(crate) fn guard_len() -> usize {
    page()
}

static SHUTDOWN: AtomicBool = AtomicBool::new(false);

/// Stops every running CPU launch between threadgroups and makes later launches fail with
/// [`crate::Error::Interrupted`] (called when the Python interpreter exits).
pub fn request_shutdown() {
    SHUTDOWN.store(true, Ordering::SeqCst);
    STOP_EPOCH.fetch_add(1, Ordering::SeqCst);
}

/// Grows on every SIGINT and at shutdown. Checked kernels read it at each loop iteration
/// (through the pointer [`stop_epoch`] gives them) and end their loops once it moved, so that a
/// threadgroup that never ends can be stopped too.
static STOP_EPOCH: AtomicU64 = AtomicU64::new(0);

/// The address of the stop counter, for `ingot_cpu_set_stop_epoch` in each loaded kernel.
pub(crate) fn stop_epoch() -> *const u64 {
    STOP_EPOCH.as_ptr()
}

/// True once [`request_shutdown`] was called.
pub(crate) fn shutting_down() -> bool {
    SHUTDOWN.load(Ordering::Relaxed)
}

/// The number of SIGINTs seen so far (a launch stops when it changes).
pub(crate) fn interrupts() -> u64 {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// SIGINTs seen since the process started.
static INTERRUPTS: AtomicU64 = AtomicU64::new(0);

/// The SIGINT handler found when ingot's was installed (Python's, usually), for chaining.
#[cfg(unix)]
static mut OLD_SIGINT: Option<libc::sigaction> = None;

#[cfg(unix)]
extern "C" fn on_sigint(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    INTERRUPTS.fetch_add(1, Ordering::SeqCst);
    STOP_EPOCH.fetch_add(1, Ordering::SeqCst);
    // SAFETY: written only while this handler is not installed (see `install_sigint`).
    let old = unsafe { *std::ptr::addr_of!(OLD_SIGINT) };
    let Some(old) = old else { return };
    let h = old.sa_sigaction;
    if h == libc::SIG_IGN {
        return;
    }
    if h == libc::SIG_DFL {
        // The default action (terminate): restore it and raise again.
        // SAFETY: async-signal-safe calls.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::raise(libc::SIGINT);
        }
        return;
    }
    if old.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler's own signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(h) };
        f(sig, info, ctx);
    } else {
        // SAFETY: as above.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(h) };
        f(sig);
    }
}

/// Puts ingot's SIGINT handler in front of the current one (Python's), again when the program
/// replaced it (Python's `signal.signal`); checked on every 64th launch (a system call).
fn install_sigint() {
    #[cfg(unix)]
    {
        use std::sync::Mutex;
        static LOCK: Mutex<()> = Mutex::new(());
        static CALLS: AtomicU64 = AtomicU64::new(0);
        if !CALLS.fetch_add(1, Ordering::Relaxed).is_multiple_of(64) {
            return;
        }
        let Ok(_guard) = LOCK.lock() else { return };
        // SAFETY: querying the current action.
        let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
        if unsafe { libc::sigaction(libc::SIGINT, std::ptr::null(), &mut cur) } != 0 {
            return;
        }
        if cur.sa_sigaction == on_sigint as *const () as usize {
            return;
        }
        // SAFETY: our handler is not installed now, so it does not read this concurrently.
        unsafe { *std::ptr::addr_of_mut!(OLD_SIGINT) = Some(cur) };
        // SAFETY: a valid handler with SA_SIGINFO; the mask blocks nothing extra.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigint as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(libc::SIGINT, &sa, std::ptr::null_mut());
        }
    }
}
