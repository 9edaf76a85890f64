#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a warm skysift.find(cupy_array, table=False) spends its time: the
call's own steps (as skysift._find_device takes them) timed one by one
over WARM calls, medians, beside the device's own span (events from the
copy-in to the catalogue at home) and its kernels. What the C call takes
over the device's span is the host's part inside it (the launches before
the first kernel, the waits' wake-ups, the catalogue's unpacking).

usage: bench/python-gpu-profile.py IMAGE.fits [--warm 100]
"""
import argparse
import ctypes
import statistics
import time

import numpy as np

import skysift
from skysift import _arrays, _lib, _table


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("image")
    ap.add_argument("--warm", type=int, default=100)
    a = ap.parse_args()
    import cupy
    d = cupy.asarray(skysift.read_image(a.image))
    for _ in range(10):
        skysift.find(d, table=False)
    parts = {k: [] for k in ("whole find", "params", "array checks", "stream ptr", "C run",
                             "device span", "kernels", "result struct", "packed columns",
                             "release + free", "result dict")}
    lib = _lib.lib
    for _ in range(a.warm):
        t0 = time.perf_counter()
        skysift.find(d, table=False)
        parts["whole find"].append(time.perf_counter() - t0)

        t0 = time.perf_counter()
        p = skysift._params()
        t1 = time.perf_counter()
        data = _arrays.device_float32(d)
        ny, nx = data.shape
        t2 = time.perf_counter()
        stream = cupy.cuda.get_current_stream().ptr
        t3 = time.perf_counter()
        run = ctypes.c_void_p()
        res = _lib.Result()
        t4 = time.perf_counter()
        _lib.check(lib.sky_api_gpu_run_device(data.data.ptr, nx, ny, ctypes.byref(p), stream,
                                              ctypes.byref(run), ctypes.byref(res)))
        t5 = time.perf_counter()
        cols = _table.packed_columns(res.packed_catalogue, res.nsources)
        t6 = time.perf_counter()
        lib.sky_api_gpu_release()
        lib.sky_api_run_free(run)
        t7 = time.perf_counter()
        skysift._result_dict(res, cols)
        t8 = time.perf_counter()
        for key, v in (("params", t1 - t0), ("array checks", t2 - t1), ("stream ptr", t3 - t2),
                       ("result struct", t4 - t3), ("C run", t5 - t4),
                       ("packed columns", t6 - t5), ("release + free", t7 - t6),
                       ("result dict", t8 - t7)):
            parts[key].append(v)
        parts["device span"].append(res.gpu_total_ms / 1e3)
        parts["kernels"].append(res.gpu_kernels_ms / 1e3)
    print(f"find(cupy_array, table=False) on {a.image}, {a.warm} warm calls, medians (us):")
    for key, v in parts.items():
        print(f"  {key:<16} {statistics.median(v) * 1e6:9.1f}")
    c_host = statistics.median(np.array(parts["C run"]) - np.array(parts["device span"]))
    print(f"  C run - device span (the host's part inside the C call): {c_host * 1e6:.1f} us")


if __name__ == "__main__":
    main()
