#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift opening a big image, as a script drives it: under xvfb-run and
dbus-run-session, through the app's D-Bus actions (test-ui-e2e.py's App).

A 4096 x 4096 field (skysift-cli synth) stands for a big one: the app is
started with SKYSIFT_PROGRESSIVE_MIN_PIXELS below its size, so that it
takes the big images' path (a reduced view first, the zoom-out levels
after the first full frame), and with SKYSIFT_READ_CHUNK_DELAY_US, which
slows the read so that the open is still under way when the test looks,
on any machine. Checked:
- the reduced view is drawn before the full image's first frame, then
  the levels; the screen during the open shows the field (the X screen
  grabbed with xwd), not the image shown before; the state says how much
  is read meanwhile (open_read_fraction), as the bar does on screen;
- the image read so is the CLI's: Run All's catalogue is `skysift-cli
  find --csv`'s byte for byte, and the min-max limits are the file's;
- a cancel in the middle leaves the image shown before (its name, its
  picture on screen), and three opens cancelled so give back their memory
  (VmRSS within 24 MiB of where it was; one image is 64 MiB).
SKYSIFT_UI_ARTIFACTS (a folder) keeps the screen grabs as PNG files.
Skips, saying why, without xvfb-run, dbus-run-session, gdbus or xwd.
"""
import importlib.util
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np
from astropy.io import fits

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from app_session import app_env, rerun_in_session  # noqa: E402
from taplib import Tap  # noqa: E402

_spec = importlib.util.spec_from_file_location("ui_e2e", os.path.join(HERE, "test-ui-e2e.py"))
ui_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ui_e2e)
App, gv_string, need = ui_e2e.App, ui_e2e.gv_string, ui_e2e.need

SIZE = 4096
CHUNK_DELAY_US = 250000   # 16 chunks of 4 MiB on 2 threads: about 2 s of reading


def grab_screen(path):
    """The X screen as an (h, w, 3) array (xwd -root, 24 or 32-bit TrueColor),
    also written to path as a PNG."""
    raw = subprocess.run(["xwd", "-root", "-silent"], capture_output=True, check=True,
                         timeout=30).stdout
    fields = struct.unpack(">25I", raw[:100])
    header_size, width, height = fields[0], fields[4], fields[5]
    bits_per_pixel, bytes_per_line, ncolors = fields[11], fields[12], fields[19]
    assert bits_per_pixel in (24, 32), f"xwd: {bits_per_pixel} bits a pixel"
    nbytes = bits_per_pixel // 8
    start = header_size + 12 * ncolors
    data = np.frombuffer(raw[start:start + bytes_per_line * height], dtype=np.uint8)
    img = data.reshape(height, bytes_per_line)[:, :width * nbytes].reshape(height, width, nbytes)
    byte_order = fields[7]   # 0: LSB first, B G R (X) in memory
    rgb = img[:, :, [2, 1, 0]] if byte_order == 0 else img[:, :, [nbytes - 3, nbytes - 2,
                                                                   nbytes - 1]]
    rgb = np.ascontiguousarray(rgb)
    rows = b"".join(b"\0" + rgb[y].tobytes() for y in range(height))

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body
                + struct.pack(">I", zlib.crc32(kind + body) & 0xffffffff))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height,
                                                                    8, 2, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(rows, 6)) + chunk(b"IEND", b""))
    return rgb.astype(np.int16)


def differing(a, b, tol=40):
    """The share of the screen's pixels that differ by more than tol."""
    return float(np.mean(np.abs(a - b).max(axis=2) > tol))


def flat_share(grab, final, n=8):
    """The share of the n x n blocks textured in final (the field's noise)
    that are flat in grab: a picture drawn wrong over part of the view (a
    level read as another's size) is flat there, where colour differences
    alone say little of a field in mid grey."""
    def block_std(rgb):
        g = rgb.mean(axis=2)
        h, w = (g.shape[0] // n) * n, (g.shape[1] // n) * n
        return g[:h, :w].reshape(h // n, n, w // n, n).std(axis=(1, 3))
    a, b = block_std(grab), block_std(final)
    return float(np.mean(a[b > 1.0] < 0.25))


def vm_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def quit_app(app):
    app.activate("quit")
    try:
        app.proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        app.proc.kill()


def outer(tap):
    return rerun_in_session(tap, __file__, "opening a big image under Xvfb", tools=("xwd",),
                            packages="x11-apps")


def inner(tap):
    cli = os.environ["SKYSIFT_CLI"]
    work = tempfile.mkdtemp(prefix="skysift-open-")
    keep = os.environ.get("SKYSIFT_UI_ARTIFACTS")
    big = os.path.join(work, "field_4096.fits")
    ramp = os.path.join(work, "ramp.fits")
    subprocess.run([cli, "synth", big, "--size", str(SIZE)], check=True, capture_output=True,
                   timeout=300)
    # The image shown before: a left-to-right ramp, nothing like the field.
    fits.PrimaryHDU(np.tile(np.linspace(0, 1, 512, dtype=np.float32), (384, 1))).writeto(ramp)
    with fits.open(big) as hdul:
        pixels = hdul[0].data
        file_min, file_max = float(np.nanmin(pixels)), float(np.nanmax(pixels))
    env = app_env(work, SKYSIFT_PROGRESSIVE_MIN_PIXELS=str(SIZE * SIZE // 2),
                  SKYSIFT_READ_CHUNK_DELAY_US=str(CHUNK_DELAY_US))
    if os.environ.get("SKYSIFT_SANITIZED"):
        # AddressSanitizer keeps freed blocks in a quarantine (256 MiB):
        # without it, memory freed is given back as the app gives it.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":quarantine_size_mb=0"
    log = open(os.path.join(work, "app.log"), "w")
    app = App(os.environ["SKYSIFT_GUI"], env, log)
    facts = {}

    def screen(name):
        path = os.path.join(work, name)
        rgb = grab_screen(path)
        if keep:
            os.makedirs(keep, exist_ok=True)
            shutil.copy(path, os.path.join(keep, name))
        return rgb

    def open_ramp():
        app.wait_on_bus()
        app.wait_idle()
        app.activate("open", gv_string(ramp))
        st = app.wait_idle()
        assert st["image"] == ramp, st["image"]
        assert st["preview_to_frame_ms"] == 0 and st["open_to_levels_ms"] == 0, \
            "a small image took the big images' path"
        time.sleep(0.5)
        facts["ramp"] = screen("open-0-ramp.png")
    tap.check("the app starts and opens a small image the usual way", open_ramp)

    def wait_for_preview(timeout=60):
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            st = app.state()
            if st["preview_shown"] and st["preview_to_frame_ms"] > 0:
                return st
            assert st["busy"], f"the open ended with no reduced view shown: {st}"
            time.sleep(0.05)
        raise AssertionError("no reduced view within {timeout} s")

    def reduced_first():
        need(facts.get("ramp") is not None, "the app did not start")
        app.activate("open", gv_string(big))
        st = wait_for_preview()
        assert st["image"] == ramp, "the window took the image before it was read"
        during = screen("open-1-reduced-view.png")
        # Later in the read: the bar and the status line say how far.
        t0 = time.monotonic()
        while st["open_read_fraction"] < 0.3 and time.monotonic() - t0 < 60:
            time.sleep(0.1)
            st = app.state()
        assert 0.3 <= st["open_read_fraction"] < 1 and st["image"] == ramp, \
            f"read {st['open_read_fraction']}, image {st['image']}"
        screen("open-1b-progress.png")
        st = app.wait_idle(timeout=120)
        assert st["image"] == big, st["image"]
        assert not st["preview_shown"]
        assert 0 < st["preview_to_frame_ms"] < st["open_to_frame_ms"] <= st["open_to_levels_ms"], \
            (st["preview_to_frame_ms"], st["open_to_frame_ms"], st["open_to_levels_ms"])
        time.sleep(0.5)
        full = screen("open-2-full.png")
        d_full, d_ramp = differing(during, full), differing(during, facts["ramp"])
        print(f"# reduced view at {st['preview_to_frame_ms']:.0f} ms, first full frame at "
              f"{st['open_to_frame_ms']:.0f} ms, levels drawn at {st['open_to_levels_ms']:.0f} ms"
              f" (made in {st['levels_ms']:.0f} ms), the main loop's longest wait between its "
              f"50 ms ticks {st['open_max_tick_ms']:.0f} ms; screen during the open: {100 * d_full:.1f}% "
              f"of its pixels differ from the full image's, {100 * d_ramp:.1f}% from the ramp's")
        assert st["open_max_tick_ms"] >= 50, "the open's ticks were not metered"
        assert d_full < 0.05, f"the reduced view is not the field: {100 * d_full:.1f}% differ"
        assert flat_share(during, full) < 0.1, "the reduced view is flat where the field is not"
        assert d_ramp > 2 * d_full + 0.05, "the screen during the open still shows the ramp"
        facts["big"] = st
    tap.check("a big image: its reduced view is drawn first, then the full image, then its "
              "zoom-out levels; the screen shows the field meanwhile", reduced_first)

    def same_as_cli():
        st = need(facts.get("big"), "the big image did not open")
        assert st["scale"] == [file_min, file_max] or (
            abs(st["scale"][0] - file_min) <= 1e-6 * abs(file_min)
            and abs(st["scale"][1] - file_max) <= 1e-6 * abs(file_max)), \
            f"min-max limits {st['scale']}, the file's {file_min} .. {file_max}"
        cli_csv, app_csv = os.path.join(work, "cli.csv"), os.path.join(work, "app.csv")
        r = subprocess.run([cli, "find", big, "--csv", cli_csv, "--quiet"], capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        app.activate("run", "'all'")
        app.wait_idle(timeout=300)
        app.activate("export-catalog", gv_string(app_csv))
        app.wait_idle()
        with open(app_csv, "rb") as a, open(cli_csv, "rb") as b:
            mine, theirs = a.read(), b.read()
        assert mine == theirs, "the catalogue differs from skysift-cli find's"
        nsources = mine.count(b"\n") - 1
        print(f"# {nsources} sources, the CLI's to the byte")
    tap.check("the image read so is the CLI's: min-max limits, Run All's catalogue byte for "
              "byte", same_as_cli)

    def cancel():
        need(facts.get("ramp") is not None, "the app did not start")
        app.activate("open", gv_string(ramp))
        app.wait_idle()
        time.sleep(0.5)
        before = screen("cancel-0-ramp.png")
        rss0 = vm_rss_mib(app.proc.pid)
        for k in range(3):
            app.activate("open", gv_string(big))
            st = wait_for_preview()
            app.activate("cancel")
            st = app.wait_idle()
            assert st["image"] == ramp, f"after a cancel the window shows {st['image']}"
            assert not st["preview_shown"], "the reduced view stayed"
            assert st["last_error"] == "" or "field_4096" not in st["last_error"], \
                st["last_error"]
        time.sleep(0.5)
        after = screen("cancel-1-after.png")
        rss1 = vm_rss_mib(app.proc.pid)
        d = differing(before, after)
        print(f"# VmRSS {rss0:.0f} MiB before, {rss1:.0f} MiB after three cancelled opens; "
              f"{100 * d:.2f}% of the screen differs from before")
        assert d < 0.02, f"the screen after the cancel is not the ramp's: {100 * d:.1f}% differ"
        assert rss1 - rss0 < 24, f"VmRSS grew by {rss1 - rss0:.0f} MiB"
    tap.check("a cancel during a big open leaves the image shown before and gives back the "
              "memory (three times)", cancel)

    quit_app(app)

    def through_opengl(extra, tag):
        need(facts.get("big"), "the big image did not open on the CPU view")
        gl_app = App(os.environ["SKYSIFT_GUI"], dict(env, SKYSIFT_VIEW="gl", **extra), log)
        try:
            gl_app.wait_on_bus()
            gl_app.wait_idle()
            gl_app.activate("open", gv_string(ramp))
            st = gl_app.wait_idle()
            assert "CPU" not in st["gl"], f"not drawn with OpenGL: {st['gl']}"
            time.sleep(0.5)
            ramp_screen = screen(f"{tag}-0-ramp.png")
            gl_app.activate("open", gv_string(big))
            t0 = time.monotonic()
            while True:
                st = gl_app.state()
                if st["preview_shown"] and st["preview_to_frame_ms"] > 0:
                    break
                assert st["busy"] and time.monotonic() - t0 < 60, f"no reduced view: {st}"
                time.sleep(0.05)
            during = screen(f"{tag}-1-reduced-view.png")
            level0 = None
            if "SKYSIFT_LEVELS_DELAY_US" in extra:
                # The image itself before its levels: level 0 drawn, or, where
                # it is wider than a texture, the reduced view standing in.
                while st["busy"] and not (st["image"] == big and st["open_to_frame_ms"] > 0):
                    time.sleep(0.05)
                    st = gl_app.state()
                assert st["busy"] and st["open_to_levels_ms"] == 0, \
                    f"the levels came before the test could look: {st}"
                level0 = screen(f"{tag}-1b-before-levels.png")
            st = gl_app.wait_idle(timeout=120)
            assert 0 < st["preview_to_frame_ms"] < st["open_to_frame_ms"] \
                <= st["open_to_levels_ms"], st
            time.sleep(0.5)
            full = screen(f"{tag}-2-full.png")
            d_full, d_ramp = differing(during, full), differing(during, ramp_screen)
            print(f"# OpenGL ({st['gl']}{', ' + str(extra) if extra else ''}): "
                  f"{100 * d_full:.1f}% of the screen during the open "
                  f"differs from the full image's, {100 * d_ramp:.1f}% from the ramp's")
            assert d_full < 0.05 and d_ramp > 2 * d_full + 0.05, (d_full, d_ramp)
            flat = flat_share(during, full)
            assert flat < 0.1, f"the reduced view is flat in {100 * flat:.0f}% of the field"
            if level0 is not None:
                d_level0, flat = differing(level0, full), flat_share(level0, full)
                print(f"# before the levels: {100 * d_level0:.1f}% of the screen differs from "
                      f"the final picture's; flat in {100 * flat:.1f}% of the field's blocks")
                assert d_level0 < 0.05 and flat < 0.1, \
                    f"before its levels the image drew wrong: {d_level0}, {flat}"
        finally:
            quit_app(gl_app)
    tap.check("the same through the OpenGL view: the reduced view's texture, then level 0, "
              "then the levels added to it", through_opengl, {}, "gl")
    tap.check("through OpenGL with textures of 2048 pixels at most (the image is 4096 wide): "
              "the reduced view stands in for level 0, then the levels from level 1",
              through_opengl, {"SKYSIFT_GL_MAX_TEXTURE_SIZE": "2048",
                               "SKYSIFT_LEVELS_DELAY_US": "3000000"}, "gl-2048")
    shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    tap = Tap()
    sys.exit(inner(tap) if "--inner" in sys.argv else outer(tap))
