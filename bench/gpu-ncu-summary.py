#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Summarises `ncu --metrics gpu__time_duration.sum --csv` output of a
skysift-cli GPU run: the kernels of the last pipeline run in launch order,
each with its duration, and the sum per step. Usage: gpu-ncu-summary.py CSV"""
import csv
import re
import sys

STEP_OF = [("clip", "clip"), ("segment", "segment"), ("label", "label"), ("DeviceScan", "label"),
           ("measure", "measure")]


def main(path):
    rows = []
    with open(path) as f:
        lines = [l for l in f if l.startswith('"')]
    for r in csv.DictReader(lines):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        name = re.sub(r"\(.*", "", r["Kernel Name"]).split("::")[-1]
        v = float(r["Metric Value"].replace(",", ""))
        unit = r.get("Metric Unit", "nsecond")
        us = v / 1000 if unit.startswith("n") else v if unit.startswith("u") else v * 1000
        rows.append((name, us, r["Grid Size"], r["Block Size"]))
    # The last run starts at the last histogram launch.
    starts = [i for i, r in enumerate(rows) if "clipHistogram" in r[0]]
    last = rows[starts[-1]:] if starts else rows
    steps = {}
    for name, us, grid, block in last:
        step = next((s for k, s in STEP_OF if k in name), "other")
        steps[step] = steps.get(step, 0) + us
        print(f"{name:34s} {us:10.2f} us  grid {grid:>16s} block {block}")
    print("per step (us): " + ", ".join(f"{k} {v:.1f}" for k, v in steps.items())
          + f", sum {sum(steps.values()):.1f}")


if __name__ == "__main__":
    main(sys.argv[1])
