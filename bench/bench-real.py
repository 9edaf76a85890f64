#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift's local method beside SEP on the real images in ../shared/data/external.

usage: bench-real.py [--cli build/src/cli/skysift-cli] [IMAGE...]

For each image: skysift-cli find --method local (its defaults) and SEP with the same
mesh (sep.Background, bw = bh = 64, fw = fh = 3, blanks masked) and extraction at 5
times the global rms (SEP's defaults otherwise: 3x3 conv filter, minarea 5, deblending
32 levels 0.005). Prints how many of SEP's sources skysift matches within 2 px (one to
one, closest pairs first), how many of skysift's SEP matches, how many of skysift's
sources touch the image edge or blanks (flags 1, 2), and the global method's count.
"""
import argparse
import csv
import glob
import os
import subprocess
import sys
import tempfile

import numpy as np
from astropy.io import fits

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
sys.path.insert(0, os.path.join(SHARED, "tools"))
from score_catalogue import match  # noqa: E402


def first_image(path):
    with fits.open(path) as hdul:
        for h in hdul:
            if h.data is not None and h.data.ndim >= 2:
                d = np.asarray(h.data, dtype=np.float32)
                while d.ndim > 2:
                    d = d[0]
                return np.ascontiguousarray(d)
    return None


def sep_sources(data):
    import sep
    sep.set_extract_pixstack(50_000_000)
    sep.set_sub_object_limit(4096)
    mask = ~np.isfinite(data)
    d = np.where(mask, 0, data).astype(np.float32)
    bkg = sep.Background(d, mask=mask, bw=64, bh=64, fw=3, fh=3)
    objs = sep.extract(d - bkg.back(), 5.0, err=bkg.globalrms, mask=mask)
    return np.column_stack([objs["x"], objs["y"]])


def skysift(cli, path, extra, out):
    r = subprocess.run([cli, "find", path, "--quiet", "--csv", out] + extra,
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip()
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    return rows, r.stderr.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("images", nargs="*")
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    a = ap.parse_args()
    images = a.images or sorted(glob.glob(os.path.join(SHARED, "data", "external", "*.fits")))
    tmp = tempfile.mkdtemp()
    print(f"{'image':26s} {'size':>11s} {'global':>7s} {'local':>7s} {'SEP':>6s} "
          f"{'SEP matched':>12s} {'local matched':>14s} {'edge/blank':>10s}")
    for path in images:
        data = first_image(path)
        if data is None or data.shape[0] < 8 or data.shape[1] < 8:
            continue
        name = os.path.basename(path)
        glob_rows, _ = skysift(a.cli, path, [], os.path.join(tmp, "g.csv"))
        rows, err = skysift(a.cli, path, ["--method", "local"], os.path.join(tmp, "l.csv"))
        if rows is None:
            print(f"{name:26s} skysift failed: {err}")
            continue
        sk = np.array([[float(r["x_centroid"]), float(r["y_centroid"])] for r in rows]).reshape(-1, 2)
        flags = np.array([int(r["flags"]) for r in rows], dtype=int)
        try:
            sp = sep_sources(data)
        except Exception as e:  # noqa: BLE001 - SEP refuses some images; say why
            print(f"{name:26s} SEP failed: {e}")
            continue
        ia, ib, _ = match(sk, sp, 2.0)
        frac_sep = len(ib) / len(sp) if len(sp) else float("nan")
        frac_sk = len(ia) / len(sk) if len(sk) else float("nan")
        edge = int(((flags & 3) != 0).sum())
        size = f"{data.shape[1]}x{data.shape[0]}"
        print(f"{name:26s} {size:>11s} {len(glob_rows or []):7d} {len(sk):7d} {len(sp):6d} "
              f"{len(ib):5d} ({frac_sep:4.2f}) {len(ia):6d} ({frac_sk:4.2f}) {edge:10d}")


if __name__ == "__main__":
    main()
