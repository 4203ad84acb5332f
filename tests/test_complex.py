"""complex64 and complex128 against NumPy complex128: creation, conversion, promotion,
arithmetic, the elementwise functions the standard defines for complex numbers, reductions,
matmul/vecdot, where and layout ops. Runs on the test device (INGOT_DEVICE): on the CPU every
op is native; on GPUs copies, astype, + - * /, ==, !=, abs, conj, real, imag, the predicates,
sum, mean and where are composed of real kernels, the elementary functions and ``**`` run the
kernels of ``cmath.metal``, and the rest raise TypeError (checked too). The GPU kernels also run
on the CPU engine here, against the CPU's own functions (``test_gpu_complex_kernels_...``).

Results come from the device's caching pool: ``poison`` fills freed blocks of the outputs' sizes
with NaN first, so an element an implementation forgets to write shows as NaN."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import DEVICE, ON_CPU, to_np

CDTYPES = ["complex64", "complex128"]
# complex64 results computed in float64 and rounded once: a few float32 ulp; complex128 a few ulp.
TOL = {"complex64": dict(rtol=2e-6, atol=2e-6), "complex128": dict(rtol=1e-13, atol=1e-13)}
FUNC_TOL = {"complex64": dict(rtol=1e-5, atol=1e-5), "complex128": dict(rtol=1e-12, atol=1e-12)}
ON_METAL = DEVICE.kind == "metal"


def poison(*shapes):
    """Fills and frees pool blocks of the byte sizes of complex128 arrays of ``shapes`` (NaN)."""
    keep = []
    for s in shapes:
        n = max(1, int(np.prod(s))) * 2
        for _ in range(3):
            keep.append(ingot.full((n,), float("nan"), dtype=ingot.float32, device=DEVICE))
            keep.append(ingot.full((n,), float("nan"), dtype=ingot.float64 if not ON_METAL else ingot.float32,
                                   device=DEVICE))
    del keep


def crandom(rng, shape, dtype="complex128", scale=1.0):
    z = rng.normal(size=shape) * scale + 1j * rng.normal(size=shape) * scale
    return z.astype(dtype)


def dev_dtypes():
    return [d for d in CDTYPES if not (ON_METAL and d == "complex128")]


def make(z, dtype):
    return ingot.asarray(z, dtype=dtype, device=DEVICE)


@pytest.mark.parametrize("dtype", CDTYPES)
def test_dtype_objects_and_info(dtype):
    d = getattr(ingot, dtype)
    assert d.name == dtype and d.kind == "complex floating"
    assert d.itemsize == (8 if dtype == "complex64" else 16)
    assert ingot.isdtype(d, "complex floating") and ingot.isdtype(d, "numeric")
    assert not ingot.isdtype(d, "real floating")
    assert np.dtype(d) == np.dtype(dtype)
    info = ingot.__array_namespace_info__()
    assert dtype in info.dtypes(kind="complex floating", device="cpu")
    assert info.default_dtypes(device="cpu")["complex floating"] == ingot.complex128
    fi = ingot.finfo(d)
    assert fi.dtype == (ingot.float32 if dtype == "complex64" else ingot.float64)
    assert fi.eps == np.finfo(dtype).eps
    assert ingot.__array_api_version__ == "2025.12"


def test_promotion_follows_the_standard():
    c64, c128 = ingot.complex64, ingot.complex128
    assert ingot.result_type(c64, ingot.float32) == c64
    assert ingot.result_type(c64, ingot.float64) == c128
    assert ingot.result_type(c64, c128) == c128
    assert ingot.result_type(ingot.float32, 1j) == c64
    assert ingot.result_type(ingot.float64, 1j) == c128
    assert ingot.result_type(c64, 1.5) == c64
    assert ingot.result_type(ingot.bool, c64) == c64
    assert ingot.can_cast(ingot.float32, c64) and not ingot.can_cast(c64, ingot.float32)
    assert ingot.can_cast(ingot.float64, c128) and not ingot.can_cast(c128, c64)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_asarray_round_trip_and_scalars(rng, dtype):
    z = crandom(rng, (3, 5), dtype)
    x = make(z, dtype)
    assert x.dtype == dtype and x.shape == (3, 5)
    np.testing.assert_array_equal(to_np(x), z)
    # Python complex scalars and nested lists.
    s = ingot.asarray(1.5 - 2j, device=DEVICE)
    assert s.dtype == ingot.complex128 or ON_METAL
    assert complex(s.to_device("cpu")) == 1.5 - 2j
    lst = ingot.asarray([[1 + 1j, 2], [3j, -4.5]], dtype=dtype, device=DEVICE)
    np.testing.assert_array_equal(to_np(lst), np.asarray([[1 + 1j, 2], [3j, -4.5]], dtype=dtype))
    assert x[1, 2].item() == complex(z[1, 2])
    assert isinstance(x[0, 0].item(), complex)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_creation(dtype):
    np.testing.assert_array_equal(to_np(ingot.zeros((2, 3), dtype=dtype, device=DEVICE)), np.zeros((2, 3), dtype))
    np.testing.assert_array_equal(to_np(ingot.ones((4,), dtype=dtype, device=DEVICE)), np.ones(4, dtype))
    np.testing.assert_array_equal(to_np(ingot.full((2, 2), 1 - 3j, dtype=dtype, device=DEVICE)),
                                  np.full((2, 2), 1 - 3j, dtype))
    f = ingot.full((3,), 2j, device=DEVICE) if not ON_METAL else ingot.full((3,), 2j, dtype=dtype, device=DEVICE)
    assert f.dtype == (ingot.complex128 if not ON_METAL else dtype)
    np.testing.assert_array_equal(to_np(ingot.eye(3, 4, k=1, dtype=dtype, device=DEVICE)), np.eye(3, 4, 1, dtype=dtype))
    e = ingot.empty((5,), dtype=dtype, device=DEVICE)
    assert e.dtype == dtype and e.shape == (5,)
    z = ingot.zeros_like(e)
    assert z.dtype == dtype


@pytest.mark.skipif(ON_METAL, reason="complex128 linspace")
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_complex(endpoint):
    got = ingot.linspace(1 + 2j, -3 + 0.5j, 7, endpoint=endpoint, device=DEVICE)
    want = np.linspace(1 + 2j, -3 + 0.5j, 7, endpoint=endpoint)
    assert got.dtype == ingot.complex128
    np.testing.assert_allclose(to_np(got), want, rtol=1e-14, atol=1e-14)
    got = ingot.linspace(0, 1, 5, dtype=ingot.complex64, device=DEVICE)
    np.testing.assert_allclose(to_np(got), np.linspace(0, 1, 5).astype(np.complex64))


@pytest.mark.parametrize("src", ["bool", "int8", "int64", "uint32", "float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("dst", ["complex64", "complex128"])
def test_astype_to_complex(rng, src, dst):
    if ON_METAL and "64" in src and src not in ("int64", "complex64") or ON_METAL and dst == "complex128":
        pytest.skip("no 64-bit floats on Metal")
    if src.startswith("complex"):
        a = crandom(rng, (17,), src)
    elif src == "bool":
        a = rng.random(17) > 0.5
    else:
        a = (rng.normal(size=17) * 50).astype(src)
    poison((17,))
    got = make(a, None if src != "bool" else "bool").astype(dst)
    assert got.dtype == dst
    np.testing.assert_array_equal(to_np(got), a.astype(dst))


@pytest.mark.parametrize("src", dev_dtypes())
@pytest.mark.parametrize("dst", ["bool", "int32", "float32", "float64"])
def test_astype_from_complex(rng, src, dst):
    if ON_METAL and dst == "float64":
        pytest.skip("no float64 on Metal")
    z = crandom(rng, (4, 9), src, scale=20.0)
    z[0, :3] = [0, 1j, 2]  # bool of a purely imaginary value is True
    poison((4, 9))
    got = make(z, src).astype(dst)
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = z.astype(dst)
    np.testing.assert_array_equal(to_np(got), want)


@pytest.mark.parametrize("dtype", dev_dtypes())
@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "divide"])
def test_arithmetic(rng, dtype, op):
    a, b = crandom(rng, (6, 7), dtype), crandom(rng, (7,), dtype)
    poison((6, 7))
    got = getattr(ingot, op)(make(a, dtype), make(b, dtype))
    want = getattr(np, op)(a.astype(np.complex128), b.astype(np.complex128))
    assert got.dtype == dtype
    np.testing.assert_allclose(to_np(got), want, **TOL[dtype])


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_operators_and_python_scalars(rng, dtype):
    a = crandom(rng, (33,), dtype)
    x = make(a, dtype)
    ref = a.astype(np.complex128)
    for got, want in (
        (x * 2j, ref * 2j),
        (1 - 0.5j + x, 1 - 0.5j + ref),
        (x / (3 + 4j), ref / (3 + 4j)),
        (x - 2, ref - 2),
        (-x, -ref),
        (+x, ref),
        (2.5 * x, 2.5 * ref),
    ):
        assert got.dtype == dtype
        np.testing.assert_allclose(to_np(got), want, **TOL[dtype])
    if not ON_METAL:
        f = ingot.asarray(a.real.astype("float32"), device=DEVICE)
        assert (f * 1j).dtype == ingot.complex64
        y = ingot.asarray(a.real.astype("float32"), device=DEVICE) + make(a, dtype)
        assert y.dtype == dtype
    y = make(a, dtype)
    y += 1j
    np.testing.assert_allclose(to_np(y), ref + 1j, **TOL[dtype])
    with pytest.raises(TypeError):
        f32 = ingot.asarray(a.real.astype("float32"), device=DEVICE)
        f32 += x


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_equality_and_where(rng, dtype):
    a = crandom(rng, (40,), dtype)
    b = a.copy()
    b[::3] += 1j
    b[1::5] = np.nan
    x, y = make(a, dtype), make(b, dtype)
    np.testing.assert_array_equal(to_np(ingot.equal(x, y)), a == b)
    np.testing.assert_array_equal(to_np(x != y), a != b)
    cond = rng.random(40) > 0.5
    got = ingot.where(ingot.asarray(cond, device=DEVICE), x, y)
    np.testing.assert_array_equal(to_np(got), np.where(cond, a, b))
    with pytest.raises(TypeError):
        ingot.less(x, y)
    with pytest.raises(TypeError):
        ingot.maximum(x, y)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_parts_abs_conj(rng, dtype):
    a = crandom(rng, (5, 8), dtype)
    x = make(a, dtype)
    rd = "float32" if dtype == "complex64" else "float64"
    for name, want in (("real", a.real), ("imag", a.imag)):
        got = getattr(ingot, name)(x)
        assert got.dtype == rd
        np.testing.assert_array_equal(to_np(got), want)
    np.testing.assert_array_equal(to_np(ingot.conj(x)), np.conj(a))
    # A strided, transposed view.
    np.testing.assert_array_equal(to_np(ingot.imag(x.T[::2])), a.T[::2].imag)
    got = ingot.abs(x)
    assert got.dtype == rd
    np.testing.assert_allclose(to_np(got), np.abs(a.astype(np.complex128)), **TOL[dtype])
    if not ON_METAL:
        r = ingot.asarray(a.real, device=DEVICE)
        np.testing.assert_array_equal(to_np(ingot.real(r)), a.real)
        np.testing.assert_array_equal(to_np(ingot.imag(r)), np.zeros_like(a.real))
        np.testing.assert_array_equal(to_np(ingot.conj(r)), a.real)


FUNCS = ["exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "square", "sin", "cos", "tan",
         "sinh", "cosh", "tanh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "sign",
         "reciprocal", "round"]
NP_NAME = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "asinh": "arcsinh",
           "acosh": "arccosh", "atanh": "arctanh"}


@pytest.mark.parametrize("dtype", dev_dtypes())
@pytest.mark.parametrize("name", FUNCS)
def test_elementwise_functions(rng, dtype, name):
    scale = 3.0 if name == "round" else 0.8
    a = crandom(rng, (64,), dtype, scale=scale)
    x = make(a, dtype)
    poison((64,))
    got = getattr(ingot, name)(x)
    ref = a.astype(np.complex128)
    want = getattr(np, NP_NAME.get(name, name))(ref)
    assert got.dtype == dtype
    np.testing.assert_allclose(to_np(got), want, **FUNC_TOL[dtype])


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_predicates(dtype):
    vals = np.array([1 + 1j, complex(np.nan, 0), complex(0, np.inf), complex(-np.inf, np.nan), 0j], dtype)
    x = make(vals, dtype)
    for name in ("isnan", "isinf", "isfinite"):
        np.testing.assert_array_equal(to_np(getattr(ingot, name)(x)), getattr(np, name)(vals))


def test_undefined_functions_raise():
    x = ingot.asarray([1 + 2j], device=DEVICE, dtype="complex64")
    for name in ("floor", "ceil", "trunc", "signbit", "bitwise_invert"):
        with pytest.raises(TypeError):
            getattr(ingot, name)(x)
    for name in ("min", "max", "argmin", "argmax", "var", "std"):
        with pytest.raises(TypeError):
            getattr(ingot, name)(x)
    with pytest.raises(TypeError):
        ingot.remainder(x, x)


@pytest.mark.parametrize("dtype", dev_dtypes())
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2)])
def test_sum_mean_prod(rng, dtype, axis):
    a = crandom(rng, (4, 6, 5), dtype)
    x = make(a, dtype)
    ref = a.astype(np.complex128)
    poison((4, 6, 5))
    for name in ("sum", "mean", "prod"):
        got = getattr(ingot, name)(x, axis=axis)
        want = getattr(np, name)(ref, axis=axis)
        assert got.dtype == dtype
        np.testing.assert_allclose(to_np(got), want, rtol=1e-5 if dtype == "complex64" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", dev_dtypes())
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16, 33])
def test_prod_and_cumulative_of_every_length(rng, dtype, length):
    # GPUs multiply pairwise by halving (odd lengths carry their last element) and scan by
    # doubling: lengths around powers of two and odd ones exercise both.
    a = crandom(rng, (3, length), dtype, scale=0.9)
    x = make(a, dtype)
    ref = a.astype(np.complex128)
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "complex64" else dict(rtol=1e-12, atol=1e-14)
    poison((3, length), (3, length + 1))
    got = ingot.prod(x, axis=1)
    assert got.dtype == dtype and got.shape == (3,)
    np.testing.assert_allclose(to_np(got), np.prod(ref, axis=1), **tol)
    np.testing.assert_allclose(to_np(ingot.prod(x.T, axis=0, keepdims=True)), np.prod(ref.T, axis=0, keepdims=True),
                               **tol)
    for name, npf in (("cumulative_prod", np.cumprod), ("cumulative_sum", np.cumsum)):
        got = getattr(ingot, name)(x, axis=1)
        assert got.dtype == dtype and got.shape == (3, length)
        np.testing.assert_allclose(to_np(got), npf(ref, axis=1), **tol)
        got = getattr(ingot, name)(x.T, axis=0, include_initial=True)
        first = np.full((1, 3), 1 if name == "cumulative_prod" else 0, np.complex128)
        np.testing.assert_allclose(to_np(got), np.concatenate([first, npf(ref.T, axis=0)]), **tol)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_truth_reductions(dtype):
    a = np.array([[0, 1j, 0], [0, 0, 0], [2, 1 + 1j, np.nan]], dtype=dtype)
    x = make(a, dtype)
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(to_np(ingot.any(x, axis=axis)), np.any(a, axis=axis))
        np.testing.assert_array_equal(to_np(ingot.all(x, axis=axis)), np.all(a, axis=axis))
        np.testing.assert_array_equal(to_np(ingot.count_nonzero(x, axis=axis)), np.count_nonzero(a, axis=axis))


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_matmul_and_vecdot(rng, dtype):
    a, b = crandom(rng, (2, 5, 7), dtype), crandom(rng, (7, 3), dtype)
    ra, rb = a.astype(np.complex128), b.astype(np.complex128)
    poison((2, 5, 3))
    got = ingot.matmul(make(a, dtype), make(b, dtype))
    assert got.dtype == dtype
    np.testing.assert_allclose(to_np(got), ra @ rb, rtol=1e-5 if dtype == "complex64" else 1e-12, atol=1e-5)
    u, v = crandom(rng, (4, 9), dtype), crandom(rng, (9,), dtype)
    got = ingot.vecdot(make(u, dtype), make(v, dtype))
    # The standard's vecdot conjugates the first argument (NumPy's vecdot does too).
    want = np.sum(np.conj(u.astype(np.complex128)) * v.astype(np.complex128), axis=-1)
    np.testing.assert_allclose(to_np(got), want, rtol=1e-5 if dtype == "complex64" else 1e-12, atol=1e-5)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_layout_ops(rng, dtype):
    a = crandom(rng, (3, 4), dtype)
    x = make(a, dtype)
    np.testing.assert_array_equal(to_np(ingot.reshape(x, (4, 3))), a.reshape(4, 3))
    np.testing.assert_array_equal(to_np(ingot.concat([x, x[:1]], axis=0)), np.concatenate([a, a[:1]]))
    np.testing.assert_array_equal(to_np(ingot.stack([x, x])), np.stack([a, a]))
    np.testing.assert_array_equal(to_np(ingot.permute_dims(x, (1, 0))), a.T)
    np.testing.assert_array_equal(to_np(ingot.flip(x, axis=1)), a[:, ::-1])
    np.testing.assert_array_equal(to_np(x[1:, ::2]), a[1:, ::2])
    np.testing.assert_array_equal(to_np(ingot.broadcast_to(x[:1], (2, 4))), np.broadcast_to(a[:1], (2, 4)))
    y = make(a, dtype)
    y[0, 1] = 5 - 6j
    b = a.copy()
    b[0, 1] = 5 - 6j
    np.testing.assert_array_equal(to_np(y), b)
    np.testing.assert_array_equal(to_np(x.to_device("cpu")), a)


@pytest.mark.skipif(not ON_CPU, reason="NumPy and DLPack interop of host memory")
@pytest.mark.parametrize("dtype", CDTYPES)
def test_numpy_and_dlpack_interop(rng, dtype):
    a = crandom(rng, (4, 3), dtype)
    x = ingot.asarray(a)
    back = np.asarray(x)
    assert back.dtype == dtype
    np.testing.assert_array_equal(back, a)
    np.testing.assert_array_equal(np.from_dlpack(x), a)
    y = ingot.from_dlpack(a[:, 1:])
    assert y.dtype == dtype
    np.testing.assert_array_equal(to_np(y), a[:, 1:])


@pytest.mark.skipif(not ON_METAL, reason="Metal only")
def test_metal_has_no_complex128():
    with pytest.raises(TypeError, match="complex128"):
        ingot.zeros((2,), dtype=ingot.complex128, device=DEVICE)


# The array API standard's special values (C99 Annex G) for every combination of these parts,
# against NumPy's complex128 results (its C library follows Annex G).
SPECIAL_PARTS = [0.0, -0.0, 1.5, -1.5, 2.0, np.inf, -np.inf, np.nan]
SPECIAL_FUNCS = ["sqrt", "sinh", "cosh", "tanh", "tan", "asin", "asinh", "acos", "acosh", "atanh",
                 "exp", "log", "sign"]
# NumPy's sign of an infinite complex number is a quotient of infinities (NaN, or 1j for
# NaN + inf j); ingot gives the direction of the infinity: compared on finite inputs only.
FINITE_ONLY = {"sign"}


def _from_parts(re, im):
    """Complex numbers with exactly these parts (``re + 1j * im`` would turn ``inf * 0`` into NaN)."""
    z = np.empty(np.shape(re), dtype=np.complex128)
    z.real, z.imag = re, im
    return z


def _same_values(got, want):
    """Element-wise equality with NaN == NaN, infinities by sign, finite parts to 1e-12 relative."""
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        both_nan = np.isnan(g) & np.isnan(w)
        finite = np.isfinite(w)
        assert np.all(both_nan | (g == w) | (finite & np.isclose(g, w, rtol=1e-12, atol=1e-300))), (
            part, got[~(both_nan | (g == w) | (finite & np.isclose(g, w, rtol=1e-12, atol=1e-300)))])


@pytest.mark.skipif(ON_METAL, reason="no complex128 on Metal")
def test_expm1_special_values():
    # The standard's table for expm1 (signs it leaves unspecified compared by magnitude).
    inf, nan = np.inf, np.nan
    cases = [((inf, 0.0), (inf, 0.0)), ((-inf, inf), (-1.0, 0.0)), ((inf, inf), (inf, nan)),
             ((-inf, nan), (-1.0, 0.0)), ((inf, nan), (inf, nan)), ((nan, 0.0), (nan, 0.0)),
             ((-inf, 2.0), (-1.0, 0.0)), ((1.5, inf), (nan, nan)), ((1.5, nan), (nan, nan)),
             ((nan, 2.0), (nan, nan)), ((0.0, 0.0), (0.0, 0.0)), ((800.0, 0.0), (inf, 0.0))]
    z = _from_parts(np.array([c[0][0] for c in cases]), np.array([c[0][1] for c in cases]))
    want = _from_parts(np.array([c[1][0] for c in cases]), np.array([c[1][1] for c in cases]))
    poison(z.shape)
    got = to_np(ingot.expm1(make(z, "complex128")))
    for part in ("real", "imag"):
        g, w = np.abs(getattr(got, part)), np.abs(getattr(want, part))
        assert np.all((np.isnan(g) & np.isnan(w)) | (g == w)), (part, z, got)
    e = to_np(ingot.expm1(make(_from_parts(np.array([inf]), np.array([2.0])), "complex128")))[0]
    assert e.real == inf * np.cos(2.0) and e.imag == inf * np.sin(2.0)
    # expm1(±0 + 0j) is +0 + 0j, with a positive zero even for -0 (the real expm1(-0) is -0).
    zeros = _from_parts(np.array([0.0, -0.0]), np.array([0.0, 0.0]))
    for dtype in dev_dtypes():
        got = to_np(ingot.expm1(make(zeros, dtype)))
        assert np.all(got == 0) and not np.any(np.signbit(got.real)) and not np.any(np.signbit(got.imag))


@pytest.mark.skipif(ON_METAL, reason="no complex128 on Metal")
@pytest.mark.parametrize("name", SPECIAL_FUNCS)
def test_special_values_follow_annex_g(name):
    re, im = np.meshgrid(SPECIAL_PARTS, SPECIAL_PARTS)
    z = _from_parts(re.reshape(-1), im.reshape(-1))
    if name in FINITE_ONLY:
        z = z[np.isfinite(z)]
    poison(z.shape)
    got = to_np(getattr(ingot, name)(make(z, "complex128")))
    with np.errstate(all="ignore"):
        want = getattr(np, NP_NAME.get(name, name))(z)
    # The standard leaves these signs unspecified ("NaN ± infinity j", "±0 + ..."): compare
    # magnitudes where NumPy's part is an infinity or zero beside a NaN.
    loose = np.isnan(want.real) | np.isnan(want.imag)
    got_c = np.where(loose, _from_parts(np.abs(got.real), np.abs(got.imag)), got)
    want_c = np.where(loose, _from_parts(np.abs(want.real), np.abs(want.imag)), want)
    _same_values(got_c, want_c)
    # Outside those, signed zeros must match too (except the zeros of infinite inputs, whose
    # signs the standard leaves open: exp(-inf + inf j) = ±0 ± 0j).
    exact = ~loose & ~(~np.isfinite(z) & ((want.real == 0) | (want.imag == 0)))
    assert np.array_equal(np.signbit(got[exact].real), np.signbit(want[exact].real))
    assert np.array_equal(np.signbit(got[exact].imag), np.signbit(want[exact].imag))


@pytest.mark.parametrize("dtype", dev_dtypes())
@pytest.mark.parametrize("name", ["asin", "asinh", "tan", "tanh", "sqrt", "sinh", "cosh", "acos",
                                  "acosh", "atanh"])
def test_functions_of_large_and_small_arguments(rng, dtype, name):
    # Magnitudes from 1e-30 to near the dtype's limit, every sign: where the textbook formulas
    # cancel (asinh of a large negative real part) or overflow (tanh of a large real part).
    top = 37 if dtype == "complex64" else 300
    mag = 10.0 ** rng.uniform(-30, top, size=(2, 400))
    sgn = rng.choice([-1.0, 1.0], size=(2, 400))
    a = (sgn[0] * mag[0] + 1j * sgn[1] * mag[1]).astype(dtype)
    if name in ("sinh", "cosh"):
        # exp overflows past ~709 (float64) / ~88 (float32 results): keep the real part below.
        lim = 80.0 if dtype == "complex64" else 700.0
        a = (np.clip(a.real, -lim, lim) + 1j * a.imag).astype(dtype)
    poison(a.shape)
    got = to_np(getattr(ingot, name)(make(a, dtype))).astype(np.complex128)
    with np.errstate(all="ignore"):
        want = getattr(np, NP_NAME.get(name, name))(a.astype(np.complex128))
    if dtype == "complex64":
        # Rounded once to complex64: parts beyond its range overflow, tiny ones flush.
        with np.errstate(all="ignore"):
            want = want.astype(np.complex64).astype(np.complex128)
    rtol = 1e-5 if dtype == "complex64" else 1e-11
    # Each part relative to the result's modulus (a part far below it carries no relative
    # accuracy in either library).
    scale = np.abs(want)
    ok = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), ok)
    np.testing.assert_array_less(np.abs(got[ok] - want[ok]), rtol * scale[ok] + 1e-300)


@pytest.mark.parametrize("dtype", dev_dtypes())
def test_pow(rng, dtype):
    a, b = crandom(rng, (5, 9), dtype), crandom(rng, (9,), dtype, scale=0.7)
    b[0] = 2  # an integer power: repeated squaring
    b[1] = 0  # x ** 0 = 1
    b[2] = -3
    x, y = make(a, dtype), make(b, dtype)
    poison((5, 9))
    got = x ** y
    want = a.astype(np.complex128) ** b.astype(np.complex128)
    assert got.dtype == dtype
    np.testing.assert_allclose(to_np(got), want, **FUNC_TOL[dtype])
    np.testing.assert_array_equal(to_np(make(np.zeros(3, dtype), dtype) ** make(np.full(3, 2.5, dtype), dtype)), 0)


# Every part of the special grid and random magnitudes from 1e-30 to 1e300, every sign.
def _kernel_inputs(rng):
    re, im = np.meshgrid(SPECIAL_PARTS, SPECIAL_PARTS)
    z = _from_parts(re.reshape(-1), im.reshape(-1))
    mag = 10.0 ** rng.uniform(-30, 300, size=(2, 300))
    sgn = rng.choice([-1.0, 1.0], size=(2, 300))
    small = crandom(rng, (200,), scale=0.8)
    return np.concatenate([z, _from_parts(sgn[0] * mag[0], sgn[1] * mag[1]), small])


@pytest.mark.skipif(not ON_CPU, reason="the GPU kernels compiled for the CPU engine")
@pytest.mark.parametrize("name", FUNCS)
def test_gpu_complex_kernels_match_the_cpu_functions(rng, name):
    # cmath.metal (what GPUs run for complex functions) compiled for the CPU engine, in float64,
    # against the CPU's native functions (Rust), which the tests above check against NumPy:
    # special values value for value (signed zeros included), the rest to 1e-12 of the modulus.
    from ingot import _ingot

    src = _ingot._kernel_source("cmath", "cpu") + (
        f'template [[host_name("k")]] [[kernel]] decltype(cunary<cop_{name}, double>) '
        f"cunary<cop_{name}, double>;\n")
    k = ingot.compile(src, file_name=f"cmath_{name}.metal")["k"]
    z = _kernel_inputs(rng)
    n = z.size
    outr = ingot.full((n,), 7.0, dtype=ingot.float64)
    outi = ingot.full((n,), 7.0, dtype=ingot.float64)
    k(ingot.asarray(np.ascontiguousarray(z.real)), ingot.asarray(np.ascontiguousarray(z.imag)), outr, outi,
      n, grid=(n,))
    got = _from_parts(to_np(outr), to_np(outi))
    want = to_np(getattr(ingot, name)(make(z, "complex128")))
    for part in ("real", "imag"):
        g, w = getattr(got, part), getattr(want, part)
        same = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
        with np.errstate(invalid="ignore"):
            close = np.isfinite(w) & np.isfinite(g) & (np.abs(g - w) <= 1e-12 * np.abs(want) + 1e-300)
        bad = ~(same | close)
        assert not bad.any(), (part, z[bad][:5], g[bad][:5], w[bad][:5])


@pytest.mark.skipif(not ON_CPU, reason="the GPU kernels compiled for the CPU engine")
def test_gpu_complex_pow_kernel_matches_the_cpu(rng):
    from ingot import _ingot

    src = _ingot._kernel_source("cmath", "cpu") + (
        'template [[host_name("k")]] [[kernel]] decltype(cpow_parts<double>) cpow_parts<double>;\n')
    k = ingot.compile(src, file_name="cmath_pow.metal")["k"]
    x = crandom(rng, (400,), scale=2.0)
    y = crandom(rng, (400,), scale=1.5)
    y[:40] = rng.integers(-8, 9, 40)
    x[40:50] = 0
    y[50:60] = 0
    n = x.size
    outs = [ingot.full((n,), 7.0, dtype=ingot.float64) for _ in range(2)]
    parts = [ingot.asarray(np.ascontiguousarray(p)) for p in (x.real, x.imag, y.real, y.imag)]
    k(*parts, *outs, n, grid=(n,))
    got = _from_parts(to_np(outs[0]), to_np(outs[1]))
    want = to_np(make(x, "complex128") ** make(y, "complex128"))
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)
