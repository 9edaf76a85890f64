#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Load-throughput benchmark: writes N x N images of BITPIX -32, -64, 16
and 32 (noise; the integer ones with BSCALE, BZERO and BLANK, as radio
surveys store them, and a few blanks and infinities), builds
bench/bench-load.c against a build directory's core library and times
sky_image_load through cfitsio's path and through the loader's own reader
in turn, from the page cache. Prints medians, GB/s (file size over the
median load time) and the ratio, beside what a load is made of: "fresh
pages" (allocating the image and writing each page once: the kernel's page
faults and zeroing) and "warm pages" (the own reader into pages already
there: pread and conversion); --record appends the report to a file.

usage: bench/bench-load.py [--build build | --binary EXE] [--size 8192] [--rounds 11]
                           [--dir /tmp/skysift-bench-load] [--keep] [--threads N]
                           [--baseline EXE [--repeat 3]] [--record FILE]
(--binary: a bench-load built elsewhere, e.g. for a machine with no compiler;
--baseline: a bench-load built against another version of the core, run in
turn with this one --repeat times, so that two versions of the reader are
compared on the same machine state: medians of the runs' medians)
"""
import argparse
import datetime
import os
import shutil
import statistics
import subprocess

import numpy as np

import benchlib
from benchlib import ROOT


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


def parse_table(out):
    """The rows of bench-load's table, by file name: the columns as text."""
    rows = [line.strip("|").split("|") for line in out.splitlines() if line.startswith("| load")]
    return {r[0].strip(): [c.strip() for c in r] for r in rows}


def compare_versions(baseline, exe, rounds, repeat, paths, env):
    """Runs the baseline's bench-load and this one in turn (alternating which
    goes first), repeat times; a table of the medians of their medians."""
    runs = {"baseline": [], "this": []}
    for k in range(repeat):
        order = [("baseline", baseline), ("this", exe)]
        for name, binary in (order if k % 2 == 0 else order[::-1]):
            out = subprocess.run([binary, str(rounds), *paths], check=True,
                                 capture_output=True, text=True, env=env).stdout
            runs[name].append(parse_table(out))
    med = statistics.median
    lines = ["| file | BITPIX | size (MB) | cfitsio (ms) | baseline reader (ms) | "
             "this reader (ms) | baseline (GB/s) | this (GB/s) | this / baseline | "
             "fresh pages (ms) | warm pages (ms) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name in runs["this"][0]:
        this = runs["this"]
        base = runs["baseline"]
        mb = float(this[0][name][2])
        cf = med(float(r[name][3]) for r in this + base)
        tb = med(float(r[name][4]) for r in base)
        tt = med(float(r[name][4]) for r in this)
        fresh = med(float(r[name][8]) for r in this + base)
        warm = med(float(r[name][9]) for r in this)
        lines.append(f"| {name} | {this[0][name][1]} | {mb:.1f} | {cf:.1f} | {tb:.1f} | "
                     f"{tt:.1f} | {mb / tb:.2f} | {mb / tt:.2f} | {tb / tt:.2f}x | "
                     f"{fresh:.1f} | {warm:.1f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--dir", default="/tmp/skysift-bench-load")
    ap.add_argument("--binary", help="an already built bench-load")
    ap.add_argument("--keep", action="store_true", help="keep the images for the next run")
    ap.add_argument("--threads", help="SKYSIFT_THREADS for the run (default: every core)")
    ap.add_argument("--baseline", help="a bench-load built against another version")
    ap.add_argument("--repeat", type=int, default=3,
                    help="with --baseline: how many runs of each (default 3)")
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
    load_before = benchlib.loadavg()
    try:
        if args.baseline:
            out = compare_versions(args.baseline, exe, args.rounds, args.repeat, paths, env)
        else:
            out = subprocess.run([exe, str(args.rounds), *paths], check=True,
                                 capture_output=True, text=True, env=env).stdout
    finally:
        if not args.keep:
            shutil.rmtree(args.dir, ignore_errors=True)
    lines = [f"## Load throughput from the page cache, {args.size}^2, "
             f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}", "",
             f"machine: {benchlib.machine()}",
             f"command: {benchlib.command()}",
             f"threads: {args.threads or 'every core'}; median of {args.rounds} loads each, "
             "alternating, after one warm-up load of each"
             + (f"; baseline and this run in turn {args.repeat} times each, medians of their "
                "medians (cfitsio and fresh pages: of both)" if args.baseline else ""),
             f"load average (1, 5, 15 min) before: {load_before}; after: {benchlib.loadavg()}", "",
             out.rstrip("\n"), ""]
    benchlib.print_report(lines, args.record)


if __name__ == "__main__":
    main()
