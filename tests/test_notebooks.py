"""The notebooks in ``notebooks/`` run top to bottom in a real Jupyter kernel, and are
committed without outputs.

Each runs with nbclient in a ``python3`` kernel of this very Python (a kernelspec written
for the test names ``sys.executable``), in a temporary working directory (the files it writes
land there), with no key: ``CAMPAIGN_API_KEY``, ``CAMPAIGN_API_URL`` and the config and
journal locations unset and ``HOME`` pointed at a temporary folder, so ``toolkit.connect()``
starts the built-in sandbox. A cell that raises fails the test with the cell and its error.

The notebooks show a reader no ``assert`` and no standard-error output (the red box that reads
as a failure): what each must have done is checked by the code in
:data:`tests.notebook_checks.CHECKS`, run in the notebook's kernel right after the cell it
names (a copy of the notebook gets check cells; the file is left as it is).

``python tests/test_notebooks.py [NAME ...]`` runs them outside pytest and prints the time of
each.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from .conftest import UNSET
from .notebook_checks import CHECKS

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
#: Seconds one cell may take.
CELL_TIMEOUT = 300
KERNEL = "python3"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def kernel_env(home: Path) -> dict[str, str]:
    """The environment of the kernel: no key, no config, a home of its own."""
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["HOME"] = str(home)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def write_kernelspec(folder: Path) -> Path:
    """A ``python3`` kernelspec that runs this Python; put ``folder`` first on
    ``JUPYTER_PATH``."""
    spec = folder / "kernels" / KERNEL
    spec.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    kernel = {"argv": argv, "display_name": "Python 3 (tests)", "language": "python"}
    (spec / "kernel.json").write_text(json.dumps(kernel), encoding="utf-8")
    return folder


def with_checks(nb: nbformat.NotebookNode, checks: dict[str, str]) -> nbformat.NotebookNode:
    """``nb`` with a check cell (tagged ``check``) after each cell that ``checks`` names."""
    cells = []
    for cell in nb.cells:
        cells.append(cell)
        if cell.get("id") in checks:
            check = nbformat.v4.new_code_cell(checks[cell.id], metadata={"tags": ["check"]})
            check.id = f"check-{cell.id}"
            cells.append(check)
    nb.cells = cells
    return nb


def is_check(cell: nbformat.NotebookNode) -> bool:
    return "check" in cell.get("metadata", {}).get("tags", [])


def run_notebook(
    path: Path, workdir: Path, home: Path, checks: dict[str, str] | None = None
) -> nbformat.NotebookNode:
    """Execute ``path`` in ``workdir``, with ``checks`` run after the cells they name;
    raises ``CellExecutionError`` on a failing cell."""
    nb = with_checks(nbformat.read(path, as_version=4), checks or {})
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        kernel_name=KERNEL,
        resources={"metadata": {"path": str(workdir)}},
    )
    env = kernel_env(home)
    # a built-in sandbox of the notebook's own (its state outlives the kernel otherwise)
    env["CAMPAIGN_TOOLKIT_DATA"] = str(workdir.parent / f"{workdir.name}-data")
    client.execute(env=env)
    return nb


@pytest.fixture(scope="module")
def jupyter(tmp_path_factory, request):
    """A home shared by the module's kernels (matplotlib builds its font cache once) and the
    kernelspec of this Python first on ``JUPYTER_PATH``."""
    base = tmp_path_factory.mktemp("jupyter")
    home = base / "home"
    home.mkdir()
    mp = pytest.MonkeyPatch()
    mp.setenv("JUPYTER_PATH", str(write_kernelspec(base / "share")))
    mp.setenv("JUPYTER_DATA_DIR", str(home / "jupyter-data"))
    mp.setenv("JUPYTER_RUNTIME_DIR", str(home / "jupyter-runtime"))
    request.addfinalizer(mp.undo)
    return home


def test_there_are_notebooks():
    names = [p.name for p in notebooks()]
    for name in (
        "01-getting-started.ipynb",
        "02-explore-account.ipynb",
        "03-bulk-edit-excel.ipynb",
        "04-bid-report.ipynb",
        "05-notebook-forms.ipynb",
        "06-rehearse-safely.ipynb",
        "07-performance-rules.ipynb",
        "08-many-accounts.ipynb",
    ):
        assert name in names


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_notebook_is_committed_clean(path: Path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata.get("kernelspec", {}).get("name") == KERNEL, "kernel python3"
    dirty = [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and (cell.outputs or cell.execution_count is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} have outputs or execution counts"
    assert nb.cells[0].cell_type == "markdown"
    # the first cell says how to point the notebook at a real account
    assert "CAMPAIGN_API_KEY" in nb.cells[0].source, "the first cell names CAMPAIGN_API_KEY"
    # a reader sees no checks: they are in tests/notebook_checks.py, after the cells they name
    shown = [
        (cell.get("id"), line)
        for cell in nb.cells
        if cell.cell_type == "code"
        for line in cell.source.splitlines()
        if line.lstrip().startswith("assert") or ".testing.assert_" in line
    ]
    assert not shown, f"{path.name}: checks shown to the reader: {shown}"
    ids = {cell.get("id") for cell in nb.cells if cell.cell_type == "code"}
    missing = sorted(set(CHECKS.get(path.name, {})) - ids)
    assert not missing, f"{path.name}: tests/notebook_checks.py names cells it lacks: {missing}"


def test_the_kernel_is_this_python_without_a_key(jupyter, tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import os, sys\n"
                "print(sys.executable)\n"
                "print(os.getcwd())\n"
                "print(os.environ.get('CAMPAIGN_API_KEY'), os.environ['HOME'])"
            )
        ]
    )
    path = tmp_path / "probe.ipynb"
    nbformat.write(nb, path)
    done = run_notebook(path, tmp_path, jupyter)
    lines = done.cells[0].outputs[0]["text"].splitlines()
    assert Path(lines[0]).resolve() == Path(sys.executable).resolve()
    assert Path(lines[1]).resolve() == tmp_path.resolve()
    assert lines[2] == f"None {jupyter}"


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name)
def test_notebook_runs(path: Path, jupyter, tmp_path):
    started = time.perf_counter()
    failure = None
    checks = CHECKS.get(path.name, {})
    try:
        done = run_notebook(path, tmp_path, jupyter, checks)
    except CellExecutionError as exc:
        failure = ANSI.sub("", str(exc))  # IPython colours its tracebacks
    if failure is not None:
        pytest.fail(f"{path.name} failed:\n{failure}", pytrace=False)
    print(f"{path.name}: {time.perf_counter() - started:.1f} s")
    ran = [cell for cell in done.cells if is_check(cell)]
    assert len(ran) == len(checks) and all(c.execution_count for c in ran), path.name
    red = [
        (cell.get("id"), ANSI.sub("", out["text"])[:300])
        for cell in done.cells
        for out in cell.get("outputs", [])
        if out.get("name") == "stderr"
    ]
    assert not red, f"{path.name}: output on standard error (a red box to a reader): {red}"


def main(names: list[str]) -> int:
    import tempfile

    total = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        os.environ["JUPYTER_PATH"] = str(write_kernelspec(base / "share"))
        (base / "home").mkdir()
        for path in notebooks():
            if names and not any(n in path.name for n in names):
                continue
            workdir = base / path.stem
            workdir.mkdir()
            started = time.perf_counter()
            run_notebook(path, workdir, base / "home", CHECKS.get(path.name, {}))
            took = time.perf_counter() - started
            total += took
            print(f"{path.name}: {took:.1f} s", flush=True)
    print(f"all: {total:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
