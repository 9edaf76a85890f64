#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli background against SEP, computed here at test time: on every
shared image (the first plane of a cube) and on generated fields with
gradients, odd sizes, blank regions, scaled integers and crowded boxes, the
background and rms maps must lie within 1% of SEP's rms of SEP's maps at
every non-blank pixel, sep.Background(data, mask=~isfinite(data), bw=bh=box,
fw=fh=filter), and be finite everywhere. The maps carry the input's WCS.

SEP gets the pixels skysift reads: BSCALE and BZERO applied in double and
rounded to float32 once, as cfitsio does (astropy's float32 scaling of an
integer image can differ in the last bit, and the histogram mode may move a
pixel to the next bin for it). Where both see the same pixels the maps come
out bit-identical; each check prints the share of identical pixels.

Environment: SKYSIFT_CLI, SKYSIFT_SHARED_DATA (optional)."""
import glob
import json
import os
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
SHARED = os.environ.get("SKYSIFT_SHARED_DATA", "")
TOLERANCE = 0.01  # of SEP's rms

try:
    import numpy as np
    from astropy.io import fits
    from astropy.wcs import WCS
    import sep
    MISSING = None
except ImportError as e:  # the checks below say why they skip
    MISSING = f"needs numpy, astropy and sep (python3-sep): {e}"

warnings.simplefilter("ignore")  # non-standard cards in the shared files


def image_hdu(hdul):
    for hdu in hdul:
        if hdu.header.get("NAXIS", 0) >= 2 and hdu.data is not None:
            return hdu
    raise AssertionError("no image HDU")


def load_as_skysift(path, plane=0):
    """An image plane (the first by default), degenerate axes dropped,
    scaled in double and rounded to float32 once, blanks (BLANK, NaN, Inf)
    as NaN."""
    with fits.open(path, do_not_scale_image_data=True) as hdul:
        hdu = image_hdu(hdul)
        raw = np.asarray(hdu.data)
        hdr = hdu.header
        data = raw.astype(np.float64) * hdr.get("BSCALE", 1.0) + hdr.get("BZERO", 0.0)
        if raw.dtype.kind in "iu" and "BLANK" in hdr:
            data[raw == hdr["BLANK"]] = np.nan
    data = np.squeeze(data.astype(np.float32))
    if data.ndim > 2:
        data = data.reshape((-1,) + data.shape[-2:])[plane]
    data[~np.isfinite(data)] = np.nan
    return data


def run_background(image, tmp, box=64, filt=3, extra=()):
    bkg = os.path.join(tmp, "bkg.fits")
    rms = os.path.join(tmp, "rms.fits")
    js = os.path.join(tmp, "bkg.json")
    proc = subprocess.run([CLI, "background", image, "--out-bkg", bkg, "--out-rms", rms,
                           "--json", js, "--bkg-box", str(box), "--bkg-filter", str(filt),
                           "--quiet", *extra], capture_output=True, text=True)
    assert proc.returncode == 0, f"skysift-cli failed ({proc.returncode}): {proc.stderr}"
    with fits.open(bkg) as h:
        b = h[0].data.astype(np.float32)
        header = h[0].header.copy()
    with fits.open(rms) as h:
        r = h[0].data.astype(np.float32)
    with open(js) as f:
        summary = json.load(f)
    return b, r, header, summary


def compare_with_sep(image, box=64, filt=3, plane=None):
    data = load_as_skysift(image, plane or 0)
    extra = ("--plane", str(plane)) if plane is not None else ()
    with tempfile.TemporaryDirectory() as tmp:
        b, r, _, summary = run_background(image, tmp, box, filt, extra)
    blank = ~np.isfinite(data)
    ref = sep.Background(np.ascontiguousarray(data), mask=blank, bw=box, bh=box, fw=filt,
                         fh=filt)
    sb, sr = ref.back(), ref.rms()
    assert b.shape == data.shape and r.shape == data.shape, \
        f"maps {b.shape}, {r.shape} for an image of {data.shape}"
    assert np.isfinite(b).all() and np.isfinite(r).all(), \
        f"{np.sum(~np.isfinite(b))} background and {np.sum(~np.isfinite(r))} rms pixels not finite"
    good = ~blank
    if not good.any():
        return
    # |SEP's rms|: its spline can ring below zero between crowded boxes.
    scale = np.abs(sr[good].astype(np.float64))
    bound = TOLERANCE * scale
    db = np.abs(b[good].astype(np.float64) - sb[good])
    dr = np.abs(r[good].astype(np.float64) - sr[good])
    same_b = np.mean(b[good] == sb[good])
    same_r = np.mean(r[good] == sr[good])
    with np.errstate(divide="ignore", invalid="ignore"):
        eb, er = np.nanmax(db / scale), np.nanmax(dr / scale)
    print(f"# {os.path.basename(image)} {data.shape[1]}x{data.shape[0]} box {box} filter {filt}: "
          f"max |diff|/|rms| background {eb:.3g}, rms {er:.3g}; identical pixels "
          f"{100 * same_b:.2f}% and {100 * same_r:.2f}%; SEP's rms <= 0 at {np.sum(scale == 0) + np.sum(sr[good] < 0)} pixels")
    worst = np.argmax(db - bound)
    assert db[worst] <= bound[worst], (
        f"background off by {db[worst]:.6g} at a pixel where SEP's rms is {sr[good][worst]:.6g} "
        f"({np.sum(db > bound)} pixels beyond 1%)")
    worst = np.argmax(dr - bound)
    assert dr[worst] <= bound[worst], (
        f"rms off by {dr[worst]:.6g} at a pixel where SEP's rms is {sr[good][worst]:.6g} "
        f"({np.sum(dr > bound)} pixels beyond 1%)")
    gb, gr = summary["global_back"], summary["global_rms"]
    assert abs(gb - ref.globalback) <= TOLERANCE * ref.globalrms, \
        f"global background {gb} against SEP's {ref.globalback}"
    assert abs(gr - ref.globalrms) <= TOLERANCE * ref.globalrms, \
        f"global rms {gr} against SEP's {ref.globalrms}"


def shared_images():
    if not SHARED or not os.path.isdir(SHARED):
        return []
    return sorted(glob.glob(os.path.join(SHARED, "*.fits"))
                  + glob.glob(os.path.join(SHARED, "external", "*.fits")))


# ---------------------------------------------------------- generated fields

def add_sources(rng, img, n, peak, sigma):
    ny, nx = img.shape
    yy, xx = np.mgrid[0:ny, 0:nx]
    for _ in range(n):
        cx, cy = rng.uniform(0, nx), rng.uniform(0, ny)
        s = rng.uniform(0.5, 1.5) * sigma
        r = int(5 * s) + 1
        x0, x1 = max(0, int(cx) - r), min(nx, int(cx) + r + 1)
        y0, y1 = max(0, int(cy) - r), min(ny, int(cy) + r + 1)
        img[y0:y1, x0:x1] += rng.uniform(0.1, 1.0) * peak * np.exp(
            -((xx[y0:y1, x0:x1] - cx) ** 2 + (yy[y0:y1, x0:x1] - cy) ** 2) / (2 * s * s))


def gradient_field(rng, ny, nx, noise):
    yy, xx = np.mgrid[0:ny, 0:nx].astype(np.float64)
    return 100 + 0.05 * xx - 0.03 * yy + 2e-5 * (xx - nx / 2) ** 2 + rng.normal(0, noise, (ny, nx))


def write(path, data, **cards):
    hdu = fits.PrimaryHDU(data)
    for k, v in cards.items():
        hdu.header[k] = v
    hdu.writeto(path, overwrite=True)
    return path


def generated_cases(tmp, rng):
    """(name, path, box, filter) of fields made for this run."""
    cases = []

    img = gradient_field(rng, 777, 1000, 5.0)
    add_sources(rng, img, 300, 400, 2.0)
    img[200:390, 300:460] = np.nan                  # whole boxes blank: filled in
    img[rng.random(img.shape) < 0.01] = np.nan      # scattered blanks
    img[:, :70] = np.nan                            # a blank edge column of boxes
    cases.append(("gradient 1000x777 with blank regions",
                  write(os.path.join(tmp, "gradient.fits"), img.astype(np.float32)), 64, 3))

    img = gradient_field(rng, 2049, 513, 2.0)
    add_sources(rng, img, 400, 200, 1.5)
    cases.append(("odd size 513x2049, box 50, filter 5",
                  write(os.path.join(tmp, "odd.fits"), img.astype(np.float32)), 50, 5))

    img = gradient_field(rng, 30, 40, 1.0)
    cases.append(("smaller than one box (40x30)",
                  write(os.path.join(tmp, "tiny.fits"), img.astype(np.float32)), 64, 3))

    img = gradient_field(rng, 60, 300, 1.0)
    add_sources(rng, img, 10, 50, 2.0)
    cases.append(("one row of boxes (300x60)",
                  write(os.path.join(tmp, "onerow.fits"), img.astype(np.float32)), 64, 3))

    img = gradient_field(rng, 300, 45, 1.0)
    cases.append(("one column of boxes (45x300), box 32, no filter",
                  write(os.path.join(tmp, "onecol.fits"), img.astype(np.float32)), 32, 1))

    img = gradient_field(rng, 400, 600, 3.0)
    add_sources(rng, img, 3000, 300, 1.5)           # crowded: medians, not modes
    cases.append(("crowded 600x400, box 24", write(os.path.join(tmp, "crowded.fits"),
                                                   img.astype(np.float32)), 24, 3))

    img = gradient_field(rng, 500, 700, 4.0)
    add_sources(rng, img, 200, 3000, 2.0)
    scale, zero = 0.37, 1500.0
    raw = np.clip(np.round((img - zero) / scale), -32767, 32767).astype(np.int16)
    raw[100:110, 50:600] = -32768
    cases.append(("int16 with BSCALE, BZERO and BLANK (700x500)",
                  write(os.path.join(tmp, "scaled.fits"), raw, BSCALE=scale, BZERO=zero,
                        BLANK=-32768), 64, 3))

    img = gradient_field(rng, 333, 257, 0.5).astype(np.float32)
    cases.append(("small boxes (257x333, box 7, filter 3)",
                  write(os.path.join(tmp, "smallbox.fits"), img), 7, 3))
    return cases


# -------------------------------------------------------------- WCS, errors

def check_wcs_carried(image):
    data = load_as_skysift(image)
    with fits.open(image) as hdul:
        hin = image_hdu(hdul).header.copy()
    with tempfile.TemporaryDirectory() as tmp:
        _, _, hout, _ = run_background(image, tmp)
    assert hout["NAXIS1"] == data.shape[1] and hout["NAXIS2"] == data.shape[0]
    assert hout.get("BITPIX") == -32
    assert hout.get("BUNIT") == hin.get("BUNIT"), \
        f"BUNIT {hout.get('BUNIT')!r} != {hin.get('BUNIT')!r}"
    win, wout = WCS(hin).celestial, WCS(hout).celestial
    assert win.has_celestial and wout.has_celestial, "the map has no celestial WCS"
    ny, nx = data.shape
    xs = np.array([0, nx - 1, nx / 2, 17.5])
    ys = np.array([0, ny - 1, ny / 3, 5.25])
    a = np.array(win.wcs_pix2world(xs, ys, 0))
    b = np.array(wout.wcs_pix2world(xs, ys, 0))
    assert np.allclose(a, b, rtol=0, atol=1e-9), f"world coordinates differ: {a} vs {b}"


def check_errors():
    with tempfile.TemporaryDirectory() as tmp:
        missing = os.path.join(tmp, "nope.fits")
        p = subprocess.run([CLI, "background", missing], capture_output=True, text=True)
        assert p.returncode == 1 and "nope.fits" in p.stderr, (p.returncode, p.stderr)
        img = write(os.path.join(tmp, "img.fits"), np.zeros((20, 20), np.float32))
        for opt, value in (("--bkg-filter", "4"), ("--bkg-box", "0"), ("--bkg-box", "x")):
            p = subprocess.run([CLI, "background", img, opt, value], capture_output=True,
                               text=True)
            assert p.returncode == 2 and opt.lstrip("-").split("-")[1] in p.stderr, \
                (opt, value, p.returncode, p.stderr)
        out = os.path.join(tmp, "no-such-dir", "b.fits")
        p = subprocess.run([CLI, "background", img, "--out-bkg", out], capture_output=True,
                           text=True)
        assert p.returncode == 1 and "no-such-dir" in p.stderr, (p.returncode, p.stderr)
        assert sorted(os.listdir(tmp)) == ["img.fits"], os.listdir(tmp)


def main():
    tap = Tap()
    images = shared_images()
    if MISSING:
        for name in ["shared images", "generated fields", "WCS carried", "errors"]:
            tap.skip(f"background against SEP: {name}", MISSING)
        return tap.done()
    if not images:
        tap.skip("background against SEP on the shared images",
                 f"no shared data folder (SKYSIFT_SHARED_DATA={SHARED!r})")
    for image in images:
        tap.check(f"background and rms within 1% of SEP's rms: {os.path.basename(image)}",
                  compare_with_sep, image)
    cube = os.path.join(SHARED, "external", "1904-66_SIN_3d.fits") if SHARED else ""
    if os.path.exists(cube):
        tap.check("background and rms within 1% of SEP's rms: plane 2 of a cube (--plane 2)",
                  compare_with_sep, cube, 32, 3, 2)
    else:
        tap.skip("background and rms within 1% of SEP's rms: plane 2 of a cube", "no shared data")
    seed = int(os.environ.get("SKYSIFT_TEST_SEED", int.from_bytes(os.urandom(4), "little")))
    print(f"# generated fields from seed {seed} (SKYSIFT_TEST_SEED={seed} replays them)")
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, box, filt in generated_cases(tmp, rng):
            tap.check(f"background and rms within 1% of SEP's rms: {name}", compare_with_sep,
                      path, box, filt)
    for name in ("gc_like_2048.fits", os.path.join("external", "1904-66_SIN_3d.fits")):
        path = os.path.join(SHARED, name) if SHARED else ""
        if os.path.exists(path):
            tap.check(f"the maps carry the image's WCS and unit: {name}", check_wcs_carried,
                      path)
        else:
            tap.skip(f"the maps carry the image's WCS and unit: {name}", "no shared data")
    tap.check("bad input: a clear message and a non-zero status, no file left", check_errors)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
