#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""find with --memory-limit against the whole-image run on one synthetic
field: each run's peak resident memory (the process's own, from wait4),
its wall time, its JSON's load and step times, and whether its CSV is the
whole-image run's byte for byte. Runs one after the other, never together.

usage: bench/bench-tiled.py [--cli build/src/cli/skysift-cli] [--size 16384]
                            [--limits 2G,512M] [--dir /tmp/skysift-bench-tiled]
                            [--keep] [--record FILE]
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess

import benchlib
from benchlib import ROOT


def run(cmd):
    """Runs cmd; its wall time in s and peak RSS in MiB."""
    code, wall, peak_kib = benchlib.run_peak(cmd, stdout=subprocess.DEVNULL)
    if code != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}")
    return wall, peak_kib / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--limits", default="2G,512M")
    ap.add_argument("--dir", default="/tmp/skysift-bench-tiled")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--record")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    image = os.path.join(args.dir, f"synth-{args.size}.fits")
    if not os.path.exists(image):
        subprocess.run([args.cli, "synth", image, "--size", str(args.size)], check=True,
                       stdout=subprocess.DEVNULL)
    rows = []
    whole_csv = None
    try:
        for limit in [None] + args.limits.split(","):
            name = "whole" if limit is None else limit
            csv_path = os.path.join(args.dir, f"{name}.csv")
            json_path = os.path.join(args.dir, f"{name}.json")
            cmd = [args.cli, "find", image, "--quiet", "--csv", csv_path, "--json", json_path]
            if limit is not None:
                cmd += ["--memory-limit", limit]
            wall, rss = run(cmd)
            summary = json.load(open(json_path))
            t = summary["times_ms"]["cpu"]
            data = open(csv_path, "rb").read()
            if whole_csv is None:
                whole_csv = data
            rows.append(f"| {'none (whole image)' if limit is None else limit} | {rss:.0f} "
                        f"| {wall:.2f} | {t['load']:.1f} | {t['clip']:.1f} | {t['segment']:.1f} "
                        f"| {t['label']:.1f} | {t['measure']:.1f} | {summary['nsources']} "
                        f"| {'yes' if data == whole_csv else 'NO'} |")
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    lines = [f"## find --memory-limit on a {args.size}^2 synthetic field, "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}", "",
             f"machine: {benchlib.machine()}",
             f"command: {benchlib.command()}", "",
             "| memory limit | peak RSS (MiB) | wall (s) | load (ms) | clip (ms) | segment (ms) "
             "| label (ms) | measure (ms) | sources | CSV = whole run's |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows, ""]
    benchlib.print_report(lines, args.record)


if __name__ == "__main__":
    main()
