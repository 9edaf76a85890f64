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


def test_infinities_are_blank_and_the_array_is_read_in_place(cupy):
    """+-Inf is blank on the device as on the CPU, with the array read where
    it lies (16-byte aligned) and where a view's offset forces a copy; the
    caller's array is left as it was."""
    data = random_field(34, ny=257, nx=301)
    want = skysift.find(data, table=False, images=True)
    with_inf = data.copy()
    blank = np.isnan(with_inf)
    with_inf[blank] = np.where(np.arange(blank.sum()) % 2 == 0, np.inf, -np.inf)
    aligned = cupy.asarray(with_inf)
    assert aligned.data.ptr % 16 == 0
    store = cupy.empty(with_inf.size + 1, dtype=cupy.float32)
    store[1:] = cupy.asarray(with_inf).ravel()
    unaligned = store[1:].reshape(with_inf.shape)
    assert unaligned.data.ptr % 16 == 4 and unaligned.flags.c_contiguous
    for array in (aligned, unaligned):
        before = cupy.asnumpy(array)
        got = skysift.find(array, table=False, images=True)
        assert_contract(got, want)
        np.testing.assert_array_equal(cupy.asnumpy(got["mask"]), want["mask"])
        np.testing.assert_array_equal(cupy.asnumpy(got["labels"]), want["labels"])
        np.testing.assert_array_equal(cupy.asnumpy(array), before)


def test_parameters_changing_between_calls_are_used(cupy):
    """The device keeps the last parameters it was given: each call with
    other ones must still run with its own."""
    data = random_field(35, ny=400, nx=380)
    d = cupy.asarray(data)
    for kw in ({}, {"connectivity": 8}, {"connectivity": 8}, {"threshold": 4.0},
               {"clip_kappa": 2.5, "relative": True}, {}, {}):
        assert_contract(skysift.find(d, table=False, **kw), skysift.find(data, table=False, **kw))


def test_timings_only_when_asked(cupy):
    data = random_field(36, ny=300, nx=300)
    d = cupy.asarray(data)
    plain = skysift.find(d, table=False)
    timed = skysift.find(d, table=False, timings=True)
    assert np.isnan(plain["meta"]["gpu_kernels_ms"]) and np.isnan(plain["meta"]["gpu_total_ms"])
    assert all(np.isnan(t) for t in plain["meta"]["times_ms"])
    steps = timed["meta"]["times_ms"]
    assert len(steps) == 5 and all(t > 0 for t in steps), steps
    assert steps[-1] == pytest.approx(sum(steps[:4]), rel=1e-9)
    assert timed["meta"]["gpu_kernels_ms"] == steps[-1]
    assert timed["meta"]["gpu_total_ms"] >= timed["meta"]["gpu_kernels_ms"]
    assert_contract(plain, timed)
    cpu = skysift.find(data, table=False)
    assert list(plain) == list(cpu)
    assert set(plain["meta"]) == set(cpu["meta"])
    for key in ("median", "sigma", "threshold_value"):
        assert plain["meta"][key] == pytest.approx(cpu["meta"][key], rel=1e-6), key
    for key in ("clip_pixels", "input_pixels", "iterations", "flat", "nsources", "steps"):
        assert plain["meta"][key] == cpu["meta"][key], key


def test_threads_share_the_device(cupy):
    import threading
    fields = [random_field(37 + k, ny=350, nx=330) for k in range(3)]
    want = [skysift.find(f, table=False) for f in fields]
    arrays = [cupy.asarray(f) for f in fields]
    errors = []

    def worker(k):
        try:
            with cupy.cuda.Stream(non_blocking=True):
                for _ in range(5):
                    assert_contract(skysift.find(arrays[k], table=False), want[k])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_gc_like_on_the_device(cupy, gc_path):
    fits = pytest.importorskip("astropy.io.fits", reason="astropy is not installed")
    data = fits.getdata(gc_path).astype(np.float32)
    got = skysift.find(cupy.asarray(data), table=False)
    assert got["meta"]["nsources"] == 344
    assert_contract(got, skysift.find(gc_path, table=False))
