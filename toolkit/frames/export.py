"""Frames to Excel: what a spreadsheet cannot hold, made ready; text kept as text.

Excel holds no time zones, so ``DataFrame.to_excel`` refuses the toolkit's tz-aware
timestamps (``t_created``); :func:`excel_ready` converts them to UTC without a zone.
:func:`write_excel` writes one sheet per frame with that done, text that starts like a formula
(``=``, ``+``, ``-``, ``@``) written as text, control characters escaped the spreadsheet way
(``_xHHHH_``) and long tables continued on further sheets. ``Account.to_excel`` uses it.

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

#: Data rows per sheet: a longer frame continues on ``name (2)``, ``name (3)``, ... (Excel and
#: LibreOffice keep at most 1,048,576 rows a sheet, the header included).
SHEET_ROWS = 1_000_000
#: Text starting with one of these is written as a text cell, never as a formula.
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
#: Sheet names: at most 31 characters, none of ``[]:*?/\``.
_SHEET_BAD = re.compile(r"[\[\]:*?/\\]")
# What XML cannot hold, and a literal escape that a reader would take for one.
_CONTROL = "[\x00-\x08\x0b\x0c\x0e-\x1f]"
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


def _formula_like(col: pd.Series) -> pd.Series:
    """True where a text value starts like a formula."""
    return _texts(col).str.startswith(FORMULA_LEADS).fillna(False).astype(bool)


def _prepare(df: pd.DataFrame) -> tuple[pd.DataFrame, list[int]]:
    """The frame to write, and the text columns with cells that start like a formula."""
    out = excel_ready(df)
    formula_like = []
    for i in _text_columns(out):
        col = out.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object)
        escaped = _escape(col)
        if escaped is not col:
            out.isetitem(i, escaped)
        if _formula_like(escaped).any():
            formula_like.append(i)
    return out, formula_like


def _as_text(ws: Any, part: pd.DataFrame, columns: list[int], offset: int) -> None:
    """Cells of ``columns`` that hold text starting like a formula become text cells."""
    for i in columns:
        values = part.iloc[:, i]
        for r in _formula_like(values).to_numpy().nonzero()[0]:
            cell = ws.cell(row=int(r) + 2, column=i + 1 + offset)
            cell.value = str(values.iloc[r])
            cell.data_type = "s"
            cell.quotePrefix = True


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

    Text that starts like a formula (``=``, ``+``, ``-``, ``@``) is a text cell, never a
    formula; control characters are written ``_xHHHH_``; a frame of more than
    :data:`SHEET_ROWS` rows continues on ``name (2)``, ... Timestamps are UTC, without a zone
    (number format ``yyyy-mm-dd hh:mm:ss``). Returns the path.
    """
    if isinstance(frames, pd.DataFrame):
        frames = {"Sheet1": frames}
    path = Path(path)
    with pd.ExcelWriter(path, engine="openpyxl") as writer:
        for name, df in frames.items():
            out, formula_like = _prepare(df)
            offset = out.index.nlevels if index else 0
            starts = range(0, max(len(out), 1), SHEET_ROWS)
            for part, start in enumerate(starts, start=1):
                sheet = sheet_name(name, part)
                chunk = out.iloc[start : start + SHEET_ROWS]
                chunk.to_excel(writer, sheet_name=sheet, index=index)
                if formula_like:
                    _as_text(writer.sheets[sheet], chunk, formula_like, offset)
    return path


__all__ = ["FORMULA_LEADS", "SHEET_ROWS", "excel_ready", "sheet_name", "write_excel"]
