# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift.find and write_csv against SciPy and the CLI."""
import csv
import os
import subprocess
import threading
import time

import numpy as np
import pytest
from conftest import assert_catalogue_matches, lesson, random_field, shared

import skysift


def reference_csv(name):
    with open(shared(f"reference/{name}.csv")) as f:
        rows = list(csv.DictReader(f))
    return dict(nlabels=len(rows), npix=np.array([int(r["npix"]) for r in rows]),
                x=np.array([float(r["x_pix0"]) for r in rows]),
                y=np.array([float(r["y_pix0"]) for r in rows]),
                sum=np.array([float(r["flux_sum"]) for r in rows]))


def test_gc_like_finds_344_as_the_reference(gc_path):
    cat = skysift.find(gc_path, table=False)
    assert cat["meta"]["nsources"] == 344
    assert_catalogue_matches(cat, reference_csv("gc_like_2048"))


@pytest.mark.parametrize("name", ["gc_bolocam_gps", "1904-66_SIN", "synthetic_test",
                                  "gc_msx_e"])
def test_external_images_match_the_reference(name):
    cat = skysift.find(shared(f"external/{name}.fits"), table=False)
    assert_catalogue_matches(cat, reference_csv(name))


def test_table_has_the_csv_columns_units_and_metadata(gc_path):
    pytest.importorskip("astropy")
    t = skysift.find(gc_path)
    assert len(t) == 344
    assert t.colnames[:12] == ["source_id", "x_centroid", "y_centroid", "sum_flux", "npix",
                               "peak_flux", "peak_x", "peak_y", "xmin", "xmax", "ymin",
                               "ymax"]
    assert {"ra", "dec"} <= set(t.colnames)
    assert str(t["x_centroid"].unit) == "pix"
    assert t.meta["nsources"] == 344 and t.meta["clip_iterations"] == 9


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("connectivity", [4, 8])
def test_random_fields_match_scipy(seed, connectivity):
    data = random_field(seed)
    ref = lesson(data, connectivity=connectivity)
    cat = skysift.find(data, connectivity=connectivity, table=False)
    assert cat["meta"]["clip_pixels"] == ref["n"]
    assert cat["meta"]["sigma"] == pytest.approx(ref["std"], rel=1e-6)
    assert_catalogue_matches(cat, ref)


def test_relative_threshold_and_kappa_match_scipy():
    data = random_field(7) + np.float32(100)
    ref = lesson(data, kappa=2.5, threshold=4.0, relative=True)
    cat = skysift.find(data, clip_kappa=2.5, threshold=4.0, relative=True, table=False)
    assert_catalogue_matches(cat, ref)


def test_write_csv_is_the_clis_csv_byte_for_byte(gc_path, cli, tmp_path):
    cli_csv, py_csv = tmp_path / "cli.csv", tmp_path / "py.csv"
    subprocess.run([cli, "find", gc_path, "--quiet", "--csv", str(cli_csv)], check=True)
    assert skysift.write_csv(gc_path, py_csv) == 344
    assert py_csv.read_bytes() == cli_csv.read_bytes()


def test_write_csv_of_an_hdu_is_the_clis(gc_path, cli, tmp_path):
    fits = pytest.importorskip("astropy.io.fits")
    cli_csv, py_csv = tmp_path / "cli.csv", tmp_path / "py.csv"
    subprocess.run([cli, "find", gc_path, "--quiet", "--csv", str(cli_csv), "--threshold",
                    "6", "--connectivity", "8"], check=True)
    with fits.open(gc_path) as hdul:
        skysift.write_csv(hdul[0], py_csv, threshold=6, connectivity=8)
    assert py_csv.read_bytes() == cli_csv.read_bytes()


def test_dtypes_strides_and_byte_orders_give_the_same_catalogue():
    data = random_field(11, blanks=False)
    want = skysift.find(data, table=False)
    big = data.astype(">f4")
    strided = np.zeros((data.shape[0], 2 * data.shape[1]), np.float32)[:, ::2]
    strided[...] = data
    fortran = np.asfortranarray(data)
    readonly = data.copy()
    readonly.setflags(write=False)
    for variant in (big, strided, fortran, readonly, data.astype(np.float64)):
        got = skysift.find(variant, table=False)
        for key in ("x_centroid", "sum_flux", "npix"):
            np.testing.assert_array_equal(got[key], want[key])


def test_integer_images_are_found_as_their_float_values():
    data = np.round(random_field(12, blanks=False) * 10).astype(np.int16)
    got = skysift.find(data, table=False)
    assert_catalogue_matches(got, lesson(data.astype(np.float32)))


def test_infinities_are_blank_and_the_input_untouched():
    data = random_field(13)
    ref = lesson(data)
    with_inf = data.copy()
    blank = np.isnan(with_inf)
    with_inf[blank] = np.where(np.arange(blank.sum()) % 2, np.inf, -np.inf)
    kept = with_inf.copy()
    got = skysift.find(with_inf, table=False)
    assert_catalogue_matches(got, ref)
    np.testing.assert_array_equal(with_inf, kept)


def test_bad_inputs_raise_with_the_reason(tmp_path):
    with pytest.raises(ValueError, match="2-D"):
        skysift.find(np.zeros(100, np.float32))
    with pytest.raises(ValueError, match="2-D"):
        skysift.find(np.zeros((2, 3, 4), np.float32))
    with pytest.raises(TypeError, match="dtype complex"):
        skysift.find(np.zeros((8, 8), np.complex64))
    with pytest.raises(TypeError, match="dtype"):
        skysift.find(np.array([["a", "b"]]))
    with pytest.raises(skysift.SkysiftValueError, match="blank"):
        skysift.find(np.full((16, 16), np.nan, np.float32))
    with pytest.raises(ValueError, match="empty"):
        skysift.find(np.zeros((0, 5), np.float32))
    missing = tmp_path / "missing.fits"
    with pytest.raises(skysift.SkysiftIOError, match="missing.fits") as e:
        skysift.find(missing)
    assert isinstance(e.value, OSError) and e.value.status == "io"
    notfits = tmp_path / "text.fits"
    notfits.write_text("not a FITS file\n" * 200)
    with pytest.raises(skysift.SkysiftValueError, match="text.fits"):
        skysift.find(notfits)
    with pytest.raises(ValueError, match="connectivity"):
        skysift.find(np.zeros((8, 8), np.float32), connectivity=6)
    with pytest.raises(skysift.SkysiftValueError, match="clip_kappa|kappa"):
        skysift.find(np.zeros((8, 8), np.float32), clip_kappa=-1)
    with pytest.raises(ValueError, match="method"):
        skysift.find(np.zeros((8, 8), np.float32), method="nonesuch")
    with pytest.raises(ValueError, match="backend"):
        skysift.find(np.zeros((8, 8), np.float32), backend="tpu")


def test_gpu_backend_without_a_device_finishes_on_the_cpu_and_says_why():
    ok, why = skysift.gpu_available()
    if ok:
        pytest.skip(f"a GPU is here ({why}): the fallback is not reachable")
    data = random_field(14)
    got = skysift.find(data, backend="gpu", table=False)
    assert got["meta"]["backend"] == "cpu"
    assert got["meta"]["gpu_fault"], "the GPU's failure is not reported"
    assert_catalogue_matches(got, lesson(data))


def test_concurrent_calls_agree():
    data = random_field(15, ny=1000, nx=1000)
    want = skysift.find(data, table=False)
    results = []

    def worker():
        for _ in range(3):
            results.append(skysift.find(data, table=False))

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 9
    for got in results:
        np.testing.assert_array_equal(got["sum_flux"], want["sum_flux"])
        np.testing.assert_array_equal(got["npix"], want["npix"])


def test_the_gil_is_released_during_computation():
    """A pure-Python counter keeps counting while another thread is inside
    long C calls (direct 2-D convolutions of a tenth of a second or more,
    for half a second); were the GIL held, it would stand still in each."""
    rng = np.random.default_rng(3)
    a, k = rng.normal(size=(1200, 1200)), rng.normal(size=(21, 20))

    def count_for(seconds):
        n, end = 0, time.perf_counter() + seconds
        while time.perf_counter() < end:
            n += 1
        return n

    free_rate = count_for(0.2) / 0.2
    calls = []

    def convolve():
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:
            t0 = time.perf_counter()
            skysift.convolve2d(a, k, threads=1)
            calls.append(time.perf_counter() - t0)

    worker = threading.Thread(target=convolve)
    ticks, t0 = 0, time.perf_counter()
    worker.start()
    while worker.is_alive():
        ticks += 1
    elapsed = time.perf_counter() - t0
    worker.join()
    in_c = sum(calls)
    assert in_c > 0.8 * elapsed, f"{in_c:.3f} s of {elapsed:.3f} s in C: too little to tell"
    # Sharing the cores with the calls, the counter keeps a good part of its pace.
    assert ticks > 0.1 * free_rate * elapsed, \
        f"{ticks} ticks in {elapsed:.2f} s against {free_rate:.0f}/s alone: the GIL was held"


def test_images_come_back_when_asked():
    from scipy import ndimage
    data = random_field(16)
    got = skysift.find(data, table=False, images=True)
    ref = lesson(data)
    np.testing.assert_array_equal(got["mask"], ref["seg"])
    np.testing.assert_array_equal(got["labels"], ref["labels"])
    assert got["labels"].max() == len(got["x_centroid"])
    assert ndimage is not None


def test_import_needs_numpy_alone(tmp_path):
    """With astropy hidden, import works and find returns a dict."""
    code = ("import sys; sys.modules['astropy'] = None; sys.modules['scipy'] = None\n"
            "import numpy as np, skysift\n"
            "r = skysift.find(np.random.default_rng(1).normal(size=(64, 64)).astype('f4'))\n"
            "assert isinstance(r, dict), type(r)\nprint('dict', len(r['npix']))\n")
    proc = subprocess.run([os.sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("dict")


def test_read_image_is_astropys_data(gc_path):
    fits = pytest.importorskip("astropy.io.fits")
    np.testing.assert_array_equal(skysift.read_image(gc_path), fits.getdata(gc_path))
    with pytest.raises(skysift.SkysiftIOError, match="nonesuch.fits"):
        skysift.read_image("nonesuch.fits")


def test_packed_columns_read_the_device_layout(gc_path):
    """The device's packed catalogue (column after column, the CSV's order)
    read into the host run's columns: every value, every dtype, and writable
    arrays that do not share the C buffer."""
    import ctypes

    from skysift import _table
    host = skysift.find(gc_path, table=False)
    n = host["meta"]["nsources"]
    names = [name for name, _, _ in _table.PIXEL_COLUMNS]
    block = b"".join(np.ascontiguousarray(host[name]).tobytes() for name in names)
    assert len(block) == n * _table.PACKED_BYTES
    buf = ctypes.create_string_buffer(block, len(block))
    cols = _table.packed_columns(ctypes.addressof(buf), n)
    ctypes.memset(buf, 0, len(block))
    assert list(cols) == ["source_id"] + names
    for name in ["source_id"] + names:
        assert cols[name].dtype == host[name].dtype
        np.testing.assert_array_equal(cols[name], host[name])
    cols["x_centroid"][0] = -1.0
    assert _table.packed_columns(0, 0)["x_centroid"].shape == (0,)


def test_packed_columns_follow_the_block_when_it_moves_or_grows():
    """The view over the host's block is kept from call to call: a block at
    another address, or a longer catalogue at the same one, is read anew."""
    import ctypes

    from skysift import _table
    names = [name for name, _, _ in _table.PIXEL_COLUMNS]
    rng = np.random.default_rng(7)

    def packed(n):
        cols = {name: (rng.normal(size=n) * 100).astype(dtype)
                for name, _, dtype in _table.PIXEL_COLUMNS}
        return cols, b"".join(cols[name].tobytes() for name in names)

    big = ctypes.create_string_buffer(200 * _table.PACKED_BYTES)
    other = ctypes.create_string_buffer(200 * _table.PACKED_BYTES)
    for buf, n in ((big, 3), (big, 150), (other, 150), (other, 2), (big, 200)):
        want, block = packed(n)
        ctypes.memmove(buf, block, len(block))
        got = _table.packed_columns(ctypes.addressof(buf), n)
        assert list(got) == ["source_id"] + names
        np.testing.assert_array_equal(got["source_id"], np.arange(1, n + 1))
        for name in names:
            assert got[name].dtype == want[name].dtype and got[name].shape == (n,)
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"{name}, n={n}")


def test_packed_columns_never_change_under_a_caller_that_holds_them():
    """Columns are copied into blocks that later calls reuse only once
    nothing outside holds any part of them: a result kept whole, one of its
    columns, or a view of one keeps its values through later calls; a
    result dropped (even one changed in place) comes back right."""
    import ctypes

    from skysift import _table
    names = [name for name, _, _ in _table.PIXEL_COLUMNS]
    rng = np.random.default_rng(8)
    n = 57

    def packed():
        cols = {name: (rng.normal(size=n) * 100).astype(dtype)
                for name, _, dtype in _table.PIXEL_COLUMNS}
        buf = ctypes.create_string_buffer(b"".join(cols[k].tobytes() for k in names))
        return cols, buf

    def check(got, want):
        np.testing.assert_array_equal(got["source_id"], np.arange(1, n + 1))
        for name in names:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)

    want1, buf1 = packed()
    kept = _table.packed_columns(ctypes.addressof(buf1), n)
    want2, buf2 = packed()
    one_column = _table.packed_columns(ctypes.addressof(buf2), n)["sum_flux"]
    want3, buf3 = packed()
    a_view = _table.packed_columns(ctypes.addressof(buf3), n)["peak_x"][3:9]
    blocks = set()
    for _ in range(8):
        want, buf = packed()
        dropped = _table.packed_columns(ctypes.addressof(buf), n)
        check(dropped, want)
        blocks.add(dropped["source_id"].ctypes.data)
        dropped["source_id"][:] = -5
        dropped["npix"][:] = -5
        del dropped
    assert len(blocks) < 8, "a dropped result's block is never reused"
    check(kept, want1)
    np.testing.assert_array_equal(one_column, want2["sum_flux"])
    np.testing.assert_array_equal(a_view, want3["peak_x"][3:9])

