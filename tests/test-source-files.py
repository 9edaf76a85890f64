#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every source file of the tree (C, CUDA, Python, meson, scripts) carries
the SPDX line of the project's license, GPL-3.0-or-later, at its top."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Tap  # noqa: E402

ROOT = os.environ.get("SKYSIFT_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPDX = "SPDX-License-Identifier: GPL-3.0-or-later"
FOLDERS = ["src", "tests", "bench", "scripts", ".ci", "python", "examples"]
SKIPPED = {os.path.join("tests", "fuzz", "corpus"), os.path.join("tests", "fuzz", "crashes"),
           os.path.join("bench", "results")}


def is_source(path):
    name = os.path.basename(path)
    if name.endswith((".c", ".h", ".cu", ".cuh", ".py")) or name in ("meson.build", "meson_options.txt"):
        return True
    with open(path, "rb") as f:   # scripts: executables that start with #!
        return os.access(path, os.X_OK) and f.read(2) == b"#!"


def sources():
    found = [os.path.join(ROOT, "meson.build"), os.path.join(ROOT, "meson_options.txt")]
    for top in FOLDERS:
        for folder, dirs, files in os.walk(os.path.join(ROOT, top)):
            rel = os.path.relpath(folder, ROOT)
            dirs[:] = [d for d in dirs if os.path.join(rel, d) not in SKIPPED]
            found += [os.path.join(folder, f) for f in files
                      if is_source(os.path.join(folder, f))]
    return sorted(found)


def check_spdx(files):
    missing = []
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = [f.readline() for _ in range(3)]
        if not any(SPDX in line for line in head):
            missing.append(os.path.relpath(path, ROOT))
    assert len(files) > 100, f"only {len(files)} source files found under {ROOT}"
    assert not missing, f"no '{SPDX}' in the first lines of: " + ", ".join(missing)


def main():
    tap = Tap()
    files = sources()
    tap.check("every source file has the SPDX line", check_spdx, files)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
