#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Two builds of skysift's GPU backend against each other, on one GPU in one run.

A change that should not change the GPU's speed (a refactor, a new build
flag) is checked by timing the build before it (A) and the build after it (B)
on the same images, in interleaved rounds so that clock and thermal drift fall
on both alike. Each round runs `skysift-cli find IMAGE --backend gpu --repeat
R --json` once with A and once with B (the order alternating from round to
round); each run reports each step's best of its R repeats (CUDA events).
The figure per build is the median over the rounds of those bests, and the
ratio is B / A of the medians: the same statistic on both sides.

Both builds must find the same result as docs/contract.md defines it between
runs: the same number of sources and clipping passes, the clipped median and
sigma within 1e-6 relative (the device sums in double with atomics, so the
last bits may move from run to run), on every image and in every round.

usage: gpu-ab.py --a PACK_A/bin/skysift-cli --b PACK_B/bin/skysift-cli --out OUT
                 [--images IMG,...] [--sizes 8192,16384] [--rounds 7] [--repeat 20]
Writes OUT/gpu-ab.json and OUT/gpu-ab.md; prints the table.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

KEYS = ["upload", "clip", "segment", "label", "measure", "download", "kernels", "total"]


def find(cli, image, repeat, json_path):
    p = subprocess.run([cli, "find", image, "--backend", "gpu", "--repeat", str(repeat),
                        "--quiet", "--json", json_path], capture_output=True, text=True,
                       timeout=900)
    if p.returncode != 0:
        raise SystemExit(f"{cli} find {image}: exit {p.returncode}: {p.stderr.strip()}")
    with open(json_path) as f:
        j = json.load(f)
    if j.get("backend") != "gpu":
        raise SystemExit(f"{cli} find {image}: ran on {j.get('backend')}, not the GPU: "
                         f"{p.stderr.strip()}")
    return j


def same_result(ja, jb):
    ca, cb = ja["clipped"], jb["clipped"]
    close = all(abs(ca[k] - cb[k]) <= 1e-6 * max(abs(ca[k]), abs(cb[k])) for k in ("median", "std"))
    return (ja["nsources"] == jb["nsources"] and ca["iterations"] == cb["iterations"]
            and ca["n"] == cb["n"] and close)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", required=True, help="skysift-cli of the build before")
    ap.add_argument("--b", required=True, help="skysift-cli of the build after")
    ap.add_argument("--out", required=True)
    ap.add_argument("--images", default="")
    ap.add_argument("--sizes", default="8192,16384", help="synth fields made with build A")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repeat", type=int, default=20)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    images = [i for i in a.images.split(",") if i]
    for s in filter(None, a.sizes.split(",")):
        path = os.path.join(os.environ.get("SKYSIFT_SYNTH_DIR", "/tmp"), f"synth_{s}.fits")
        if not os.path.exists(path):
            subprocess.run([a.a, "synth", path, "--size", s], check=True, capture_output=True)
        images.append(path)

    results, lines = [], []
    for image in images:
        name = os.path.basename(image)
        runs = {"a": [], "b": []}
        for r in range(a.rounds):
            order = ("a", "b") if r % 2 == 0 else ("b", "a")
            for which in order:
                j = find(getattr(a, which), image, a.repeat,
                         os.path.join(a.out, f"{name}-{which}.json"))
                runs[which].append(j)
        same = all(same_result(ja, jb) for ja in runs["a"] for jb in runs["b"])
        med = {w: {k: statistics.median(j["times_ms"]["gpu"][k] for j in runs[w]) for k in KEYS}
               for w in runs}
        res = {"image": name, "nsources": runs["a"][0]["nsources"], "same_result": same,
               "median_of_best_ms": med,
               "ratio_b_over_a": {k: med["b"][k] / med["a"][k] if med["a"][k] > 0 else None
                                  for k in KEYS}}
        results.append(res)
        lines += [f"### {name}: {res['nsources']} sources, A and B "
                  f"{'agree' if same else 'DIFFER'}", "",
                  "| ms (median of per-round bests) | A | B | B / A |", "| --- | ---: | ---: | ---: |"]
        for k in KEYS:
            rb = res["ratio_b_over_a"][k]
            lines.append(f"| {k} | {med['a'][k]:.4f} | {med['b'][k]:.4f} | "
                         f"{'-' if rb is None else f'{rb:.3f}'} |")
        lines.append("")
        print("\n".join(lines[-(len(KEYS) + 4):]), flush=True)

    head = [f"## GPU A/B: {a.rounds} interleaved rounds of `find --backend gpu --repeat {a.repeat}`",
            "", f"A: {a.a}", f"B: {a.b}", ""]
    with open(os.path.join(a.out, "gpu-ab.md"), "w") as f:
        f.write("\n".join(head + lines) + "\n")
    with open(os.path.join(a.out, "gpu-ab.json"), "w") as f:
        json.dump({"a": a.a, "b": a.b, "rounds": a.rounds, "repeat": a.repeat,
                   "results": results}, f, indent=1)
    return 0 if all(r["same_result"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
