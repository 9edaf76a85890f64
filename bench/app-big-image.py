#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a big image costs in the app against the CLI, in the same build and run.

  bench/app-big-image.py BUILD IMAGE [--threads 2] [--moves 10]

The CLI: `skysift-cli find IMAGE --threads T --json` (its load time and four
steps) and its peak memory (ru_maxrss of the finished process, the VmHWM
that /proc/PID/status shows for the app). The app, under xvfb-run and a session bus,
driven through its D-Bus actions: open (to the first full-resolution frame,
the app's own open_to_frame_ms), Run All, then --moves threshold moves; after
each phase its VmHWM, and the main loop's longest stall during runs
(run_max_gap_ms) and overall (max_gap_ms) from its state; then (unless
--sort-threshold 0) a run at a low threshold for many rows, the Sources
panel shown and the table sorted by peak through app.sort, with the stall
the app meters during the sort (sort_max_gap_ms). Prints a table with
the ratios app / CLI. Not a test: it takes minutes on a 16384^2 image. Make
one with `skysift-cli synth /tmp/s16k.fits --size 16384`.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

APP_ID = "io.github.skysift.SkySift"
OBJECT_PATH = "/io/github/skysift/SkySift"


def gdbus(*args, timeout=60):
    cmd = ["gdbus", "call", "--session", "--dest", APP_ID, "--object-path", OBJECT_PATH,
           "--method"] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"gdbus {' '.join(args[:2])}: {r.stderr.strip()}")
    return r.stdout


def activate(action, param=None):
    gdbus("org.gtk.Actions.Activate", action, "[]" if param is None else f"[<{param}>]", "{}")


def state():
    out = gdbus("org.gtk.Actions.Describe", "state")
    m = re.search(r"<'(.*)'>", out, re.S)
    return json.loads(m.group(1).replace("\\'", "'").replace("\\\\", "\\"))


def wait_idle(timeout=600):
    time.sleep(0.5)
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        st = state()
        if not st["busy"]:
            return st
        time.sleep(0.5)   # each poll is a process: not too often on two cores
    raise RuntimeError("the app stayed busy")


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024 / 1024   # GiB
    return float("nan")


def cli_run(cli, image, threads):
    out_json = os.path.join(tempfile.mkdtemp(prefix="skysift-bench-"), "run.json")
    proc = subprocess.Popen([cli, "find", image, "--threads", str(threads), "--json", out_json,
                             "--quiet"])
    # The peak resident set of the finished process (ru_maxrss, KiB): VmHWM.
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"skysift-cli find failed ({proc.returncode})")
    peak = usage.ru_maxrss / 1024 / 1024
    with open(out_json) as f:
        return json.load(f), peak


def inner(args):
    app_path = os.path.join(args.build, "src", "ui", "skysift")
    env = dict(os.environ, SKYSIFT_THREADS=str(args.threads))
    proc = subprocess.Popen([app_path], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    res = {}
    try:
        for _ in range(300):
            try:
                state()
                break
            except (RuntimeError, subprocess.TimeoutExpired):
                time.sleep(0.1)
        # The app opens its demo image first: the figure of that open must
        # not pass for this one's, whose first frame comes after the open
        # job is done (busy false) and sets open_to_frame_ms anew.
        before = wait_idle()["open_to_frame_ms"]
        activate("open", "'" + os.path.abspath(args.image) + "'")
        st = wait_idle()
        while st["open_to_frame_ms"] == before or st["image"] != os.path.abspath(args.image):
            time.sleep(0.2)
            st = state()
        res["open_to_frame_ms"] = st["open_to_frame_ms"]
        res["hwm_open"] = vm_hwm(proc.pid)
        activate("run", "'all'")
        st = wait_idle()
        res["hwm_run_all"] = vm_hwm(proc.pid)
        res["run_all_max_gap_ms"] = st["run_max_gap_ms"]
        res["label_ms"] = st["times_ms"].get("label")
        gaps = []
        for k in range(args.moves):
            activate("threshold", repr(5.0 + 0.25 * (k + 1)))
            st = wait_idle()
            gaps.append(st["run_max_gap_ms"])
        res["hwm_moves"] = vm_hwm(proc.pid)
        res["moves_max_gap_ms"] = max(gaps) if gaps else None
        res["max_gap_ms"] = st["max_gap_ms"]
        if args.sort_threshold > 0:
            # Many rows: a low threshold, the Sources panel shown (its rows
            # are made as it maps, on the main loop: a state call asked
            # right after waits for that), then a sort by peak, metered by
            # the app itself until the rows are in place.
            activate("threshold", repr(args.sort_threshold))
            st = wait_idle()
            res["sort_rows"] = st["nsources"]
            res["many_run_max_gap_ms"] = st["run_max_gap_ms"]
            activate("panel", "'sources'")
            t0 = time.monotonic()
            state()
            res["table_made_ms"] = (time.monotonic() - t0) * 1000
            time.sleep(1)
            activate("sort", "'peak descending'")
            st = wait_idle()
            res["sort_ms"] = st["sort_ms"]
            res["sort_max_gap_ms"] = st["sort_max_gap_ms"]
            res["hwm_sort"] = vm_hwm(proc.pid)
        activate("quit")
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    print(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("image")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--sort-threshold", type=float, default=3.0,
                    help="then run at this threshold and sort the table by peak (0: not)")
    ap.add_argument("--inner", action="store_true")
    args = ap.parse_args()
    if args.inner:
        return inner(args)
    for tool in ("xvfb-run", "dbus-run-session", "gdbus"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    cli = os.path.join(args.build, "src", "cli", "skysift-cli")
    summary, cli_peak = cli_run(cli, args.image, args.threads)
    cli_load = summary["times_ms"]["cpu"]["load"]
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "dbus-run-session",
                        "--", sys.executable, os.path.abspath(__file__), args.build, args.image,
                        "--threads", str(args.threads), "--moves", str(args.moves),
                        "--sort-threshold", str(args.sort_threshold), "--inner"],
                       capture_output=True, text=True, timeout=3600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        sys.exit(f"the app's run failed: {r.stderr[-2000:]}")
    app = json.loads(lines[-1])
    n = summary.get("shape", ["?", "?"])
    print(f"{args.image}: {n[0]} x {n[1]}, {args.threads} threads, {time.strftime('%Y-%m-%d')}")
    print(f"| what | CLI | app | app / CLI |\n|---|---|---|---|")
    print(f"| open (CLI: load; app: to the first full frame), ms | {cli_load:.0f} | "
          f"{app['open_to_frame_ms']:.0f} | {app['open_to_frame_ms'] / cli_load:.2f} |")
    print(f"| label step, ms | {summary['times_ms']['cpu']['label']:.0f} | "
          f"{app['label_ms']:.0f} | {app['label_ms'] / summary['times_ms']['cpu']['label']:.2f} |")
    for key, what in (("hwm_open", "after open"), ("hwm_run_all", "after Run All"),
                      ("hwm_moves", f"after {args.moves} threshold moves")):
        print(f"| VmHWM {what}, GiB | {cli_peak:.2f} | {app[key]:.2f} | "
              f"{app[key] / cli_peak:.2f} |")
    print(f"| longest main-loop stall: Run All / threshold moves / overall, ms | | "
          f"{app['run_all_max_gap_ms']:.0f} / {app['moves_max_gap_ms']:.0f} / "
          f"{app['max_gap_ms']:.0f} | |")
    if "sort_rows" in app:
        print(f"| at {args.sort_threshold:g} sigma, {app['sort_rows']} rows: longest stall of its run / "
              f"Sources panel first shown (a state call's wait) / sort by peak (its time), ms | | "
              f"{app['many_run_max_gap_ms']:.0f} / {app['table_made_ms']:.0f} / "
              f"{app['sort_max_gap_ms']:.0f} ({app['sort_ms']:.0f}) | |")
        print(f"| VmHWM after that, GiB (not a limit: more rows) | {cli_peak:.2f} | "
              f"{app['hwm_sort']:.2f} | {app['hwm_sort'] / cli_peak:.2f} |")


if __name__ == "__main__":
    main()
