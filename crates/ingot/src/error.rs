//! The one error type of the library.
//!
//! Every fallible function returns [`Result`]. The Python bindings map each variant to one
//! Python exception class (see `ingot-python/src/errors.rs`), so a variant is chosen for what a
//! user should catch, and its message says what went wrong and with which value.

/// The result type used throughout ingot.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in ingot.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Shapes that do not broadcast, reshape to a wrong size, an axis out of range...
    #[error("shape error: {0}")]
    Shape(String),

    /// An index or slice that does not fit the array.
    #[error("index error: {0}")]
    Index(String),

    /// An operation that is not defined for a dtype (`sqrt` of bool, bitwise on floats...).
    #[error("{op} is not supported for dtype {dtype}")]
    UnsupportedDType {
        /// The operation.
        op: &'static str,
        /// The dtype's name (`float64`).
        dtype: String,
    },

    /// Two arrays, or an array and a parameter, whose dtypes do not agree.
    #[error("dtype mismatch: {0}")]
    DTypeMismatch(String),

    /// A value that is out of range or otherwise invalid for its purpose.
    #[error("{0}")]
    Value(String),

    /// An argument of the wrong kind (a type error in Python).
    #[error("{0}")]
    Type(String),

    /// Arrays that live on different devices were combined.
    #[error("device mismatch: {0}")]
    DeviceMismatch(String),

    /// A device that does not exist, or a backend that is not available on this machine.
    #[error("device not available: {0}")]
    DeviceUnavailable(String),

    /// An allocation that failed.
    #[error("out of memory: could not allocate {bytes} bytes on {device}")]
    OutOfMemory { bytes: usize, device: String },

    /// A write into an array whose memory is read-only (for example a read-only NumPy array).
    #[error("array is read-only: {0}")]
    ReadOnly(String),

    /// An MSL kernel that did not translate or compile.
    #[error("{0}")]
    Compile(String),

    /// A kernel launch whose arguments do not match the kernel's parameters.
    #[error("{0}")]
    KernelArgument(String),

    /// A fault reported by the device (CUDA error, Metal command-buffer error, CPU kernel error).
    #[error("device error: {0}")]
    Device(String),

    /// A linear-algebra failure the inputs cause: a singular matrix, one that is not positive
    /// definite, a factorization that did not converge (NumPy's `LinAlgError`).
    #[error("{0}")]
    LinAlg(String),

    /// Something ingot does not support (yet), named precisely.
    #[error("not supported: {0}")]
    Unsupported(String),

    /// A kernel that accessed memory outside its buffers: a bounds violation found by checked
    /// mode, or (default mode, CPU) a fault on the guard page behind a buffer. The message names
    /// the kernel, the parameter, the index, the length and the thread where known.
    #[error("kernel fault: {0}")]
    KernelFault(String),

    /// A long-running operation stopped by an interrupt (Ctrl-C) or by interpreter shutdown.
    #[error("interrupted: {0}")]
    Interrupted(String),

    /// An I/O error (cache directory, compiler invocation...).
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// Wraps an I/O error with a sentence saying what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// Shorthand for returning a [`Error::Value`].
#[macro_export]
macro_rules! bail_value {
    ($($arg:tt)*) => { return Err($crate::Error::Value(format!($($arg)*))) };
}
