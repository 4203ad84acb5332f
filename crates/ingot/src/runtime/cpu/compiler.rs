//! The system C++ compiler: discovery (`INGOT_CXX`, else `c++`, `g++`, `clang++`), its version,
//! the command line for a kernel shared object, and compiler messages mapped to the user's file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::error::{Error, Result};
use crate::runtime::kernel::MathMode;

/// A C++ compiler found on this machine.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// The executable (resolved on `PATH`).
    pub path: PathBuf,
    /// Extra leading arguments from `INGOT_CXX` (`"ccache g++"` gives `["g++"]` after ccache).
    pub prefix_args: Vec<String>,
    /// The first line of `--version` (part of the cache key).
    pub version: String,
}

fn which(name: &str) -> Option<PathBuf> {
    let p = Path::new(name);
    if p.components().count() > 1 {
        return p.is_file().then(|| p.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|c| c.is_file())
}

type VersionCache = Mutex<HashMap<(PathBuf, Vec<String>), String>>;

fn version_of(path: &Path, prefix: &[String]) -> Option<String> {
    static CACHE: OnceLock<VersionCache> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (path.to_path_buf(), prefix.to_vec());
    if let Some(v) = cache.lock().ok()?.get(&key) {
        return Some(v.clone());
    }
    // A new process reads the version from the disk cache when the executable is unchanged
    // (same size and modification time), sparing a process spawn on a cached load.
    let stamp = std::fs::metadata(path).ok().map(|m| {
        let t = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        format!("{} {} {} {:?}", path.display(), m.len(), t, prefix)
    });
    let memo = stamp.as_ref().map(|s| {
        let dir = crate::cache::root().join("cpu");
        let file = dir.join(format!(
            "compiler-{}.txt",
            &blake3::hash(s.as_bytes()).to_hex().as_str()[..16]
        ));
        (file, s.clone())
    });
    if let Some((file, stamp)) = &memo {
        if let Ok(text) = std::fs::read_to_string(file) {
            if let Some((first, version)) = text.split_once('\n') {
                if first == stamp && !version.trim().is_empty() {
                    let v = version.trim().to_string();
                    cache.lock().ok()?.insert(key, v.clone());
                    return Some(v);
                }
            }
        }
    }
    let out = Command::new(path)
        .args(prefix)
        .arg("--version")
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v = text.lines().next().unwrap_or("").trim().to_string();
    if let Some((file, stamp)) = &memo {
        if let Some(dir) = file.parent() {
            let name = file
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let _ = crate::cache::write_to(
                dir,
                name.trim_end_matches(".txt"),
                "txt",
                format!("{stamp}\n{v}\n").as_bytes(),
            );
        }
    }
    cache.lock().ok()?.insert(key, v.clone());
    Some(v)
}

/// Finds the compiler: `INGOT_CXX` when set (an error when it does not run), else the first of
/// `c++`, `g++`, `clang++` on `PATH`.
pub fn find() -> Result<Compiler> {
    if let Ok(spec) = std::env::var("INGOT_CXX") {
        let mut words = spec.split_whitespace();
        if let Some(first) = words.next() {
            let rest: Vec<String> = words.map(str::to_string).collect();
            let path = which(first).ok_or_else(|| {
                Error::Compile(format!(
                    "INGOT_CXX={spec:?}: `{first}` was not found (set INGOT_CXX to a C++17 compiler such as g++ or clang++)"
                ))
            })?;
            let version = version_of(&path, &rest).ok_or_else(|| {
                Error::Compile(format!(
                    "INGOT_CXX={spec:?}: `{} --version` did not run; set INGOT_CXX to a C++17 compiler such as g++ or clang++",
                    path.display()
                ))
            })?;
            return Ok(Compiler {
                path,
                prefix_args: rest,
                version,
            });
        }
    }
    for name in ["c++", "g++", "clang++"] {
        if let Some(path) = which(name) {
            if let Some(version) = version_of(&path, &[]) {
                return Ok(Compiler {
                    path,
                    prefix_args: Vec::new(),
                    version,
                });
            }
        }
    }
    Err(Error::Compile(
        "no C++ compiler found for CPU kernels: install g++ or clang++, or set INGOT_CXX to one"
            .to_string(),
    ))
}

/// The flags of every kernel compile (part of the cache key).
pub fn flags(math: MathMode) -> Vec<String> {
    let mut f: Vec<String> = [
        "-std=c++17",
        "-O3",
        "-march=native",
        "-fPIC",
        "-shared",
        "-fvisibility=hidden",
        "-fno-math-errno",
        // Floating-point exception flags are never read: without this, GCC keeps every float
        // comparison and conversion in a loop as a branch (they could raise a flag), so a loop
        // with a select or a range check (fused kernels, clamps) does not vectorise. Values are
        // unchanged (clang's default).
        "-fno-trapping-math",
        "-w",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    match math {
        MathMode::Precise => f.push("-ffp-contract=off".into()),
        MathMode::Fast => f.push("-ffast-math".into()),
    }
    f
}

impl Compiler {
    /// Compiles `cpp` (a file) into the shared object `out`, with the precompiled prelude `pch`
    /// (a header given with `-include`) when there is one. On failure the compiler's message,
    /// cleaned by [`clean_message`], is an [`Error::Compile`].
    #[allow(clippy::too_many_arguments)]
    pub fn compile(
        &self,
        cpp: &Path,
        out: &Path,
        math: MathMode,
        include_dirs: &[PathBuf],
        prelude_dir: &Path,
        pch: Option<&Path>,
        user_file: &str,
    ) -> Result<()> {
        let mut cmd = Command::new(&self.path);
        cmd.args(&self.prefix_args).args(flags(math));
        cmd.arg("-I").arg(prelude_dir);
        if let Some(h) = pch {
            cmd.arg("-include").arg(h);
        }
        for d in include_dirs {
            cmd.arg("-I").arg(d);
        }
        cmd.arg("-x").arg("c++").arg(cpp).arg("-o").arg(out);
        let output = cmd.output().map_err(|e| {
            Error::Compile(format!(
                "could not run the C++ compiler {} ({e}); set INGOT_CXX to a working C++17 compiler",
                self.path.display()
            ))
        })?;
        if output.status.success() {
            return Ok(());
        }
        let mut raw = String::from_utf8_lossy(&output.stderr).into_owned();
        raw.push_str(&String::from_utf8_lossy(&output.stdout));
        Err(Error::Compile(format!(
            "{user_file}: the C++ compiler ({}) rejected the kernel:\n{}",
            self.version,
            clean_message(&raw, prelude_dir, cpp)
        )))
    }
}

/// Maps a compiler message to what a user can act on: prelude paths become `<ingot>/...`,
/// the translation unit's own path `<translation>`, include chains and notes from inside the
/// prelude are dropped, and the message is capped at 60 lines.
pub fn clean_message(raw: &str, prelude_dir: &Path, cpp: &Path) -> String {
    let prelude = prelude_dir.display().to_string();
    let cpp_s = cpp.display().to_string();
    let mut out = Vec::new();
    let mut skipping_prelude_note = false;
    for line in raw.lines() {
        let t = line.trim_start();
        if t.starts_with("In file included from") || t.starts_with("from ") {
            continue;
        }
        if t.starts_with("compilation terminated") {
            continue;
        }
        let l = line
            .replace(&format!("{prelude}/"), "<ingot>/")
            .replace(&prelude, "<ingot>")
            .replace(&cpp_s, "<translation>");
        // A note located in the prelude following a user error is noise; keep errors.
        if l.starts_with("<ingot>/") && !l.contains("error") {
            skipping_prelude_note = true;
            continue;
        }
        if skipping_prelude_note && (l.starts_with(' ') || l.starts_with('\t')) {
            continue;
        }
        skipping_prelude_note = false;
        out.push(l);
        if out.len() >= 60 {
            out.push("... (message truncated)".into());
            break;
        }
    }
    out.join("\n")
}
