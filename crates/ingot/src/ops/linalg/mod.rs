//! The array API's `linalg` extension: factorizations and the functions built on them, batched
//! over leading axes.
//!
//! - `factor.rs`: the factorizations (`solve`, `inv`, `det`, `slogdet`, `cholesky`, `qr`,
//!   `eigh`, `eigvalsh`, `svd`, `svdvals`). On the CPU they run on faer (`ops/cpu/linalg.rs`);
//!   on a GPU on the device's dense solver ([`crate::runtime::Runtime::solver`]: cuSOLVER on
//!   CUDA), with the glue (column-major copies, info checks, triangles, pivots) as device ops;
//!   a device without a solver (Metal: MPS is not used) computes on the host with a copy each
//!   way, the only way to factor there.
//! - `eig.rs`: the general eigenproblem (`eig`, `eigvals`), complex results; faer on the CPU,
//!   host copies elsewhere.
//! - `compose.rs`: functions composed from other ops, staying on the device (`pinv`,
//!   `matrix_rank`, `matrix_norm`, `vector_norm`, `matrix_power`, `trace`, `outer`, `cross`);
//!   `diagonal.rs` the diagonal view; `device.rs` the glue to a device's solver.
//! - `contract.rs`: `tensordot` and `vecdot` (also the main namespace's).
//!
//! Dtypes: float32 and float64 are factored as they are; float16 and bfloat16 are computed in
//! float32 and the results rounded back; integer and bool inputs are converted to the device's
//! default float (float64; float32 on Metal), as NumPy does. Complex dtypes do not exist yet.
//! Failures the inputs cause (a singular matrix for `solve`/`inv`, a matrix that is not positive
//! definite for `cholesky`, no convergence) are [`Error::LinAlg`](crate::Error::LinAlg), as
//! NumPy's `LinAlgError`; `det` of a singular matrix is 0.

mod compose;
mod contract;
mod device;
mod diagonal;
mod eig;
mod factor;

pub use crate::runtime::SvdDriver;
pub use compose::{
    cross, matrix_norm, matrix_power, matrix_rank, outer, pinv, trace, vector_norm, MatrixNorm,
};
pub use contract::{tensordot, vecdot, TensordotAxes};
pub use diagonal::diagonal;
pub use eig::{eig, eigvals};
pub use factor::{cholesky, det, eigh, eigvalsh, inv, qr, slogdet, solve, svd, svdvals, QrMode};
