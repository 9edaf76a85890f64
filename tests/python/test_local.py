# SPDX-License-Identifier: GPL-3.0-or-later
"""The background and the local method from Python: background() against
SEP (the tool it follows), find(method="local") against the CLI's files."""
import subprocess

import numpy as np
import pytest
from conftest import random_field

import skysift

TOLERANCE = 0.01  # of SEP's rms, as tests/test-background.py


def assert_close_to_sep(data, back, rms, box, filt):
    sep = pytest.importorskip("sep", reason="SEP (python3-sep) is not installed")
    blank = ~np.isfinite(data)
    ref = sep.Background(np.ascontiguousarray(data, dtype=np.float32), mask=blank, bw=box,
                         bh=box, fw=filt, fh=filt)
    sb, sr = ref.back(), ref.rms()
    assert back.shape == data.shape and rms.shape == data.shape
    assert np.isfinite(back).all() and np.isfinite(rms).all()
    good = ~blank
    bound = TOLERANCE * np.abs(sr[good].astype(np.float64))
    db = np.abs(back[good].astype(np.float64) - sb[good])
    dr = np.abs(rms[good].astype(np.float64) - sr[good])
    assert (db <= bound).all(), f"background beyond 1% of SEP's rms at {np.sum(db > bound)} px"
    assert (dr <= bound).all(), f"rms beyond 1% of SEP's rms at {np.sum(dr > bound)} px"


@pytest.mark.parametrize("box,filt", [(64, 3), (32, 1), (50, 5)])
def test_background_matches_sep_on_random_fields(box, filt):
    data = random_field(41, ny=400, nx=333) + np.float32(10)
    back, rms = skysift.background(data, bkg_box=box, bkg_filter=filt)
    assert_close_to_sep(data, back, rms, box, filt)


def test_background_matches_sep_on_the_gc_image(gc_path):
    data = skysift.read_image(gc_path)
    back, rms = skysift.background(gc_path)
    assert_close_to_sep(data, back, rms, 64, 3)


def test_local_defaults_are_the_cores():
    import inspect
    from skysift import _lib
    sig = inspect.signature(skysift.find).parameters
    d = _lib.DEFAULTS
    for name in ("clip_kappa", "threshold", "seed_sigma", "flood_sigma", "min_area",
                 "deblend_sigma", "bkg_box", "bkg_filter", "connectivity", "max_iter"):
        assert sig[name].default == pytest.approx(getattr(d, name)), name
    assert sig["deblend"].default == (d.deblend_nthresh, pytest.approx(d.deblend_mincont))


@pytest.mark.parametrize("options,kwargs", [
    ([], {}),
    (["--seed-sigma", "6", "--flood-sigma", "3", "--min-area", "3", "--deblend", "16,0.01",
      "--bkg-box", "48", "--bkg-filter", "1"],
     dict(seed_sigma=6, flood_sigma=3, min_area=3, deblend=(16, 0.01), bkg_box=48,
          bkg_filter=1)),
    (["--deblend", "0"], dict(deblend=0)),
])
def test_local_csv_is_the_clis_byte_for_byte(gc_path, cli, tmp_path, options, kwargs):
    cli_csv, py_csv = tmp_path / "cli.csv", tmp_path / "py.csv"
    subprocess.run([cli, "find", gc_path, "--quiet", "--method", "local", "--csv",
                    str(cli_csv), *options], check=True)
    n = skysift.write_csv(gc_path, py_csv, method="local", **kwargs)
    assert n > 0
    assert py_csv.read_bytes() == cli_csv.read_bytes()


def test_local_on_an_array_is_the_local_on_its_file(gc_path):
    from_file = skysift.find(gc_path, method="local", table=False)
    from_array = skysift.find(skysift.read_image(gc_path), method="local", table=False)
    assert from_file["meta"]["steps"] == ["background", "detect", "flood", "deblend", "measure"]
    for key in ("x_centroid", "sum_flux", "npix", "local_rms", "x_win", "flags"):
        np.testing.assert_array_equal(from_array[key], from_file[key], err_msg=key)


def test_given_maps_replace_the_computed_ones():
    data = random_field(42, ny=300, nx=300)
    back, rms = skysift.background(data)
    computed = skysift.find(data, method="local", table=False)
    given = skysift.find(data, method="local", bkg=back, rms=rms, table=False)
    np.testing.assert_array_equal(given["sum_flux"], computed["sum_flux"])
    doubled = skysift.find(data, method="local", bkg=back, rms=2 * rms, table=False)
    assert len(doubled["npix"]) < len(computed["npix"])


def test_local_table_has_its_columns(gc_path):
    pytest.importorskip("astropy")
    t = skysift.find(gc_path, method="local")
    for name in ("background", "local_rms", "sum_flux_err", "peak_flux_err", "x_win", "y_win",
                 "flags"):
        assert name in t.colnames, name


def test_local_bad_inputs():
    data = random_field(43, ny=100, nx=100)
    with pytest.raises(ValueError, match="together"):
        skysift.find(data, method="local", bkg=np.zeros_like(data))
    with pytest.raises(ValueError, match="shape"):
        skysift.find(data, method="local", bkg=np.zeros((5, 5)), rms=np.ones((5, 5)))
    with pytest.raises(skysift.SkysiftValueError, match="local"):
        skysift.find(data, bkg=np.zeros_like(data), rms=np.ones_like(data))
    with pytest.raises(ValueError, match="deblend"):
        skysift.find(data, method="local", deblend="lots")
    with pytest.raises(skysift.SkysiftValueError, match="bkg_box|box"):
        skysift.background(data, bkg_box=0)
