#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The first step of bench/survey-device.sh on a GPU machine: the versions
of what skysift.survey runs on there (its own Python and NumPy, the
carried Debian dask and distributed, the machine's msgpack, psutil...),
skysift's device, and whether dask.distributed starts a local cluster of
worker processes and runs a task on it. Exit status 0 where it does, 3
where it does only with distributed's NVML diagnostics off, 1 where it
cannot."""
import importlib
import os
import platform
import sys


def main():
    print("python", platform.python_version(), sys.executable)
    for name in ("numpy", "dask", "distributed", "tornado", "msgpack", "cloudpickle", "psutil",
                 "toolz", "yaml", "click", "zict", "tblib", "partd", "pyarrow", "astropy"):
        try:
            m = importlib.import_module(name)
            print(f"{name:12s} {str(getattr(m, '__version__', '?')):16s} {m.__file__}")
        except Exception as e:  # noqa: BLE001 - every reason is worth printing
            print(f"{name:12s} not importable: {type(e).__name__}: {e}")
    import skysift
    print("skysift", skysift.__version__, skysift.gpu_available())
    try:
        return 0 if local_cluster() else 1
    except Exception as e:  # noqa: BLE001 - said, then tried once more
        print(f"LocalCluster failed: {type(e).__name__}: {e}")
    # distributed 2022.12 reads GPUs through pynvml where it is installed;
    # a newer pynvml than it knows may be what fails.
    print("again with distributed's NVML diagnostics off")
    os.environ["DASK_DISTRIBUTED__DIAGNOSTICS__NVML"] = "False"
    import dask
    dask.config.refresh()
    return 3 if local_cluster() else 1


def local_cluster():
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        pids = sorted(client.run(os.getpid).values())
        total = client.submit(sum, [1, 2, 3]).result()
        print(f"LocalCluster: worker processes {pids}, a task's result {total}")
        return total == 6 and len(pids) == 2


if __name__ == "__main__":
    sys.exit(main())
