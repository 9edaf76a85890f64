#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Carpentries lesson "Using your GPU with CuPy", cell by cell, with
skysift's calls beside the lesson's NumPy/SciPy and CuPy lines: the
convolution demo, the four steps on the Galactic Centre image, and the
timings, printing the same numbers and the speedups.

Each timing is the median of --repeat runs (the GPU's after a warm-up run,
synchronised), the same statistic on both sides of every ratio. Parts whose
library is missing (CuPy or a device; SciPy) are skipped with the reason.

usage: examples/lesson.py [IMAGE.fits] [--repeat N] [--gpu-calls N] [--json FILE]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import skysift

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IMAGE = os.path.join(HERE, "..", "..", "shared", "data", "gc_like_2048.fits")


def median_ms(fn, repeat, sync=None, warm=True):
    """fn's median wall time over repeat runs, and its last result."""
    if warm:
        fn()
        if sync:
            sync()
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        if sync:
            sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times), out


def gpu_or_reason():
    try:
        import cupy
    except ImportError as e:
        return None, f"CuPy is not installed ({e})"
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001 - CUDA says why in many ways
        return None, f"CuPy finds no device ({e})"
    ok, why = skysift.gpu_available()
    if not ok:
        return None, f"skysift finds no device ({why})"
    return cupy, why


def row(what, ms, base=None):
    ratio = f"{base / ms:10.1f}x" if base else ""
    print(f"  {what:46s} {ms:12.3f} ms {ratio}")


def kappa_sigma_clipper(xp, data_flat):
    """The lesson's clipping loop, for NumPy and CuPy alike."""
    while True:
        med = xp.median(data_flat)
        std = xp.std(data_flat)
        clipped_below = data_flat.compress(data_flat > med - 3 * std)
        clipped_data = clipped_below.compress(clipped_below < med + 3 * std)
        if len(clipped_data) == len(data_flat):
            break
        data_flat = clipped_data
    return data_flat


def convolution_demo(args, cp, results):
    print("== 1. Convolution: deltas every 16 pixels, the lesson's 15 x 15 Gaussian")
    deltas = np.zeros((2048, 2048))
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    gauss = np.exp(-(x ** 2 + y ** 2) / 2)
    diagonal = np.diagonal(gauss)
    out = results.setdefault("convolution_ms", {})
    try:
        from scipy.signal import convolve2d as convolve2d_cpu
        out["scipy_convolve2d"], want = median_ms(lambda: convolve2d_cpu(deltas, gauss),
                                                  max(1, args.repeat // 5), warm=False)
        row("scipy.signal.convolve2d(deltas, gauss)", out["scipy_convolve2d"])
    except ImportError as e:
        want = None
        print(f"  scipy.signal.convolve2d: skipped, SciPy is not installed ({e})")
    out["skysift_convolve2d"], got = median_ms(lambda: skysift.convolve2d(deltas, gauss),
                                               args.repeat)
    row("skysift.convolve2d(deltas, gauss)", out["skysift_convolve2d"],
        out.get("scipy_convolve2d"))
    if want is not None:
        print(f"  np.allclose(skysift, scipy): {np.allclose(got, want)}")
    out["np_convolve"], want1 = median_ms(lambda: np.convolve(deltas.ravel(), diagonal),
                                          args.repeat)
    row("np.convolve(deltas.ravel(), diagonal)", out["np_convolve"])
    out["skysift_convolve"], got1 = median_ms(
        lambda: skysift.convolve(deltas.ravel(), diagonal), args.repeat)
    row("skysift.convolve(deltas.ravel(), diagonal)", out["skysift_convolve"],
        out["np_convolve"])
    print(f"  np.allclose(skysift, numpy): {np.allclose(got1, want1)}")
    if cp is not None:
        from cupyx.scipy.signal import convolve2d as convolve2d_gpu
        deltas_gpu, gauss_gpu = cp.asarray(deltas), cp.asarray(gauss)
        sync = cp.cuda.get_current_stream().synchronize
        out["cupy_convolve2d"], got_gpu = median_ms(
            lambda: convolve2d_gpu(deltas_gpu, gauss_gpu), args.repeat, sync)
        row("cupyx.scipy.signal.convolve2d (CuPy)", out["cupy_convolve2d"],
            out.get("scipy_convolve2d"))
        if want is not None:
            print(f"  np.allclose(CuPy, scipy): {np.allclose(cp.asnumpy(got_gpu), want)}")


def four_steps(args, cp, results):
    print(f"== 2. The four steps on {os.path.basename(args.image)}")
    data = skysift.read_image(args.image)      # astropy.io.fits.getdata in the lesson
    out = results.setdefault("steps_ms", {})
    figures = results.setdefault("figures", {})

    # The lesson's NumPy/SciPy cells.
    try:
        from scipy.ndimage import center_of_mass, label, sum_labels
    except ImportError as e:
        print(f"  NumPy/SciPy steps: skipped, SciPy is not installed ({e})")
        label = None
    if label is not None:
        flat = data.ravel()
        flat = flat[np.isfinite(flat)]
        cpu_repeat = max(1, args.repeat // 5)
        out["numpy_clip"], clipped = median_ms(lambda: kappa_sigma_clipper(np, flat),
                                               cpu_repeat, warm=False)
        std = np.std(clipped)
        out["numpy_segment"], seg = median_ms(lambda: np.where(data > 5 * std, 1, 0),
                                              cpu_repeat)
        out["scipy_label"], (labelled, n) = median_ms(lambda: label(seg), cpu_repeat)
        idx = np.arange(1, n + 1)
        out["scipy_measure"], (pos, flux) = median_ms(
            lambda: (center_of_mass(data, labelled, idx), sum_labels(data, labelled, idx)),
            cpu_repeat)
        out["numpy_total"] = sum(out[k] for k in ("numpy_clip", "numpy_segment",
                                                  "scipy_label", "scipy_measure"))
        figures["numpy"] = dict(median=float(np.median(clipped)), std=float(std),
                                n=int(clipped.size), nsources=int(n))
        print(f"  NumPy/SciPy: median {np.median(clipped):.6g}, std {std:.6g}, "
              f"{clipped.size} pixels kept, {n} sources")

    # skysift, step by step as the lesson calls them, then in one call.
    out["skysift_clip"], (median, sigma, kept, iterations) = median_ms(
        lambda: skysift.clip(data), args.repeat)
    out["skysift_segment"], mask = median_ms(lambda: skysift.segment(data, 5 * sigma),
                                             args.repeat)
    out["skysift_label"], (labels, nsky) = median_ms(lambda: skysift.label(mask),
                                                      args.repeat)
    out["skysift_measure"], cat = median_ms(
        lambda: skysift.measure(data, labels, table=False), args.repeat)
    out["skysift_total"] = sum(out[k] for k in ("skysift_clip", "skysift_segment",
                                                "skysift_label", "skysift_measure"))
    out["skysift_find"], found = median_ms(lambda: skysift.find(data, table=False),
                                           args.repeat)
    figures["skysift"] = dict(median=median, std=sigma, n=kept, iterations=iterations,
                              nsources=nsky)
    print(f"  skysift:     median {median:.6g}, std {sigma:.6g}, {kept} pixels kept, "
          f"{nsky} sources ({iterations} passes)")
    order = np.argsort(cat["sum_flux"])[::-1][:10]
    print("  ten largest summed fluxes: " + ", ".join(f"{cat['sum_flux'][i]:.4g}"
                                                      for i in order))

    # The lesson's CuPy cells, and skysift on the CuPy array.
    if cp is not None:
        from cupyx.scipy.ndimage import center_of_mass as com_gpu
        from cupyx.scipy.ndimage import label as label_gpu
        from cupyx.scipy.ndimage import sum_labels as sum_labels_gpu
        sync = cp.cuda.get_current_stream().synchronize
        data_gpu = cp.asarray(data)
        flat_gpu = data_gpu.ravel()
        flat_gpu = flat_gpu[cp.isfinite(flat_gpu)]
        out["cupy_clip"], clipped_gpu = median_ms(lambda: kappa_sigma_clipper(cp, flat_gpu),
                                                  args.repeat, sync)
        std_gpu = cp.std(clipped_gpu)
        out["cupy_segment"], seg_gpu = median_ms(lambda: cp.where(data_gpu > 5 * std_gpu, 1, 0),
                                                 args.repeat, sync)
        labelled_gpu = cp.empty(data_gpu.shape)
        out["cupy_label"], n_gpu = median_ms(lambda: label_gpu(seg_gpu, output=labelled_gpu),
                                             args.repeat, sync)
        idx_gpu = cp.arange(1, int(n_gpu) + 1)
        out["cupy_measure"], _ = median_ms(
            lambda: (com_gpu(data_gpu, labelled_gpu, idx_gpu),
                     sum_labels_gpu(data_gpu, labelled_gpu, idx_gpu)), args.repeat, sync)
        out["cupy_total"] = sum(out[k] for k in ("cupy_clip", "cupy_segment", "cupy_label",
                                                 "cupy_measure"))
        figures["cupy"] = dict(std=float(std_gpu), n=int(clipped_gpu.size),
                               nsources=int(n_gpu))
        print(f"  CuPy:        std {float(std_gpu):.6g}, {clipped_gpu.size} pixels kept, "
              f"{int(n_gpu)} sources")
        out["skysift_find_cupy"], found_gpu = median_ms(
            lambda: skysift.find(data_gpu, table=False), args.gpu_calls, sync)
        # Its kernels, from calls that record device events (the plain
        # call records none: they cost the host a few microseconds).
        out["skysift_find_cupy_kernels"] = statistics.median(
            skysift.find(data_gpu, table=False, timings=True)["meta"]["gpu_kernels_ms"]
            for _ in range(args.gpu_calls))
        figures["skysift_gpu"] = dict(std=found_gpu["meta"]["sigma"],
                                      nsources=found_gpu["meta"]["nsources"])
        print(f"  skysift GPU: std {found_gpu['meta']['sigma']:.6g}, "
              f"{found_gpu['meta']['nsources']} sources")


def timings(results):
    out = results["steps_ms"]
    print("== 3. Timings (median ms; ratio: the lesson's code / skysift)")
    if "numpy_total" in out:
        for step, lesson in (("clip", "numpy_clip"), ("segment", "numpy_segment"),
                             ("label", "scipy_label"), ("measure", "scipy_measure"),
                             ("total", "numpy_total")):
            row(f"{step}: NumPy/SciPy", out[lesson])
            row(f"{step}: skysift CPU", out[f"skysift_{step}"], out[lesson])
        row("skysift.find(array, table=False)", out["skysift_find"], out["numpy_total"])
    if "cupy_total" in out:
        for step in ("clip", "segment", "label", "measure", "total"):
            row(f"{step}: CuPy", out[f"cupy_{step}"])
        row("skysift.find(cupy_array, table=False)", out["skysift_find_cupy"],
            out["cupy_total"])
        row("  (its kernels, device events)", out["skysift_find_cupy_kernels"])
        speedup = out["cupy_total"] / out["skysift_find_cupy"]
        results["speedup_find_cupy_vs_lesson_cupy"] = speedup
        print(f"  skysift.find on the CuPy array is {speedup:.0f}x the lesson's CuPy code "
              f"({'at least' if speedup >= 100 else 'under'} 100x)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("image", nargs="?", default=DEFAULT_IMAGE)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--gpu-calls", type=int, default=100,
                    help="warm calls of skysift.find on the CuPy array (default 100)")
    ap.add_argument("--json")
    args = ap.parse_args()
    cp, gpu = gpu_or_reason()
    print(f"skysift {skysift.__version__}, NumPy {np.__version__}, Python "
          f"{sys.version.split()[0]}; GPU: {gpu}")
    results = {"image": os.path.basename(args.image), "repeat": args.repeat, "gpu": gpu}
    convolution_demo(args, cp, results)
    four_steps(args, cp, results)
    timings(results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
