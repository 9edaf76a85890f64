#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The lesson's convolution demo on the GPU: skysift beside CuPy in one run.

For each dtype (float32, float64) it runs

  skysift     `skysift-cli convolve --demo --backend both --dtype DT --repeat N
              --json ...`: the 2D demo (2048 x 2048 deltas every 16 pixels, the
              lesson's 15 x 15 Gaussian, mode full) and the 1D case, on the CPU
              and the GPU; GPU times are CUDA events, best of N after a warm-up:
              the kernel alone, and with the upload of the input and the
              download of the output (pageable host memory).
  CuPy        cupyx.scipy.signal.convolve2d(deltas, gauss) and
              cp.convolve(deltas.ravel(), diag) on device arrays, timed with
              CUDA events around the call (best of N after a warm-up), and
              with the transfers (cp.asarray of the input and .get() of the
              output, synchronised, host clock).

skysift-cli itself checks its GPU results against its CPU results
(allclose rtol 1e-5, atol 1e-8: "agree"). Writes OUT/convolve-bench.json and prints a Markdown table.

Usage: bench/gpu-convolve-bench.py --cli PATH/skysift-cli --out OUT [--repeat N]
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

import benchlib


def lesson_inputs(dtype):
    a = np.zeros((2048, 2048), dtype=dtype)
    a[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    g = np.exp(-(x ** 2 + y ** 2) / 2).astype(dtype)
    return a, g, np.diagonal(g).copy()


def cupy_times(dtype, repeat):
    import cupy as cp
    from cupyx.scipy.signal import convolve2d

    a, g, d = lesson_inputs(dtype)
    da, dg, dd = cp.asarray(a), cp.asarray(g), cp.asarray(d)
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def ev_time(fn):
        fn()
        cp.cuda.Device().synchronize()
        best = float("inf")
        for _ in range(repeat):
            start.record()
            out = fn()
            stop.record()
            stop.synchronize()
            best = min(best, cp.cuda.get_elapsed_time(start, stop))
        return best, out

    def host_time(fn):
        fn()
        return benchlib.best_of(fn, min(repeat, 10))

    t2d, out2d = ev_time(lambda: convolve2d(da, dg))
    t1d, out1d = ev_time(lambda: cp.convolve(da.ravel(), dd))
    t2d_x = host_time(lambda: convolve2d(cp.asarray(a), dg).get())
    t1d_x = host_time(lambda: cp.convolve(cp.asarray(a).ravel(), dd).get())
    return {"cupy_2d_ms": t2d, "cupy_1d_ms": t1d, "cupy_2d_with_transfers_ms": t2d_x,
            "cupy_1d_with_transfers_ms": t1d_x, "cupy_version": cp.__version__}, \
        cp.asnumpy(out2d), cp.asnumpy(out1d)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cli", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--repeat", type=int, default=50)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    results = []
    status = 0
    for dt, np_dt, target in (("f32", np.float32, 0.05), ("f64", np.float64, 0.08)):
        jpath = os.path.join(a.out, f"skysift-{dt}.json")
        o2d = os.path.join(a.out, f"gpu2d-{dt}.fits")
        cmd = [a.cli, "convolve", "--demo", "--backend", "both", "--dtype", dt,
               "--repeat", str(a.repeat), "--json", jpath]
        print("$", " ".join(cmd), flush=True)
        r = subprocess.run(cmd, capture_output=True, text=True)
        print(r.stdout + r.stderr, flush=True)
        if r.returncode != 0:
            status = 1
        sk = json.load(open(jpath)) if os.path.exists(jpath) else {}
        try:
            cu, cu2d, cu1d = cupy_times(np_dt, a.repeat)
        except Exception as e:  # CuPy missing or failing: skysift's numbers stand
            cu, cu2d, cu1d = {"cupy_error": repr(e)}, None, None
        row = {"dtype": dt, "target_2d_ms": target, "target_1d_ms": 0.03, **sk, **cu}
        results.append(row)
    with open(os.path.join(a.out, "convolve-bench.json"), "w") as f:
        json.dump(results, f, indent=2)
    print("\n| dtype | skysift GPU 2D kernel | with transfers | target | CuPy 2D (events) | "
          "skysift GPU 1D kernel | with transfers | CuPy 1D | skysift CPU 2D | CPU 1D | agree |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for r in results:
        def f(k, nd=4):
            v = r.get(k)
            return "-" if v is None else f"{v:.{nd}f} ms"
        print(f"| {r['dtype']} | {f('gpu_2d_ms')} | {f('gpu_2d_with_transfers_ms', 3)} | "
              f"{r['target_2d_ms']} ms | {f('cupy_2d_ms')} | {f('gpu_1d_ms')} | "
              f"{f('gpu_1d_with_transfers_ms', 3)} | {f('cupy_1d_ms')} | {f('cpu_2d_ms', 3)} | "
              f"{f('cpu_1d_ms', 3)} | {r.get('agree')} |")
        if "cupy_error" in r:
            print("CuPy:", r["cupy_error"])
    return status


if __name__ == "__main__":
    sys.exit(main())
