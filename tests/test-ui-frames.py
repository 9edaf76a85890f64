#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Frames and the cube animator, as a script drives them: under xvfb-run
and dbus-run-session, through the app's D-Bus actions (frame-new, frame,
frame-next, frame-previous, frame-delete, frame-mode, blink-interval,
frame-lock, cube-play, cube-step, cube-interval, plane), the state's
"frames" and "cube" members checked against astropy.

- WCS lock: two real Galactic Centre maps on different pixel grids
  (Bolocam 640 x 638 and MSX 149 x 149, both GLON-CAR) and a 2MASS map in
  RA/Dec (TAN): after a pan and a zoom of one frame, every other frame's
  centre is within 1 pixel of astropy's world_to_pixel of the moved
  frame's centre (converted between galactic and ICRS by astropy), and
  its zoom gives the same angle per screen pixel (within 1%).
- Image lock: the same pixel centre and zoom.
- Tile, blink, next, previous, delete; the pipeline runs on the current
  frame only.
- A cube (FREQ in Hz, another VRAD in km/s) written with astropy: the
  plane's world value equals astropy's for its pixel, shown in GHz and
  km/s; stepping, the slider's plane, and play/pause.

Needs astropy (Debian's python3-astropy); skips, saying why, without it
or without xvfb-run, dbus-run-session or gdbus. Environment: SKYSIFT_GUI,
SKYSIFT_SHARED_DATA; SKYSIFT_UI_ARTIFACTS (a folder) keeps the
screenshots."""
import importlib.util
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from app_session import app_env, rerun_in_session  # noqa: E402
from taplib import Skip, Tap  # noqa: E402

_spec = importlib.util.spec_from_file_location("ui_e2e", os.path.join(HERE, "test-ui-e2e.py"))
e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(e2e)
App, gv_string, need, read_png = e2e.App, e2e.gv_string, e2e.need, e2e.read_png



def outer(tap):
    try:
        import astropy  # noqa: F401
    except ImportError:
        tap.skip("frames under Xvfb", "astropy is not installed (python3-astropy)")
        return tap.done()
    return rerun_in_session(tap, __file__, "frames under Xvfb")


def wait_plane(app, plane, timeout=20):
    """The state once the app is idle showing that plane, or after timeout
    seconds: a step's effect is waited for, not assumed after one idle
    wait, and the caller's assertion still says which plane was shown."""
    t0 = time.monotonic()
    st = app.wait_idle(first=0.3)
    while st["cube"]["plane"] != plane and time.monotonic() - t0 < timeout:
        st = app.wait_idle(first=0.2)
    return st


def write_cube(path, ctype3, cunit3, crval3, cdelt3, nz=8, n=64):
    """A small RA/Dec cube whose plane k holds a Gaussian blob moving
    across the field (so that the planes look different)."""
    import numpy as np
    from astropy.io import fits
    yy, xx = np.mgrid[0:n, 0:n]
    data = np.zeros((nz, n, n), np.float32)
    rng = np.random.default_rng(3)
    for k in range(nz):
        cx = 10 + k * (n - 20) / max(nz - 1, 1)
        data[k] = np.exp(-((xx - cx) ** 2 + (yy - n / 2) ** 2) / 18.0) * 10
        data[k] += rng.normal(0, 0.3, (n, n))
    h = fits.Header()
    h.update(CTYPE1="RA---SIN", CTYPE2="DEC--SIN", CRVAL1=266.4, CRVAL2=-28.9,
             CRPIX1=n / 2, CRPIX2=n / 2, CDELT1=-0.001, CDELT2=0.001, CUNIT1="deg",
             CUNIT2="deg", CTYPE3=ctype3, CUNIT3=cunit3, CRVAL3=crval3, CDELT3=cdelt3,
             CRPIX3=1.0, BUNIT="Jy/beam")
    fits.PrimaryHDU(data, h).writeto(path, overwrite=True)


def plane_world(path, plane):
    """astropy's world value of plane (0-based) along the third axis, in
    the SI unit wcsset gives, at the reference pixel of the others."""
    from astropy.io import fits
    from astropy.wcs import WCS
    w = WCS(fits.getheader(path))
    w.wcs.set()
    pix = [[w.wcs.crpix[0], w.wcs.crpix[1], plane + 1]]
    return float(w.wcs_pix2world(pix, 1)[0][2]), w.wcs.cunit[2]


def write_radio_cube(path, nfreq=4, n=48):
    """RA, Dec, STOKES (one pixel), FREQ (nfreq planes), as CASA writes."""
    import numpy as np
    from astropy.io import fits
    rng = np.random.default_rng(5)
    data = rng.normal(0, 1, (nfreq, 1, n, n)).astype(np.float32)
    h = fits.Header()
    h.update(CTYPE1="RA---SIN", CTYPE2="DEC--SIN", CRVAL1=83.6, CRVAL2=22.0, CRPIX1=n / 2,
             CRPIX2=n / 2, CDELT1=-0.0005, CDELT2=0.0005, CUNIT1="deg", CUNIT2="deg",
             CTYPE3="STOKES", CRVAL3=1.0, CDELT3=1.0, CRPIX3=1.0,
             CTYPE4="FREQ", CUNIT4="Hz", CRVAL4=9.8e10, CDELT4=-3.9e6, CRPIX4=2.0)
    fits.PrimaryHDU(data, h).writeto(path, overwrite=True)


def radio_plane_world(path, plane):
    """astropy's frequency of plane (0-based) of write_radio_cube's file."""
    from astropy.io import fits
    from astropy.wcs import WCS
    w = WCS(fits.getheader(path))
    pix = [[w.wcs.crpix[0], w.wcs.crpix[1], 1, plane + 1]]
    return float(w.wcs_pix2world(pix, 1)[0][3])


def sky_of(path, x1, y1):
    """The SkyCoord of FITS pixel (x1, y1) (from 1) of path's image."""
    from astropy.io import fits
    from astropy.wcs import WCS
    from astropy.wcs.utils import pixel_to_skycoord
    w = WCS(fits.getheader(path)).celestial
    return pixel_to_skycoord(x1 - 1, y1 - 1, w, origin=0)


def pixel_of(path, coord):
    """FITS pixel (from 1) of coord in path's image, by astropy."""
    from astropy.io import fits
    from astropy.wcs import WCS
    from astropy.wcs.utils import skycoord_to_pixel
    w = WCS(fits.getheader(path)).celestial
    x, y = skycoord_to_pixel(coord, w, origin=0)
    return float(x) + 1, float(y) + 1


def scale_at(path, x1, y1):
    """The angle of a pixel's step along each axis there, geometric mean,
    degrees (as the lock reads it)."""
    a = sky_of(path, x1, y1)
    bx = sky_of(path, x1 + 1, y1)
    by = sky_of(path, x1, y1 + 1)
    return math.sqrt(a.separation(bx).deg * a.separation(by).deg)


def write_resampled(src_path, path, n=640, factor=1.6):
    """src_path's sky on another grid: TAN instead of SIN, pixels factor
    times larger, centred 150 and -100 source pixels away from its centre
    and off its own reference pixel (bilinear, astropy's WCS both ways)."""
    import numpy as np
    from astropy.io import fits
    from astropy.wcs import WCS
    from scipy.ndimage import map_coordinates
    with fits.open(src_path) as hdul:
        data = hdul[0].data.astype(np.float32)
        w0 = WCS(hdul[0].header).celestial
    ny, nx = data.shape
    w1 = WCS(naxis=2)
    w1.wcs.ctype = ["RA---TAN", "DEC--TAN"]
    w1.wcs.crval = w0.wcs_pix2world([[nx / 2 + 150, ny / 2 - 100]], 0)[0]
    w1.wcs.crpix = [n / 2 - 30, n / 2 + 20]
    step = abs(w0.wcs.cdelt[1]) * factor
    w1.wcs.cdelt = [-step, step]
    w1.wcs.radesys, w1.wcs.equinox = w0.wcs.radesys, w0.wcs.equinox
    yy, xx = np.mgrid[0:n, 0:n]
    px, py = w0.wcs_world2pix(*w1.wcs_pix2world(xx, yy, 0), 0)
    out = map_coordinates(data, [py, px], order=1, cval=np.nan).astype(np.float32)
    fits.PrimaryHDU(out, w1.to_header()).writeto(path, overwrite=True)


def tile_correlation(png, shift=0):
    """Spearman's correlation of the two tiles' pictures in a screenshot of
    two frames tiled side by side with the second current: its tile is the
    box outlined in the current-frame blue, the first the same box one tile
    to the left; shift moves the second's crop right by that many pixels."""
    import numpy as np
    from scipy.stats import spearmanr
    w, h, rows = read_png(png)
    rgb = np.array(rows, dtype=np.int16)
    blue = np.all(np.abs(rgb - np.array([53, 132, 228])) <= 2, axis=2)
    # The outline's sides are long lines (a button of that blue is not).
    xs = np.nonzero(blue.sum(axis=0) > 150)[0]
    ys = np.nonzero(blue.sum(axis=1) > 150)[0]
    assert len(xs) >= 2 and len(ys) >= 2, "no current-frame outline in the screenshot"
    x0, x1, y0, y1 = xs.min(), xs.max(), ys.min(), ys.max()
    lum = rgb @ np.array([0.299, 0.587, 0.114])
    inset = 8
    cur = lum[y0 + inset:y1 - inset, x0 + inset + shift:x1 - inset + shift]
    width = x1 - x0 + 1
    gap = 2
    left = x0 - width - gap
    assert left >= 0, (x0, width)
    other = lum[y0 + inset:y1 - inset, left + inset:left + width - inset - 1]
    m = min(cur.shape[1], other.shape[1])
    return spearmanr(cur[:, :m].ravel(), other[:, :m].ravel()).correlation, (x0, y0, x1, y1)


def check_wcs_lock(st, moved, report):
    """Every frame's centre within 1 pixel of where astropy puts the moved
    frame's centre, and the same angle per screen pixel."""
    frames = st["frames"]["list"]
    ref = frames[moved - 1]
    centre = sky_of(ref["image"], *ref["center"])
    scale_ref = scale_at(ref["image"], *ref["center"]) / ref["zoom"]
    worst = 0.0
    for f in frames:
        if f["frame"] == moved:
            continue
        x, y = pixel_of(f["image"], centre)
        dx, dy = f["center"][0] - x, f["center"][1] - y
        off = math.hypot(dx, dy)
        worst = max(worst, off)
        scale = scale_at(f["image"], *f["center"]) / f["zoom"]
        report.append(f"frame {f['frame']} ({os.path.basename(f['image'])}): centre "
                      f"({f['center'][0]:.4f}, {f['center'][1]:.4f}), astropy ({x:.4f}, "
                      f"{y:.4f}), off by {off:.2e} px; arcsec per screen pixel "
                      f"{scale * 3600:.4f} vs {scale_ref * 3600:.4f}")
        assert off < 1.0, f"frame {f['frame']} centre is {off:.3f} px from the locked position"
        assert abs(scale / scale_ref - 1) < 0.01, \
            f"frame {f['frame']} shows {scale * 3600:.4f}\"/px, the moved one " \
            f"{scale_ref * 3600:.4f}\"/px"
    return worst


def inner(tap):
    shared = os.environ.get("SKYSIFT_SHARED_DATA", "")
    ext = os.path.join(shared, "external")
    bolocam = os.path.abspath(os.path.join(ext, "gc_bolocam_gps.fits"))
    msx = os.path.abspath(os.path.join(ext, "gc_msx_e.fits"))
    twomass = os.path.abspath(os.path.join(ext, "gc_2mass_k.fits"))
    gc_like = os.path.abspath(os.path.join(shared, "gc_like_2048.fits"))
    work = tempfile.mkdtemp(prefix="skysift-frames-")
    keep = os.environ.get("SKYSIFT_UI_ARTIFACTS")
    env = app_env(work)
    log = open(os.path.join(work, "app.log"), "w")
    app = App(os.environ["SKYSIFT_GUI"], env, log)
    facts = {}
    have_data = all(os.path.exists(p) for p in (bolocam, msx, twomass))

    def screenshot(name):
        path = os.path.join(work, name)
        app.activate("screenshot", gv_string(path))
        app.wait_idle()
        t0 = time.monotonic()
        while not os.path.exists(path) and time.monotonic() - t0 < 10:
            time.sleep(0.1)
        assert os.path.exists(path), f"no screenshot {name}"
        if keep:
            shutil.copy(path, os.path.join(keep, name))
        return path

    def started():
        app.wait_on_bus()
        st = app.wait_idle()
        assert st["frames"]["n"] == 1 and st["frames"]["current"] == 1, st["frames"]
        names = set(app.list_actions())
        wanted = {"frame-new", "frame", "frame-next", "frame-previous", "frame-delete",
                  "frame-mode", "blink-interval", "frame-lock", "cube-play", "cube-step",
                  "cube-interval", "plane"}
        assert wanted <= names, f"missing actions: {sorted(wanted - names)}"
        facts["started"] = True
    tap.check("the app starts with one frame and the frame actions on D-Bus", started)

    def new_frames():
        need(facts.get("started"), "the app did not start")
        if not have_data:
            raise Skip(f"the shared images are not in {ext}")
        app.activate("open", gv_string(bolocam))
        app.activate("frame-new", gv_string(msx))
        st = app.wait_idle()
        fr = st["frames"]
        assert fr["n"] == 2 and fr["current"] == 2, fr
        assert [f["image"] for f in fr["list"]] == [bolocam, msx], fr["list"]
        assert st["image"] == msx, st["image"]
        assert "<2>" in app.describe("frame"), app.describe("frame")
        # A new frame whose image cannot be opened is no frame, and the
        # next open replaces the current frame's image as ever.
        missing = os.path.join(work, "no-such-image.fits")
        app.activate("frame-new", gv_string(missing))
        st = app.wait_idle()
        assert "no-such-image.fits" in st["last_error"] and st["frames"]["n"] == 2, st["frames"]
        app.activate("open", gv_string(bolocam))
        st = app.wait_idle()
        assert st["frames"]["n"] == 2 and st["frames"]["list"][1]["image"] == bolocam, st["frames"]
        app.activate("open", gv_string(msx))
        st = app.wait_idle()
        assert [f["image"] for f in st["frames"]["list"]] == [bolocam, msx], st["frames"]
        facts["two"] = True
    tap.check("app.frame-new opens an image into a new frame, which becomes current",
              new_frames)

    def wcs_lock():
        need(facts.get("two"), "no two frames")
        app.activate("frame-mode", gv_string("tile"))
        app.activate("frame-lock", gv_string("wcs"))
        app.activate("pan", "(70.0, 60.0)")
        app.activate("zoom", "3.0")
        st = app.wait_idle(first=0.5)
        assert st["frames"]["lock"] == "wcs" and st["frames"]["mode"] == "tile", st["frames"]
        assert all(f["visible"] for f in st["frames"]["list"]), st["frames"]["list"]
        report = []
        worst = check_wcs_lock(st, 2, report)
        # The other way: frame 1 current, moved, frame 2 follows.
        app.activate("frame", "1")
        app.activate("pan", "(400.0, 300.0)")
        app.activate("zoom", "1.5")
        st = app.wait_idle(first=0.5)
        assert st["frames"]["current"] == 1 and st["image"] == bolocam, st["frames"]
        worst = max(worst, check_wcs_lock(st, 1, report))
        # A third frame in another system (RA/Dec, TAN) joins where the others look.
        app.activate("frame-new", gv_string(twomass))
        st = app.wait_idle(first=0.5)
        assert st["frames"]["n"] == 3, st["frames"]
        app.activate("pan", "(300.0, 400.0)")
        app.activate("zoom", "0.8")
        st = app.wait_idle(first=0.5)
        worst = max(worst, check_wcs_lock(st, 3, report))
        for line in report:
            print(f"# {line}")
        print(f"# WCS lock: the largest distance from astropy's position {worst:.2e} px")
        png = screenshot("frames-tile-wcs.png")
        w, h, _ = read_png(png)
        assert w > 600 and h > 400, (w, h)
        facts["lock"] = True
    tap.check("app.frame-lock wcs: a pan and zoom of one frame moves the others to the same "
              "sky position (within 1 px of astropy) and angular scale (1%), across "
              "galactic and ICRS", wcs_lock)

    def image_lock():
        need(facts.get("lock"), "the WCS lock failed")
        app.activate("frame-lock", gv_string("image"))
        app.activate("frame", "2")
        app.activate("pan", "(50.0, 40.0)")
        app.activate("zoom", "4.0")
        st = app.wait_idle(first=0.5)
        for f in st["frames"]["list"]:
            assert abs(f["center"][0] - 50) < 1e-6 and abs(f["center"][1] - 40) < 1e-6, f
            assert abs(f["zoom"] - 4) < 1e-9, f
        assert "'image'" in app.describe("frame-lock"), app.describe("frame-lock")
        app.activate("frame-lock", gv_string("none"))
        app.activate("pan", "(20.0, 20.0)")
        st = app.wait_idle(first=0.3)
        others = [f for f in st["frames"]["list"] if f["frame"] != 2]
        assert all(abs(f["center"][0] - 50) < 1e-6 for f in others), \
            "unlocked frames followed a pan"
    tap.check("app.frame-lock image: the same pixel and zoom in every frame; none: they stay",
              image_lock)

    def pipeline_on_current():
        need(facts.get("lock"), "no frames")
        app.activate("frame", "1")
        app.activate("run", gv_string("all"))
        st = app.wait_idle(first=0.5)
        n1 = st["nsources"]
        assert n1 > 0, st
        counts = [f["nsources"] for f in st["frames"]["list"]]
        assert counts[0] == n1 and counts[1] == 0 and counts[2] == 0, counts
        steps = [f["shown_step"] for f in st["frames"]["list"]]
        assert steps == ["measure", "none", "none"], steps
        app.activate("frame", "2")
        st = app.wait_idle(first=0.3)
        assert st["image"] == msx and st["shown_step"] == "none", \
            (st["image"], st["shown_step"])
        assert st["frames"]["list"][0]["shown_step"] == "measure", st["frames"]["list"][0]
        app.activate("frame", "1")
        st = app.wait_idle(first=0.3)
        assert st["image"] == bolocam and st["nsources"] == n1 and st["shown_step"] == "measure", \
            "frame 1's results did not come back with it"
        print(f"# frame 1 keeps its {n1} sources through a switch to frame 2 and back")
    tap.check("the pipeline runs on the current frame, and each frame keeps its results",
              pipeline_on_current)

    def next_previous_delete():
        need(facts.get("lock"), "no frames")
        app.activate("frame", "1")
        app.activate("frame-next")
        st = app.wait_idle(first=0.3)
        assert st["frames"]["current"] == 2, st["frames"]
        app.activate("frame-previous")
        app.activate("frame-previous")
        st = app.wait_idle(first=0.3)
        assert st["frames"]["current"] == 3, f"previous from 1 wraps to 3: {st['frames']}"
        app.activate("frame", "9")
        st = app.wait_idle(first=0.3)
        assert "no such frame" in st["last_error"] and st["frames"]["current"] == 3, \
            st["last_error"]
        app.activate("frame-mode", gv_string("sideways"))
        st = app.wait_idle(first=0.3)
        assert "sideways" in st["last_error"] and st["frames"]["mode"] == "tile", st["last_error"]
        app.activate("frame-delete")
        st = app.wait_idle(first=0.3)
        fr = st["frames"]
        assert fr["n"] == 2 and fr["current"] == 2 and st["image"] == msx, fr
        assert [f["image"] for f in fr["list"]] == [bolocam, msx], fr["list"]
    tap.check("app.frame-next and frame-previous wrap, frame-delete removes the current frame, "
              "a missing frame or mode is refused with a message", next_previous_delete)

    def blink():
        need(facts.get("lock"), "no frames")
        app.activate("blink-interval", "0.3")
        app.activate("frame-mode", gv_string("blink"))
        seen = set()
        t0 = time.monotonic()
        while time.monotonic() - t0 < 4 and len(seen) < 2:
            st = app.state()
            shown = st["frames"]["blink_shown"]
            visible = [f["frame"] for f in st["frames"]["list"] if f["visible"]]
            assert visible == [shown], f"blink shows {visible}, says {shown}"
            seen.add(shown)
            time.sleep(0.1)
        assert seen == {1, 2}, f"the blink showed frames {sorted(seen)}"
        assert st["frames"]["current"] == 2, "blinking changed the current frame"
        screenshot("frames-blink.png")
        app.activate("frame-mode", gv_string("single"))
        st = app.wait_idle(first=0.3)
        visible = [f["frame"] for f in st["frames"]["list"] if f["visible"]]
        assert visible == [2], visible
    tap.check("app.frame-mode blink shows each frame in turn at app.blink-interval; single "
              "shows the current one", blink)

    def cube():
        need(facts.get("started"), "the app did not start")
        freq = os.path.join(work, "cube-freq.fits")
        write_cube(freq, "FREQ", "Hz", 1.4204058e9, 2.5e5)
        app.activate("frame-new", gv_string(freq))
        st = app.wait_idle(first=0.3)
        c = st["cube"]
        assert st["image"] == freq and c["nplanes"] == 8 and c["bar"], c
        for plane in (0, 5):
            if plane:
                app.activate("plane", f"int64 {plane}")
                st = app.wait_idle(first=0.3)
                c = st["cube"]
            value, unit = plane_world(freq, plane)
            assert c["plane"] == plane and c["axis"] == "FREQ" and unit == c["unit"], (c, unit)
            assert abs(c["value"] - value) <= 1e-9 * abs(value), (c["value"], value)
            assert c["shown_unit"] == "GHz" and abs(c["shown"] - value / 1e9) < 1e-12, c
            print(f"# plane {plane}: {c['label']} (astropy {value} {unit})")
        app.activate("cube-step", "1")
        st = wait_plane(app, 6)
        assert st["cube"]["plane"] == 6, st["cube"]
        app.activate("cube-step", "-1")
        app.activate("cube-step", "-1")
        st = wait_plane(app, 4)
        assert st["cube"]["plane"] == 4, st["cube"]
        app.activate("zoom", "6.0")
        st = app.wait_idle(first=0.3)
        zoom = st["zoom"]
        app.activate("cube-interval", "0.2")
        app.activate("cube-play", "true")
        t0 = time.monotonic()
        planes = set()
        while time.monotonic() - t0 < 20:
            st = app.state()
            planes.add(st["cube"]["plane"])
            if st["cube"]["planes_played"] >= 5:
                break
            time.sleep(0.1)
        assert st["cube"]["playing"] and st["cube"]["planes_played"] >= 5, st["cube"]
        screenshot("frames-cube.png")
        app.activate("cube-play", "false")
        st = app.wait_idle(first=0.5)
        stopped = st["cube"]["plane"]
        time.sleep(0.8)
        st = app.wait_idle()
        assert not st["cube"]["playing"] and st["cube"]["plane"] == stopped, st["cube"]
        assert abs(st["zoom"] - zoom) < 1e-9, f"playing refitted the view: {st['zoom']} vs {zoom}"
        print(f"# played {len(planes)} planes ({sorted(planes)}), the zoom kept at {zoom}")
        # Velocity in km/s: wcslib gives m/s, shown as km/s.
        vrad = os.path.join(work, "cube-vrad.fits")
        write_cube(vrad, "VRAD", "km/s", -50.0, 2.5, nz=5)
        app.activate("open", gv_string(vrad + "[1,3]"))
        st = app.wait_idle(first=0.3)
        c = st["cube"]
        value, unit = plane_world(vrad, 3)
        assert c["axis"] == "VRAD" and unit == c["unit"] and c["unit"] == "m/s", (c, unit)
        assert abs(c["value"] - value) < 1e-9 * max(1, abs(value)), (c["value"], value)
        assert c["shown_unit"] == "km/s" and abs(c["shown"] - value / 1e3) < 1e-9, c
        assert "VRAD -42.5 km/s" in c["label"], c["label"]
        print(f"# {c['label']} (astropy {value} {unit})")
        # A radio cube as CASA writes one: RA, Dec, a one-pixel STOKES axis,
        # then frequency: the planes run along the fourth axis.
        stokes = os.path.join(work, "cube-stokes.fits")
        write_radio_cube(stokes)
        app.activate("open", gv_string(stokes + "[1,2]"))
        st = app.wait_idle(first=0.3)
        c = st["cube"]
        value = radio_plane_world(stokes, 2)
        assert c["nplanes"] == 4 and c["axis"] == "FREQ", c
        assert abs(c["value"] - value) <= 1e-9 * value, (c["value"], value)
        print(f"# {c['label']} (astropy {value} Hz, fourth axis)")
        app.activate("cube-play", "true")
        app.activate("frame", "1")
        st = app.wait_idle(first=0.3)
        assert not st["cube"]["bar"] and not st["cube"]["playing"], \
            f"the animator stays for a 2D frame: {st['cube']}"
    tap.check("a cube's animator: the plane's FREQ and VRAD values equal astropy's, in GHz and "
              "km/s; app.plane, cube-step, cube-play and cube-interval over D-Bus", cube)

    def resampled_lock():
        need(facts.get("lock"), "the WCS lock failed")
        if not os.path.exists(gc_like):
            raise Skip(f"{gc_like} is not there")
        other = os.path.join(work, "gc_like_resampled.fits")
        write_resampled(gc_like, other)
        st = app.wait_idle()
        while st["frames"]["n"] > 1:
            app.activate("frame-delete")
            st = app.wait_idle(first=0.3)
        app.activate("cube-play", "false")
        app.activate("open", gv_string(gc_like))
        app.activate("frame-new", gv_string(other))
        app.activate("frame-lock", gv_string("wcs"))
        app.activate("frame-mode", gv_string("tile"))
        app.activate("display", gv_string("stretch=linear"))
        app.activate("display", gv_string("limits=99.5"))
        app.activate("pan", "(300.0, 340.0)")
        app.activate("zoom", "1.0")
        st = app.wait_idle(first=0.5)
        assert [f["image"] for f in st["frames"]["list"]] == [gc_like, other], st["frames"]
        report = []
        check_wcs_lock(st, 2, report)
        for line in report:
            print(f"# {line}")
        time.sleep(0.5)
        png = screenshot("frames-tile-resampled.png")
        same, box = tile_correlation(png)
        moved, _ = tile_correlation(png, shift=12)
        print(f"# the two tiles (current one at {box}): Spearman's correlation {same:.3f} "
              f"as drawn, {moved:.3f} with one moved 12 screen pixels")
        assert same > 0.6 and same > moved + 0.2, (same, moved)
    tap.check("the WCS lock on gc_like_2048 and a copy resampled by astropy on a TAN grid of "
              "1.6x larger pixels: the tiles show the same picture", resampled_lock)

    app.activate("quit")
    try:
        app.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        app.proc.kill()
    log.close()
    with open(os.path.join(work, "app.log")) as f:
        complaints = [line for line in f if "CRITICAL" in line or "WARNING" in line
                      or "Sanitizer" in line or "runtime error:" in line]
    if keep:
        shutil.copy(os.path.join(work, "app.log"), os.path.join(keep, "ui-frames-app.log"))
    tap.check("the app logged no GTK warnings or criticals, nor sanitizer reports",
              lambda: need(not complaints, "".join(complaints[:10])))
    shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    tap = Tap()
    sys.exit(inner(tap) if "--inner" in sys.argv else outer(tap))
