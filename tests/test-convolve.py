#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli convolve against SciPy computed at test time:
scipy.signal.convolve2d in every mode and both dtypes, on random inputs of
odd sizes and on kernels of rank 1 (Gaussian, box, an outer product) and of
higher rank, on both paths; and the lesson's demo, 2D and 1D (np.convolve),
exactly as the lesson runs it. Inputs change every run; the seed is printed
and SKYSIFT_TEST_SEED replays it."""
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
try:
    import numpy as np
    from astropy.io import fits
    from scipy.signal import convolve2d
except ImportError as e:  # pragma: no cover - depends on the machine
    np = None
    MISSING = str(e)

DTYPES = {"f32": "float32", "f64": "float64"}


def tolerance(dtype, reference):
    """allclose tolerances: float32 sums carry float32 rounding, scaled by
    the largest magnitude that went into them."""
    scale = float(np.max(np.abs(reference))) or 1.0
    return (1e-5, 1e-6 * scale) if dtype == "f32" else (1e-10, 1e-12 * scale)


def run(*args):
    proc = subprocess.run([CLI, "convolve", *args], capture_output=True, text=True)
    assert proc.returncode == 0, f"skysift-cli convolve {' '.join(args)}: {proc.stderr}"
    return proc.stdout


def check_case(tmp, rng, dtype, mode, kernel_kind, path, shape, kshape):
    np_dtype = DTYPES[dtype]
    image = rng.standard_normal(shape).astype(np_dtype)
    if kernel_kind == "rank1":
        kernel = np.outer(rng.random(kshape[0]) + 0.1, rng.random(kshape[1]) - 0.3)
    elif kernel_kind == "box":
        kernel = np.full(kshape, 1.0 / (kshape[0] * kshape[1]))
    else:
        kernel = rng.standard_normal(kshape)
    img_path, k_path, out_path = (os.path.join(tmp, n) for n in ("in.fits", "k.fits", "out.fits"))
    fits.PrimaryHDU(image).writeto(img_path, overwrite=True)
    fits.PrimaryHDU(kernel.astype(np.float64)).writeto(k_path, overwrite=True)
    run(img_path, "--kernel-file", k_path, "--mode", mode, "--dtype", dtype, "--path", path,
        "--out", out_path)
    got = fits.getdata(out_path)
    want = convolve2d(image, kernel.astype(np_dtype), mode=mode)
    assert got.shape == want.shape, f"shape {got.shape} vs SciPy {want.shape}"
    rtol, atol = tolerance(dtype, want)
    bad = ~np.isclose(got, want, rtol=rtol, atol=atol)
    assert not bad.any(), (f"{bad.sum()} of {bad.size} values differ; largest difference "
                           f"{np.max(np.abs(got - want)):.3g}")


def check_demo(tmp, dtype, mode):
    out2d, out1d = os.path.join(tmp, "d2.fits"), os.path.join(tmp, "d1.fits")
    text = run("--demo", "--dtype", dtype, "--mode", mode, "--out", out2d, "--out-1d", out1d)
    assert "agree: yes" in text, text
    np_dtype = DTYPES[dtype]
    deltas = np.zeros((2048, 2048), dtype=np_dtype)
    deltas[8::16, 8::16] = 1
    x, y = np.meshgrid(np.linspace(-2, 2, 15), np.linspace(-2, 2, 15))
    dst = np.sqrt(x * x + y * y)
    gauss = np.exp(-((dst - 0.0) ** 2 / (2.0 * 1.0 ** 2))).astype(np_dtype)
    want2d = convolve2d(deltas, gauss, mode=mode)
    got2d = fits.getdata(out2d)
    assert got2d.shape == want2d.shape
    assert np.allclose(got2d, want2d, rtol=1e-5, atol=1e-8), \
        f"2D: largest difference {np.max(np.abs(got2d - want2d)):.3g}"
    want1d = np.convolve(deltas.ravel(), gauss.diagonal())
    got1d = fits.getdata(out1d).ravel()
    assert got1d.shape == want1d.shape
    assert np.allclose(got1d, want1d, rtol=1e-5, atol=1e-8), \
        f"1D: largest difference {np.max(np.abs(got1d - want1d)):.3g}"


def main():
    tap = Tap()
    if np is None:
        tap.skip("convolve-scipy", f"NumPy/SciPy/astropy not importable ({MISSING})")
        return tap.done()
    seed = int(os.environ.get("SKYSIFT_TEST_SEED", random.randrange(1, 1 << 30)))
    print(f"# random inputs from seed {seed} (SKYSIFT_TEST_SEED={seed} replays them)")
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in ("f32", "f64"):
            for mode in ("full", "same", "valid"):
                for kind, path, kshape in (("rank1", "auto", (7, 4)), ("rank1", "direct", (5, 9)),
                                           ("box", "separable", (3, 3)),
                                           ("random", "auto", (6, 5)),
                                           ("random", "direct", (4, 8))):
                    shape = (int(rng.integers(20, 90)), int(rng.integers(20, 90)))
                    tap.check(f"convolve2d/{dtype}/{mode}/{kind}-{kshape[0]}x{kshape[1]}/{path}",
                              check_case, tmp, rng, dtype, mode, kind, path, shape, kshape)
            tap.check(f"convolve2d/{dtype}/valid/kernel-larger-than-image", check_case, tmp, rng,
                      dtype, "valid", "random", "auto", (3, 4), (9, 11))
            for mode in ("full", "same"):
                tap.check(f"demo/{dtype}/{mode}/2d-and-1d-against-scipy-and-numpy", check_demo,
                          tmp, dtype, mode)
        tap.check("convolve/separable-path-refuses-rank-2", lambda: expect_refusal(tmp, rng))
    return tap.done()


def expect_refusal(tmp, rng):
    img, k = os.path.join(tmp, "r.fits"), os.path.join(tmp, "rk.fits")
    fits.PrimaryHDU(rng.standard_normal((10, 10))).writeto(img, overwrite=True)
    fits.PrimaryHDU(np.array([[1.0, 0.0], [0.0, 1.0]])).writeto(k, overwrite=True)
    out = os.path.join(tmp, "r_out.fits")
    proc = subprocess.run([CLI, "convolve", img, "--kernel-file", k, "--path", "separable",
                           "--out", out], capture_output=True, text=True)
    assert proc.returncode == 1, proc
    assert "not separable" in proc.stderr, proc.stderr
    assert not os.path.exists(out)


if __name__ == "__main__":
    sys.exit(main())
