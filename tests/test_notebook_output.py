"""In a notebook the toolkit's log lines and its own warnings are the cell's output, not
standard error; once the notebook configures logging, its configuration decides. (Executed
notebooks are checked in tests/test_notebooks.py: none of their outputs is on stderr.)"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from toolkit import notebook_output
from toolkit.errors import StatsNote


@contextmanager
def unconfigured() -> Iterator[None]:
    """No handler on the root logger, as in a notebook nobody configured logging in (pytest
    adds its own for each test)."""
    root = logging.getLogger()
    kept = root.handlers[:]
    root.handlers.clear()
    try:
        yield
    finally:
        root.handlers[:] = kept


#: What Python's own ``warnings.showwarning`` was handed (the test stands in for it).
SHOWN: list[str] = []


@pytest.fixture()
def installed(monkeypatch):
    """:func:`notebook_output.install` as in a notebook, undone after the test."""
    SHOWN.clear()
    monkeypatch.setattr(
        warnings, "showwarning", lambda m, c, *a, **k: SHOWN.append(f"{c.__name__}: {m}")
    )
    logger = logging.getLogger(notebook_output.LOGGER)
    before = list(logger.handlers)
    assert notebook_output.install(force=True)
    assert notebook_output.install(force=True)  # once: no second handler
    yield logger
    logger.handlers[:] = before


def test_outside_a_notebook_nothing_is_installed():
    assert notebook_output.in_notebook() is False
    assert notebook_output.install() is False
    assert not any(
        isinstance(h, notebook_output.NotebookHandler)
        for h in logging.getLogger(notebook_output.LOGGER).handlers
    )


def test_a_log_line_is_the_cells_output(installed, capsys):
    ours = [h for h in installed.handlers if isinstance(h, notebook_output.NotebookHandler)]
    assert len(ours) == 1
    with unconfigured():
        logging.getLogger("toolkit.client").warning("built-in sandbox, demo (%s)", "here")
        logging.getLogger("toolkit.client").info("not shown: below a warning")
    out, err = capsys.readouterr()
    assert out == "built-in sandbox, demo (here)\n" and err == ""


def test_configured_logging_decides(installed, capsys):
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    with unconfigured():
        logging.getLogger().addHandler(Keep())  # the notebook configured logging
        logging.getLogger("toolkit").warning("once, where the notebook said")
    out, err = capsys.readouterr()
    assert (out, err, seen) == ("", "", ["once, where the notebook said"])


def test_the_toolkits_warnings_are_output_and_others_stay_warnings(installed, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.warn(StatsNote("stats.csv: skipped 1 totals row (line 42)"), stacklevel=1)
        warnings.warn("someone else's", UserWarning, stacklevel=1)
    out, err = capsys.readouterr()
    assert out == "StatsNote: stats.csv: skipped 1 totals row (line 42)\n" and err == ""
    assert SHOWN == ["UserWarning: someone else's"]  # shown as Python shows it
