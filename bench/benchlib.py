# SPDX-License-Identifier: GPL-3.0-or-later
"""What the benchmark scripts share: the machine they ran on, its load,
the command that ran them, a side's best time, medians over rounds, and
the record a run appends its report to or writes as JSON.

A script in bench/ imports it as `import benchlib` (its own folder is on
sys.path when it runs)."""
import json
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cpu_model(unknown="unknown CPU"):
    """The processor's model name from /proc/cpuinfo, or unknown."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return unknown


def machine():
    """Host, processor, cores and kernel: a report's "machine:" line."""
    return (f"{platform.node()}: {cpu_model()}, {os.cpu_count()} cores, "
            f"{platform.system()} {platform.release()}")


def loadavg():
    """The load average over 1, 5 and 15 minutes as the kernel writes it
    ("0.52 0.61 0.70"), or "?": on a shared machine it says how much of
    the machine a run had."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def command():
    """The command line that ran the script, as bench/NAME ARGS."""
    return f"bench/{os.path.basename(sys.argv[0])} {' '.join(sys.argv[1:])}"


def best_of(fn, repeat):
    """The shortest of repeat calls of fn, in ms."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def medians(columns):
    """Each column's median: {name: [one figure a round]} to {name: median}."""
    return {k: statistics.median(v) for k, v in columns.items()}


def write_json_record(path, record):
    """Writes record as the JSON file path (a script's --record), if one
    was given, replacing what was there."""
    if path:
        with open(path, "w") as f:
            json.dump(record, f, indent=1)
            f.write("\n")


def append_record(path, text):
    """Appends text to the record file path (a script's --record), if one
    was given."""
    if path:
        with open(path, "a") as f:
            f.write(text)
