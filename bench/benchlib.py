# SPDX-License-Identifier: GPL-3.0-or-later
"""What the benchmark scripts share: the machine they ran on, its load,
the command that ran them, a call's time and a side's best, a command's
wall time and peak memory, medians over rounds, and the record a run
appends its report to or writes as JSON.

A script in bench/ imports it as `import benchlib` (its own folder is on
sys.path when it runs)."""
import json
import os
import platform
import statistics
import subprocess
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
    return " ".join([f"bench/{os.path.basename(sys.argv[0])}"] + sys.argv[1:])


def wall_ms(fn):
    """The wall time of one call of fn, in ms."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def best_of(fn, repeat):
    """The shortest of repeat calls of fn, in ms."""
    return min((wall_ms(fn) for _ in range(repeat)), default=float("inf"))


def run_peak(cmd, stdout=None):
    """Runs cmd to its end: its exit status, wall time in s and peak
    resident set in KiB (ru_maxrss from wait4: the process's own, its
    VmHWM, not the driver's)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout)
    _, status, usage = os.wait4(proc.pid, 0)
    return os.waitstatus_to_exitcode(status), time.perf_counter() - t0, usage.ru_maxrss


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


def print_report(lines, path):
    """Prints a Markdown report (its lines) and appends it, after a blank
    line, to the record file path, if one was given."""
    report = "\n".join(lines)
    print(report)
    append_record(path, "\n" + report)
