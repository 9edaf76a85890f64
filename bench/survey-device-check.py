#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The first step of bench/survey-device.sh on a GPU machine: the versions
of what skysift.survey runs on there (its own Python and NumPy, the
carried Debian dask and distributed, the machine's msgpack, psutil...),
skysift's device, and whether dask.distributed starts a local cluster of
worker processes and runs a task on it. Exit status 1 where it cannot."""
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
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        pids = sorted(client.run(os.getpid).values())
        total = client.submit(sum, [1, 2, 3]).result()
        print(f"LocalCluster: worker processes {pids}, a task's result {total}")
        return 0 if total == 6 and len(pids) == 2 else 1


if __name__ == "__main__":
    sys.exit(main())
