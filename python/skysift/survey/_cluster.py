# SPDX-License-Identifier: GPL-3.0-or-later
"""The Dask cluster a survey runs on: one that is already running (a
scheduler's address), or a local one of worker processes, one pinned to
each GPU where there are GPUs; and each task's share of its host's cores."""
import contextlib
import os
import shutil
import subprocess

from . import _task


def gpu_ids(spec="auto"):
    """The GPUs to pin local workers to, as CUDA_VISIBLE_DEVICES values.

    spec: "auto" (those CUDA_VISIBLE_DEVICES names where it is set, else
    every GPU nvidia-smi lists), "none", a number of GPUs (the first N), or
    a comma-separated list of indices or UUIDs."""
    if spec is None or spec == "none":
        return []
    if isinstance(spec, int):
        return [str(i) for i in range(spec)]
    if isinstance(spec, (list, tuple)):
        return [str(g) for g in spec]
    spec = str(spec).strip()
    if spec.isdigit():
        return [str(i) for i in range(int(spec))]
    if spec != "auto":
        return [g.strip() for g in spec.split(",") if g.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return [g.strip() for g in visible.split(",") if g.strip() and g.strip() != "-1"]
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return []
    try:
        out = subprocess.run([smi, "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if out.returncode != 0:
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip().isdigit()]


def _available_memory():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def default_workers(paths, tasks_per_worker):
    """Local CPU workers: one task per core, fewer where the images' peak
    memory would not fit in half the memory available. A run holds about
    13 bytes a pixel (docs/design.md, Memory) and a float32 FITS file 4, so
    a task is reckoned at 4 times its largest file."""
    ncpu = len(_task.cpus())
    workers = max(1, ncpu // max(1, tasks_per_worker))
    largest = 0
    for p in paths:
        with contextlib.suppress(OSError):
            largest = max(largest, os.path.getsize(p))
    memory = _available_memory()
    if largest and memory:
        workers = max(1, min(workers, int(memory // 2 // (4 * largest * tasks_per_worker))))
    return min(workers, max(1, len(paths)))


def _local_cluster(workers, tasks_per_worker, gpus):
    """A cluster of worker processes on this machine; with GPUs, one
    worker per GPU, each seeing only its own (CUDA_VISIBLE_DEVICES), so
    that its one device context is on that GPU."""
    import logging

    from distributed import Nanny, Scheduler, SpecCluster
    # The scheduler's HTTP server (metrics, and the dashboard where bokeh
    # is installed) on a free port, so that clusters side by side agree.
    scheduler = {"cls": Scheduler, "options": {"host": "127.0.0.1", "port": 0,
                                               "dashboard_address": ":0"}}
    quiet = {"host": "127.0.0.1", "silence_logs": logging.ERROR, "dashboard": False}
    spec = {}
    if gpus:
        for gpu in gpus:
            spec[f"gpu-{gpu}"] = {"cls": Nanny, "options": {
                "nthreads": tasks_per_worker, "env": {"CUDA_VISIBLE_DEVICES": gpu}, **quiet}}
    else:
        # CPU workers see no GPU: on a GPU machine run with --gpus none, a
        # device context in each would only contend for the device.
        for k in range(workers):
            spec[f"cpu-{k}"] = {"cls": Nanny, "options": {
                "nthreads": tasks_per_worker, "env": {"CUDA_VISIBLE_DEVICES": ""}, **quiet}}
    return SpecCluster(workers=spec, scheduler=scheduler, silence_logs=logging.ERROR,
                       name="skysift-survey")


@contextlib.contextmanager
def connect(scheduler=None, *, paths=(), workers=None, tasks_per_worker=None, gpus="auto",
            timeout=120):
    """A Client on the scheduler at that address (or named in that
    scheduler file), or on a new local cluster that is closed on exit.
    Yields (client, description)."""
    from distributed import Client
    if scheduler is not None:
        # A scheduler's address, or the file dask-scheduler --scheduler-file
        # writes (as a Slurm job shares it).
        where = {"scheduler_file": scheduler} if os.path.isfile(scheduler) else \
            {"address": scheduler}
        with Client(**where, timeout=timeout) as client:
            yield client, f"scheduler {client.scheduler.address}"
        return
    ids = gpu_ids(gpus)
    if tasks_per_worker is None:
        # Two tasks per GPU worker: one loads and writes while the other
        # holds the device.
        tasks_per_worker = 2 if ids else 1
    if not ids and workers is None:
        workers = default_workers(paths, tasks_per_worker)
    with _local_cluster(workers, tasks_per_worker, ids) as cluster, \
            Client(cluster, timeout=timeout) as client:
        if ids:
            what = f"local cluster: {len(ids)} worker(s), one per GPU ({', '.join(ids)})"
        else:
            what = f"local cluster: {workers} worker process(es)"
        yield client, what + f", {tasks_per_worker} task(s) each"


def threads_per_task(client):
    """Each worker's task threads for skysift: the cores its host gives it,
    shared with the other workers that see the same cores (workers started
    side by side on one host), divided by all their task slots: cores /
    (workers x tasks per worker). A worker pinned to its own cores (srun
    with --cpus-per-task, a cpuset) shares them with nobody. At least 1.
    Returns ({worker address: threads}, {worker address: info})."""
    infos = client.run(_task.worker_info)
    nthreads = client.nthreads()
    groups = {}
    for address, info in infos.items():
        key = (info["host"], tuple(info["cpus"]))
        groups[key] = groups.get(key, 0) + nthreads.get(address, 1)
    threads = {}
    for address, info in infos.items():
        key = (info["host"], tuple(info["cpus"]))
        threads[address] = max(1, len(info["cpus"]) // groups[key])
    return threads, infos
