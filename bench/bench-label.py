#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Label-step benchmark on adversarial masks: builds bench/bench-label.c
against a build directory's static libraries and runs it with the CLI's
default thread count and with one thread. Each run labels the GC-like
field's mask and checkerboards, stripes, noise and a full mask of the same
size in turn, round after round, and reports medians and each mask's time
over the field's in the same round (ratios, not absolute times: the
machine is shared).

usage: bench/bench-label.py [--build build-label] [--image FITS] [--rounds 201]
                            [--threads 0,1] [--binary EXE] [--record FILE]
"""
import argparse
import datetime
import os
import subprocess

import benchlib
from benchlib import ROOT


def build(build_dir):
    exe = os.path.join(build_dir, "bench-label")
    libs = subprocess.run(["pkg-config", "--libs", "cfitsio", "wcslib"], check=True,
                          capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "src", "core"), "-I" + os.path.join(ROOT, "src", "cpu"),
                    os.path.join(ROOT, "bench", "bench-label.c"),
                    os.path.join(build_dir, "src", "cpu", "libsky-cpu.a"),
                    os.path.join(build_dir, "src", "core", "libsky-core.a"),
                    *libs, "-lpthread", "-lm", "-o", exe], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build-label"))
    ap.add_argument("--image", default=os.path.join(ROOT, "..", "shared", "data", "gc_like_2048.fits"))
    ap.add_argument("--rounds", type=int, default=201)
    ap.add_argument("--threads", default="0,1", help="comma-separated; 0 is the CLI's default")
    ap.add_argument("--binary", help="an already built bench-label (another version, say)")
    ap.add_argument("--record", help="also append the report to this Markdown file")
    args = ap.parse_args()

    exe = args.binary or build(args.build)
    lines = [f"## Label step on adversarial masks, {datetime.date.today().isoformat()}", "",
             f"machine: {benchlib.machine()}",
             f"command: {benchlib.command()}", ""]
    for t in args.threads.split(","):
        out = subprocess.run([exe, args.image, t, str(args.rounds)], check=True,
                             capture_output=True, text=True).stdout
        lines += out.rstrip("\n").split("\n") + [""]
    benchlib.print_report(lines, args.record)


if __name__ == "__main__":
    main()
