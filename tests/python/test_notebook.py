# SPDX-License-Identifier: GPL-3.0-or-later
"""examples/lesson.ipynb runs headless (nbclient, Debian's python3-nbclient
and python3-ipykernel) on a small image, every cell without an error, and
prints skysift's numbers beside SciPy's, equal."""
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
NOTEBOOK = os.path.join(HERE, "..", "..", "examples", "lesson.ipynb")


def test_the_lesson_notebook_runs_headless(tmp_path, monkeypatch):
    nbformat = pytest.importorskip("nbformat", reason="python3-nbformat is not installed")
    nbclient = pytest.importorskip("nbclient", reason="python3-nbclient is not installed")
    pytest.importorskip("ipykernel", reason="python3-ipykernel is not installed")
    pytest.importorskip("scipy")
    from conftest import random_field
    fits = pytest.importorskip("astropy.io.fits")
    image = tmp_path / "field.fits"
    fits.PrimaryHDU(random_field(51, ny=256, nx=300)).writeto(image)
    monkeypatch.setenv("SKYSIFT_LESSON_IMAGE", str(image))
    monkeypatch.setenv("SKYSIFT_LESSON_N", "256")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "".join(out.get("text", "") for cell in nb.cells if cell.cell_type == "code"
                   for out in cell.get("outputs", []))
    assert "allclose True" in text and "1-D allclose True" in text
    assert "labels equal: True" in text
    np_line = [l for l in text.splitlines() if l.startswith("NumPy:")][0]
    sky_line = [l for l in text.splitlines() if l.startswith("skysift: median")][0]
    assert np_line.split("std")[1].split(",")[0] == sky_line.split("std")[1].split(",")[0]
