# SPDX-License-Identifier: GPL-3.0-or-later
"""The CuPy path against the CPU, as docs/contract.md defines "the same
result": runs on a machine with CuPy and a device, skips elsewhere."""
import numpy as np
import pytest
from conftest import random_field

import skysift


@pytest.fixture
def cupy():
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    ok, why = skysift.gpu_available()
    if not ok:
        pytest.skip(f"no GPU for skysift: {why}")
    return cp


def assert_contract(got, want):
    assert got["meta"]["nsources"] == want["meta"]["nsources"]
    assert got["meta"]["clip_pixels"] == want["meta"]["clip_pixels"]
    assert got["meta"]["iterations"] == want["meta"]["iterations"]
    assert got["meta"]["sigma"] == pytest.approx(want["meta"]["sigma"], rel=1e-6)
    for key in ("npix", "peak_flux", "peak_x", "peak_y", "xmin", "xmax", "ymin", "ymax"):
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
    np.testing.assert_allclose(got["x_centroid"], want["x_centroid"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(got["y_centroid"], want["y_centroid"], atol=1e-4, rtol=0)
    np.testing.assert_allclose(got["sum_flux"], want["sum_flux"], rtol=1e-6)


@pytest.mark.parametrize("seed", [31, 32])
def test_cupy_array_on_the_device_matches_the_cpu(cupy, seed):
    data = random_field(seed, ny=512, nx=700)
    want = skysift.find(data, table=False, images=True)
    got = skysift.find(cupy.asarray(data), table=False, images=True)
    assert got["meta"]["backend"] == "gpu"
    assert_contract(got, want)
    assert isinstance(got["mask"], cupy.ndarray) and isinstance(got["labels"], cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(got["mask"]), want["mask"])
    np.testing.assert_array_equal(cupy.asnumpy(got["labels"]), want["labels"])


def test_cupy_other_dtypes_strides_and_infinities(cupy):
    data = random_field(33, ny=300, nx=400)
    want = skysift.find(data, table=False)
    with_inf = data.copy()
    with_inf[np.isnan(with_inf)] = np.inf
    for variant in (cupy.asarray(data.astype(np.float64)), cupy.asarray(data)[:, ::1].T.T,
                    cupy.asfortranarray(cupy.asarray(data)), cupy.asarray(with_inf)):
        assert_contract(skysift.find(variant, table=False), want)


def test_gc_like_on_the_device(cupy, gc_path):
    fits = pytest.importorskip("astropy.io.fits", reason="astropy is not installed")
    data = fits.getdata(gc_path).astype(np.float32)
    got = skysift.find(cupy.asarray(data), table=False)
    assert got["meta"]["nsources"] == 344
    assert_contract(got, skysift.find(gc_path, table=False))
