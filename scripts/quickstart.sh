#!/usr/bin/env bash
# Builds ingot into a local virtual environment and runs the quickstart on the default device.
# This is the README's quickstart command. Needs: Rust (cargo), Python >= 3.9, a C++ compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "maturin>=1.7,<2" "numpy>=1.24"
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
.venv/bin/python examples/quickstart.py
