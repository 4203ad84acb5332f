#!/usr/bin/env bash
# A faster variant of gpu_build.sh for iterating on GPU performance: the wheel without LTO and
# only the named Rust test binaries (default: the CUDA ones), into .gpu/ (git-ignored).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target/gpuwheel}"
export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
rm -rf .gpu/wheels .gpu/bin && mkdir -p .gpu/bin .gpu/wheels
python3 -m venv .venv-gpu
.venv-gpu/bin/python -m pip install -q "maturin>=1.7,<2"
.venv-gpu/bin/maturin build --release -q -o .gpu/wheels
for t in ${RUST_TESTS:-cuda_runtime cuda_kernels gpu_ops}; do
  exe=$(cargo test --release -p ingot --test "$t" --no-run --message-format=json 2>/dev/null \
    | python3 -c 'import json,sys
for l in sys.stdin:
    try: m=json.loads(l)
    except ValueError: continue
    if m.get("executable") and m.get("profile",{}).get("test"): print(m["executable"])' | tail -n 1)
  cp "$exe" ".gpu/bin/$t" && strip ".gpu/bin/$t" && echo "test binary: $t"
done
du -sh .gpu
