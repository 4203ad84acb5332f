//! The code-generation targets of the translator.

use serde::Serialize;

/// Which C++ dialect a translation is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Target {
    /// CUDA C++ compiled by NVRTC.
    Cuda,
    /// Host C++17 compiled by g++ or clang++.
    Cpu,
}

impl Target {
    /// The lower-case name used on the command line and in messages (`cuda`, `cpu`).
    pub fn name(self) -> &'static str {
        match self {
            Target::Cuda => "cuda",
            Target::Cpu => "cpu",
        }
    }

    /// Parses `cuda` or `cpu` (case-insensitive).
    pub fn parse(s: &str) -> Option<Target> {
        match s.to_ascii_lowercase().as_str() {
            "cuda" => Some(Target::Cuda),
            "cpu" => Some(Target::Cpu),
            _ => None,
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
