#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""CPU benchmark: skysift-cli against the lesson's NumPy/SciPy pipeline on the
same image, in the same run, alternating rounds so that both see the same
machine state. Each round takes each step's best of --repeat runs; the table
gives the median over rounds and the ratio SciPy / skysift.

With --scale it also runs skysift on synthetic fields of two sizes and prints
the time per pixel of the four steps and the peak memory against the size of
the float32 image.

usage: bench/bench-cpu.py [--image FITS] [--rounds 5] [--repeat 5]
                          [--scale 2048,8192] [--record FILE]
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

import benchlib
from benchlib import ROOT, machine
STEPS = ["clip", "segment", "label", "measure", "total"]


def run_skysift(cli, image, repeat, tmp, extra=()):
    out = os.path.join(tmp, "skysift.json")
    cmd = [cli, "find", image, "--quiet", "--repeat", str(repeat), "--json", out, *extra]
    code, _, peak_kib = benchlib.run_peak(cmd)
    if code != 0:
        sys.exit(f"skysift-cli failed: {' '.join(cmd)}")
    with open(out) as f:
        summary = json.load(f)
    return summary, peak_kib * 1024


def run_scipy(script, image, repeat, tmp):
    out = os.path.join(tmp, "scipy.json")
    subprocess.run([sys.executable, script, image, "--repeat", str(repeat), "--json", out],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return json.load(f)


def compare(args, out):
    sky_times = {s: [] for s in STEPS}
    sci_times = {s: [] for s in STEPS}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            sci = run_scipy(args.reference, args.image, args.repeat, tmp)
            sky, _ = run_skysift(args.cli, args.image, args.repeat, tmp)
            assert sky["nsources"] == sci["nsources"], \
                f"skysift found {sky['nsources']} sources, SciPy {sci['nsources']}"
            for s in STEPS:
                sky_times[s].append(sky["times_ms"]["cpu"][s])
                sci_times[s].append(sci["times_ms"][s])
            print(f"round {r + 1}/{args.rounds}: SciPy {sci['times_ms']['total']:.1f} ms, "
                  f"skysift {sky['times_ms']['cpu']['total']:.2f} ms", file=sys.stderr)
    out(f"image: {os.path.relpath(args.image, ROOT)}, {sky['shape'][1]} x {sky['shape'][0]}, "
        f"{sky['nsources']} sources (both)")
    out(f"{args.rounds} rounds, each step best of {args.repeat}; medians over rounds\n")
    out("| step | SciPy (ms) | skysift CPU (ms) | SciPy / skysift |")
    out("| --- | ---: | ---: | ---: |")
    ok = True
    for s in STEPS:
        a, b = statistics.median(sci_times[s]), statistics.median(sky_times[s])
        out(f"| {s if s != 'total' else 'four steps'} | {a:.2f} | {b:.3f} | {a / b:.1f}x |")
        ok &= b < a
    ratio = statistics.median(sci_times["total"]) / statistics.median(sky_times["total"])
    out(f"\nfour steps: {ratio:.1f}x faster than SciPy (target 30x); "
        f"every step faster: {'yes' if ok else 'NO'}")


def scale(args, out):
    sizes = [int(s) for s in args.scale.split(",")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            image = os.path.join(tmp, f"synth_{n}.fits")
            subprocess.run([args.cli, "synth", image, "--size", str(n)], check=True)
            sky, maxrss = run_skysift(args.cli, image, args.repeat, tmp)
            os.unlink(image)
            t = sky["times_ms"]["cpu"]["total"]
            rows.append((n, t, t * 1e6 / (n * n), maxrss / (4.0 * n * n), sky["nsources"]))
    out("\n| synth size | sources | four steps (ms) | ns per pixel | peak memory / float32 image |")
    out("| ---: | ---: | ---: | ---: | ---: |")
    for n, t, per, mem, ns in rows:
        out(f"| {n} x {n} | {ns} | {t:.2f} | {per:.3f} | {mem:.2f}x |")
    if len(rows) > 1:
        out(f"\ntime per pixel, {rows[-1][0]} against {rows[0][0]}: "
            f"{rows[-1][2] / rows[0][2]:.2f}x (target at most 1.5x); "
            f"peak memory at most {max(r[3] for r in rows):.2f}x the image (target under 6x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", default=os.path.join(ROOT, "..", "shared", "data", "gc_like_2048.fits"))
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    ap.add_argument("--reference", default=os.path.join(ROOT, "..", "shared", "tools",
                                                        "reference_pipeline.py"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--scale", default="", help="comma-separated synth sizes, e.g. 2048,8192")
    ap.add_argument("--record", help="also append the report to this Markdown file")
    args = ap.parse_args()

    lines = []

    def out(text=""):
        print(text)
        lines.append(text)

    out(f"## CPU benchmark, {datetime.date.today().isoformat()}\n")
    out(f"machine: {machine()}")
    out(f"command: {benchlib.command()}\n")
    compare(args, out)
    if args.scale:
        scale(args, out)
    benchlib.append_record(args.record, "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
