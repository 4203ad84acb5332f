//! Compiles `csrc/guard.c`, the CPU kernel fault trampoline (setjmp cannot be called from Rust).

fn main() {
    println!("cargo:rerun-if-changed=csrc/guard.c");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os == "linux" || target_os == "macos" || target_os == "freebsd" {
        cc::Build::new()
            .file("csrc/guard.c")
            .warnings(true)
            .compile("ingot_guard");
        println!("cargo:rustc-cfg=ingot_guard");
    }
    println!("cargo:rustc-check-cfg=cfg(ingot_guard)");
}
