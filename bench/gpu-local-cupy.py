#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a CuPy user writes for the local method's detection from its maps,
timed in the same run as skysift's (bench/bench-gpu-local.c --dump DIR):
the detection image (image - background) / rms, the flood threshold and
cupyx.scipy.ndimage.label; then, as a second figure, the per-source sums,
centroids and peaks with cupyx.scipy.ndimage. CUDA events around each,
one warm-up, the median of --repeat (20).

Usage: gpu-local-cupy.py DIR NX NY [--repeat 20] [--flood 2.5] [--json FILE]
"""
import argparse
import json

import numpy as np
import cupy as cp
import cupyx.scipy.ndimage as ndi


def timed(fn, repeat):
    fn()
    cp.cuda.Device().synchronize()
    times = []
    for _ in range(repeat):
        a, b = cp.cuda.Event(), cp.cuda.Event()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(cp.cuda.get_elapsed_time(a, b))
    return float(np.median(times))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("nx", type=int)
    ap.add_argument("ny", type=int)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--flood", type=float, default=2.5)
    ap.add_argument("--json")
    ap.add_argument("--skip-measure", action="store_true",
                    help="time threshold + label only (ndimage's per-label measures are slow "
                         "on many labels)")
    a = ap.parse_args()
    load = lambda name: cp.asarray(np.fromfile(f"{a.dir}/{name}", dtype=np.float32)
                                   .reshape(a.ny, a.nx))
    img, bkg, rms = load("image.f32"), load("background.f32"), load("rms.f32")

    def threshold_label():
        snr = (img - bkg) / rms
        return ndi.label(snr > a.flood)

    def threshold_label_measure():
        residual = img - bkg
        labels, n = ndi.label(residual / rms > a.flood)
        idx = cp.arange(1, int(n) + 1)
        ndi.sum(residual, labels, idx)
        ndi.center_of_mass(residual, labels, idx)
        ndi.maximum_position(residual, labels, idx)

    t_label = timed(threshold_label, a.repeat)
    n = int(threshold_label()[1])
    t_measure = (float("nan") if a.skip_measure
                 else timed(threshold_label_measure, max(3, a.repeat // 4)))
    print(f"CuPy {a.nx} x {a.ny}: threshold + label {t_label:.4f} ms ({n} components, median of "
          f"{a.repeat}); threshold + label + sum, centroid, peak {t_measure:.3f} ms")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"nx": a.nx, "ny": a.ny, "components": n, "threshold_label_ms": t_label,
                       "threshold_label_measure_ms": t_measure, "repeat": a.repeat}, f)
            f.write("\n")


if __name__ == "__main__":
    main()
