#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Convolution benchmark: the lesson's demo (2048 x 2048 deltas every 16
pixels, its 15 x 15 Gaussian) with scipy.signal.convolve2d and np.convolve
against `skysift-cli convolve --demo`, in the same run, alternating rounds.
Each round takes each side's best of --repeat; the table gives medians over
rounds and the ratio NumPy/SciPy over skysift.

usage: bench/bench-convolve.py [--rounds 5] [--repeat 3] [--dtype f64]
                               [--mode full] [--record FILE]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy.signal import convolve2d

import benchlib
from benchlib import ROOT


def lesson_inputs(dtype):
    deltas = np.zeros((2048, 2048), dtype=dtype)
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    dst = np.sqrt(x * x + y * y)
    gauss = np.exp(-((dst - 0.0) ** 2 / (2.0 * 1.0 ** 2))).astype(dtype)
    return deltas, gauss


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--dtype", default="f64", choices=["f32", "f64"])
    ap.add_argument("--mode", default="full", choices=["full", "same", "valid"])
    ap.add_argument("--record")
    args = ap.parse_args()

    deltas, gauss = lesson_inputs(np.float64 if args.dtype == "f64" else np.float32)
    rows = {"scipy_2d": [], "numpy_1d": [], "sky_2d": [], "sky_2d_direct": [], "sky_1d": []}
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "c.json")
        for r in range(args.rounds):
            rows["scipy_2d"].append(benchlib.best_of(lambda: convolve2d(deltas, gauss, mode=args.mode),
                                            args.repeat))
            rows["numpy_1d"].append(benchlib.best_of(lambda: np.convolve(deltas.ravel(), gauss.diagonal()),
                                            args.repeat))
            subprocess.run([args.cli, "convolve", "--demo", "--dtype", args.dtype, "--mode",
                            args.mode, "--repeat", str(args.repeat), "--json", out],
                           check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                sky = json.load(f)
            assert sky["agree"], "skysift's paths disagree"
            rows["sky_2d"].append(sky["cpu_2d_ms"])
            rows["sky_2d_direct"].append(sky["cpu_2d_direct_ms"])
            rows["sky_1d"].append(sky["cpu_1d_ms"])
            print(f"round {r + 1}/{args.rounds}: SciPy 2D {rows['scipy_2d'][-1]:.0f} ms, "
                  f"skysift 2D {sky['cpu_2d_ms']:.2f} ms", file=sys.stderr)

    med = benchlib.medians(rows)
    lines = [f"## Convolution benchmark (CPU), {datetime.date.today().isoformat()}\n",
             f"machine: {benchlib.machine()}",
             f"command: {benchlib.command()}\n",
             f"lesson demo, {args.dtype}, mode {args.mode}; {args.rounds} rounds, each best of "
             f"{args.repeat}; medians over rounds\n",
             "| case | NumPy/SciPy (ms) | skysift CPU (ms) | ratio |",
             "| --- | ---: | ---: | ---: |",
             f"| 2D, convolve2d vs skysift {sky['path']} | {med['scipy_2d']:.1f} | "
             f"{med['sky_2d']:.2f} | {med['scipy_2d'] / med['sky_2d']:.1f}x |",
             f"| 2D, convolve2d vs skysift direct | {med['scipy_2d']:.1f} | "
             f"{med['sky_2d_direct']:.2f} | {med['scipy_2d'] / med['sky_2d_direct']:.1f}x |",
             f"| 1D, np.convolve vs skysift | {med['numpy_1d']:.1f} | {med['sky_1d']:.2f} | "
             f"{med['numpy_1d'] / med['sky_1d']:.1f}x |",
             f"\n2D demo: {med['scipy_2d'] / med['sky_2d']:.1f}x faster than "
             f"scipy.signal.convolve2d (target 30x)"]
    print("\n".join(lines))
    benchlib.append_record(args.record, "\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
