#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs the Python package's pytest tests (tests/python) and reports each
test as a TAP line, so that meson and scripts/count-tests.py count them one
by one. pytest's own report goes to stderr. Skips, with the reason, where
pytest or NumPy is missing."""
import contextlib
import os
import sys


class TapReport:
    def __init__(self):
        self.count = 0
        self.lines = []

    def pytest_runtest_logreport(self, report):
        # One line per test: its call, or the setup that failed or skipped it.
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.count += 1
            name = report.nodeid.split("::", 1)[-1]
            if report.skipped:
                reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
                self.lines.append(f"ok {self.count} - {name} # SKIP {reason}")
            elif report.passed:
                self.lines.append(f"ok {self.count} - {name}")
            else:
                self.lines.append(f"not ok {self.count} - {name}")
                for line in str(report.longrepr).splitlines()[-12:]:
                    self.lines.append(f"# {line}")
            print(self.lines[-1], file=sys.__stdout__, flush=True)


def main():
    try:
        import numpy  # noqa: F401
        import pytest
    except ImportError as e:
        print(f"1..0 # SKIP pytest or NumPy not importable ({e}): install python3-pytest")
        return 0
    report = TapReport()
    # Test files named on the command line run alone; else every file of
    # tests/python (less those --ignore names).
    files = [a for a in sys.argv[1:] if a.endswith(".py") and os.path.isfile(a)]
    options = [a for a in sys.argv[1:] if a not in files]
    here = files or [os.path.join(os.path.dirname(os.path.abspath(__file__)), "python")]
    with contextlib.redirect_stdout(sys.stderr):
        status = pytest.main([*here, "-q", "-p", "no:cacheprovider", "-rs", *options],
                             plugins=[report])
    print(f"1..{report.count}")
    return 0 if status in (0, 5) else 1


if __name__ == "__main__":
    sys.exit(main())
