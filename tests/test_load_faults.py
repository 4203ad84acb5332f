"""Load and cache faults: damaged cache entries and prelude headers, unusable cache folders,
concurrent compiles, a missing compiler, concurrent Python threads, huge allocations, and a
short soak (benches/soak.py runs the long one).

The cache scenarios run in child processes with their own ``INGOT_CACHE_DIR``, so each one sees
a cold in-memory cache, as a new user process would.
"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import ingot
from conftest import DEVICE

CPU = ingot.Device("cpu")


def host(a):
    return np.asarray(a.to_device(CPU))


def kernel_source(tag: str) -> str:
    return textwrap.dedent(
        f"""
        #include <metal_stdlib>
        using namespace metal;
        // {tag}
        kernel void affine(device const float* x [[buffer(0)]], device float* y [[buffer(1)]],
                           constant float& a [[buffer(2)]], uint i [[thread_position_in_grid]]) {{
            y[i] = a * x[i] + 1.0f;
        }}
        """
    )


CHILD = """
import sys
import numpy as np
import ingot
src = sys.argv[1]
rng = np.random.default_rng()
x = rng.standard_normal(1000).astype(np.float32)
y = np.full(1000, np.nan, dtype=np.float32)
ingot.compile(src, device="cpu")["affine"](x, y, 0.5, grid=(1000,))
np.testing.assert_allclose(y, 0.5 * x.astype(np.float64) + 1.0, rtol=1e-6)
print("OK")
"""


def run_child(src: str, cache: Path | str, **extra_env: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, INGOT_CACHE_DIR=str(cache), **extra_env)
    env.pop("INGOT_CHECKED", None)
    return subprocess.run(
        [sys.executable, "-c", CHILD, src], env=env, capture_output=True, text=True, timeout=300
    )


def entries(cache: Path) -> list[Path]:
    return sorted((cache / "cpu").glob("*.so"))


def assert_ok(r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0 and r.stdout.strip().endswith("OK"), (r.stdout, r.stderr)


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty", "foreign", "unsealed"])
def test_damaged_cache_entries_are_recompiled(tmp_path, damage):
    src = kernel_source(f"damaged {damage} {uuid.uuid4()}")
    assert_ok(run_child(src, tmp_path))
    (so,) = entries(tmp_path)
    good = so.read_bytes()
    if damage == "truncate":
        so.write_bytes(good[: len(good) // 2])
    elif damage == "flip":
        b = bytearray(good)
        for k in range(100, len(b), 997):
            b[k] ^= 0x5A
        so.write_bytes(bytes(b))
    elif damage == "garbage":
        so.write_bytes(os.urandom(len(good)))
    elif damage == "empty":
        so.write_bytes(b"")
    elif damage == "foreign":
        other = kernel_source(f"other {uuid.uuid4()}")
        assert_ok(run_child(other, tmp_path))
        foreign = next(p for p in entries(tmp_path) if p != so)
        so.write_bytes(foreign.read_bytes())
    elif damage == "unsealed":
        # A plain shared object without the seal (an older ingot, or a copy by hand).
        so.write_bytes(good[:-40])
    assert_ok(run_child(src, tmp_path))
    assert so.read_bytes()[-8:] == b"INGOTSL1"


@pytest.mark.parametrize("header", ["metal_stdlib", "ingot/metal_stdlib.h", "ingot/cpu/runtime.h"])
def test_damaged_prelude_headers_are_restored(tmp_path, header):
    assert_ok(run_child(kernel_source(f"prelude {uuid.uuid4()}"), tmp_path))
    (prelude,) = (tmp_path / "cpu").glob("prelude-*")
    (prelude / header).write_text("#error damaged\nINGOT_FN garbage\n")
    # A new kernel compiles against the prelude folder again.
    assert_ok(run_child(kernel_source(f"after damage {uuid.uuid4()}"), tmp_path))
    assert "damaged" not in (prelude / header).read_text()


def test_missing_prelude_files_are_restored(tmp_path):
    assert_ok(run_child(kernel_source(f"prelude {uuid.uuid4()}"), tmp_path))
    (prelude,) = (tmp_path / "cpu").glob("prelude-*")
    (prelude / "metal_math").unlink()
    assert_ok(run_child(kernel_source(f"after removal {uuid.uuid4()}"), tmp_path))


@pytest.mark.parametrize("kind", ["not_a_directory", "cannot_be_created", "read_only"])
def test_unusable_cache_folder_works_in_memory_with_one_warning(tmp_path, kind):
    if kind == "not_a_directory":
        cache = tmp_path / "a_file"
        cache.write_text("not a folder")
    elif kind == "cannot_be_created":
        cache = Path("/proc/ingot-cache-cannot-exist")
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        cache = tmp_path / "ro"
        cache.mkdir()
        cache.chmod(0o555)
    script = CHILD.replace(
        'ingot.compile(src, device="cpu")["affine"](x, y, 0.5, grid=(1000,))',
        'for t in range(3):\n    ingot.compile(src + "//" + str(t), device="cpu")["affine"](x, y, 0.5, grid=(1000,))',
    )
    env = dict(os.environ, INGOT_CACHE_DIR=str(cache))
    r = subprocess.run(
        [sys.executable, "-c", script, kernel_source(str(uuid.uuid4()))],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert_ok(r)
    warnings = [l for l in r.stderr.splitlines() if "warning" in l]
    assert len(warnings) == 1 and "not writable" in warnings[0], r.stderr


def test_two_processes_compiling_the_same_new_kernel(tmp_path):
    for round_ in range(10):
        src = kernel_source(f"race {round_} {uuid.uuid4()}")
        env = dict(os.environ, INGOT_CACHE_DIR=str(tmp_path))
        procs = [
            subprocess.Popen([sys.executable, "-c", CHILD, src], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0 and out.strip() == "OK", (round_, out, err)
    # No temporary files are left behind.
    assert not [p for p in (tmp_path / "cpu").iterdir() if p.name.startswith(".tmp-")]


def test_missing_compiler_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("INGOT_CXX", "/nonexistent/bin/g++-none")
    with pytest.raises(ingot.CompileError) as e:
        ingot.compile(kernel_source(f"no compiler {uuid.uuid4()}"), device=CPU)
    assert "INGOT_CXX" in str(e.value) and "g++-none" in str(e.value)
    monkeypatch.setenv("INGOT_CXX", "/bin/false")
    with pytest.raises(ingot.CompileError) as e:
        ingot.compile(kernel_source(f"broken compiler {uuid.uuid4()}"), device=CPU)
    assert "INGOT_CXX" in str(e.value)


def test_eight_threads_launch_kernels_and_ops_concurrently():
    lib = ingot.compile(kernel_source("threads"), device=DEVICE)
    k = lib["affine"]

    def work(seed: int) -> int:
        rng = np.random.default_rng(seed)
        for it in range(25):
            n = int(rng.integers(1, 50_000))
            xh = rng.standard_normal(n).astype(np.float32)
            a = float(rng.standard_normal())
            x = ingot.asarray(xh, device=DEVICE)
            y = ingot.asarray(np.full(n, np.nan, dtype=np.float32), device=DEVICE)
            k(x, y, a, grid=(n,))
            got = host(y)
            np.testing.assert_allclose(got, a * xh.astype(np.float64) + 1.0, rtol=1e-5, atol=1e-5)
            s = float(ingot.sum(ingot.asarray(xh.astype(np.float64), device=DEVICE) * 2.0))
            assert s == pytest.approx(2.0 * float(np.sum(xh.astype(np.float64))), rel=1e-9, abs=1e-9)
        return seed

    seeds = [int(s) for s in np.random.SeedSequence().generate_state(8)]
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        assert sorted(pool.map(work, seeds)) == sorted(seeds)


@pytest.mark.parametrize("device", [str(d) for d in ingot.devices()])
def test_allocating_ten_terabytes_is_a_memory_error(device):
    with pytest.raises(MemoryError):
        ingot.empty((10**13 // 4,), dtype=ingot.float32, device=device)
    with pytest.raises(MemoryError):
        ingot.zeros((10**13,), dtype=ingot.uint8, device=device)
    # And the device still works.
    a = ingot.ones((1000,), dtype=ingot.float32, device=device)
    assert float(ingot.sum(a)) == 1000.0


def test_short_soak_has_flat_latency_and_memory():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benches"))
    import soak

    r = soak.run(launches=20_000, device=str(DEVICE), report=False)
    assert r["latency_ratio"] < 3.0, r
    assert r["rss_growth_mb"] < 64, r
