# SPDX-License-Identifier: GPL-3.0-or-later
"""The lesson's steps one by one and the convolutions, against SciPy and
NumPy as the lesson calls them."""
import numpy as np
import pytest
from conftest import lesson, random_field

import skysift

scipy_signal = pytest.importorskip("scipy.signal")
ndimage = pytest.importorskip("scipy.ndimage")


@pytest.mark.parametrize("seed", [21, 22])
def test_clip_segment_label_measure_match_scipy(seed):
    data = random_field(seed)
    ref = lesson(data)
    median, std, n, iterations = skysift.clip(data)
    assert n == ref["n"]
    assert iterations == ref["iterations"]
    assert median == pytest.approx(ref["median"], rel=1e-6)
    assert std == pytest.approx(ref["std"], rel=1e-6)
    mask = skysift.segment(data, 5 * std)
    assert mask.dtype == bool and mask.shape == data.shape
    np.testing.assert_array_equal(mask, ref["seg"])
    labels, nlabels = skysift.label(mask)
    assert nlabels == ref["nlabels"]
    np.testing.assert_array_equal(labels, ref["labels"])
    cat = skysift.measure(data, labels, table=False)
    np.testing.assert_array_equal(cat["npix"], ref["npix"])
    np.testing.assert_allclose(cat["x_centroid"], ref["x"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(cat["sum_flux"], ref["sum"], rtol=1e-6)


def test_segment_compares_exactly_at_the_level():
    data = np.array([[1.0, 2.0, 3.0], [2.0, 2.0000002, 1.0]], np.float32)
    level = float(np.float32(2.0))
    np.testing.assert_array_equal(skysift.segment(data, level), data.astype(np.float64) > level)


@pytest.mark.parametrize("connectivity", [4, 8])
def test_label_matches_ndimage_on_random_masks(connectivity):
    rng = np.random.default_rng(connectivity)
    mask = rng.random((333, 211)) < 0.45
    structure = ndimage.generate_binary_structure(2, 2 if connectivity == 8 else 1)
    want, n = ndimage.label(mask, structure=structure)
    got, m = skysift.label(mask, connectivity)
    assert m == n
    np.testing.assert_array_equal(got, want)
    got_int, _ = skysift.label(mask.astype(np.int64) * 7, connectivity)
    np.testing.assert_array_equal(got_int, want)


def test_step_inputs_are_checked():
    with pytest.raises(ValueError, match="2-D"):
        skysift.label(np.zeros(10, bool))
    with pytest.raises(skysift.SkysiftValueError, match="connectivity"):
        skysift.label(np.zeros((4, 4), bool), 6)
    with pytest.raises(ValueError, match="shape"):
        skysift.measure(np.zeros((4, 4), np.float32), np.zeros((4, 5), np.int32))
    with pytest.raises(skysift.SkysiftValueError, match="blank"):
        skysift.clip(np.full((8, 8), np.nan))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolve2d_matches_scipy(mode, dtype):
    rng = np.random.default_rng(5)
    a = rng.normal(size=(97, 64)).astype(dtype)
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(x ** 2 + y ** 2) / 2).astype(dtype)
    odd = rng.normal(size=(5, 8)).astype(dtype)     # rank > 1, even width
    for k in (gauss, odd):
        want = scipy_signal.convolve2d(a, k, mode=mode)
        got = skysift.convolve2d(a, k, mode=mode)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-12,
                                   atol=1e-5 if dtype == np.float32 else 1e-12)


def test_convolve2d_lesson_demo():
    """The lesson's first cells: deltas every 16 pixels, its Gaussian."""
    deltas = np.zeros((512, 512))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(x ** 2 + y ** 2) / 2)
    want = scipy_signal.convolve2d(deltas, gauss)
    assert np.allclose(skysift.convolve2d(deltas, gauss), want)
    diag = np.diagonal(gauss)
    assert np.allclose(skysift.convolve(deltas.ravel(), diag), np.convolve(deltas.ravel(), diag))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolve_matches_numpy(dtype):
    rng = np.random.default_rng(6)
    a, v = rng.normal(size=1001).astype(dtype), rng.normal(size=17).astype(dtype)
    got, want = skysift.convolve(a, v), np.convolve(a, v)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_convolve_inputs_are_checked():
    with pytest.raises(ValueError, match="1-D"):
        skysift.convolve(np.zeros((3, 3)), np.ones(3))
    with pytest.raises(ValueError, match="2-D"):
        skysift.convolve2d(np.zeros(3), np.ones((3, 3)))
    with pytest.raises(skysift.SkysiftValueError):
        skysift.convolve2d(np.zeros((3, 3)), np.ones((2, 2)), mode="diagonal")
    with pytest.raises(TypeError, match="complex"):
        skysift.convolve2d(np.zeros((3, 3), np.complex128), np.ones((2, 2)))
