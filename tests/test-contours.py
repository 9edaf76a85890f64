#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The core's contours (sky_contour_trace, marching squares) against
matplotlib's contour at the same levels, on images made here: Gaussian
sources on noise (many small paths, saddles), a smooth ridge that leaves
the image (open paths), a field with blank (NaN) pixels and the lesson's
kind of image, gc_like from the shared data where it is present.

For each level: the same number of paths, the same number closed, and
every vertex of each side within 0.5 pixel of the other side's nearest
vertex (the figures printed are the largest distances found). Blank
pixels: matplotlib is asked for corner_mask=False, which drops every cell
with a masked corner, as skysift does.

Usage: test-contours.py SKY-GEOMETRY-DUMP"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

try:
    import numpy as np
    from astropy.io import fits
    from scipy.spatial import cKDTree
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    MISSING = None
except ImportError as e:
    MISSING = f"needs numpy, scipy, astropy and matplotlib (python3-matplotlib): {e}"

DUMP = sys.argv[1] if len(sys.argv) > 1 else "sky-geometry-dump"
SHARED = os.environ.get("SKYSIFT_SHARED_DATA", "")
TOL_PX = 0.5


def sources_on_noise(rng, nx=96, ny=72):
    y, x = np.mgrid[0:ny, 0:nx]
    z = rng.normal(0, 1, (ny, nx))
    for cx, cy, peak, s in ((20, 30, 40, 2.0), (60, 20, 15, 3.0), (75, 55, 8, 1.5), (30, 60, 25, 4.0)):
        z += peak * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s))
    return z.astype(np.float32), [2.0, 3.0, 5.0, 10.0]


def ridge(rng, nx=80, ny=64):
    y, x = np.mgrid[0:ny, 0:nx]
    z = np.exp(-((y - 0.4 * x - 10) ** 2) / 200.0) * 10 + 0.05 * x
    return z.astype(np.float32), [1.0, 4.0, 8.0]


def with_blanks(rng, nx=80, ny=60):
    z, levels = sources_on_noise(rng, nx, ny)
    z[10:20, 15:25] = np.nan
    z[40, :] = np.nan
    z[:, 70] = np.nan
    return z, levels


def mpl_paths(z, level, corner_mask):
    fig = plt.figure()
    zz = np.ma.masked_invalid(z)
    cs = plt.contour(zz, levels=[level], corner_mask=corner_mask)
    segs = [np.asarray(s) for s in cs.allsegs[0] if len(s) > 0]
    plt.close(fig)
    return segs


def compare(z, levels, folder, name, corner_mask=True):
    path = os.path.join(folder, name + ".fits")
    fits.PrimaryHDU(z).writeto(path, overwrite=True)
    out = subprocess.run([DUMP, "contour", path] + [repr(float(v)) for v in levels],
                         capture_output=True, text=True, check=True)
    ours_all = json.loads(out.stdout)["levels"]
    worst = 0.0
    total = 0
    for lv, ours in zip(levels, ours_all):
        theirs = mpl_paths(z, lv, corner_mask)
        mine = [np.column_stack([p["x"], p["y"]]) for p in ours["paths"]]
        assert len(mine) == len(theirs), f"level {lv}: {len(mine)} paths here, {len(theirs)} by matplotlib"
        closed_mine = sum(p["closed"] for p in ours["paths"])
        closed_theirs = sum(1 for s in theirs if len(s) > 2 and np.allclose(s[0], s[-1]))
        assert closed_mine == closed_theirs, f"level {lv}: {closed_mine} closed here, {closed_theirs} by matplotlib"
        if not mine:
            continue
        a, b = np.vstack(mine), np.vstack(theirs)
        d_ab = cKDTree(b).query(a)[0].max()
        d_ba = cKDTree(a).query(b)[0].max()
        worst = max(worst, d_ab, d_ba)
        total += len(mine)
        assert d_ab < TOL_PX and d_ba < TOL_PX, f"level {lv}: vertices {d_ab:.3f} / {d_ba:.3f} px apart"
    print(f"# {name}: levels {levels}, {total} paths, largest vertex distance {worst:.2e} px")


def main():
    tap = Tap()
    if MISSING:
        tap.skip("contours against matplotlib", MISSING)
        return tap.done()
    rng = np.random.default_rng(17)
    with tempfile.TemporaryDirectory() as folder:
        tap.check("contours: sources on noise", lambda: compare(*sources_on_noise(rng), folder, "sources"))
        tap.check("contours: a ridge leaving the image", lambda: compare(*ridge(rng), folder, "ridge"))
        tap.check("contours: blank pixels (corner_mask=False)",
                  lambda: compare(*with_blanks(rng), folder, "blanks", corner_mask=False))

        def gc_like():
            src = os.path.join(SHARED, "gc_like_2048.fits") if SHARED else ""
            if not src or not os.path.exists(src):
                raise Skip(f"no {src or 'SKYSIFT_SHARED_DATA'}")
            z = fits.getdata(src).astype(np.float32)
            z = z[900:1156, 900:1156]
            sigma = 1.4826 * float(np.nanmedian(np.abs(z - np.nanmedian(z))))  # robust, as a clip would
            compare(z, [3 * sigma, 5 * sigma, 10 * sigma], folder, "gc_like_2048_centre")

        tap.check("contours: gc_like_2048 (256 x 256 at its centre) at 3, 5, 10 sigma", gc_like)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
