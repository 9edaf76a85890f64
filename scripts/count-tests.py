#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Counts the single checks of meson test runs from their testlog.json
files: each TAP line of a TAP test, or the whole test where it printed no
TAP (a crash or a plain exit status). --check NAME=STATUS adds one more
check that passed when STATUS is 0 (a fuzzing run, say). Prints
"N passed, N failed, N skipped" and exits 1 when anything failed; above
that line, the last lines each failed test printed, so that the reason for
a failure is there in the last screen of a CI log.

usage: count-tests.py TESTLOG.json [TESTLOG.json ...] [--check NAME=STATUS ...]"""
import json
import re
import sys

TAP_LINE = re.compile(r"^(not ok|ok)\b(.*)$")
EXCERPT_LINES = 12


def excerpt(test):
    """The last lines a failed test printed, stderr first (where GLib's
    assertion messages and sanitizer reports go)."""
    lines = []
    for stream in ("stderr", "stdout"):
        text = test.get(stream) or ""
        tail = [l for l in text.splitlines() if l.strip()][-EXCERPT_LINES:]
        lines += [f"  {stream}| {l[:300]}" for l in tail]
    return "\n".join(lines)


def count(path):
    passed = failed = skipped = 0
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            test = json.loads(line)
            results = [TAP_LINE.match(l) for l in test.get("stdout", "").splitlines()]
            results = [m for m in results if m]
            if not results or test["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
                # No TAP lines, or the program died or timed out after some:
                # the test as a whole counts, so a crash is never hidden.
                if test["result"] == "SKIP":
                    skipped += 1
                elif test["result"] in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                else:
                    failed += 1
                    print(f"FAILED: {test['name']} ({test['result']})")
                    print(excerpt(test))
                if results and test["result"] not in ("OK", "SKIP", "EXPECTEDFAIL"):
                    failed += sum(1 for m in results if m.group(1) == "not ok")
                continue
            for m in results:
                if m.group(1) == "not ok":
                    failed += 1
                    print(f"FAILED: {test['name']}{m.group(2)}")
                elif re.search(r"#\s*SKIP", m.group(2), re.IGNORECASE):
                    skipped += 1
                else:
                    passed += 1
    return passed, failed, skipped


def main(argv):
    passed = failed = skipped = 0
    paths, checks = [], []
    while argv:
        arg = argv.pop(0)
        if arg == "--check":
            checks.append(argv.pop(0))
        else:
            paths.append(arg)
    for path in paths or ["build/meson-logs/testlog.json"]:
        p, f, s = count(path)
        passed, failed, skipped = passed + p, failed + f, skipped + s
    for check in checks:
        name, _, status = check.partition("=")
        if status.strip() == "0":
            passed += 1
        else:
            failed += 1
            print(f"FAILED: {name} (exit status {status})")
    line = f"{passed} passed, {failed} failed"
    if skipped:
        line += f", {skipped} skipped"
    print(line)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
