#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""scripts/install-deps, the set-up step of scripts/demo and
scripts/run-tests, against stand-ins for dpkg-query, apt-cache, apt-get,
sudo and id that record what they are asked: nothing happens when nothing
is missing; root runs apt-get itself, another user through sudo, and a
user without sudo gets the command to run; a terminal is asked first and
an answer of no installs nothing; a line "a|b" installs the name apt
knows. Speaks TAP."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

SOURCE_ROOT = os.environ.get("SKYSIFT_SOURCE_ROOT",
                             os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

STUBS = {
    # Installed packages are the lines of $FAKE/installed.
    "dpkg-query": """#!/bin/bash
pkg=${@: -1}
grep -qx "$pkg" "$FAKE/installed" && printf installed || exit 1
""",
    # apt knows the packages listed in $FAKE/known.
    "apt-cache": """#!/bin/bash
echo "$2:"
if grep -qx "$2" "$FAKE/known"; then echo "  Candidate: 1.0"; else echo "  Candidate: (none)"; fi
""",
    "apt-get": """#!/bin/bash
echo "apt-get uid=$(id -u) $*" >> "$FAKE/log"
if [ "$1" = install ]; then
  for a in "$@"; do case $a in -*|install) ;; *) echo "$a" >> "$FAKE/installed";; esac; done
fi
""",
    "sudo": """#!/bin/bash
echo "sudo $*" >> "$FAKE/log"
FAKE_UID=0 "$@"
""",
    "id": """#!/bin/bash
echo "${FAKE_UID:-0}"
""",
}


class Fake:
    """A checkout whose package list is `packages`, and a PATH of
    stand-ins plus the few real tools the script uses."""

    def __init__(self, tmp, packages, installed=(), known=None, sudo=True):
        self.dir = tempfile.mkdtemp(dir=tmp)
        root = os.path.join(self.dir, "repo")
        os.makedirs(os.path.join(root, "scripts"))
        shutil.copy(os.path.join(SOURCE_ROOT, "scripts", "install-deps"),
                    os.path.join(root, "scripts"))
        with open(os.path.join(root, "scripts", "debian-packages.txt"), "w") as f:
            f.write("\n".join(packages) + "\n")
        self.script = os.path.join(root, "scripts", "install-deps")
        bin_dir = os.path.join(self.dir, "bin")
        os.makedirs(bin_dir)
        for name, text in STUBS.items():
            if name == "sudo" and not sudo:
                continue
            path = os.path.join(bin_dir, name)
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        for tool in ("bash", "dirname", "awk", "grep", "cat", "printf"):
            real = shutil.which(tool)
            if real is None:
                raise Skip(f"{tool} is not installed")
            os.symlink(real, os.path.join(bin_dir, tool))
        self.path = bin_dir
        for name, lines in (("installed", installed),
                            ("known", known if known is not None else packages)):
            with open(os.path.join(self.dir, name), "w") as f:
                f.write("".join(f"{x}\n" for x in lines))
        open(os.path.join(self.dir, "log"), "w").close()

    def run(self, uid=0, answer=None, ci=None):
        env = {"PATH": self.path, "FAKE": self.dir, "FAKE_UID": str(uid)}
        if ci is not None:
            env["CI"] = ci
        if answer is None:
            return subprocess.run([self.script], env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=60)
        # A terminal on stdin: `script` gives the command a pseudo-terminal.
        if shutil.which("script") is None:
            raise Skip("script (util-linux) is not installed")
        env["PATH"] = self.path + ":" + os.path.dirname(shutil.which("script"))
        return subprocess.run(["script", "-qec", self.script, "/dev/null"], env=env,
                              input=answer + "\n", capture_output=True, text=True, timeout=60)

    def log(self):
        with open(os.path.join(self.dir, "log")) as f:
            return f.read().splitlines()


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="skysift-deps-") as tmp:
        def nothing_missing():
            fake = Fake(tmp, ["gcc", "meson"], installed=["gcc", "meson"])
            proc = fake.run()
            assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
            assert fake.log() == [], f"apt-get ran: {fake.log()}"
        tap.check("nothing missing: nothing said, apt-get not run", nothing_missing)

        def root_installs():
            fake = Fake(tmp, ["gcc", "# a comment", "", "meson"], installed=["gcc"])
            proc = fake.run(uid=0)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert "meson" in proc.stdout and "gcc" not in proc.stdout.split("needs")[1], \
                proc.stdout
            log = fake.log()
            assert not any(x.startswith("sudo") for x in log), f"sudo as root: {log}"
            assert log[-1].startswith("apt-get uid=0 install") and log[-1].endswith(" meson"), log
        tap.check("root: says what is missing and runs apt-get itself, no sudo, no question",
                  root_installs)

        def user_sudo():
            fake = Fake(tmp, ["meson"])
            proc = fake.run(uid=1000)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            log = fake.log()
            assert log[0].startswith("sudo apt-get update"), log
            assert any(x.startswith("sudo apt-get install") for x in log), log
            assert log[-1].startswith("apt-get uid=0 install"), log
        tap.check("another user: apt-get through sudo", user_sudo)

        def user_no_sudo():
            fake = Fake(tmp, ["meson", "ninja-build"], sudo=False)
            proc = fake.run(uid=1000)
            assert proc.returncode == 1, proc.returncode
            assert "as root run" in proc.stderr and "meson ninja-build" in proc.stderr, \
                proc.stderr
            assert fake.log() == [], fake.log()
        tap.check("another user without sudo: exit 1 and the command to run as root",
                  user_no_sudo)

        def terminal_no():
            fake = Fake(tmp, ["meson"])
            proc = fake.run(uid=0, answer="n")
            assert proc.returncode == 1, proc.stdout
            assert "[Y/n]" in proc.stdout and "nothing installed" in proc.stdout, proc.stdout
            assert fake.log() == [], fake.log()
        tap.check("a terminal is asked first; no installs nothing and fails", terminal_no)

        def terminal_yes():
            fake = Fake(tmp, ["meson"])
            proc = fake.run(uid=0, answer="y")
            assert proc.returncode == 0 and "[Y/n]" in proc.stdout, proc.stdout
            assert any("install" in x for x in fake.log()), fake.log()
        tap.check("a terminal answering yes installs", terminal_yes)

        def ci_not_asked():
            fake = Fake(tmp, ["meson"])
            proc = fake.run(uid=0, answer="n", ci="true")
            assert proc.returncode == 0 and "[Y/n]" not in proc.stdout, proc.stdout
            assert any("install" in x for x in fake.log()), fake.log()
        tap.check("CI=true: not asked even at a terminal", ci_not_asked)

        def alternatives():
            fake = Fake(tmp, ["libclang-rt-14-dev|libclang-rt-18-dev"],
                        known=["libclang-rt-18-dev"])
            proc = fake.run(uid=0)
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert fake.log()[-1].endswith(" libclang-rt-18-dev"), fake.log()
            fake = Fake(tmp, ["libclang-rt-14-dev|libclang-rt-18-dev"],
                        installed=["libclang-rt-18-dev"])
            proc = fake.run(uid=0)
            assert proc.returncode == 0 and fake.log() == [], fake.log()
        tap.check("a line a|b installs the name apt knows, and none where one is installed",
                  alternatives)
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
