"""The hand-written stubs of the native module match it (mypy.stubtest; skipped without mypy)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytest.importorskip("mypy")


def test_native_module_stubs_match_the_runtime():
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", "ingot._ingot"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
