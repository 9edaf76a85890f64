#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift-cli end to end, run as a user runs it: synth a field, find its
sources, export CSV and JSON, and fail cleanly on every kind of bad input.

Standard library only. Speaks TAP: one line per check, the plan at the end.
Environment: SKYSIFT_CLI (the program), SKYSIFT_SHARED_DATA (optional folder
of shared images; checks on it skip when it is absent)."""
import csv
import glob
import gzip
import json
import math
import os
import random
import re
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile

CSV_COLUMNS = ["source_id", "x_centroid", "y_centroid", "sum_flux", "npix", "peak_flux"]
STEPS = ["load", "clip", "segment", "label", "measure", "total"]


# ------------------------------------------------------------------- TAP

class Skip(Exception):
    """Raised inside a check to skip it with a reason."""


class Tap:
    def __init__(self):
        self.count = 0
        self.failed = 0

    def check(self, name, fn, *args):
        self.count += 1
        try:
            fn(*args)
        except Skip as s:
            print(f"ok {self.count} - {name} # SKIP {s}")
        except Exception as e:  # noqa: BLE001 - every failure becomes a line
            self.failed += 1
            print(f"not ok {self.count} - {name}")
            text = str(e) or type(e).__name__
            if not isinstance(e, AssertionError):
                text = f"{type(e).__name__}: {text}"
            for line in text.splitlines():
                print(f"# {line}")
        else:
            print(f"ok {self.count} - {name}")
        sys.stdout.flush()

    def done(self):
        print(f"1..{self.count}")
        return 1 if self.failed else 0


def need(value, reason):
    """A check that depends on an earlier step fails (not skips) without it."""
    if not value:
        raise AssertionError(reason)
    return value


# ------------------------------------------------------- FITS by hand

def _card(key, value=None):
    if value is None:
        text = f"{key:<8}"
    elif isinstance(value, bool):
        text = f"{key:<8}= {'T' if value else 'F':>20}"
    elif isinstance(value, int):
        text = f"{key:<8}= {value:>20}"
    elif isinstance(value, float):
        text = f"{key:<8}= {repr(value).upper():>20}"
    else:
        text = f"{key:<8}= {(chr(39) + value.ljust(8) + chr(39)):<20}"
    assert len(text) <= 80, text
    return text.ljust(80)


def _block(data, fill):
    pad = (-len(data)) % 2880
    return data + fill * pad


def fits_hdu(shape, pixels=None, extension=False, extra=()):
    """One image HDU, big-endian float32. shape is FITS order (NAXIS1 first);
    an empty shape makes a header without data."""
    cards = [_card("XTENSION", "IMAGE") if extension else _card("SIMPLE", True),
             _card("BITPIX", -32), _card("NAXIS", len(shape))]
    cards += [_card(f"NAXIS{i + 1}", n) for i, n in enumerate(shape)]
    cards += [_card("PCOUNT", 0), _card("GCOUNT", 1)] if extension else [_card("EXTEND", True)]
    cards += [_card(k, v) for k, v in extra]
    cards.append(_card("END"))
    out = _block("".join(cards).encode("ascii"), b" ")
    if shape:
        count = math.prod(shape)
        assert len(pixels) == count
        out += _block(struct.pack(f">{count}f", *pixels), b"\0")
    return out


def fits_table_hdu(rows):
    """A binary table with one double column X."""
    cards = [_card("XTENSION", "BINTABLE"), _card("BITPIX", 8), _card("NAXIS", 2),
             _card("NAXIS1", 8), _card("NAXIS2", len(rows)), _card("PCOUNT", 0),
             _card("GCOUNT", 1), _card("TFIELDS", 1), _card("TTYPE1", "X"),
             _card("TFORM1", "1D"), _card("END")]
    out = _block("".join(cards).encode("ascii"), b" ")
    return out + _block(struct.pack(f">{len(rows)}d", *rows), b"\0")


def write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def noise_image(nx, ny, seed, offset=0.0):
    """Uniform noise in [-1, 1): bounded, so no background pixel ever gets
    past 5 sigma (0.577 * 5) and source counts are exact."""
    rng = random.Random(seed)
    return [offset + rng.uniform(-1.0, 1.0) for _ in range(nx * ny)]


def patch_card(path, keyword, value):
    data = bytearray(open(path, "rb").read())
    for at in range(0, 2880, 80):
        if data[at:at + 10] == f"{keyword:<8}= ".encode():
            data[at:at + 30] = f"{keyword:<8}= {value:>20}".encode()
            break
    else:
        raise AssertionError(f"no {keyword} card in {path}")
    write_file(path, bytes(data))


# -------------------------------------------------------------- running

class Cli:
    def __init__(self, program, workdir):
        self.program = program
        self.workdir = workdir

    def run(self, *args, timeout=120, **kw):
        return subprocess.run([self.program, *map(str, args)], capture_output=True, text=True,
                              timeout=timeout, cwd=self.workdir, **kw)


def describe(proc):
    lines = [f"command: {' '.join(proc.args)}", f"exit status: {proc.returncode}"]
    for label, text in (("stdout", proc.stdout), ("stderr", proc.stderr)):
        text = text.rstrip()
        if text:
            lines.append(f"{label}:")
            lines += ["  " + line for line in text.splitlines()[:15]]
    return "\n".join(lines)


def expect_exit(proc, code):
    if proc.returncode < 0:
        raise AssertionError(f"killed by signal {-proc.returncode}\n{describe(proc)}")
    assert proc.returncode == code, f"expected exit status {code}\n{describe(proc)}"
    for bad in ("Traceback", "Segmentation", "core dumped", "Aborted", "AddressSanitizer"):
        assert bad not in proc.stderr, f"stderr shows a crash ({bad})\n{describe(proc)}"


def expect_one_line_error(proc, path):
    lines = proc.stderr.strip("\n").splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}\n{describe(proc)}"
    assert lines[0].startswith("skysift-cli: "), f"stderr lacks 'skysift-cli: '\n{describe(proc)}"
    assert path in lines[0], f"stderr does not name {path}\n{describe(proc)}"
    assert len(lines[0]) > len("skysift-cli: ") + len(path) + 4, \
        f"stderr gives no reason\n{describe(proc)}"


def leftovers(folder):
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(folder, "*.tmp*")))


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    assert rows, f"{path} is empty"
    return rows[0], rows[1:]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# Inputs fuzzing found (tests/fuzz/crashes), with what each once did.
FUZZ_FINDINGS = [
    # A damaged RICE tile made cfitsio's decompressor read past its buffer.
    ("damaged compressed tile", "rice-damaged-tile.fits"),
    # cfitsio failed to convert a compressed image's header and left the
    # string allocated (a leak the sanitizer pass reports as an exit status).
    ("compressed header", "compressed-header-leak.fits"),
    # ZTILE2 = 0 made cfitsio divide by zero on reaching the HDU.
    ("zero tile size", "compressed-zero-tile.fits"),
    # The same, gzipped: smaller on disk than its first HDU, it looked as if
    # it had no extensions and skipped the guarded walk of the headers.
    ("zero tile size, gzipped", "compressed-zero-tile.fits.gz"),
    # A header made cfitsio ask for an impossible allocation.
    ("impossible allocation", "impossible-allocation.fits"),
    # A gzip trailer of zeros on 12 KB made cfitsio allocate 4 GiB to
    # inflate it into (it takes a size below the file's to have wrapped).
    ("gzip trailer asking 4 GiB", "gzip-trailer-4gib.fits.gz"),
    # A 6.7 KB file beginning "PK" whose zip header claims 3.9 GB made
    # cfitsio allocate that much to inflate it into.
    ("zip header asking 3.9 GB", "zip-header-3-9gb.fits"),
]


# ---------------------------------------------------------------- tests

class Suite:
    def __init__(self, tap, cli, tmp, shared):
        self.tap = tap
        self.cli = cli
        self.tmp = tmp
        self.shared = shared
        self.field = None          # synth field, when synth works
        self.synth_error = "synth did not run"
        self.find_proc = None      # find on the field with --csv and --json
        self.header = self.rows = self.summary = None

    def path(self, name):
        return os.path.join(self.tmp, name)

    def find_json(self, image, *args):
        """find IMAGE --quiet --json: the parsed summary."""
        out = self.path("run.json")
        if os.path.exists(out):
            os.unlink(out)
        proc = self.cli.run("find", image, "--quiet", "--json", out, *args)
        expect_exit(proc, 0)
        return read_json(out)

    def find_csv(self, image, name, *args):
        out = self.path(name)
        proc = self.cli.run("find", image, "--quiet", "--csv", out, *args)
        expect_exit(proc, 0)
        with open(out) as f:
            return f.read()

    # ---- synth and the field

    def test_synth(self):
        field, truth = self.path("field.fits"), self.path("truth.csv")
        proc = self.cli.run("synth", field, "--size", 256, "--seed", 7, "--truth", truth)
        if proc.returncode != 0 or not os.path.exists(field):
            self.synth_error = "synth failed: " + describe(proc)
            raise AssertionError(self.synth_error)
        data = open(field, "rb").read()
        assert data.startswith(b"SIMPLE  =                    T"), "not a FITS primary header"
        assert len(data) % 2880 == 0, f"file size {len(data)} is not whole 2880-byte blocks"
        header = data[:2880 * 4].decode("ascii", "replace")
        for key, value in (("NAXIS1", 256), ("NAXIS2", 256)):
            assert re.search(rf"{key} *= *{value}\b", header), f"header lacks {key} = {value}"
        assert os.path.exists(truth), "no truth CSV written"
        head, rows = read_csv(truth)
        assert rows, "truth CSV lists no sources"
        self.field = field

    def test_synth_deterministic(self):
        need(self.field, self.synth_error)
        again = self.path("field-again.fits")
        proc = self.cli.run("synth", again, "--size", 256, "--seed", 7)
        expect_exit(proc, 0)
        assert open(again, "rb").read() == open(self.field, "rb").read(), \
            "the same seed gave a different file"

    def run_find_on_field(self):
        need(self.field, self.synth_error)
        out_csv, out_json = self.path("field.csv"), self.path("field.json")
        proc = self.cli.run("find", self.field, "--csv", out_csv, "--json", out_json)
        expect_exit(proc, 0)
        assert os.path.exists(out_csv) and os.path.exists(out_json), "CSV or JSON missing"
        self.find_proc = proc
        self.summary = proc.stdout
        self.header, self.rows = read_csv(out_csv)
        self.json = read_json(out_json)

    def test_csv_header(self):
        need(self.find_proc, "find on the field did not run")
        assert self.header[:6] == CSV_COLUMNS, f"header is {','.join(self.header)}"

    def test_csv_rows(self):
        need(self.find_proc, "find on the field did not run")
        assert self.rows, "no sources found in the synth field"
        ids = [int(r[0]) for r in self.rows]
        assert ids == list(range(1, len(ids) + 1)), f"source_id not 1..n: {ids[:10]}"
        for r in self.rows:
            assert len(r) == len(self.header), f"row of {len(r)} fields: {r}"
            x, y, s, n, peak = float(r[1]), float(r[2]), float(r[3]), int(r[4]), float(r[5])
            assert 0 <= x < 256 and 0 <= y < 256, f"centroid off the image: {r}"
            # Source pixels lie above a positive threshold: the peak is part of the sum.
            assert n >= 1 and 0 < peak <= s * (1 + 1e-6), f"inconsistent row: {r}"
            if n == 1:
                assert math.isclose(s, peak, rel_tol=1e-6), f"one pixel, sum != peak: {r}"

    def test_json_keys(self):
        need(self.find_proc, "find on the field did not run")
        j = self.json
        assert j["image"] == self.field, f"image is {j.get('image')!r}"
        assert j["shape"] == [256, 256], f"shape is {j['shape']}"
        assert isinstance(j["nblank"], int) and j["nblank"] == 0, f"nblank {j['nblank']}"
        c = j["clipped"]
        for key in ("median", "std", "n", "iterations"):
            assert is_number(c.get(key)), f"clipped.{key} is {c.get(key)!r}"
        assert c["std"] > 0 and c["n"] > 0 and c["iterations"] >= 1, f"clipped {c}"
        assert is_number(j["threshold"]) and j["threshold"] > 0, f"threshold {j['threshold']}"
        assert math.isclose(j["threshold"], 5 * c["std"], rel_tol=1e-9), \
            f"threshold {j['threshold']} is not 5 sigma ({c['std']})"
        assert isinstance(j["nsources"], int), f"nsources {j['nsources']!r}"
        times = j["times_ms"]["cpu"]
        for step in STEPS:
            assert is_number(times.get(step)) and times[step] >= 0, f"times_ms.cpu.{step}"

    def test_json_total(self):
        need(self.find_proc, "find on the field did not run")
        t = self.json["times_ms"]["cpu"]
        four = t["clip"] + t["segment"] + t["label"] + t["measure"]
        assert math.isclose(t["total"], four, rel_tol=1e-6, abs_tol=1e-6), \
            f"total {t['total']} is not the four steps' sum {four}"

    def test_json_matches_csv(self):
        need(self.find_proc, "find on the field did not run")
        assert self.json["nsources"] == len(self.rows), \
            f"JSON says {self.json['nsources']} sources, CSV has {len(self.rows)} rows"

    def test_summary_image(self):
        need(self.find_proc, "find on the field did not run")
        s = self.summary
        assert self.field in s, f"summary does not name {self.field}:\n{s}"
        assert re.search(r"\b256 x 256\b", s), f"summary lacks the shape:\n{s}"

    def test_summary_stats(self):
        need(self.find_proc, "find on the field did not run")
        s, c = self.summary, self.json["clipped"]
        assert re.search(r"blank\D*\b0\b", s), f"summary lacks the blank count:\n{s}"
        m = re.search(r"median\s+([-+0-9.eE]+).*?sigma\s+([-+0-9.eE]+)", s)
        assert m, f"summary lacks the clipped median and sigma:\n{s}"
        assert math.isclose(float(m.group(1)), c["median"], rel_tol=1e-5), "median differs"
        assert math.isclose(float(m.group(2)), c["std"], rel_tol=1e-5), "sigma differs"

    def test_summary_sources(self):
        need(self.find_proc, "find on the field did not run")
        s = self.summary
        m = re.search(r"^threshold\b.*?(\S+)\s*$", s, re.M)
        assert m, f"summary lacks the threshold:\n{s}"
        assert math.isclose(float(m.group(1)), self.json["threshold"], rel_tol=1e-5)
        assert re.search(rf"sources\s+{len(self.rows)}\b", s), \
            f"summary does not say {len(self.rows)} sources:\n{s}"

    def test_summary_fluxes(self):
        need(self.find_proc, "find on the field did not run")
        lines = self.summary.splitlines()
        at = [i for i, line in enumerate(lines) if "largest" in line]
        assert at, f"summary lists no largest fluxes:\n{self.summary}"
        printed = []
        for line in lines[at[0] + 1:]:
            m = re.match(r"\s*(\d+)\s*:\s*([-+0-9.eE]+)\s*$", line)
            if not m:
                break
            printed.append((int(m.group(1)), float(m.group(2))))
        sums = sorted(((float(r[3]), int(r[0])) for r in self.rows), reverse=True)[:10]
        assert len(printed) == len(sums), f"printed {len(printed)} fluxes, expected {len(sums)}"
        for (label, value), (want, _) in zip(printed, sums):
            assert math.isclose(value, want, rel_tol=1e-5), f"{label}: {value} != {want}"
            assert math.isclose(float(self.rows[label - 1][3]), value, rel_tol=1e-5), \
                f"printed label {label} has not that sum"

    def test_summary_times(self):
        need(self.find_proc, "find on the field did not run")
        s = self.summary
        for step in ("load", "clip", "segment", "label", "measure"):
            assert re.search(rf"{step}\s+[0-9.]+", s), f"summary lacks the {step} time:\n{s}"

    # ---- options

    def test_repeat(self):
        need(self.field, self.synth_error)
        once = self.find_csv(self.field, "once.csv")
        out_json = self.path("repeat.json")
        proc = self.cli.run("find", self.field, "--repeat", 3, "--csv", self.path("thrice.csv"),
                            "--json", out_json)
        expect_exit(proc, 0)
        assert open(self.path("thrice.csv")).read() == once, "--repeat 3 changed the catalogue"
        times = read_json(out_json)["times_ms"]["cpu"]
        assert all(is_number(times[s]) for s in STEPS), f"times {times}"

    def test_connectivity_field(self):
        need(self.field, self.synth_error)
        four = self.find_json(self.field)["nsources"]
        eight = self.find_json(self.field, "--connectivity", 8)["nsources"]
        assert eight <= four, f"8-connected {eight} > 4-connected {four}"

    def staircase(self):
        nx = ny = 32
        pixels = noise_image(nx, ny, 11)
        for k in range(3):
            pixels[(10 + k) * nx + 10 + k] = 100.0
        return write_file(self.path("staircase.fits"), fits_hdu([nx, ny], pixels))

    def test_connectivity_staircase(self):
        image = self.staircase()
        four = self.find_json(image)["nsources"]
        eight = self.find_json(image, "--connectivity", 8)["nsources"]
        assert (four, eight) == (3, 1), f"4: {four}, 8: {eight} (expected 3 and 1)"

    def test_relative(self):
        nx = ny = 32
        pixels = noise_image(nx, ny, 12, offset=10.0)
        for x0, y0 in ((5, 5), (20, 24)):
            for dy in range(2):
                for dx in range(2):
                    pixels[(y0 + dy) * nx + x0 + dx] = 30.0
        image = write_file(self.path("offset.fits"), fits_hdu([nx, ny], pixels))
        absolute = self.find_json(image)
        relative = self.find_json(image, "--relative")
        c = relative["clipped"]
        assert math.isclose(relative["threshold"], c["median"] + 5 * c["std"], rel_tol=1e-9), \
            f"relative threshold {relative['threshold']} != median + 5 sigma"
        assert absolute["nsources"] == 1, f"absolute: {absolute['nsources']} sources, expected " \
            "1 (the whole offset background)"
        assert relative["nsources"] == 2, f"relative: {relative['nsources']} sources, expected 2"

    def test_max_iter(self):
        need(self.field, self.synth_error)
        full = self.find_json(self.field)["clipped"]
        one = self.find_json(self.field, "--max-iter", 1)["clipped"]
        assert full["iterations"] > 1, f"the field converged in {full['iterations']} pass"
        assert one["iterations"] == 1, f"--max-iter 1 ran {one['iterations']} passes"
        assert one["std"] != full["std"], "one pass gave the converged sigma"

    def test_threads(self):
        big = self.path("field-1024.fits")
        proc = self.cli.run("synth", big, "--size", 1024, "--seed", 3)
        need(proc.returncode == 0, "synth failed: " + describe(proc))
        one = self.find_csv(big, "t1.csv", "--threads", 1)
        for n in (2, 7):
            other = self.find_csv(big, f"t{n}.csv", "--threads", n)
            assert other == one, f"--threads {n} gave a different CSV from --threads 1"
        assert one.count("\n") > 2, "no sources to compare"

    def test_shape_and_rows(self):
        nx, ny = 40, 24
        pixels = noise_image(nx, ny, 13)
        pixels[5 * nx + 30] = 50.0    # x = 30, y = 5: the sixth row in the file
        image = write_file(self.path("wide.fits"), fits_hdu([nx, ny], pixels))
        out_csv, out_json = self.path("wide.csv"), self.path("wide.json")
        proc = self.cli.run("find", image, "--csv", out_csv, "--json", out_json)
        expect_exit(proc, 0)
        assert read_json(out_json)["shape"] == [ny, nx], "shape is not [ny, nx]"
        assert "40 x 24" in proc.stdout, f"summary lacks '40 x 24':\n{proc.stdout}"
        _, rows = read_csv(out_csv)
        assert len(rows) == 1, f"{len(rows)} sources, expected 1"
        assert (float(rows[0][1]), float(rows[0][2])) == (30.0, 5.0), f"centroid {rows[0][1:3]}"

    def test_json_escapes_path(self):
        image = self.path('odd "name" \\ [1].fits')
        shutil.copy(self.staircase(), image)
        j = self.find_json(image)
        assert j["image"] == image, f"image is {j['image']!r}"

    # ---- cubes

    def cube(self):
        """Primary header without data, then a 3-plane cube whose plane p
        holds p + 1 bright single pixels."""
        nx, ny = 24, 16
        pixels = []
        for p in range(3):
            plane = noise_image(nx, ny, 20 + p)
            for k in range(p + 1):
                plane[(3 + 4 * k) * nx + 4 + 6 * k] = 40.0
            pixels += plane
        data = fits_hdu([]) + fits_hdu([nx, ny, 3], pixels, extension=True,
                                       extra=[("BUNIT", "JY/BEAM")])
        return write_file(self.path("cube.fits"), data)

    def test_cube_default(self):
        j = self.find_json(self.cube())
        assert j["nsources"] == 1, f"{j['nsources']} sources on plane 0, expected 1"
        assert j["shape"] == [16, 24], f"shape {j['shape']}"
        if "hdu" in j:
            assert j["hdu"] == 2, f"read HDU {j['hdu']}, expected 2"

    def test_cube_plane(self):
        j = self.find_json(self.cube(), "--plane", 2)
        assert j["nsources"] == 3, f"{j['nsources']} sources on plane 2, expected 3"

    def test_cube_hdu_plane(self):
        j = self.find_json(self.cube(), "--hdu", 2, "--plane", 1)
        assert j["nsources"] == 2, f"{j['nsources']} sources on HDU 2 plane 1, expected 2"

    def test_cube_bad_hdu(self):
        image = self.cube()
        proc = self.cli.run("find", image, "--hdu", 1)
        expect_exit(proc, 1)
        expect_one_line_error(proc, image)

    def test_cube_bad_plane(self):
        image = self.cube()
        proc = self.cli.run("find", image, "--plane", 3)
        expect_exit(proc, 1)
        expect_one_line_error(proc, image)

    # ---- bad input

    def bad_inputs(self):
        """(name, path) of every kind of bad image."""
        cases = []
        p = write_file(self.path("notes.fits"), b"just some text, not FITS\n" * 20)
        cases.append(("not FITS", p))
        good = write_file(self.path("good.fits"), fits_hdu([64, 64], noise_image(64, 64, 5)))
        data = open(good, "rb").read()
        cases.append(("truncated", write_file(self.path("truncated.fits"),
                                              data[:2880 + 64 * 64 * 2])))
        cases.append(("missing file", self.path("no-such-image.fits")))
        folder = self.path("a-folder.fits")
        os.makedirs(folder, exist_ok=True)
        cases.append(("directory", folder))
        cases.append(("table only", write_file(self.path("table.fits"),
                                               fits_hdu([]) + fits_table_hdu([1.0, 2.0, 3.0]))))
        cases.append(("all NaN", write_file(self.path("all-nan.fits"),
                                            fits_hdu([8, 8], [float("nan")] * 64))))
        lying = shutil.copy(good, self.path("lying.fits"))
        patch_card(lying, "NAXIS2", 640)
        cases.append(("lying header", lying))
        # Inputs fuzzing found, each once a crash, leak or abort of the loader.
        crashes = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz", "crashes")
        for name, file in FUZZ_FINDINGS:
            cases.append((name, shutil.copy(os.path.join(crashes, file), self.path(file))))
        return cases

    def check_bad_message(self, path):
        out = os.path.join(self.tmp, "bad-out")
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        proc = self.cli.run("find", path, "--csv", os.path.join(out, "cat.csv"),
                            "--json", os.path.join(out, "run.json"))
        expect_exit(proc, 1)
        expect_one_line_error(proc, path)
        made = os.listdir(out)
        assert not made, f"files written for a bad input: {made}"

    def check_bad_keeps_csv(self, path):
        out = self.path("existing.csv")
        write_file(out, b"keep me\n")
        proc = self.cli.run("find", path, "--csv", out, "--json", self.path("existing.json"))
        expect_exit(proc, 1)
        assert open(out, "rb").read() == b"keep me\n", "the existing CSV was changed"
        assert not os.path.exists(self.path("existing.json")), "a JSON file was written"
        assert not leftovers(self.tmp), f"temporary files left: {leftovers(self.tmp)}"

    # ---- usage errors

    def check_usage(self, args, mentions):
        proc = self.cli.run(*args)
        expect_exit(proc, 2)
        assert mentions in proc.stderr, f"stderr does not mention {mentions!r}\n{describe(proc)}"

    def test_help(self):
        proc = self.cli.run("find", "--help")
        expect_exit(proc, 0)
        assert "--threshold" in proc.stdout, "find --help does not list the options"

    # ---- output failures

    def check_output_fails(self, option, target, folder=None):
        image = self.staircase()
        proc = self.cli.run("find", image, option, target)
        expect_exit(proc, 1)
        expect_one_line_error(proc, target)
        if folder is not None:
            assert not os.path.exists(target), f"{target} was created"
            if os.path.isdir(folder):
                assert not leftovers(folder), f"temporary files left: {leftovers(folder)}"

    def test_missing_folder(self, option):
        folder = self.path("no-such-folder")
        self.check_output_fails(option, os.path.join(folder, "out"), folder)

    def test_readonly_folder(self):
        if os.geteuid() == 0:
            raise Skip("running as root, which writes into read-only folders anyway")
        folder = self.path("read-only")
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o555)
        try:
            self.check_output_fails("--csv", os.path.join(folder, "cat.csv"), folder)
        finally:
            os.chmod(folder, 0o755)

    def test_proc_folder(self):
        """Where nobody may create files, not even root."""
        if not os.path.isdir("/proc/self"):
            raise Skip("this system has no /proc")
        self.check_output_fails("--csv", "/proc/skysift-test.csv", "/proc")

    def test_dev_full(self, option):
        if not os.path.exists("/dev/full"):
            raise Skip("this system has no /dev/full")
        self.check_output_fails(option, "/dev/full")

    def test_write_limit(self, option):
        """A write that fails half-way (the file size limit, like a full
        disk): exit 1, no partial file, no temporary left, old file kept."""
        need(self.field, self.synth_error)
        folder = self.path("limited")
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(folder)
        target = os.path.join(folder, "out")
        old = b"the previous result\n"
        write_file(target, old)

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

        proc = self.cli.run("find", self.field, "--quiet", option, target, preexec_fn=limit,
                            restore_signals=False)
        expect_exit(proc, 1)
        expect_one_line_error(proc, target)
        assert open(target, "rb").read() == old, "the previous file was changed"
        assert os.listdir(folder) == ["out"], f"files left: {os.listdir(folder)}"

    # ---- shared data

    def test_shared_gc_like(self):
        if not self.shared:
            raise Skip("no shared data folder (SKYSIFT_SHARED_DATA unset or missing); it sits "
                       "in ../shared/data beside a development checkout")
        image = os.path.join(self.shared, "gc_like_2048.fits")
        if not os.path.exists(image):
            raise Skip(f"{image} is not there")
        proc = self.cli.run("find", image)
        expect_exit(proc, 0)
        assert re.search(r"sources\s+344\b", proc.stdout), \
            f"expected 344 sources:\n{proc.stdout}"

    # ---- what the load time counts

    def test_wall_is_load_and_steps(self):
        """The JSON's wall_ms (the command's start to its outputs written)
        less its steps is its load: nothing the command does besides the
        steps goes uncounted, and the load ends with every pixel converted."""
        image = self.path("wall-2048.fits")
        proc = self.cli.run("synth", image, "--size", 2048, "--seed", 11)
        expect_exit(proc, 0)
        for run in range(3):
            summary = self.find_json(image)
            cpu = summary["times_ms"]["cpu"]
            steps = sum(v for k, v in cpu.items() if k not in ("load", "total"))
            assert abs(steps - cpu["total"]) <= 1e-6 * cpu["total"] + 1e-3, \
                f"the steps add up to {steps} ms, total says {cpu['total']} ms"
            rest = summary["wall_ms"] - steps
            assert abs(rest - cpu["load"]) <= 0.1 * cpu["load"], \
                (f"run {run}: wall {summary['wall_ms']:.3f} ms less the steps {steps:.3f} ms "
                 f"is {rest:.3f} ms, the load {cpu['load']:.3f} ms")

    # ---- a field in bands of rows

    def test_memory_limit_same_catalogue(self):
        """find --memory-limit small enough to run in bands of rows gives the
        whole-image run's CSV byte for byte and its statistics exactly: with
        bands of one row and of many, 4- and 8-connected, on 1 and 3 threads,
        on a field with blank rows, a blank block and infinities."""
        field = self.path("bands-1024.fits")
        expect_exit(self.cli.run("synth", field, "--size", 1024, "--seed", 5), 0)
        data = bytearray(open(field, "rb").read())
        end = 0
        while data[end:end + 8] != b"END     ":
            end += 80
        start = (end // 2880 + 1) * 2880
        nan, inf = struct.pack(">f", math.nan), struct.pack(">f", math.inf)
        for y in list(range(100, 103)) + [511, 512]:
            for x in range(1024):
                at = start + 4 * (y * 1024 + x)
                data[at:at + 4] = nan
        for y in range(600, 700):
            for x in range(300, 420):
                at = start + 4 * (y * 1024 + x)
                data[at:at + 4] = nan
        for y, x in ((5, 5), (800, 1000), (1023, 0)):
            at = start + 4 * (y * 1024 + x)
            data[at:at + 4] = inf
        blanked = write_file(self.path("bands-1024-blank.fits"), bytes(data))
        # A band of one row, and of 37 rows (12 bytes a pixel, half the limit).
        limits = [str(2 * 1024 * 12), str(2 * 1024 * 12 * 37)]
        checked = 0
        for image in (field, blanked):
            for conn in ("4", "8"):
                for threads in ("1", "3"):
                    common = ["--connectivity", conn, "--threads", threads]
                    whole_csv, whole_json = self.path("whole.csv"), self.path("whole.json")
                    proc = self.cli.run("find", image, "--quiet", "--csv", whole_csv,
                                        "--json", whole_json, *common)
                    expect_exit(proc, 0)
                    whole = read_json(whole_json)
                    for limit in limits:
                        csv_path, json_path = self.path("bands.csv"), self.path("bands.json")
                        proc = self.cli.run("find", image, "--quiet", "--csv", csv_path,
                                            "--json", json_path, "--memory-limit", limit,
                                            *common)
                        expect_exit(proc, 0)
                        bands = read_json(json_path)
                        what = f"{os.path.basename(image)} {' '.join(common)} limit {limit}"
                        assert bands["clipped"] == whole["clipped"], \
                            f"{what}: {bands['clipped']} != {whole['clipped']}"
                        for key in ("nsources", "threshold", "nblank", "top_sum_flux"):
                            assert bands[key] == whole[key], \
                                f"{what}: {key} {bands[key]} != {whole[key]}"
                        assert open(csv_path, "rb").read() == open(whole_csv, "rb").read(), \
                            f"{what}: the CSV differs from the whole-image run's"
                        checked += 1
                    assert whole["nsources"] > 50 and whole["nblank"] > 3 * 1024 \
                        or image == field, f"{image}: {whole['nsources']} sources"
        assert checked == 16

    def test_memory_limit_compressed(self):
        """A gzipped image cannot be read in parts: with --memory-limit it is
        loaded whole, and gives the plain file's catalogue."""
        field = need(self.field, self.synth_error)
        gz = self.path("field-limit.fits.gz")
        with open(field, "rb") as src, gzip.open(gz, "wb") as dst:
            dst.write(src.read())
        plain = self.find_csv(field, "plain.csv")
        limited = self.find_csv(gz, "gz.csv", "--memory-limit", "4096")
        assert limited == plain, "the gzipped image's catalogue differs"

    def test_memory_limit_refused(self):
        """--memory-limit takes a size, and only with the global method on the CPU."""
        field = need(self.field, self.synth_error)
        proc = self.cli.run("find", field, "--memory-limit", "lots")
        expect_exit(proc, 2)
        assert "--memory-limit" in proc.stderr, describe(proc)
        proc = self.cli.run("find", field, "--memory-limit", "1G", "--method", "local")
        expect_exit(proc, 2)
        assert "--memory-limit" in proc.stderr, describe(proc)

    # ---- all of it

    def run(self):
        t = self.tap.check
        t("synth writes a 256x256 field and its truth CSV", self.test_synth)
        t("synth with the same seed writes the same file", self.test_synth_deterministic)
        t("find on the synth field with --csv and --json exits 0", self.run_find_on_field)
        t("CSV header starts source_id,x_centroid,y_centroid,sum_flux,npix,peak_flux",
          self.test_csv_header)
        t("CSV has one row per source, source_id 1..n", self.test_csv_rows)
        t("JSON has image, shape, nblank, clipped, threshold, nsources, times_ms.cpu",
          self.test_json_keys)
        t("JSON times_ms.cpu.total is the sum of the four steps", self.test_json_total)
        t("JSON nsources equals the CSV rows", self.test_json_matches_csv)
        t("summary names the image and its shape", self.test_summary_image)
        t("summary gives the blank count and clipped median and sigma", self.test_summary_stats)
        t("summary gives the threshold and the number of sources", self.test_summary_sources)
        t("summary lists the ten largest summed fluxes, largest first",
          self.test_summary_fluxes)
        t("summary gives the time of each step", self.test_summary_times)
        t("--repeat 3 runs and gives the same catalogue", self.test_repeat)
        t("--connectivity 8 finds no more sources than 4 on the field",
          self.test_connectivity_field)
        t("--connectivity 8 joins a diagonal staircase that 4 splits in 3",
          self.test_connectivity_staircase)
        t("--relative thresholds at median + 5 sigma on an offset background", self.test_relative)
        t("--max-iter 1 stops clipping after one pass", self.test_max_iter)
        t("--threads 1, 2 and 7 give identical CSV", self.test_threads)
        t("non-square image: JSON shape [ny, nx], CSV x = column, y = row",
          self.test_shape_and_rows)
        t("JSON escapes quotes and backslashes in the image path", self.test_json_escapes_path)
        t("cube in an extension: found automatically, plane 0 by default", self.test_cube_default)
        t("cube: --plane 2 selects the third plane", self.test_cube_plane)
        t("cube: --hdu 2 --plane 1", self.test_cube_hdu_plane)
        t("cube: --hdu 1 (a header without data) fails with exit 1", self.test_cube_bad_hdu)
        t("cube: --plane 3 (out of range) fails with exit 1", self.test_cube_bad_plane)

        for name, path in self.bad_inputs():
            t(f"bad input ({name}): exit 1, one line naming the file, no output file",
              self.check_bad_message, path)
            t(f"bad input ({name}): an existing CSV is left untouched",
              self.check_bad_keeps_csv, path)

        field = self.field or "missing.fits"
        t("usage: an unknown option exits 2", self.check_usage,
          ["find", field, "--bogus"], "bogus")
        t("usage: --threshold abc exits 2", self.check_usage,
          ["find", field, "--threshold", "abc"], "--threshold")
        t("usage: --connectivity 6 exits 2", self.check_usage,
          ["find", field, "--connectivity", "6"], "--connectivity")
        t("usage: find without an image exits 2", self.check_usage, ["find"], "image")
        t("usage: an unknown command exits 2", self.check_usage, ["frobnicate"], "frobnicate")
        t("find --help exits 0 and lists the options", self.test_help)

        t("--csv into a missing folder: exit 1, no file", self.test_missing_folder, "--csv")
        t("--json into a missing folder: exit 1, no file", self.test_missing_folder, "--json")
        t("--csv into a read-only folder: exit 1, no file", self.test_readonly_folder)
        t("--csv into /proc, where no one may create files: exit 1, no file",
          self.test_proc_folder)
        t("--csv to /dev/full: exit 1 with a message", self.test_dev_full, "--csv")
        t("--json to /dev/full: exit 1 with a message", self.test_dev_full, "--json")
        t("--csv failing half-way leaves no partial or temporary file, old file kept",
          self.test_write_limit, "--csv")
        t("--json failing half-way leaves no partial or temporary file, old file kept",
          self.test_write_limit, "--json")

        t("find --memory-limit: bands of rows give the whole-image catalogue byte for byte",
          self.test_memory_limit_same_catalogue)
        t("find --memory-limit: a gzipped image is loaded whole, same catalogue",
          self.test_memory_limit_compressed)
        t("find --memory-limit: a bad size or another method is a usage error",
          self.test_memory_limit_refused)
        t("find: wall time less the steps is the load, within 10%",
          self.test_wall_is_load_and_steps)
        t("shared data: find gc_like_2048.fits reports 344 sources", self.test_shared_gc_like)


def main():
    tap = Tap()
    program = os.environ.get("SKYSIFT_CLI", "")
    if not (program and os.access(program, os.X_OK)):
        print("not ok 1 - skysift-cli is there to test")
        print(f"# SKYSIFT_CLI is {program!r}, not an executable program")
        print("1..1")
        return 1
    shared = os.environ.get("SKYSIFT_SHARED_DATA")
    if not (shared and os.path.isdir(shared)):
        shared = None
    with tempfile.TemporaryDirectory(prefix="skysift-cli-test-") as tmp:
        Suite(tap, Cli(program, tmp), tmp, shared).run()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
