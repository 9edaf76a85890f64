#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The catalogue an astronomer uses, read back by independent readers: sky
positions against astropy.wcs, the CSV with the csv module, the ECSV with
astropy's Table.read, the DS9 regions with the regions package, the
VOTable with astropy.io.votable; int_flux against its formula; headers
without a WCS or a beam.

A synthetic field (skysift-cli synth) makes every check run anywhere; the
shared images (../shared/data: SIN, CAR galactic, TAN and the GC-like field)
add real headers where present. Speaks TAP.

Pixel coordinates in skysift are 0-based; FITS (and astropy's origin=1)
count from 1, so a centroid x, y is FITS pixel x + 1, y + 1."""
import csv
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
SHARED = os.environ.get("SKYSIFT_SHARED_DATA", "")
SOURCE_ROOT = os.environ.get("SKYSIFT_SOURCE_ROOT", ".")

PIXEL_COLUMNS = ["source_id", "x_centroid", "y_centroid", "sum_flux", "npix", "peak_flux",
                 "peak_x", "peak_y", "xmin", "xmax", "ymin", "ymax"]
FLUX_COLUMNS = ["int_flux", "local_rms", "snr"]
EQUATORIAL = ["ra", "dec", "ra_str", "dec_str"]
MAX_ARCSEC = 0.01          # the bound on positions against astropy

try:
    import numpy as np
    from astropy import units as u
    from astropy.coordinates import Angle, SkyCoord
    from astropy.io import fits, votable
    from astropy.table import Table
    from astropy.wcs import WCS
    from astropy.wcs import FITSFixedWarning
    warnings.simplefilter("ignore", FITSFixedWarning)
    ASTROPY = None
except ImportError as e:  # checks skip, saying why
    ASTROPY = f"astropy is not installed ({e}); install python3-astropy"

try:
    import regions
    REGIONS = None
except ImportError as e:
    REGIONS = f"the regions package is not installed ({e}); install python3-regions"


def need_astropy():
    if ASTROPY:
        raise Skip(ASTROPY)


def project_version():
    with open(os.path.join(SOURCE_ROOT, "meson.build")) as f:
        return re.search(r"version\s*:\s*'([^']+)'", f.read()).group(1)


# ---------------------------------------------------------------- running

class Run:
    """skysift-cli find on one image with every catalogue output."""

    def __init__(self, tmp, image, stem, *extra):
        self.image = image
        self.paths = {k: os.path.join(tmp, f"{stem}.{k}")
                      for k in ("csv", "ecsv", "reg", "xml", "json")}
        for p in self.paths.values():
            if os.path.exists(p):
                os.unlink(p)
        self.proc = subprocess.run(
            [CLI, "find", image, "--csv", self.paths["csv"], "--ecsv", self.paths["ecsv"],
             "--regions", self.paths["reg"], "--votable", self.paths["xml"],
             "--json", self.paths["json"], *extra], capture_output=True, text=True, timeout=300)
        assert self.proc.returncode == 0, \
            f"skysift-cli find {image} failed ({self.proc.returncode}): {self.proc.stderr}"
        assert self.proc.stderr == "", f"stderr is not empty: {self.proc.stderr}"
        with open(self.paths["csv"], newline="") as f:
            reader = csv.reader(f)
            self.columns = next(reader)
            self.rows = [dict(zip(self.columns, r)) for r in reader]
        with open(self.paths["json"]) as f:
            self.summary = json.load(f)

    def col(self, name):
        return np.array([float(r[name]) if r[name] != "" else np.nan for r in self.rows])


def separation_arcsec(lng1, lat1, lng2, lat2):
    a = SkyCoord(lng1 * u.deg, lat1 * u.deg)
    b = SkyCoord(lng2 * u.deg, lat2 * u.deg)
    return a.separation(b).arcsec


def check_positions(run, lng_name, lat_name):
    """The catalogue's centroid positions against astropy.wcs on the same
    header, at FITS pixel x + 1, y + 1 (origin 1). Returns the largest
    difference in arcseconds."""
    header = fits.getheader(run.image, ext=run.summary["hdu"] - 1)
    w = WCS(header).celestial
    x, y = run.col("x_centroid"), run.col("y_centroid")
    lng, lat = w.all_pix2world(x + 1, y + 1, 1)
    sep = separation_arcsec(lng, lat, run.col(lng_name), run.col(lat_name))
    worst = float(np.nanmax(sep)) if len(sep) else 0.0
    print(f"# {os.path.basename(run.image)}: {len(sep)} positions, largest difference from "
          f"astropy.wcs {worst:.3g} arcsec (the CSV's centroids carry 1e-6 pixel)")
    assert not np.isnan(sep).any(), "a position is missing"
    assert worst <= MAX_ARCSEC, f"positions differ from astropy.wcs by up to {worst} arcsec"
    return worst


def beam_area_pixels(header):
    """pi BMAJ BMIN / (4 ln 2) / |pixel area|, the pixel area from CD or CDELT."""
    if "CD1_1" in header:
        area = abs(header["CD1_1"] * header.get("CD2_2", 0)
                   - header.get("CD1_2", 0) * header.get("CD2_1", 0))
    else:
        area = abs(header["CDELT1"] * header["CDELT2"])
    return math.pi * header["BMAJ"] * header["BMIN"] / (4 * math.log(2)) / area


def check_int_flux(run, scale=1.0):
    header = fits.getheader(run.image)
    beam = beam_area_pixels(header)
    want = run.col("sum_flux") / beam * scale
    got = run.col("int_flux")
    assert len(got) and not np.isnan(got).any(), "int_flux is empty"
    rel = np.max(np.abs(got / want - 1))
    print(f"# beam area {beam:.6g} pixels; int_flux within {rel:.2g} relative of the formula")
    assert rel < 1e-9, f"int_flux differs from sum_flux / {beam} by {rel} relative"
    return beam


def check_ecsv(run):
    t = Table.read(run.paths["ecsv"], format="ascii.ecsv")
    assert t.colnames == run.columns, f"ECSV columns {t.colnames} != CSV {run.columns}"
    assert len(t) == len(run.rows), f"{len(t)} rows, the CSV has {len(run.rows)}"
    units = {"x_centroid": u.pix, "y_centroid": u.pix, "peak_x": u.pix, "int_flux": u.Jy}
    if "ra" in t.colnames:
        units.update(ra=u.deg, dec=u.deg)
    if "glon" in t.colnames:
        units.update(glon=u.deg, glat=u.deg)
    if run.summary["bunit"].lower() == "jy/beam":
        units.update(sum_flux=u.Jy / u.beam, peak_flux=u.Jy / u.beam, local_rms=u.Jy / u.beam)
    for name, unit in units.items():
        assert t[name].unit == unit, f"ECSV {name} unit {t[name].unit!r}, want {unit}"
    for name in t.colnames:
        assert t[name].description, f"ECSV column {name} has no description"
        mine = [r[name] for r in run.rows]
        col = t[name]
        for i, text in enumerate(mine):
            masked = np.ma.is_masked(col[i])
            if text in ("", "NaN"):  # the CSV's missing text, missing number
                assert masked or (col.dtype.kind == "f" and np.isnan(col[i])), \
                    f"ECSV {name}[{i}] is {col[i]!r}, the CSV's is empty"
            elif col.dtype.kind in "iu":
                assert int(col[i]) == int(text), f"ECSV {name}[{i}] {col[i]} != {text}"
            elif col.dtype.kind == "f":
                assert float(col[i]) == float(text), f"ECSV {name}[{i}] {col[i]} != {text}"
            else:
                assert str(col[i]) == text, f"ECSV {name}[{i}] {col[i]!r} != {text!r}"
    m = t.meta
    want = {"image": run.image, "hdu": run.summary["hdu"], "plane": run.summary["plane"],
            "clip_kappa": 3.0, "threshold_sigma": 5.0, "connectivity": 4, "backend": "cpu",
            "software": f"skysift {project_version()}", "nsources": len(run.rows)}
    for key, value in want.items():
        assert m.get(key) == value, f"ECSV meta {key} = {m.get(key)!r}, want {value!r}"
    assert m["clip_sigma"] == run.summary["clipped"]["std"], "ECSV meta clip_sigma"
    assert m["threshold"] == run.summary["threshold"], "ECSV meta threshold"
    assert "device" in m and m["device"], "ECSV meta has no device"
    return t


def check_votable(run, system, equinox):
    vot = votable.parse(run.paths["xml"])
    table = vot.get_first_table()
    t = table.to_table()
    assert t.colnames == run.columns, f"VOTable columns {t.colnames} != CSV {run.columns}"
    assert len(t) == len(run.rows)
    for name in ("x_centroid", "sum_flux", "int_flux", "snr"):
        mine = run.col(name)
        theirs = np.array(t[name].filled(np.nan) if hasattr(t[name], "filled") else t[name],
                          dtype=float)
        same = (mine == theirs) | (np.isnan(mine) & np.isnan(theirs))
        assert same.all(), f"VOTable {name} differs from the CSV"
    assert t["x_centroid"].unit == u.pix, f"VOTable x_centroid unit {t['x_centroid'].unit}"
    assert t["int_flux"].unit == u.Jy, f"VOTable int_flux unit {t['int_flux'].unit}"
    systems = vot.resources[0].coordinate_systems
    if system is None:
        assert not systems, f"a COOSYS where none applies: {systems}"
    else:
        assert systems and systems[0].system == system, f"COOSYS {systems}, want {system}"
        assert (systems[0].equinox or None) == equinox, \
            f"COOSYS equinox {systems[0].equinox}, want {equinox}"
    params = {p.name: p.value for p in table.params}
    assert params.get("connectivity") == 4, f"VOTable PARAM connectivity {params}"
    return t


def check_regions(run, frame):
    """The regions package reads every source; the raw file says frame and,
    in the image frame, 1-based pixels."""
    if REGIONS:
        raise Skip(REGIONS)
    with open(run.paths["reg"]) as f:
        text = f.read()
    lines = text.splitlines()
    assert lines[0] == "# Region file format: DS9 version 4.2", f"first line {lines[0]!r}"
    assert any(line.startswith("global ") for line in lines), "no global line"
    assert frame in lines, f"no '{frame}' frame line"
    regs = regions.Regions.parse(text, format="ds9")
    assert len(regs) == len(run.rows), f"{len(regs)} regions, {len(run.rows)} sources"
    worst = 0.0
    for reg, row in zip(regs, run.rows):
        assert str(reg.meta.get("text")) == row["source_id"], \
            f"region text {reg.meta.get('text')!r} for source {row['source_id']}"
        r_pix = math.sqrt(int(row["npix"]) / math.pi)
        if frame == "image":
            # regions turns DS9's 1-based pixels into 0-based ones.
            assert abs(reg.center.x - float(row["x_centroid"])) < 1e-6, \
                f"source {row['source_id']}: region x {reg.center.x} != {row['x_centroid']}"
            assert abs(reg.center.y - float(row["y_centroid"])) < 1e-6
            assert abs(reg.radius - r_pix) < 1e-4, f"radius {reg.radius}, want {r_pix}"
        else:
            c = reg.center
            lng_name, lat_name = run.columns[12], run.columns[13]
            sph = c.spherical
            sep = separation_arcsec(np.array([sph.lon.deg]), np.array([sph.lat.deg]),
                                    np.array([float(row[lng_name])]),
                                    np.array([float(row[lat_name])]))[0]
            worst = max(worst, sep)
    if frame == "image":
        # In the file itself the pixels are FITS's, 1-based.
        first = next(line for line in lines if line.startswith("circle("))
        x, y = (float(v) for v in first[7:].split(",")[:2])
        row = run.rows[0]
        assert abs(x - (float(row["x_centroid"]) + 1)) < 1e-6 and \
            abs(y - (float(row["y_centroid"]) + 1)) < 1e-6, \
            f"{first!r} is not 1-based for source 1 at {row['x_centroid']}, {row['y_centroid']}"
    else:
        assert worst < 1e-5, f"region centres differ from the catalogue by {worst} arcsec"
    return regs


# ------------------------------------------------------------ fixtures

def synth_field(tmp):
    path = os.path.join(tmp, "field.fits")
    proc = subprocess.run([CLI, "synth", path, "--size", "1024", "--seed", "11"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"synth failed: {proc.stderr}"
    return path


def variant(tmp, field, name, drop=(), **cards):
    """The synthetic field with header cards dropped or set."""
    with fits.open(field) as hdul:
        data, header = hdul[0].data, hdul[0].header.copy()
    for key in drop:
        header.remove(key, ignore_missing=True, remove_all=True)
    for key, value in cards.items():
        header[key] = value
    path = os.path.join(tmp, name)
    fits.PrimaryHDU(data, header).writeto(path, overwrite=True)
    return path


WCS_CARDS = ("CTYPE1", "CTYPE2", "CRVAL1", "CRVAL2", "CRPIX1", "CRPIX2", "CDELT1", "CDELT2",
             "CUNIT1", "CUNIT2", "RADESYS", "EQUINOX")


# --------------------------------------------------------------- checks

class Suite:
    def __init__(self, tap, tmp):
        self.tap = tap
        self.tmp = tmp
        self.runs = {}

    def run(self, key, image, *extra):
        if key not in self.runs:
            self.runs[key] = Run(self.tmp, image, key, *extra)
        return self.runs[key]

    def synth(self):
        need_astropy()
        if "field" not in self.runs:
            self.field = synth_field(self.tmp)
        return self.run("field", self.field)

    def variant_run(self, key, drop=(), **cards):
        """find on the synthetic field with header cards dropped or set."""
        self.synth()
        if key not in self.runs:
            self.run(key, variant(self.tmp, self.field, f"{key}.fits", drop, **cards))
        return self.runs[key]

    # ---- the synthetic field: SIN, FK5, Jy/beam with a beam

    def test_csv_columns(self):
        r = self.synth()
        assert r.columns[:6] == PIXEL_COLUMNS[:6], f"leading columns changed: {r.columns}"
        assert r.columns == PIXEL_COLUMNS + EQUATORIAL + FLUX_COLUMNS, f"columns {r.columns}"
        assert len(r.rows) >= 50, f"only {len(r.rows)} sources in the synthetic field"

    def test_positions(self):
        check_positions(self.synth(), "ra", "dec")

    def test_sexagesimal(self):
        r = self.synth()
        for row in r.rows:
            assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d\d", row["ra_str"]), row["ra_str"]
            assert re.fullmatch(r"[+-]\d\d:\d\d:\d\d\.\d", row["dec_str"]), row["dec_str"]
            ra = Angle(row["ra_str"], unit=u.hourangle).deg
            dec = Angle(row["dec_str"], unit=u.deg).deg
            # Half of the last digit: 0.005 s of time, 0.05 arcsec.
            d_ra = abs((ra - float(row["ra"]) + 180) % 360 - 180) * 3600
            assert d_ra <= 0.005 * 15 + 1e-9, f"{row['ra_str']} is {d_ra}\" from {row['ra']}"
            assert abs(dec - float(row["dec"])) * 3600 <= 0.05 + 1e-9, \
                f"{row['dec_str']} is not {row['dec']}"

    def test_int_flux(self):
        check_int_flux(self.synth())

    def test_rms_snr(self):
        r = self.synth()
        sigma = r.summary["clipped"]["std"]
        rms, snr, peak = r.col("local_rms"), r.col("snr"), r.col("peak_flux")
        assert np.all(np.abs(rms / sigma - 1) < 1e-8), f"local_rms {rms[:3]} != sigma {sigma}"
        assert np.all(np.abs(snr / (peak / sigma) - 1) < 1e-5), "snr is not peak / sigma"
        assert np.all(snr > 5), "a source below 5 sigma"

    def test_ecsv(self):
        check_ecsv(self.synth())

    def test_votable(self):
        check_votable(self.synth(), "eq_FK5", "J2000")

    def test_regions(self):
        check_regions(self.synth(), "fk5")

    def test_summary_lines(self):
        out = self.synth().proc.stdout
        assert re.search(r"^sky +ra, dec of each centroid \(FK5 J2000, SIN projection\)$", out,
                         re.M), f"no sky line:\n{out}"
        assert re.search(r"^beam +20\" x 15\" = [0-9.]+ pixels: int_flux", out, re.M), \
            f"no beam line:\n{out}"

    # ---- headers that lack something

    def test_no_wcs(self):
        r = self.variant_run("nowcs", drop=WCS_CARDS)
        assert r.columns == PIXEL_COLUMNS + FLUX_COLUMNS, f"columns {r.columns}"
        assert all(row["int_flux"] == "NaN" for row in r.rows), "int_flux without a pixel scale"
        out = r.proc.stdout
        assert re.search(r"^sky +none: .*nowcs\.fits: the header has no world coordinates", out,
                         re.M), f"no clear message about the missing WCS:\n{out}"
        assert re.search(r"^int_flux +empty: .*pixel scale", out, re.M), \
            f"no clear message about int_flux:\n{out}"
        t = check_ecsv(r)
        assert "ra" not in t.colnames and "note_positions" in t.meta, "ECSV meta lacks the note"
        check_votable(r, None, None)

    def test_no_wcs_regions(self):
        check_regions(self.variant_run("nowcs", drop=WCS_CARDS), "image")

    def test_no_beam(self):
        r = self.variant_run("nobeam", drop=("BMAJ", "BMIN", "BPA"))
        assert r.columns == PIXEL_COLUMNS + EQUATORIAL + FLUX_COLUMNS, f"columns {r.columns}"
        assert all(row["int_flux"] == "NaN" for row in r.rows), "int_flux without a beam"
        assert all(row["ra"] != "" for row in r.rows), "positions lost with the beam"
        assert re.search(r"^int_flux +empty: .*no beam \(BMAJ, BMIN\)", r.proc.stdout, re.M), \
            f"no clear message:\n{r.proc.stdout}"
        t = check_ecsv(r)
        assert t["int_flux"].mask.all(), "ECSV int_flux is not masked"
        assert "no beam" in t.meta["note_int_flux"], f"meta {t.meta.get('note_int_flux')}"

    def test_not_per_beam(self):
        r = self.variant_run("kelvin", BUNIT="K")
        assert all(row["int_flux"] == "NaN" for row in r.rows), "int_flux of a K image"
        assert re.search(r"^int_flux +empty: .*is in K, not a flux density per beam",
                         r.proc.stdout, re.M), f"no clear message:\n{r.proc.stdout}"

    def test_mjy_per_beam(self):
        check_int_flux(self.variant_run("mjy", BUNIT="mJy/beam"), scale=1e-3)

    def test_galactic(self):
        r = self.variant_run("galactic", drop=("RADESYS", "EQUINOX"), CTYPE1="GLON-CAR",
                             CTYPE2="GLAT-CAR", CRVAL1=359.9, CRVAL2=0.05)
        assert r.columns == PIXEL_COLUMNS + ["glon", "glat"] + FLUX_COLUMNS, \
            f"galactic columns {r.columns}: never RA/Dec"
        check_positions(r, "glon", "glat")
        check_int_flux(r)
        t = check_ecsv(r)
        assert t.meta["wcs_system"] == "galactic" and "Galactic" in t["glon"].description
        check_votable(r, "galactic", None)
        check_regions(r, "galactic")

    def test_ecliptic(self):
        r = self.variant_run("ecliptic", drop=("RADESYS",), CTYPE1="ELON-TAN",
                             CTYPE2="ELAT-TAN", CRVAL1=150.0, CRVAL2=-10.0)
        assert r.columns == PIXEL_COLUMNS + ["elon", "elat"] + FLUX_COLUMNS, f"{r.columns}"
        check_positions(r, "elon", "elat")
        check_votable(r, "ecl_FK5", "J2000")
        check_regions(r, "ecliptic")

    def test_bad_output_paths(self):
        need_astropy()
        field = self.synth().image
        for option in ("--ecsv", "--regions", "--votable"):
            for target in (os.path.join(self.tmp, "no-such-folder", "out"), "/dev/full"):
                proc = subprocess.run([CLI, "find", field, "--quiet", option, target],
                                      capture_output=True, text=True, timeout=300)
                lines = proc.stderr.strip().splitlines()
                assert proc.returncode == 1, f"{option} {target}: exit {proc.returncode}"
                assert len(lines) == 1 and target in lines[0], \
                    f"{option} {target}: stderr {proc.stderr!r}"
                if target != "/dev/full":
                    assert not os.path.exists(target), f"{target} exists after a failure"
        left = [n for n in os.listdir(self.tmp) if ".tmp" in n]
        assert not left, f"temporary files left behind: {left}"

    # ---- the shared images

    def shared_image(self, name):
        for path in (os.path.join(SHARED, name), os.path.join(SHARED, "external", name)):
            if os.path.exists(path):
                return path
        raise Skip(f"{name} not found in {SHARED or '(SKYSIFT_SHARED_DATA unset)'} "
                   "(the shared images sit in ../shared/data beside a development checkout)")

    def test_shared_positions(self, name, lng, lat, *extra):
        need_astropy()
        r = self.run(name, self.shared_image(name), *extra)
        assert r.columns[12:14] == [lng, lat], f"sky columns {r.columns[12:]}"
        if lng != "ra":
            assert "ra" not in r.columns and "dec" not in r.columns, "galactic named RA/Dec"
        check_positions(r, lng, lat)

    def test_gc_like_all_formats(self):
        need_astropy()
        r = self.run("gc_like_2048.fits", self.shared_image("gc_like_2048.fits"))
        assert len(r.rows) == 344, f"{len(r.rows)} sources"
        check_int_flux(r)
        check_ecsv(r)
        check_votable(r, "eq_FK5", "J2000")
        check_regions(r, "fk5")

    def test_bolocam_beam(self):
        """Bolocam's header states its beam in pixels (PPBEAM): ours agrees."""
        need_astropy()
        image = self.shared_image("gc_bolocam_gps.fits")
        beam = check_int_flux(self.run("gc_bolocam_gps.fits", image))
        ppbeam = fits.getheader(image)["PPBEAM"]
        assert abs(beam / ppbeam - 1) < 1e-6, f"beam area {beam} pixels, PPBEAM {ppbeam}"
        check_ecsv(self.runs["gc_bolocam_gps.fits"])
        check_regions(self.runs["gc_bolocam_gps.fits"], "galactic")

    def test_2mass_no_bunit(self):
        need_astropy()
        r = self.run("gc_2mass_k.fits", self.shared_image("gc_2mass_k.fits"), "--relative")
        assert all(row["int_flux"] == "NaN" for row in r.rows)
        assert re.search(r"^int_flux +empty: .*has no BUNIT", r.proc.stdout, re.M), \
            r.proc.stdout


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="skysift-catalogue-") as tmp:
        s = Suite(tap, tmp)
        t = tap.check
        t("synth/csv: the six leading columns unchanged, then bbox, ra, dec, ra_str, dec_str, "
          "int_flux, local_rms, snr", s.test_csv_columns)
        t(f"synth/positions: ra, dec match astropy.wcs at FITS pixel x+1, y+1 within "
          f"{MAX_ARCSEC} arcsec", s.test_positions)
        t("synth/sexagesimal: ra_str HH:MM:SS.ss and dec_str +DD:MM:SS.s read back as ra, dec",
          s.test_sexagesimal)
        t("synth/int_flux: sum_flux / (pi BMAJ BMIN / (4 ln 2) / |CDELT1 CDELT2|) in Jy",
          s.test_int_flux)
        t("synth/local_rms and snr: the clipped sigma and peak / sigma", s.test_rms_snr)
        t("synth/ecsv: astropy Table.read loads units, descriptions, values and provenance",
          s.test_ecsv)
        t("synth/votable: astropy.io.votable loads the same table, units and COOSYS eq_FK5",
          s.test_votable)
        t("synth/regions: the regions package reads an fk5 circle labelled by source_id for "
          "every source", s.test_regions)
        t("synth/summary: the sky and beam lines", s.test_summary_lines)
        t("no WCS: no sky columns, int_flux empty, a clear message, notes in the metadata",
          s.test_no_wcs)
        t("no WCS: regions in the image frame with 1-based pixels", s.test_no_wcs_regions)
        t("no beam: int_flux empty and masked in the ECSV, with a clear message",
          s.test_no_beam)
        t("unit K: not per beam, so int_flux empty with a clear message", s.test_not_per_beam)
        t("unit mJy/beam: int_flux still in Jy", s.test_mjy_per_beam)
        t("galactic GLON-CAR: glon, glat (never ra, dec), regions and COOSYS galactic",
          s.test_galactic)
        t("ecliptic ELON-TAN: elon, elat, regions ecliptic, COOSYS ecl_FK5", s.test_ecliptic)
        t("--ecsv, --regions, --votable into a missing folder or /dev/full: exit 1, one line, "
          "no file", s.test_bad_output_paths)
        for name, lng, lat, extra in (("1904-66_SIN.fits", "ra", "dec", ()),
                                      ("gc_bolocam_gps.fits", "glon", "glat", ()),
                                      ("gc_2mass_k.fits", "ra", "dec", ("--relative",)),
                                      ("gc_like_2048.fits", "ra", "dec", ())):
            t(f"shared/{name}: {lng}, {lat} match astropy.wcs within {MAX_ARCSEC} arcsec",
              s.test_shared_positions, name, lng, lat, *extra)
        t("shared/gc_like_2048.fits: 344 sources in CSV, ECSV, VOTable and regions, each read "
          "back; int_flux by the formula", s.test_gc_like_all_formats)
        t("shared/gc_bolocam_gps.fits: beam area equals the header's PPBEAM",
          s.test_bolocam_beam)
        t("shared/gc_2mass_k.fits: no BUNIT, so int_flux empty with a clear message",
          s.test_2mass_no_bunit)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
