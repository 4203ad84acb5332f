//! The on-disk cache of compiled kernels, shared by every backend.
//!
//! Entries live under `INGOT_CACHE_DIR` (default `~/.cache/ingot`), one folder per backend, named
//! by a blake3 hash of everything that affects the compiled code: the translated source, the
//! prelude, the options, the target architecture and the compiler's version. Writes go to a
//! temporary file and are renamed into place, so a reader never sees half an entry; a reader
//! that finds an entry it cannot use (truncated, corrupt) recompiles and overwrites it. The CPU
//! engine also keeps its prelude headers here (`cpu/prelude-<hash>/`, content-addressed).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

/// The cache's root folder.
pub fn root() -> PathBuf {
    if let Some(dir) = std::env::var_os("INGOT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir).join("ingot");
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".cache").join("ingot"),
        None => std::env::temp_dir().join("ingot-cache"),
    }
}

/// A hex key for the given parts (each part is length-prefixed, so boundaries count).
pub fn key(parts: &[&[u8]]) -> String {
    let mut h = blake3::Hasher::new();
    for p in parts {
        h.update(&(p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize().to_hex().to_string()
}

/// The backend's folder, created if needed.
pub fn dir(backend: &str) -> Result<PathBuf> {
    let d = root().join(backend);
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

/// The path of entry `key` with `extension` in the backend's folder.
pub fn path(backend: &str, key: &str, extension: &str) -> PathBuf {
    root().join(backend).join(format!("{key}.{extension}"))
}

/// Reads an entry; `None` when it does not exist or cannot be read.
pub fn read(backend: &str, key: &str, extension: &str) -> Option<Vec<u8>> {
    std::fs::read(path(backend, key, extension)).ok()
}

/// Writes an entry atomically (temporary file + rename). Returns the final path.
pub fn write(backend: &str, key: &str, extension: &str, bytes: &[u8]) -> Result<PathBuf> {
    write_to(&root().join(backend), key, extension, bytes)
}

/// Writes `<dir>/<key>.<extension>` atomically.
pub fn write_to(dir: &Path, key: &str, extension: &str, bytes: &[u8]) -> Result<PathBuf> {
    let dest = dir.join(format!("{key}.{extension}"));
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io(format!("creating the kernel cache {}", dir.display()), e))?;
    let tmp = dir.join(temp_name(key));
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(format!("writing {}", tmp.display()), e))?;
    install(&tmp, &dest)?;
    Ok(dest)
}

/// A file name no other writer uses at the same time (process id + counter + clock), hidden.
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

/// Moves the finished file `tmp` to `dst` atomically (replacing a stale `dst`).
pub fn install(tmp: &Path, dst: &Path) -> Result<()> {
    std::fs::rename(tmp, dst).map_err(|e| {
        let _ = std::fs::remove_file(tmp);
        Error::io(
            format!("installing {} in the kernel cache", dst.display()),
            e,
        )
    })
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
        // Another process installed the same prelude first: use theirs.
        if !target.is_dir() {
            return Err(io("installing the prelude", e));
        }
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_parts() {
        assert_ne!(key(&[b"ab", b"c"]), key(&[b"a", b"bc"]));
        assert_eq!(key(&[b"x"]), key(&[b"x"]));
    }

    #[test]
    fn write_then_read() {
        let dir = std::env::temp_dir().join(format!("ingot-cache-test-{}", std::process::id()));
        let k = key(&[b"entry"]);
        let p = write_to(&dir, &k, "bin", b"payload").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"payload");
        write_to(&dir, &k, "bin", b"second").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second");
        let _ = std::fs::remove_dir_all(dir);
    }
}
