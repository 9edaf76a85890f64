# SPDX-License-Identifier: GPL-3.0-or-later
"""What a Dask worker runs: skysift's find on one image, its catalogues
written with the core's writers, and a record of how they were made.

A worker process holds one device context for its life: libskysift makes
it at the worker's first GPU task and keeps it (sky_api_gpu_run_image),
on the device that the worker's CUDA_VISIBLE_DEVICES leaves it. Tasks of
one worker share it behind the library's lock, so a worker with two task
threads loads (and writes) one image while the device runs another."""
import ctypes
import importlib
import os
import socket
import threading
import time

from .. import _arrays, _lib, _table
from . import _records

_device_lock = threading.Lock()
_device = None          # (available, description), probed once per process


def device():
    """(True, the GPU) where this process can run on one, else (False, why)."""
    global _device
    with _device_lock:
        if _device is None:
            import skysift
            _device = skysift.gpu_available()
        return _device


def _worker():
    try:
        from distributed import get_worker
        w = get_worker()
        return w.address, w.state.nthreads if hasattr(w, "state") else w.nthreads
    except (ImportError, ValueError):
        return "", 1


def cpus():
    """The cores this process may run on."""
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


def worker_info():
    """What a worker says of itself (client.run): its host, its cores, and
    its pinning to a GPU."""
    return {"host": socket.gethostname(), "cpus": cpus(), "pid": os.getpid(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES")}


def pyarrow_available():
    try:
        for name in ("pyarrow.csv", "pyarrow.parquet"):
            importlib.import_module(name)
    except ImportError:
        return False
    return True


def _write_parquet(csv_path, path):
    """The image's CSV as Parquet, read and written by pyarrow."""
    import pyarrow.csv
    import pyarrow.parquet
    table = pyarrow.csv.read_csv(csv_path)
    tmp = f"{path}.{os.getpid()}.tmp"
    pyarrow.parquet.write_table(table, tmp)
    os.replace(tmp, path)


def _run(img, params, method, use_gpu):
    """One run of the method on a loaded image: on this worker's device
    where use_gpu, else (or where the device fails) on the CPU. Returns the
    run and why the device failed ("" when it did not)."""
    run = ctypes.c_void_p()
    fault = ""
    if use_gpu:
        try:
            _lib.check(_lib.lib.sky_api_gpu_run_image(img.handle, ctypes.byref(params),
                                                      ctypes.byref(run)))
            return run, fault
        except (_lib.SkysiftUnavailable, MemoryError) as e:
            fault = str(e)
    _lib.check(_lib.lib.sky_api_run(img.handle, ctypes.byref(params), method.encode(), b"cpu",
                                    b"all", None, None, ctypes.byref(run)))
    return run, fault


def find_one(job):
    """Finds the sources of one image and writes its catalogues and record.

    job holds: path, name (of its output files), out (the folder), formats,
    params (find's keywords that shape the result; recorded), method,
    backend ("auto", "cpu" or "gpu"), threads (per task: a number, or a
    dict by worker address with "default"), version.

    Returns what the summary needs: status ("done" or "failed"), error,
    nsources, where it ran, and the wall times of skysift's part (load,
    find, write) and of the whole task. A failure of skysift on the image
    (unreadable, not FITS, no image, every pixel blank...) is a result, not
    an exception, so one image never stops the batch."""
    import skysift
    t_task = time.perf_counter()
    address, nthreads = _worker()
    threads = job["threads"]
    if isinstance(threads, dict):
        threads = threads.get(address) or threads.get("default") or \
            max(1, len(cpus()) // max(1, nthreads))
    info = {"image": job["path"], "name": job["name"], "worker": address,
            "host": socket.gethostname(), "pid": os.getpid(),
            "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
            "threads": int(threads), "nsources": 0, "backend": "", "gpu_fault": "",
            "device": "", "error": "", "load_s": 0.0, "find_s": 0.0, "write_s": 0.0}
    record = {"record_version": _records.RECORD_VERSION, "version": job["version"],
              "image": os.path.abspath(job["path"]), "params": job["params"],
              "formats": list(job["formats"])}
    try:
        identity = _records.input_identity(job["path"])
        record.update(identity)
        use_gpu = job["method"] == "lesson" and job["backend"] != "cpu"
        if use_gpu:
            ok, what = device()
            info["device"] = what if ok else ""
            if not ok:
                if job["backend"] == "gpu":
                    info["gpu_fault"] = what
                use_gpu = False
        p = skysift._params(threads=threads, **{k: v for k, v in job["params"].items()
                                                if k not in ("method", "hdu", "plane")})
        t0 = time.perf_counter()
        try:
            img = _arrays.load_path(job["path"], job["params"]["hdu"], job["params"]["plane"])
        finally:
            # A file skysift refuses took skysift's time too.
            info["load_s"] = time.perf_counter() - t0
        run = ctypes.c_void_p()
        try:
            t1 = time.perf_counter()
            run, fault = _run(img, p, job["method"], use_gpu)
            t2 = time.perf_counter()
            res = _table.result_of(run)
            steps_ms = {res.step_name[k].decode(): res.step_ms[k] for k in range(res.nsteps)}
            outputs = {}
            for fmt in ["csv", *job["formats"]]:
                if fmt == "parquet":
                    continue
                outputs[fmt] = _records.output_path(job["out"], job["name"], fmt)
                _table.write(run, fmt, outputs[fmt])
            t3 = time.perf_counter()
            info.update(nsources=int(res.nsources), backend=res.backend.decode(),
                        find_s=t2 - t1, write_s=t3 - t2)
            info["gpu_fault"] = info["gpu_fault"] or fault
        finally:
            if run:
                _lib.lib.sky_api_run_free(run)
            img.close()
        if "parquet" in job["formats"]:
            t4 = time.perf_counter()
            outputs["parquet"] = _records.output_path(job["out"], job["name"], "parquet")
            _write_parquet(outputs["csv"], outputs["parquet"])
            info["write_s"] += time.perf_counter() - t4
        if _records.input_identity(job["path"]) != identity:
            raise skysift.SkysiftIOError("io", f"{job['path']}: the file changed while it "
                                         "was read")
        info["status"] = "done"
        record.update(status="done", outputs={k: os.path.basename(v)
                                              for k, v in outputs.items()},
                      nsources=info["nsources"], backend=info["backend"],
                      gpu_fault=info["gpu_fault"], device=info["device"], steps_ms=steps_ms)
    except (skysift.SkysiftError, OSError, ValueError, MemoryError) as e:
        info.update(status="failed", error=str(e) or type(e).__name__)
        record.update(status="failed", error=info["error"])
    record.update({k: info[k] for k in ("worker", "host", "threads", "cuda_visible_devices",
                                        "load_s", "find_s", "write_s")},
                  finished=_records.now_utc())
    if "input_size" in record:
        # No record for an image that could not even be looked at: it is
        # tried again next time.
        _records.write_record(job["out"], job["name"], record)
    info["task_s"] = time.perf_counter() - t_task
    return info
