#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli against the SciPy reference results of every shared image
(../shared/data/reference, made by the lesson's NumPy/SciPy pipeline), and
against the lesson's own numbers when its GMRT image is present.

The contract (docs/contract.md): the same number of sources in the same
label order, centroids within 1e-4 pixel, sums within 1e-6 relative, clipped
median and sigma within 1e-6 relative, the same number of clipped pixels."""
import csv
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
SHARED = os.environ.get("SKYSIFT_SHARED_DATA", "")
SOURCE_ROOT = os.environ.get("SKYSIFT_SOURCE_ROOT", ".")

# The ten largest summed fluxes the lesson prints for its GMRT image.
LESSON_TOP10 = [38.90615184, 41.91485894, 43.02203498, 47.30590784, 51.23707351,
                58.07289425, 68.85673917, 70.31223921, 95.16443585, 363.58937774]


def run_find(image, tmp, *extra):
    out_csv = os.path.join(tmp, "out.csv")
    out_json = os.path.join(tmp, "out.json")
    proc = subprocess.run([CLI, "find", image, "--csv", out_csv, "--json", out_json,
                           "--quiet", *extra], capture_output=True, text=True)
    assert proc.returncode == 0, f"skysift-cli failed ({proc.returncode}): {proc.stderr}"
    with open(out_json) as f:
        summary = json.load(f)
    with open(out_csv) as f:
        rows = list(csv.DictReader(f))
    return summary, rows


def close(a, b, rel, abs_=0.0):
    return abs(a - b) <= abs_ + rel * abs(b)


def compare_with_reference(image, ref_csv, ref_json):
    with open(ref_json) as f:
        ref = json.load(f)
    with open(ref_csv) as f:
        ref_rows = list(csv.DictReader(f))
    with tempfile.TemporaryDirectory() as tmp:
        got, rows = run_find(image, tmp)

    assert got["shape"] == ref["shape"], f"shape {got['shape']} != {ref['shape']}"
    rc, gc = ref["clipped"], got["clipped"]
    assert gc["n"] == rc["n"], (
        f"clipped pixel count {gc['n']} != {rc['n']} (only pixels exactly on a clipping "
        f"bound may differ; this would be one)")
    assert close(gc["median"], rc["median"], 1e-6, 1e-30), \
        f"median {gc['median']!r} != {rc['median']!r}"
    assert close(gc["std"], rc["std"], 1e-6), f"sigma {gc['std']!r} != {rc['std']!r}"
    assert got["nsources"] == ref["nsources"] == len(ref_rows), \
        f"{got['nsources']} sources, reference {ref['nsources']}"
    assert len(rows) == len(ref_rows)
    for mine, theirs in zip(rows, ref_rows):
        sid = int(mine["source_id"])
        assert sid == int(theirs["label"]), f"label order: {sid} != {theirs['label']}"
        assert int(mine["npix"]) == int(theirs["npix"]), \
            f"source {sid}: {mine['npix']} pixels, reference {theirs['npix']}"
        for ours, ref_key in (("x_centroid", "x_pix0"), ("y_centroid", "y_pix0")):
            assert abs(float(mine[ours]) - float(theirs[ref_key])) <= 1e-4, \
                f"source {sid}: {ours} {mine[ours]} vs {theirs[ref_key]}"
        assert close(float(mine["sum_flux"]), float(theirs["flux_sum"]), 1e-6), \
            f"source {sid}: sum {mine['sum_flux']} vs {theirs['flux_sum']}"


def lesson_image():
    for path in (os.environ.get("SKYSIFT_LESSON_IMAGE"),
                 os.path.join(SOURCE_ROOT, "data", "GMRT_image_of_Galactic_Center.fits")):
        if path and os.path.exists(path):
            return path
    return None


def check_lesson_numbers(path):
    with tempfile.TemporaryDirectory() as tmp:
        got, rows = run_find(path, tmp)
    assert got["nsources"] == 185, f"{got['nsources']} sources, the lesson finds 185"
    assert round(got["clipped"]["std"], 4) == 0.0133, f"sigma {got['clipped']['std']}"
    top = sorted(float(r["sum_flux"]) for r in rows)[-10:]
    for mine, lesson in zip(top, LESSON_TOP10):
        assert close(mine, lesson, 1e-6), f"largest fluxes {top} vs the lesson's {LESSON_TOP10}"


def main():
    tap = Tap()
    ref_dir = os.path.join(SHARED, "reference")
    if not os.path.isdir(ref_dir):
        tap.skip("reference images", f"no shared reference results at {ref_dir} "
                 "(they sit in ../shared/data beside a development checkout)")
    else:
        for name in sorted(os.listdir(ref_dir)):
            if not name.endswith(".json"):
                continue
            stem = name[:-5]
            image = os.path.join(SHARED, f"{stem}.fits")
            if not os.path.exists(image):
                image = os.path.join(SHARED, "external", f"{stem}.fits")
            tap.check(f"reference/{stem}", compare_with_reference, image,
                      os.path.join(ref_dir, f"{stem}.csv"), os.path.join(ref_dir, name))

    path = lesson_image()
    if path is None:
        tap.skip("lesson/GMRT-galactic-center-185-sources",
                 "GMRT_image_of_Galactic_Center.fits not found: put it in data/ or name it "
                 "in SKYSIFT_LESSON_IMAGE (data/README.md says where to get it)")
    else:
        tap.check("lesson/GMRT-galactic-center-185-sources", check_lesson_numbers, path)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
