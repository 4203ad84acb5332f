"""Shared fixtures and helpers of the Python test suite.

Tests run on the device that ``INGOT_DEVICE`` names (default: the CPU), so the same suite checks
CUDA and Metal later. Random data comes from a NumPy generator seeded with a fresh seed per run,
printed in the report header and in every failure; set ``INGOT_TEST_SEED`` to replay a run.
"""

from __future__ import annotations

import os
import random
import zlib

# SciPy reads this once, at import: its array API support (tests/test_clients.py) must be on
# before any test module imports SciPy or scikit-learn.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

import ingot

settings.register_profile(
    "ingot",
    max_examples=int(os.environ.get("INGOT_HYPOTHESIS_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.load_profile("ingot")

SEED = int(os.environ.get("INGOT_TEST_SEED", random.SystemRandom().randrange(2**32)))
DEVICE = ingot.Device(os.environ.get("INGOT_DEVICE", "cpu") or "cpu")
ON_CPU = DEVICE.kind == "cpu"

FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
ALL_DTYPES = ["bool"] + INT_DTYPES + FLOAT_DTYPES
NUMPY_DTYPES = [d for d in ALL_DTYPES if d != "bfloat16"]

cpu_only = pytest.mark.skipif(not ON_CPU, reason="zero-copy NumPy interop exists on the CPU only")
needs_gpu = pytest.mark.skipif(ON_CPU, reason="needs INGOT_DEVICE set to a GPU (cuda, metal)")


def pytest_report_header(config):
    return f"ingot {ingot.__version__}, device {DEVICE}, INGOT_TEST_SEED={SEED}"


@pytest.fixture
def rng(request):
    """A generator seeded from the run seed and the test's name; the seed shows on failure."""
    seed = (SEED + zlib.crc32(request.node.nodeid.encode())) % 2**32
    request.node.user_properties.append(("seed", seed))
    return np.random.default_rng(seed)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        seeds = [v for k, v in item.user_properties if k == "seed"]
        rep.sections.append(("ingot seed", f"INGOT_TEST_SEED={SEED} (test rng seed {seeds})"))


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype used to hold data of an ingot dtype (bfloat16 data lives in float32)."""
    return np.dtype("float32" if name == "bfloat16" else name)


def to_bf16_exact(a: np.ndarray) -> np.ndarray:
    """Rounds float32 values to the nearest bfloat16 (ties to even), kept as float32."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def random_data(rng, shape, dtype: str, low=None, high=None) -> np.ndarray:
    """Random values of ``dtype`` (bfloat16 as exactly representable float32 values).

    Floats are uniform in [low, high) (default [-10, 10)); integers cover a modest range that
    does not overflow in products unless the caller widens it; bool is a coin flip.
    """
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in INT_DTYPES:
        info = np.iinfo(dtype)
        lo = max(info.min, -100 if low is None else low)
        hi = min(info.max, 100 if high is None else high)
        return rng.integers(lo, hi, size=shape, endpoint=True).astype(dtype)
    lo = -10.0 if low is None else low
    hi = 10.0 if high is None else high
    a = rng.uniform(lo, hi, size=shape)
    if dtype == "bfloat16":
        return to_bf16_exact(a.astype(np.float32))
    return a.astype(dtype)


def make(a: np.ndarray, dtype: str = None, device=None) -> ingot.Array:
    """An ingot array on the test device holding ``a`` (converted to ``dtype`` when given)."""
    x = ingot.asarray(a, device=device or DEVICE)
    if dtype is not None and x.dtype != dtype:
        x = x.astype(dtype)
    return x


def to_np(x: ingot.Array) -> np.ndarray:
    """A host NumPy copy of ``x`` (bfloat16 as float32)."""
    if x.dtype == ingot.bfloat16:
        x = x.astype(ingot.float32)
    return np.array(np.asarray(x.to_device("cpu")))


EPS = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def tolerance(dtype: str, kind: str = "arith") -> dict:
    """Tolerances per dtype: correctly rounded arithmetic within 1 ulp of the float64 reference,
    transcendental functions within 4 ulp (float32/float64), the inverse hyperbolic functions
    ("composite": Rust's std formulas lose a few ulp near the domain edges) within 16 ulp;
    float16 1e-3 and bfloat16 1e-2."""
    if dtype == "float16":
        return dict(rtol=1e-3 if kind == "arith" else 2e-3, atol=1e-3 if kind == "arith" else 2e-3)
    if dtype == "bfloat16":
        return dict(rtol=1e-2, atol=1e-2)
    eps = EPS[dtype]
    ulps = {"arith": 1, "transcendental": 4, "composite": 16}[kind]
    return dict(rtol=ulps * eps, atol=ulps * eps)


def assert_close(actual: ingot.Array, expected: np.ndarray, dtype: str, kind: str = "arith", msg: str = ""):
    """Checks shape, dtype and values (NaN in the same places, infinities with the same sign)."""
    assert actual.shape == tuple(expected.shape), (actual.shape, expected.shape, msg)
    got = to_np(actual)
    if dtype in FLOAT_DTYPES:
        np.testing.assert_allclose(got.astype(np.float64), np.asarray(expected, dtype=np.float64),
                                   equal_nan=True, err_msg=msg, **tolerance(dtype, kind))
    else:
        np.testing.assert_array_equal(got, expected, err_msg=msg)


def check_interpreter_alive():
    """A trivial computation after an error: the interpreter and the library still work."""
    x = ingot.asarray([1, 2, 3], device=DEVICE)
    assert x.shape == (3,)
    assert to_np(x).tolist() == [1, 2, 3]
