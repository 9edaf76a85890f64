# SPDX-License-Identifier: GPL-3.0-or-later
"""A tiny TAP producer for the Python tests: one line per check, so that a
failure names exactly what broke and the rest still run."""
import sys
import traceback


class Tap:
    def __init__(self):
        self.count = 0
        self.failed = 0

    def check(self, name, fn, *args):
        """Runs fn(*args); an AssertionError or any exception fails the
        check with its message, a Skip skips it with its reason."""
        self.count += 1
        try:
            fn(*args)
        except Skip as s:
            print(f"ok {self.count} - {name} # SKIP {s}")
        except Exception as e:  # noqa: BLE001 - report every kind of failure
            self.failed += 1
            print(f"not ok {self.count} - {name}")
            for line in (str(e) or type(e).__name__).splitlines():
                print(f"# {line}")
            if not isinstance(e, AssertionError):
                for line in traceback.format_exc().splitlines():
                    print(f"# {line}")
        else:
            print(f"ok {self.count} - {name}")
        sys.stdout.flush()

    def skip(self, name, reason):
        self.count += 1
        print(f"ok {self.count} - {name} # SKIP {reason}")

    def done(self):
        print(f"1..{self.count}")
        return 1 if self.failed else 0


class Skip(Exception):
    """Raised inside a check to skip it with a reason."""
