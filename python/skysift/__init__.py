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
import functools

import numpy as np

from . import _arrays, _device, _lib, _table
from ._lib import SkysiftError, SkysiftIOError, SkysiftUnavailable, SkysiftValueError

__all__ = ["find", "write_csv", "read_image", "clip", "segment", "label", "measure",
           "background", "convolve2d", "convolve", "gpu_available", "SkysiftError",
           "SkysiftIOError", "SkysiftValueError", "SkysiftUnavailable", "__version__"]

__version__ = _lib.lib.sky_version().decode()

# "global" is the CLI's name for the lesson's method.
_METHODS = {"lesson": "lesson", "global": "lesson", "local": "local"}
_BACKENDS = ("cpu", "gpu", "both")


@functools.lru_cache(maxsize=None)
def _astropy_available():
    # Cached: a failed import searches the path again on every call.
    try:
        import astropy.table  # noqa: F401
    except ImportError:
        return False
    return True


def _method(method):
    try:
        return _METHODS[method]
    except (KeyError, TypeError):
        raise ValueError(f"method: {method!r} is not 'lesson' (or 'global') or 'local'") \
            from None


def _params(*args, **kwargs):
    """The core's parameters from find()'s keywords (the CLI's names): made
    once for each set of values (the C side only reads them)."""
    try:
        return _params_cached(*args, **kwargs)
    except TypeError:   # a value that cannot be a key (a list for deblend)
        return _make_params(*args, **kwargs)


def _make_params(clip_kappa=3.0, max_iter=0, threshold=5.0, relative=False, connectivity=4,
                 threads=0, seed_sigma=4.6, flood_sigma=2.5, min_area=1, deblend=(32, 0.005),
                 deblend_sigma=5.0, bkg_box=64, bkg_filter=3):
    if connectivity not in (4, 8):
        raise ValueError(f"connectivity: {connectivity!r} is not 4 or 8")
    if deblend in (None, 0, False):
        deblend = (0, 0.005)
    try:
        nthresh, mincont = deblend
    except (TypeError, ValueError):
        raise ValueError(f"deblend: {deblend!r} is not (levels, contrast), e.g. (32, 0.005), "
                         "or 0") from None
    return _lib.params(clip_kappa=clip_kappa, max_iter=max_iter, threshold=threshold,
                       relative=1 if relative else 0, connectivity=connectivity,
                       nthreads=threads, seed_sigma=seed_sigma, flood_sigma=flood_sigma,
                       min_area=min_area, deblend_nthresh=nthresh, deblend_mincont=mincont,
                       deblend_sigma=deblend_sigma, bkg_box=bkg_box, bkg_filter=bkg_filter)


_params_cached = functools.lru_cache(maxsize=64)(_make_params)


@functools.lru_cache(maxsize=None)
def _step_names(names):
    return [name.decode() for name in names]


def _result_dict(res, cols):
    """The columns, and the run's figures under ``meta``."""
    out = dict(cols)
    steps = list(_step_names(tuple(res.step_name[:res.nsteps])))
    out["meta"] = {"median": res.median, "sigma": res.sigma, "clip_pixels": res.n,
                   "input_pixels": res.ninput, "iterations": res.iterations,
                   "flat": bool(res.flat), "threshold_value": res.threshold_value,
                   "nsources": res.nsources, "nislands": res.nislands,
                   "backend": res.backend.decode(),
                   "steps": steps, "times_ms": list(res.step_ms[:res.nsteps]) + [res.total_ms],
                   "gpu_kernels_ms": res.gpu_kernels_ms, "gpu_total_ms": res.gpu_total_ms,
                   "gpu_fault": res.gpu_fault.decode()}
    return out


def _map(a, shape, name):
    m = _arrays.as_float32_rows(a, name)
    if m.shape != shape:
        raise ValueError(f"{name}: shape {m.shape} is not the image's {shape}")
    return m


class _HostRun:
    """One run of the runner on a host image, freed on exit."""

    def __init__(self, image, header, method, backend, hdu, plane, bkg, rms, p):
        self.img = _arrays.host_image(image, header, hdu, plane)
        self.run = ctypes.c_void_p()
        self.maps = None
        try:
            if bkg is not None or rms is not None:
                if bkg is None or rms is None:
                    raise ValueError("bkg and rms go together: give both maps or neither")
                self.maps = (_map(bkg, self.img.shape, "bkg"), _map(rms, self.img.shape, "rms"))
            _lib.check(_lib.lib.sky_api_run(
                self.img.handle, ctypes.byref(p), method.encode(), backend.encode(), b"all",
                self.maps[0].ctypes.data if self.maps else None,
                self.maps[1].ctypes.data if self.maps else None, ctypes.byref(self.run)))
        except BaseException:
            self.close()
            raise

    def close(self):
        if self.run:
            _lib.lib.sky_api_run_free(self.run)
            self.run = ctypes.c_void_p()
        self.img.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def find(image, header=None, *, method="lesson", backend=None, clip_kappa=3.0, max_iter=0,
         threshold=5.0, relative=False, connectivity=4, threads=0, hdu=0, plane=0,
         seed_sigma=4.6, flood_sigma=2.5, min_area=1, deblend=(32, 0.005), deblend_sigma=5.0,
         bkg_box=64, bkg_filter=3, bkg=None, rms=None, images=False, table=True,
         timings=False):
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
    method : {"lesson", "local"}
        The steps to run: the lesson's four (one clipped threshold; "global"
        is the CLI's name for it), or the local method (a background and
        rms map on a mesh, SEP's way, then seed-and-flood islands against
        the rms, deblending, and measures on the image less its background;
        on the GPU from host data, a CuPy array being copied home first).
        The parameters below marked local are its own.
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
    seed_sigma, flood_sigma : float
        local: an island needs a pixel above seed_sigma rms and holds the
        pixels above flood_sigma rms (--seed-sigma, --flood-sigma).
    min_area : int
        local: islands and deblended parts have at least this many pixels.
    deblend : (int, float) or 0
        local: deblending levels and the share of its island's flux a part
        needs (--deblend N,C); 0 for none.
    deblend_sigma : float
        local: a deblended part rises this many rms above its split level.
    bkg_box, bkg_filter : int
        local: the background mesh's box (pixels a side) and median filter
        (boxes a side, odd) (--bkg-box, --bkg-filter).
    bkg, rms : array_like, optional
        local: background and rms maps of the image's shape replacing the
        computed ones (--bkg, --rms).
    images : bool
        Also return the mask and the label image (``table=False`` only):
        CuPy arrays from a device run, else NumPy arrays.
    table : bool
        Return an astropy Table; False (or without astropy) a dict.
    timings : bool
        Time a run on a CuPy array step by step with device events, into
        ``meta["times_ms"]`` and ``meta["gpu_kernels_ms"]`` (NaN otherwise):
        the events cost the host a few microseconds a call, a few percent of
        a small image's run. Other runs are always timed.

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
    method = _method(method)
    on_device = _arrays.is_device_array(image)
    if backend is None:
        backend = "gpu" if on_device else "cpu"
    if backend not in _BACKENDS:
        raise ValueError(f"backend: {backend!r} is not None, 'cpu', 'gpu' or 'both'")
    p = _params(clip_kappa, max_iter, threshold, relative, connectivity, threads, seed_sigma,
                flood_sigma, min_area, deblend, deblend_sigma, bkg_box, bkg_filter)
    if on_device and backend == "gpu" and method == "lesson":
        if table and _astropy_available():
            return _device.find_table(image, p)
        return _device.find(image, p, images, timings)
    if on_device:
        import cupy
        image = cupy.asnumpy(image)
    with _HostRun(image, header, method, backend, hdu, plane, bkg, rms, p) as r:
        res = _table.result_of(r.run)
        if table and _astropy_available():
            return _table.astropy_table(r.run)
        out = _result_dict(res, _table.columns(res, local=method == "local"))
        if images:
            shape = (res.ny, res.nx)
            out["mask"] = np.ctypeslib.as_array(res.mask, shape=shape).astype(bool)
            out["labels"] = np.ctypeslib.as_array(res.labels, shape=shape).copy()
        return out


def write_csv(image, path, header=None, *, method="lesson", backend="cpu", hdu=0, plane=0,
              bkg=None, rms=None, format="csv", **kwargs):
    """Finds the sources of image as find() does and writes the catalogue
    with the C core's writer, byte for byte the CLI's ``--csv`` file.

    Parameters
    ----------
    image, header, method, backend, hdu, plane, bkg, rms
        As for find() (host images: a path, an HDU or a NumPy array).
    path : str or os.PathLike
        The file to write (atomically: never half-written).
    format : {"csv", "ecsv", "regions", "votable"}
        The CLI's --csv, --ecsv, --regions or --votable file.
    **kwargs
        find()'s parameters (clip_kappa, threshold, connectivity, seed_sigma...).

    Returns
    -------
    int
        The number of sources written.
    """
    p = _params(**kwargs)
    with _HostRun(image, header, _method(method), backend or "cpu", hdu, plane, bkg, rms,
                  p) as r:
        _table.write(r.run, format, path)
        return _table.result_of(r.run).nsources


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


from ._steps import (background, clip, convolve, convolve2d, label, measure,  # noqa: E402
                     segment)
