"""Reading cells of a workbook: python-calamine when installed (fast), openpyxl otherwise, and
turning a column of cells into a column of its declared dtype, with a problem per bad cell.

>>> values, problems = to_column(["1", 2.0, "", "x"], INT)
>>> values.tolist(), problems
([1, 2, <NA>, <NA>], [(3, 'x', 'not an integer')])
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import zipfile
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import WorkbookError, WorkbookProblem
from ...frames.cells import unescape_arrow
from ...frames.schemas import FLOAT, INT, STRING, TIME
from ...text import single_spaced
from ...xlsx.archive import check_file
from ...xlsx.guard import SheetGuard
from ...xlsx.parts import sheet_parts
from .sheet_scan import (
    SheetScan,
    StructureTap,
    formulas_and_merges,
    percent_styles,
    styled_numbers,
)
from .sheet_xml import NS_PER_DAY, UNIX_EPOCH_SERIAL, unescape_text

#: Reading engines, in the order tried.
ENGINES: tuple[str, ...] = ("calamine", "openpyxl")

#: Threads parsing sheets at once (calamine releases the GIL while it parses).
PARSE_WORKERS = max(1, min(4, os.cpu_count() or 1))

#: Bytes of XML past which a sheet's parse is started before those of smaller sheets.
BIG_SHEET = 8 << 20

#: ``(index in the column, cell value, message)``.
CellProblem = tuple[int, Any, str]


class Book:
    """An open workbook: sheet names, which are hidden, and each sheet's cells from A1.

    With calamine, :meth:`prefetch` parses sheets on worker threads (calamine parses
    without holding the GIL), so big sheets are parsed while earlier ones are converted.
    """

    def __init__(self, path: str | os.PathLike[str], engine: str | None = None) -> None:
        self.path = Path(path)
        self.engine = engine or default_engine()
        if self.engine not in ENGINES:
            raise ValueError(f"unknown engine {self.engine!r}; engines: {', '.join(ENGINES)}")
        self._pool: ThreadPoolExecutor | None = None
        self._pending: dict[str, Future[list[Sequence[Any]]]] = {}
        self._zip: zipfile.ZipFile | None = None
        self._parts: dict[str, str] = {}
        self._percent: frozenset[int] | None = None
        self._scans: dict[str, SheetScan] = {}  # found while a worker checked the sheet
        check_file(self.path)
        with self._unreadable(None):
            self._guard = SheetGuard(self.path)  # each sheet checked before it is parsed
            self._open()

    @contextmanager
    def _unreadable(self, sheet: str | None) -> Iterator[None]:
        """A reader's own error (a damaged part, bad XML) as a :class:`WorkbookError`."""
        try:
            yield
        except WorkbookError:
            raise
        except Exception as exc:  # the readers raise many kinds; each is a damaged file
            text = single_spaced(exc)[:200] or type(exc).__name__
            problem = WorkbookProblem(sheet or "", None, None, None, f"cannot be read: {text}")
            raise WorkbookError([problem], str(self.path)) from exc

    def _open(self) -> None:
        if self.engine == "calamine":
            import python_calamine

            self._cal = python_calamine.CalamineWorkbook.from_path(str(self.path))
            self.names = list(self._cal.sheet_names)
            visible = python_calamine.SheetVisibleEnum.Visible
            self.hidden = {m.name for m in self._cal.sheets_metadata if m.visible != visible}
        elif self.engine == "openpyxl":
            import openpyxl

            self._opx = openpyxl.load_workbook(self.path, read_only=True, data_only=True)
            self.names = list(self._opx.sheetnames)
            self.hidden = {n for n in self.names if self._opx[n].sheet_state != "visible"}

    def prefetch(self, names: Sequence[str]) -> None:
        """Start parsing ``names`` (calamine only; a no-op with openpyxl): sheets of more
        than :data:`BIG_SHEET` bytes of XML first, the biggest first (the longest parse
        starts at once, the others fill the other workers), then the others in order."""
        if self.engine != "calamine":
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=PARSE_WORKERS)
        sizes = {name: self._guard.size(name) for name in names}
        for name in sorted(names, key=lambda n: -sizes[n] if sizes[n] > BIG_SHEET else 0):
            if name in self.names and name not in self._pending:
                self._pending[name] = self._pool.submit(self._parse, name)

    def _parse(self, name: str) -> list[Sequence[Any]]:
        import python_calamine

        tap = StructureTap() if name not in self.hidden else None
        self._guard.check(name, tap)  # on this worker too: checks run beside other parses
        if tap is not None and tap.complete:
            self._scans[name] = tap.scan
        wb = python_calamine.CalamineWorkbook.from_path(str(self.path))
        try:
            return wb.get_sheet_by_name(name).to_python(skip_empty_area=False)
        finally:
            wb.close()

    def rows(self, name: str) -> list[Sequence[Any]]:
        """The sheet's rows from row 1, each from column A; an empty cell is ``None`` or
        ``""``. Rows may be of different lengths."""
        with self._unreadable(name):
            if name not in self._pending:  # a parse on a worker checked the sheet first
                self._guard.check(name)
            return self._rows(name)

    def header(self, name: str) -> Sequence[Any]:
        """The first row of a sheet (empty for an empty or unreadable sheet); a sheet that
        fails the checks of :mod:`toolkit.xlsx.guard` raises."""
        with self._unreadable(name):
            self._guard.check(name)
        try:
            if self.engine == "calamine":
                for row in self._cal.get_sheet_by_name(name).iter_rows():
                    return row
                return []
            for row in self._opx[name].iter_rows(max_row=1, values_only=True):
                return row
        except Exception:  # an unreadable sheet that is not a table: not read anyway
            return []
        return []

    def scan(self, name: str) -> SheetScan:
        """Formulas and merged ranges of a sheet (see :mod:`.sheet_scan`)."""
        with self._unreadable(name):
            self._guard.check(name)
            if name in self._scans:
                return self._scans.pop(name)
            archive = self._archive()
            part = self._parts.get(name)
            if part is None:
                return SheetScan()
            return formulas_and_merges(archive, part)

    def percent_rows(self, name: str, letter: str) -> list[int]:
        """The rows whose number cell in column ``letter`` is shown as a percentage (``0%``,
        ``0.00%``): ``+10%`` typed in Excel into a number cell is 0.1 shown so. Free for a
        workbook whose styles show no percentage (see :mod:`.sheet_scan`)."""
        with self._unreadable(name):
            archive = self._archive()
            if self._percent is None:
                self._percent = percent_styles(archive)
            part = self._parts.get(name)
            if not self._percent or part is None:
                return []
            self._guard.check(name)
            return styled_numbers(archive, part, self._percent, letter)

    def _archive(self) -> zipfile.ZipFile:
        if self._zip is None:
            self._zip = zipfile.ZipFile(self.path)
            self._parts = sheet_parts(self._zip)
        return self._zip

    def _rows(self, name: str) -> list[Sequence[Any]]:
        if name in self._pending:
            return self._pending.pop(name).result()
        if self.engine == "calamine":
            return self._cal.get_sheet_by_name(name).to_python(skip_empty_area=False)
        ws = self._opx[name]
        ws.reset_dimensions()  # read every cell, whatever range the file declares
        rows = []
        for row in ws.iter_rows(values_only=True):
            rows.append([unescape_text(v) if isinstance(v, str) else v for v in row])
        return rows

    def close(self) -> None:
        if self._pool is not None:
            for future in self._pending.values():
                future.cancel()
            self._pool.shutdown(wait=True)
            self._pending.clear()
        if self._zip is not None:
            self._zip.close()
        if self.engine == "calamine":
            self._cal.close()
        else:
            self._opx.close()

    def __enter__(self) -> Book:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def default_engine() -> str:
    """``calamine`` when python-calamine is installed, else ``openpyxl``."""
    try:
        import python_calamine  # noqa: F401
    except ImportError:
        return "openpyxl"
    return "calamine"


def columns_of(rows: list[Sequence[Any]], width: int) -> list[Sequence[Any]]:
    """The first ``width`` columns of ``rows`` (short rows padded with None)."""
    if not rows or not width:
        return [() for _ in range(width)]
    if min(map(len, rows)) < width:
        rows = [list(r[:width]) + [None] * (width - len(r)) for r in rows]
    return list(zip(*rows, strict=False))[:width]


def is_empty(value: Any) -> bool:
    """An empty cell: None, ``""`` or white space only."""
    return value is None or (isinstance(value, str) and not value.strip())


# --------------------------------------------------------------------------- conversion


def to_column(
    values: Sequence[Any], dtype: Any, strip: bool = False
) -> tuple[Any, list[CellProblem]]:
    """``values`` (cells) as an array of ``dtype`` (a categorical becomes text: the caller
    checks its codes), and the cells that could not be converted."""
    if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)):
        return _text(values, strip), []
    if isinstance(dtype, pd.Int64Dtype):
        return _ints(values)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return _times(values)
    return _floats(values)


def _text(values: Sequence[Any], strip: bool) -> pd.Series:
    kinds = set(map(type, values))
    if kinds <= {str, type(None)}:
        arr = pa.array(values, pa.large_string())
    else:
        arr = pa.array([_as_text(v) for v in values], pa.large_string())
    arr = unescape_arrow(arr)  # the toolkit wrote '=x for =x (toolkit.frames.cells)
    if strip:
        arr = pc.utf8_trim_whitespace(arr)
        blank = pc.equal(arr, "")
    else:
        blank = pc.equal(pc.utf8_trim_whitespace(arr), "")
    arr = pc.if_else(blank, pa.scalar(None, pa.large_string()), arr)
    return pd.Series(pd.array(arr, dtype=STRING))


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**63:
            return str(int(value))
        return repr(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    return str(value)


#: A number typed as text: ASCII digits, an optional sign, point and exponent (no ``1_000``,
#: no ``٣``, no ``inf`` or ``nan``).
NUMBER_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
#: Integers a cell may hold (an int64, like the tables' ``Int64`` columns).
INT_MAX = 2**63 - 1


def _fast_numbers(values: Sequence[Any]) -> np.ndarray | None:
    """The cells as floats (NaN for empty ones) when every cell is a finite number or
    empty."""
    try:
        numbers = [
            math.nan if v is None or v == "" else v
            for v in values
            if v is None or v == "" or (type(v) in (float, int) and v == v) or _raise()
        ]
        array = np.array(numbers, dtype=FLOAT)
    except (_NotNumber, OverflowError):
        return None
    if np.isinf(array).any():
        return None
    return array


class _NotNumber(Exception):
    pass


def _raise() -> bool:
    raise _NotNumber


def number_problem(value: Any) -> tuple[float | None, str | None]:
    """A cell as a finite float, or why it is not one.

    >>> number_problem("1_000"), number_problem(" 2.5 "), number_problem("1e400")
    ((None, 'not a number'), (2.5, None), (None, 'out of range (more than 1.8e308)'))
    >>> number_problem(float("nan"))
    (None, 'not a number (NaN)')
    """
    if isinstance(value, bool):
        return None, "not a number"
    if isinstance(value, (int, float)):
        if value != value:
            return None, "not a number (NaN)"
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if math.isinf(number):
            return None, "not a finite number"
        return number, None
    if not isinstance(value, str):
        return None, "not a number"
    return _text_number(value.strip())


def _text_number(text: str) -> tuple[float | None, str | None]:
    """A cell's text as a finite float, or why it is not one."""
    if not NUMBER_RE.fullmatch(text):
        lowered = text.lower().lstrip("+-")
        if lowered in ("inf", "infinity", "nan"):
            return None, f"not a finite number ({text})"
        if any(c.isdigit() for c in text) and not text.isascii():
            return None, "not a number (use the digits 0-9)"
        return None, "not a number"
    number = float(text)
    if math.isinf(number):
        return None, "out of range (more than 1.8e308)"
    return number, None


def _ints(values: Sequence[Any]) -> tuple[pd.Series, list[CellProblem]]:
    numbers = _fast_numbers(values)
    if numbers is not None:
        missing = np.isnan(numbers)
        whole = missing | (np.mod(numbers, 1) == 0) & (np.abs(numbers) < 2**53)
        if whole.all():
            data = np.where(missing, 0, numbers).astype(np.int64)
            return pd.Series(pd.arrays.IntegerArray(data, missing)), []
    out: list[int | None] = []
    problems: list[CellProblem] = []
    for i, v in enumerate(values):
        if is_empty(v):
            out.append(None)
            continue
        n, message = _int_or_problem(v)
        if message is not None:
            problems.append((i, v, message))
        out.append(n)
    return pd.Series(pd.array(out, dtype=INT)), problems


def _int_or_problem(v: Any) -> tuple[int | None, str | None]:
    if isinstance(v, int) and not isinstance(v, bool):
        n = v
    elif isinstance(v, str) and re.fullmatch(r"[+-]?[0-9]+", v.strip(), re.ASCII):
        n = int(v.strip())
    else:
        number, message = number_problem(v)
        if number is None:
            return None, "not an integer" if message == "not a number" else message
        if not number.is_integer():
            return None, "not an integer"
        n = int(number)
    if abs(n) > INT_MAX:
        return None, "out of range (an integer of at most 19 digits)"
    return n, None


def _floats(values: Sequence[Any]) -> tuple[pd.Series, list[CellProblem]]:
    numbers = _fast_numbers(values)
    if numbers is not None:
        return pd.Series(numbers), []
    out = np.empty(len(values), dtype=FLOAT)
    problems: list[CellProblem] = []
    for i, v in enumerate(values):
        if is_empty(v):
            out[i] = math.nan
            continue
        number, message = number_problem(v)
        out[i] = math.nan if number is None else number
        if message is not None:
            problems.append((i, v, message))
    return pd.Series(out), problems


def _times(values: Sequence[Any]) -> tuple[pd.Series, list[CellProblem]]:
    out: list[Any] = []
    problems: list[CellProblem] = []
    for i, v in enumerate(values):
        if is_empty(v):
            out.append(None)
        elif isinstance(v, dt.datetime):
            out.append(pd.Timestamp(v).tz_localize("UTC") if v.tzinfo is None else v)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            ns = round((v - UNIX_EPOCH_SERIAL) * NS_PER_DAY)
            out.append(pd.Timestamp(ns, tz="UTC"))
        elif isinstance(v, str):
            try:
                stamp = pd.Timestamp(v.strip())
            except ValueError:
                problems.append((i, v, "not a date and time"))
                out.append(None)
                continue
            out.append(stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp)
        else:
            problems.append((i, v, "not a date and time"))
            out.append(None)
    series = pd.Series(pd.to_datetime(pd.Series(out, dtype=object), utc=True))
    return series.dt.round("ms").astype(TIME), problems


__all__ = [
    "ENGINES",
    "Book",
    "columns_of",
    "default_engine",
    "is_empty",
    "number_problem",
    "to_column",
]
