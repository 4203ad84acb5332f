//! Launch arguments of user kernels as an array library passes them: a kernel reads raw memory,
//! so a non-contiguous array given to a read-only buffer parameter is replaced by a contiguous
//! copy (the kernel API itself accepts only contiguous arrays).

use std::borrow::Cow;

use crate::error::Result;
use crate::kernel::{Access, Kernel, KernelArg, ParamRole};

/// `args` with every non-contiguous array bound to a read-only buffer parameter of `kernel`
/// replaced by a contiguous copy; borrowed unchanged when there is none (the common case).
/// Writable parameters are left alone: the kernel API rejects a non-contiguous one, since the
/// kernel's writes would go to a copy.
pub fn contiguous_inputs<'a>(
    kernel: &Kernel,
    args: &'a [KernelArg],
) -> Result<Cow<'a, [KernelArg]>> {
    let needs_copy = |(p, a): (&crate::kernel::ParamInfo, &KernelArg)| {
        p.kind == ParamRole::Buffer
            && p.access == Access::Read
            && matches!(a, KernelArg::Array(x) if !x.is_contiguous())
    };
    if !kernel.argument_params().zip(args).any(needs_copy) {
        return Ok(Cow::Borrowed(args));
    }
    let mut out = args.to_vec();
    for (p, a) in kernel.argument_params().zip(out.iter_mut()) {
        if needs_copy((p, a)) {
            if let KernelArg::Array(x) = a {
                *a = KernelArg::Array(x.copy()?);
            }
        }
    }
    Ok(Cow::Owned(out))
}
