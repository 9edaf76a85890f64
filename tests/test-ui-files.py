#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The desktop app's data files: the .desktop entry (FITS MIME types, the
icon and the binary it names), the AppStream metainfo (validated with
appstreamcli where installed), the GResource manifest (every file it
lists exists and every XML file parses) and the icon.

Standard library only; speaks TAP. Environment: SKYSIFT_SOURCE_ROOT."""
import configparser
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

APP_ID = "io.github.skysift.SkySift"
ROOT = os.environ.get("SKYSIFT_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RES = os.path.join(ROOT, "resources")


def desktop_entry():
    path = os.path.join(RES, f"{APP_ID}.desktop")
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str
    parser.read(path)
    entry = parser["Desktop Entry"]
    assert entry["Type"] == "Application", entry["Type"]
    assert entry["Exec"].split()[0] == "skysift", entry["Exec"]
    assert entry["Exec"].split()[1] in ("%f", "%F", "%u", "%U"), "Exec takes no file"
    assert entry["Icon"] == APP_ID, entry["Icon"]
    mimes = entry["MimeType"]
    assert mimes.endswith(";"), "MimeType must end with ;"
    assert {"application/fits", "image/fits"} <= set(mimes.strip(";").split(";")), mimes
    assert "Science" in entry["Categories"].split(";"), entry["Categories"]
    for key in ("Name", "Comment", "Categories", "Keywords"):
        assert entry.get(key), f"no {key}"


def desktop_validate():
    tool = shutil.which("desktop-file-validate")
    if tool is None:
        raise Skip("desktop-file-validate is not installed (desktop-file-utils)")
    r = subprocess.run([tool, os.path.join(RES, f"{APP_ID}.desktop")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def metainfo():
    tree = ET.parse(os.path.join(RES, f"{APP_ID}.metainfo.xml"))
    root = tree.getroot()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID, root.findtext("id")
    assert root.findtext("launchable") == f"{APP_ID}.desktop"
    mediatypes = {m.text for m in root.iter("mediatype")}
    assert {"application/fits", "image/fits"} <= mediatypes, mediatypes
    assert root.findtext("provides/binary") == "skysift"


def metainfo_validate():
    tool = shutil.which("appstreamcli")
    if tool is None:
        raise Skip("appstreamcli is not installed (appstream)")
    r = subprocess.run([tool, "validate", "--no-net",
                        os.path.join(RES, f"{APP_ID}.metainfo.xml")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def gresource():
    root = ET.parse(os.path.join(RES, "skysift.gresource.xml")).getroot()
    files = [f.text for f in root.iter("file")]
    assert files, "the manifest lists no file"
    for name in files:
        path = os.path.join(RES, name)
        assert os.path.exists(path), f"{name} is listed but missing"
        if name.endswith((".ui", ".svg", ".xml")):
            ET.parse(path)   # raises on malformed XML
    for needed in ("ui/sky-window.ui", "gtk/help-overlay.ui", "style.css",
                   "shaders/image.frag", "shaders/image.vert",
                   f"icons/scalable/apps/{APP_ID}.svg"):
        assert needed in files, f"{needed} is not in the GResource"


def icon():
    root = ET.parse(os.path.join(RES, "icons", "scalable", "apps", f"{APP_ID}.svg")).getroot()
    assert root.tag.endswith("svg"), root.tag
    assert root.get("viewBox"), "the icon has no viewBox"


def main():
    tap = Tap()
    tap.check("the .desktop entry opens FITS files with skysift", desktop_entry)
    tap.check("desktop-file-validate accepts the .desktop entry", desktop_validate)
    tap.check("the AppStream metainfo names the app, its binary and FITS", metainfo)
    tap.check("appstreamcli validates the metainfo", metainfo_validate)
    tap.check("every file of the GResource manifest exists and parses", gresource)
    tap.check("the icon is an SVG with a viewBox", icon)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
