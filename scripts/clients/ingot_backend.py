"""A pytest plugin that adds ingot to the array API backends of SciPy's and scikit-learn's own
test suites, at run time, without touching their code (issue #35).

Both projects hard-code the namespaces they test:
- SciPy: ``scipy/conftest.py`` builds ``xp_available_backends`` and the ``xp`` fixture from it
  when it is imported. When that conftest registers, this plugin re-creates the ``xp`` fixture
  with ingot among its parameters (before pytest reads the conftest's fixtures).
- scikit-learn: ``sklearn.utils._array_api.yield_namespaces`` lists the namespaces that
  ``yield_namespace_device_dtype_combinations`` parametrizes tests with; this plugin replaces it
  at configure time, before any test module is imported.

``INGOT_CLIENT_BACKENDS`` chooses the backends (comma-separated ids, default ``ingot``; for
example ``ingot,array_api_strict`` to compare with the strict reference). Arrays are made on the
device ``INGOT_DEVICE`` names (default: the CPU), through ``ingot.set_default_device``.

Use: ``python -m pytest -p ingot_backend --pyargs scipy.special -m array_api_backends``
with ``scripts/clients`` on ``PYTHONPATH`` (``scripts/client_suites.py`` does this).
"""

from __future__ import annotations

import os

import pytest

SCIPY_CONFTEST = "scipy.conftest"


def _wanted() -> list:
    return [b.strip() for b in os.environ.get("INGOT_CLIENT_BACKENDS", "ingot").split(",") if b.strip()]


def _ingot():
    import ingot

    device = os.environ.get("INGOT_DEVICE")
    if device:
        ingot.set_default_device(device)
    return ingot


def pytest_configure(config):
    os.environ.setdefault("SCIPY_ARRAY_API", "1")
    try:
        import sklearn.utils._array_api as skapi
    except ImportError:
        return
    wanted = _wanted()
    original = skapi.yield_namespaces

    def yield_namespaces(include_numpy_namespaces=True):
        if "ingot" in wanted:
            _ingot()
            yield "ingot"
        for name in original(include_numpy_namespaces=include_numpy_namespaces):
            if name in wanted:
                yield name

    skapi.yield_namespaces = yield_namespaces


@pytest.hookimpl(tryfirst=True)
def pytest_plugin_registered(plugin, manager):
    if getattr(plugin, "__name__", None) != SCIPY_CONFTEST:
        return
    wanted = _wanted()
    backends = [p for p in plugin.xp_available_backends if p.id in wanted]
    if "ingot" in wanted:
        backends.insert(0, pytest.param(_ingot(), id="ingot", marks=pytest.mark.array_api_backends))
    plugin.xp_known_backends.add("ingot")
    plugin.xp_available_backends[:] = backends
    function = plugin.xp._get_wrapped_function()
    plugin.xp = pytest.fixture(params=backends)(function)


def pytest_collection_modifyitems(config, items):
    """ingot is an eager library: tests SciPy runs on lazy backends only (it lists every eager
    backend it knows as skipped) are skipped for ingot too."""
    for item in items:
        spec = getattr(item, "callspec", None)
        if spec is None or "ingot" not in spec.id.split("-"):
            continue
        for m in item.iter_markers("skip_xp_backends"):
            if "lazy backends only" in str(m.kwargs.get("reason", "")):
                item.add_marker(pytest.mark.skip(reason="lazy backends only (ingot is eager)"))
                break
