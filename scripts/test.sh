#!/usr/bin/env bash
# Builds ingot into a local virtual environment and runs the whole test suite.
# This is the README's test command; .ci/run calls it. Needs: Rust (cargo), Python >= 3.9, a C++ compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "maturin>=1.7,<2" "numpy>=1.24" pytest hypothesis
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
.venv/bin/python -m pytest -q tests "$@"
