"""The notebooks in ``notebooks/`` run top to bottom, offline, and are stored without outputs.

Each notebook is executed by nbclient in a fresh IPython kernel that runs this
interpreter (a kernelspec written to a temporary ``JUPYTER_PATH``), so the
kernel sees the kcxai under test whatever kernels the user has installed.
The notebooks check their own results with ``assert``; a failing cell fails
the test.
"""

import json
import os
import sys

import pytest
from tests._support.paths import REPO

NOTEBOOKS = REPO / "notebooks"
PATHS = sorted(NOTEBOOKS.glob("*.ipynb"))
KERNEL = "kcxai-test"


def test_there_are_notebooks():
    assert [p.name for p in PATHS] == ["01_running_example.ipynb", "02_real_tree.ipynb",
                                       "03_kc_languages.ipynb", "04_beyond_trees.ipynb"]


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_stored_without_outputs(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None, (
                f"{path.name}: strip outputs before committing")


@pytest.fixture(scope="module")
def kernel_env(tmp_path_factory):
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "kcxai tests", "language": "python"}))
    saved = {k: os.environ.get(k) for k in ("JUPYTER_PATH", "IPYTHONDIR", "MPLBACKEND")}
    os.environ["JUPYTER_PATH"] = str(root)
    os.environ["IPYTHONDIR"] = str(root / "ipython")  # no history or profile from the user's home
    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend
    yield
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


@pytest.mark.parametrize("path", PATHS, ids=[p.stem for p in PATHS])
def test_notebook_runs(path, kernel_env):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=300, allow_errors=False,
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError on the first failing cell
    for k, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        for out in cell.outputs:
            assert out.output_type != "error", f"{path.name} cell {k}"
            if out.output_type == "stream" and out.name == "stderr":
                pytest.fail(f"{path.name} cell {k} wrote to stderr:\n{out.text}")
