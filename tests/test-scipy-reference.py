#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli against SciPy computed here and now, on the project's own
fixtures: synthetic fields from `skysift-cli synth` (a fresh seed each run,
printed for replay) with blanks, odd sizes, and the options the shared
reference does not cover (8-connectivity, a relative threshold, another
kappa). This is what keeps the suite meaningful on a machine without the
shared test images. It needs NumPy, SciPy and astropy, and skips without."""
import csv
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")

try:
    import numpy as np
    from astropy.io import fits
    from scipy import ndimage
except ImportError as e:  # pragma: no cover - depends on the machine
    np = None
    MISSING = str(e)


def lesson_pipeline(data, kappa=3.0, threshold=5.0, relative=False, connectivity=4, box=None):
    """The lesson's four steps in NumPy/SciPy, with blanks left out of the
    statistics and of every source. With box=N, clip and segment run on the
    image convolved with an N x N box of unit sum (blanks as 0, kept blank),
    and the sources are measured on the image itself."""
    detect = data
    if box:
        from scipy.signal import convolve2d
        kernel = np.full((box, box), 1.0 / (box * box))
        detect = convolve2d(np.nan_to_num(data, nan=0.0).astype(np.float64), kernel, "same")
        detect = np.where(np.isfinite(data), detect, np.nan).astype(np.float32)
    flat = detect.ravel()
    flat = flat[np.isfinite(flat)]
    while True:
        med = np.median(flat)
        std = np.std(flat.astype(np.float64))
        kept = flat[(flat > med - kappa * std) & (flat < med + kappa * std)]
        if len(kept) == len(flat):
            break
        if len(kept) == 0:
            return dict(median=float(med), std=0.0, n=len(flat), flat=True), []
        flat = kept
    std = float(np.std(flat.astype(np.float64)))
    med = float(np.median(flat.astype(np.float64)))
    level = med + threshold * std if relative else threshold * std
    seg = np.where(np.isfinite(detect), detect.astype(np.float64) > level, False)
    structure = ndimage.generate_binary_structure(2, 2 if connectivity == 8 else 1)
    labels, n = ndimage.label(seg, structure=structure)
    idx = np.arange(1, n + 1)
    pos = ndimage.center_of_mass(data.astype(np.float64), labels, idx) if n else []
    sums = ndimage.sum_labels(data.astype(np.float64), labels, idx) if n else []
    npix = ndimage.sum_labels(np.ones_like(data, dtype=np.float64), labels, idx) if n else []
    sources = [(p[1], p[0], s, int(k)) for p, s, k in zip(pos, sums, npix)]
    return dict(median=med, std=std, n=len(flat), flat=False), sources


def run_cli(image, tmp, *options):
    out_csv, out_json = os.path.join(tmp, "o.csv"), os.path.join(tmp, "o.json")
    proc = subprocess.run([CLI, "find", image, "--quiet", "--csv", out_csv, "--json", out_json,
                           *options], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out_json) as f:
        summary = json.load(f)
    with open(out_csv) as f:
        rows = list(csv.DictReader(f))
    return summary, rows


def compare(image, options, **kw):
    data = fits.getdata(image).astype(np.float32)
    want_stats, want = lesson_pipeline(data, **kw)
    with tempfile.TemporaryDirectory() as tmp:
        got, rows = run_cli(image, tmp, *options)
    c = got["clipped"]
    assert c["n"] == want_stats["n"], f"clipped count {c['n']} vs SciPy {want_stats['n']}"
    assert abs(c["median"] - want_stats["median"]) <= 1e-6 * abs(want_stats["median"]) + 1e-30
    assert abs(c["std"] - want_stats["std"]) <= 1e-6 * want_stats["std"]
    assert got["nsources"] == len(want), f"{got['nsources']} sources vs SciPy {len(want)}"
    for row, (x, y, s, n) in zip(rows, want):
        sid = row["source_id"]
        assert int(row["npix"]) == n, f"source {sid}: {row['npix']} px vs {n}"
        assert abs(float(row["x_centroid"]) - x) <= 1e-4, f"source {sid}: x {row['x_centroid']} vs {x}"
        assert abs(float(row["y_centroid"]) - y) <= 1e-4, f"source {sid}: y {row['y_centroid']} vs {y}"
        assert abs(float(row["sum_flux"]) - s) <= 1e-6 * abs(s), f"source {sid}: sum {row['sum_flux']} vs {s}"


def make_fixture(tmp, size, seed, blanks):
    path = os.path.join(tmp, f"synth_{size}_{seed}.fits")
    proc = subprocess.run([CLI, "synth", path, "--size", str(size), "--seed", str(seed)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"synth failed: {proc.stderr}"
    if blanks:
        with fits.open(path) as hdul:
            data = hdul[0].data.astype(np.float32)
            header = hdul[0].header
        rng = np.random.default_rng(seed)
        data[rng.random(data.shape) < 0.03] = np.nan
        data[: size // 7, : size // 5] = np.nan  # a blank corner, as outside a mosaic
        # an odd size: drop a column and two rows
        data = data[:-2, :-1]
        path = path.replace(".fits", "_blank.fits")
        fits.PrimaryHDU(data, header=header).writeto(path, overwrite=True)
    return path


def quantise(path):
    """A copy of a fixture with every pixel a multiple of 2**-12."""
    with fits.open(path) as hdul:
        data = hdul[0].data.astype(np.float64)
        header = hdul[0].header
    data = (np.round(data * 4096.0) / 4096.0).astype(np.float32)
    out = path.replace(".fits", "_q.fits")
    fits.PrimaryHDU(data, header=header).writeto(out, overwrite=True)
    return out


def main():
    tap = Tap()
    if np is None:
        tap.skip("scipy-reference", f"NumPy/SciPy/astropy not importable ({MISSING}); "
                 "install python3-scipy and python3-astropy")
        return tap.done()
    seed = int(os.environ.get("SKYSIFT_TEST_SEED", random.randrange(1, 1 << 30)))
    print(f"# fixtures from seed {seed} (SKYSIFT_TEST_SEED={seed} replays them)")
    with tempfile.TemporaryDirectory() as tmp:
        fixtures = {}

        def build():
            fixtures["plain"] = make_fixture(tmp, 512, seed, blanks=False)
            fixtures["blank"] = make_fixture(tmp, 384, seed + 1, blanks=True)
            fixtures["quantised"] = quantise(fixtures["plain"])
            fixtures["quantised_blank"] = quantise(fixtures["blank"])

        tap.check("scipy/fixtures-made-by-synth", build)
        if len(fixtures) < 4:
            return tap.done()
        plain, blank = fixtures["plain"], fixtures["blank"]
        quantised, quantised_blank = fixtures["quantised"], fixtures["quantised_blank"]
        cases = [
            ("scipy/synth-512-defaults", plain, [], {}),
            ("scipy/synth-512-8-connected", plain, ["--connectivity", "8"], dict(connectivity=8)),
            ("scipy/synth-512-relative-threshold-4", plain, ["--relative", "--threshold", "4"],
             dict(relative=True, threshold=4.0)),
            ("scipy/synth-512-kappa-2.5", plain, ["--clip-kappa", "2.5"], dict(kappa=2.5)),
            ("scipy/synth-383x382-blanks", blank, [], {}),
            ("scipy/synth-383x382-blanks-8-connected-one-thread", blank,
             ["--connectivity", "8", "--threads", "1"], dict(connectivity=8)),
            # Boxes of 2 and 4 pixels weigh 1/4 and 1/16: on pixels that are
            # multiples of 2**-12 every sum is exact in float32 and in double,
            # so detection on the smoothed image can be checked exactly.
            ("scipy/synth-quantised-smooth-box2", quantised, ["--smooth", "box:2"], dict(box=2)),
            ("scipy/synth-quantised-blanks-smooth-box4-8-connected", quantised_blank,
             ["--smooth", "box:4", "--connectivity", "8"], dict(box=4, connectivity=8)),
        ]
        for name, image, options, kw in cases:
            tap.check(name, lambda i=image, o=options, k=kw: compare(i, o, **k))
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
