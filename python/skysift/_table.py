# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's catalogue as NumPy columns, and as an astropy Table with the
units and metadata of the core's ECSV writer (the file the CLI writes),
so that the two never disagree."""
import ctypes
import os
import sys
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


class _ColumnSet:
    """A block holding source_id (int64) and then the packed catalogue, and
    its twelve columns, views of it made once. A later catalogue of the same
    length is copied into a set that nothing outside the pool holds any
    more (no column, no view of the block: reference counts say so), which
    saves making twelve arrays a call."""

    __slots__ = ("n", "block", "address", "columns")

    def __init__(self, n):
        self.n = n
        # 68 bytes a source, rounded up to whole float64s for the views.
        self.block = np.empty(72 * n, np.uint8)
        self.address = self.block.ctypes.data
        f8, i8 = self.block.view(np.float64), self.block.view(np.int64)
        f4, i4 = self.block.view(np.float32), self.block.view(np.int32)
        self.columns = (i8[:n], f8[n:2 * n], f8[2 * n:3 * n], f8[3 * n:4 * n],
                        i8[4 * n:5 * n], f4[10 * n:11 * n],
                        *(i4[k * n:(k + 1) * n] for k in range(11, 17)))

    def unused(self):
        # The set's own references: the block from the set and from each
        # column's base, each column from the tuple and the loop's name;
        # getrefcount's argument adds one.
        if _getrefcount(self.block) != 2 + len(self.columns):
            return False
        for column in self.columns:
            if _getrefcount(column) != 3:
                return False
        return True


_getrefcount = sys.getrefcount
_memmove = ctypes.memmove
_pool = []          # column sets, newest last; touched under the device's lock
_POOL_SETS = 3      # a result kept while the next call runs, and one more
_source_ids = [np.arange(1, 1, dtype=np.int64), 0]


def packed_columns(address, n):
    """The catalogue's columns (find()'s dict, less "meta") from the
    device's packed block at address: copied once into a block whose views
    are the columns."""
    if n == 0:
        return {"source_id": np.arange(1, 1, dtype=np.int64),
                **{name: np.empty(0, dtype) for name, dtype in _PACKED}}
    for s in _pool:
        if s.n == n and s.unused():
            break
    else:
        s = _ColumnSet(n)
        _pool.append(s)
        if len(_pool) > _POOL_SETS:
            del _pool[0]
    if _source_ids[0].size < n:
        ids = np.arange(1, 2 * n + 1, dtype=np.int64)
        _source_ids[:] = ids, ids.ctypes.data
    _memmove(s.address, _source_ids[1], 8 * n)
    _memmove(s.address + 8 * n, address, PACKED_BYTES * n)
    ids, x, y, flux, npix, peak, peak_x, peak_y, xmin, xmax, ymin, ymax = s.columns
    return {"source_id": ids, "x_centroid": x, "y_centroid": y, "sum_flux": flux,
            "npix": npix, "peak_flux": peak, "peak_x": peak_x, "peak_y": peak_y,
            "xmin": xmin, "xmax": xmax, "ymin": ymin, "ymax": ymax}


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
