#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real files in, valid files out.

In: gzipped, bzip2'ed and fpack'ed FITS files give the catalogue of the
uncompressed file, byte for byte (the CLI's CSV), real gzipped files from
Debian's astropy and photutils open, and a header that promises more data
than the file holds is still refused, compressed or not.

Out: the VOTable of every shared image passes astropy's
votable.parse(verify='exception'); astropy reads every ECSV without a
warning, with the VOTable's UCDs; the CSV's number columns read back as
numbers even when every value is missing; BUNIT is written as a unit
astropy reads, or left out with the header's text kept; convolve --out
carries the input's WCS, moved to the new pixel grid, and says what it did.
Speaks TAP."""
import bz2
import glob
import gzip
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import warnings
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
SHARED = os.environ.get("SKYSIFT_SHARED_DATA", "")
DIST = "/usr/lib/python3/dist-packages"
REAL_GZ = {
    "astropy's dss.14.29.56-62.41.05.fits.gz (python3-astropy)":
        f"{DIST}/astropy/wcs/tests/data/dss.14.29.56-62.41.05.fits.gz",
    "photutils' fermi_counts.fits.gz (python3-photutils)":
        f"{DIST}/photutils/datasets/data/fermi_counts.fits.gz",
}

try:
    import numpy as np
    from astropy import units as u
    from astropy.io import fits, votable
    from astropy.io.votable.ucd import check_ucd
    from astropy.table import QTable, Table
    from astropy.wcs import WCS
    ASTROPY = None
except ImportError as e:
    ASTROPY = f"astropy is not installed ({e}); install python3-astropy"


def need_astropy():
    if ASTROPY:
        raise Skip(ASTROPY)


def shared(name):
    for path in (os.path.join(SHARED, name), os.path.join(SHARED, "external", name)):
        if os.path.exists(path):
            return path
    raise Skip(f"{name} not found in {SHARED or '(SKYSIFT_SHARED_DATA unset)'}")


def shared_images():
    images = sorted(glob.glob(os.path.join(SHARED, "external", "*.fits")))
    images += sorted(glob.glob(os.path.join(SHARED, "*.fits")))
    if not images:
        raise Skip(f"no shared images in {SHARED or '(SKYSIFT_SHARED_DATA unset)'}")
    return images


def run(*args, ok=True):
    proc = subprocess.run([CLI, *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, f"skysift-cli {' '.join(args)}: {proc.stderr}"
    return proc


def catalogue(image, tmp, *extra):
    """The CSV skysift-cli find writes for image, as text."""
    out = os.path.join(tmp, "cat.csv")
    run("find", image, "--quiet", "--csv", out, *extra)
    with open(out) as f:
        return f.read()


def fpack(src, dst):
    """A lossless tile-compressed copy (fpack -g -q 0: GZIP tiles, floats
    not quantised), so that the pixels are the original's."""
    if shutil.which("fpack") is None:
        raise Skip("fpack is not installed (Debian's libcfitsio-bin)")
    proc = subprocess.run(["fpack", "-g", "-q", "0", "-O", dst, src], capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"fpack failed: {proc.stderr}"


class Suite:
    def __init__(self, tmp):
        self.tmp = tmp
        self.outputs = {}

    def path(self, name):
        return os.path.join(self.tmp, name)

    # ------------------------------------------------------------ in

    def compressed_copies(self, image, *extra):
        """gzip, bzip2 and fpack copies of image give its catalogue."""
        want = catalogue(image, self.tmp, *extra)
        assert want.count("\n") > 1, f"{image}: no sources to compare"
        stem = self.path(os.path.basename(image))
        with open(image, "rb") as f:
            raw = f.read()
        with gzip.open(stem + ".gz", "wb") as f:
            f.write(raw)
        with bz2.open(stem + ".bz2", "wb") as f:
            f.write(raw)
        fpack(image, stem + ".fz")
        for copy in (stem + ".gz", stem + ".bz2", stem + ".fz"):
            got = catalogue(copy, self.tmp, *extra)
            assert got == want, f"{os.path.basename(copy)}: the catalogue differs from " \
                f"{os.path.basename(image)}'s"
        print(f"# {os.path.basename(image)} {' '.join(extra)}: {want.count(chr(10)) - 1} "
              "sources, the same from .gz, .bz2 and .fz")

    def test_compressed_image(self):
        self.compressed_copies(shared("1904-66_SIN.fits"))

    def test_compressed_cube(self):
        self.compressed_copies(shared("1904-66_SIN_3d.fits"), "--plane", "2")

    def test_real_gz(self, path):
        need_astropy()
        if not os.path.exists(path):
            raise Skip(f"{path} is not installed")
        plain = self.path(os.path.basename(path)[:-3])
        with gzip.open(path, "rb") as f, open(plain, "wb") as g:
            g.write(f.read())
        summary = self.path("real.json")
        proc = run("find", path, "--quiet", "--json", summary, "--relative")
        assert proc.stderr == "", proc.stderr
        got = catalogue(path, self.tmp, "--relative")
        assert got == catalogue(plain, self.tmp, "--relative"), \
            "the gzipped file's catalogue differs from the decompressed copy's"
        shape = fits.getdata(path).shape
        with open(summary) as f:
            mine = json.load(f)["shape"]
        assert mine == list(shape[-2:]), f"astropy reads {shape}, skysift {mine}"
        print(f"# {os.path.basename(path)}: {shape[-1]} x {shape[-2]}, "
              f"{got.count(chr(10)) - 1} sources")

    def test_lying_headers(self):
        """A header that promises more data than the file holds: refused,
        naming the file, whether the file is gzipped or not."""
        image = shared("1904-66_SIN.fits")
        with open(image, "rb") as f:
            raw = f.read()
        short = raw[:len(raw) // 2]
        plain = self.path("short.fits")
        with open(plain, "wb") as f:
            f.write(short)
        with gzip.open(self.path("short.fits.gz"), "wb") as f:
            f.write(short)
        with open(self.path("cut.fits.gz"), "wb") as f:
            f.write(gzip.compress(raw)[:20000])    # a gzip stream cut short
        for name in ("short.fits", "short.fits.gz", "cut.fits.gz"):
            proc = run("find", self.path(name), ok=False)
            assert proc.returncode == 1, f"{name}: exit {proc.returncode}"
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and name in lines[0], f"{name}: {proc.stderr!r}"
            print(f"# {name}: {lines[0]}")
        assert "truncated" in run("find", plain, ok=False).stderr

    def test_gzip_trailer(self):
        """A gzip trailer promising more than the stream can hold (cfitsio
        would size its buffer from it: 4 GiB for a zero trailer on a file
        over 10 KB) is refused as damaged before anything is allocated; the
        same file with its true trailer loads."""
        with open(shared("1904-66_SIN.fits"), "rb") as f:
            packed = gzip.compress(f.read())
        good = self.path("trailer-good.fits.gz")
        with open(good, "wb") as f:
            f.write(packed)
        run("find", good)
        for name, trailer in (("trailer-zero.fits.gz", b"\0\0\0\0"),
                              ("trailer-huge.fits.gz", b"\xff\xff\xff\xff")):
            with open(self.path(name), "wb") as f:
                f.write(packed[:-4] + trailer)
            proc = run("find", self.path(name), ok=False)
            assert proc.returncode == 1, f"{name}: exit {proc.returncode}"
            assert name in proc.stderr and "damaged gzip" in proc.stderr, \
                f"{name}: {proc.stderr!r}"
            print(f"# {name}: {proc.stderr.strip()}")

    def test_zip_header(self):
        """A zip file whose local header claims more bytes than the stream
        can hold (cfitsio sizes its buffer from the 32-bit size at byte 22
        of any file beginning "PK") is refused as damaged before anything is
        allocated. (cfitsio cannot inflate a zip archive's member: the file
        with its true size is refused too, with cfitsio's reason.)"""
        with open(shared("1904-66_SIN.fits"), "rb") as f:
            data = f.read()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("1904-66_SIN.fits", data)
        packed = buffer.getvalue()
        assert packed[:4] == b"PK\x03\x04" and struct.unpack("<I", packed[22:26])[0] == len(data)
        good = self.path("header-good.fits.zip")
        with open(good, "wb") as f:
            f.write(packed)
        proc = run("find", good, ok=False)
        assert proc.returncode == 1 and "header-good.fits.zip" in proc.stderr, proc.stderr
        assert "damaged zip" not in proc.stderr, proc.stderr
        bad = self.path("header-huge.fits.zip")
        with open(bad, "wb") as f:
            f.write(packed[:22] + struct.pack("<I", 0xF7000000) + packed[26:])
        proc = run("find", bad, ok=False)
        assert proc.returncode == 1, f"exit {proc.returncode}"
        assert "header-huge.fits.zip" in proc.stderr and "damaged zip" in proc.stderr, proc.stderr
        print(f"# header-huge.fits.zip: {proc.stderr.strip()}")

    # ----------------------------------------------------------- out

    def outputs_of(self, image, method="global"):
        """The catalogue files of image; the local method's have columns of
        their own (background, errors, windowed centroid, flags)."""
        if (image, method) not in self.outputs:
            stem = self.path(f"{os.path.basename(image)}-{method}")
            paths = {k: f"{stem}.{k}" for k in ("csv", "ecsv", "xml", "reg")}
            extra = ["--relative"] if "2mass" in image or "sep_image" in image else []
            if method == "local":
                extra = ["--method", "local"]
            run("find", image, "--quiet", "--csv", paths["csv"], "--ecsv", paths["ecsv"],
                "--votable", paths["xml"], "--regions", paths["reg"], *extra)
            self.outputs[(image, method)] = paths
        return self.outputs[(image, method)]

    def test_votable_verify(self, method):
        need_astropy()
        for image in shared_images():
            vot = votable.parse(self.outputs_of(image, method)["xml"], verify="exception")
            for field in vot.get_first_table().fields:
                if field.ucd:
                    check_ucd(field.ucd, check_controlled_vocabulary=True)
        print(f"# {len(shared_images())} VOTables of the {method} method pass "
              "verify='exception'")

    def test_ecsv_clean(self, method):
        need_astropy()
        for image in shared_images():
            paths = self.outputs_of(image, method)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                t = Table.read(paths["ecsv"], format="ascii.ecsv")
                QTable.read(paths["ecsv"], format="ascii.ecsv")
            vt = votable.parse(paths["xml"]).get_first_table()
            ucds = {f.name: f.ucd for f in vt.fields}
            for name in t.colnames:
                assert t[name].meta.get("ucd") == ucds[name], \
                    f"{os.path.basename(image)} {name}: ECSV ucd {t[name].meta.get('ucd')!r}, " \
                    f"VOTable {ucds[name]!r}"

    def test_csv_types(self):
        """Every number column of the CSV reads as numbers in astropy, even
        int_flux where no value exists (no beam or no BUNIT)."""
        need_astropy()
        all_missing = 0
        for image in shared_images():
            path = self.outputs_of(image)["csv"]
            t = Table.read(path, format="ascii.csv")
            e = Table.read(self.outputs_of(image)["ecsv"], format="ascii.ecsv")
            for name in t.colnames:
                want = e[name].dtype.kind
                if want in "iuf":
                    assert t[name].dtype.kind == want, \
                        f"{os.path.basename(path)} {name}: CSV reads {t[name].dtype}, ECSV {want}"
            if np.isnan(t["int_flux"]).all():
                all_missing += 1
        assert all_missing > 0, "no shared image has an all-missing int_flux to check"
        print(f"# {all_missing} CSVs with int_flux all missing read it as float64")

    def test_stilts(self):
        """STILTS (TOPCAT's table library): votlint finds nothing to say of
        any VOTable, and the CSV's number columns read as numbers."""
        need_astropy()
        stilts = shutil.which("stilts")
        if stilts is None:
            raise Skip("stilts is not installed (Debian's stilts, TOPCAT's command line)")
        for image in shared_images():
            paths = self.outputs_of(image)
            proc = subprocess.run([stilts, "votlint", paths["xml"]], capture_output=True,
                                  text=True, timeout=300)
            said = (proc.stdout + proc.stderr).strip()
            assert proc.returncode == 0 and said == "", \
                f"votlint on {os.path.basename(paths['xml'])}: {said[:500]}"
            proc = subprocess.run([stilts, "tpipe", f"in={paths['csv']}", "ifmt=csv",
                                   "omode=meta"], capture_output=True, text=True, timeout=300)
            assert proc.returncode == 0, proc.stderr
            e = Table.read(paths["ecsv"], format="ascii.ecsv")
            for line in proc.stdout.splitlines():
                part = line.strip().split(": ", 1)
                if len(part) != 2 or "(" not in part[1] or not part[0].isdigit():
                    continue
                name, kind = part[1].split("(", 1)
                kind = kind.split(")", 1)[0]
                if name in e.colnames and e[name].dtype.kind in "iuf":
                    assert kind in ("Short", "Integer", "Long", "Float", "Double"), \
                        f"{os.path.basename(paths['csv'])}: STILTS reads {name} as {kind}"
        print(f"# votlint silent on {len(shared_images())} VOTables; STILTS types every "
              "number column of the CSVs as a number")

    def test_units(self):
        """gc_msx_e's BUNIT 'W/m^2-sr' becomes W / (m2 sr); the text stays."""
        need_astropy()
        paths = self.outputs_of(shared("gc_msx_e.fits"))
        t = Table.read(paths["ecsv"], format="ascii.ecsv")
        want = u.W / (u.m ** 2 * u.sr)
        for name in ("sum_flux", "peak_flux", "local_rms"):
            assert t[name].unit == want, f"ECSV {name} unit {t[name].unit}"
        assert t.meta["bunit"] == "W/m^2-sr", t.meta.get("bunit")
        assert "W/(m2.sr)" in t.meta["note_unit"], t.meta.get("note_unit")
        vt = votable.parse(paths["xml"]).get_first_table().to_table()
        assert vt["sum_flux"].unit == want, f"VOTable sum_flux unit {vt['sum_flux'].unit}"

    def test_unit_unknown(self):
        """A BUNIT no reader knows: no unit on the columns, the text kept."""
        need_astropy()
        src = shared("1904-66_SIN.fits")
        image = self.path("odd_unit.fits")
        with fits.open(src) as hdul:
            hdul[0].header["BUNIT"] = "furlongs/fortnight"
            hdul.writeto(image, overwrite=True)
        paths = self.outputs_of(image)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            t = Table.read(paths["ecsv"], format="ascii.ecsv")
        assert t["sum_flux"].unit is None, f"sum_flux unit {t['sum_flux'].unit}"
        assert t.meta["bunit"] == "furlongs/fortnight"
        assert "not a unit" in t.meta["note_unit"], t.meta.get("note_unit")
        votable.parse(paths["xml"], verify="exception")

    # ------------------------------------------------------ convolve

    def convolved(self, image, name, *args):
        out = self.path(name)
        run("convolve", image, *args, "--out", out)
        return fits.getheader(out), fits.getdata(out)

    def test_convolve_header(self):
        need_astropy()
        image = shared("1904-66_SIN.fits")
        src = fits.getheader(image)
        w_src = WCS(src).celestial
        for mode, shift in (("full", 7.0), ("same", 0.0), ("valid", -7.0)):
            h, data = self.convolved(image, f"conv_{mode}.fits", "--kernel", "lesson",
                                     "--mode", mode)
            w = WCS(h)
            assert w.has_celestial, f"{mode}: no celestial WCS"
            for axis in (1, 2):
                got = h[f"CRPIX{axis}"] - src[f"CRPIX{axis}"]
                assert abs(got - shift) < 1e-9, f"{mode}: CRPIX{axis} moved by {got}, want {shift}"
            # The same sky position at input pixel p and output pixel p + shift.
            a = w_src.all_pix2world([[50.0, 60.0]], 0)
            b = w.celestial.all_pix2world([[50.0 + shift, 60.0 + shift]], 0)
            assert np.allclose(a, b, atol=1e-10), f"{mode}: {a} != {b}"
            assert (h["SKYKERN"], h["SKYMODE"], h["SKYPLANE"]) == ("lesson", mode, 0), h
            assert (h["SKYKNX"], h["SKYKNY"]) == (15, 15) and h["SKYKSUM"] > 70, h
            assert data.shape == (192 + 2 * int(shift), 192 + 2 * int(shift)), data.shape
            # The lesson's kernel sums to 72: the unit would be a lie.
            assert "BUNIT" not in h and "BMAJ" not in h, "BUNIT kept for a kernel of sum != 1"
            assert any("BUNIT" in str(v) for v in h["HISTORY"]), "no HISTORY on the unit"
        h, _ = self.convolved(image, "conv_gauss.fits", "--kernel", "gauss:2")
        assert h["BUNIT"] == src["BUNIT"] and h["BMAJ"] == src["BMAJ"], \
            "a unit-sum kernel lost the unit or the beam"
        assert abs(h["CRPIX1"] - src["CRPIX1"] - (h["SKYKNX"] - 1) / 2) < 1e-9

    def test_convolve_cube(self):
        need_astropy()
        h, _ = self.convolved(shared("1904-66_SIN_3d.fits"), "conv_cube.fits", "--kernel",
                              "box:3")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            w = WCS(h)
        assert w.celestial.naxis == 2 and h["NAXIS"] == 2 and h["WCSAXES"] == 3, h
        assert h["SKYPLANE"] == 0


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="skysift-files-") as tmp:
        s = Suite(tmp)
        t = tap.check
        t("in: .gz, .bz2 and fpack'ed .fz copies of 1904-66_SIN.fits give its catalogue",
          s.test_compressed_image)
        t("in: .gz, .bz2 and .fz copies of the cube 1904-66_SIN_3d.fits, plane 2",
          s.test_compressed_cube)
        for name, path in REAL_GZ.items():
            t(f"in: {name} opens, as astropy reads it, and its catalogue is the decompressed "
              "file's", s.test_real_gz, path)
        t("in: a header promising more data than the file holds is refused, plain or gzipped",
          s.test_lying_headers)
        t("in: a gzip trailer promising more than its stream can hold is refused as damaged",
          s.test_gzip_trailer)
        t("in: a zip header promising more than its stream can hold is refused as damaged",
          s.test_zip_header)
        for method in ("global", "local"):
            t(f"out: every shared image's VOTable ({method} method) passes astropy "
              "votable.parse(verify='exception')", s.test_votable_verify, method)
            t(f"out: every ECSV ({method} method) reads without a warning (Table, QTable), "
              "with the VOTable's UCDs", s.test_ecsv_clean, method)
        t("out: the CSV's number columns read as numbers in astropy, all-missing int_flux too",
          s.test_csv_types)
        t("out: STILTS votlint passes every VOTable; STILTS reads the CSVs' numbers as "
          "numbers", s.test_stilts)
        t("out: BUNIT W/m^2-sr is written W/(m2.sr), the header's text kept", s.test_units)
        t("out: an unknown BUNIT gives no unit and a note; the VOTable still verifies",
          s.test_unit_unknown)
        t("convolve --out: the input's WCS with CRPIX + (k-1)/2 (full), 0 (same), -(k-1)/2 "
          "(valid); kernel, mode and plane recorded; BUNIT only where still true",
          s.test_convolve_header)
        t("convolve --out of a cube's plane: a 2D image whose WCS keeps the plane's axis",
          s.test_convolve_cube)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
