#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a big image costs in the app against the CLI, in the same build and run.

  bench/app-big-image.py BUILD IMAGE [--threads 2] [--moves 10] [--sort-threshold 3]
                        [--repeat 3] [--against OLD_BUILD]

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
does to a main loop. Beside the app's own meters, a probe that asks the
app over D-Bus for its action names every 10 ms (answered on its main
loop) times each answer: its longest wait per phase is the main loop's
longest stall then, metered alike in any build (probe_*). With --against
OLD_BUILD the rounds alternate between the two builds (old first), on the
same image and machine, and the table has a column for each; each round
notes the load average. Prints a table with
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

import benchlib

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


def main_thread_ms(pid):
    """The app's main thread's time on a core and waiting for one, ms
    (/proc/PID/task/PID/schedstat: its first two fields, in ns)."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        run, wait = f.read().split()[:2]
    return int(run) / 1e6, int(wait) / 1e6


def vm_hwm(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024 / 1024   # GiB
    return float("nan")


def cli_run(cli, image, threads):
    out_json = os.path.join(tempfile.mkdtemp(prefix="skysift-bench-"), "run.json")
    # The peak resident set of the finished process: its VmHWM.
    code, _, peak_kib = benchlib.run_peak([cli, "find", image, "--threads", str(threads),
                                           "--json", out_json, "--quiet"])
    if code != 0:
        sys.exit(f"skysift-cli find failed ({code})")
    with open(out_json) as f:
        return json.load(f), peak_kib / 1024 / 1024


class MainLoopProbe(threading.Thread):
    """Asks the app for its action names (org.gtk.Actions.List, answered
    on its main loop) every 10 ms and keeps the longest wait for an answer
    per phase: the main loop's longest stall, metered from outside."""

    def __init__(self):
        super().__init__(daemon=True)
        import gi
        gi.require_version("Gio", "2.0")
        from gi.repository import Gio
        self.gio = Gio
        self.bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        self.phase = None
        self.worst = {}

    def run(self):
        while True:
            phase = self.phase
            t0 = time.monotonic()
            try:
                self.bus.call_sync(APP_ID, OBJECT_PATH, "org.gtk.Actions", "List", None, None,
                                   self.gio.DBusCallFlags.NONE, 60000, None)
            except Exception:
                pass
            wait = (time.monotonic() - t0) * 1000
            if phase is not None and phase == self.phase:
                self.worst[phase] = max(self.worst.get(phase, 0.0), wait)
            time.sleep(0.01)


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
    if args.app_log:
        env["G_MESSAGES_DEBUG"] = "skysift"
    # Through a pipe: GLib drops debug messages to a plain file.
    proc = subprocess.Popen([app_path], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE if args.app_log else subprocess.DEVNULL)
    if args.app_log:
        def copy_log(src, path):
            with open(path, "ab") as out:
                for line in src:
                    out.write(line)
                    out.flush()
        threading.Thread(target=copy_log, args=(proc.stderr, args.app_log), daemon=True).start()
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
        probe = MainLoopProbe()
        probe.start()
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
        probe.phase = "run_all"
        activate("run", "'all'")
        st = wait_idle()
        res["hwm_run_all"] = vm_hwm(proc.pid)
        res["run_all_max_gap_ms"] = st["run_max_gap_ms"]
        res["label_ms"] = st["times_ms"].get("label")
        gaps = []
        probe.phase = "moves"
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
            probe.phase = "many_run"
            activate("threshold", repr(args.sort_threshold))
            st = wait_idle()
            res["sort_rows"] = st["nsources"]
            res["many_run_max_gap_ms"] = st["run_max_gap_ms"]
            probe.phase = "table_made"
            activate("panel", "'sources'")
            t0 = time.monotonic()
            state()
            res["table_made_ms"] = (time.monotonic() - t0) * 1000
            wait_idle()
            time.sleep(1)
            probe.phase = "sort"
            run0, wait0 = main_thread_ms(proc.pid)
            activate("sort", "'peak descending'")
            st = wait_idle()
            run1, wait1 = main_thread_ms(proc.pid)
            res["sort_main_run_ms"] = run1 - run0
            res["sort_main_wait_ms"] = wait1 - wait0
            res["sort_ms"] = st["sort_ms"]
            res["sort_max_gap_ms"] = st["sort_max_gap_ms"]
            res["hwm_sort"] = vm_hwm(proc.pid)
            time.sleep(1)
            # A threshold move with the table on screen: the run, then its
            # rows made for the table.
            probe.phase = "move_with_table"
            activate("threshold", repr(args.sort_threshold + 0.25))
            wait_idle()
            time.sleep(1)
            wait_idle()
        probe.phase = None
        res.update({"probe_" + k: v for k, v in probe.worst.items()})
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


def one_round(args, build):
    cli = os.path.join(build, "src", "cli", "skysift-cli")
    warm_page_cache(args.image)
    load_before = os.getloadavg()[0]
    if args.no_cli:
        summary, cli_peak = {"times_ms": {"cpu": {"load": float("nan"), "label": float("nan")}}}, \
            float("nan")
    else:
        summary, cli_peak = cli_run(cli, args.image, args.threads)
        warm_page_cache(args.image)
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", "dbus-run-session",
                        "--", sys.executable, os.path.abspath(__file__), build, args.image,
                        "--threads", str(args.threads), "--moves", str(args.moves),
                        "--sort-threshold", str(args.sort_threshold), "--inner"]
                       + (["--open-only"] if args.open_only else [])
                       + ([f"--cancel-after={args.cancel_after}"]
                          if args.cancel_after is not None else [])
                       + [f"--env={kv}" for kv in args.env]
                       + ([f"--app={args.app}"] if args.app else [])
                       + (["--app-log", args.app_log] if args.app_log else []),
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
    app["load"] = (load_before, os.getloadavg()[0])
    print(f"# {build}: load average {load_before:.1f} -> {app['load'][1]:.1f}; "
          + json.dumps(app), flush=True)
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
    ap.add_argument("--against", metavar="OLD_BUILD",
                    help="alternate the rounds with this build's, old first; a column each")
    ap.add_argument("--app-log", metavar="FILE",
                    help="append the app's debug messages (its stalls, the table's steps) here")
    ap.add_argument("--inner", action="store_true")
    args = ap.parse_args()
    if args.inner:
        return inner(args)
    for tool in ("xvfb-run", "dbus-run-session", "gdbus"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed")
    if args.cancel_after is not None:
        args.no_cli = True
    builds = ([args.against] if args.against else []) + [args.build]
    rounds = {b: [] for b in builds}
    for _ in range(args.repeat):
        for b in builds:
            summary, app = one_round(args, b)
            rounds[b].append(app)
    if args.cancel_after is not None:
        for b in builds:
            for i, a in enumerate(rounds[b]):
                print(f"{b}: cancel round {i + 1}: " + json.dumps(a))
        return

    def med(b, key):
        vals = [a[key] for a in rounds[b] if a.get(key) is not None]
        return statistics.median(vals) if vals else float("nan")

    def stall(b, key):
        vals = [a[key] for a in rounds[b] if a.get(key) is not None]
        if not vals:
            return ""
        return (f"{statistics.median(vals):.0f}" if len(vals) == 1
                else f"{statistics.median(vals):.0f} (max {max(vals):.0f})")

    def loads(b):
        return ", ".join(f"{a['load'][0]:.1f}-{a['load'][1]:.1f}" for a in rounds[b])

    n = summary.get("shape", ["?", "?"])
    print(f"{args.image}: {n[0]} x {n[1]}, {args.threads} threads, {time.strftime('%Y-%m-%d %H:%M')}, "
          f"{args.repeat} round(s) each, medians; the load average per round: "
          + "; ".join(f"{b}: {loads(b)}" for b in builds))
    print("| what | CLI | " + " | ".join(f"app ({b})" for b in builds) + " |")
    print("|---|---|" + "---|" * len(builds))

    def row(what, cli, cells):
        print(f"| {what} | {cli} | " + " | ".join(cells) + " |")

    b0 = builds[-1]
    row("open (CLI: load; app: to the first full frame), ms", f"{med(b0, 'cli_load'):.0f}",
        [f"{med(b, 'open_to_frame_ms'):.0f} ({med(b, 'open_to_frame_ms') / med(b, 'cli_load'):.2f}x "
         "its rounds' CLI)" for b in builds])
    row("... of which the app read the file / prepared the display (limits, histogram, "
        "pyramid), ms", "", [f"{med(b, 'read_ms'):.0f} / {med(b, 'prepare_ms'):.0f}" for b in builds])
    row("... asked to the reduced view's first frame (0: none), ms", "",
        [f"{med(b, 'preview_to_frame_ms'):.0f}" for b in builds])
    row("... asked to the zoom-out levels drawn (0: made before the first frame; of which "
        "making them), ms", "",
        [f"{med(b, 'open_to_levels_ms'):.0f} ({med(b, 'levels_ms'):.0f})" for b in builds])
    row("the main loop during the open: its longest wait between two 50 ms ticks, ms", "",
        [stall(b, "open_max_tick_ms") for b in builds])
    row("VmHWM after open, GiB", f"{med(b0, 'cli_peak'):.2f} (find)",
        [f"{med(b, 'hwm_open'):.2f} ({med(b, 'hwm_open') / med(b, 'cli_peak'):.2f}x)"
         for b in builds])
    if args.open_only:
        return
    row("label step, ms", f"{med(b0, 'cli_label'):.0f}", [f"{med(b, 'label_ms'):.0f}" for b in builds])
    for key, what in (("hwm_run_all", "after Run All"),
                      ("hwm_moves", f"after {args.moves} threshold moves")):
        row(f"VmHWM {what}, GiB", f"{med(b0, 'cli_peak'):.2f}",
            [f"{med(b, key):.2f} ({med(b, key) / med(b, 'cli_peak'):.2f}x)" for b in builds])
    row("the app's meter: longest main-loop stall, Run All, ms", "",
        [stall(b, "run_all_max_gap_ms") for b in builds])
    row("... threshold moves, ms", "", [stall(b, "moves_max_gap_ms") for b in builds])
    row("the probe: longest wait for an answer, Run All, ms", "",
        [stall(b, "probe_run_all") for b in builds])
    row("... threshold moves, ms", "", [stall(b, "probe_moves") for b in builds])
    row("the machine: a 10 ms timer's longest gap in an idle process meanwhile, ms", "",
        [stall(b, "control_max_gap_ms") for b in builds])
    if "sort_rows" in rounds[b0][0]:
        row(f"at {args.sort_threshold:g} sigma, {rounds[b0][0]['sort_rows']} rows: the run, "
            "the probe's longest wait, ms", "", [stall(b, "probe_many_run") for b in builds])
        row("... Sources panel shown, its rows made: the probe's longest wait, ms", "",
            [stall(b, "probe_table_made") for b in builds])
        row("... sort by peak: the app's meter / the probe, ms", "",
            [f"{stall(b, 'sort_max_gap_ms')} / {stall(b, 'probe_sort')}" for b in builds])
        row("... sort by peak: asked to rows in place, ms", "",
            [f"{med(b, 'sort_ms'):.0f}" for b in builds])
        row("... sort by peak until idle: the main thread on a core / waiting for one, ms "
            "(the state polls included)", "",
            [f"{med(b, 'sort_main_run_ms'):.0f} / {med(b, 'sort_main_wait_ms'):.0f}"
             for b in builds])
        row(f"... a threshold move to {args.sort_threshold + 0.25:g} sigma with the table shown: "
            "the probe, ms", "", [stall(b, "probe_move_with_table") for b in builds])
        row("VmHWM after that, GiB (more rows: not a limit)", f"{med(b0, 'cli_peak'):.2f}",
            [f"{med(b, 'hwm_sort'):.2f}" for b in builds])


if __name__ == "__main__":
    main()
