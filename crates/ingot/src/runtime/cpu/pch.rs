//! The precompiled prelude: the prelude headers every CPU translation starts with, parsed once
//! per (compiler, flags, prelude) into a GCC precompiled header kept beside the kernels.
//!
//! Parsing the prelude is most of a small kernel's first compile (g++ 12 here: 0.94 s for a
//! one-line kernel, 0.21 s against the precompiled header). The translation itself is unchanged:
//! the header is given with `-include`, and the translation's own `#include`s of the same headers
//! are then no-ops (they are `#pragma once`), so a compile without the precompiled header (another
//! compiler, `INGOT_CPU_PCH=0`, a header that could not be built) gives the same code.
//!
//! Cache entries: `pch-<key>.h` (the preamble), `pch-<key>.h.gch` (what the compiler finds next
//! to it) and `pch-<key>.sum` (blake3 of the `.gch`). The key hashes the preamble, the flags, the
//! compiler and the prelude folder. A `.gch` whose sum does not match (truncated, corrupt, half
//! written by a crashed process) is rebuilt, never used; it is checked once per process.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use super::compiler::{self, Compiler};
use crate::cache;
use crate::runtime::kernel::MathMode;

/// Bump when the layout of the entries changes.
const PCH_VERSION: &str = "ingot-cpu-pch-v1";

/// The leading lines of a CPU translation that only configure and include the prelude (the
/// `#define INGOT_*` lines and the `#include <ingot/...>` lines, comments skipped), up to the
/// first other line. `None` when the translation does not start that way.
pub(super) fn preamble(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut includes = 0;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with("//") {
            continue;
        }
        let config = ["INGOT_TARGET_CPU", "INGOT_FAST_MATH", "INGOT_CHECKED"]
            .iter()
            .any(|m| l.strip_prefix("#define ").is_some_and(|r| r.starts_with(m)));
        if l.starts_with("#include <ingot/") {
            includes += 1;
        } else if !config {
            break;
        }
        out.push_str(l);
        out.push('\n');
    }
    (includes > 0).then_some(out)
}

/// Whether the engine uses precompiled headers: GCC only (clang's are another format, given by
/// another flag), and not when `INGOT_CPU_PCH=0`.
fn enabled(compiler: &Compiler) -> bool {
    if std::env::var("INGOT_CPU_PCH").is_ok_and(|v| v == "0") {
        return false;
    }
    !compiler.version.to_ascii_lowercase().contains("clang")
}

/// The `.gch` files this process has checked against their sums, with the size and
/// modification time they had then (a file changed since is checked again).
fn verified() -> &'static Mutex<HashSet<(PathBuf, u64, u128)>> {
    static V: OnceLock<Mutex<HashSet<(PathBuf, u64, u128)>>> = OnceLock::new();
    V.get_or_init(|| Mutex::new(HashSet::new()))
}

fn stamp(path: &Path) -> Option<(PathBuf, u64, u128)> {
    let m = std::fs::metadata(path).ok()?;
    let t = m
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((path.to_path_buf(), m.len(), t.as_nanos()))
}

fn digest_of(path: &Path) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    Some(blake3::hash(&bytes).to_hex().to_string())
}

/// The header to pass with `-include` for a translation starting with `preamble`, built now if
/// it is missing or damaged. `None` when precompiled headers are off or could not be built (the
/// kernel then compiles without one).
pub(super) fn header(
    dir: &Path,
    prelude: &Path,
    compiler: &Compiler,
    math: MathMode,
    preamble: &str,
) -> Option<PathBuf> {
    if !enabled(compiler) {
        return None;
    }
    let flags = pch_flags(math);
    let key = cache::key(&[
        PCH_VERSION.as_bytes(),
        preamble.as_bytes(),
        flags.join("\0").as_bytes(),
        compiler.path.to_string_lossy().as_bytes(),
        compiler.prefix_args.join("\0").as_bytes(),
        compiler.version.as_bytes(),
        prelude.to_string_lossy().as_bytes(),
    ]);
    let stem = format!("pch-{}", &key[..32]);
    let h = dir.join(format!("{stem}.h"));
    let gch = dir.join(format!("{stem}.h.gch"));
    let sum = dir.join(format!("{stem}.sum"));
    if stamp(&gch).is_some_and(|s| verified().lock().is_ok_and(|v| v.contains(&s))) {
        return Some(h);
    }
    let intact = || {
        let want = std::fs::read_to_string(&sum).ok()?;
        let header_ok = std::fs::read_to_string(&h).ok()? == preamble;
        (header_ok && digest_of(&gch)? == want.trim()).then_some(())
    };
    if intact().is_none() {
        build(dir, prelude, compiler, &flags, preamble, &h, &gch, &sum)?;
    }
    verified().lock().ok()?.insert(stamp(&gch)?);
    Some(h)
}

/// The kernel flags that matter to a precompiled header (the link-only `-shared` left out).
fn pch_flags(math: MathMode) -> Vec<String> {
    compiler::flags(math)
        .into_iter()
        .filter(|f| f != "-shared")
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn build(
    dir: &Path,
    prelude: &Path,
    compiler: &Compiler,
    flags: &[String],
    preamble: &str,
    h: &Path,
    gch: &Path,
    sum: &Path,
) -> Option<()> {
    let write = |dst: &Path, bytes: &[u8]| -> Option<()> {
        let tmp = dir.join(cache::temp_name("pch"));
        std::fs::write(&tmp, bytes).ok()?;
        cache::install(&tmp, dst).ok()
    };
    write(h, preamble.as_bytes())?;
    let tmp_gch = dir.join(format!("{}.gch", cache::temp_name("pch")));
    let progress = crate::progress::Progress::start(format!(
        "precompiling the prelude for the cpu ({}, once)",
        compiler.path.display()
    ));
    let status = Command::new(&compiler.path)
        .args(&compiler.prefix_args)
        .args(flags)
        .arg("-I")
        .arg(prelude)
        .arg("-x")
        .arg("c++-header")
        .arg(h)
        .arg("-o")
        .arg(&tmp_gch)
        .output();
    drop(progress);
    let ok = status.is_ok_and(|o| o.status.success());
    let digest = ok.then(|| digest_of(&tmp_gch)).flatten();
    let Some(digest) = digest else {
        let _ = std::fs::remove_file(&tmp_gch);
        return None;
    };
    cache::install(&tmp_gch, gch).ok()?;
    write(sum, digest.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::preamble;

    #[test]
    fn preamble_stops_at_the_users_code() {
        let t = "// generated by ingot-msl from k.metal for cpu\n#define INGOT_CHECKED 1\n#define INGOT_TARGET_CPU 1\n#define INGOT_FAST_MATH 0\n#include <ingot/metal_stdlib.h>\n#include <ingot/cpu/runtime.h>\n#define USER 3\n#include <ingot/checked.h>\n#line 1 \"k.metal\"\nkernel";
        assert_eq!(
            preamble(t).unwrap(),
            "#define INGOT_CHECKED 1\n#define INGOT_TARGET_CPU 1\n#define INGOT_FAST_MATH 0\n#include <ingot/metal_stdlib.h>\n#include <ingot/cpu/runtime.h>\n"
        );
        assert_eq!(preamble("#line 1 \"k\"\nint x;"), None);
    }
}
