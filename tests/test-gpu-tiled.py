#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""find --backend gpu in bands of rows (--gpu-memory-limit) gives the
whole-image run's catalogue byte for byte, and the CPU's.

The field (1001 x 777, odd on both sides) is made here with the standard
library alone: unit noise, Gaussian sources of several sizes scattered over
it (many cross the edges between bands), a bar down the whole image (one
source over every band), a U whose arms meet only at the bottom (two pieces
in every band but the last, one source), a diagonal staircase (one source
only with 8-connectivity, crossing band edges on a diagonal), sources on the
image's four edges, a blank patch and infinities. Limits of a few MiB cut it
into up to tens of bands; a limit that holds no band of one row is an error that
says so. Without a usable GPU every check but the last skips, saying why."""
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
NX, NY = 1001, 777


def run(*args, timeout=300):
    env = dict(os.environ)
    env.pop("SKYSIFT_GPU_MEMORY_LIMIT", None)
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=env)


def describe(proc):
    return (f"command: {' '.join(proc.args)}\nexit status: {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-2000:]}")


def expect_ok(proc):
    assert proc.returncode == 0, f"expected exit status 0\n{describe(proc)}"


def make_field(path, seed=11):
    rng = random.Random(seed)
    img = [rng.gauss(0.0, 1.0) for _ in range(NX * NY)]

    def add(x, y, v):
        if 0 <= x < NX and 0 <= y < NY:
            img[y * NX + x] += v

    for _ in range(260):
        cx, cy = rng.uniform(0, NX - 1), rng.uniform(0, NY - 1)
        s, peak = rng.choice((0.8, 1.5, 3.0, 6.0)), rng.uniform(8, 80)
        r = int(4 * s) + 1
        for y in range(int(cy) - r, int(cy) + r + 1):
            for x in range(int(cx) - r, int(cx) + r + 1):
                add(x, y, peak * math.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * s * s)))
    for y in range(0, NY):                      # a bar over the whole height
        add(500, y, 40.0)
        add(501, y, 40.0)
    for y in range(40, 700):                    # a U: arms joined at the bottom
        add(700, y, 30.0)
        add(760, y, 30.0)
    for x in range(700, 761):
        add(x, 700, 30.0)
    for i in range(300):                        # a diagonal staircase
        add(100 + i, 200 + i, 35.0)
    for x in range(0, NX, 97):                  # the first and last rows
        add(x, 0, 25.0)
        add(x, NY - 1, 25.0)
    for y in range(3, NY, 89):                  # the first and last columns
        add(0, y, 25.0)
        add(NX - 1, y, 25.0)
    for y in range(300, 340):                   # a blank patch inside a source
        for x in range(880, 940):
            img[y * NX + x] = float("nan")
    img[123 * NX + 456] = float("inf")
    img[124 * NX + 456] = float("-inf")
    cards = [("SIMPLE", "T"), ("BITPIX", "-32"), ("NAXIS", "2"), ("NAXIS1", str(NX)),
             ("NAXIS2", str(NY)), ("BUNIT", "'Jy/beam '")]
    header = b"".join(f"{k:<8}= {v:>20}".ljust(80).encode() for k, v in cards)
    header += b"END".ljust(80)
    header += b" " * (-len(header) % 2880)
    data = struct.pack(f">{NX * NY}f", *img)
    data += b"\0" * (-len(data) % 2880)
    with open(path, "wb") as f:
        f.write(header + data)


class Suite:
    def __init__(self, tap, tmp):
        self.tap = tap
        self.tmp = tmp
        self.image = os.path.join(tmp, "field.fits")
        self.gpu_present = None
        self.gpu_why = ""
        self.whole = {}

    def path(self, name):
        return os.path.join(self.tmp, name)

    def find(self, name, *args):
        csv, js = self.path(name + ".csv"), self.path(name + ".json")
        proc = run("find", self.image, "--csv", csv, "--json", js, *args)
        expect_ok(proc)
        with open(csv) as f:
            text = f.read()
        with open(js) as f:
            summary = json.load(f)
        return proc, text, summary

    def setup(self):
        make_field(self.image)
        js = self.path("probe.json")
        proc = run("find", self.image, "--quiet", "--backend", "gpu", "--json", js)
        expect_ok(proc)
        with open(js) as f:
            self.gpu_present = json.load(f)["backend"] == "gpu"
        self.gpu_why = proc.stderr.strip()

    def need_gpu(self):
        if self.gpu_present is None:
            raise Skip("the setup failed")
        if not self.gpu_present:
            raise Skip(f"no usable GPU here ({self.gpu_why[:160]})")

    def test_whole(self, conn):
        """The whole-image runs to compare with: the GPU's and the CPU's agree."""
        self.need_gpu()
        _, gpu_csv, gpu_js = self.find(f"whole-gpu-{conn}", "--backend", "gpu",
                                       "--connectivity", conn)
        _, cpu_csv, _ = self.find(f"whole-cpu-{conn}", "--connectivity", conn)
        assert gpu_js["nsources"] > 150, f"only {gpu_js['nsources']} sources: a poor field"
        assert gpu_csv == cpu_csv, "the whole-image GPU and CPU catalogues differ"
        self.whole[conn] = (gpu_csv, gpu_js)

    def test_bands(self, conn, limit):
        self.need_gpu()
        if conn not in self.whole:
            raise Skip("the whole-image run failed")
        proc, csv, js = self.find(f"bands-{conn}-{limit}", "--backend", "gpu",
                                  "--connectivity", conn, "--gpu-memory-limit", limit)
        line = [ln for ln in proc.stdout.splitlines() if ln.startswith("gpu bands")]
        assert line, f"no 'gpu bands' line: the run was not cut into bands\n{describe(proc)}"
        nbands = int(line[0].split()[2])
        least = 10 if limit == "2M" else 2
        assert nbands >= least, f"only {nbands} bands under {limit}\n{describe(proc)}"
        whole_csv, whole_js = self.whole[conn]
        assert js["backend"] == "gpu", f"JSON backend {js['backend']!r}\n{describe(proc)}"
        for key in ("nsources", "nblank"):
            assert js[key] == whole_js[key], f"{key}: {js[key]} in bands, {whole_js[key]} whole"
        a, b = js["clipped"], whole_js["clipped"]
        assert a["iterations"] == b["iterations"] and a["n"] == b["n"], \
            f"clip: {a} in bands, {b} whole"
        for key in ("median", "std"):
            assert abs(a[key] - b[key]) <= 1e-6 * abs(b[key]), f"clip {key}: {a} vs {b}"
        if csv != whole_csv:
            la, lb = csv.splitlines(), whole_csv.splitlines()
            diff = next((i for i in range(min(len(la), len(lb))) if la[i] != lb[i]), None)
            raise AssertionError(f"the catalogue in {nbands} bands differs from the whole run's: "
                                 f"{len(la)} vs {len(lb)} lines, first difference at line {diff}:"
                                 f"\n{la[diff] if diff is not None else ''}"
                                 f"\n{lb[diff] if diff is not None else ''}")

    def test_both(self):
        """--backend both under a limit: the GPU's run in bands is checked
        against the CPU's whole-image run, and they agree."""
        self.need_gpu()
        proc = run("find", self.image, "--backend", "both", "--gpu-memory-limit", "3M")
        expect_ok(proc)
        assert "gpu bands" in proc.stdout, f"the GPU did not run in bands\n{describe(proc)}"
        assert "results    agree" in proc.stdout, f"the results do not agree\n{describe(proc)}"

    def test_too_small(self):
        self.need_gpu()
        proc = run("find", self.image, "--backend", "gpu", "--gpu-memory-limit", "64K")
        assert proc.returncode == 1, f"expected exit status 1\n{describe(proc)}"
        assert "--gpu-memory-limit" in proc.stderr and "one row" in proc.stderr, \
            f"the error does not say that no band fits\n{describe(proc)}"

    def test_usage(self):
        proc = run("find", self.image, "--gpu-memory-limit", "2M")
        assert proc.returncode == 2 and "--backend gpu" in proc.stderr, \
            f"--gpu-memory-limit with the CPU backend is not refused\n{describe(proc)}"
        proc = run("find", self.image, "--backend", "gpu", "--gpu-memory-limit", "lots")
        assert proc.returncode == 2 and "not a size" in proc.stderr, \
            f"a bad size is not refused\n{describe(proc)}"

    def run(self):
        t = self.tap.check
        t("setup: a 1001x777 field with sources across band edges, and whether a GPU runs",
          self.setup)
        for conn in ("4", "8"):
            t(f"{conn}-connected: the whole-image GPU run equals the CPU's", self.test_whole,
              conn)
            for limit in ("2M", "3M", "5M"):
                t(f"{conn}-connected, --gpu-memory-limit {limit}: bands give the whole run's "
                  "catalogue byte for byte", self.test_bands, conn, limit)
        t("--backend both --gpu-memory-limit 3M: the bands agree with the CPU's whole run",
          self.test_both)
        t("a --gpu-memory-limit that holds no band of one row is an error saying so",
          self.test_too_small)
        t("--gpu-memory-limit: refused without --backend gpu, and a bad size", self.test_usage)


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="skysift-gpu-tiled-") as tmp:
        Suite(tap, tmp).run()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
