#!/usr/bin/env bash
# Builds, on this (CPU-only) machine, everything a GPU run needs, into .gpu/ (git-ignored):
# the abi3 wheel, the Rust test binaries in release mode, and the CUDA translations of the
# ingot-msl corpus. The device machine has no Rust toolchain: it runs what is built here
# (scripts/gpu_run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu/bin .gpu/wheels .gpu/corpus
python3 -m venv .venv-gpu
.venv-gpu/bin/python -m pip install -q "maturin>=1.7,<2"
.venv-gpu/bin/maturin build --release -q -o .gpu/wheels
cargo test --release -p ingot --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, sys, shutil, os
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    exe = m.get("executable")
    if m.get("reason") == "compiler-artifact" and exe and m.get("profile", {}).get("test"):
        name = m["target"]["name"] + ("-lib" if m["target"]["kind"] == ["lib"] else "")
        shutil.copy(exe, os.path.join(".gpu/bin", name))
        print("test binary:", name)
'
strip .gpu/bin/* || true
INGOT_MSL_EMIT_CUDA="$PWD/.gpu/corpus" cargo test --release -p ingot-msl --test corpus -q >/dev/null 2>&1 || true
cp crates/ingot-msl/tests/nvrtc_check.py .gpu/ 2>/dev/null || true
du -sh .gpu
