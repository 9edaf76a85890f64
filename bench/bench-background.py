#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Background benchmark: `skysift-cli background` (mesh and both maps)
against SEP (sep.Background with mask=~isfinite, bw = bh = 64, fw = fh = 3,
then .back() and .rms()) on synthetic fields made by `skysift-cli synth`, in
the same run, alternating rounds. Each round takes each side's best of
--repeat; the table gives medians over rounds and the ratio SEP / skysift.
The lesson's four steps (`skysift-cli find`) are timed in the same rounds:
the background is a part of the local method, whose budget is 1.5x those.

Times exclude reading the file; SEP gets a native float32 array and its
mask made beforehand. skysift runs on every core (and on one, for the ratio
per core); SEP's background is single-threaded. Against SEP, skysift makes
new maps on every repeat as back() and rms() do (their first touch is
timed on both sides); against the lesson's four steps, whose repeats reuse
their buffers, it reuses its maps too (--reuse-maps).

usage: bench/bench-background.py [--rounds 5] [--repeat 3] [--sizes 2048,8192]
                                 [--record FILE]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from astropy.io import fits
import sep

import benchlib
from benchlib import ROOT


def sep_maps(data, mask):
    bkg = sep.Background(data, mask=mask, bw=64, bh=64, fw=3, fh=3)
    bkg.back()
    bkg.rms()


def skysift_json(cli, args, out):
    subprocess.run([cli, *args, "--quiet", "--json", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def bench_size(args, size, tmp, lines):
    image = os.path.join(tmp, f"synth-{size}.fits")
    subprocess.run([args.cli, "synth", image, "--size", str(size)], check=True)
    data = fits.getdata(image).astype(np.float32)   # native byte order
    mask = ~np.isfinite(data)
    rows = {"sep": [], "sky": [], "sky1": [], "reused": [], "lesson": []}
    out = os.path.join(tmp, "run.json")
    rep = str(args.repeat)
    for r in range(args.rounds):
        rows["sep"].append(benchlib.best_of(lambda: sep_maps(data, mask), args.repeat))
        rows["sky"].append(skysift_json(args.cli, ["background", image, "--repeat", rep],
                                        out)["times_ms"]["total"])
        rows["sky1"].append(skysift_json(args.cli, ["background", image, "--repeat", rep,
                                                    "--threads", "1"], out)["times_ms"]["total"])
        rows["reused"].append(skysift_json(args.cli, ["background", image, "--repeat", rep,
                                                      "--reuse-maps"], out)["times_ms"]["total"])
        rows["lesson"].append(skysift_json(args.cli, ["find", image, "--repeat", rep],
                                           out)["times_ms"]["cpu"]["total"])
        print(f"{size}: round {r + 1}/{args.rounds}: SEP {rows['sep'][-1]:.0f} ms, skysift "
              f"{rows['sky'][-1]:.1f} ms ({rows['sky1'][-1]:.1f} ms on one thread, "
              f"{rows['reused'][-1]:.1f} ms reusing its maps), lesson method "
              f"{rows['lesson'][-1]:.1f} ms", file=sys.stderr)
    med = benchlib.medians(rows)
    lines += [f"| {size} x {size} | {med['sep']:.1f} | {med['sky']:.2f} | {med['sky1']:.2f} | "
              f"{med['sep'] / med['sky']:.1f}x | {med['sep'] / med['sky1']:.1f}x | "
              f"{med['reused']:.2f} | {med['lesson']:.2f} | {med['reused'] / med['lesson']:.2f} |"]
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--record", help="also append the report to this Markdown file")
    args = ap.parse_args()

    lines = [f"## Background benchmark (CPU), {datetime.date.today().isoformat()}\n",
             f"machine: {benchlib.machine()}, load average {os.getloadavg()[0]:.1f} at the start",
             f"command: {benchlib.command()}",
             f"SEP {sep.__version__}, skysift on {os.cpu_count()} threads and on 1\n",
             f"synth fields, {args.rounds} rounds, each side best of {args.repeat}; medians "
             "over rounds; times exclude reading the file\n",
             "| image | SEP (ms) | skysift (ms) | skysift, 1 thread (ms) | SEP / skysift | "
             "SEP / skysift 1 thread | skysift, maps reused (ms) | lesson's four steps (ms) | "
             "background (maps reused) / four steps |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    meds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for size in [int(s) for s in args.sizes.split(",")]:
            meds[size] = bench_size(args, size, tmp, lines)
    big = max(meds)
    lines.append(f"\nat {big} x {big}: skysift {meds[big]['sep'] / meds[big]['sky']:.1f}x "
                 f"faster than SEP (target at least 5x)")
    print("\n".join(lines))
    benchlib.append_record(args.record, "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
