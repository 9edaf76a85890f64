#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A GPU that is missing or fails must not cost the user the run: the CLI
warns on stderr, finishes on the CPU with the CPU's exact results (the same
CSV as --backend cpu), exits 0 and records backend "cpu" in its JSON.

Without a usable GPU (CI, a laptop) the missing-device case runs and the
fault cases skip, saying so. On a GPU machine the fault cases run:
  - out of memory: SKYSIFT_GPU_MEMORY_LIMIT caps what a context may hold;
  - a device that dies during a run: SKYSIFT_GPU_FAULT=STEP launches a
    kernel that traps before STEP, which leaves the CUDA context unusable
    the way a lost device or an Xid error does.
Each runs --backend gpu and --backend both, and convolve --demo."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import Skip, Tap  # noqa: E402

CLI = os.environ.get("SKYSIFT_CLI", "skysift-cli")
STEPS = ("clip", "segment", "label", "measure")


def run(*args, env=None, timeout=300):
    full_env = dict(os.environ)
    for name in ("SKYSIFT_GPU_MEMORY_LIMIT", "SKYSIFT_GPU_FAULT"):
        full_env.pop(name, None)
    full_env.update(env or {})
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env=full_env)


def describe(proc):
    return (f"command: {' '.join(proc.args)}\nexit status: {proc.returncode}\n"
            f"stdout:\n{proc.stdout[-1500:]}\nstderr:\n{proc.stderr[-1500:]}")


def expect_ok(proc):
    assert proc.returncode == 0, f"expected exit status 0\n{describe(proc)}"
    for bad in ("Segmentation", "core dumped", "Aborted", "Sanitizer"):
        assert bad not in proc.stderr, f"stderr shows a crash ({bad})\n{describe(proc)}"


class Suite:
    def __init__(self, tap, tmp):
        self.tap = tap
        self.tmp = tmp
        self.image = os.path.join(tmp, "field.fits")
        self.cpu_csv = None
        self.gpu_present = None
        self.gpu_why = ""

    def path(self, name):
        return os.path.join(self.tmp, name)

    def setup(self):
        proc = run("synth", self.image, "--size", "1024", "--seed", "7")
        expect_ok(proc)
        out = self.path("cpu.csv")
        expect_ok(run("find", self.image, "--quiet", "--csv", out))
        with open(out) as f:
            self.cpu_csv = f.read()
        assert self.cpu_csv.count("\n") > 10, "the field has too few sources to compare"
        # Does a GPU run here? A plain --backend gpu says, in its JSON.
        js = self.path("probe.json")
        proc = run("find", self.image, "--quiet", "--backend", "gpu", "--json", js)
        expect_ok(proc)
        with open(js) as f:
            self.gpu_present = json.load(f)["backend"] == "gpu"
        self.gpu_why = proc.stderr.strip()

    def check_fallback(self, backend, env, mentions):
        """find --backend BACKEND under env: a warning naming the cause, exit
        0, the CPU's CSV byte for byte, backend cpu in the JSON."""
        csv_out, js = self.path("fb.csv"), self.path("fb.json")
        for p in (csv_out, js):
            if os.path.exists(p):
                os.unlink(p)
        proc = run("find", self.image, "--backend", backend, "--csv", csv_out, "--json", js,
                   env=env)
        expect_ok(proc)
        assert "warning" in proc.stderr, f"no warning on stderr\n{describe(proc)}"
        assert mentions in proc.stderr + proc.stdout, \
            f"the output does not mention {mentions!r}\n{describe(proc)}"
        assert "gpu        unavailable:" in proc.stdout, \
            f"the summary does not say why the GPU did not run\n{describe(proc)}"
        with open(csv_out) as f:
            assert f.read() == self.cpu_csv, "the CSV differs from --backend cpu's"
        with open(js) as f:
            j = json.load(f)
        assert j["backend"] == "cpu", f"JSON backend is {j['backend']!r}, not cpu"
        assert "gpu" not in j["times_ms"], "JSON has GPU times for a run that failed"

    def need_gpu(self):
        if self.gpu_present is None:
            raise Skip("the setup failed")
        if not self.gpu_present:
            raise Skip(f"no usable GPU here ({self.gpu_why[:160]})")

    def test_no_device(self, backend):
        if self.gpu_present is None:
            raise Skip("the setup failed")
        if self.gpu_present:
            raise Skip("a GPU is present, so the missing-device path cannot run here")
        self.check_fallback(backend, {}, "no usable GPU")

    def test_memory_limit(self, backend):
        self.need_gpu()
        self.check_fallback(backend, {"SKYSIFT_GPU_MEMORY_LIMIT": "4M"},
                            "SKYSIFT_GPU_MEMORY_LIMIT")

    def test_device_fault(self, backend, step):
        self.need_gpu()
        self.check_fallback(backend, {"SKYSIFT_GPU_FAULT": step}, "CUDA")

    def test_gpu_runs_without_fault(self):
        """The control: the same field without a fault runs on the GPU and
        agrees with the CPU (so the fallbacks above are not the norm)."""
        self.need_gpu()
        csv_out = self.path("gpu.csv")
        proc = run("find", self.image, "--backend", "both", "--quiet", "--csv", csv_out)
        expect_ok(proc)
        assert "warning" not in proc.stderr, f"a warning without a fault\n{describe(proc)}"

    def test_convolve(self, env, mentions):
        if env:
            self.need_gpu()
        elif self.gpu_present is None or self.gpu_present:
            raise Skip("a GPU is present, so the missing-device path cannot run here")
        proc = run("convolve", "--demo", "--backend", "gpu", "--dtype", "f32", env=env)
        expect_ok(proc)
        assert "warning" in proc.stderr, f"no warning on stderr\n{describe(proc)}"
        assert mentions in proc.stdout + proc.stderr, \
            f"the output does not mention {mentions!r}\n{describe(proc)}"
        assert "cpu 2D" in proc.stdout and "agree: yes" in proc.stdout, \
            f"the CPU's results are not shown\n{describe(proc)}"

    def run(self):
        t = self.tap.check
        t("setup: a 1024x1024 field, its CPU catalogue, and whether a GPU runs here",
          self.setup)
        for backend in ("gpu", "both"):
            t(f"no usable GPU: find --backend {backend} warns and gives the CPU's catalogue",
              self.test_no_device, backend)
        t("no usable GPU: convolve --demo --backend gpu warns and runs on the CPU",
          self.test_convolve, {}, "GPU not used")
        t("a GPU without faults: find --backend both agrees and warns of nothing",
          self.test_gpu_runs_without_fault)
        for backend in ("gpu", "both"):
            t(f"GPU out of memory (SKYSIFT_GPU_MEMORY_LIMIT=4M): find --backend {backend} "
              "warns and gives the CPU's catalogue", self.test_memory_limit, backend)
            for step in STEPS:
                t(f"the device dies before {step} (SKYSIFT_GPU_FAULT={step}): find --backend "
                  f"{backend} warns and gives the CPU's catalogue",
                  self.test_device_fault, backend, step)
        t("GPU out of memory: convolve --demo --backend gpu warns and runs on the CPU",
          self.test_convolve, {"SKYSIFT_GPU_MEMORY_LIMIT": "4M"}, "SKYSIFT_GPU_MEMORY_LIMIT")


def main():
    tap = Tap()
    with tempfile.TemporaryDirectory(prefix="skysift-gpu-faults-") as tmp:
        Suite(tap, tmp).run()
    return tap.done()


if __name__ == "__main__":
    sys.exit(main())
