#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a big image costs in the app against the CLI, in the same build and run.

  bench/app-big-image.py BUILD IMAGE [--threads 2] [--moves 10] [--sort-threshold 3]
                        [--repeat 3]

The CLI: `skysift-cli find IMAGE --threads T --json` (its load time and four
steps) and its peak memory (ru_maxrss of the finished process, the VmHWM
that /proc/PID/status shows for the app). The app, under xvfb-run and a session bus,
driven through its D-Bus actions: open (to the first full-resolution frame,
the app's own open_to_frame_ms), Run All, then --moves threshold moves; after
each phase its VmHWM, and the main loop's longest stall during runs
(run_max_gap_ms) and overall (max_gap_ms) from its state; then (unless
--sort-threshold 0) a run at a low threshold for many rows, the Sources
panel shown and the table sorted by peak through app.sort, with the stall
the app meters during the sort (sort_max_gap_ms). With --repeat N, N rounds
of the CLI then the app, medians of each figure (stalls: also their
maximum); beside the stalls, the longest gap that a 10 ms timer in the
driving process saw meanwhile, which is what the machine's load alone
does to a main loop. Prints a table with
the ratios app / CLI. Not a test: it takes minutes on a 16384^2 image. Make
one with `skysift-cli synth /tmp/s16k.fits --size 16384`.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
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


class GapMeter(threading.Thread):
    """The machine's own noise: a 10 ms sleep in this idle process, and the
    longest gap it saw, to read the app's stalls against."""

    def __init__(self):
        super().__init__(daemon=True)
        self.max_gap_ms = 0.0

    def run(self):
        last = time.monotonic()
        while True:
            time.sleep(0.01)
            now = time.monotonic()
            self.max_gap_ms = max(self.max_gap_ms, (now - last) * 1000)
            last = now


def inner(args):
    app_path = args.app or os.path.join(args.build, "src", "ui", "skysift")
    env = dict(os.environ, SKYSIFT_THREADS=str(args.threads))
    env.update(kv.split("=", 1) for kv in args.env)
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
        if args.cancel_after is not None:
            return cancel_round(args, proc)
        activate("open", "'" + os.path.abspath(args.image) + "'")
        st = wait_idle()
        while st["open_to_frame_ms"] == before or st["image"] != os.path.abspath(args.image):
            time.sleep(0.2)
            st = state()
        res["open_to_frame_ms"] = st["open_to_frame_ms"]
        res["read_ms"] = st.get("load_ms", float("nan"))
        res["prepare_ms"] = st.get("prepare_ms", float("nan"))
        res["preview_to_frame_ms"] = st.get("preview_to_frame_ms", 0)
        res["open_to_levels_ms"] = st.get("open_to_levels_ms", 0)
        res["levels_ms"] = st.get("levels_ms", 0)
        res["open_max_tick_ms"] = st.get("open_max_tick_ms", float("nan"))
        res["hwm_open"] = vm_hwm(proc.pid)
        if args.open_only:
            activate("quit")
            proc.wait(timeout=60)
            print(json.dumps(res))
            return
        meter = GapMeter()
        meter.start()
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
        res["control_max_gap_ms"] = meter.max_gap_ms
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


def warm_page_cache(path):
    """Reads the file once, so that neither side of the ratio pays for the
    disk (on a shared machine the file can leave the page cache between
    rounds, and the side that ran first would pay for it)."""
    with open(path, "rb", buffering=0) as f:
        while f.read(16 << 20):
            pass


def cancel_round(args, proc):
    """Opens the image, cancels args.cancel_after seconds after its reduced
    view is drawn; the image shown before must stay, and the memory go back."""
    res = {"rss_before_mib": vm_rss_mib(proc.pid)}
    shown = state()["image"]
    t0 = time.monotonic()
    activate("open", "'" + os.path.abspath(args.image) + "'")
    while True:
        st = state()
        if st["preview_shown"] and st["preview_to_frame_ms"] > 0:
            break
        if not st["busy"] or time.monotonic() - t0 > 120:
            raise RuntimeError(f"no reduced view: {st}")
        time.sleep(0.05)
    res["preview_to_frame_ms"] = st["preview_to_frame_ms"]
    time.sleep(args.cancel_after)
    res["rss_at_cancel_mib"] = vm_rss_mib(proc.pid)
    t1 = time.monotonic()
    activate("cancel")
    st = wait_idle()
    res["cancel_to_idle_ms"] = (time.monotonic() - t1) * 1000
    res["image_after_cancel_is_previous"] = st["image"] == shown
    res["preview_shown_after_cancel"] = st["preview_shown"]
    time.sleep(1)
    res["rss_after_mib"] = vm_rss_mib(proc.pid)
    res["hwm_gib"] = vm_hwm(proc.pid)
    activate("quit")
    proc.wait(timeout=60)
    print(json.dumps(res))


def vm_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one_round(args, cli):
    warm_page_cache(args.image)
    if args.no_cli:
        summary, cli_peak = {"times_ms": {"cpu": {"load": float("nan"), "label": float("nan")}}}, \
            float("nan")
    else:
        summary, cli_peak = cli_run(cli, args.image, args.threads)
        warm_page_cache(args.image)
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "dbus-run-session",
                        "--", sys.executable, os.path.abspath(__file__), args.build, args.image,
                        "--threads", str(args.threads), "--moves", str(args.moves),
                        "--sort-threshold", str(args.sort_threshold), "--inner"]
                       + (["--open-only"] if args.open_only else [])
                       + ([f"--cancel-after={args.cancel_after}"]
                          if args.cancel_after is not None else [])
                       + [f"--env={kv}" for kv in args.env]
                       + ([f"--app={args.app}"] if args.app else []),
                       capture_output=True, text=True, timeout=3600)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if r.returncode != 0 or not lines:
        sys.exit(f"the app's run failed: {r.stderr[-2000:]}")
    app = json.loads(lines[-1])
    if args.cancel_after is not None:
        return summary, app
    app["cli_load"] = summary["times_ms"]["cpu"]["load"]
    app["cli_label"] = summary["times_ms"]["cpu"]["label"]
    app["cli_peak"] = cli_peak
    return summary, app


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("image")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--sort-threshold", type=float, default=3.0,
                    help="then run at this threshold and sort the table by peak (0: not)")
    ap.add_argument("--env", action="append", default=[],
                    help="NAME=VALUE in the app's environment (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="rounds of the CLI then the app; medians, stalls also their maximum")
    ap.add_argument("--open-only", action="store_true",
                    help="measure the open alone (no Run All, moves or sort)")
    ap.add_argument("--cancel-after", type=float, default=None,
                    help="open, cancel this many seconds after the reduced view; print what "
                         "the app shows then and its memory (no CLI)")
    ap.add_argument("--no-cli", action="store_true",
                    help="the app alone (a field whose CLI run would not fit in memory)")
    ap.add_argument("--app", help="the app to run (default BUILD/src/ui/skysift); with --inner, "
                    "on a display and session bus of the caller's (the GPU machine's carried "
                    "Xvfb: scripts/gpu-gui-run shell)")
    ap.add_argument("--inner", action="store_true")
    args = ap.parse_args()
    if args.inner:
        return inner(args)
    for tool in ("xvfb-run", "dbus-run-session", "gdbus"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    cli = os.path.join(args.build, "src", "cli", "skysift-cli")
    if args.cancel_after is not None:
        args.no_cli = True
    rounds = []
    for _ in range(args.repeat):
        summary, app = one_round(args, cli)
        rounds.append(app)
    if args.cancel_after is not None:
        for i, a in enumerate(rounds):
            print(f"cancel round {i + 1}: " + json.dumps(a))
        return

    def med(key):
        return statistics.median(a[key] for a in rounds)

    def stall(key):
        vals = [a[key] for a in rounds]
        return (f"{statistics.median(vals):.0f}" if len(vals) == 1
                else f"{statistics.median(vals):.0f} (max {max(vals):.0f})")

    n = summary.get("shape", ["?", "?"])
    for i, a in enumerate(rounds):
        print(f"round {i + 1}: " + json.dumps(a))
    print(f"{args.image}: {n[0]} x {n[1]}, {args.threads} threads, {time.strftime('%Y-%m-%d')}, "
          f"{args.repeat} round(s), medians")
    print(f"| what | CLI | app | app / CLI |\n|---|---|---|---|")
    print(f"| open (CLI: load; app: to the first full frame), ms | {med('cli_load'):.0f} | "
          f"{med('open_to_frame_ms'):.0f} | {med('open_to_frame_ms') / med('cli_load'):.2f} |")
    print(f"| ... of which the app read the file / prepared the display (limits, "
          f"histogram, pyramid), ms | | {med('read_ms'):.0f} / {med('prepare_ms'):.0f} | |")
    print(f"| ... asked to the reduced view's first frame (0: none), ms | | "
          f"{med('preview_to_frame_ms'):.0f} | |")
    print(f"| ... asked to the zoom-out levels drawn (0: made before the first frame; "
          f"of which making them), ms | | {med('open_to_levels_ms'):.0f} "
          f"({med('levels_ms'):.0f}) | |")
    print(f"| the main loop during the open: its longest wait between two 50 ms ticks, "
          f"ms | | {stall('open_max_tick_ms')} | |")
    print(f"| VmHWM after open, GiB | {med('cli_peak'):.2f} (find) | {med('hwm_open'):.2f} | "
          f"{med('hwm_open') / med('cli_peak'):.2f} |")
    if args.open_only:
        return
    print(f"| label step, ms | {med('cli_label'):.0f} | {med('label_ms'):.0f} | "
          f"{med('label_ms') / med('cli_label'):.2f} |")
    for key, what in (("hwm_run_all", "after Run All"),
                      ("hwm_moves", f"after {args.moves} threshold moves")):
        print(f"| VmHWM {what}, GiB | {med('cli_peak'):.2f} | {med(key):.2f} | "
              f"{med(key) / med('cli_peak'):.2f} |")
    print(f"| longest main-loop stall, ms: Run All | | {stall('run_all_max_gap_ms')} | |")
    print(f"| ... threshold moves | | {stall('moves_max_gap_ms')} | |")
    print(f"| ... overall | | {stall('max_gap_ms')} | |")
    print(f"| the machine: the longest gap of a 10 ms timer in an idle process meanwhile, ms | | "
          f"{stall('control_max_gap_ms')} | |")
    if "sort_rows" in rounds[0]:
        print(f"| at {args.sort_threshold:g} sigma, {rounds[0]['sort_rows']} rows: longest stall "
              f"of its run, ms | | {stall('many_run_max_gap_ms')} | |")
        print(f"| ... Sources panel first shown (a state call's wait), ms | | "
              f"{stall('table_made_ms')} | |")
        print(f"| ... sort by peak: the longest stall, ms | | {stall('sort_max_gap_ms')} | |")
        print(f"| ... sort by peak: asked to rows in place, ms | | {med('sort_ms'):.0f} | |")
        print(f"| VmHWM after that, GiB (more rows: not a limit) | {med('cli_peak'):.2f} | "
              f"{med('hwm_sort'):.2f} | {med('hwm_sort') / med('cli_peak'):.2f} |")


if __name__ == "__main__":
    main()
