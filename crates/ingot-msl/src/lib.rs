//! Metal Shading Language front end: lexing, reflection and translation to CUDA C++ and host C++.

pub mod prelude;
pub mod target;

pub use prelude::prelude_files;
pub use target::Target;
