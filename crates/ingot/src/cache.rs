//! The on-disk cache of compiled kernels, shared by every backend.
//!
//! Entries live under `INGOT_CACHE_DIR` (default `~/.cache/ingot`), one folder per backend, named
//! by a blake3 hash of everything that affects the compiled code: the translated source, the
//! prelude, the options, the target architecture and the compiler's version. Writes go to a
//! temporary file and are renamed into place, so a reader never sees half an entry; a reader
//! that finds an entry it cannot use (truncated, corrupt) recompiles and overwrites it. The CPU
//! engine also keeps its prelude headers here (`cpu/prelude-<hash>/`, content-addressed).
//!
//! Entries are **sealed**: [`seal`] appends a blake3 hash of the payload and a magic tag, and
//! [`unseal`] gives the payload back only when both match, so a truncated, corrupt or foreign
//! file is never loaded (a truncated shared object would otherwise fault while being mapped).
//! The prelude folder is compared with the embedded headers before use and rewritten when it
//! differs. A cache folder that cannot be written ([`work_dir`]) is replaced by a private
//! temporary folder for the process, with one warning on stderr.

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

/// The tag that ends a sealed entry.
const SEAL_MAGIC: &[u8; 8] = b"INGOTSL1";
/// Bytes [`seal`] appends: the payload's blake3 hash and the tag.
pub const SEAL_LEN: usize = 32 + SEAL_MAGIC.len();

/// `payload` followed by its blake3 hash and a tag (see the module docs).
pub fn seal(payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(payload.len() + SEAL_LEN);
    v.extend_from_slice(payload);
    v.extend_from_slice(blake3::hash(payload).as_bytes());
    v.extend_from_slice(SEAL_MAGIC);
    v
}

/// The payload of a sealed entry, or `None` when the seal is missing or does not match.
pub fn unseal(bytes: &[u8]) -> Option<&[u8]> {
    let body_len = bytes.len().checked_sub(SEAL_LEN)?;
    let (body, trailer) = bytes.split_at(body_len);
    let (hash, magic) = trailer.split_at(32);
    (magic == SEAL_MAGIC && blake3::hash(body).as_bytes() == hash).then_some(body)
}

/// Reads a sealed entry; `None` when it does not exist, cannot be read or fails its seal.
pub fn read(backend: &str, key: &str, extension: &str) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path(backend, key, extension)).ok()?;
    unseal(&bytes).map(<[u8]>::to_vec)
}

/// Writes a sealed entry atomically (temporary file + rename). Returns the final path.
pub fn write(backend: &str, key: &str, extension: &str, bytes: &[u8]) -> Result<PathBuf> {
    write_to(&root().join(backend), key, extension, &seal(bytes))
}

/// The folder where `backend` writes its entries: the cache's folder when it can be created
/// and written, else a temporary folder private to this process (the compiled kernels then
/// live for this process only; one warning is printed).
pub fn work_dir(backend: &str) -> Result<PathBuf> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static DIRS: OnceLock<Mutex<HashMap<(PathBuf, String), PathBuf>>> = OnceLock::new();
    let wanted = root().join(backend);
    let memo = DIRS.get_or_init(|| Mutex::new(HashMap::new()));
    let k = (wanted.clone(), backend.to_string());
    if let Some(d) = memo.lock().ok().and_then(|m| m.get(&k).cloned()) {
        return Ok(d);
    }
    let probe = || -> std::io::Result<()> {
        std::fs::create_dir_all(&wanted)?;
        let p = wanted.join(temp_name("probe"));
        std::fs::write(&p, b"")?;
        std::fs::remove_file(&p)
    };
    let dir = match probe() {
        Ok(()) => wanted.clone(),
        Err(e) => {
            let private = std::env::temp_dir()
                .join(format!("ingot-cache-{}", std::process::id()))
                .join(backend);
            std::fs::create_dir_all(&private).map_err(|e2| {
                Error::io(
                    format!(
                        "the kernel cache {} is not writable ({e}) and neither is {}",
                        wanted.display(),
                        private.display()
                    ),
                    e2,
                )
            })?;
            static WARNED: std::sync::atomic::AtomicBool =
                std::sync::atomic::AtomicBool::new(false);
            if !WARNED.swap(true, Ordering::Relaxed) {
                eprintln!(
                    "ingot: warning: the kernel cache {} is not writable ({e}); compiled kernels are kept for this process only (set INGOT_CACHE_DIR to a writable folder)",
                    wanted.display()
                );
            }
            private
        }
    };
    if let Ok(mut m) = memo.lock() {
        m.insert(k, dir.clone());
    }
    Ok(dir)
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

/// True when `dir` holds exactly `files` (every file present with these contents).
fn prelude_intact(dir: &Path, files: &[(&str, &str)]) -> bool {
    dir.is_dir()
        && files.iter().all(|(name, contents)| {
            std::fs::read(dir.join(name)).is_ok_and(|b| b == contents.as_bytes())
        })
}

/// Writes `files` (include name, contents) under `dir/prelude-<hash>/` unless present and
/// intact, and returns that folder. The folder is built under a temporary name and renamed
/// into place; a damaged one (a file edited, truncated or removed) is moved aside and replaced.
pub fn prelude_dir(dir: &Path, files: &[(&str, &str)], hash: &str) -> Result<PathBuf> {
    let target = dir.join(format!("prelude-{hash}"));
    if prelude_intact(&target, files) {
        return Ok(target);
    }
    if target.exists() {
        // Damaged: move it aside (another process may be doing the same: either rename wins).
        let trash = dir.join(temp_name("prelude-damaged"));
        if std::fs::rename(&target, &trash).is_ok() {
            let _ = std::fs::remove_dir_all(&trash);
        }
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
        if !prelude_intact(&target, files) {
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
    fn seals_reject_damage() {
        let s = seal(b"payload bytes");
        assert_eq!(unseal(&s), Some(&b"payload bytes"[..]));
        assert_eq!(unseal(&s[..s.len() - 1]), None, "truncated");
        let mut bad = s.clone();
        bad[3] ^= 1;
        assert_eq!(unseal(&bad), None, "corrupt");
        assert_eq!(
            unseal(b"\x7fELF not sealed at all, long enough to hold a trailer......"),
            None
        );
        assert_eq!(unseal(b""), None);
    }

    #[test]
    fn damaged_preludes_are_rewritten() {
        let dir = std::env::temp_dir().join(format!("ingot-prelude-test-{}", std::process::id()));
        let files = [("a.h", "int a;"), ("sub/b.h", "int b;")];
        let p = prelude_dir(&dir, &files, "h1").unwrap();
        std::fs::write(p.join("sub/b.h"), "garbage").unwrap();
        let p2 = prelude_dir(&dir, &files, "h1").unwrap();
        assert_eq!(
            std::fs::read_to_string(p2.join("sub/b.h")).unwrap(),
            "int b;"
        );
        std::fs::remove_file(p2.join("a.h")).unwrap();
        let p3 = prelude_dir(&dir, &files, "h1").unwrap();
        assert_eq!(std::fs::read_to_string(p3.join("a.h")).unwrap(), "int a;");
        let _ = std::fs::remove_dir_all(dir);
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
