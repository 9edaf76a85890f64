#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""find in bands of rows against the whole-image run, on the GPU and on the
CPU, on one synthetic field: --backend gpu whole and under
--gpu-memory-limit, then the CPU whole and under --memory-limit. For each
run: its peak resident memory (the process's own, from wait4), its wall
time, its JSON's load and step times, the bands' line where it ran in bands,
and whether its CSV is the whole-image GPU run's byte for byte. The runs go
one after the other, never together; the field is made first with
skysift-cli synth and read once before the runs (page cache warm).

usage: bench/bench-gpu-tiled.py --cli PACK/bin/skysift-cli [--size 32768]
       [--gpu-limit 2G] [--cpu-limit 2G] [--repeat 2] [--dir DIR] [--record FILE]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import machine  # noqa: E402


def run_rss(cmd):
    """Runs cmd with wait4 for its own peak RSS: stdout, wall s, RSS MiB."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = proc.stdout.read().decode()
    err = proc.stderr.read().decode()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{out[-2000:]}\n{err[-2000:]}")
    return out, err, wall, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--size", type=int, default=32768)
    ap.add_argument("--gpu-limit", default="2G")
    ap.add_argument("--cpu-limit", default="2G")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each GPU case")
    ap.add_argument("--dir", default="/tmp/skysift-bench-gpu-tiled")
    ap.add_argument("--no-cpu", action="store_true")
    ap.add_argument("--record")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    image = os.path.join(args.dir, f"synth-{args.size}.fits")
    if not os.path.exists(image):
        t0 = time.perf_counter()
        subprocess.run([args.cli, "synth", image, "--size", str(args.size)], check=True,
                       stdout=subprocess.DEVNULL)
        print(f"synth {args.size}^2: {time.perf_counter() - t0:.1f} s", flush=True)
    with open(image, "rb") as f:       # into the page cache
        while f.read(1 << 26):
            pass

    cases = [("gpu", None)] * args.repeat + [("gpu", args.gpu_limit)] * args.repeat
    if not args.no_cpu:
        cases += [("cpu", None), ("cpu", args.cpu_limit)]
    rows, notes = [], []
    ref = None
    for k, (backend, limit) in enumerate(cases):
        name = f"{k}-{backend}-{limit or 'whole'}"
        csv_path = os.path.join(args.dir, name + ".csv")
        json_path = os.path.join(args.dir, name + ".json")
        cmd = [args.cli, "find", image, "--backend", backend, "--csv", csv_path,
               "--json", json_path]
        if limit is not None:
            cmd += ["--gpu-memory-limit" if backend == "gpu" else "--memory-limit", limit]
        out, err, wall, rss = run_rss(cmd)
        summary = json.load(open(json_path))
        data = open(csv_path, "rb").read()
        if ref is None:
            ref = data
        t = summary["times_ms"][summary["backend"]]
        bands = next((ln for ln in out.splitlines() if ln.startswith("gpu bands")), "")
        if bands:
            notes.append(f"- `{' '.join(cmd[1:])}`: {bands[len('gpu bands'):].strip()}")
        steps = t
        rows.append(f"| {backend} | {limit or 'none (whole image)'} | {summary['backend']} "
                    f"| {rss:.0f} | {wall:.2f} | {t['load']:.1f} "
                    f"| {steps.get('clip', 0):.1f} | {steps.get('segment', 0):.1f} "
                    f"| {steps.get('label', 0):.1f} | {steps.get('measure', 0):.1f} "
                    f"| {summary['nsources']} | {'yes' if data == ref else 'NO'} |")
        print(rows[-1], flush=True)
        if err.strip():
            print(err.strip()[-600:], flush=True)
        if data == ref and k > 0:
            os.unlink(csv_path)
    lines = [f"## find in bands on a {args.size}^2 synthetic field, GPU and CPU, "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}", "",
             f"machine: {machine()}",
             f"command: bench/bench-gpu-tiled.py {' '.join(sys.argv[1:])}", "",
             "| backend | memory limit | ran on | peak RSS (MiB) | wall (s) | load (ms) "
             "| clip (ms) | segment (ms) | label (ms) | measure (ms) | sources "
             "| CSV = first GPU run's |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |", *rows, "",
             "The runs in bands:", "", *notes, ""]
    report = "\n".join(lines)
    print(report)
    if args.record:
        with open(args.record, "a") as f:
            f.write("\n" + report)


if __name__ == "__main__":
    main()
