#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The local method's maps on the GPU: skysift against what a CuPy user
writes for the same maps, in one run on one machine.

For each size (synth fields made with `skysift-cli synth`):

  skysift  `bench-gpu-maps IMG ROUNDS` (and again with SKYSIFT_GPU_MODE_THREADS=32,
           the mode kernel a warp a box): sky_gpu_local_maps (mesh statistics,
           filling, median filter, spline, residual, snr), the image on the
           device, CUDA events around the kernels, the median of ROUNDS runs
           after a warm-up; the maps compared with the CPU's bit for bit.
  CuPy     a mesh of nanmedian / nanstd per box, median_filter, cubic zoom,
           image - background and / rms (the maps), and the same followed by
           a threshold and cupyx.scipy.ndimage.label (the CuPy user's whole
           detection): CUDA events, the median of ROUNDS runs after a warm-up.

Prints a table with the ratio CuPy / skysift of the medians, and writes
OUT/gpu-maps-bench.json.

usage: gpu-maps-bench.py --pack PACK --out OUT [--sizes 2048,8192] [--rounds 20]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# Targets for every step of the local method on the device, ms (the maps
# are a part of them).
TARGETS = {2048: 0.3, 8192: 2.0}


def cupy_times(path, box, filt, rounds, tools):
    import cupy as cp
    from cupyx.scipy import ndimage as cnd
    sys.path.insert(0, tools)
    from reference_pipeline import read_fits_2d

    data = cp.asarray(read_fits_2d(path).astype("float32"))
    ny, nx = data.shape

    def maps():
        nby, nbx = ny // box, nx // box
        tiles = data[:nby * box, :nbx * box].reshape(nby, box, nbx, box)
        tiles = tiles.swapaxes(1, 2).reshape(nby, nbx, box * box)
        back = cnd.median_filter(cp.nanmedian(tiles, axis=2), size=filt, mode="nearest")
        rms = cnd.median_filter(cp.nanstd(tiles, axis=2), size=filt, mode="nearest")
        zoom = (ny / nby, nx / nbx)
        bkg = cnd.zoom(back, zoom, order=3)
        rmsmap = cnd.zoom(rms, zoom, order=3)
        residual = data - bkg
        return bkg, rmsmap, residual, residual / rmsmap

    def detect():
        snr = maps()[3]
        return cnd.label(snr > 4.6)

    out = {}
    for name, fn in (("maps", maps), ("maps_threshold_label", detect)):
        fn()
        cp.cuda.Device().synchronize()
        ms = []
        for _ in range(rounds):
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            fn()
            end.record()
            end.synchronize()
            ms.append(cp.cuda.get_elapsed_time(start, end))
        out[name] = statistics.median(ms)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pack", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", default="2048,8192")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--box", type=int, default=64)
    ap.add_argument("--filter", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cli = os.path.join(a.pack, "bin", "skysift-cli")
    bench = os.path.join(a.pack, "bin", "bench-gpu-maps")
    tools = os.path.join(a.pack, "tools")
    results = []
    for size in [int(s) for s in a.sizes.split(",")]:
        path = os.path.join(os.environ.get("SKYSIFT_SYNTH_DIR", "/tmp"), f"synth_{size}.fits")
        if not os.path.exists(path):
            subprocess.run([cli, "synth", path, "--size", str(size)], check=True,
                           capture_output=True)
        p = subprocess.run([bench, path, str(a.rounds), str(a.box), str(a.filter)],
                           capture_output=True, text=True)
        if not p.stdout.strip():
            print(f"{size}: bench-gpu-maps failed: {p.stderr.strip()}")
            results.append({"size": size, "error": p.stderr.strip()})
            continue
        sky = json.loads(p.stdout)
        # The mode kernel a warp a box (SKYSIFT_GPU_MODE_THREADS=32), for comparison.
        pw = subprocess.run([bench, path, str(a.rounds), str(a.box), str(a.filter)],
                            capture_output=True, text=True,
                            env=dict(os.environ, SKYSIFT_GPU_MODE_THREADS="32"))
        sky_warp = json.loads(pw.stdout) if pw.stdout.strip() else {"error": pw.stderr.strip()}
        try:
            cu = cupy_times(path, a.box, a.filter, a.rounds, tools)
        except Exception as e:  # CuPy missing or failing: said, not hidden
            cu = {"error": repr(e)}
        row = {"size": size, "skysift": sky, "skysift_mode_warp": sky_warp, "cupy": cu}
        if "maps" in cu:
            row["ratio_maps"] = cu["maps"] / sky["gpu_maps_ms_median"]
            row["ratio_detect"] = cu["maps_threshold_label"] / sky["gpu_maps_ms_median"]
        results.append(row)

    print(f"{'size':>6} {'skysift maps':>13} {'CuPy maps':>10} {'ratio':>7} "
          f"{'CuPy +thr+label':>16} {'target (all steps)':>19} {'equal to CPU':>13}")
    for r in results:
        if "skysift" not in r:
            continue
        s, c = r["skysift"], r["cupy"]
        eq = "yes" if not any(s["differences"].values()) else f"NO {s['differences']}"
        if "maps" in c:
            print(f"{r['size']:>6} {s['gpu_maps_ms_median']:>10.4f} ms {c['maps']:>7.3f} ms "
                  f"{r['ratio_maps']:>6.1f}x {c['maps_threshold_label']:>13.3f} ms "
                  f"{TARGETS.get(r['size'], float('nan')):>16.2f} ms {eq:>13}")
        else:
            print(f"{r['size']:>6} {s['gpu_maps_ms_median']:>10.4f} ms  CuPy: {c['error']}  "
                  f"equal to CPU: {eq}")
    for r in results:
        w = r.get("skysift_mode_warp", {})
        if "gpu_maps_ms_median" in w:
            eq = "yes" if not any(w["differences"].values()) else f"NO {w['differences']}"
            print(f"{r['size']:>6} with SKYSIFT_GPU_MODE_THREADS=32: {w['gpu_maps_ms_median']:.4f} ms, "
                  f"equal to CPU: {eq}")
    print("medians of", a.rounds, "runs after a warm-up, CUDA events; device:",
          results[0].get("skysift", {}).get("device", "?") if results else "?")
    with open(os.path.join(a.out, "gpu-maps-bench.json"), "w") as f:
        json.dump(results, f, indent=1)
    return 0 if all("skysift" in r and not any(r["skysift"]["differences"].values())
                    for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
