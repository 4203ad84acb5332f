"""linalg.eig and linalg.eigvals (array API 2025.12) against NumPy's LAPACK (issue #42):
reconstruction ``A @ V == V * w``, eigenvalues as NumPy's (sorted), unit-norm vectors, real,
complex, defective and batched inputs."""

from __future__ import annotations

import numpy as np
import pytest

import ingot

from conftest import DEVICE, make, to_np

TOL = {"float32": 2e-4, "float64": 1e-10, "complex64": 2e-4, "complex128": 1e-10}
OUT = {"float32": "complex64", "float64": "complex128", "complex64": "complex64",
       "complex128": "complex128"}


def random_matrices(rng, shape, dtype):
    a = rng.normal(size=shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.normal(size=shape)
    return a.astype(dtype)


def sort_eig(w):
    w = np.asarray(w, dtype=np.complex128)
    return np.sort_complex(np.round(w.real, 6) + 1j * np.round(w.imag, 6))


def skip_unheld(dtype):
    if DEVICE.kind == "metal" and dtype in ("float64", "complex128"):
        pytest.skip("Metal holds no float64")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (5, 5), (16, 16), (3, 4, 4), (2, 3, 7, 7)])
def test_eig_reconstructs_and_matches_numpy(rng, dtype, shape):
    skip_unheld(dtype)
    a = random_matrices(rng, shape, dtype)
    w, v = ingot.linalg.eig(make(a))
    assert w.dtype == OUT[dtype] and v.dtype == OUT[dtype]
    assert w.shape == shape[:-1] and v.shape == shape
    wn, vn = to_np(w).astype(np.complex128), to_np(v).astype(np.complex128)
    a64 = a.astype(np.complex128)
    scale = max(1.0, np.abs(a64).max()) * shape[-1]
    np.testing.assert_allclose(a64 @ vn, vn * wn[..., None, :], atol=TOL[dtype] * scale)
    np.testing.assert_allclose(np.linalg.norm(vn, axis=-2), 1.0, rtol=TOL[dtype] * 10)
    # largest component of each vector real
    idx = np.abs(vn).argmax(axis=-2)
    big = np.take_along_axis(vn, idx[..., None, :], axis=-2)
    np.testing.assert_allclose(big.imag, 0.0, atol=TOL[dtype])
    ref = np.linalg.eigvals(a.astype(np.complex128 if dtype.startswith("complex") else np.float64))
    for b in np.ndindex(*shape[:-2]):
        got, want = np.sort_complex(wn[b]), np.sort_complex(ref[b].astype(np.complex128))
        np.testing.assert_allclose(got, want, atol=TOL[dtype] * scale)
    # eigvals gives the same eigenvalues
    np.testing.assert_allclose(to_np(ingot.linalg.eigvals(make(a))).astype(np.complex128), wn,
                               atol=TOL[dtype] * scale)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_real_input_gives_exact_conjugate_pairs_and_real_eigenvalues(rng, dtype):
    skip_unheld(dtype)
    n = 9
    # a rotation block (eigenvalues cos t +- i sin t) and real eigenvalues, in a random basis
    t = rng.uniform(0.3, 2.5)
    d = np.zeros((n, n))
    d[:2, :2] = [[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]]
    d[2:, 2:] = np.diag(rng.uniform(1, 5, size=n - 2))
    p = rng.normal(size=(n, n))
    a = (p @ d @ np.linalg.inv(p)).astype(dtype)
    w = to_np(ingot.linalg.eigvals(make(a)))
    complex_ones = w[np.abs(w.imag) > 1e-3]
    assert len(complex_ones) == 2
    assert complex_ones[0] == np.conj(complex_ones[1])
    real_ones = w[np.abs(w.imag) <= 1e-3]
    assert np.all(real_ones.imag == 0)
    np.testing.assert_allclose(np.sort(real_ones.real), np.sort(np.diag(d)[2:]), rtol=1e-3)


def test_defective_and_special_matrices():
    # a Jordan block: one eigenvalue twice, eigenvectors (numerically) parallel
    j = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]])
    w, v = ingot.linalg.eig(make(j))
    np.testing.assert_allclose(to_np(w), [2, 2, 2], atol=1e-4)
    vn = to_np(v)
    np.testing.assert_allclose(j @ vn, vn * to_np(w)[None, :], atol=1e-8)
    # diagonal, zero and identity matrices, an integer input (float64 results, as NumPy)
    diag = np.diag([3.0, -1.0, 0.5])
    np.testing.assert_allclose(np.sort(to_np(ingot.linalg.eigvals(make(diag))).real), [-1, 0.5, 3])
    z = to_np(ingot.linalg.eigvals(make(np.zeros((4, 4)))))
    np.testing.assert_array_equal(z, np.zeros(4))
    wi = ingot.linalg.eigvals(ingot.asarray([[0, 1], [-2, -3]], device=DEVICE))
    assert wi.dtype == "complex128" or DEVICE.kind == "metal"
    np.testing.assert_allclose(np.sort(to_np(wi).real), [-2, -1], atol=1e-12)


def test_eig_errors_and_empty():
    with pytest.raises(ingot.LinAlgError):
        ingot.linalg.eig(make(np.ones((2, 3))))
    with pytest.raises(ingot.LinAlgError):
        ingot.linalg.eigvals(make(np.ones(3)))
    w, v = ingot.linalg.eig(make(np.ones((0, 3, 3))))
    assert w.shape == (0, 3) and v.shape == (0, 3, 3)
    r = ingot.linalg.eig(make(np.eye(2)))
    assert r.eigenvalues is r[0] and r.eigenvectors is r[1]
