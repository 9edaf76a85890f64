# SPDX-License-Identifier: GPL-3.0-or-later
"""find() on a CuPy array: every step on the device, the array read where
it lies; only the figures and the catalogue come to the host.

A warm call on a 2048 x 2048 image is a few hundred microseconds, so the
path is kept short: one C call (no run to make and free, no event timings
unless asked), the result read through views made once, the catalogue
copied in one piece and cut into columns with four NumPy calls."""
import ctypes

from . import _arrays, _lib, _table

_find = _lib.lib.sky_api_gpu_find_device
_release = _lib.lib.sky_api_gpu_release

# One result for every call and thread: the C side writes it under the
# device's lock, which is held until _release, and it is read before that.
_RESULT = _lib.DeviceFind()
_RESULT_REF = ctypes.byref(_RESULT)
_DOUBLES = (ctypes.c_double * (_lib.DeviceFind.n.offset // 8)).from_buffer(_RESULT)
_INTS = (ctypes.c_int64 * ((_lib.DeviceFind.packed_catalogue.offset - _lib.DeviceFind.n.offset)
                           // 8)).from_buffer(_RESULT, _lib.DeviceFind.n.offset)
_CATALOGUE = ctypes.c_void_p.from_buffer(_RESULT, _lib.DeviceFind.packed_catalogue.offset)
_STEPS = ("clip", "segment", "label", "measure")
_current_stream = []


def _stream():
    """CuPy's current stream (a cudaStream_t), which the run waits for."""
    if not _current_stream:
        import cupy
        _current_stream.append(cupy.cuda.get_current_stream)
    return _current_stream[0]().ptr


def _images(nx, ny):
    """Copies of the run's mask and label image, on the device."""
    import cupy
    d_mask, d_labels = ctypes.c_void_p(), ctypes.c_void_p()
    _lib.check(_lib.lib.sky_api_gpu_buffers(ctypes.byref(d_mask), ctypes.byref(d_labels)))
    mask = cupy.empty((ny, nx), dtype=cupy.uint8)
    labels = cupy.empty((ny, nx), dtype=cupy.int32)
    rt = cupy.cuda.runtime
    rt.memcpy(mask.data.ptr, d_mask.value, nx * ny, rt.memcpyDeviceToDevice)
    rt.memcpy(labels.data.ptr, d_labels.value, 4 * nx * ny, rt.memcpyDeviceToDevice)
    return mask.view(cupy.bool_), labels


def find(image, p, images=False, timings=False):
    """The columns and the run's figures (find()'s dict) of a CuPy array."""
    data = _arrays.device_float32(image)
    ny, nx = data.shape
    status = _find(data.data.ptr, nx, ny, p, _stream(), _lib.API_TIMES if timings else 0,
                   _RESULT_REF)
    if status:
        _lib.check(status)
    try:
        d = _DOUBLES[:]
        i = _INTS[:]
        out = _table.packed_columns(_CATALOGUE.value, i[2])
        if images:
            out["mask"], out["labels"] = _images(nx, ny)
    finally:
        _release()
    # As find()'s dict from a run (skysift._result_dict), field for field.
    out["meta"] = {"median": d[0], "sigma": d[1], "clip_pixels": i[0], "input_pixels": i[1],
                   "iterations": i[3], "flat": i[5] != 0, "threshold_value": d[3],
                   "nsources": i[2], "nislands": 0, "backend": "gpu", "steps": list(_STEPS),
                   "times_ms": d[4:9], "gpu_kernels_ms": d[8], "gpu_total_ms": d[9],
                   "gpu_fault": ""}
    return out


def find_table(image, p):
    """find()'s astropy Table of a CuPy array: a run that the core's ECSV
    writer writes (the catalogue's units and metadata)."""
    data = _arrays.device_float32(image)
    ny, nx = data.shape
    run = ctypes.c_void_p()
    res = _lib.Result()
    _lib.check(_lib.lib.sky_api_gpu_run_device(data.data.ptr, nx, ny, ctypes.byref(p),
                                               _stream(), ctypes.byref(run),
                                               ctypes.byref(res)))
    _release()
    try:
        return _table.astropy_table(run)
    finally:
        _lib.lib.sky_api_run_free(run)
