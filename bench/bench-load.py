#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load-throughput benchmark: writes N x N images of BITPIX -32, -64, 16
and 32 (noise; the integer ones with BSCALE, BZERO and BLANK, as radio
surveys store them, and a few blanks and infinities), builds
bench/bench-load.c against a build directory's core library and times
sky_image_load through cfitsio's path and through the loader's own reader
in turn, from the page cache. Prints medians, GB/s (file size over the
median load time) and the ratio; --record appends the report to a file.

usage: bench/bench-load.py [--build build | --binary EXE] [--size 8192] [--rounds 11]
                           [--dir /tmp/skysift-bench-load] [--keep] [--threads N]
                           [--record FILE]
(--binary: a bench-load built elsewhere, e.g. for a machine with no compiler)
"""
import argparse
import datetime
import os
import shutil
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
machine = import_module("bench-cpu").machine


def card(key, value):
    text = f"{key:<8}= {value:>20}" if value is not None else f"{key:<80}"
    return f"{text:<80}".encode("ascii")


def write_fits(path, data, bitpix, keys=()):
    """A single-HDU FITS file, written by hand so that the stored integers are
    exactly the ones given (no library rescales them on the way)."""
    ny, nx = data.shape
    cards = [card("SIMPLE", "T"), card("BITPIX", str(bitpix)), card("NAXIS", "2"),
             card("NAXIS1", str(nx)), card("NAXIS2", str(ny))]
    cards += [card(k, v) for k, v in keys]
    cards.append(card("END", None))
    header = b"".join(cards)
    header += b" " * (-len(header) % 2880)
    raw = data.astype(data.dtype.newbyteorder(">"), copy=False).tobytes()
    with open(path, "wb") as f:
        f.write(header)
        f.write(raw)
        f.write(b"\0" * (-len(raw) % 2880))


def make_images(folder, n):
    rng = np.random.default_rng(20261124)
    noise = rng.standard_normal((n, n), dtype=np.float32)
    noise[::997, ::991] = np.nan
    noise[1::1009, ::1013] = np.inf
    paths = []
    p = os.path.join(folder, f"load-{n}-f32.fits")
    write_fits(p, noise, -32)
    paths.append(p)
    p = os.path.join(folder, f"load-{n}-f64.fits")
    write_fits(p, noise.astype(np.float64), -64)
    paths.append(p)
    finite = np.nan_to_num(noise, nan=0.0, posinf=0.0)
    i16 = np.clip(np.rint(finite * 3000.0), -32767, 32767).astype(np.int16)
    i16[::997, ::991] = -32768
    p = os.path.join(folder, f"load-{n}-i16.fits")
    write_fits(p, i16, 16, [("BSCALE", "3.3333333333333E-04"), ("BZERO", "0.0"),
                            ("BLANK", "-32768")])
    paths.append(p)
    i32 = np.rint(finite * 1.0e6).astype(np.int32)
    i32[::997, ::991] = -2147483648
    p = os.path.join(folder, f"load-{n}-i32.fits")
    write_fits(p, i32, 32, [("BSCALE", "1.0E-06"), ("BZERO", "0.0"), ("BLANK", "-2147483648")])
    paths.append(p)
    return paths


def loadavg():
    """The machine's load average: on a shared machine it says how much of
    the cores the run had."""
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def build(build_dir):
    exe = os.path.join(build_dir, "bench-load")
    libs = subprocess.run(["pkg-config", "--libs", "cfitsio", "wcslib"], check=True,
                          capture_output=True, text=True).stdout.split()
    subprocess.run(["cc", "-O2", "-std=c11", "-D_GNU_SOURCE",
                    "-I" + os.path.join(ROOT, "src", "core"),
                    os.path.join(ROOT, "bench", "bench-load.c"),
                    os.path.join(build_dir, "src", "core", "libsky-core.a"),
                    *libs, "-lpthread", "-lm", "-o", exe], check=True)
    return exe


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--dir", default="/tmp/skysift-bench-load")
    ap.add_argument("--binary", help="an already built bench-load")
    ap.add_argument("--keep", action="store_true", help="keep the images for the next run")
    ap.add_argument("--threads", help="SKYSIFT_THREADS for the run (default: every core)")
    ap.add_argument("--record", help="also append the report to this Markdown file")
    args = ap.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    paths = [os.path.join(args.dir, f"load-{args.size}-{t}.fits")
             for t in ("f32", "f64", "i16", "i32")]
    if not all(os.path.exists(p) for p in paths):
        paths = make_images(args.dir, args.size)
    exe = args.binary or build(args.build)
    env = dict(os.environ)
    if args.threads:
        env["SKYSIFT_THREADS"] = args.threads
    load_before = loadavg()
    try:
        out = subprocess.run([exe, str(args.rounds), *paths], check=True, capture_output=True,
                             text=True, env=env).stdout
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    lines = [f"## Load throughput from the page cache, {args.size}^2, "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}", "",
             f"machine: {machine()}",
             f"command: bench/bench-load.py {' '.join(sys.argv[1:])}",
             f"threads: {args.threads or 'every core'}; median of {args.rounds} loads each, "
             "alternating, after one warm-up load of each",
             f"load average (1, 5, 15 min) before: {load_before}; after: {loadavg()}", "",
             out.rstrip("\n"), ""]
    report = "\n".join(lines)
    print(report)
    if args.record:
        with open(args.record, "a") as f:
            f.write("\n" + report)


if __name__ == "__main__":
    main()
