#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the Python package costs over the C core, in the same run.

CPU: ROUNDS interleaved pairs of one `skysift-cli find IMAGE --repeat 1`
(its own four-step time, from its JSON) and one `skysift.find(array,
table=False)` in this process (wall time around the call, the array
already in memory); medians of both, the overhead and whether it is within
5% or 0.5 ms, whichever is larger. The astropy Table's construction is
timed apart: the median of find(array) minus that of find(array,
table=False), over TABLE_ROUNDS each.

GPU (--gpu): WARM warm calls of `skysift.find(cupy_array, table=False)`
(wall time; each call returns with the results on the host) against
`skysift-cli find IMAGE --backend gpu --repeat 1` runs' kernel time
(times_ms.gpu.kernels), medians of both, and against the kernel time of
as many `find(cupy_array, table=False, timings=True)` calls interleaved
with them (device events; the plain call records none); the lesson's CuPy
code's time comes from examples/lesson.py in the same run.

usage: bench/bench-python.py [--image FITS] [--cli PATH] [--rounds 50]
                             [--gpu] [--warm 100] [--record FILE.json]
"""
import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import skysift

import benchlib
from benchlib import ROOT, wall_ms


def cli_times(cli, image, tmp, backend="cpu"):
    out = os.path.join(tmp, "run.json")
    subprocess.run([cli, "find", image, "--quiet", "--repeat", "1", "--backend", backend,
                    "--json", out], check=True)
    with open(out) as f:
        return json.load(f)["times_ms"]


def bench_cpu(args, data, tmp):
    skysift.find(data, table=False)                   # warm the buffer pool
    cli_ms, py_ms, py_core_ms = [], [], []
    for _ in range(args.rounds):
        cli_ms.append(cli_times(args.cli, args.image, tmp)["cpu"]["total"])
        t0 = time.perf_counter()
        r = skysift.find(data, table=False)
        py_ms.append((time.perf_counter() - t0) * 1e3)
        py_core_ms.append(r["meta"]["times_ms"][-1])
    out = {"cli_four_steps_median_ms": statistics.median(cli_ms),
           "find_median_ms": statistics.median(py_ms),
           "find_core_four_steps_median_ms": statistics.median(py_core_ms)}
    out["overhead_ms"] = out["find_median_ms"] - out["cli_four_steps_median_ms"]
    out["allowed_ms"] = max(0.05 * out["cli_four_steps_median_ms"], 0.5)
    # Slower by at most the allowance (faster is no overhead).
    out["within"] = out["overhead_ms"] <= out["allowed_ms"]
    out["wrapper_ms"] = statistics.median(p - c for p, c in zip(py_ms, py_core_ms))
    # Where the wrapper's time goes: the blank count over the array (the
    # core's blank is NaN alone, so infinities must be found) and the rest.
    from skysift import _arrays
    out["blank_scan_ms"] = statistics.median(
        wall_ms(lambda: _arrays.wrap_array(data).close()) for _ in range(args.rounds))
    try:
        import astropy  # noqa: F401
        n = args.table_rounds
        dicts = [wall_ms(lambda: skysift.find(data, table=False)) for _ in range(n)]
        tables = [wall_ms(lambda: skysift.find(data)) for _ in range(n)]
        out["table_construction_ms"] = statistics.median(tables) - statistics.median(dicts)
    except ImportError:
        out["table_construction_ms"] = None
    print(f"CPU, {args.rounds} interleaved rounds on {os.path.basename(args.image)}:")
    print(f"  skysift-cli four steps, median     {out['cli_four_steps_median_ms']:9.3f} ms")
    print(f"  find(array, table=False), median   {out['find_median_ms']:9.3f} ms "
          f"(its own four steps {out['find_core_four_steps_median_ms']:.3f} ms, "
          f"wrapper {out['wrapper_ms']:.3f} ms, of which the blank scan "
          f"{out['blank_scan_ms']:.3f} ms)")
    print("  (each CLI run is a fresh process, whose buffers are new; find's come from the "
          "warm pool)")
    print(f"  overhead {out['overhead_ms']:+.3f} ms, allowed {out['allowed_ms']:.3f} ms: "
          f"{'within' if out['within'] else 'OVER'}")
    if out["table_construction_ms"] is not None:
        print(f"  astropy Table construction         {out['table_construction_ms']:9.3f} ms "
              "(apart)")
    return out


def cli_gpu_best(cli, image, tmp, repeat):
    out = os.path.join(tmp, "best.json")
    subprocess.run([cli, "find", image, "--quiet", "--repeat", str(repeat), "--backend", "gpu",
                    "--json", out], check=True)
    with open(out) as f:
        return json.load(f)["times_ms"]["gpu"]


def bench_gpu(args, data, tmp):
    """find on a CuPy array against the GPU's kernel time. The CLI starts a
    process per run (a cold context: module load, first launches), so its
    median is taken per process and its best over --warm runs of one
    process; the device events of timed calls interleaved with the plain
    ones give the warm kernel median in this process, the fair reference
    for what the call adds."""
    import cupy
    d = cupy.asarray(data)
    for _ in range(5):
        skysift.find(d, table=False)
        skysift.find(d, table=False, timings=True)
    calls, kernels, totals, timed_calls = [], [], [], []
    for _ in range(args.warm):
        t0 = time.perf_counter()
        skysift.find(d, table=False)
        calls.append((time.perf_counter() - t0) * 1e3)
        t0 = time.perf_counter()
        r = skysift.find(d, table=False, timings=True)
        timed_calls.append((time.perf_counter() - t0) * 1e3)
        kernels.append(r["meta"]["gpu_kernels_ms"])
        totals.append(r["meta"]["gpu_total_ms"])
    cli_cold = [cli_times(args.cli, args.image, tmp, "gpu")["gpu"]["kernels"]
                for _ in range(args.cli_gpu_rounds)]
    best = cli_gpu_best(args.cli, args.image, tmp, args.warm)
    out = {"find_cupy_median_ms": statistics.median(calls), "find_cupy_min_ms": min(calls),
           "find_timed_median_ms": statistics.median(timed_calls),
           "find_kernels_median_ms": statistics.median(kernels),
           "find_device_total_median_ms": statistics.median(totals),
           "cli_gpu_kernels_median_per_process_ms": statistics.median(cli_cold),
           "cli_gpu_kernels_best_of_warm_ms": best["kernels"],
           "cli_gpu_total_best_of_warm_ms": best["total"]}
    out["excess_over_warm_kernels_ms"] = out["find_cupy_median_ms"] - out["find_kernels_median_ms"]
    out["excess_over_cli_median_ms"] = (out["find_cupy_median_ms"]
                                        - out["cli_gpu_kernels_median_per_process_ms"])
    out["within_warm"] = out["excess_over_warm_kernels_ms"] <= 0.05
    out["within_cli_median"] = out["excess_over_cli_median_ms"] <= 0.05
    print(f"GPU, {args.warm} warm calls on {os.path.basename(args.image)}:")
    print(f"  find(cupy_array, table=False), median      {out['find_cupy_median_ms']:8.3f} ms "
          f"(min {out['find_cupy_min_ms']:.3f})")
    print(f"  find(..., timings=True), interleaved, median {out['find_timed_median_ms']:8.3f} ms")
    print(f"    its kernels (device events), median       {out['find_kernels_median_ms']:8.3f} ms")
    print(f"    its device time with the downloads        "
          f"{out['find_device_total_median_ms']:8.3f} ms")
    print(f"  skysift-cli --backend gpu kernels, median of {args.cli_gpu_rounds} processes "
          f"{out['cli_gpu_kernels_median_per_process_ms']:8.3f} ms")
    print(f"  skysift-cli --backend gpu --repeat {args.warm}: best kernels "
          f"{best['kernels']:.3f} ms, best with transfers {best['total']:.3f} ms")
    print(f"  excess over the warm kernel median {out['excess_over_warm_kernels_ms']:+.3f} ms "
          f"({'within' if out['within_warm'] else 'OVER'} +0.050); over the CLI's per-process "
          f"median {out['excess_over_cli_median_ms']:+.3f} ms "
          f"({'within' if out['within_cli_median'] else 'OVER'})")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--image", default=os.path.join(ROOT, "..", "shared", "data",
                                                     "gc_like_2048.fits"))
    ap.add_argument("--cli", default=os.environ.get("SKYSIFT_CLI",
                                                    os.path.join(ROOT, "build", "src", "cli",
                                                                 "skysift-cli")))
    ap.add_argument("--rounds", type=int, default=50)
    ap.add_argument("--table-rounds", type=int, default=10)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("--warm", type=int, default=100)
    ap.add_argument("--cli-gpu-rounds", type=int, default=20)
    ap.add_argument("--record")
    args = ap.parse_args()
    data = skysift.read_image(args.image)
    record = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "machine": f"{platform.node()} {platform.processor() or platform.machine()}, "
                         f"{os.cpu_count()} cores",
              "python": sys.version.split()[0], "numpy": np.__version__,
              "command": benchlib.command(),
              "image": os.path.basename(args.image)}
    with tempfile.TemporaryDirectory() as tmp:
        if args.gpu:
            record["gpu"] = bench_gpu(args, data, tmp)
        else:
            record["cpu"] = bench_cpu(args, data, tmp)
    benchlib.write_json_record(args.record, record)


if __name__ == "__main__":
    main()
