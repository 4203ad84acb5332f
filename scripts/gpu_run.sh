#!/usr/bin/env bash
# Runs on the GPU machine (see scripts/gpu_build.sh): installs the wheel built here, runs the
# Rust tests against the GPU, the pytest suite on CUDA, the NVRTC check of the corpus and the
# CUDA benchmark. Logs go to $OUT (or ./gpu-out).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu-out}"; mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 INGOT_TEST_CUDA=1 INGOT_CACHE_DIR=/tmp/ingot-cache
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
pip install -q --no-deps --target /tmp/site .gpu/wheels/*.whl && export PYTHONPATH=/tmp/site
step() { echo "== $1"; }
if [ "${SKIP_RUST:-0}" != 1 ]; then
  step "rust tests on cuda"
  for name in ${RUST_TESTS:-cuda_runtime cuda_kernels gpu_ops}; do
    t=".gpu/bin/$name"; [ -x "$t" ] || { echo "-- $t missing"; continue; }
    echo "-- $t"; timeout "${RUST_TIMEOUT:-240}" "$t" -q 2>&1 | tail -n 40
  done 2>&1 | tee "$OUT/rust.log" | grep -E "^--|test result|FAILED|panicked|error" | head -60
fi
if [ -d .gpu/corpus ] && [ -f .gpu/nvrtc_check.py ] && [ "${SKIP_NVRTC:-0}" != 1 ]; then
  step "nvrtc corpus"
  python3 .gpu/nvrtc_check.py .gpu/corpus 2>&1 | tee "$OUT/nvrtc.log" | tail -n 15
fi
if [ "${SKIP_PYTEST:-0}" != 1 ]; then
  step "pytest on cuda"
  INGOT_DEVICE=cuda timeout "${PYTEST_TIMEOUT:-300}" python3 -m pytest -q --timeout=60 -rf -p no:cacheprovider tests ${PYTEST_ARGS:-} 2>&1 | tee "$OUT/pytest.log" | tail -n 30
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  step "benchmark"
  INGOT_DEVICE=cuda timeout "${BENCH_TIMEOUT:-240}" python3 benches/bench_cuda.py ${BENCH_ARGS:-} --out "$OUT" 2>&1 | tee "$OUT/bench.log" | tail -n 30
fi
