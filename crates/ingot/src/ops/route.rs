//! Which implementation the sorting, selection and indexing ops of a device use: the native CPU
//! backend or the built-in kernel library (on the CPU kernel engine, for tests of the kernels).

/// Whether the ops of `device` run natively (the CPU backend) rather than through the built-in
/// kernel library. The sorting, selection and indexing ops ask this: with `INGOT_CPU_OPS=kernels`
/// in the environment (or [`set_cpu_ops_through_kernels`]) they run their GPU implementations on
/// the CPU kernel engine, which is how the tests check those kernels without a GPU.
pub(crate) fn native(device: crate::device::Device) -> bool {
    use std::sync::atomic::Ordering;
    if device != crate::device::Device::Cpu {
        return false;
    }
    match KERNELS_ON_CPU.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            let k = std::env::var("INGOT_CPU_OPS").is_ok_and(|v| v == "kernels");
            KERNELS_ON_CPU.store(if k { 1 } else { 2 }, Ordering::Relaxed);
            !k
        }
    }
}

static KERNELS_ON_CPU: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(0);

/// Runs the sorting, selection and indexing ops of CPU arrays through the GPU kernel library on
/// the CPU kernel engine (`true`) or natively (`false`, the default); for tests of the kernels.
#[doc(hidden)]
pub fn set_cpu_ops_through_kernels(on: bool) {
    KERNELS_ON_CPU.store(if on { 1 } else { 2 }, std::sync::atomic::Ordering::Relaxed);
}
