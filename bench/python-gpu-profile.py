#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a warm skysift.find(cupy_array, table=False) spends its time: the
call's own steps (as skysift._device.find takes them) timed one by one
over WARM calls, medians, beside the device's own span (events from the
first kernel to the catalogue at home) and its kernels, taken from
timings=True calls interleaved with them (the plain call records no
events). What the C call takes over the device's span is the host's part
inside it (the launches before the first kernel, the wait's wake-up).

usage: bench/python-gpu-profile.py IMAGE.fits [--warm 100]
"""
import argparse
import statistics
import time

import skysift
from skysift import _arrays, _device, _lib, _table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image")
    ap.add_argument("--warm", type=int, default=100)
    a = ap.parse_args()
    import cupy
    d = cupy.asarray(skysift.read_image(a.image))
    for _ in range(10):
        skysift.find(d, table=False)
    parts = {k: [] for k in ("whole find", "whole find, timings", "params", "array checks",
                             "stream ptr", "C run", "device span", "kernels", "result lists",
                             "packed columns", "release", "meta dict")}
    for _ in range(a.warm):
        t0 = time.perf_counter()
        skysift.find(d, table=False)
        parts["whole find"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        timed = skysift.find(d, table=False, timings=True)
        parts["whole find, timings"].append(time.perf_counter() - t0)
        parts["device span"].append(timed["meta"]["gpu_total_ms"] / 1e3)
        parts["kernels"].append(timed["meta"]["gpu_kernels_ms"] / 1e3)

        t0 = time.perf_counter()
        p = skysift._params(3.0, 0, 5.0, False, 4, 0, 4.6, 2.5, 1, (32, 0.005), 5.0, 64, 3)
        t1 = time.perf_counter()
        data = _arrays.device_float32(d)
        ny, nx = data.shape
        t2 = time.perf_counter()
        stream = _device._stream()
        t3 = time.perf_counter()
        status = _device._find(data.data.ptr, nx, ny, p, stream, 0, _device._RESULT_REF)
        t4 = time.perf_counter()
        _lib.check(status)
        dv = _device._DOUBLES[:]
        iv = _device._INTS[:]
        t5 = time.perf_counter()
        out = _table.packed_columns(_device._CATALOGUE.value, iv[2])
        t6 = time.perf_counter()
        _device._release()
        t7 = time.perf_counter()
        out["meta"] = {"median": dv[0], "sigma": dv[1], "clip_pixels": iv[0],
                       "input_pixels": iv[1], "iterations": iv[3], "flat": iv[5] != 0,
                       "threshold_value": dv[3], "nsources": iv[2], "nislands": 0,
                       "backend": "gpu", "steps": list(_device._STEPS), "times_ms": dv[4:9],
                       "gpu_kernels_ms": dv[8], "gpu_total_ms": dv[9], "gpu_fault": ""}
        t8 = time.perf_counter()
        for key, v in (("params", t1 - t0), ("array checks", t2 - t1), ("stream ptr", t3 - t2),
                       ("C run", t4 - t3), ("result lists", t5 - t4),
                       ("packed columns", t6 - t5), ("release", t7 - t6),
                       ("meta dict", t8 - t7)):
            parts[key].append(v)
    print(f"find(cupy_array, table=False) on {a.image}, {a.warm} warm calls, medians (us):")
    for key, v in parts.items():
        print(f"  {key:<20} {statistics.median(v) * 1e6:9.1f}")
    c_host = statistics.median(parts["C run"]) - statistics.median(parts["device span"])
    print(f"  C run - device span (the host's part inside the C call, medians): "
          f"{c_host * 1e6:.1f} us")
    ker = statistics.median(parts["kernels"])
    print(f"  whole find - kernels: {(statistics.median(parts['whole find']) - ker) * 1e6:.1f} us"
          f" (target 50)")


if __name__ == "__main__":
    main()
