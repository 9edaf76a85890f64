#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift.survey's throughput against a shell loop of skysift-cli find, in
the same run.

COUNT synthetic fields of SIZE^2 (skysift-cli synth, seeds 1..COUNT, made
once into --dir) are searched, each round, by:
  - a shell loop: `for f in FILES; do skysift-cli find $f --csv --ecsv
    --quiet [--backend gpu --repeat 1]; done` (every core to each image;
    the CLI's GPU run is one warm-up and one timed run, and each process
    makes its own device context);
  - `python3 -m skysift.survey FILES --out DIR --no-resume --workers N`
    for each N of --workers (CPU workers, one task each, cores / N
    threads per task), and with --gpu one worker per GPU with each number
    of task threads in --gpu-tasks (1: each image loaded, run and written
    in turn; 2: one image loads while another is on the device), --backend
    gpu;
with the same outputs (each image's CSV and ECSV). Rounds interleave the
configurations so that a noisy machine slows all of them alike; each
figure is the median over rounds.

Per configuration: images/s over the command's whole wall time (cluster
start and gathering included; the loop's is all of it), images/s over
the batch alone (the survey's first task sent to its last result), and
the time outside skysift, 1 - (sum of the workers' load + find + write
wall times) / (task slots x batch wall time). The ratio survey/loop is of
the whole-command medians.

usage: bench/bench-survey.py [--cli PATH] [--dir DIR] [--count 200]
           [--size 2048] [--workers 1,2] [--gpu] [--gpu-tasks 1,2] [--rounds 3]
           [--record FILE.json]
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import benchlib
from benchlib import ROOT


def make_fields(cli, folder, count, size):
    os.makedirs(folder, exist_ok=True)
    paths = []
    for k in range(count):
        path = os.path.join(folder, f"field{k:04d}.fits")
        if not os.path.exists(path):
            subprocess.run([cli, "synth", path, "--size", str(size), "--seed", str(k + 1)],
                           check=True, capture_output=True)
        paths.append(path)
    return paths


def fresh(folder):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)


def shell_loop(cli, paths, out, gpu):
    fresh(out)
    extra = "--backend gpu --repeat 1" if gpu else ""
    script = (f'for f in "$@"; do n=$(basename "$f" .fits); "{cli}" find "$f" '
              f'--csv "{out}/$n.csv" --ecsv "{out}/$n.ecsv" --quiet {extra} || exit 1; done')
    t0 = time.perf_counter()
    subprocess.run(["bash", "-c", script, "loop", *paths], check=True)
    return {"command_s": time.perf_counter() - t0}


def survey(paths, out, workers=None, gpu_tasks=0):
    fresh(out)
    cmd = [sys.executable, "-m", "skysift.survey", *paths, "--out", out, "--no-resume",
           "--no-progress"]
    if gpu_tasks:
        cmd += ["--gpus", "auto", "--backend", "gpu", "--tasks-per-worker", str(gpu_tasks)]
    else:
        cmd += ["--gpus", "none", "--backend", "cpu", "--workers", str(workers)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit(f"bench-survey: {' '.join(cmd[:6])}... failed:\n{r.stdout}{r.stderr}")
    with open(os.path.join(out, "survey.json")) as f:
        s = json.load(f)
    fig = s["figures"]
    return {"command_s": wall, "batch_s": fig["wall_s"], "skysift_s": fig["skysift_s"],
            "slots": fig["slots"], "outside_fraction": fig["outside_fraction"],
            "workers": fig["workers"],
            "outside_fraction_workers": fig["outside_fraction_workers"],
            "done": fig["done"], "summary": s["summary"], "cluster": s["cluster"],
            "devices": sorted({i.get("device", "") for i in s["images"]} - {""}),
            "backends": sorted({i.get("backend", "") for i in s["images"]})}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default=os.environ.get("SKYSIFT_CLI",
                                                    os.path.join(ROOT, "build", "src", "cli",
                                                                 "skysift-cli")))
    ap.add_argument("--dir", default="/tmp/skysift-bench-survey")
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--gpu-tasks", default="1,2",
                    help="task threads per GPU worker to try (1: no overlap of loading)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--record")
    args = ap.parse_args()

    fields = os.path.join(args.dir, f"fields-{args.size}")
    paths = make_fields(args.cli, fields, args.count, args.size)
    configs = [("loop-cpu", lambda o: shell_loop(args.cli, paths, o, False))]
    for n in [int(w) for w in args.workers.split(",") if w]:
        configs.append((f"survey-cpu-{n}w", lambda o, n=n: survey(paths, o, workers=n)))
    if args.gpu:
        configs.append(("loop-gpu", lambda o: shell_loop(args.cli, paths, o, True)))
        for t in [int(t) for t in args.gpu_tasks.split(",") if t]:
            configs.append((f"survey-gpu-{t}t", lambda o, t=t: survey(paths, o, gpu_tasks=t)))
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load_before = benchlib.loadavg()
    runs = {name: [] for name, _ in configs}
    for r in range(args.rounds):
        for name, fn in configs:
            res = fn(os.path.join(args.dir, f"out-{name}"))
            runs[name].append(res)
            line = f"round {r + 1} {name:16s} {res['command_s']:7.2f} s"
            if "batch_s" in res:
                line += (f" (batch {res['batch_s']:.2f} s, outside skysift "
                         f"{100 * res['outside_fraction']:.1f}% of {res['slots']} slots, "
                         f"{100 * res['outside_fraction_workers']:.1f}% of "
                         f"{res['workers']} workers)")
            print(line, flush=True)
        # After every round, so that a run stopped part way keeps its rounds.
        report(args, paths, runs, started, load_before, r + 1)


def report(args, paths, runs, started, load_before, rounds):
    n = len(paths)
    table = {}
    for name, rs in runs.items():
        row = {"command_s_median": statistics.median(x["command_s"] for x in rs),
               "command_s_all": [round(x["command_s"], 3) for x in rs]}
        row["images_per_s"] = n / row["command_s_median"]
        if "batch_s" in rs[0]:
            row["batch_s_median"] = statistics.median(x["batch_s"] for x in rs)
            row["batch_images_per_s"] = n / row["batch_s_median"]
            row["outside_fraction_median"] = statistics.median(x["outside_fraction"]
                                                               for x in rs)
            row["outside_fraction_workers_median"] = statistics.median(
                x["outside_fraction_workers"] for x in rs)
            row["slots"] = rs[0]["slots"]
            row["workers"] = rs[0]["workers"]
            row["cluster"] = rs[0]["cluster"]
            row["backends"] = rs[0]["backends"]
            row["devices"] = rs[0]["devices"]
        table[name] = row
    print(f"\n{n} fields of {args.size}^2; {rounds} of {args.rounds} rounds; medians; "
          f"load average {load_before} before, {benchlib.loadavg()} after")
    print(f"{'':16s} {'command s':>10s} {'images/s':>9s} {'batch s':>8s} {'images/s':>9s} "
          f"{'outside':>8s}  vs loop")
    for name, row in table.items():
        loop = table["loop-gpu" if "gpu" in name and "loop-gpu" in table else "loop-cpu"]
        ratio = loop["command_s_median"] / row["command_s_median"]
        line = f"{name:16s} {row['command_s_median']:10.2f} {row['images_per_s']:9.2f}"
        if "batch_s_median" in row:
            line += (f" {row['batch_s_median']:8.2f} {row['batch_images_per_s']:9.2f} "
                     f"{100 * row['outside_fraction_median']:7.1f}%")
        else:
            line += f" {'':8s} {'':9s} {'':8s}"
        print(line + f"  {ratio:.2f}x")
    record = {"date": started, "host": platform.node(),
              "cpu": benchlib.cpu_model(platform.processor() or "?"),
              "cores": len(os.sched_getaffinity(0)), "python": platform.python_version(),
              "command": " ".join([os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
              "count": n, "size": args.size, "rounds": rounds, "rounds_asked": args.rounds,
              "runs": {k: [{a: b for a, b in x.items() if a != "summary"} for x in v]
                       for k, v in runs.items()},
              "load_before": load_before, "load_after": benchlib.loadavg(), "configs": table}
    benchlib.write_json_record(args.record, record)


if __name__ == "__main__":
    main()
