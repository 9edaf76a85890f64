# SPDX-License-Identifier: GPL-3.0-or-later
"""skysift.survey: many images on a local Dask cluster of worker processes,
against skysift-cli find run on each image; resuming; the command; GPU
pinning; and on a device, the GPU workers against the CPU's catalogues.

Every cluster is closed by the code under test (context managers); a test
that hangs is stopped by faulthandler with every thread's stack, so the
suite fails instead of waiting for meson's limit."""
import csv
import faulthandler
import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("distributed", reason="python3-distributed is not installed")

import skysift  # noqa: E402
from skysift import survey  # noqa: E402
from skysift.survey import _cluster, _records  # noqa: E402

NFIELDS = 30
BROKEN = 17          # the index of the broken field
TEST_LIMIT_S = 240   # one test, cluster start included


@pytest.fixture(autouse=True)
def hang_guard():
    faulthandler.dump_traceback_later(TEST_LIMIT_S, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def fields(tmp_path_factory):
    """30 small synthetic fields, one of them broken (cut short half way
    through its data, as an interrupted copy leaves a file), and the CLI's
    CSV of each good one."""
    cli = os.environ.get("SKYSIFT_CLI")
    if not cli or not os.path.exists(cli):
        pytest.skip("SKYSIFT_CLI is not set to a built skysift-cli (meson test sets it)")
    d = tmp_path_factory.mktemp("fields")
    paths, expected = [], {}
    for k in range(NFIELDS):
        path = str(d / f"field{k:02d}.fits")
        subprocess.run([cli, "synth", path, "--size", str(160 + 8 * k), "--seed", str(k + 1)],
                       check=True, capture_output=True)
        if k == BROKEN:
            size = os.path.getsize(path)
            with open(path, "r+b") as f:
                f.truncate(size // 2)
        else:
            ref = str(d / f"field{k:02d}.cli.csv")
            subprocess.run([cli, "find", path, "--csv", ref, "--quiet"], check=True,
                           capture_output=True)
            expected[path] = ref
        paths.append(path)
    return paths, expected


@pytest.fixture(scope="module")
def scheduler():
    """A local cluster of 2 worker processes that several tests share,
    reached through its address as a remote one is."""
    from distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", host="127.0.0.1") as cluster:
        yield cluster.scheduler_address


def cli_rows(paths, expected):
    """The CLI's CSVs concatenated, each row after its image's path."""
    header, rows = None, []
    for path in paths:
        if path not in expected:
            continue
        with open(expected[path]) as f:
            lines = f.read().splitlines()
        header = "image," + lines[0]
        rows += [f"{path},{line}" for line in lines[1:]]
    return header, rows


def mtimes(out):
    return {n: os.stat(os.path.join(out, n)).st_mtime_ns for n in sorted(os.listdir(out))
            if not n.startswith("survey.")}


def test_two_workers_gather_the_clis_catalogues(fields, tmp_path):
    paths, expected = fields
    out = str(tmp_path / "out")
    s = survey.run(paths, out, workers=2, gpus="none")
    assert s.figures["done"] == NFIELDS - 1 and s.figures["failed"] == 1, s.summary
    # CPU workers: they see no GPU, even on a machine with one.
    assert {i["backend"] for i in s.images if i["status"] == "done"} == {"cpu"}
    assert {w["cuda_visible_devices"] for w in s.workers.values()} == {""}
    broken = s.images[BROKEN]
    assert broken["status"] == "failed" and paths[BROKEN] in broken["error"], broken
    assert [i["image"] for i in s.images] == paths
    # Two worker processes shared the batch, each task with its share of
    # the cores (cores / 2 workers x 1 task).
    assert len({i["worker"] for i in s.images}) == 2
    share = max(1, len(os.sched_getaffinity(0)) // 2)
    assert {i["threads"] for i in s.images} == {share}
    # The gathered table is the CLI's CSVs, row for row and byte for byte.
    header, rows = cli_rows(paths, expected)
    with open(s.paths["csv"]) as f:
        got = f.read().splitlines()
    assert got[0] == header
    assert got[1:] == rows
    assert s.figures["sources"] == len(rows) > NFIELDS
    # And as an astropy table: every column equals the CLI's values.
    pytest.importorskip("astropy")
    from astropy.table import Table, vstack
    ref = vstack([Table.read(expected[p], format="ascii.csv") for p in paths
                  if p in expected])
    assert len(s.table) == len(ref)
    assert list(s.table["image"]) == [r.split(",", 1)[0] for r in rows]
    for name in ref.colnames:
        if ref[name].dtype.kind in "fiu":
            np.testing.assert_array_equal(np.asarray(s.table[name]), np.asarray(ref[name]),
                                          err_msg=name)
        else:
            assert list(s.table[name]) == list(ref[name]), name
    assert str(s.table["x_centroid"].unit) == "pix"
    # Per image: the CLI's ECSV (provenance in meta) and the record.
    one = Table.read(os.path.join(out, "field00.ecsv"), format="ascii.ecsv")
    assert one.meta["clip_kappa"] == 3.0 and len(one) > 0
    rec = _records.read_record(out, "field00")
    assert rec["status"] == "done" and rec["version"] == skysift.__version__
    assert rec["input_size"] == os.path.getsize(paths[0])
    with open(s.paths["summary"]) as f:
        assert json.load(f)["figures"]["failed"] == 1


def test_a_resumed_run_does_no_work_twice(fields, tmp_path, scheduler):
    paths, expected = fields
    out = str(tmp_path / "out")
    first = survey.run(paths, out, scheduler=scheduler, threshold=5.0)
    assert first.figures["ran"] == NFIELDS and first.figures["done"] == NFIELDS - 1
    before = mtimes(out)
    again = survey.run(paths, out, scheduler=scheduler, threshold=5.0)
    # Nothing ran: every good image is skipped, the broken one too (it
    # failed on this very file), and no file in the folder was rewritten.
    assert again.figures["ran"] == 0, again.summary
    assert again.figures["skipped"] == NFIELDS - 1 and again.figures["skipped_failed"] == 1
    assert again.images[BROKEN]["status"] == "skipped-failed"
    assert mtimes(out) == before
    with open(again.paths["csv"]) as f, open(first.paths["csv"]) as g:
        assert f.read() == g.read()
    # A touched file runs again, alone.
    st = os.stat(paths[3])
    os.utime(paths[3], ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    touched = survey.run(paths, out, scheduler=scheduler)
    assert touched.figures["ran"] == 1 and touched.images[3]["status"] == "done"
    # Another version in a record, or a format not written before: those run.
    rec = _records.read_record(out, "field05")
    rec["version"] = "0.0.0"
    _records.write_record(out, "field05", rec)
    changed = survey.run(paths, out, scheduler=scheduler)
    assert changed.figures["ran"] == 1 and changed.images[5]["status"] == "done"
    # Other parameters: every image runs again; the failed one is retried
    # on request.
    other = survey.run(paths, out, scheduler=scheduler, threshold=6.0, retry_failed=True)
    assert other.figures["ran"] == NFIELDS
    assert other.figures["sources"] < first.figures["sources"]


def test_the_command_reports_the_failure_and_the_summary(fields, tmp_path, scheduler):
    paths, _ = fields
    out = str(tmp_path / "cmd")
    good = [p for k, p in enumerate(paths) if k != BROKEN][:6]
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "skysift.survey", "--scheduler", scheduler, "--out", out,
           "--format", "votable"]
    r = subprocess.run(cmd + good, capture_output=True, text=True, env=env, timeout=180)
    assert r.returncode == 0, r.stderr
    # Dask's progress bar, then the summary line.
    assert "100% Completed" in r.stdout
    assert "survey: 6 images: 6 done, 0 failed" in r.stdout.splitlines()[-1]
    cmd.append("--no-progress")
    assert os.path.exists(os.path.join(out, "field00.vot"))
    # The scheduler named by its file, as dask-scheduler --scheduler-file
    # writes it for a Slurm job.
    from distributed import Client
    sched_file = str(tmp_path / "scheduler.json")
    with Client(scheduler) as client:
        client.write_scheduler_file(sched_file)
    cmd[cmd.index("--scheduler") + 1] = sched_file
    r = subprocess.run(cmd + [paths[BROKEN]] + good, capture_output=True, text=True, env=env,
                       timeout=180)
    assert r.returncode == 1
    assert f"failed {paths[BROKEN]}: " in r.stderr
    assert "1 failed, 6 skipped (done before)" in r.stdout
    assert f"scheduler {scheduler}" in r.stdout
    # A bad parameter is refused with the core's message before any work.
    r = subprocess.run(cmd + ["--clip-kappa", "0"] + good, capture_output=True, text=True,
                       env=env, timeout=180)
    assert r.returncode == 2 and "clipping kappa must be a positive number" in r.stderr
    r = subprocess.run(cmd + ["--workers", "3"] + good, capture_output=True, text=True,
                       env=env, timeout=180)
    assert r.returncode == 2 and "shape a local cluster" in r.stderr


def test_local_workers_are_pinned_one_per_gpu(fields, tmp_path):
    """With GPUs named, one worker per GPU, each seeing only its own: the
    pinning alone is checked here (without a device each image runs on
    the CPU, saying why when the GPU was asked for)."""
    paths, expected = fields
    good = [p for p in paths if p in expected][:8]
    s = survey.run(good, str(tmp_path / "pinned"), gpus=["0", "1"], backend="auto")
    assert s.figures["done"] == 8
    assert sorted(w["cuda_visible_devices"] for w in s.workers.values()) == ["0", "1"]
    by_worker = {}
    for i in s.images:
        by_worker.setdefault(i["worker"], set()).add(i["cuda_visible_devices"])
    assert all(len(v) == 1 for v in by_worker.values())
    assert all(w["tasks"] == 2 for w in s.workers.values())


def test_threads_per_task_share_each_hosts_cores():
    class FakeClient:
        infos = {"a1": {"host": "A", "cpus": list(range(16))},
                 "a2": {"host": "A", "cpus": list(range(16))},
                 "b1": {"host": "B", "cpus": [0, 1, 2, 3]},
                 "b2": {"host": "B", "cpus": [4, 5, 6, 7, 8, 9, 10, 11]},
                 "c1": {"host": "C", "cpus": [0]}}

        def run(self, fn):
            return self.infos

        def nthreads(self):
            return {"a1": 2, "a2": 2, "b1": 1, "b2": 2, "c1": 4}

    threads, _ = _cluster.threads_per_task(FakeClient())
    # Host A: 16 cores over 2 workers x 2 tasks; B: workers pinned to
    # their own cores; C: never fewer than 1.
    assert threads == {"a1": 4, "a2": 4, "b1": 4, "b2": 4, "c1": 1}


def test_gpu_ids_follow_cuda_visible_devices(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,GPU-abc")
    assert _cluster.gpu_ids("auto") == ["2", "GPU-abc"]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert _cluster.gpu_ids("auto") == []
    assert _cluster.gpu_ids(3) == ["0", "1", "2"]
    assert _cluster.gpu_ids("none") == []
    assert _cluster.gpu_ids("1,3") == ["1", "3"]


def test_names_and_gathering_of_unlike_catalogues(tmp_path):
    assert _records.output_names(["a/x.fits", "b/x.fits", "c/y.fits.gz"])[2] == "y"
    a, b, _ = _records.output_names(["a/x.fits", "b/x.fits", "c/y.fits.gz"])
    assert a != b and a.startswith("x-") and b.startswith("x-")
    # An image without a WCS has no sky columns: its rows leave them empty.
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    one.write_text("source_id,x_centroid,ra,ra_str\n1,2.500000,266.1,\"17:45:00, x\"\n")
    two.write_text("source_id,x_centroid\n1,3.000000\n2,4.000000\n")
    out = tmp_path / "all.csv"
    assert _records.gather_csv([("i,1.fits", str(one)), ("i2.fits", str(two))], str(out)) == 3
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows == [["image", "source_id", "x_centroid", "ra", "ra_str"],
                    ["i,1.fits", "1", "2.500000", "266.1", "17:45:00, x"],
                    ["i2.fits", "1", "3.000000", "", ""], ["i2.fits", "2", "4.000000", "", ""]]


def test_parquet_where_pyarrow_is(fields, tmp_path, scheduler):
    pytest.importorskip("pyarrow", reason="pyarrow is not installed (Debian 12 has no "
                        "python3-pyarrow): Parquet output is untested here")
    import pyarrow.parquet as pq
    paths, expected = fields
    good = [p for p in paths if p in expected][:4]
    s = survey.run(good, str(tmp_path / "pq"), scheduler=scheduler, formats=["parquet"])
    assert s.figures["done"] == 4
    t = pq.read_table(s.paths["parquet"])
    assert t.num_rows == s.figures["sources"]


def test_gpu_workers_find_the_cpus_catalogues(fields, tmp_path):
    ok, why = skysift.gpu_available()
    if not ok:
        pytest.skip(f"no usable GPU: {why}")
    paths, expected = fields
    good = [p for p in paths if p in expected]
    cpu = survey.run(good, str(tmp_path / "cpu"), gpus="none", backend="cpu", workers=2)
    gpu = survey.run(good, str(tmp_path / "gpu"), gpus="auto", backend="gpu")
    assert gpu.figures["done"] == len(good), gpu.summary
    assert {i["backend"] for i in gpu.images} == {"gpu"}
    assert {i["gpu_fault"] for i in gpu.images} == {""}
    # One worker per GPU, each with one device (its CUDA_VISIBLE_DEVICES).
    assert len({i["worker"] for i in gpu.images}) == len(_cluster.gpu_ids("auto"))
    # The contract (docs/contract.md): the same sources, centroids within
    # 1e-4 pixel, sums within 1e-6 relative (plus the CSV's last printed
    # digit). Read without astropy, which the GPU machine lacks.
    a, b = csv_columns(cpu.paths["csv"]), csv_columns(gpu.paths["csv"])
    assert len(a["image"]) == len(b["image"]) > 0
    assert a["image"] == b["image"]
    for name in ("source_id", "npix", "peak_x", "peak_y", "xmin", "xmax", "ymin", "ymax"):
        assert a[name] == b[name], name
    for name, rtol, atol in (("x_centroid", 0, 1e-4 + 1e-6), ("y_centroid", 0, 1e-4 + 1e-6),
                             ("sum_flux", 1e-6 + 1e-9, 0)):
        np.testing.assert_allclose(np.array(b[name], dtype=float),
                                   np.array(a[name], dtype=float), rtol=rtol, atol=atol,
                                   err_msg=name)


def csv_columns(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {name: [r[name] for r in rows] for name in rows[0]}
