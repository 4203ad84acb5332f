//! The one error type of the crate: a message located in the user's file.

use serde::Serialize;

/// An error located at a line and column (both 1-based) of the user's file.
///
/// Displays like a compiler diagnostic: `kernel.metal:12:5: error: message`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{file}:{line}:{column}: error: {message}")]
pub struct Error {
    /// The file name given in the options (`<source>` when none was given).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// What went wrong, for a person.
    pub message: String,
    /// True when the source is valid Metal that ingot cannot run anywhere but on Apple's
    /// compiler (an Apple-only framework header): callers report it as "not supported", not as
    /// a compile error.
    pub unsupported: bool,
}

impl Error {
    /// Creates an error at `line`:`column` of `file`.
    pub fn new(file: &str, line: u32, column: u32, message: impl Into<String>) -> Error {
        Error {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
            unsupported: false,
        }
    }

    /// An [`Error`] for valid Metal that ingot does not support (see [`Error::unsupported`]).
    pub fn unsupported(file: &str, line: u32, column: u32, message: impl Into<String>) -> Error {
        Error {
            unsupported: true,
            ..Error::new(file, line, column, message)
        }
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
