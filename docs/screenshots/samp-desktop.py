#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift beside DS9 and TOPCAT on one SAMP hub, under Xvfb: the check
by hand of docs/ui.md's SAMP section, and its screenshot
(docs/screenshots/samp-desktop.png).

astropy's hub runs on the loopback with its lockfile in a folder of its own
(SAMP_HUB); DS9 (Debian's saods9) and TOPCAT register; skysift opens
gc_like_2048.fits, runs the four steps, connects and sends its catalogue
(the image first); then source 100 is selected in skysift, a row is
clicked in DS9's catalogue tool (xdotool), and source 20 is selected in
skysift after TOPCAT's table browser opens. What each client received is
printed; the screen is written as PNG.

Debian's saods9 8.4.1 reads VOTables (catvot.tcl) with tclxml but never
loads it, so its catalogue tool shows an empty table for any VOTable; DS9
is started with -source of a one-line file that loads it.

Usage: docs/screenshots/samp-desktop.py [BUILD_DIR]   (default: build)
Needs xvfb-run, dbus-run-session, saods9, topcat, xdotool, x11-apps (xwd),
netpbm, python3-pil and ../shared/data/gc_like_2048.fits."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCREEN = (2400, 1900)

if not os.environ.get("SKYSIFT_SAMP_DESKTOP_INNER"):
    os.environ["SKYSIFT_SAMP_DESKTOP_INNER"] = "1"
    os.execvp("xvfb-run", ["xvfb-run", "-a", "-s", f"-screen 0 {SCREEN[0]}x{SCREEN[1]}x24",
                           "dbus-run-session", "--", sys.executable] + sys.argv)

_spec = importlib.util.spec_from_file_location("samp_test",
                                               os.path.join(ROOT, "tests", "test-ui-samp.py"))
samp_test = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(samp_test)
from astropy.samp import SAMPHubServer, SAMPIntegratedClient  # noqa: E402
from PIL import Image  # noqa: E402

build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build"))
image = os.path.abspath(os.path.join(ROOT, "..", "shared", "data", "gc_like_2048.fits"))
work = tempfile.mkdtemp(prefix="skysift-samp-desktop-")
os.environ["HOME"] = work
lockfile = os.path.join(work, "samp-lock")
os.environ["SAMP_HUB"] = "std-lockurl:file://" + lockfile
hub = SAMPHubServer(addr="127.0.0.1", web_profile=False, lockfile=lockfile, mode="single")
hub.start()
env = dict(os.environ, GDK_BACKEND="x11", LIBGL_ALWAYS_SOFTWARE="1", GSETTINGS_BACKEND="memory",
           NO_AT_BRIDGE="1", GTK_A11Y="none", XDG_CACHE_HOME=os.path.join(work, "cache"))
load_xml = os.path.join(work, "load-tclxml.tcl")
with open(load_xml, "w") as f:
    f.write("package require xml\n")


def sh(cmd):
    return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout


def move(name, x, y):
    for wid in sh(f"xdotool search --name '{name}'").split():
        sh(f"xdotool windowmove {wid} {x} {y}")


def shoot(path):
    sh(f"xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng > {path}")


ds9 = subprocess.Popen(["ds9", "-geometry", "1000x900+1300+0", "-source", load_xml,
                        "-samp", "connect"], env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
topcat = subprocess.Popen(["topcat"], env=env, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
watch = SAMPIntegratedClient(name="watch")
watch.connect()


def names():
    return {c: watch.get_metadata(c).get("samp.name") for c in watch.get_registered_clients()}


t0 = time.time()
while time.time() - t0 < 120 and not {"SAOImageDS9", "topcat"} <= set(names().values()):
    time.sleep(1)
print("on the hub:", sorted(names().values()))
app = samp_test.App(os.path.join(build, "src", "ui", "skysift"), env,
                    open(os.path.join(work, "app.log"), "w"))
try:
    app.wait_on_bus()
    app.activate("open", samp_test.gv_string(image))
    app.activate("run", "'all'")
    samp_test.wait_idle(app, 120)
    app.activate("samp-connect", "true")
    samp_test.wait_for("skysift on the hub", lambda: samp_test.samp_state(app)["connected"])
    app.activate("samp-send-table")
    time.sleep(15)
    move("Catalog Tool", 1300, 930)
    move("skysift", 1300, 930)   # DS9's catalogue tool, titled with the table's name
    move("TOPCAT", 0, 1000)
    app.activate("select-source", "int64 100")
    time.sleep(8)
    st = samp_test.samp_state(app)
    print(f"skysift sent {st['sent']} messages: the image, the table, row 99 and its position")
    # DS9's catalogue tool: a click on a row there selects its source here.
    sh("xdotool mousemove 1370 1403 click 1")
    time.sleep(4)
    print("a click in DS9's catalogue tool: skysift selected source",
          samp_test.app_state(app)["selected"], "from", samp_test.samp_state(app)["last_received"])
    # TOPCAT's table browser (its toolbar's third button), then a selection
    # here that TOPCAT highlights.
    sh("xdotool mousemove 160 1038 click 1")
    time.sleep(6)
    move("Table Browser", 0, 1350)
    app.activate("select-source", "int64 20")
    time.sleep(5)
    full = os.path.join(work, "screen.png")
    shoot(full)
    out = os.path.join(ROOT, "docs", "screenshots", "samp-desktop.png")
    shot = Image.open(full).convert("RGB")
    shot.resize((shot.width // 2, shot.height // 2), Image.LANCZOS).save(out, optimize=True)
    print("wrote", out)
finally:
    app.activate("quit")
    app.proc.wait(20)
    ds9.terminate()
    topcat.terminate()
    watch.disconnect()
    hub.stop()
