# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift: find sources in astronomical images with the four steps of the
Carpentries lesson "Using your GPU with CuPy" (kappa-sigma clipping,
segmentation, labelling, measurement), on the CPU or the GPU, from Python.

    >>> import skysift
    >>> cat = skysift.find("gc_like_2048.fits")      # an astropy Table
    >>> len(cat)
    344

Images are FITS paths, astropy HDUs, NumPy arrays (any real dtype, strides
and byte order) or CuPy arrays (read on the device). The work is done by
skysift's C core (libskysift, through ctypes, without the GIL); this package
adds no algorithm of its own. ``import skysift`` needs NumPy alone; astropy
makes tables, CuPy brings device arrays.
"""
import ctypes

import numpy as np

from . import _arrays, _lib, _table
from ._lib import SkysiftError, SkysiftIOError, SkysiftUnavailable, SkysiftValueError

__all__ = ["find", "write_csv", "read_image", "clip", "segment", "label", "measure", "convolve2d",
           "convolve", "gpu_available", "SkysiftError", "SkysiftIOError",
           "SkysiftValueError", "SkysiftUnavailable", "__version__"]

__version__ = _lib.lib.sky_version().decode()

_METHODS = ("lesson",)
_BACKENDS = ("cpu", "gpu", "both")


def _astropy_available():
    try:
        import astropy.table  # noqa: F401
    except ImportError:
        return False
    return True


def _params(clip_kappa, max_iter, threshold, relative, connectivity, threads):
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity: {connectivity!r} is not 4 or 8")
    return _lib.params(clip_kappa, max_iter, threshold, relative, connectivity, threads)


def _result_dict(res, cols):
    """The columns, and the run's figures under ``meta``."""
    out = dict(cols)
    out["meta"] = {"median": res.median, "sigma": res.sigma, "clip_pixels": res.n,
                   "input_pixels": res.ninput, "iterations": res.iterations,
                   "flat": bool(res.flat), "threshold_value": res.threshold_value,
                   "nsources": res.nsources, "backend": res.backend.decode(),
                   "times_ms": list(res.step_ms[:4]) + [res.total_ms],
                   "gpu_kernels_ms": res.gpu_kernels_ms, "gpu_total_ms": res.gpu_total_ms,
                   "gpu_fault": res.gpu_fault.decode()}
    return out


def find(image, header=None, *, method="lesson", backend=None, clip_kappa=3.0, max_iter=0,
         threshold=5.0, relative=False, connectivity=4, threads=0, hdu=0, plane=0,
         images=False, table=True):
    """Finds the sources of an image: clip, segment, label and measure.

    Parameters
    ----------
    image : str, os.PathLike, astropy.io.fits HDU, numpy.ndarray or cupy.ndarray
        A FITS file (read with cfitsio as the CLI reads it), an image HDU,
        or a 2-D array of any real dtype, strides and byte order (computed
        in float32, as the FITS loader stores every BITPIX; NaN and
        infinities are blank). A CuPy array is read on the device.
    header : astropy.io.fits.Header or str, optional
        The image's header, for sky columns (its WCS), BUNIT and the beam
        (int_flux). An HDU's own header is used when this is None.
    method : {"lesson"}
        The steps to run: the lesson's four.
    backend : {None, "cpu", "gpu", "both"}
        Where to run: None runs where the data are (the GPU for a CuPy
        array, else the CPU). "gpu" with host data uploads it and, where the
        GPU fails, finishes on the CPU (``meta["gpu_fault"]`` says why);
        "both" checks the GPU's result against the CPU's.
    clip_kappa : float
        Clip at median +- clip_kappa * sigma (the CLI's --clip-kappa).
    max_iter : int
        Clipping passes at most; 0 until stable (--max-iter).
    threshold : float
        Source pixels are above threshold * sigma (--threshold).
    relative : bool
        Above median + threshold * sigma instead (--relative).
    connectivity : {4, 8}
        Pixel connectivity of a source (--connectivity).
    threads : int
        CPU worker threads, 0 for every core (--threads).
    hdu, plane : int
        Which HDU (1-based, 0 the first image) and cube plane of a file.
    images : bool
        Also return the mask and the label image (``table=False`` only):
        CuPy arrays from a device run, else NumPy arrays.
    table : bool
        Return an astropy Table; False (or without astropy) a dict.

    Returns
    -------
    astropy.table.Table or dict
        One row per source in label order with the CLI's CSV columns
        (source_id, x_centroid, y_centroid, sum_flux, npix, peak_flux,
        peak_x, peak_y, xmin, xmax, ymin, ymax; pixels 0-based), the sky
        columns where the header has a celestial WCS, units, and the ECSV's
        metadata (clipped median and sigma, threshold, parameters). The dict
        holds the pixel columns as NumPy arrays and the run's figures under
        "meta".

    Raises
    ------
    SkysiftIOError, SkysiftValueError, SkysiftError
        With the C core's message (the file and the reason).
    TypeError, ValueError
        For arrays that are not 2-D real images.
    """
    if method not in _METHODS:
        raise ValueError(f"method: {method!r} is not one of {', '.join(_METHODS)}")
    on_device = _arrays.is_device_array(image)
    if backend is None:
        backend = "gpu" if on_device else "cpu"
    if backend not in _BACKENDS:
        raise ValueError(f"backend: {backend!r} is not None, 'cpu', 'gpu' or 'both'")
    p = _params(clip_kappa, max_iter, threshold, relative, connectivity, threads)
    if on_device and backend == "gpu":
        return _find_device(image, header, p, images, table)
    if on_device:
        import cupy
        image = cupy.asnumpy(image)
    img = _arrays.host_image(image, header, hdu, plane)
    run = ctypes.c_void_p()
    try:
        _lib.check(_lib.lib.sky_api_run(img.handle, ctypes.byref(p), backend.encode(), b"all",
                                        ctypes.byref(run)))
        try:
            res = _table.result_of(run)
            if table and _astropy_available():
                return _table.astropy_table(run)
            out = _result_dict(res, _table.columns(res))
            if images:
                shape = (res.ny, res.nx)
                out["mask"] = np.ctypeslib.as_array(res.mask, shape=shape).astype(bool)
                out["labels"] = np.ctypeslib.as_array(res.labels, shape=shape).copy()
            return out
        finally:
            _lib.lib.sky_api_run_free(run)
    finally:
        img.close()


def _find_device(image, header, p, images, table):
    """find() on a CuPy array: every step on the device, reading the array
    there; only the statistics and the catalogue come to the host."""
    import cupy
    data = _arrays.device_float32(image)
    # The context's stream reads what CuPy's current stream wrote.
    cupy.cuda.get_current_stream().synchronize()
    ny, nx = data.shape
    run = ctypes.c_void_p()
    _lib.check(_lib.lib.sky_api_gpu_run_device(data.data.ptr, nx, ny, ctypes.byref(p),
                                               ctypes.byref(run)))
    try:
        try:
            res = _table.result_of(run)
            out_images = None
            if images:
                d_mask, d_labels = ctypes.c_void_p(), ctypes.c_void_p()
                _lib.check(_lib.lib.sky_api_gpu_buffers(ctypes.byref(d_mask),
                                                        ctypes.byref(d_labels)))
                mask = cupy.empty((ny, nx), dtype=cupy.uint8)
                labels = cupy.empty((ny, nx), dtype=cupy.int32)
                rt = cupy.cuda.runtime
                rt.memcpy(mask.data.ptr, d_mask.value, nx * ny, rt.memcpyDeviceToDevice)
                rt.memcpy(labels.data.ptr, d_labels.value, 4 * nx * ny,
                          rt.memcpyDeviceToDevice)
                out_images = (mask.view(cupy.bool_), labels)
        finally:
            _lib.lib.sky_api_gpu_release()
        if table and _astropy_available():
            return _table.astropy_table(run)
        out = _result_dict(res, _table.columns(res))
        if out_images is not None:
            out["mask"], out["labels"] = out_images
        return out
    finally:
        _lib.lib.sky_api_run_free(run)


def write_csv(image, path, header=None, **kwargs):
    """Finds the sources of image as find() does and writes the catalogue
    with the C core's CSV writer, byte for byte the CLI's ``--csv`` file.

    Parameters
    ----------
    image, header
        As for find() (host images: a path, an HDU or a NumPy array).
    path : str or os.PathLike
        The CSV to write (atomically: never half-written).
    **kwargs
        find()'s parameters (clip_kappa, threshold, connectivity...).

    Returns
    -------
    int
        The number of sources written.
    """
    fmt = kwargs.pop("format", "csv")
    hdu, plane = kwargs.pop("hdu", 0), kwargs.pop("plane", 0)
    backend = kwargs.pop("backend", None) or "cpu"
    p = _params(kwargs.pop("clip_kappa", 3.0), kwargs.pop("max_iter", 0),
                kwargs.pop("threshold", 5.0), kwargs.pop("relative", False),
                kwargs.pop("connectivity", 4), kwargs.pop("threads", 0))
    if kwargs:
        raise TypeError(f"write_csv: unexpected arguments {', '.join(kwargs)}")
    img = _arrays.host_image(image, header, hdu, plane)
    run = ctypes.c_void_p()
    try:
        _lib.check(_lib.lib.sky_api_run(img.handle, ctypes.byref(p), backend.encode(), b"all",
                                        ctypes.byref(run)))
        try:
            _table.write(run, fmt, path)
            return _table.result_of(run).nsources
        finally:
            _lib.lib.sky_api_run_free(run)
    finally:
        img.close()


def read_image(path, hdu=0, plane=0):
    """Reads an image plane of a FITS file as skysift does (cfitsio:
    BSCALE/BZERO applied, tile-compressed HDUs, degenerate axes dropped,
    blanks and infinities as NaN), without astropy.

    Returns
    -------
    numpy.ndarray
        float32, (ny, nx).
    """
    img = _arrays.load_path(path, hdu, plane)
    try:
        nx, ny = ctypes.c_int64(), ctypes.c_int64()
        ptr = _lib.lib.sky_api_image_pixels(img.handle, ctypes.byref(nx), ctypes.byref(ny))
        buf = (ctypes.c_float * (nx.value * ny.value)).from_address(ptr)
        return np.frombuffer(buf, dtype=np.float32).reshape(ny.value, nx.value).copy()
    finally:
        img.close()


def gpu_available():
    """(True, the device) where skysift can run on a GPU, else (False, why)."""
    why = ctypes.create_string_buffer(512)
    ok = _lib.lib.sky_api_gpu_available(why, len(why)) == 0
    return ok, why.value.decode("utf-8", "replace")


from ._steps import clip, convolve, convolve2d, label, measure, segment  # noqa: E402
