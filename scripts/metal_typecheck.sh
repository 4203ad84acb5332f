#!/usr/bin/env bash
# Type-checks the Metal backend (crates/ingot/src/runtime/metal) on Linux.
#
# The Metal backend only builds for macOS, but everything except linking works on Linux:
#   - objc2-metal 0.3.2 is copied from the cargo registry and its
#     `#[link(name = "Metal", kind = "framework")]` attribute removed (frameworks only exist on
#     Apple targets; this is the one error on Linux);
#   - objc2 and block2 are built for the GNUstep runtime (`gnustep-2-1`, through ingot's
#     `metal-gnustep` feature); nothing is linked, so no GNUstep installation is needed;
#   - `--cfg ingot_metal_typecheck` makes `runtime::metal` (and the Python bindings' `metal`
#     module) compile on a non-macOS target.
# The workspace is copied to target/metal-typecheck/ws so that the patch never touches the real
# Cargo.lock, and a separate CARGO_TARGET_DIR keeps normal builds' caches intact.
# Runs `cargo check` and `cargo clippy -D warnings` of ingot (lib and tests) and of the Python
# bindings ingot-python (all targets; pyo3 needs `python3` on PATH, or PYO3_PYTHON) with the
# feature.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.3.2
work="$root/target/metal-typecheck"
mkdir -p "$work"

# 1. The registry copy of objc2-metal (downloaded into ~/.cargo by `cargo fetch` if missing).
registry="${CARGO_HOME:-$HOME/.cargo}/registry/src"
find_src() { ls -d "$registry"/*/objc2-metal-$version 2>/dev/null | head -n 1 || true; }
src=$(find_src)
if [ -z "$src" ]; then
    fetch="$work/fetch"
    mkdir -p "$fetch/src"
    cat > "$fetch/Cargo.toml" <<TOML
[package]
name = "ingot-metal-fetch"
version = "0.0.0"
edition = "2021"
publish = false
[dependencies]
objc2-metal = "=$version"
[workspace]
TOML
    : > "$fetch/src/lib.rs"
    (cd "$fetch" && cargo fetch --quiet)
    src=$(find_src)
fi
if [ -z "$src" ]; then
    echo "metal_typecheck: objc2-metal $version not found in $registry" >&2
    exit 1
fi

# 2. The patched copy.
patched="$work/objc2-metal"
rm -rf "$patched"
cp -R "$src" "$patched"
chmod -R u+w "$patched"
grep -rl 'kind = "framework"' "$patched/src" | while read -r f; do
    sed -i.bak -e '/#\[link(name = "[A-Za-z]*", kind = "framework")\]/d' "$f"
    rm -f "$f.bak"
done
if grep -rq 'kind = "framework"' "$patched/src"; then
    echo "metal_typecheck: a framework link attribute is left in $patched" >&2
    exit 1
fi

# 3. A copy of the workspace (sources and manifests only).
ws="$work/ws"
mkdir -p "$ws"
rm -rf "$ws/crates"
tar -C "$root" -cf - \
    --exclude='target' --exclude='.git' --exclude='__pycache__' --exclude='*.so' \
    --exclude='crates/ingot-msl/fuzz' \
    Cargo.toml Cargo.lock crates | tar -C "$ws" -xf -

# 4. Check and lint.
export CARGO_TARGET_DIR="$work/target"
export RUSTFLAGS="${RUSTFLAGS:-} --cfg ingot_metal_typecheck"
patch_arg="patch.crates-io.objc2-metal.path=\"$patched\""
cd "$ws"
echo "== metal type-check: cargo check (objc2-metal $version without framework links, GNUstep runtime)"
cargo check --config "$patch_arg" -p ingot --no-default-features --features metal-gnustep --lib --tests
echo "== metal type-check: cargo clippy"
cargo clippy --config "$patch_arg" -p ingot --no-default-features --features metal-gnustep --lib --tests -- -D warnings
echo "== metal type-check: cargo clippy with the cuda backend too"
cargo clippy --config "$patch_arg" -p ingot --features metal-gnustep --lib --tests -- -D warnings
# The bindings: NumPy <-> Metal without copies (crates/ingot-python/src/metal.rs and its callers).
echo "== metal type-check: cargo check of the Python bindings (ingot-python)"
cargo check --config "$patch_arg" -p ingot-python --no-default-features --features metal-gnustep --all-targets
echo "== metal type-check: cargo clippy of the Python bindings"
cargo clippy --config "$patch_arg" -p ingot-python --no-default-features --features metal-gnustep --all-targets -- -D warnings
echo "== metal type-check: cargo clippy of the Python bindings with their cuda interop too"
cargo clippy --config "$patch_arg" -p ingot-python --features metal-gnustep --all-targets -- -D warnings
echo "metal type-check passed"
