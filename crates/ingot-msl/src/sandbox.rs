//! The sandbox rules: what a kernel may not contain because a Metal kernel cannot do it.
//!
//! On the CPU a translated kernel is native code in the user's process, so ingot rejects, with a
//! located error, the constructs that reach the host: inline assembly (`asm`, `__asm__`),
//! `extern` declarations (`extern "C"` symbols of the process), `#include` of anything but the
//! Metal headers and headers found in the include directories (no `<stdio.h>`, no `..` or
//! absolute paths), the host C/POSIX functions (`system`, `fopen`, `malloc`, `dlopen`,
//! `syscall`, ...), the `std` namespace, the compiler's builtins (`__builtin_*` but the integer
//! bit builtins, `__sync_*`, `__atomic_*`) and load-time code (`__attribute__((constructor))`). What remains is described
//! in `docs/sandbox.md`: it is still native code.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::lexer::{lex, significant, TokenKind};

/// The integer bit builtins Metal's compiler (clang) accepts and libraries call (MLX's fft.h:
/// `__builtin_ctz`): pure functions of their arguments, defined by the prelude where the
/// compiler lacks them (`ingot/detail/builtins.h`), so allowed in a kernel.
fn bit_builtin(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("__builtin_") else {
        return false;
    };
    let suffixed = |p: &str, suffixes: &[&str]| {
        rest.strip_prefix(p)
            .is_some_and(|tail| suffixes.contains(&tail))
    };
    let int_types = ["", "l", "ll"];
    let widths = ["8", "16", "32", "64"];
    ["ctz", "clz"]
        .iter()
        .any(|p| suffixed(p, &["", "l", "ll", "s"]))
        || ["popcount", "ffs", "parity", "clrsb"]
            .iter()
            .any(|p| suffixed(p, &int_types))
        || ["bitreverse", "rotateleft", "rotateright"]
            .iter()
            .any(|p| suffixed(p, &widths))
        || suffixed("bswap", &widths[1..])
}

/// Host functions a kernel may not call (C library, POSIX, dynamic loading).
const HOST_FUNCTIONS: &[&str] = &[
    "system",
    "popen",
    "pclose",
    "fork",
    "vfork",
    "execl",
    "execlp",
    "execle",
    "execv",
    "execve",
    "execvp",
    "execvpe",
    "posix_spawn",
    "posix_spawnp",
    "open",
    "openat",
    "creat",
    "close",
    "read",
    "write",
    "pread",
    "pwrite",
    "lseek",
    "fopen",
    "freopen",
    "fdopen",
    "fclose",
    "fread",
    "fwrite",
    "fgets",
    "fputs",
    "fprintf",
    "printf",
    "sprintf",
    "snprintf",
    "vprintf",
    "vfprintf",
    "vsnprintf",
    "puts",
    "putchar",
    "getchar",
    "scanf",
    "fscanf",
    "sscanf",
    "perror",
    "remove",
    "rename",
    "unlink",
    "unlinkat",
    "rmdir",
    "mkdir",
    "chmod",
    "chown",
    "chdir",
    "symlink",
    "link",
    "truncate",
    "ftruncate",
    "mmap",
    "munmap",
    "mprotect",
    "madvise",
    "brk",
    "sbrk",
    "malloc",
    "calloc",
    "realloc",
    "free",
    "aligned_alloc",
    "posix_memalign",
    "alloca",
    "dlopen",
    "dlsym",
    "dlclose",
    "dlerror",
    "syscall",
    "ioctl",
    "fcntl",
    "kill",
    "raise",
    "signal",
    "sigaction",
    "exit",
    "_exit",
    "_Exit",
    "abort",
    "atexit",
    "at_quick_exit",
    "quick_exit",
    "getenv",
    "setenv",
    "putenv",
    "unsetenv",
    "socket",
    "connect",
    "bind",
    "listen",
    "accept",
    "send",
    "recv",
    "sendto",
    "recvfrom",
    "gethostbyname",
    "getaddrinfo",
    "setjmp",
    "longjmp",
    "sigsetjmp",
    "siglongjmp",
    "pthread_create",
    "pthread_kill",
    "pthread_exit",
    "sleep",
    "usleep",
    "nanosleep",
    "time",
    "clock_gettime",
    "gettimeofday",
    "getpid",
    "getppid",
    "getuid",
    "setuid",
    "ptrace",
    "prctl",
    "memfd_create",
    "dup",
    "dup2",
    "pipe",
    "wait",
    "waitpid",
    "opendir",
    "readdir",
    "stat",
    "fstat",
    "lstat",
    "access",
];

/// Attributes that make code run at load time or change linkage.
const LOAD_ATTRIBUTES: &[&str] = &[
    "constructor",
    "destructor",
    "section",
    "alias",
    "ifunc",
    "weak",
    "weakref",
    "visibility",
    "init_priority",
    "used",
];

/// Checks `source` against the sandbox rules; the error is located in the user's file.
/// `headers` are the include names the target's prelude provides (`metal_stdlib`, ...).
pub fn check(source: &str, file: &str, include_dirs: &[PathBuf], headers: &[&str]) -> Result<()> {
    check_with_defines(source, file, include_dirs, headers, &Default::default())
}

/// [`check`] with the user's `-D` defines seen by the preprocessor (as the translation sees
/// them: a file may `#error` without one).
pub fn check_with_defines(
    source: &str,
    file: &str,
    include_dirs: &[PathBuf],
    headers: &[&str],
    defines: &std::collections::BTreeMap<String, String>,
) -> Result<()> {
    // Include names first, on the raw text: the preprocessor joins them to the include dirs.
    for t in significant(&lex(source, file, false)?) {
        if t.kind != TokenKind::Preprocessor {
            continue;
        }
        if let Some(name) = include_name(t.text(source)) {
            let escapes = name.starts_with('/')
                || name.starts_with('\\')
                || name.split(['/', '\\']).any(|c| c == "..")
                || name.contains(':');
            if escapes {
                return Err(Error::new(
                    file,
                    t.line,
                    t.col,
                    format!(
                        "#include \"{name}\": a kernel may include only headers inside its include directories (no absolute paths, no `..`)"
                    ),
                ));
            }
        }
    }
    let pre = crate::preprocess::preprocess_with_defines(source, file, include_dirs, defines)?;
    let text: &str = &pre.text;
    let toks = significant(&lex(text, file, false).map_err(|e| pre.map.fix(e))?);
    let err = |i: usize, msg: String| {
        let t = toks[i];
        pre.map.fix(Error::new(file, t.line, t.col, msg))
    };
    let txt = |i: usize| toks.get(i).map(|t| t.text(text)).unwrap_or("");
    for (i, t) in toks.iter().enumerate() {
        match t.kind {
            TokenKind::Preprocessor => {
                if let Some(name) = include_name(t.text(text)) {
                    if !headers.contains(&name.as_str()) {
                        return Err(err(
                            i,
                            format!(
                                "#include <{name}>: not a Metal header and not found in the include directories; a kernel may include only the Metal headers (metal_stdlib, ...) and its own headers"
                            ),
                        ));
                    }
                }
            }
            TokenKind::Ident => {
                let s = t.text(text);
                let member = i > 0 && matches!(txt(i - 1), "." | "->");
                if member {
                    continue;
                }
                let scoped = i > 0 && txt(i - 1) == "::";
                let called = txt(i + 1) == "(";
                let msg = match s {
                    "asm" | "__asm" | "__asm__" | "_asm" => {
                        Some("inline assembly is not allowed in a kernel".to_string())
                    }
                    "extern" => Some(
                        "`extern` is not allowed in a kernel: it declares symbols of the host process".to_string(),
                    ),
                    "std" if txt(i + 1) == "::" && !scoped => Some(
                        "the C++ standard library (`std::`) is not available in a kernel (Metal has `metal::`)".to_string(),
                    ),
                    "__attribute__" | "__attribute" => {
                        let end = (i + 1..toks.len().min(i + 64))
                            .take_while(|&k| txt(k) != ";" && txt(k) != "{")
                            .find(|&k| LOAD_ATTRIBUTES.contains(&txt(k)));
                        end.map(|k| {
                            format!(
                                "__attribute__(({})) is not allowed in a kernel",
                                txt(k)
                            )
                        })
                    }
                    _ if s.starts_with("__builtin_") && bit_builtin(s) => None,
                    _ if s.starts_with("__builtin_")
                        || s.starts_with("__sync_")
                        || s.starts_with("__atomic_")
                        || s.starts_with("__syscall") =>
                    {
                        Some(format!(
                            "`{s}` is a host compiler builtin, not available in a kernel"
                        ))
                    }
                    _ if called && !scoped && HOST_FUNCTIONS.contains(&s) && !declared(&toks, text, s) => {
                        Some(format!(
                            "`{s}` is a host function: a kernel may call only its own functions and the Metal standard library"
                        ))
                    }
                    _ => None,
                };
                if let Some(m) = msg {
                    return Err(err(i, m));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// The header name of an `#include` directive (`<a/b.h>` or `"a/b.h"`), if it is one.
fn include_name(directive: &str) -> Option<String> {
    let body = directive.trim_start().strip_prefix('#')?.trim_start();
    let rest = body
        .strip_prefix("include_next")
        .or_else(|| body.strip_prefix("include"))
        .or_else(|| body.strip_prefix("import"))?
        .trim();
    let rest = rest.trim_end_matches(';').trim();
    let (open, close) = match rest.chars().next()? {
        '<' => ('<', '>'),
        '"' => ('"', '"'),
        _ => return Some(rest.to_string()),
    };
    let inner = rest.strip_prefix(open)?;
    let end = inner.find(close)?;
    Some(inner[..end].to_string())
}

/// True when the file defines a function or variable named `name` itself (a user helper named
/// `read` is the user's, not the C library's).
fn declared(toks: &[crate::lexer::Token], text: &str, name: &str) -> bool {
    toks.windows(3).any(|w| {
        w[1].text(text) == name
            && matches!(w[0].kind, TokenKind::Ident)
            && !matches!(w[0].text(text), "return" | "else" | "case" | "do")
            && matches!(w[2].text(text), "(" | "=" | ";" | "[" | ",")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &[&str] = &["metal_stdlib"];

    fn rejects(src: &str, what: &str) {
        match check(src, "k.metal", &[], H) {
            Err(e) => assert!(e.message.contains(what), "{what}: {e}"),
            Ok(()) => panic!("accepted: {src}"),
        }
    }

    #[test]
    fn host_constructs_are_rejected() {
        let k = "#include <metal_stdlib>\nusing namespace metal;\n";
        rejects(
            &format!("{k}kernel void f(device int* x) {{ asm(\"nop\"); }}"),
            "assembly",
        );
        rejects(
            &format!("{k}kernel void f(device int* x) {{ __asm__ volatile(\"\"); }}"),
            "assembly",
        );
        rejects(
            &format!("{k}extern \"C\" int system(const char*);"),
            "extern",
        );
        rejects("#include <stdio.h>\nkernel void f() {}", "stdio.h");
        rejects("#include <cstdlib>\nkernel void f() {}", "cstdlib");
        rejects("#include \"../../etc/passwd\"\nkernel void f() {}", "..");
        rejects("#include \"/etc/passwd\"\nkernel void f() {}", "absolute");
        rejects(
            &format!("{k}kernel void f(device int* x) {{ system(\"ls\"); }}"),
            "host function",
        );
        rejects(
            &format!("{k}kernel void f(device int* x) {{ x[0] = (int)(long)malloc(4); }}"),
            "malloc",
        );
        rejects(
            &format!("{k}kernel void f(device int* x) {{ x[0] = (int)(long)__builtin_frame_address(0); }}"),
            "builtin",
        );
        rejects(
            &format!("{k}kernel void f(device int* x) {{ x[0] = __builtin_popcountx(3); }}"),
            "builtin",
        );
        rejects(
            &format!("{k}kernel void f(device int* x) {{ std::abort(); }}"),
            "std::",
        );
        rejects(
            &format!("{k}__attribute__((constructor)) void g() {{}}\nkernel void f() {{}}"),
            "constructor",
        );
        // Macros are expanded first.
        rejects(
            &format!("#define RUN(c) system(c)\n{k}kernel void f() {{ RUN(\"ls\"); }}"),
            "host function",
        );
    }

    #[test]
    fn bit_builtins_are_allowed() {
        for n in [
            "__builtin_ctz",
            "__builtin_ctzll",
            "__builtin_clzs",
            "__builtin_popcountl",
            "__builtin_ffs",
            "__builtin_ffsll",
            "__builtin_parity",
            "__builtin_clrsbll",
            "__builtin_bswap16",
            "__builtin_bitreverse8",
            "__builtin_rotateright64",
        ] {
            assert!(bit_builtin(n), "{n}");
        }
        for n in [
            "__builtin_ctzx",
            "__builtin_ffss",
            "__builtin_bswap8",
            "__builtin_trap",
            "__builtin_frame_address",
            "__builtin_popcountlll",
            "ctz",
        ] {
            assert!(!bit_builtin(n), "{n}");
        }
        let src = "#include <metal_stdlib>\nkernel void f(device int* x) { x[0] = __builtin_ctz(8u) + __builtin_popcountll(3ull); }";
        check(src, "k.metal", &[], H).unwrap();
    }

    #[test]
    fn metal_code_passes() {
        let ok = "#include <metal_stdlib>\nusing namespace metal;\nfloat read(device const float* p, uint i) { return p[i]; }\nkernel void f(device float* x [[buffer(0)]], uint i [[thread_position_in_grid]]) {\n  x[i] = read(x, i) + exp(x[i]) + metal::max(x[i], 0.0f);\n}\n";
        check(ok, "k.metal", &[], H).unwrap();
    }

    #[test]
    fn errors_are_located() {
        let e = check(
            "#include <metal_stdlib>\n\nkernel void f() { asm(\"\"); }",
            "k.metal",
            &[],
            H,
        )
        .unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("k.metal", 3));
    }
}
