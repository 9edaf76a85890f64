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


# The device's packed catalogue (SkyApiDeviceFind.packed_catalogue): the
# pixel columns one after another, each nsources long, in PIXEL_COLUMNS'
# order: x, y, sum (float64), npix (int64), peak (float32), then six int32.
_PACKED = [(name, np.dtype(dtype)) for name, _, dtype in PIXEL_COLUMNS]
PACKED_BYTES = sum(dtype.itemsize for _, dtype in _PACKED)
assert [d.str[1:] for _, d in _PACKED] == ["f8"] * 3 + ["i8", "f4"] + ["i4"] * 6, \
    "packed_columns' layout"
_frombuffer = np.frombuffer
_f8, _i8, _f4, _i4 = np.float64, np.int64, np.float32, np.int32
# A view over the host's packed block, made again only when the block
# moves or grows: a call then slices it instead of wrapping an address.
_host_view = [0, np.empty(0, np.uint8)]


def packed_columns(address, n):
    """The catalogue's columns from the device's packed block at address:
    one copy, then every column a view of it."""
    if n == 0:
        return {"source_id": np.arange(1, 1, dtype=np.int64),
                **{name: np.empty(0, dtype) for name, dtype in _PACKED}}
    nbytes = n * PACKED_BYTES
    view = _host_view[1]
    if _host_view[0] != address or view.size < nbytes:
        view = _frombuffer((ctypes.c_char * nbytes).from_address(address), np.uint8)
        _host_view[:] = address, view
    block = view[:nbytes].copy()
    x, y, flux = _frombuffer(block, _f8, 3 * n).reshape(3, n)
    peak_x, peak_y, xmin, xmax, ymin, ymax = _frombuffer(block, _i4, 6 * n, 36 * n).reshape(6, n)
    return {"source_id": np.arange(1, n + 1, dtype=_i8), "x_centroid": x, "y_centroid": y,
            "sum_flux": flux, "npix": _frombuffer(block, _i8, n, 24 * n),
            "peak_flux": _frombuffer(block, _f4, n, 32 * n), "peak_x": peak_x,
            "peak_y": peak_y, "xmin": xmin, "xmax": xmax, "ymin": ymin, "ymax": ymax}


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
