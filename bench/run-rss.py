#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs a command, passing its output through, and writes its wall time and
peak resident memory (its own, from wait4) to a file, for the device
scripts: usage: bench/run-rss.py OUT.txt COMMAND [ARGS...]"""
import os
import subprocess
import sys
import time


def main():
    report, cmd = sys.argv[1], sys.argv[2:]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    with open(report, "w") as f:
        f.write(f"{' '.join(cmd)}: exit {code}, wall {wall:.2f} s, "
                f"peak RSS {usage.ru_maxrss / 1024.0:.0f} MiB\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
