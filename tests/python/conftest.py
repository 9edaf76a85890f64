# SPDX-License-Identifier: GPL-3.0-or-later
"""Fixtures of the Python package's tests: the shared images (skipped,
with the reason, where ../shared/data is absent), the CLI, and the lesson's
NumPy/SciPy pipeline that skysift is checked against."""
import os

import numpy as np
import pytest

DATA = os.environ.get("SKYSIFT_SHARED_DATA",
                      os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared",
                                   "data"))


def shared(name):
    path = os.path.join(DATA, name)
    if not os.path.exists(path):
        pytest.skip(f"{path} is absent (the shared test images are not beside this checkout)")
    return path


@pytest.fixture
def gc_path():
    return shared("gc_like_2048.fits")


@pytest.fixture
def cli():
    path = os.environ.get("SKYSIFT_CLI")
    if not path or not os.path.exists(path):
        pytest.skip("SKYSIFT_CLI is not set to a built skysift-cli (meson test sets it)")
    return path


def random_field(seed, ny=300, nx=257, blanks=True):
    """Noise, a slope and Gaussian sources of many sizes, with blank
    (NaN) pixels and a blank corner when asked."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:ny, 0:nx]
    data = rng.normal(0.0, 1.0, (ny, nx)) + 0.001 * x
    for _ in range(40):
        cx, cy = rng.uniform(0, nx), rng.uniform(0, ny)
        s, a = rng.uniform(0.7, 4.0), rng.uniform(3, 60)
        data += a * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s))
    data = data.astype(np.float32)
    if blanks:
        data[rng.random(data.shape) < 0.02] = np.nan
        data[: ny // 9, : nx // 6] = np.nan
    return data


def lesson(data, kappa=3.0, threshold=5.0, relative=False, connectivity=4):
    """The lesson's four steps in NumPy/SciPy, blanks left out."""
    from scipy import ndimage
    flat = data[np.isfinite(data)].astype(np.float32)
    iterations = 0
    while True:
        iterations += 1
        med = np.median(flat)
        std = np.std(flat.astype(np.float64))
        kept = flat[(flat > med - kappa * std) & (flat < med + kappa * std)]
        if len(kept) == len(flat):
            break
        flat = kept
    std = float(np.std(flat.astype(np.float64)))
    med = float(np.median(flat.astype(np.float64)))
    level = med + threshold * std if relative else threshold * std
    seg = np.where(np.isfinite(data), data.astype(np.float64) > level, False)
    structure = ndimage.generate_binary_structure(2, 2 if connectivity == 8 else 1)
    labels, n = ndimage.label(seg, structure=structure)
    idx = np.arange(1, n + 1)
    d64 = np.nan_to_num(data.astype(np.float64))
    pos = np.array(ndimage.center_of_mass(d64, labels, idx)).reshape(-1, 2)
    sums = np.asarray(ndimage.sum_labels(d64, labels, idx))
    npix = np.asarray(ndimage.sum_labels(np.ones_like(d64), labels, idx)).astype(np.int64)
    return dict(median=med, std=std, n=len(flat), iterations=iterations, level=level,
                seg=seg, labels=labels, nlabels=n, x=pos[:, 1], y=pos[:, 0], sum=sums,
                npix=npix)


def assert_catalogue_matches(cols, ref):
    """The contract's tolerances (docs/contract.md): counts exact,
    centroids within 1e-4 pixel, sums within 1e-6 relative."""
    assert len(cols["x_centroid"]) == ref["nlabels"]
    np.testing.assert_array_equal(cols["npix"], ref["npix"])
    np.testing.assert_allclose(cols["x_centroid"], ref["x"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(cols["y_centroid"], ref["y"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(cols["sum_flux"], ref["sum"], rtol=1e-6, atol=1e-12)
