#!/usr/bin/env bash
# Builds ingot into a local virtual environment and runs the whole test suite.
# This is the README's test command; .ci/run calls it. Needs: Rust (cargo), Python >= 3.9, a C++ compiler.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "maturin>=1.7,<2" "numpy>=1.24" pytest pytest-xdist hypothesis
# The real clients of the array API that tests/test_clients.py runs on ingot arrays (tested with
# scikit-learn 1.9.1, SciPy 1.17.1, array-api-compat 1.16.0, array-api-extra 0.11.5).
.venv/bin/python -m pip install -q "scikit-learn>=1.8,<1.10" "scipy>=1.16,<1.18" \
    "array-api-compat>=1.14,<1.17" "array-api-extra>=0.10,<0.12"
# Dask with ingot chunks (tests/test_dask.py; tested with dask and distributed 2025.12.0).
.venv/bin/python -m pip install -q "dask[array,distributed]>=2024.8,<2026.2"
# mypy: tests/test_stubs.py checks python/ingot/_ingot.pyi against the built module with
# mypy.stubtest (skipped where mypy is missing, so CI installs it here).
.venv/bin/python -m pip install -q "mypy>=1.10,<2"
VIRTUAL_ENV="$PWD/.venv" .venv/bin/maturin develop --release -q
.venv/bin/python -m pytest -q tests "$@"
# The clients' own suites: SciPy's and scikit-learn's array API tests with ingot as a backend
# (scripts/client_suites.py; the SciPy modules of its CI_SCIPY list), when no pytest arguments
# narrow the run.
if [ $# -eq 0 ]; then
    .venv/bin/python scripts/client_suites.py --scipy ci --sklearn --jobs 2
fi
