# SPDX-License-Identifier: GPL-3.0-or-later
"""The ctypes layer over libskysift (src/python/sky-api.h): the library,
its one flat result struct, and C statuses as Python exceptions.

ctypes releases the GIL around every foreign call, so the computation runs
without it and threads may call skysift concurrently."""
import ctypes
import glob
import os

API_VERSION = 5

# Statuses of sky-core.h, in order from SKY_OK.
_STATUS_NAMES = ["ok", "io", "format", "no_image", "size", "memory", "empty", "argument",
                 "unavailable", "cancelled"]


class SkysiftError(RuntimeError):
    """A failure in skysift's C core; the message is the core's own
    (sky_last_error), naming the file or parameter and the reason.
    ``status`` is the core's status name ("io", "format", "argument"...)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


class SkysiftIOError(SkysiftError, OSError):
    """A file could not be opened, read or written."""


class SkysiftValueError(SkysiftError, ValueError):
    """Bad input: not FITS, no image, an impossible size, every pixel blank,
    a parameter out of range."""


class SkysiftUnavailable(SkysiftError):
    """The GPU (or another backend) is not there; the message says why."""


_ERRORS = {"io": SkysiftIOError, "format": SkysiftValueError, "no_image": SkysiftValueError,
           "size": SkysiftValueError, "empty": SkysiftValueError,
           "argument": SkysiftValueError, "unavailable": SkysiftUnavailable}


class Params(ctypes.Structure):
    _fields_ = [("clip_kappa", ctypes.c_double), ("max_iter", ctypes.c_int32),
                ("threshold", ctypes.c_double), ("relative", ctypes.c_int32),
                ("connectivity", ctypes.c_int32), ("nthreads", ctypes.c_int32),
                ("bkg_box", ctypes.c_int32), ("bkg_filter", ctypes.c_int32),
                ("seed_sigma", ctypes.c_double), ("flood_sigma", ctypes.c_double),
                ("min_area", ctypes.c_int64), ("deblend_nthresh", ctypes.c_int32),
                ("deblend_mincont", ctypes.c_double), ("deblend_sigma", ctypes.c_double)]


_dp = ctypes.POINTER(ctypes.c_double)
_fp = ctypes.POINTER(ctypes.c_float)
_i32p = ctypes.POINTER(ctypes.c_int32)
_i64p = ctypes.POINTER(ctypes.c_int64)
_u8p = ctypes.POINTER(ctypes.c_uint8)


class Result(ctypes.Structure):
    _fields_ = [("nx", ctypes.c_int64), ("ny", ctypes.c_int64),
                ("median", ctypes.c_double), ("sigma", ctypes.c_double),
                ("mean", ctypes.c_double), ("n", ctypes.c_int64), ("ninput", ctypes.c_int64),
                ("iterations", ctypes.c_int32), ("converged", ctypes.c_int32),
                ("flat", ctypes.c_int32), ("connectivity", ctypes.c_int32),
                ("threshold_value", ctypes.c_double), ("nsources", ctypes.c_int64),
                # The catalogue's columns as addresses (their types are in
                # _table.py): an int per field, read cheaply.
                *[(name, ctypes.c_void_p) for name in (
                    "x", "y", "sum", "npix", "peak", "peak_x", "peak_y", "xmin", "xmax", "ymin",
                    "ymax", "background", "rms", "sum_err", "peak_err", "x_win", "y_win",
                    "flags")],
                ("nislands", ctypes.c_int64), ("mask", _u8p), ("labels", _i32p),
                ("nsteps", ctypes.c_int32), ("step_name", ctypes.c_char_p * 8),
                ("step_ms", ctypes.c_double * 8), ("total_ms", ctypes.c_double),
                ("gpu_ran", ctypes.c_int32), ("gpu_kernels_ms", ctypes.c_double),
                ("gpu_total_ms", ctypes.c_double), ("backend", ctypes.c_char_p),
                ("gpu_fault", ctypes.c_char_p), ("packed_catalogue", ctypes.c_void_p)]


class DeviceFind(ctypes.Structure):
    """sky_api_gpu_find_device's result: doubles, int64s, the catalogue."""
    _fields_ = [("median", ctypes.c_double), ("sigma", ctypes.c_double),
                ("mean", ctypes.c_double), ("threshold_value", ctypes.c_double),
                ("step_ms", ctypes.c_double * 4), ("kernels_ms", ctypes.c_double),
                ("total_ms", ctypes.c_double), ("n", ctypes.c_int64),
                ("ninput", ctypes.c_int64), ("nsources", ctypes.c_int64),
                ("iterations", ctypes.c_int64), ("converged", ctypes.c_int64),
                ("flat", ctypes.c_int64), ("packed_catalogue", ctypes.c_void_p)]


# SkyApiDeviceFind's flags.
API_TIMES = 1


def _library_path():
    """SKYSIFT_LIBRARY (a build tree's library, for the tests), else the
    library installed beside this file."""
    path = os.environ.get("SKYSIFT_LIBRARY")
    if path:
        return path
    here = os.path.dirname(os.path.abspath(__file__))
    found = sorted(glob.glob(os.path.join(here, "libskysift*.so")))
    if not found:
        raise ImportError(f"skysift: libskysift is not installed in {here}; build and "
                          "install the package (README: Python)")
    return found[0]


def _load():
    lib = ctypes.CDLL(_library_path())
    c = ctypes
    vp = c.c_void_p
    sigs = {
        "sky_api_version": (c.c_int, []),
        "sky_last_error": (c.c_char_p, []),
        "sky_version": (c.c_char_p, []),
        "sky_api_image_load": (c.c_int, [c.c_char_p, c.c_int, c.c_int64, c.POINTER(vp)]),
        "sky_api_image_wrap": (c.c_int, [vp, c.c_int64, c.c_int64, c.c_char_p, c.c_int64,
                                         c.c_char_p, c.c_double, c.c_double, c.c_double,
                                         c.c_char_p, c.POINTER(vp), _i64p]),
        "sky_api_image_pixels": (vp, [vp, _i64p, _i64p]),
        "sky_api_image_free": (None, [vp]),
        "sky_api_params_init": (None, [c.POINTER(Params)]),
        "sky_api_params_check": (c.c_int, [c.POINTER(Params)]),
        "sky_api_run": (c.c_int, [vp, c.POINTER(Params), c.c_char_p, c.c_char_p, c.c_char_p,
                                  vp, vp, c.POINTER(vp)]),
        "sky_api_background": (c.c_int, [vp, c.POINTER(Params), vp, vp]),
        "sky_api_gpu_run_device": (c.c_int, [vp, c.c_int64, c.c_int64, c.POINTER(Params), vp,
                                             c.POINTER(vp), c.POINTER(Result)]),
        "sky_api_gpu_find_device": (c.c_int, [vp, c.c_int64, c.c_int64, c.POINTER(Params),
                                              vp, c.c_int32, c.POINTER(DeviceFind)]),
        "sky_api_gpu_run_image": (c.c_int, [vp, c.POINTER(Params), c.POINTER(vp)]),
        "sky_api_gpu_buffers": (c.c_int, [c.POINTER(vp), c.POINTER(vp)]),
        "sky_api_gpu_release": (None, []),
        "sky_api_gpu_available": (c.c_int, [c.c_char_p, c.c_size_t]),
        "sky_api_run_result": (c.c_int, [vp, c.POINTER(Result)]),
        "sky_api_run_write": (c.c_int, [vp, c.c_char_p, c.c_char_p]),
        "sky_api_run_free": (None, [vp]),
        "sky_api_clip": (c.c_int, [vp, c.POINTER(Params), _dp, _dp, _i64p, _i32p]),
        "sky_api_segment": (c.c_int, [vp, c.c_double, c.c_int32, vp]),
        "sky_api_label": (c.c_int, [vp, c.c_int64, c.c_int64, c.c_int32, c.c_int32, vp,
                                    _i64p]),
        "sky_api_measure": (c.c_int, [vp, vp, c.c_int64, c.c_int32, c.POINTER(vp)]),
        "sky_api_convolve2d_shape": (c.c_int, [c.c_int64, c.c_int64, c.c_int32, c.c_int32,
                                               c.c_char_p, _i64p, _i64p]),
        "sky_api_convolve2d": (c.c_int, [vp, c.c_int64, c.c_int64, vp, c.c_int32, c.c_int32,
                                         c.c_char_p, c.c_int32, c.c_int32, vp]),
        "sky_api_convolve1d": (c.c_int, [vp, c.c_int64, vp, c.c_int64, c.c_int32, c.c_int32,
                                         vp]),
    }
    for name, (restype, argtypes) in sigs.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    if lib.sky_api_version() != API_VERSION:
        raise ImportError(f"skysift: {_library_path()} has C API version "
                          f"{lib.sky_api_version()}, this package needs {API_VERSION}")
    return lib


lib = _load()


def check(status):
    """Raises the exception for a C status, with the core's message."""
    if status == 0:
        return
    name = _STATUS_NAMES[status] if 0 <= status < len(_STATUS_NAMES) else str(status)
    message = lib.sky_last_error().decode("utf-8", "replace")
    if name == "memory":
        raise MemoryError(message)
    raise _ERRORS.get(name, SkysiftError)(name, message)


# The parameters' defaults as the C core sets them (sky_params_init).
DEFAULTS = Params()
lib.sky_api_params_init(ctypes.byref(DEFAULTS))


def params(**kw):
    """The core's parameters: its defaults, then kw by field name."""
    p = Params.from_buffer_copy(DEFAULTS)
    for name, value in kw.items():
        if value is not None:
            setattr(p, name, type(getattr(DEFAULTS, name))(value))
    return p
