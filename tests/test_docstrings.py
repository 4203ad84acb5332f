"""Every public function of the ingot namespace (and of ``ingot.linalg`` and ``ingot.random``)
has a docstring with an example, and the examples run and print what they show.

The examples run as doctests on the default device, with ``ingot``, ``xp`` (ingot) and ``np``
(NumPy) imported, and with ``...`` matching any text (so ``2.718...`` stands for a float's
remaining digits) and runs of whitespace compared as one space. The examples show the CPU's
output; on another default device (``INGOT_DEVICE=cuda``) the ``device='cuda:0'`` that an
array's repr adds is not compared.
"""

from __future__ import annotations

import doctest
import inspect
import re

import numpy as np
import pytest

import ingot

NAMESPACES = {"ingot": ingot, "ingot.linalg": ingot.linalg, "ingot.random": ingot.random}


def public_functions():
    """(qualified name, function) of the namespaces' public functions, aliases once."""
    seen = set()
    out = []
    for prefix, ns in NAMESPACES.items():
        names = getattr(ns, "__all__", None) or dir(ns)
        for name in sorted(set(names)):
            if name.startswith("_") and name != "__array_namespace_info__":
                continue
            obj = getattr(ns, name, None)
            if not (inspect.isfunction(obj) or inspect.isbuiltin(obj)):
                continue
            if id(obj) in seen:
                continue
            seen.add(id(obj))
            out.append((f"{prefix}.{name}", obj))
    return out


FUNCTIONS = public_functions()


def test_the_walk_finds_the_namespace():
    names = {n for n, _ in FUNCTIONS}
    assert {"ingot.compile", "ingot.exp", "ingot.sum", "ingot.asarray", "ingot.translate",
            "ingot.linalg.solve", "ingot.random.default_rng"} <= names
    assert len(names) > 150


def test_help_of_compile_shows_an_example():
    doc = ingot.compile.__doc__ or ""
    assert ">>>" in doc and "ingot.compile(" in doc


_NUMBER = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?")


class _AnyDevice(doctest.OutputChecker):
    """Compares an example's output without the ``device=...`` of non-CPU arrays, and its
    floats to 1e-12 relative (a GPU's ``log10(0.1)`` may be ``-0.9999999999999999``: its math
    library is within an ulp or two, not correctly rounded)."""

    def check_output(self, want: str, got: str, optionflags: int) -> bool:
        got = re.sub(r",\s*device='[a-z]+:\d+'", "", got)
        if super().check_output(want, got, optionflags):
            return True
        if _NUMBER.sub("#", want) != _NUMBER.sub("#", got):
            return False
        w = [float(v) for v in _NUMBER.findall(want)]
        g = [float(v) for v in _NUMBER.findall(got)]
        return len(w) == len(g) and all(abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1e-300)
                                        for a, b in zip(w, g))


@pytest.mark.parametrize("name,fn", FUNCTIONS, ids=[n for n, _ in FUNCTIONS])
def test_docstring_has_a_working_example(name, fn):
    doc = inspect.getdoc(fn) or ""
    assert doc.strip(), f"{name} has no docstring"
    assert ">>>" in doc, f"{name}'s docstring has no example"
    globs = {"ingot": ingot, "xp": ingot, "np": np}
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    runner = doctest.DocTestRunner(checker=_AnyDevice(),
                                   optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    out = []
    runner.run(test, out=out.append)
    assert runner.failures == 0, "".join(out)
