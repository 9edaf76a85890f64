# SPDX-License-Identifier: GPL-3.0-or-later
"""The lesson's steps one by one, as its notebook calls them, and the
convolutions of its first part, with SciPy's and NumPy's semantics: each
one call into skysift's CPU backend."""
import ctypes

import numpy as np

from . import _arrays, _lib, _table


def clip(data, *, clip_kappa=3.0, max_iter=0, threads=0):
    """Kappa-sigma clipped background statistics, as the lesson's
    ``sigma_clip(data, sigma=3, maxiters=None)`` then median and std.

    Parameters
    ----------
    data : array_like or str
        A 2-D image (or a FITS path); NaN and infinities are blank.
    clip_kappa : float
        Clip at median +- clip_kappa * sigma.
    max_iter : int
        Passes at most; 0 until nothing more is clipped.

    Returns
    -------
    median : float
    std : float
        The population standard deviation of the pixels left.
    n : int
        How many pixels are left.
    iterations : int
        Passes made (the last one clipped nothing).
    """
    img = _arrays.host_image(data)
    p = _lib.params(clip_kappa=clip_kappa, max_iter=max_iter, nthreads=threads)
    median, sigma = ctypes.c_double(), ctypes.c_double()
    n, iterations = ctypes.c_int64(), ctypes.c_int32()
    try:
        _lib.check(_lib.lib.sky_api_clip(img.handle, ctypes.byref(p), ctypes.byref(median),
                                         ctypes.byref(sigma), ctypes.byref(n),
                                         ctypes.byref(iterations)))
    finally:
        img.close()
    return median.value, sigma.value, n.value, iterations.value


def segment(data, level, *, threads=0):
    """The mask of pixels above level, the lesson's ``data > 5 * std``.

    Parameters
    ----------
    data : array_like
        A 2-D image; blank pixels (NaN, infinities) are never in the mask.
    level : float
        An absolute pixel value, compared exactly (in double precision).

    Returns
    -------
    numpy.ndarray of bool, the shape of data
    """
    img = _arrays.host_image(data)
    try:
        mask = np.empty(img.shape, dtype=np.uint8)
        _lib.check(_lib.lib.sky_api_segment(img.handle, float(level), int(threads),
                                            mask.ctypes.data))
    finally:
        img.close()
    return mask.view(bool)


def label(mask, connectivity=4, *, threads=0):
    """Connected components, as ``scipy.ndimage.label`` (4-connectivity is
    its default structure, 8 is ``np.ones((3, 3))``).

    Parameters
    ----------
    mask : array_like of bool
        2-D; nonzero pixels are foreground.
    connectivity : {4, 8}

    Returns
    -------
    labels : numpy.ndarray of int32
        1..n in raster order of each component's first pixel, 0 elsewhere.
    n : int
    """
    m = np.asarray(mask)
    if m.ndim != 2:
        raise ValueError(f"mask: a 2-D array is needed, got {m.ndim}-D of shape {m.shape}")
    if m.size == 0:
        raise ValueError(f"mask: the array is empty (shape {m.shape})")
    m = np.ascontiguousarray(m != 0, dtype=np.uint8) if m.dtype != np.uint8 or \
        not m.flags.c_contiguous or m.max(initial=0) > 1 else m
    labels = np.empty(m.shape, dtype=np.int32)
    n = ctypes.c_int64()
    _lib.check(_lib.lib.sky_api_label(m.ctypes.data, m.shape[1], m.shape[0], int(connectivity),
                                      int(threads), labels.ctypes.data, ctypes.byref(n)))
    return labels, n.value


def background(data, *, bkg_box=64, bkg_filter=3, threads=0):
    """The background and its rms on a mesh, SExtractor's way as SEP
    implements it: ``sep.Background(data, bw=bkg_box, bh=bkg_box,
    fw=bkg_filter, fh=bkg_filter)`` with ``.back()`` and ``.rms()``.

    Parameters
    ----------
    data : array_like or str
        A 2-D image (or a FITS path); NaN and infinities are blank and take
        no part.
    bkg_box : int
        Mesh boxes of bkg_box pixels a side (the CLI's --bkg-box).
    bkg_filter : int
        Median filter of bkg_filter x bkg_filter boxes, odd; 1 for none
        (--bkg-filter).

    Returns
    -------
    background, rms : numpy.ndarray
        float32 maps of data's shape, finite everywhere.
    """
    img = _arrays.host_image(data)
    p = _lib.params(bkg_box=bkg_box, bkg_filter=bkg_filter, nthreads=threads)
    try:
        back = np.empty(img.shape, dtype=np.float32)
        rms = np.empty(img.shape, dtype=np.float32)
        _lib.check(_lib.lib.sky_api_background(img.handle, ctypes.byref(p), back.ctypes.data,
                                               rms.ctypes.data))
    finally:
        img.close()
    return back, rms


def measure(data, labels, *, threads=0, table=True):
    """Per-source measurements of a labelled image: the lesson's
    ``center_of_mass``, ``sum_labels`` (and peaks, boxes, pixel counts).

    Parameters
    ----------
    data : array_like
        The 2-D image.
    labels : array_like of int
        Its label image, 1..n, 0 for background (label()'s output).
    table : bool
        An astropy Table (False, or without astropy: a dict of columns).

    Returns
    -------
    astropy.table.Table or dict
        The CSV's pixel columns, one row per label.
    """
    img = _arrays.host_image(data)
    lab = np.asarray(labels)
    try:
        if lab.shape != img.shape:
            raise ValueError(f"labels: shape {lab.shape} is not the image's {img.shape}")
        lab = np.ascontiguousarray(lab, dtype=np.int32)
        nlabels = int(lab.max(initial=0))
        if lab.min(initial=0) < 0:
            raise ValueError("labels: negative labels")
        run = ctypes.c_void_p()
        _lib.check(_lib.lib.sky_api_measure(img.handle, lab.ctypes.data, nlabels, int(threads),
                                            ctypes.byref(run)))
        try:
            cols = _table.columns(_table.result_of(run))
        finally:
            _lib.lib.sky_api_run_free(run)
    finally:
        img.close()
    if table:
        try:
            from astropy.table import Table
        except ImportError:
            return cols
        return Table(cols)
    return cols


def _float_pair(a, b):
    """Both as float32 when both are, else float64 (SciPy's result type
    for real input)."""
    a, b = np.asarray(a), np.asarray(b)
    for name, x in (("in1", a), ("in2", b)):
        if x.dtype.kind not in "fiub":
            raise TypeError(f"{name}: a real array is needed, got dtype {x.dtype}")
    f64 = not (a.dtype == np.float32 and b.dtype == np.float32)
    dtype = np.float64 if f64 else np.float32
    return np.ascontiguousarray(a, dtype=dtype), np.ascontiguousarray(b, dtype=dtype), f64


def convolve2d(in1, in2, mode="full", *, threads=0):
    """2-D convolution with zero fill, as ``scipy.signal.convolve2d(in1,
    in2, mode)`` (boundary "fill", fillvalue 0).

    Parameters
    ----------
    in1, in2 : array_like
        2-D real arrays: the image and the kernel.
    mode : {"full", "same", "valid"}

    Returns
    -------
    numpy.ndarray
        float32 where both inputs are float32, else float64.
    """
    a, k, f64 = _float_pair(in1, in2)
    if a.ndim != 2 or k.ndim != 2:
        raise ValueError(f"convolve2d: inputs must both be 2-D, got {a.ndim}-D and {k.ndim}-D")
    if a.size == 0 or k.size == 0:
        raise ValueError("convolve2d: inputs must not be empty")
    out_nx, out_ny = ctypes.c_int64(), ctypes.c_int64()
    _lib.check(_lib.lib.sky_api_convolve2d_shape(a.shape[1], a.shape[0], k.shape[1], k.shape[0],
                                                 mode.encode(), ctypes.byref(out_nx),
                                                 ctypes.byref(out_ny)))
    out = np.empty((out_ny.value, out_nx.value), dtype=a.dtype)
    kd = np.ascontiguousarray(k, dtype=np.float64)
    _lib.check(_lib.lib.sky_api_convolve2d(a.ctypes.data, a.shape[1], a.shape[0], kd.ctypes.data,
                                           k.shape[1], k.shape[0], mode.encode(), int(f64),
                                           int(threads), out.ctypes.data))
    return out


def convolve(a, v, *, threads=0):
    """The full 1-D convolution, as ``np.convolve(a, v)``.

    Returns
    -------
    numpy.ndarray
        len(a) + len(v) - 1 values, float32 where both are, else float64.
    """
    x, y, f64 = _float_pair(a, v)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"convolve: inputs must both be 1-D, got {x.ndim}-D and {y.ndim}-D")
    if x.size == 0 or y.size == 0:
        raise ValueError("convolve: inputs must not be empty")
    out = np.empty(x.size + y.size - 1, dtype=x.dtype)
    _lib.check(_lib.lib.sky_api_convolve1d(x.ctypes.data, x.size, y.ctypes.data, y.size,
                                           int(f64), int(threads), out.ctypes.data))
    return out
