//! The arguments of the optional FFT capability ([`super::Runtime::fft`]): batched 1-D
//! transforms of contiguous rows in device memory (cuFFT on CUDA), unscaled (the caller scales).

use super::memory::Buffer;
use crate::dtype::DType;

/// The direction and kind of a transform.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FftKind {
    /// Complex to complex, forward (`exp(-2 pi i jk/n)`) or inverse (`exp(+2 pi i jk/n)`).
    C2C {
        /// The inverse direction.
        inverse: bool,
    },
    /// Real to complex: `n` reals to `n / 2 + 1` complex values per row.
    R2C,
    /// Complex to real: `n / 2 + 1` complex values to `n` reals per row.
    C2R,
}

/// One job: `batch` rows of transform length `n`, input and output contiguous rows starting at
/// element `offset` of their buffers (rows of `n` or `n / 2 + 1` elements as the kind says).
/// The input may be overwritten (C2R) and may be the output (C2C in place).
#[derive(Copy, Clone, Debug)]
pub struct FftJob<'a> {
    /// The transform.
    pub kind: FftKind,
    /// The complex dtype of the transform (`complex64`: single precision, `complex128`: double).
    pub dtype: DType,
    /// The transform length.
    pub n: usize,
    /// The number of rows.
    pub batch: usize,
    /// The input memory and its first element.
    pub input: (&'a Buffer, usize),
    /// The output memory and its first element.
    pub output: (&'a Buffer, usize),
}
