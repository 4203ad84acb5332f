"""Dtype objects, the promotion table, finfo/iinfo, can_cast, isdtype."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pytest

import ingot
from conftest import ALL_DTYPES, INT_DTYPES, NUMPY_DTYPES

DT = {name: getattr(ingot, name) for name in ALL_DTYPES}


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_dtype_objects(name):
    d = DT[name]
    assert d.name == name
    assert str(d) == name
    assert repr(d) == f"ingot.{name}"
    assert d == d and d == name and not (d != name)
    assert hash(d) == hash(name)
    assert ingot.DType(name) is d
    assert pickle.loads(pickle.dumps(d)) is d
    assert {d: 1}[name] == 1
    assert d != None  # noqa: E711
    assert d != 3.5
    assert d.itemsize == (np.dtype(name).itemsize if name != "bfloat16" else 2)


@pytest.mark.parametrize("name", NUMPY_DTYPES)
def test_dtypes_compare_with_numpy(name):
    d = DT[name]
    assert d == np.dtype(name)
    assert np.dtype(name) == d
    assert d == getattr(np, name if name != "bool" else "bool_")
    assert np.dtype(d) == np.dtype(name)
    assert ingot.DType(np.dtype(name)) is d
    others = [o for o in NUMPY_DTYPES if o != name]
    assert all(d != np.dtype(o) for o in others)


def test_python_types_as_dtypes():
    assert ingot.DType(float) is ingot.float64
    assert ingot.DType(int) is ingot.int64
    assert ingot.DType(bool) is ingot.bool


@pytest.mark.parametrize("bad", ["float128", "complex256", "nonsense", 3, None, object()])
def test_unknown_dtypes_raise_type_error(bad):
    with pytest.raises(TypeError):
        ingot.DType(bad)
    with pytest.raises(TypeError):
        ingot.zeros(3, dtype=bad) if bad is not None else ingot.DType(None)


def test_dtype_kinds():
    assert ingot.isdtype(ingot.int8, "signed integer")
    assert ingot.isdtype(ingot.uint8, "unsigned integer")
    assert ingot.isdtype(ingot.uint8, "integral")
    assert ingot.isdtype(ingot.bfloat16, "real floating")
    assert ingot.isdtype(ingot.float32, ("integral", "real floating"))
    assert not ingot.isdtype(ingot.bool, "numeric")
    assert ingot.isdtype(ingot.bool, ingot.bool)
    assert not ingot.isdtype(ingot.float32, "complex floating")
    with pytest.raises(ValueError):
        ingot.isdtype(ingot.float32, "floating point numbers")


# The array API standard's promotion table (2023.12): every pair it defines.
_I = ["int8", "int16", "int32", "int64"]
_U = ["uint8", "uint16", "uint32", "uint64"]
_F = ["float32", "float64"]


def _api_table():
    table = {("bool", "bool"): "bool"}
    for group in (_I, _U, _F):
        for a, b in itertools.product(group, repeat=2):
            table[(a, b)] = group[max(group.index(a), group.index(b))]
    mixed = {
        ("uint8", "int8"): "int16", ("uint8", "int16"): "int16", ("uint8", "int32"): "int32",
        ("uint8", "int64"): "int64", ("uint16", "int8"): "int32", ("uint16", "int16"): "int32",
        ("uint16", "int32"): "int32", ("uint16", "int64"): "int64", ("uint32", "int8"): "int64",
        ("uint32", "int16"): "int64", ("uint32", "int32"): "int64", ("uint32", "int64"): "int64",
    }
    for (u, i), r in mixed.items():
        table[(u, i)] = r
        table[(i, u)] = r
    return table


@pytest.mark.parametrize("pair,expected", sorted(_api_table().items()))
def test_result_type_follows_the_array_api_table(pair, expected):
    a, b = pair
    assert ingot.result_type(DT[a], DT[b]) == expected
    assert ingot.result_type(a, b) == expected
    assert ingot.can_cast(DT[a], DT[expected])


@pytest.mark.parametrize("a,b", list(itertools.product(NUMPY_DTYPES, repeat=2)))
def test_result_type_matches_numpy_for_every_pair(a, b):
    assert ingot.result_type(DT[a], DT[b]) == np.result_type(a, b).name


BF16_RULES = {
    "bool": "bfloat16", "int8": "bfloat16", "uint8": "bfloat16", "int16": "float32",
    "uint16": "float32", "int32": "float64", "uint32": "float64", "int64": "float64",
    "uint64": "float64", "float16": "float32", "bfloat16": "bfloat16", "float32": "float32",
    "float64": "float64",
}


@pytest.mark.parametrize("other", ALL_DTYPES)
def test_bfloat16_promotion(other):
    assert ingot.result_type(ingot.bfloat16, other) == BF16_RULES[other]
    assert ingot.result_type(other, ingot.bfloat16) == BF16_RULES[other]


def test_result_type_with_python_scalars_is_weak():
    assert ingot.result_type(ingot.int8, 1) == ingot.int8
    assert ingot.result_type(ingot.float16, 1.5) == ingot.float16
    assert ingot.result_type(ingot.int8, 1.5) == ingot.float64
    assert ingot.result_type(ingot.bool, 1) == ingot.int64
    assert ingot.result_type(ingot.uint8, True) == ingot.uint8
    with pytest.raises(OverflowError):
        ingot.result_type(ingot.int8, 300)
    with pytest.raises(ValueError):
        ingot.result_type()


def test_can_cast():
    assert ingot.can_cast(ingot.int8, ingot.int16)
    assert not ingot.can_cast(ingot.int16, ingot.int8)
    assert not ingot.can_cast(ingot.float32, ingot.int64)
    assert ingot.can_cast(ingot.bool, ingot.float32)
    assert not ingot.can_cast(ingot.uint64, ingot.int64)


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_numpy(name):
    f, n = ingot.finfo(DT[name]), np.finfo(name)
    assert f.bits == n.bits
    assert f.eps == float(n.eps)
    assert f.max == float(n.max) and f.min == float(n.min)
    assert f.smallest_normal == float(n.smallest_normal)
    assert f.smallest_subnormal == float(n.smallest_subnormal)
    assert f.dtype is DT[name]


def test_finfo_bfloat16():
    f = ingot.finfo(ingot.bfloat16)
    assert f.bits == 16 and f.eps == 2.0**-7
    assert f.max == pytest.approx(3.3895313892515355e38)


@pytest.mark.parametrize("name", INT_DTYPES)
def test_iinfo_matches_numpy(name):
    i, n = ingot.iinfo(DT[name]), np.iinfo(name)
    assert (i.bits, i.min, i.max) == (n.bits, n.min, n.max)


def test_info_of_the_wrong_kind_raises():
    with pytest.raises(TypeError):
        ingot.finfo(ingot.int32)
    with pytest.raises(TypeError):
        ingot.iinfo(ingot.float32)
    with pytest.raises(TypeError):
        ingot.iinfo(ingot.bool)


def test_namespace_info():
    info = ingot.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == ingot.float64
    assert info.default_dtypes()["indexing"] == ingot.int64
    # float16 and bfloat16 are extensions, not array API dtypes: dtypes() leaves them out.
    assert set(info.dtypes()) == (set(ALL_DTYPES) - {"bfloat16", "float16"}) | {"complex64", "complex128"}
    assert set(info.dtypes(kind="integral")) == set(INT_DTYPES)
    assert set(info.dtypes(kind="complex floating")) == {"complex64", "complex128"}
    assert ingot.Device("cpu") in info.devices()
    assert info.capabilities()["boolean indexing"] is True
    assert info.capabilities()["data-dependent shapes"] is True
    assert ingot.__array_api_version__ == "2025.12"
