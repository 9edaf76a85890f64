#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift on a SAMP hub, end to end: the app under xvfb-run and
dbus-run-session, driven through its D-Bus actions (app.samp-connect,
app.samp-send-table, app.select-source...), beside astropy's hub
(astropy.samp.SAMPHubServer on the loopback, web profile off, its lockfile
in a folder of its own named by SAMP_HUB) and an astropy client
(SAMPIntegratedClient) standing in for TOPCAT and DS9.

Checks: a clear message and no crash without a hub; registration with the
metadata; the image sent before the table; the table the client reads from
the URL it was sent has the rows of `skysift-cli find --votable`; a
table.highlight.row from the client selects that source in the app; the
app's selection reaches the client as table.highlight.row and
coord.pointAt.sky (the VOTable's RA and Dec); a coord.pointAt.sky from the
client (astropy.wcs's position of a source's peak) selects that source;
disconnecting and quitting unregister; a hub that shuts down leaves the app
disconnected with a message, still running.

Speaks TAP; skips, saying why, without xvfb-run, dbus-run-session, gdbus
or astropy. Environment as test-ui-e2e.py (SKYSIFT_GUI, SKYSIFT_CLI,
SKYSIFT_SHARED_DATA, SKYSIFT_UI_ARTIFACTS keeps the screenshot)."""
import ast
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from app_session import app_env, rerun_in_session  # noqa: E402
from taplib import Tap  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "ui_e2e", os.path.join(os.path.dirname(os.path.abspath(__file__)), "test-ui-e2e.py"))
ui_e2e = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ui_e2e)
App, gv_string, need = ui_e2e.App, ui_e2e.gv_string, ui_e2e.need

MTYPES = ("image.load.fits", "table.load.votable", "table.highlight.row", "coord.pointAt.sky")


def describe_json(app, action):
    """An action's state that is JSON text, as gdbus prints the string
    (in double quotes where it holds a single one)."""
    out = app.describe(action)
    m = re.search(r"<(['\"])(.*)\1>", out, re.S)
    if not m:
        raise AssertionError(f"no state in {out!r}")
    return json.loads(ast.literal_eval(m.group(1) + m.group(2) + m.group(1)))


def samp_state(app):
    return describe_json(app, "samp")


def app_state(app):
    return describe_json(app, "state")


def wait_idle(app, timeout=60):
    return wait_for("the app idle", lambda: not app_state(app)["busy"] and app_state(app),
                    timeout)


def wait_for(what, fn, timeout=20):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        value = fn()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


class Listener:
    """An astropy client that keeps every message it is sent."""

    def __init__(self):
        from astropy.samp import SAMPIntegratedClient
        self.client = SAMPIntegratedClient(name="skysift-test", callable=True)
        self.messages = []
        self.lock = threading.Lock()

    def connect(self):
        self.client.connect()
        for mtype in MTYPES:
            self.client.bind_receive_notification(mtype, self._notified)
            self.client.bind_receive_call(mtype, self._called)

    def _notified(self, private_key, sender_id, mtype, params, extra):
        with self.lock:
            self.messages.append((sender_id, mtype, dict(params)))

    def _called(self, private_key, sender_id, msg_id, mtype, params, extra):
        self._notified(private_key, sender_id, mtype, params, extra)
        self.client.reply(msg_id, {"samp.status": "samp.ok", "samp.result": {}})

    def of(self, mtype):
        with self.lock:
            return [m for m in self.messages if m[1] == mtype]


def outer(tap):
    try:
        import astropy.samp  # noqa: F401
        import astropy.table  # noqa: F401
    except ImportError as e:
        tap.skip("the app on a SAMP hub", f"astropy is not installed ({e})")
        return tap.done()
    return rerun_in_session(tap, __file__, "the app on a SAMP hub", timeout=600)


def inner(tap):
    import numpy as np
    from astropy import log
    # The hub's INFO lines are not TAP.
    log.setLevel("WARNING")
    from astropy.io import fits
    from astropy.samp import SAMPHubServer
    from astropy.table import Table
    from astropy.wcs import WCS

    shared = os.environ.get("SKYSIFT_SHARED_DATA", "")
    cli = os.environ["SKYSIFT_CLI"]
    work = tempfile.mkdtemp(prefix="skysift-samp-")
    image = os.path.abspath(os.path.join(shared, "gc_like_2048.fits"))
    if not os.path.exists(image):
        print(f"# {image} is not there: using skysift-cli synth's GC-like field")
        image = os.path.join(work, "gc_like_2048.fits")
        subprocess.run([cli, "synth", image], check=True, capture_output=True, timeout=300)
    cli_votable = os.path.join(work, "cli.xml")
    subprocess.run([cli, "find", image, "--votable", cli_votable], check=True,
                   capture_output=True, timeout=300)
    keep = os.environ.get("SKYSIFT_UI_ARTIFACTS")

    # The hub's lockfile in a folder of its own: nothing here reads or
    # writes ~/.samp (HOME is the folder too).
    lockfile = os.path.join(work, "samp-lock")
    os.environ["SAMP_HUB"] = "std-lockurl:file://" + lockfile
    os.environ["HOME"] = work
    env = app_env(work)
    log = open(os.path.join(work, "app.log"), "w")
    app = App(os.environ["SKYSIFT_GUI"], env, log)
    hubs = []
    listener = None
    facts = {}

    def start_hub():
        hub = SAMPHubServer(addr="127.0.0.1", web_profile=False, lockfile=lockfile,
                            mode="single")
        hub.start()
        hubs.append(hub)
        return hub

    def no_hub():
        app.wait_on_bus()
        app.activate("open", gv_string(image))
        app.activate("run", "'all'")
        st = wait_idle(app, timeout=120)
        assert st["nsources"] > 0, f"no sources: {st['last_error']}"
        app.activate("samp-connect", "true")
        s = wait_for("a message for the missing hub", lambda: samp_state(app)["last_error"] and
                     samp_state(app))
        assert not s["connected"], s
        assert lockfile in s["last_error"] and "hub" in s["last_error"], s["last_error"]
        assert "samp-lock" in wait_idle(app)["last_error"], "no dialog's message in the state"
        print(f"# message: {s['last_error']}")
        facts["started"] = True
    tap.check("without a hub, app.samp-connect says where it looked, and the app goes on",
              no_hub)

    def registers():
        nonlocal listener
        need(facts.get("started"), "the app did not start")
        hub = start_hub()
        listener = Listener()
        listener.connect()
        app.activate("samp-connect", "true")
        s = wait_for("registration", lambda: samp_state(app)["connected"] and samp_state(app))
        assert s["client_id"] in listener.client.get_registered_clients(), s
        meta = listener.client.get_metadata(s["client_id"])
        assert meta["samp.name"] == "skysift", meta
        subs = listener.client.get_subscriptions(s["client_id"])
        for mtype in ("table.highlight.row", "coord.pointAt.sky", "image.load.fits",
                      "table.load.votable", "samp.hub.event.shutdown"):
            assert mtype in subs, f"{mtype} not in {sorted(subs)}"
        assert s["callback_url"].startswith("http://127.0.0.1:"), s["callback_url"]
        assert "true" in app.describe("samp-connect"), app.describe("samp-connect")
        facts["id"] = s["client_id"]
        facts["hub"] = hub
        print(f"# registered as {s['client_id']}, callback {s['callback_url']}")
    tap.check("app.samp-connect registers with astropy's hub: metadata, subscriptions, "
              "a loopback callback", registers)

    def no_catalogue():
        need(facts.get("id"), "the app did not register")
        app.activate("open", gv_string(image))
        wait_idle(app)
        app.activate("samp-send-table")
        s = wait_for("a message", lambda: "no catalogue" in samp_state(app)["last_error"]
                     and samp_state(app))
        assert not listener.of("table.load.votable"), "a table was sent"
        print(f"# message: {s['last_error']}")
        facts["queued"] = True
    tap.check("app.samp-send-table before measure says there is no catalogue yet", no_catalogue)

    def sends_table():
        need(facts.get("queued"), "the app did not register")
        # As a script sends them, one after the other: the send waits for
        # the open and the run queued before it.
        app.activate("open", gv_string(image))
        app.activate("run", "'all'")
        app.activate("samp-send-table")
        busy = app_state(app)["busy"]
        tables = wait_for("table.load.votable at the client",
                          lambda: listener.of("table.load.votable"))
        images = listener.of("image.load.fits")
        assert images, "no image.load.fits before the table"
        with listener.lock:
            order = [m[1] for m in listener.messages]
        assert order.index("image.load.fits") < order.index("table.load.votable"), order
        sender, _, params = tables[0]
        assert sender == facts["id"], (sender, facts["id"])
        assert images[0][2]["url"] == "file://" + image, images[0][2]
        got = Table.read(params["url"])
        want = Table.read(cli_votable)
        assert len(got) == len(want) > 0, f"{len(got)} rows, the CLI {len(want)}"
        assert got.colnames == want.colnames, (got.colnames, want.colnames)
        for name in want.colnames:
            a, b = np.asarray(got[name]), np.asarray(want[name])
            if a.dtype.kind == "f":
                assert np.array_equal(a, b, equal_nan=True), f"column {name} differs"
            else:
                assert (a == b).all(), f"column {name} differs"
        facts["table"] = params
        facts["rows"] = want
        print(f"# the client read {len(got)} rows x {len(got.colnames)} columns from "
              f"{params['url']}, as skysift-cli find --votable (asked while "
              f"{'busy' if busy else 'idle'})")
    tap.check("app.samp-send-table after open and run: image.load.fits then "
              "table.load.votable; the client reads the CLI's rows from the URL", sends_table)

    def highlight_in():
        need(facts.get("table"), "no table was sent")
        for row in (41, 7):
            listener.client.notify_all({"samp.mtype": "table.highlight.row", "samp.params": {
                "table-id": facts["table"]["table-id"], "url": facts["table"]["url"],
                "row": str(row)}})
            wait_for(f"row {row} selected in the app",
                     lambda: app_state(app)["selected"] == row + 1)
        # By the URL alone, as TOPCAT writes a file URL (file:/tmp/...).
        url = "file:" + facts["table"]["url"][len("file://"):]
        listener.client.notify_all({"samp.mtype": "table.highlight.row", "samp.params": {
            "url": url, "row": "12"}})
        wait_for("row 12 selected by URL", lambda: app_state(app)["selected"] == 13)
        listener.client.notify_all({"samp.mtype": "table.highlight.row", "samp.params": {
            "table-id": facts["table"]["table-id"], "row": "7"}})
        wait_for("row 7 selected by table-id", lambda: app_state(app)["selected"] == 8)
        # Another application's table leaves the selection alone.
        listener.client.notify_all({"samp.mtype": "table.highlight.row", "samp.params": {
            "table-id": "elsewhere", "url": "file:///elsewhere.xml", "row": "3"}})
        wait_for("the message received", lambda: "elsewhere" in
                 " ".join(samp_state(app)["last_received"]))
        assert app_state(app)["selected"] == 8, app_state(app)["selected"]
        print("# rows 41 and 7 highlighted by the client: sources 42 and 8 selected; "
              "by file:/ URL alone and by table-id alone too")
    tap.check("table.highlight.row from the client selects that source in the app", highlight_in)

    def highlight_out():
        need(facts.get("table"), "no table was sent")
        before = len(listener.of("table.highlight.row"))
        app.activate("select-source", "int64 100")
        got = wait_for("table.highlight.row at the client",
                       lambda: listener.of("table.highlight.row")[before:])
        params = got[0][2]
        assert params["row"] == "99", params
        assert params["url"] == facts["table"]["url"], params
        assert params["table-id"] == facts["table"]["table-id"], params
        point = wait_for("coord.pointAt.sky at the client",
                         lambda: [m for m in listener.of("coord.pointAt.sky")
                                  if m[0] == facts["id"]])
        ra, dec = float(point[-1][2]["ra"]), float(point[-1][2]["dec"])
        row = facts["rows"][99]
        assert abs(ra - row["ra"]) < 1e-9 and abs(dec - row["dec"]) < 1e-9, \
            (ra, dec, row["ra"], row["dec"])
        time.sleep(0.5)
        assert len(listener.of("table.highlight.row")) == before + 1, "the app sent it twice"
        print(f"# source 100 selected in the app: row 99 highlighted, pointAt {ra:.6f} {dec:.6f}")
    tap.check("selecting a source in the app sends table.highlight.row and coord.pointAt.sky",
              highlight_out)

    def point_in():
        need(facts.get("table"), "no table was sent")
        rows = facts["rows"]
        wcs = WCS(fits.getheader(image)).celestial
        source = 200
        row = rows[source - 1]
        ra, dec = wcs.pixel_to_world_values(row["peak_x"], row["peak_y"])
        listener.client.notify_all({"samp.mtype": "coord.pointAt.sky", "samp.params": {
            "ra": repr(float(ra)), "dec": repr(float(dec))}})
        wait_for(f"source {source} selected", lambda: app_state(app)["selected"] == source)
        path = os.path.join(work, "samp-selected.png")
        app.activate("screenshot", gv_string(path))
        wait_for("the screenshot", lambda: os.path.exists(path))
        if keep:
            time.sleep(0.5)
            shutil.copy(path, os.path.join(keep, "ui-samp-selected.png"))
        print(f"# coord.pointAt.sky at source {source}'s peak ({float(ra):.6f}, "
              f"{float(dec):.6f}): selected")
    tap.check("coord.pointAt.sky from the client selects the source there", point_in)

    def galactic():
        need(facts.get("table"), "no table was sent")
        from astropy.coordinates import SkyCoord
        import astropy.units as u
        # The same pixels on a galactic SIN grid centred near Sgr A*.
        path = os.path.join(work, "galactic.fits")
        with fits.open(image) as hdul:
            header = hdul[0].header.copy()
            for key in ("RADESYS", "EQUINOX"):
                header.remove(key, ignore_missing=True)
            header["CTYPE1"], header["CTYPE2"] = "GLON-SIN", "GLAT-SIN"
            header["CRVAL1"], header["CRVAL2"] = 359.944, -0.046
            fits.writeto(path, hdul[0].data, header, overwrite=True)
        votable = os.path.join(work, "galactic.xml")
        subprocess.run([cli, "find", path, "--votable", votable], check=True,
                       capture_output=True, timeout=300)
        rows = Table.read(votable)
        app.activate("open", gv_string(path))
        app.activate("run", "'all'")
        app.activate("samp-send-table")
        wait_for("the galactic table", lambda: len(listener.of("table.load.votable")) >= 2)
        before = len(listener.of("coord.pointAt.sky"))
        app.activate("select-source", "int64 50")
        point = wait_for("coord.pointAt.sky", lambda: listener.of("coord.pointAt.sky")[before:])
        ra, dec = float(point[0][2]["ra"]), float(point[0][2]["dec"])
        want = SkyCoord(rows[49]["glon"] * u.deg, rows[49]["glat"] * u.deg,
                        frame="galactic").fk5
        sep = SkyCoord(ra * u.deg, dec * u.deg, frame="fk5").separation(want).arcsec
        assert sep < 1e-3, f"{sep} arcsec from astropy's FK5 position"
        # And back: astropy's FK5 position of source 80's peak selects it.
        w = WCS(fits.getheader(path)).celestial
        l, b = w.pixel_to_world_values(rows[79]["peak_x"], rows[79]["peak_y"])
        eq = SkyCoord(float(l) * u.deg, float(b) * u.deg, frame="galactic").fk5
        listener.client.notify_all({"samp.mtype": "coord.pointAt.sky", "samp.params": {
            "ra": repr(eq.ra.deg), "dec": repr(eq.dec.deg)}})
        wait_for("source 80 selected", lambda: app_state(app)["selected"] == 80)
        print(f"# galactic image: source 50 sent {sep * 1000:.3f} mas from astropy's FK5 "
              f"position; source 80's peak pointed at from FK5: selected")
    tap.check("on a galactic image coord.pointAt.sky goes out and comes in as FK5 RA, Dec",
              galactic)

    def loads():
        need(facts.get("table"), "no table was sent")
        listener.client.notify_all({"samp.mtype": "image.load.fits", "samp.params": {
            "url": "file://" + image, "name": "gc"}})
        wait_for("the image opened", lambda: app_state(app)["image"] == image
                 and not app_state(app)["busy"])
        app.activate("run", "'all'")
        wait_idle(app)
        listener.client.notify_all({"samp.mtype": "table.load.votable", "samp.params": {
            "url": "file://" + cli_votable, "table-id": "cli"}})
        st = wait_for("the overlay", lambda: app_state(app)["overlays"]
                      and not app_state(app)["busy"] and app_state(app))
        overlay = st["overlays"][-1]
        assert overlay["path"] == cli_votable, overlay
        assert overlay["n"] == len(facts["rows"]), overlay
        assert overlay.get("matched") == len(facts["rows"]), overlay
        # Served over HTTP, as TOPCAT serves what it sends.
        import functools
        import http.server
        handler = functools.partial(http.server.SimpleHTTPRequestHandler,
                                    directory=os.path.dirname(cli_votable))
        handler.log_message = lambda *args: None
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_port}/{os.path.basename(cli_votable)}"
            listener.client.notify_all({"samp.mtype": "table.load.votable", "samp.params": {
                "url": url, "name": "from http"}})
            st = wait_for("the second overlay", lambda: len(app_state(app)["overlays"]) == 2
                          and not app_state(app)["busy"] and app_state(app))
            second = st["overlays"][-1]
            assert second["n"] == len(facts["rows"]), second
            assert second.get("matched") == len(facts["rows"]), second
            listener.client.notify_all({"samp.mtype": "table.load.votable", "samp.params": {
                "url": url.replace(".xml", "-missing.xml")}})
            s = wait_for("a message", lambda: "404" in samp_state(app)["last_error"]
                         and samp_state(app))
        finally:
            server.shutdown()
        listener.client.notify_all({"samp.mtype": "table.load.votable", "samp.params": {
            "url": "ftp://127.0.0.1/table.xml"}})
        s2 = wait_for("a message", lambda: "ftp:" in samp_state(app)["last_error"]
                      and samp_state(app))
        print(f"# the CLI's VOTable sent by the client by file: and by http: URL: overlays of "
              f"{overlay['n']} and {second['n']} rows, all matched; messages: "
              f"{s['last_error']} / {s2['last_error']}")
    tap.check("image.load.fits opens the image, table.load.votable draws an overlay (file: "
              "and http: URLs); a missing or ftp: URL is refused with the reason", loads)

    def disconnects():
        need(facts.get("id"), "the app did not register")
        app.activate("samp-connect", "false")
        wait_for("unregistration", lambda: facts["id"] not in
                 listener.client.get_registered_clients())
        assert not samp_state(app)["connected"]
        app.activate("samp-send-table")
        s = wait_for("a message", lambda: "not connected" in samp_state(app)["last_error"]
                     and samp_state(app))
        print(f"# message: {s['last_error']}")
    tap.check("app.samp-connect false unregisters; sending then says it is not connected",
              disconnects)

    def hub_gone():
        need(facts.get("hub"), "no hub")
        app.activate("samp-connect", "true")
        wait_for("registration", lambda: samp_state(app)["connected"])
        listener.client.disconnect()
        facts["hub"].stop()
        s = wait_for("the app to notice", lambda: not samp_state(app)["connected"]
                     and samp_state(app))
        assert "shut down" in s["last_error"], s["last_error"]
        assert app.proc.poll() is None, "the app ended"
        app.activate("samp-send-image")
        wait_for("a message", lambda: "not connected" in samp_state(app)["last_error"])
        print(f"# message: {s['last_error']}")
    tap.check("a hub that shuts down leaves the app disconnected with a message", hub_gone)

    def quit_unregisters():
        need(app.proc.poll() is None, "the app is not running")
        start_hub()
        watcher = Listener()
        watcher.connect()
        app.activate("samp-connect", "true")
        s = wait_for("registration", lambda: samp_state(app)["connected"] and samp_state(app))
        assert s["client_id"] in watcher.client.get_registered_clients()
        app.activate("quit")
        status = app.proc.wait(timeout=20)
        assert status == 0, f"the app exited with status {status}"
        assert s["client_id"] not in watcher.client.get_registered_clients(), \
            "the app quit without unregistering"
        watcher.client.disconnect()
    tap.check("app.quit unregisters from the hub", quit_unregisters)

    if app.proc.poll() is None:
        app.proc.kill()
    for hub in hubs:
        hub.stop()
    log.close()
    with open(os.path.join(work, "app.log")) as f:
        complaints = [line for line in f if "CRITICAL" in line or "WARNING" in line
                      or "Sanitizer" in line or "runtime error:" in line]
    tap.check("the app logged no GTK warnings or criticals, nor sanitizer reports",
              lambda: need(not complaints, "".join(complaints[:10])))
    shutil.rmtree(work, ignore_errors=True)
    return tap.done()


if __name__ == "__main__":
    tap = Tap()
    sys.exit(inner(tap) if "--inner" in sys.argv else outer(tap))
