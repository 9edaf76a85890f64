#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli find --backend gpu from the file to the catalogue: the plane
read straight to the device (SKYSIFT_GPU_LOAD=device) against the host load
followed by an upload (SKYSIFT_GPU_LOAD=host), alternating, each file's page
cache warm.

For each file and way: the medians of the JSON's load, the four steps'
kernels, load + steps, the upload a host load adds, the JSON's wall_ms
(from the command's start to its catalogue written), from the process's
spawn to the CSV's time stamp, and the process's own wall time (spawn to
exit, the device's teardown included); then whether the two ways wrote the same CSV, byte for
byte.

usage: bench/bench-gpu-load.py --cli PATH [--rounds N] [--record FILE] FITS...
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import benchlib

WAYS = [("device", {"SKYSIFT_GPU_LOAD": "device"}), ("host", {"SKYSIFT_GPU_LOAD": "host"})]


def machine():
    gpu = ""
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                              "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return (f"{benchlib.cpu_model('unknown processor')}, {os.cpu_count()} cores, "
            f"{gpu or 'no nvidia-smi'}, Linux {platform.release()}")


def run_once(cli, path, env_extra, tmp, tag):
    csv = os.path.join(tmp, f"{tag}.csv")
    js = os.path.join(tmp, f"{tag}.json")
    env = dict(os.environ, **env_extra)
    t0 = time.perf_counter()
    spawn_ns = time.time_ns()
    p = subprocess.run([cli, "find", path, "--backend", "gpu", "--csv", csv, "--json", js],
                       env=env, capture_output=True, text=True)
    wall = (time.perf_counter() - t0) * 1e3
    # The CSV's time stamp (the file system's clock tick, a few ms at most).
    to_csv = (os.stat(csv).st_mtime_ns - spawn_ns) / 1e6
    if p.returncode != 0:
        sys.exit(f"{cli} find {path} ({tag}) failed ({p.returncode}): {p.stderr.strip()}")
    with open(js) as f:
        j = json.load(f)
    if j.get("backend") != "gpu":
        sys.exit(f"{path} ({tag}): ran on {j.get('backend')}, not the GPU: {p.stderr.strip()}")
    g = j["times_ms"]["gpu"]
    with open(csv, "rb") as f:
        body = f.read()
    detail = next((line for line in p.stdout.splitlines() if line.startswith("load ")), "")
    return dict(load=g["load"], kernels=g["kernels"], upload=g["upload"],
                steps=g["load"] + g["kernels"], json_wall=j.get("wall_ms", float("nan")),
                to_csv=to_csv, wall=wall, nsources=j["nsources"]), body, detail


def warm(path):
    with open(path, "rb") as f:
        while f.read(64 << 20):
            pass


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--record")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [f"## find --backend gpu, file to catalogue, {stamp}", "",
             f"machine: {machine()}",
             f"command: bench/bench-gpu-load.py --rounds {a.rounds} " + " ".join(
                 os.path.basename(f) for f in a.files),
             f"load average before: {benchlib.loadavg()}", "",
             "medians of the rounds, ms; load + steps = the JSON's load and four steps' kernels "
             "(a host load also uploads: 'upload'); wall_ms = the JSON's, from the command's "
             "start to the catalogue written; to CSV = from the process's spawn to the CSV's "
             "time stamp (a file-system clock tick, a few ms); process = spawn to exit", "",
             "| file | MB | way | load | steps | load + steps | upload | wall_ms | to CSV | "
             "process | sources |",
             "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    notes = []
    with tempfile.TemporaryDirectory(prefix="bench-gpu-load-") as tmp:
        for path in a.files:
            warm(path)
            size = os.path.getsize(path) / 1e6
            got = {way: [] for way, _ in WAYS}
            bodies, details = {}, {}
            for r in range(a.rounds + 1):
                for way, env in (WAYS if r % 2 == 0 else WAYS[::-1]):
                    res, body, detail = run_once(a.cli, path, env, tmp, way)
                    if r > 0:   # the first round warms the driver and the cache
                        got[way].append(res)
                    bodies[way] = body
                    details[way] = detail
            for way, _ in WAYS:
                med = {k: statistics.median(x[k] for x in got[way]) for k in got[way][0]}
                lines.append(f"| {os.path.basename(path)} | {size:.1f} | {way} | {med['load']:.2f} "
                             f"| {med['kernels']:.2f} | {med['steps']:.2f} | {med['upload']:.2f} "
                             f"| {med['json_wall']:.1f} | {med['to_csv']:.1f} "
                             f"| {med['wall']:.1f} | {int(med['nsources'])} |")
                print(lines[-1], flush=True)
            same = bodies["device"] == bodies["host"]
            notes.append(f"- {os.path.basename(path)}: the two ways' CSVs are "
                         f"{'identical' if same else 'DIFFERENT'}; {details['device']}")
            print(notes[-1], flush=True)
            if not same:
                sys.exit(f"{path}: the device load's catalogue differs from the host load's")
    lines += [""] + notes + ["", f"load average after: {benchlib.loadavg()}", ""]
    text = "\n".join(lines)
    print(text)
    benchlib.append_record(a.record, text + "\n")


if __name__ == "__main__":
    main()
