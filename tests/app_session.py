# SPDX-License-Identifier: GPL-3.0-or-later
"""The app's end-to-end scripts run their checks (`SCRIPT --inner`) inside
a virtual display and a session bus of their own, so that the app neither
needs a screen nor joins the user's bus."""
import os
import shutil
import subprocess
import sys

SCREEN = "1400x900x24"
TOOLS = ("xvfb-run", "dbus-run-session", "gdbus", "xauth")
PACKAGES = "xvfb xauth dbus-x11 libglib2.0-bin"


def rerun_in_session(tap, script, what, tools=(), packages="", timeout=900):
    """Re-runs script with --inner under xvfb-run and dbus-run-session and
    returns its exit status; skips what, saying why, where a tool or the
    app is missing. tools and packages: what the script needs beyond the
    display and the bus (xwd, x11-apps)."""
    for tool in TOOLS + tuple(tools):
        if shutil.which(tool) is None:
            tap.skip(what, f"{tool} is not installed (apt-get install "
                           f"{' '.join(filter(None, (PACKAGES, packages)))})")
            return tap.done()
    if not os.environ.get("SKYSIFT_GUI") or not os.path.exists(os.environ["SKYSIFT_GUI"]):
        tap.skip(what, "the app was not built (SKYSIFT_GUI unset)")
        return tap.done()
    cmd = ["xvfb-run", "-a", "-s", f"-screen 0 {SCREEN}", "dbus-run-session", "--",
           sys.executable, os.path.abspath(script), "--inner"]
    r = subprocess.run(cmd, stdout=sys.stdout, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if r.returncode != 0 and "1.." not in (r.stderr or ""):
        for line in (r.stderr or "").strip().splitlines()[-20:]:
            print(f"# {line}")
    return r.returncode


def app_env(work, **extra):
    """The app's environment for a test: X11 with Mesa's software OpenGL,
    settings in memory, no accessibility bus, caches and settings under
    work; extra variables on top. G_DEBUG is dropped: a GTK warning is
    reported by a script's last check, with the others still run, rather
    than aborting the app halfway (G_DEBUG=fatal-warnings)."""
    env = dict(os.environ)
    env.pop("G_DEBUG", None)
    env.update({
        "GDK_BACKEND": "x11",
        "LIBGL_ALWAYS_SOFTWARE": "1",
        "GSETTINGS_BACKEND": "memory",
        "NO_AT_BRIDGE": "1",
        "GTK_A11Y": "none",
        "XDG_CACHE_HOME": os.path.join(work, "cache"),
        "XDG_DATA_HOME": os.path.join(work, "data"),
        "XDG_CONFIG_HOME": os.path.join(work, "config"),
    })
    env.update(extra)
    return env
