# SPDX-License-Identifier: GPL-3.0-or-later
"""python3 -m skysift.survey FILES... --out DIR [--scheduler ADDRESS]: the
survey from a shell, with Dask's progress bar and a summary line. Exit
status 0 when every image is done, 1 when any failed, 2 for bad usage."""
import argparse
import sys

from . import FORMATS, run


def _deblend(text):
    if text == "0":
        return 0
    try:
        n, c = text.split(",")
        return int(n), float(c)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not N,C (e.g. 32,0.005) or 0") from None


def parser():
    p = argparse.ArgumentParser(
        prog="python3 -m skysift.survey",
        description="Find the sources of many FITS images on a Dask cluster, one task per "
                    "image, and gather their catalogues into one table with the image as a "
                    "column (OUT/survey.csv, and survey.ecsv with astropy).")
    p.add_argument("files", nargs="+", metavar="FILE", help="FITS images")
    p.add_argument("--out", required=True, metavar="DIR", help="output folder")
    p.add_argument("--scheduler", metavar="ADDRESS",
                   help="a running Dask scheduler (tcp://host:8786, or the file of "
                        "dask-scheduler --scheduler-file); default: a local cluster")
    p.add_argument("--workers", type=int, metavar="N",
                   help="local CPU worker processes (default: one per core, fewer where "
                        "memory is short; one per GPU where there are GPUs)")
    p.add_argument("--tasks-per-worker", type=int, metavar="N",
                   help="task threads per local worker (default 1, 2 on a GPU)")
    p.add_argument("--gpus", default="auto", metavar="auto|none|N|ID,ID",
                   help="GPUs to pin local workers to, one each (default auto: those "
                        "CUDA_VISIBLE_DEVICES names, else every GPU nvidia-smi lists)")
    p.add_argument("--threads", type=int, metavar="N",
                   help="skysift's threads per task (default: cores / (workers x tasks))")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "gpu"))
    p.add_argument("--format", dest="formats", action="append", choices=FORMATS,
                   help="per-image catalogue besides the CSV (repeatable; default ecsv)")
    p.add_argument("--no-resume", dest="resume", action="store_false",
                   help="run every image, even those an earlier run did")
    p.add_argument("--retry-failed", action="store_true",
                   help="run again the images an earlier run failed on")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bar")
    p.add_argument("--timeout", type=float, default=120,
                   help="seconds to wait for the scheduler or the local cluster")
    g = p.add_argument_group("find's parameters (skysift-cli find's names and defaults)")
    g.add_argument("--method", default="global", choices=("global", "lesson", "local"))
    g.add_argument("--clip-kappa", type=float, default=3.0)
    g.add_argument("--max-iter", type=int, default=0)
    g.add_argument("--threshold", type=float, default=5.0)
    g.add_argument("--relative", action="store_true")
    g.add_argument("--connectivity", type=int, default=4, choices=(4, 8))
    g.add_argument("--hdu", type=int, default=0)
    g.add_argument("--plane", type=int, default=0)
    g.add_argument("--seed-sigma", type=float, default=4.6)
    g.add_argument("--flood-sigma", type=float, default=2.5)
    g.add_argument("--min-area", type=int, default=1)
    g.add_argument("--deblend", type=_deblend, default=(32, 0.005))
    g.add_argument("--deblend-sigma", type=float, default=5.0)
    g.add_argument("--bkg-box", type=int, default=64)
    g.add_argument("--bkg-filter", type=int, default=3)
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    params = {k: getattr(args, k) for k in (
        "method", "clip_kappa", "max_iter", "threshold", "relative", "connectivity", "hdu",
        "plane", "seed_sigma", "flood_sigma", "min_area", "deblend", "deblend_sigma",
        "bkg_box", "bkg_filter")}
    try:
        s = run(args.files, args.out, scheduler=args.scheduler, workers=args.workers,
                tasks_per_worker=args.tasks_per_worker, gpus=args.gpus, threads=args.threads,
                backend=args.backend, formats=args.formats or ("ecsv",), resume=args.resume,
                retry_failed=args.retry_failed, progress=args.progress, timeout=args.timeout,
                table=False, **params)
    except (ValueError, TypeError, OSError, RuntimeError) as e:
        print(f"skysift.survey: {e}", file=sys.stderr)
        return 2
    if s.cluster:
        print(s.cluster)
    for address, w in sorted(s.workers.items()):
        gpu = w.get("cuda_visible_devices")
        print(f"worker {address} on {w['host']}: {w['tasks']} task(s) x {w['threads']} "
              f"thread(s)" + (f", CUDA_VISIBLE_DEVICES={gpu}" if gpu else ""))
    devices = sorted({i.get("device", "") for i in s.images if i.get("device")})
    for d in devices:
        print(f"device {d}")
    sys.stdout.flush()
    for i in s.images:
        if i["status"] in ("failed", "skipped-failed"):
            when = "" if i["status"] == "failed" else " (an earlier run; --retry-failed)"
            print(f"failed {i['image']}: {i['error']}{when}", file=sys.stderr)
        elif i.get("gpu_fault"):
            print(f"warning {i['image']}: the GPU failed, the CPU ran it: {i['gpu_fault']}",
                  file=sys.stderr)
    sys.stderr.flush()
    print(f"table {s.paths['csv']}" + (f", {s.paths['ecsv']}" if "ecsv" in s.paths else ""))
    print(s.summary)
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
