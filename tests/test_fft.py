"""ingot.fft against numpy.fft (complex128 reference): every function of the extension, with
``n``/``s`` truncating and zero-padding, any axis, the three norms, batched inputs, complex64
and float32 in single precision, and the errors. Runs on the test device (INGOT_DEVICE).

Results come from the device's caching pool: ``poison`` fills freed blocks of the outputs' sizes
with NaN first, so an element an implementation forgets to write shows as NaN."""

from __future__ import annotations

import numpy as np
import pytest

import ingot
from conftest import DEVICE, to_np

ON_METAL = DEVICE.kind == "metal"
NORMS = ["backward", "ortho", "forward"]
# Relative to the largest magnitude of the reference (FFT errors scale with the signal).
TOL = {"single": 2e-5, "double": 1e-12}


def poison(n):
    keep = []
    for _ in range(3):
        keep.append(ingot.full((max(1, 2 * n),), float("nan"), dtype=ingot.float32, device=DEVICE))
        keep.append(ingot.full((max(1, 4 * n),), float("nan"), dtype=ingot.float32, device=DEVICE))
    del keep


def close(got, want, precision):
    g = to_np(got)
    assert g.shape == want.shape, (g.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    np.testing.assert_allclose(g, want, rtol=0, atol=TOL[precision] * scale * 4)


def cdata(rng, shape, dtype):
    return (rng.normal(size=shape) + 1j * rng.normal(size=shape)).astype(dtype)


def precisions():
    return ["single"] if ON_METAL else ["single", "double"]


def dtypes(precision, complex_):
    if complex_:
        return "complex64" if precision == "single" else "complex128"
    return "float32" if precision == "single" else "float64"


@pytest.mark.parametrize("precision", precisions())
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 5, 16, 23])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_fft_ifft(rng, precision, norm, n, axis):
    dt = dtypes(precision, True)
    a = cdata(rng, (12, 10, 3), dt)
    x = ingot.asarray(a, device=DEVICE)
    poison(a.size * 3)
    for name in ("fft", "ifft"):
        got = getattr(ingot.fft, name)(x, n=n, axis=axis, norm=norm)
        want = getattr(np.fft, name)(a.astype(np.complex128), n=n, axis=axis, norm=norm)
        assert got.dtype == dt
        close(got, want, precision)


@pytest.mark.parametrize("precision", precisions())
def test_fft_of_real_input_and_round_trip(rng, precision):
    dt = dtypes(precision, False)
    a = rng.normal(size=(7, 64)).astype(dt)
    got = ingot.fft.fft(ingot.asarray(a, device=DEVICE))
    assert got.dtype == dtypes(precision, True)
    close(got, np.fft.fft(a.astype(np.float64)), precision)
    back = ingot.fft.ifft(got)
    close(ingot.real(back), a.astype(np.float64), precision)


@pytest.mark.parametrize("precision", precisions())
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 7, 16, 31])
def test_rfft_irfft(rng, precision, norm, n):
    rd, cd = dtypes(precision, False), dtypes(precision, True)
    a = rng.normal(size=(5, 20)).astype(rd)
    poison(a.size * 2)
    got = ingot.fft.rfft(ingot.asarray(a, device=DEVICE), n=n, norm=norm)
    want = np.fft.rfft(a.astype(np.float64), n=n, norm=norm)
    assert got.dtype == cd
    close(got, want, precision)
    spec = cdata(rng, (4, 11), cd)
    got = ingot.fft.irfft(ingot.asarray(spec, device=DEVICE), n=n, axis=1, norm=norm)
    want = np.fft.irfft(spec.astype(np.complex128), n=n, axis=1, norm=norm)
    assert got.dtype == rd
    close(got, want, precision)


@pytest.mark.parametrize("precision", precisions())
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [None, 8, 13])
def test_hfft_ihfft(rng, precision, norm, n):
    rd, cd = dtypes(precision, False), dtypes(precision, True)
    spec = cdata(rng, (9, 3), cd)
    got = ingot.fft.hfft(ingot.asarray(spec, device=DEVICE), n=n, axis=0, norm=norm)
    want = np.fft.hfft(spec.astype(np.complex128), n=n, axis=0, norm=norm)
    assert got.dtype == rd
    close(got, want, precision)
    a = rng.normal(size=(3, 14)).astype(rd)
    got = ingot.fft.ihfft(ingot.asarray(a, device=DEVICE), n=n, norm=norm)
    want = np.fft.ihfft(a.astype(np.float64), n=n, norm=norm)
    assert got.dtype == cd
    close(got, want, precision)


@pytest.mark.parametrize("precision", precisions())
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("s_axes", [(None, None), ((6, 4), None), (None, (0, 2)), ((5, 9), (2, 0)), ((3,), (1,))])
def test_nd_transforms(rng, precision, norm, s_axes):
    s, axes = s_axes
    cd, rd = dtypes(precision, True), dtypes(precision, False)
    a = cdata(rng, (6, 5, 8), cd)
    x = ingot.asarray(a, device=DEVICE)
    poison(a.size * 4)
    for name in ("fftn", "ifftn"):
        got = getattr(ingot.fft, name)(x, s=s, axes=axes, norm=norm)
        close(got, getattr(np.fft, name)(a.astype(np.complex128), s=s, axes=axes, norm=norm), precision)
    r = rng.normal(size=(6, 5, 8)).astype(rd)
    got = ingot.fft.rfftn(ingot.asarray(r, device=DEVICE), s=s, axes=axes, norm=norm)
    assert got.dtype == cd
    close(got, np.fft.rfftn(r.astype(np.float64), s=s, axes=axes, norm=norm), precision)
    got = ingot.fft.irfftn(x, s=s, axes=axes, norm=norm)
    assert got.dtype == rd
    close(got, np.fft.irfftn(a.astype(np.complex128), s=s, axes=axes, norm=norm), precision)


@pytest.mark.parametrize("n", [1, 2, 7, 8])
@pytest.mark.parametrize("d", [1.0, 0.25])
def test_frequencies(n, d):
    dt = ingot.float32 if ON_METAL else ingot.float64
    got = ingot.fft.fftfreq(n, d=d, dtype=dt, device=DEVICE)
    np.testing.assert_allclose(to_np(got), np.fft.fftfreq(n, d=d), rtol=1e-6)
    got = ingot.fft.rfftfreq(n, d=d, dtype=dt, device=DEVICE)
    np.testing.assert_allclose(to_np(got), np.fft.rfftfreq(n, d=d), rtol=1e-6)
    if not ON_METAL:
        assert ingot.fft.fftfreq(n, device=DEVICE).dtype == ingot.float64


@pytest.mark.parametrize("axes", [None, 0, 1, (0, 1), (1,)])
def test_shifts(rng, axes):
    a = rng.integers(0, 100, size=(5, 8)).astype(np.float32)
    x = ingot.asarray(a, device=DEVICE)
    np.testing.assert_array_equal(to_np(ingot.fft.fftshift(x, axes=axes)), np.fft.fftshift(a, axes=axes))
    np.testing.assert_array_equal(to_np(ingot.fft.ifftshift(x, axes=axes)), np.fft.ifftshift(a, axes=axes))


def test_large_power_of_two(rng):
    n = 1 << 20
    a = cdata(rng, (n,), "complex64")
    got = ingot.fft.fft(ingot.asarray(a, device=DEVICE))
    want = np.fft.fft(a.astype(np.complex128))
    # Single-precision FFT error grows with log n; relative to the spectrum's norm.
    err = np.linalg.norm(to_np(got) - want) / np.linalg.norm(want)
    assert err < 1e-6


@pytest.mark.parametrize("precision", precisions())
def test_transforms_leave_their_input_intact(rng, precision):
    # GPUs transform contiguous rows of the right dtype and length out of place, from the
    # caller's memory: the input must come out as it went in, and the output be fresh.
    cd, rd = dtypes(precision, True), dtypes(precision, False)
    a = cdata(rng, (4, 64), cd)
    r = rng.normal(size=(4, 64)).astype(rd)
    x, y = ingot.asarray(a, device=DEVICE), ingot.asarray(r, device=DEVICE)
    poison(4 * 64 * 2)
    f = ingot.fft.fft(x)
    close(f, np.fft.fft(a.astype(np.complex128)), precision)
    close(ingot.fft.ifft(x), np.fft.ifft(a.astype(np.complex128)), precision)
    close(ingot.fft.rfft(y), np.fft.rfft(r.astype(np.float64)), precision)
    np.testing.assert_array_equal(to_np(x), a)
    np.testing.assert_array_equal(to_np(y), r)
    f[0, 0] = 7.0
    np.testing.assert_array_equal(to_np(x), a)


def test_errors():
    x = ingot.asarray(np.ones((4, 3), np.complex64), device=DEVICE)
    with pytest.raises(ValueError):
        ingot.fft.fft(x, n=0)
    with pytest.raises(ValueError):
        ingot.fft.fft(x, norm="sideways")
    with pytest.raises((IndexError, ValueError)):
        ingot.fft.fft(x, axis=2)
    with pytest.raises(TypeError):
        ingot.fft.rfft(x)
    with pytest.raises(TypeError):
        ingot.fft.fft(np.ones(4))
    with pytest.raises(ValueError):
        ingot.fft.fftn(x, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError):
        ingot.fft.fftfreq(0)
