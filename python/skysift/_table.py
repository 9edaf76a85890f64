# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's catalogue as NumPy columns, and as an astropy Table with the
units and metadata of the core's ECSV writer (the file the CLI writes),
so that the two never disagree."""
import ctypes
import os
import tempfile

import numpy as np

from ._lib import Result, check, lib

# The CSV's pixel columns, in its order, and the result fields they come from.
PIXEL_COLUMNS = [("x_centroid", "x", np.float64), ("y_centroid", "y", np.float64),
                 ("sum_flux", "sum", np.float64), ("npix", "npix", np.int64),
                 ("peak_flux", "peak", np.float32), ("peak_x", "peak_x", np.int32),
                 ("peak_y", "peak_y", np.int32), ("xmin", "xmin", np.int32),
                 ("xmax", "xmax", np.int32), ("ymin", "ymin", np.int32),
                 ("ymax", "ymax", np.int32)]


# The local method's columns (sky-core.h's SkyCatalogue), in the CSV's order.
LOCAL_COLUMNS = [("background", "background", np.float32), ("local_rms", "rms", np.float32),
                 ("sum_flux_err", "sum_err", np.float64),
                 ("peak_flux_err", "peak_err", np.float64),
                 ("x_win", "x_win", np.float64), ("y_win", "y_win", np.float64),
                 ("flags", "flags", np.uint32)]


def result_of(run):
    res = Result()
    check(lib.sky_api_run_result(run, ctypes.byref(res)))
    return res


def columns(res, local=False):
    """The catalogue's columns as NumPy arrays (copies: the run is freed);
    with the local method's where local."""
    n = res.nsources
    cols = {"source_id": np.arange(1, n + 1, dtype=np.int64)}
    for name, field, dtype in PIXEL_COLUMNS + (LOCAL_COLUMNS if local else []):
        address = getattr(res, field)
        col = np.empty(n if address else 0, dtype=dtype)
        if n and address:
            ctypes.memmove(col.ctypes.data, address, col.nbytes)
        cols[name] = col
    return cols


# The device's packed catalogue (sky_api_gpu_catalogue): the pixel columns
# one after another, each nsources long, in PIXEL_COLUMNS' order.
_PACKED = [(name, np.dtype(dtype)) for name, _, dtype in PIXEL_COLUMNS]
PACKED_BYTES = sum(dtype.itemsize for _, dtype in _PACKED)


def packed_columns(address, n):
    """The catalogue's columns from the device's packed block at address:
    one copy, then every column a view of it."""
    nbytes = n * PACKED_BYTES
    block = np.frombuffer((ctypes.c_char * nbytes).from_address(address), np.uint8).copy() \
        if n else np.empty(0, np.uint8)
    cols = {"source_id": np.arange(1, n + 1, dtype=np.int64)}
    offset = 0
    for name, dtype in _PACKED:
        cols[name] = np.frombuffer(block, dtype, n, offset)
        offset += n * dtype.itemsize
    return cols


def write(run, fmt, path):
    check(lib.sky_api_run_write(run, fmt.encode(), os.fsencode(path)))


def astropy_table(run):
    """The run's catalogue as the ECSV writer writes it, read back by
    astropy: the CSV's columns (sky columns where the header has a WCS),
    their units and descriptions, and the run's provenance in meta."""
    from astropy.table import Table
    with tempfile.TemporaryDirectory(prefix="skysift-") as tmp:
        path = os.path.join(tmp, "catalogue.ecsv")
        write(run, "ecsv", path)
        return Table.read(path, format="ascii.ecsv")
