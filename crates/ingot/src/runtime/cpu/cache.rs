//! The on-disk cache of CPU kernels: `INGOT_CACHE_DIR` (default `~/.cache/ingot`), holding
//! `cpu/prelude-<hash>/` (the prelude headers, content-addressed) and `cpu/<key>.so` (compiled
//! kernels, keyed by a blake3 hash of everything that affects the binary). Every file appears
//! atomically (written under a temporary name, then renamed), so a reader never sees half of one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The cache root.
pub fn root() -> PathBuf {
    crate::cache::root()
}

/// The folder of CPU kernels, created if needed.
pub fn cpu_dir() -> Result<PathBuf> {
    let d = root().join("cpu");
    std::fs::create_dir_all(&d).map_err(|e| {
        Error::io(
            format!(
                "creating the kernel cache {} (set INGOT_CACHE_DIR to a writable folder)",
                d.display()
            ),
            e,
        )
    })?;
    Ok(d)
}

/// A name no other writer uses at the same time (process id + counter + clock).
pub fn temp_name(stem: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        ".tmp-{stem}-{}-{}-{nanos}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Writes `files` (include name, contents) under `dir/prelude-<hash>/` unless present, and
/// returns that folder. The folder is built under a temporary name and renamed into place.
pub fn prelude_dir(dir: &Path, files: &[(&str, &str)], hash: &str) -> Result<PathBuf> {
    let target = dir.join(format!("prelude-{hash}"));
    if target.is_dir() {
        return Ok(target);
    }
    let tmp = dir.join(temp_name("prelude"));
    let io = |what: &str, e| Error::io(format!("{what} in the kernel cache {}", dir.display()), e);
    for (name, contents) in files {
        let p = tmp.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io("creating the prelude", e))?;
        }
        std::fs::write(&p, contents).map_err(|e| io("writing the prelude", e))?;
    }
    std::fs::create_dir_all(&tmp).map_err(|e| io("creating the prelude", e))?;
    if let Err(e) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_dir_all(&tmp);
        if !target.is_dir() {
            return Err(io("installing the prelude", e));
        }
    }
    Ok(target)
}

/// Moves `tmp` to `dst` atomically (replacing a stale `dst`).
pub fn install(tmp: &Path, dst: &Path) -> Result<()> {
    std::fs::rename(tmp, dst).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Error::io(
            format!("installing {} in the kernel cache", dst.display()),
            e,
        )
    })
}
