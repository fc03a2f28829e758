"""Frames to Excel: what a spreadsheet cannot hold, made ready; text kept as text.

Excel holds no time zones, so ``DataFrame.to_excel`` refuses the toolkit's tz-aware
timestamps (``t_created``); :func:`excel_ready` converts them to UTC without a zone.
:func:`write_excel` writes one sheet per frame with that done, text that starts like a formula
(``=``, ``+``, ``-``, ``@``, tab, CR) written as a text cell with a ``'`` in front (the rule of
:mod:`toolkit.frames.cells`, which :func:`~toolkit.frames.cells.read_table` undoes), control
characters escaped the spreadsheet way (``_xHHHH_``) and long tables continued on further
sheets. ``Account.to_excel`` uses it.

>>> import pandas as pd
>>> df = pd.DataFrame({"t": pd.to_datetime(["2026-05-10 11:30:00+02:00"], utc=True)})
>>> excel_ready(df)["t"].tolist()
[Timestamp('2026-05-10 09:30:00')]
>>> write_excel({"bids": account.join("countries")}, "bids.xlsx")    # doctest: +SKIP
PosixPath('bids.xlsx')
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
from pandas.api.types import is_object_dtype

from .cells import FORMULA_LEADS, escape_formula

#: Data rows per sheet: a longer frame continues on ``name (2)``, ``name (3)``, ... (Excel and
#: LibreOffice keep at most 1,048,576 rows a sheet, the header included).
SHEET_ROWS = 1_000_000
#: Sheet names: at most 31 characters, none of ``[]:*?/\``.
_SHEET_BAD = re.compile(r"[\[\]:*?/\\]")
# What XML cannot hold (and CR, which an XML reader turns into LF), and a literal escape that
# a reader would take for one.
_CONTROL = "[\x00-\x08\x0b-\x1f]"
_ESCAPE_LIKE = r"_(x[0-9A-Fa-f]{4}_)"


def _naive_utc(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is not None:
        return pd.Timestamp(value).tz_convert("UTC").tz_localize(None)
    return value


def _ready_column(col: pd.Series) -> pd.Series:
    if isinstance(col.dtype, pd.DatetimeTZDtype):
        return col.dt.tz_convert("UTC").dt.tz_localize(None)
    if is_object_dtype(col.dtype):
        return col.map(_naive_utc)
    return col


def excel_ready(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` that ``to_excel`` accepts: tz-aware timestamps (columns, objects in
    object columns, the index) converted to UTC and written without a zone.

    Everything else is left as it is (``Int64``, ``string``, ``category`` write as they are;
    missing values are empty cells). ``to_csv`` needs none of this (it writes ``+00:00``).

    >>> import pandas as pd
    >>> df = pd.DataFrame({"n": pd.array([1, None], dtype="Int64")})
    >>> excel_ready(df).dtypes.astype(str).tolist()
    ['Int64']
    """
    out = df.copy()
    for i in range(out.shape[1]):
        col = out.iloc[:, i]
        ready = _ready_column(col)
        if ready is not col:
            out.isetitem(i, ready)
    if isinstance(out.index, pd.DatetimeIndex) and out.index.tz is not None:
        out.index = out.index.tz_convert("UTC").tz_localize(None)
    return out


def _texts(col: pd.Series) -> pd.Series:
    """The column's text values as ``string`` (``<NA>`` elsewhere: numbers of an object
    column stay numbers)."""
    if is_object_dtype(col.dtype):
        col = col.where(col.map(lambda v: isinstance(v, str)), None)
    return col.astype("string")


def _escape(col: pd.Series) -> pd.Series:
    """Control characters as ``_xHHHH_`` (a literal ``_xHHHH_`` as ``_x005F_xHHHH_``), as
    Excel and LibreOffice read them; ``openpyxl`` refuses them raw."""
    text = _texts(col)
    found = text.str.contains(f"{_CONTROL}|_x[0-9A-Fa-f]{{4}}_", regex=True).fillna(False)
    if not found.any():
        return col
    text = text.str.replace(_ESCAPE_LIKE, r"_x005F_\1", regex=True)
    text = text.str.replace(_CONTROL, lambda m: f"_x{ord(m.group(0)):04X}_", regex=True)
    return col.astype(object).where(~found.to_numpy(), text.astype(object))


def _text_columns(df: pd.DataFrame) -> list[int]:
    return [
        i
        for i, dtype in enumerate(df.dtypes)
        if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)) or is_object_dtype(dtype)
    ]


def excel_cells(df: pd.DataFrame) -> pd.DataFrame:
    """The frame as :func:`write_excel` writes it: :func:`excel_ready`, control characters
    escaped ``_xHHHH_``, text that starts like a formula (or with ``'``) with a ``'`` in front
    (:func:`~toolkit.frames.cells.escape_formula`); for writers that cut sheets their own way.

    >>> excel_cells(pd.DataFrame({"k": ["=1+1", "\\rx"], "n": [-15.0, 2]})).values.tolist()
    [["'=1+1", -15.0], ["'_x000D_x", 2.0]]
    """
    out = excel_ready(df)
    for i in _text_columns(out):
        col = out.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object)
        out.isetitem(i, _escape(col.map(escape_formula, na_action="ignore")))
    out.columns = [escape_formula(c) for c in out.columns]
    if is_object_dtype(out.index.dtype) and out.index.nlevels == 1:
        out.index = out.index.map(escape_formula)
    return out


def sheet_name(name: str, part: int = 1) -> str:
    """A valid sheet name for ``name`` (at most 31 characters, no ``[]:*?/\\``); part 2 of a
    long table is ``name (2)``.

    >>> sheet_name("countries", 2), sheet_name("a/b")
    ('countries (2)', 'a_b')
    """
    suffix = "" if part == 1 else f" ({part})"
    return _SHEET_BAD.sub("_", name)[: 31 - len(suffix)] + suffix


def write_excel(
    frames: Mapping[str, pd.DataFrame] | pd.DataFrame,
    path: str | os.PathLike[str],
    *,
    index: bool = False,
) -> Path:
    """Write frames to an ``.xlsx`` file, one sheet per frame (``{sheet name: frame}``, or
    one frame on ``Sheet1``), each made :func:`excel_ready`.

    Text that starts like a formula (``=``, ``+``, ``-``, ``@``, tab, CR) or with ``'`` is a
    text cell with a ``'`` in front, never a formula (read it back with
    :func:`~toolkit.frames.cells.read_table`); control characters are written ``_xHHHH_``; a
    frame of more than :data:`SHEET_ROWS` rows continues on ``name (2)``, ... Timestamps are
    UTC, without a zone (number format ``yyyy-mm-dd hh:mm:ss``). Returns the path.
    """
    if isinstance(frames, pd.DataFrame):
        frames = {"Sheet1": frames}
    path = Path(path)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, df in frames.items():
            out = excel_cells(df)
            starts = range(0, max(len(out), 1), SHEET_ROWS)
            for part, start in enumerate(starts, start=1):
                sheet = sheet_name(name, part)
                chunk = out.iloc[start : start + SHEET_ROWS]
                chunk.to_excel(writer, sheet_name=sheet, index=index)
    return path


__all__ = [
    "FORMULA_LEADS",
    "SHEET_ROWS",
    "excel_cells",
    "excel_ready",
    "sheet_name",
    "write_excel",
]
