# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift.survey: find the sources of many images on a Dask cluster.

One Dask task per image runs skysift's find on it and writes its
catalogues (CSV always, and ECSV, VOTable, DS9 regions or Parquet) with a
record of how they were made; the catalogues are then gathered into one
table with the image as a column. The distribution, retries and progress
are Dask's (``distributed``): a local cluster of worker processes by
default, one pinned to each GPU where there are GPUs, or any running
scheduler (dask-scheduler and dask-worker on several hosts, Slurm...).

    >>> from skysift import survey
    >>> s = survey.run(["a.fits", "b.fits"], "out")
    >>> print(s.summary)
    >>> s.table            # every source, with its image

From a shell: ``python3 -m skysift.survey FILES... --out DIR
[--scheduler ADDRESS]``. README.md, "Surveys", shows a local run and one
across hosts.
"""
import ctypes
import importlib
import inspect
import json
import os
import time
import uuid

import skysift
from skysift import _lib

from . import _cluster, _records, _task

__all__ = ["run", "Survey", "RESULT_PARAMETERS"]

# find()'s keywords that shape a catalogue: recorded with each image, and
# an image is done only for the same values. (threads and backend do not
# change a result: docs/contract.md.)
RESULT_PARAMETERS = ("method", "clip_kappa", "max_iter", "threshold", "relative",
                     "connectivity", "hdu", "plane", "seed_sigma", "flood_sigma", "min_area",
                     "deblend", "deblend_sigma", "bkg_box", "bkg_filter")

FORMATS = ("ecsv", "votable", "regions", "parquet")


def _result_params(params):
    """find()'s defaults overlaid with params, in the form the records keep."""
    sig = inspect.signature(skysift.find)
    unknown = sorted(set(params) - set(RESULT_PARAMETERS))
    if unknown:
        raise TypeError(f"survey.run: unknown parameter(s) {', '.join(unknown)}; find's are "
                        f"{', '.join(RESULT_PARAMETERS)}")
    out = {}
    for name in RESULT_PARAMETERS:
        out[name] = params.get(name, sig.parameters[name].default)
    out["method"] = skysift._method(out["method"])
    deblend = out["deblend"]
    if deblend in (None, 0, False):
        deblend = (0, 0.005)
    try:
        nthresh, mincont = deblend
    except (TypeError, ValueError):
        raise ValueError(f"deblend: {deblend!r} is not (levels, contrast) or 0") from None
    out["deblend"] = [int(nthresh), float(mincont)]
    for name in ("clip_kappa", "threshold", "seed_sigma", "flood_sigma", "deblend_sigma"):
        out[name] = float(out[name])
    for name in ("max_iter", "connectivity", "hdu", "plane", "min_area", "bkg_box",
                 "bkg_filter"):
        out[name] = int(out[name])
    out["relative"] = bool(out["relative"])
    # The core checks the values (its message) before any work is sent out.
    p = skysift._params(**{k: v for k, v in out.items() if k not in ("method", "hdu", "plane")})
    _lib.check(_lib.lib.sky_api_params_check(ctypes.byref(p)))
    return out


class Survey:
    """What a survey run did.

    Attributes
    ----------
    images : list of dict
        One per input file, in order: ``image``, ``name`` (of its files in
        the output folder), ``status`` ("done", "failed", "skipped" when an
        earlier run's record matched, "skipped-failed" when an earlier run
        failed on the same file), ``error``, ``nsources``, where it ran
        (``worker``, ``host``, ``cuda_visible_devices``, ``backend``,
        ``device``, ``threads``) and skysift's wall times (``load_s``,
        ``find_s``, ``write_s``) for the images run now.
    table : astropy.table.Table or None
        Every source of every image done, with an ``image`` column first
        (None with ``table=False`` or without astropy: ``paths["csv"]`` and
        ``paths["ecsv"]`` have it).
    paths : dict
        The gathered table's files by format, and the summary's JSON.
    figures : dict
        images, done, failed, skipped, sources, wall_s (the batch, from
        the first task sent to the last result), images_per_s, skysift_s
        (the workers' load, find and write wall times summed), slots (task
        threads of all workers), outside_fraction (1 - skysift_s / (slots
        x wall_s): the share of the task slots' time spent outside skysift;
        a task waiting for its worker's device counts as inside), and
        outside_fraction_workers (1 - skysift_s / (workers x wall_s), the
        same where each worker runs one task at a time).
    summary : str
        One line with those figures.
    workers : dict
        By worker address: its host, cores, CUDA_VISIBLE_DEVICES, task
        threads and skysift threads per task (empty when nothing ran).
    cluster : str
        The cluster used ("" when nothing ran).
    """

    def __init__(self, images, table, paths, figures, summary, workers, cluster):
        self.images = images
        self.cluster = cluster
        self.table = table
        self.paths = paths
        self.figures = figures
        self.summary = summary
        self.workers = workers

    @property
    def failed(self):
        return [i for i in self.images if i["status"] in ("failed", "skipped-failed")]

    def __repr__(self):
        return f"<skysift.survey.Survey: {self.summary}>"


def _plan(files, names, out, want, resume, retry_failed):
    """Each image's entry, with the ones an earlier run already handled
    marked skipped."""
    images = []
    for path, name in zip(files, names):
        entry = {"image": path, "name": name, "status": "todo", "error": "", "nsources": 0}
        if resume:
            record = _records.read_record(out, name)
            status = _records.matches(record, path, out, name, want)
            if status == "done":
                entry.update(status="skipped", nsources=record.get("nsources", 0),
                             backend=record.get("backend", ""))
            elif status == "failed" and not retry_failed:
                entry.update(status="skipped-failed", error=record.get("error", ""))
        images.append(entry)
    return images


def _gather(images, out, formats, meta, table):
    """The gathered table's files, and the astropy Table where asked. The
    CSV always (the images' CSV rows as they are); the ECSV where the
    images have theirs (their rows and column descriptions, by text; with
    astropy from the CSV where their columns differ); Parquet where pyarrow
    is (read from the CSV by pyarrow); a VOTable with astropy where asked."""
    done = [i for i in images if i["status"] in ("done", "skipped")]
    paths = {"csv": os.path.join(out, "survey.csv")}
    _records.gather_csv([(i["image"], _records.output_path(out, i["name"], "csv"))
                         for i in done], paths["csv"])
    if "ecsv" in formats and done:
        paths["ecsv"] = os.path.join(out, "survey.ecsv")
        items = [(i["image"], _records.output_path(out, i["name"], "ecsv")) for i in done]
        if not _records.gather_ecsv(items, paths["ecsv"], meta):
            if not _astropy_table_possible():
                del paths["ecsv"]
            else:
                t = _table_from_csv(paths["csv"], items[0][1], meta)
                t.write(paths["ecsv"], format="ascii.ecsv", overwrite=True)
    if _task.pyarrow_available():
        import pyarrow.csv
        import pyarrow.parquet
        paths["parquet"] = os.path.join(out, "survey.parquet")
        tmp = f"{paths['parquet']}.{os.getpid()}.tmp"
        pyarrow.parquet.write_table(pyarrow.csv.read_csv(paths["csv"]), tmp)
        os.replace(tmp, paths["parquet"])
    result = None
    if (table or "votable" in formats) and _astropy_table_possible():
        if "ecsv" in paths:
            from astropy.table import Table
            result = Table.read(paths["ecsv"], format="ascii.ecsv")
        else:
            first = [_records.output_path(out, i["name"], "ecsv") for i in done]
            first = [p for p in first if os.path.exists(p)]
            result = _table_from_csv(paths["csv"], first[0] if first else None, meta)
        if "votable" in formats:
            paths["votable"] = os.path.join(out, "survey.vot")
            result.write(paths["votable"], format="votable", overwrite=True)
    return (result if table else None), paths


def _astropy_table_possible():
    try:
        importlib.import_module("astropy.table")
    except ImportError:
        return False
    return True


def _table_from_csv(csv_path, ecsv_path, meta):
    """The gathered CSV as an astropy Table, with the units and
    descriptions of one image's ECSV where given."""
    from astropy.table import Table
    t = Table.read(csv_path, format="ascii.csv")
    if ecsv_path is not None:
        first = Table.read(ecsv_path, format="ascii.ecsv")
        for name in first.colnames:
            if name in t.colnames:
                t[name].unit = first[name].unit
                t[name].description = first[name].description
    t["image"].description = _records.IMAGE_DESCRIPTION
    t.meta.update(meta)
    return t


def _figures(images, results, slots, nworkers, wall):
    done = sum(i["status"] == "done" for i in images)
    failed = sum(i["status"] == "failed" for i in images)
    skipped = sum(i["status"] == "skipped" for i in images)
    skipped_failed = sum(i["status"] == "skipped-failed" for i in images)
    skysift_s = sum(r.get("load_s", 0) + r.get("find_s", 0) + r.get("write_s", 0)
                    for r in results)
    ran = len(results)
    figures = {"images": len(images), "done": done, "failed": failed, "skipped": skipped,
               "skipped_failed": skipped_failed,
               "sources": sum(i.get("nsources", 0) for i in images
                              if i["status"] in ("done", "skipped")),
               "ran": ran, "wall_s": wall, "images_per_s": ran / wall if wall > 0 else 0.0,
               "skysift_s": skysift_s, "slots": slots, "workers": nworkers,
               "outside_fraction": 1 - skysift_s / (slots * wall) if slots and wall > 0
               else 0.0,
               "outside_fraction_workers": 1 - skysift_s / (nworkers * wall)
               if nworkers and wall > 0 else 0.0}
    line = (f"survey: {len(images)} images: {done} done, {failed} failed, {skipped} skipped "
            f"(done before)")
    if skipped_failed:
        line += f", {skipped_failed} skipped (failed before on the same file)"
    line += f"; {figures['sources']} sources"
    if ran:
        line += (f"; {ran} run in {wall:.2f} s on {slots} task slot(s), "
                 f"{figures['images_per_s']:.2f} images/s, time outside skysift "
                 f"{100 * figures['outside_fraction']:.1f}%")
    return figures, line


def run(files, out, *, scheduler=None, workers=None, tasks_per_worker=None, gpus="auto",
        threads=None, backend="auto", formats=("ecsv",), resume=True, retry_failed=False,
        progress=False, timeout=120, table=True, **params):
    """Finds the sources of every image in files, one Dask task per image.

    Parameters
    ----------
    files : list of str or os.PathLike
        FITS images. Every worker must see them (and out) at these paths.
    out : str or os.PathLike
        The output folder: per image NAME.csv (the CLI's CSV), the formats
        asked for and NAME.survey.json (its record); then survey.csv (and
        survey.ecsv, survey.parquet, survey.vot) gathering them, and
        survey.json (the figures and every image's outcome).
    scheduler : str, optional
        A running Dask scheduler's address ("tcp://host:8786") or scheduler
        file (dask-scheduler --scheduler-file); None starts a local cluster
        of worker processes, closed at the end.
    workers : int, optional
        Local CPU workers (default: one per core, fewer where the largest
        image's memory would not fit four times in half the free memory).
        With GPUs there is one worker per GPU.
    tasks_per_worker : int, optional
        Task threads of each local worker: 1 on the CPU, 2 per GPU worker
        (one image loads while another is on the device).
    gpus : "auto", "none", int or list
        GPUs for local workers: "auto" those CUDA_VISIBLE_DEVICES lists, or
        else nvidia-smi's; each worker gets CUDA_VISIBLE_DEVICES=ID.
    threads : int, optional
        skysift's threads per task; None: the host's cores / (workers x
        task threads) for each worker.
    backend : {"auto", "cpu", "gpu"}
        "auto" runs on the worker's GPU where it has one, else on the CPU;
        "gpu" says why in each image's ``gpu_fault`` when it cannot.
    formats : sequence of str
        Per-image catalogues besides the CSV: "ecsv", "votable", "regions",
        "parquet" (needs pyarrow on every worker).
    resume : bool
        Skip an image whose record says it was done with the same
        parameters and skysift version, from a file of the same size and
        modification time, with every format asked for present.
    retry_failed : bool
        Run again images an earlier run failed on (by default skipped
        while the file is unchanged).
    progress : bool
        Show Dask's progress bar (on stdout).
    timeout : float
        Seconds to wait for the scheduler or the local cluster.
    table : bool
        Read the gathered table back as an astropy Table (``.table``);
        False leaves it in the files (the command does: reading a large
        table takes seconds).
    **params
        find()'s parameters (method, clip_kappa, threshold, connectivity,
        hdu, plane, the local method's...), the same for every image.

    Returns
    -------
    Survey
    """
    files = [os.fspath(f) for f in files]
    out = os.fspath(out)
    seen = {}
    for f in files:
        key = os.path.realpath(f)
        if key in seen:
            raise ValueError(f"{f}: the same image as {seen[key]}, listed twice")
        seen[key] = f
    formats = tuple(dict.fromkeys(f for f in formats if f != "csv"))
    bad = [f for f in formats if f not in FORMATS]
    if bad:
        raise ValueError(f"formats: {', '.join(bad)} not among csv, {', '.join(FORMATS)}")
    if backend not in ("auto", "cpu", "gpu"):
        raise ValueError(f"backend: {backend!r} is not 'auto', 'cpu' or 'gpu'")
    if threads is not None and int(threads) < 1:
        raise ValueError(f"threads: {threads!r} is not a positive number")
    if scheduler is not None and (workers is not None or tasks_per_worker is not None
                                  or gpus != "auto"):
        raise ValueError("workers, tasks_per_worker and gpus shape a local cluster; a running "
                         "scheduler's workers are those dask-worker started")
    want = {"params": _result_params(params), "version": skysift.__version__,
            "formats": formats}
    os.makedirs(out, exist_ok=True)
    names = _records.output_names(files)
    images = _plan(files, names, out, want, resume, retry_failed)
    todo = [i for i in images if i["status"] == "todo"]
    results, workers_seen, slots, wall, where = [], {}, 0, 0.0, ""
    if todo:
        with _cluster.connect(scheduler, paths=[i["image"] for i in todo], workers=workers,
                              tasks_per_worker=tasks_per_worker, gpus=gpus,
                              timeout=timeout) as (client, where):
            results, workers_seen, slots, wall = _submit(client, todo, out, want, backend,
                                                         threads, progress, timeout)
    meta = {"software": f"skysift {skysift.__version__}", "date": _records.now_utc(),
            "images": len(images),
            "images_done": sum(i["status"] in ("done", "skipped") for i in images),
            **{k: v for k, v in want["params"].items()}}
    table, paths = _gather(images, out, formats, meta, table)
    figures, line = _figures(images, results, slots, len(workers_seen), wall)
    paths["summary"] = os.path.join(out, "survey.json")
    tmp = f"{paths['summary']}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump({"figures": figures, "summary": line, "params": want["params"],
                   "version": want["version"], "formats": list(formats), "cluster": where,
                   "workers": workers_seen, "images": images}, f, indent=1)
        f.write("\n")
    os.replace(tmp, paths["summary"])
    return Survey(images, table, paths, figures, line, workers_seen, where)


def _submit(client, todo, out, want, backend, threads, progress, timeout):
    """Sends one task per image, waits for all of them and folds their
    results (or the exception of a task that died) into the entries."""
    from distributed import progress as dask_progress
    from distributed import wait
    # A scheduler started beside its workers (a Slurm job) may have none yet.
    client.wait_for_workers(1, timeout=timeout)
    per_worker, infos = _cluster.threads_per_task(client)
    slots = sum(client.nthreads().values())
    if "parquet" in want["formats"]:
        missing = [a for a, ok in client.run(_task.pyarrow_available).items() if not ok]
        if missing:
            raise RuntimeError(f"formats: parquet needs pyarrow on every worker; it is "
                               f"missing on {', '.join(missing)}")
    thread_spec = int(threads) if threads is not None else per_worker
    token = uuid.uuid4().hex[:8]
    jobs = [{"path": i["image"], "name": i["name"], "out": out, "formats": want["formats"],
             "params": want["params"], "method": want["params"]["method"],
             "backend": backend, "threads": thread_spec, "version": want["version"]}
            for i in todo]
    keys = [f"skysift-find-{i['name']}-{token}" for i in todo]
    t0 = time.perf_counter()
    futures = client.map(_task.find_one, jobs, key=keys, pure=False)
    if progress:
        dask_progress(futures, notebook=False)
    wait(futures)
    wall = time.perf_counter() - t0
    finished = [f for f in futures if f.status == "finished"]
    by_key = dict(zip((f.key for f in finished), client.gather(finished)))
    results = []
    for entry, future in zip(todo, futures):
        if future.key in by_key:
            results.append(by_key[future.key])
            entry.update(by_key[future.key])
        else:
            e = future.exception()
            entry.update(status="failed", error=f"{type(e).__name__}: {e}")
    workers = {a: dict(info, threads=per_worker.get(a), tasks=client.nthreads().get(a))
               for a, info in infos.items()}
    return results, workers, slots, wall
