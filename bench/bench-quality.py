#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Detection quality and speed of skysift's two methods beside SEP, photutils and
SExtractor, in the same run, on synthetic fields with their truth lists.

usage: bench-quality.py [--sizes 2048,4096,8192] [--seeds 5] [--rounds 5]
                        [--tools LIST] [--workdir /tmp/...] [--cli build/src/cli/skysift-cli]

For each size and seed it makes the field with `skysift-cli synth` (its SHA-256 is
printed: the fields are byte-identical per size and seed), runs every tool, and scores
each catalogue with ../shared/tools/score_catalogue.py (match radius 2 px, noise
0.0133). Scores are pooled per size: reliability = matched / detections over all
seeds, completeness = found / true points above 5 (10) sigma over all seeds. The shared
field made by make_gc_like.py (../shared/data/gc_like_2048.fits) is scored too.

Speed: on the first seed of each size, interleaved rounds of the global method, the
local method (all threads and one thread) and SEP (background mesh 64 plus extraction
against the rms map), each timed without loading the file (skysift: the JSON's
times_ms.cpu.total; SEP: sep.Background + sep.extract in this process); medians.

The tools, all with their own defaults unless named:
  skysift-global   skysift-cli find (the lesson's method)
  skysift-local    skysift-cli find --method local (its defaults)
  sep-default      sep.Background(data); sep.extract(data - bkg, 5, err=bkg.globalrms)
                   (SEP's defaults: mesh 64, filter 3, 3x3 conv filter, minarea 5, deblending
                   32 levels 0.005; the threshold 5 sigma, as every tool here)
  sep-mesh64-a1    the same with minarea=1 (the mesh is SEP's default 64 x 64, filter 3)
  photutils-n1/n5  Background2D((64, 64), filter_size 3, sigma-clipped median);
                   detect_sources(data - bkg, 5 * background_rms, npixels=N); SourceCatalog
                   centroids (no deblending: photutils deblends in a separate, optional step)
  sextractor       source-extractor with its default configuration (-dd) but DETECT_THRESH 5
                   (its default 1.5 is for optical images and finds 9,500 noise peaks on a 2048
                   field); ASCII_HEAD X_IMAGE, Y_IMAGE (1-based, made 0-based)
  skysift-local-xwin  the local method's catalogue scored on its windowed centroids (x_win)
"""
import argparse
import csv
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
from astropy.io import fits

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(os.path.dirname(ROOT), "shared")
SCORE = os.path.join(SHARED, "tools", "score_catalogue.py")
NOISE = 0.0133
ALL_TOOLS = ["skysift-global", "skysift-local", "skysift-local-xwin", "sep-default", "sep-mesh64-a1",
             "photutils-n1", "photutils-n5", "sextractor"]


def write_xy(path, xy):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["x_centroid", "y_centroid"])
        for x, y in xy:
            w.writerow([f"{x:.4f}", f"{y:.4f}"])


def load(path):
    return np.ascontiguousarray(fits.getdata(path).squeeze(), dtype=np.float32)


def run_skysift(cli, image, out_csv, extra, json_path=None):
    cmd = [cli, "find", image, "--quiet", "--csv", out_csv] + extra
    if json_path:
        cmd += ["--json", json_path]
    subprocess.run(cmd, check=True)
    if json_path:
        with open(json_path) as f:
            return json.load(f)["times_ms"]["cpu"]["total"]
    return None


def sep_default(data):
    import sep
    bkg = sep.Background(data)
    return sep.extract(data - bkg, 5.0, err=bkg.globalrms)


def sep_mesh(data):
    import sep
    bkg = sep.Background(data, mask=~np.isfinite(data), bw=64, bh=64, fw=3, fh=3)
    return sep.extract(data - bkg.back(), 5.0, err=bkg.globalrms, minarea=1)


def photutils_run(data, npixels):
    from astropy.stats import SigmaClip
    from photutils.background import Background2D, MedianBackground
    from photutils.segmentation import SourceCatalog, detect_sources
    bkg = Background2D(data, (64, 64), filter_size=(3, 3), sigma_clip=SigmaClip(sigma=3.0),
                       bkg_estimator=MedianBackground())
    sub = data - bkg.background
    segm = detect_sources(sub, 5.0 * bkg.background_rms, npixels=npixels)
    if segm is None:
        return []
    cat = SourceCatalog(sub, segm)
    return list(zip(cat.xcentroid, cat.ycentroid))


def sextractor(image, workdir):
    d = tempfile.mkdtemp(dir=workdir)
    with open(os.path.join(d, "default.param"), "w") as f:
        f.write("X_IMAGE\nY_IMAGE\n")
    with open(os.path.join(d, "default.conv"), "w") as f:
        f.write("CONV NORM\n# 3x3 all-ground convolution mask with FWHM = 2 pixels.\n"
                "1 2 1\n2 4 2\n1 2 1\n")
    cfg = subprocess.run(["source-extractor", "-dd"], check=True, capture_output=True,
                         text=True).stdout
    with open(os.path.join(d, "default.sex"), "w") as f:
        f.write(cfg)
    cat = os.path.join(d, "out.cat")
    # Only the outputs and the memory stacks differ from the defaults: the stacks
    # decide whether a large field runs at all, not what it finds.
    subprocess.run(["source-extractor", image, "-c", "default.sex", "-CATALOG_NAME", cat,
                    "-CATALOG_TYPE", "ASCII_HEAD", "-PARAMETERS_NAME", "default.param",
                    "-FILTER_NAME", "default.conv", "-CHECKIMAGE_TYPE", "NONE", "-DETECT_THRESH", "5",
                    "-MEMORY_PIXSTACK", "30000000", "-MEMORY_OBJSTACK", "60000",
                    "-MEMORY_BUFSIZE", "4096", "-VERBOSE_TYPE", "QUIET"],
                   check=True, cwd=d)
    xy = np.loadtxt(cat, comments="#", ndmin=2)
    shutil.rmtree(d)
    return [(x - 1.0, y - 1.0) for x, y in xy]  # SExtractor counts pixels from 1


def score(cat_csv, truth):
    out = subprocess.run([sys.executable, SCORE, cat_csv, truth, "--noise", str(NOISE)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def run_tool(tool, image, data, workdir, cli, local_args):
    out = os.path.join(workdir, tool + ".csv")
    if tool == "skysift-global":
        run_skysift(cli, image, out, [])
    elif tool == "skysift-local":
        run_skysift(cli, image, out, ["--method", "local"] + local_args)
    elif tool == "skysift-local-xwin":
        local = os.path.join(workdir, "skysift-local.csv")
        run_skysift(cli, image, local, ["--method", "local"] + local_args)
        with open(local, newline="") as f:
            rows = list(csv.DictReader(f))
        write_xy(out, [(float(r["x_win"]), float(r["y_win"])) for r in rows])
    elif tool in ("sep-default", "sep-mesh64-a1"):
        import sep
        sep.set_extract_pixstack(50_000_000)
        sep.set_sub_object_limit(4096)
        objs = sep_default(data) if tool == "sep-default" else sep_mesh(data)
        write_xy(out, zip(objs["x"], objs["y"]))
    elif tool.startswith("photutils"):
        write_xy(out, photutils_run(data, int(tool[-1])))
    elif tool == "sextractor":
        write_xy(out, sextractor(image, workdir))
    return out


class Pool:
    def __init__(self):
        self.ndet = self.nmatched = 0
        self.found = {5: 0, 10: 0}
        self.n = {5: 0, 10: 0}
        self.seconds = 0.0

    def add(self, s):
        self.ndet += s["ndet"]
        self.nmatched += s["nmatched"]
        for k in (5, 10):
            n = s[f"n_pt_ge{k}sigma"]
            c = s[f"completeness_pt_ge{k}sigma"] or 0.0
            self.n[k] += n
            self.found[k] += round(c * n)

    def row(self):
        rel = self.nmatched / self.ndet if self.ndet else float("nan")
        c5 = self.found[5] / self.n[5] if self.n[5] else float("nan")
        c10 = self.found[10] / self.n[10] if self.n[10] else float("nan")
        return rel, c5, c10


def print_table(title, pools):
    print(f"\n{title}")
    print(f"  {'tool':18s} {'ndet':>7s} {'matched':>8s} {'reliab':>7s} {'>5sig':>7s} "
          f"{'>10sig':>7s} {'n>5':>5s} {'n>10':>5s} {'tool s':>8s}")
    for tool, p in pools.items():
        rel, c5, c10 = p.row()
        print(f"  {tool:18s} {p.ndet:7d} {p.nmatched:8d} {rel:7.4f} {c5:7.4f} {c10:7.4f} "
              f"{p.n[5]:5d} {p.n[10]:5d} {p.seconds:8.1f}")
    sys.stdout.flush()


def timing(cli, image, data, workdir, rounds, local_args):
    import sep
    times = {"global": [], "local": [], "local-1thread": [], "sep-mesh64": []}
    j = os.path.join(workdir, "t.json")
    c = os.path.join(workdir, "t.csv")
    for _ in range(rounds):
        times["global"].append(run_skysift(cli, image, c, [], j))
        times["local"].append(run_skysift(cli, image, c, ["--method", "local"] + local_args, j))
        times["local-1thread"].append(
            run_skysift(cli, image, c, ["--method", "local", "--threads", "1"] + local_args, j))
        t0 = time.perf_counter()
        sep_mesh(data)
        times["sep-mesh64"].append((time.perf_counter() - t0) * 1e3)
    med = benchlib.medians(times)
    print(f"  speed, medians of {rounds} interleaved rounds (ms, load excluded): "
          + ", ".join(f"{k} {v:.1f}" for k, v in med.items()))
    print(f"  local / global {med['local'] / med['global']:.2f}x; "
          f"SEP / local {med['sep-mesh64'] / med['local']:.2f}x "
          f"(one thread: {med['sep-mesh64'] / med['local-1thread']:.2f}x)")
    return med


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="2048,4096")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--first-seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tools", default=",".join(ALL_TOOLS))
    ap.add_argument("--local-args", default="", help="extra options for the local method")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--cli", default=os.path.join(ROOT, "build", "src", "cli", "skysift-cli"))
    a = ap.parse_args()
    tools = a.tools.split(",")
    local_args = a.local_args.split()
    work = a.workdir or tempfile.mkdtemp(prefix="skysift-bench-")
    os.makedirs(work, exist_ok=True)
    print(f"bench-quality: {' '.join(sys.argv)}")
    print(f"machine: {platform.node()}, {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")

    gc = os.path.join(SHARED, "data", "gc_like_2048.fits")
    if os.path.exists(gc):
        pools = {t: Pool() for t in tools}
        data = load(gc)
        for t in tools:
            t0 = time.perf_counter()
            pools[t].add(score(run_tool(t, gc, data, work, a.cli, local_args),
                               os.path.join(SHARED, "data", "gc_like_2048_truth.csv")))
            pools[t].seconds += time.perf_counter() - t0
        print_table("make_gc_like.py field (../shared/data/gc_like_2048.fits)", pools)

    for size in [int(s) for s in a.sizes.split(",")]:
        pools = {t: Pool() for t in tools}
        for seed in range(a.first_seed, a.first_seed + a.seeds):
            image = os.path.join(work, f"synth_{size}_{seed}.fits")
            truth = os.path.join(work, f"synth_{size}_{seed}.csv")
            subprocess.run([a.cli, "synth", image, "--size", str(size), "--seed", str(seed),
                            "--truth", truth], check=True, stdout=subprocess.DEVNULL)
            with open(image, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            print(f"  field {size} seed {seed}: sha256 {digest}")
            data = load(image)
            for t in tools:
                t0 = time.perf_counter()
                pools[t].add(score(run_tool(t, image, data, work, a.cli, local_args), truth))
                pools[t].seconds += time.perf_counter() - t0
            if seed == a.first_seed and a.rounds > 0:
                timing(a.cli, image, data, work, a.rounds, local_args)
            del data
            os.remove(image)
            os.remove(truth)
        print_table(f"size {size}, seeds {a.first_seed}..{a.first_seed + a.seeds - 1} pooled",
                    pools)
    if a.workdir is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
