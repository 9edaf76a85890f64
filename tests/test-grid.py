#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The core's coordinate grid (sky_wcs_grid) against astropy.wcs, on
headers astropy writes here: SIN and TAN (rotated) equatorial fields, a
galactic CAR field across l = 0, a TAN field across RA = 0, a SIN field
holding the north pole and a TAN field beside the south pole.

For every line the core reports, at every crossing of the image's edges:
astropy's world_to_pixel of the line's value (at the other coordinate
astropy reads at the crossing) lies within 0.1 pixel of the crossing, and
astropy finds the same number of crossings on each edge by its own scan;
every label parses (astropy.coordinates.Angle) back to its line's value;
every point of every drawn path lies within 0.1 pixel of its line by the
same measure; the compass's north and east agree with astropy's to 0.01
radian.

An all-sky Aitoff map in galactic coordinates and a rotated ZEA field
holding the south pole are held to the same checks.

Usage: test-grid.py SKY-GEOMETRY-DUMP"""
import json
import os
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

try:
    import numpy as np
    from astropy.coordinates import Angle
    from astropy.io import fits
    from astropy.wcs import WCS, FITSFixedWarning
    import astropy.units as u
    MISSING = None
except ImportError as e:
    MISSING = f"needs numpy and astropy: {e}"

DUMP = sys.argv[1] if len(sys.argv) > 1 else "sky-geometry-dump"
TOL_PX = 0.1

# name: (NAXIS1, NAXIS2, header cards)
CASES = {
    "SIN, the Galactic Centre": (300, 240, {
        "CTYPE1": "RA---SIN", "CTYPE2": "DEC--SIN", "CRVAL1": 266.4, "CRVAL2": -28.9,
        "CRPIX1": 150.5, "CRPIX2": 120.5, "CDELT1": -0.01, "CDELT2": 0.01,
        "RADESYS": "FK5", "EQUINOX": 2000.0}),
    "TAN, rotated 30 degrees": (256, 256, {
        "CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 150.1, "CRVAL2": 2.2,
        "CRPIX1": 128.5, "CRPIX2": 120.0,
        "CD1_1": -0.002 * np.cos(np.radians(30)), "CD1_2": 0.002 * np.sin(np.radians(30)),
        "CD2_1": 0.002 * np.sin(np.radians(30)), "CD2_2": 0.002 * np.cos(np.radians(30)),
        "RADESYS": "ICRS"}),
    "CAR, galactic, across l = 0": (360, 180, {
        "CTYPE1": "GLON-CAR", "CTYPE2": "GLAT-CAR", "CRVAL1": 0.0, "CRVAL2": 0.0,
        "CRPIX1": 180.5, "CRPIX2": 90.5, "CDELT1": -0.025, "CDELT2": 0.025}),
    "TAN across RA = 0": (200, 200, {
        "CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 0.3, "CRVAL2": 10.0,
        "CRPIX1": 100.5, "CRPIX2": 100.5, "CDELT1": -0.02, "CDELT2": 0.02,
        "RADESYS": "ICRS"}),
    "SIN holding the north pole": (240, 240, {
        "CTYPE1": "RA---SIN", "CTYPE2": "DEC--SIN", "CRVAL1": 40.0, "CRVAL2": 88.5,
        "CRPIX1": 120.5, "CRPIX2": 120.5, "CDELT1": -0.03, "CDELT2": 0.03,
        "RADESYS": "ICRS"}),
    "TAN beside the south pole": (240, 200, {
        "CTYPE1": "RA---TAN", "CTYPE2": "DEC--TAN", "CRVAL1": 300.0, "CRVAL2": -86.0,
        "CRPIX1": 120.5, "CRPIX2": 100.5, "CDELT1": -0.02, "CDELT2": 0.02,
        "RADESYS": "ICRS"}),
    "AIT, the whole sky in galactic": (360, 180, {
        "CTYPE1": "GLON-AIT", "CTYPE2": "GLAT-AIT", "CRVAL1": 0.0, "CRVAL2": 0.0,
        "CRPIX1": 180.5, "CRPIX2": 90.5, "CDELT1": -1.0, "CDELT2": 1.0}),
    "ZEA holding the south pole, rotated": (200, 200, {
        "CTYPE1": "RA---ZEA", "CTYPE2": "DEC--ZEA", "CRVAL1": 80.0, "CRVAL2": -89.0,
        "CRPIX1": 100.5, "CRPIX2": 100.5, "CROTA2": 25.0, "CDELT1": -0.05, "CDELT2": 0.05,
        "RADESYS": "ICRS"}),
}


def write_case(folder, name, nx, ny, cards):
    header = fits.Header()
    for k, v in cards.items():
        header[k] = v
    path = os.path.join(folder, name.split(",")[0].replace(" ", "_") + f"_{len(os.listdir(folder))}.fits")
    fits.PrimaryHDU(np.zeros((ny, nx), np.float32), header).writeto(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FITSFixedWarning)
        wcs = WCS(fits.getheader(path))
    return path, wcs


def wrap180(d):
    return (np.asarray(d) + 180.0) % 360.0 - 180.0


def off_line(wcs, axis, value, x, y):
    """Pixel distance from (x, y) to astropy's pixel of the line's value at
    the other coordinate astropy reads at (x, y)."""
    lng, lat = wcs.all_pix2world(np.atleast_1d(x), np.atleast_1d(y), 0)
    if axis == 1:
        px, py = wcs.all_world2pix(lng, np.full_like(lng, value), 0)
        return np.hypot(px - x, py - y)
    # A meridian on an all-sky map's seam is its left and its right border:
    # a hair either side of its value lands on each.
    d = None
    for nudge in (0.0, -1e-7, 1e-7):
        px, py = wcs.all_world2pix(np.full_like(lat, value + nudge), lat, 0)
        dn = np.hypot(px - x, py - y)
        d = dn if d is None else np.minimum(d, dn)
    return d


def edge_points(rect, edge, s):
    x0, y0, x1, y1 = rect
    if edge == "x0":
        return np.full_like(s, x0), y0 + s * (y1 - y0)
    if edge == "x1":
        return np.full_like(s, x1), y0 + s * (y1 - y0)
    if edge == "y0":
        return x0 + s * (x1 - x0), np.full_like(s, y0)
    return x0 + s * (x1 - x0), np.full_like(s, y1)


def astropy_crossings(wcs, rect, edge, axis, value, n=20001):
    """Sign changes of the line's offset along the edge, astropy's alone."""
    x, y = edge_points(rect, edge, np.linspace(0, 1, n))
    lng, lat = wcs.all_pix2world(x, y, 0)
    f = wrap180(lng - value) if axis == 0 else lat - value
    ok = np.isfinite(f[:-1]) & np.isfinite(f[1:]) & (np.abs(f[:-1]) < 90) & (np.abs(f[1:]) < 90)
    return int(np.sum(ok & ((f[:-1] < 0) != (f[1:] < 0))))


def label_degrees(text, hours):
    t = text.replace("°", "d").replace("′", "m").replace("″", "s")
    return Angle(t, unit=u.hourangle if hours else u.deg).degree


def check_case(name, folder):
    nx, ny, cards = CASES[name]
    path, wcs = write_case(folder, name, nx, ny, cards)
    out = subprocess.run([DUMP, "grid", path], capture_output=True, text=True, check=True)
    g = json.loads(out.stdout)
    lines, rect = g["lines"], g["rect"]
    meridians = [ln for ln in lines if ln["axis"] == 0]
    parallels = [ln for ln in lines if ln["axis"] == 1]
    assert len(meridians) >= 2 and len(parallels) >= 2, f"{len(meridians)} meridians, {len(parallels)} parallels"
    print(f"# {name}: steps {g['step'][0] * (240 if g['lng_hours'] else 1):g}"
          f"{'s' if g['lng_hours'] else ' deg'}, {g['step'][1]:g} deg; "
          f"{len(meridians)} + {len(parallels)} lines, {len(g['crossings'])} crossings, "
          f"{len(g['paths'])} paths; pole {g['pole']}")
    print("#   labels: " + ", ".join(ln["text"] for ln in lines))

    worst = 0.0
    for c in g["crossings"]:
        ln = lines[c["line"]]
        d = float(off_line(wcs, ln["axis"], ln["value"], c["x"], c["y"])[0])
        worst = max(worst, d)
        assert d < TOL_PX, f"{ln['text']} on edge {c['edge']} at ({c['x']:.3f}, {c['y']:.3f}): {d:.4f} px from astropy's"
        on_edge = {"x0": abs(c["x"] - rect[0]), "x1": abs(c["x"] - rect[2]),
                   "y0": abs(c["y"] - rect[1]), "y1": abs(c["y"] - rect[3])}[c["edge"]]
        assert on_edge < 1e-9, f"crossing off its edge by {on_edge}"
    print(f"#   crossings: worst {worst:.2e} px from astropy's world_to_pixel")

    for i, ln in enumerate(lines):
        for edge in ("x0", "x1", "y0", "y1"):
            ours = sum(1 for c in g["crossings"] if c["line"] == i and c["edge"] == edge)
            theirs = astropy_crossings(wcs, rect, edge, ln["axis"], ln["value"])
            assert ours == theirs, f"{ln['text']} crosses edge {edge} {ours} times here, {theirs} by astropy"

    for ln in lines:
        v = label_degrees(ln["text"], g["lng_hours"] and ln["axis"] == 0)
        diff = abs(wrap180(v - ln["value"])) if ln["axis"] == 0 else abs(v - ln["value"])
        assert diff < 1e-9, f"label {ln['text']} reads {v!r}, the line is at {ln['value']!r}"

    worst = 0.0
    npts = 0
    for p in g["paths"]:
        ln = lines[p["line"]]
        x, y = np.array(p["x"]), np.array(p["y"])
        npts += len(x)
        assert np.all((x >= rect[0] - 1e-9) & (x <= rect[2] + 1e-9) & (y >= rect[1] - 1e-9) & (y <= rect[3] + 1e-9)), \
            f"{ln['text']}: a path point outside the image"
        d = off_line(wcs, ln["axis"], ln["value"], x, y)
        worst = max(worst, float(np.max(d)))
        assert np.all(d < TOL_PX), f"{ln['text']}: a path point {np.max(d):.4f} px off the line"
    print(f"#   paths: {npts} points, worst {worst:.2e} px off their lines")

    cx, cy = 0.5 * (rect[0] + rect[2]), 0.5 * (rect[1] + rect[3])
    lng, lat = wcs.all_pix2world([cx], [cy], 0)
    d = 1 / 3600
    nx_, ny_ = wcs.all_world2pix(lng, lat + d, 0)
    ex, ey = wcs.all_world2pix(lng + d / np.cos(np.radians(lat)), lat, 0)
    for key, (px, py) in (("north", (nx_[0] - cx, ny_[0] - cy)), ("east", (ex[0] - cx, ey[0] - cy))):
        if key not in g:
            raise AssertionError(f"no {key} vector at the centre")
        ang = np.arctan2(py, px) - np.arctan2(g[key][1], g[key][0])
        ang = abs((ang + np.pi) % (2 * np.pi) - np.pi)
        assert ang < 0.01, f"{key} differs from astropy's by {ang:.4f} rad"
    return g


def main():
    tap = Tap()
    if MISSING:
        tap.skip("grid against astropy", MISSING)
        return tap.done()
    with tempfile.TemporaryDirectory() as folder:
        results = {}

        def run(name):
            results[name] = check_case(name, folder)

        for name in CASES:
            tap.check(f"grid: {name}", run, name)

        def ra_zero():
            g = results.get("TAN across RA = 0")
            if g is None:
                raise Skip("its case failed")
            texts = [ln["text"] for ln in g["lines"] if ln["axis"] == 0]
            assert "0h00m" in texts or "0h" in texts, f"no line at RA 0: {texts}"
            assert any(c["line"] == [ln["text"] for ln in g["lines"]].index(t) for c in g["crossings"]
                       for t in texts if t.startswith("0h")), "the RA 0 line crosses no edge"
            values = sorted(ln["value"] for ln in g["lines"] if ln["axis"] == 0)
            assert values[0] == 0.0 and values[-1] > 350, f"RA values {values}: not both sides of 0"

        def pole():
            g = results.get("SIN holding the north pole")
            if g is None:
                raise Skip("its case failed")
            assert g["pole"] == 1, f"pole_inside {g['pole']}"
            meridians = [ln for ln in g["lines"] if ln["axis"] == 0]
            assert abs(len(meridians) * g["step"][0] - 360) < 1e-9, \
                f"{len(meridians)} meridians at {g['step'][0]} deg: not the whole circle"
            crossing = {c["line"] for c in g["crossings"]}
            missing = [ln["text"] for i, ln in enumerate(g["lines"]) if ln["axis"] == 0 and i not in crossing]
            assert not missing, f"meridians that reach no edge: {missing}"
            g2 = results.get("TAN beside the south pole")
            assert g2 is not None and g2["pole"] == 0, "the south field is said to hold its pole"

        def galactic():
            g = results.get("CAR, galactic, across l = 0")
            if g is None:
                raise Skip("its case failed")
            assert not g["lng_hours"], "galactic longitudes labelled in hours"
            texts = [ln["text"] for ln in g["lines"]]
            assert "0°" in texts and any(t.startswith("35") for t in texts), texts

        tap.check("grid: RA = 0 has a line, labels 0h, both sides", ra_zero)
        tap.check("grid: every meridian meets at the north pole", pole)
        tap.check("grid: galactic in degrees across l = 0", galactic)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
