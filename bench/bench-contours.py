#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Contour tracing against contourpy (what matplotlib's contour runs on),
in the same run, on the same pixels and levels: the GC-like field at 3, 5,
10 and 20 times its clipped sigma (skysift-cli find's). Each round times
skysift's sky_contour_trace (tests/sky-geometry-dump contour-time, the
median of REPEAT traces a level) and contourpy's lines() on the same
float32 array (mpl2014, as matplotlib's contour, corner_mask off; the
median of REPEAT calls), alternating, and prints the medians over the
rounds and their ratio per level, with the path counts of both (they must
be equal). The grid's time over the whole image is printed beside.

usage: bench/bench-contours.py [--build build] [--image FITS] [--rounds 5]
                               [--repeat 5] [--record FILE]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from benchlib import ROOT, machine
SIGMAS = (3, 5, 10, 20)


def clipped_sigma(cli, image, tmp):
    path = os.path.join(tmp, "find.json")
    subprocess.run([cli, "find", image, "--json", path], check=True, capture_output=True)
    with open(path) as f:
        return json.load(f)["clipped"]["std"]


def time_contourpy(z, levels, repeat):
    import contourpy
    # mpl2014 gives (points, codes) per path, as matplotlib draws them.
    gen = contourpy.contour_generator(z=z, name="mpl2014", corner_mask=False)
    result = []
    for lv in levels:
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            lines = gen.lines(lv)
            times.append((time.perf_counter() - t0) * 1e3)
        result.append((len(lines[0]), statistics.median(times)))
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--image", default=os.path.join(ROOT, "..", "shared", "data",
                                                    "gc_like_2048.fits"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--record")
    args = ap.parse_args()

    import numpy as np
    from astropy.io import fits

    dump = os.path.join(args.build, "tests", "sky-geometry-dump")
    cli = os.path.join(args.build, "src", "cli", "skysift-cli")
    with tempfile.TemporaryDirectory() as tmp:
        sigma = clipped_sigma(cli, args.image, tmp)
    levels = [k * sigma for k in SIGMAS]
    z = np.ascontiguousarray(fits.getdata(args.image), dtype=np.float32)
    ours = {lv: [] for lv in levels}
    theirs = {lv: [] for lv in levels}
    grid = []
    counts = {}
    for r in range(args.rounds):
        out = subprocess.run([dump, "contour-time", args.image, str(args.repeat)]
                             + [repr(lv) for lv in levels],
                             check=True, capture_output=True, text=True).stdout
        res = json.loads(out)
        grid.append(res["grid_median_ms"])
        cp = time_contourpy(z, levels, args.repeat)
        for lv, mine, (n, t) in zip(levels, res["levels"], cp):
            ours[lv].append(mine["median_ms"])
            theirs[lv].append(t)
            counts[lv] = (mine["paths"], n)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    lines = [f"# Contours: skysift against contourpy {__import__('contourpy').__version__}",
             "",
             f"{datetime.date.today().isoformat()}, {machine()}",
             f"`{' '.join(['bench/bench-contours.py'] + sys.argv[1:])}`: {os.path.basename(args.image)} "
             f"({z.shape[1]} x {z.shape[0]}), clipped sigma {sigma:.6g}; medians over "
             f"{args.rounds} rounds of the median of {args.repeat} traces.",
             "",
             "| level | paths (skysift / contourpy) | skysift ms | contourpy ms | contourpy / skysift |",
             "| --- | --- | --- | --- | --- |"]
    for k, lv in zip(SIGMAS, levels):
        a, b = statistics.median(ours[lv]), statistics.median(theirs[lv])
        lines.append(f"| {k} sigma ({lv:.5g}) | {counts[lv][0]} / {counts[lv][1]} | {a:.1f} | "
                     f"{b:.1f} | {b / a:.2f} |")
        assert counts[lv][0] == counts[lv][1], f"path counts differ at {lv}: {counts[lv]}"
    lines += ["", f"The whole image's coordinate grid (sky_wcs_grid): {statistics.median(grid):.2f} ms."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.record:
        with open(args.record, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
