#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runs a TAP test program that needs a display on an X server of its own.

usage: run-in-xvfb.py PROGRAM [ARGS...]

Xvfb picks a free display number itself (-displayfd): xvfb-run -a looks for
a free number and then starts the server, so two runs starting at the same
moment (this suite beside another checkout's) can pick the same one and one
of them fails. The program runs with GDK_BACKEND=x11, Mesa's software
OpenGL and no session bus (it needs none, and must not join the user's);
its output and exit status are its own. Without Xvfb it prints a TAP plan
that skips, saying why, and exits 0 (to meson's TAP protocol, status 77 is
an error, not a skip)."""
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile

SCREEN = "1280x1024x24"
START_TIMEOUT_S = 30


def skip(reason):
    print(f"1..0 # SKIP {reason}")
    sys.stdout.flush()
    return 0


def start_xvfb(log):
    """Starts Xvfb and returns (process, display), or (None, why)."""
    read_fd, write_fd = os.pipe()
    try:
        server = subprocess.Popen(
            ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", SCREEN, "-nolisten", "tcp"],
            pass_fds=(write_fd,), stdout=log, stderr=log)
    finally:
        os.close(write_fd)
    number = b""
    with os.fdopen(read_fd, "rb", buffering=0) as pipe:
        while not number.endswith(b"\n"):
            ready, _, _ = select.select([pipe], [], [], START_TIMEOUT_S)
            chunk = pipe.read(16) if ready else b""
            if not chunk:
                server.kill()
                server.wait()
                return None, f"Xvfb did not start within {START_TIMEOUT_S} s"
            number += chunk
    return server, ":" + number.decode().strip()


def stop(server):
    if server.poll() is None:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    if shutil.which("Xvfb") is None:
        return skip("Xvfb is not installed (apt-get install xvfb): this test needs a display")
    with tempfile.TemporaryFile("w+") as log:
        server, display = start_xvfb(log)
        if server is None:
            log.seek(0)
            for line in log.read().strip().splitlines()[-20:]:
                print(f"# Xvfb: {line}")
            print(f"Bail out! {display}")
            return 1
        env = dict(os.environ)
        env.update({
            "DISPLAY": display,
            "GDK_BACKEND": "x11",
            "LIBGL_ALWAYS_SOFTWARE": "1",
            "NO_AT_BRIDGE": "1",
            "GTK_A11Y": "none",
            "GSETTINGS_BACKEND": "memory",
            # Nowhere to connect to: GApplication then runs without a bus,
            # and GLib does not autolaunch one.
            "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/skysift-test-no-bus",
        })
        env.pop("WAYLAND_DISPLAY", None)
        child = subprocess.Popen(argv[1:], env=env)

        def forward(signum, frame):
            child.send_signal(signum)

        signal.signal(signal.SIGTERM, forward)
        signal.signal(signal.SIGINT, forward)
        try:
            status = child.wait()
        finally:
            stop(server)
        return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
