"""In a Jupyter notebook, the toolkit's log lines and its own warnings are plain output of
the cell, not the red standard-error box that reads as a failure.

Python writes a log line nobody configured a handler for (``toolkit.connect()``'s note that
it started the built-in sandbox) and a warning (a statistics export's totals row left out,
:class:`~toolkit.errors.StatsNote`) to standard error, which a notebook shows in red.
:func:`install`, run by ``import toolkit`` in a notebook's kernel, sends them to the cell's
standard output instead, as a terminal shows them:

- the ``toolkit`` logger gets a handler that writes warnings and errors to ``sys.stdout``,
  and steps aside as soon as the notebook configures logging itself (``logging.basicConfig``
  or any handler on the root logger): that configuration decides then;
- warnings of the toolkit's own classes are printed to ``sys.stdout``; every other warning
  is shown as Python shows it.

Outside a notebook (a terminal, a script, the tests) nothing changes.

>>> in_notebook()
False
"""

from __future__ import annotations

import logging
import sys
import warnings
from typing import Any, TextIO

#: The logger whose lines go to a notebook's output.
LOGGER = "toolkit"


def in_notebook() -> bool:
    """Whether this is a Jupyter kernel (a notebook, JupyterLab, Voila), as ``tqdm.auto``
    tells."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None  # type: ignore[attr-defined]
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


class NotebookHandler(logging.Handler):
    """Writes a log record's message to the current ``sys.stdout`` (the running cell's), unless
    the root logger has a handler (logging is configured: the record goes there)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.setFormatter(logging.Formatter("%(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:
            return
        try:
            sys.stdout.write(self.format(record) + "\n")
        except Exception:  # noqa: BLE001 - as logging does: a log line never breaks a cell
            self.handleError(record)


def _ours(category: type[Warning]) -> bool:
    return category.__module__.split(".")[0] == LOGGER


class _Shown:
    """``warnings.showwarning`` that prints the toolkit's own warnings to ``sys.stdout`` and
    hands every other one to the function it replaced."""

    def __init__(self, original: Any) -> None:
        self.original = original

    def __call__(
        self,
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if file is None and _ours(category):
            sys.stdout.write(f"{category.__name__}: {message}\n")
            return
        self.original(message, category, filename, lineno, file, line)


def install(force: bool = False) -> bool:
    """In a notebook (or with ``force``), send the toolkit's log lines and warnings to the
    cell's output (once); returns whether it did."""
    if not (force or in_notebook()):
        return False
    logger = logging.getLogger(LOGGER)
    if not any(isinstance(h, NotebookHandler) for h in logger.handlers):
        logger.addHandler(NotebookHandler())
    if not isinstance(warnings.showwarning, _Shown):
        warnings.showwarning = _Shown(warnings.showwarning)
    return True


__all__ = ["LOGGER", "NotebookHandler", "in_notebook", "install"]
