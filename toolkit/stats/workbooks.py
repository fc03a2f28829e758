"""A statistics workbook checked before calamine reads it.

calamine trusts the file: it allocates the grid a sheet's farthest cell reference claims
(``CYWOQVJ2`` is terabytes: the process aborts), unpacks what the zip says, and resolves a row
or a cell stored twice, or a shared-string index that is not one, silently. So the checks of
:mod:`toolkit.xlsx` run first, and what they refuse is one
:class:`~toolkit.errors.StatsError` naming the sheet and the cell:

- an ``.xlsx``/``.xlsm``: the file and its zip (:func:`toolkit.xlsx.archive.check_file`:
  a truncated archive, a part stored twice, a zip bomb), then the sheet read
  (:class:`toolkit.xlsx.guard.SheetGuard`: references, rows and cells in order and once each,
  the area, shared-string indexes);
- an ``.ods``: its zip (:func:`toolkit.xlsx.archive.archive_problem`), then the area its
  tables' repeated rows and cells claim (:func:`toolkit.xlsx.ods.area_problem`; its cells
  have no references);
- an ``.xls`` (not a zip, nor XML): as calamine reads it.

>>> from toolkit.errors import WorkbookProblem
>>> problem = WorkbookProblem("Sheet1", 2, None, "CYWOQVJ2", "cell reference 'CYWOQVJ2' ...")
>>> print(stats_problem(problem))
line 2: sheet 'Sheet1': cell reference 'CYWOQVJ2' ...
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..errors import StatsError, StatsProblem, WorkbookError, WorkbookProblem
from ..xlsx.archive import archive_problem, check_file, file_problem, part_chunks
from ..xlsx.guard import SheetGuard
from ..xlsx.ods import area_problem


def check_book(path: str | os.PathLike[str]) -> None:
    """Raise :class:`StatsError` unless the workbook passes what is checked before a reader
    opens it (an ``.ods`` is read whole when opened): see the module's docstring."""
    path = Path(path)
    if path.suffix.lower() == ".ods":
        _as_stats(path, lambda: _check_ods(path))
    elif path.suffix.lower() in (".xlsx", ".xlsm"):
        _as_stats(path, lambda: check_file(path))


def _check_ods(path: Path) -> None:
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
    message = archive_problem(infos, path.stat().st_size)
    content = [i for i in infos if i.filename == "content.xml"]
    problem = file_problem(message) if message is not None else None
    if problem is None and content:
        problem = area_problem(part_chunks(path, content[0]))
    if problem is not None:
        raise WorkbookError([problem], str(path))


def check_sheet(path: str | os.PathLike[str], sheet: str) -> None:
    """Raise :class:`StatsError` unless the sheet ``sheet`` of the ``.xlsx``/``.xlsm``
    workbook at ``path`` passes the checks of :class:`toolkit.xlsx.guard.SheetGuard` (other
    kinds of workbook pass)."""
    path = Path(path)
    if path.suffix.lower() in (".xlsx", ".xlsm"):
        _as_stats(path, lambda: SheetGuard(path).check(sheet))


def _as_stats(path: Path, check: Callable[[], None]) -> None:
    try:
        check()
    except WorkbookError as exc:
        raise StatsError([stats_problem(exc.problems[0])], str(path)) from None


def stats_problem(problem: WorkbookProblem) -> StatsProblem:
    """A problem of the workbook's checks as a problem of the statistics: its sheet's row as
    the line, the sheet named in the message (the message names the cell)."""
    if not problem.sheet:
        return StatsProblem(None, None, None, problem.message)
    return StatsProblem(problem.row, None, None, f"sheet {problem.sheet!r}: {problem.message}")


__all__ = ["check_book", "check_sheet", "stats_problem"]
