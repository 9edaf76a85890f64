# SPDX-License-Identifier: GPL-3.0-or-later
"""What a skysift call takes as an image: a FITS path, an astropy HDU, a
NumPy array or a CuPy array, turned into the core's image (float32 rows,
NaN for blank) with as few copies as the input allows."""
import ctypes
import math
import os

import numpy as np

from ._lib import check, lib


# Types seen to be device arrays: CuPy makes its __cuda_array_interface__
# (a dict) on every look, so a type is asked once.
_device_types = set()


def is_device_array(a):
    """A CuPy (or other CUDA) array, read where it lies."""
    t = type(a)
    if t in _device_types:
        return True
    if t is np.ndarray or isinstance(a, np.ndarray) \
            or not hasattr(a, "__cuda_array_interface__"):
        return False
    _device_types.add(t)
    return True


class HostImage:
    """The core's image over a NumPy array (borrowed: kept alive here) or a
    loaded FITS plane. Free with close(); also on garbage collection."""

    def __init__(self, handle, array, path):
        self.handle = handle
        self.array = array
        self.path = path

    def close(self):
        if self.handle:
            lib.sky_api_image_free(self.handle)
            self.handle = None

    def __del__(self):
        self.close()

    @property
    def shape(self):
        nx, ny = ctypes.c_int64(), ctypes.c_int64()
        lib.sky_api_image_pixels(self.handle, ctypes.byref(nx), ctypes.byref(ny))
        return (ny.value, nx.value)


def _header_text(header):
    """80-character cards for the WCS, and BUNIT and the beam, from an
    astropy Header or a string of cards."""
    if header is None:
        return None, None, math.nan, math.nan, math.nan
    if isinstance(header, (str, bytes)):
        text = header.encode("ascii") if isinstance(header, str) else header
        text = text[: len(text) - len(text) % 80]
        from_cards = {}
        for i in range(0, len(text), 80):
            card = text[i:i + 80].decode("ascii", "replace")
            key, _, value = card.partition("=")
            from_cards.setdefault(key.strip(), value.split("/")[0].strip().strip("'").strip())
        get = from_cards.get
    else:
        text = header.tostring(sep="", endcard=False, padding=False).encode("ascii", "replace")
        get = header.get

    def number(key):
        try:
            return float(get(key))
        except (TypeError, ValueError):
            return math.nan

    bunit = get("BUNIT")
    bunit = str(bunit).encode("utf-8") if bunit not in (None, "") else None
    return text, bunit, number("BMAJ"), number("BMIN"), number("BPA")


def as_float32_rows(a, name="image"):
    """A C-contiguous native float32 view or copy of a 2-D real array."""
    a = np.asarray(a)
    if a.ndim != 2:
        raise ValueError(f"{name}: a 2-D array is needed, got {a.ndim}-D of shape {a.shape}")
    if a.dtype.kind not in "fiu" or a.dtype.itemsize > 8:
        raise TypeError(f"{name}: a real numeric array is needed (float or int), "
                        f"got dtype {a.dtype}")
    if a.size == 0:
        raise ValueError(f"{name}: the array is empty (shape {a.shape})")
    return np.ascontiguousarray(a, dtype=np.float32)


def wrap_array(a, header=None, path="array"):
    """The core's image over a 2-D array: borrowed where it is already
    float32 rows without infinities, else over a converted copy with the
    infinities blank (NaN), as the FITS loader stores them."""
    data = as_float32_rows(a)
    text, bunit, bmaj, bmin, bpa = _header_text(header)
    for attempt in range(2):
        handle = ctypes.c_void_p()
        ninf = ctypes.c_int64()
        check(lib.sky_api_image_wrap(
            data.ctypes.data, data.shape[1], data.shape[0], text, len(text) if text else 0,
            bunit, bmaj, bmin, bpa, path.encode("utf-8"), ctypes.byref(handle),
            ctypes.byref(ninf)))
        if ninf.value == 0 or attempt == 1:
            return HostImage(handle, data, path)
        lib.sky_api_image_free(handle)
        data = np.array(data, dtype=np.float32, order="C")
        data[np.isinf(data)] = np.nan
    raise AssertionError("unreachable")


def load_path(path, hdu=0, plane=0):
    handle = ctypes.c_void_p()
    check(lib.sky_api_image_load(os.fsencode(path), int(hdu), int(plane),
                                 ctypes.byref(handle)))
    return HostImage(handle, None, os.fspath(path))


def host_image(image, header=None, hdu=0, plane=0):
    """The core's image of a path, an HDU or a NumPy array (not a device array)."""
    if isinstance(image, (str, os.PathLike)):
        return load_path(image, hdu, plane)
    if hasattr(image, "data") and hasattr(image, "header") and not isinstance(image, np.ndarray):
        return wrap_array(image.data if image.data is not None else np.empty((0, 0)),
                          header if header is not None else image.header,
                          path=getattr(image, "name", "") or "HDU")
    if is_device_array(image):
        raise TypeError("a device (CuPy) array here: this step runs on the CPU; "
                        "pass cupy.asnumpy(array), or use find() for the GPU")
    return wrap_array(image, header)


def device_float32(a):
    """A CuPy array as C-contiguous float32 on the device (converted there
    when it is not)."""
    try:
        contiguous = a._c_contiguous    # CuPy's own field: a.flags makes an object
    except AttributeError:
        contiguous = a.flags.c_contiguous
    if contiguous and a.dtype.char == "f" and a.ndim == 2 and a.size:
        return a
    import cupy
    if a.ndim != 2:
        raise ValueError(f"image: a 2-D array is needed, got {a.ndim}-D of shape {a.shape}")
    if a.dtype.kind not in "fiu":
        raise TypeError(f"image: a real numeric array is needed, got dtype {a.dtype}")
    if a.size == 0:
        raise ValueError(f"image: the array is empty (shape {a.shape})")
    if a.dtype != np.float32 or not a.flags.c_contiguous:
        a = cupy.ascontiguousarray(a, dtype=cupy.float32)
    return a
