"""Text a spreadsheet could take for a formula: the one rule every file the toolkit writes
follows, and its reverse for every reader of those files.

Text that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return (the CSV
injection rule) is written with one ``'`` in front, in CSV files and in workbooks alike (in a
workbook also as a text cell, never a formula): a spreadsheet shows it as text, keeps it text
when the cell is edited or the file saved again, and a workbook turned into CSV by another
tool stays harmless. Text that starts with ``'`` itself gets one more ``'``, so the rule
reads back without a doubt: **a reader drops exactly one leading** ``'`` **of a text**.
``'=HYPERLINK(...)`` reads back as ``=HYPERLINK(...)``, ``''quoted`` as ``'quoted``, and
text without a leading ``'`` as it is. Numbers (``-15.0`` too) stay numbers.

>>> escape_formula('=HYPERLINK("http://x")'), escape_formula("-abc"), escape_formula(-15.0)
('\\'=HYPERLINK("http://x")', "'-abc", -15.0)
>>> escape_formula("'quoted"), unescape_formula("''quoted"), escape_formula("plain")
("''quoted", "'quoted", 'plain')
>>> write_csv(decisions, "decisions.csv")                             # doctest: +SKIP
>>> read_table("decisions.csv")["key"].tolist()                       # doctest: +SKIP
['=HYPERLINK("http://evil","x")']
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.api.types import is_object_dtype

#: The quote written in front of text that needs it, and dropped once by a reader.
QUOTE = "'"
#: Text starting with one of these is a formula to a spreadsheet (or could become one).
FORMULA_LEADS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r")
#: Text starting with one of these is written with a :data:`QUOTE` in front.
QUOTED_LEADS: tuple[str, ...] = (*FORMULA_LEADS, QUOTE)
#: The same as a regular expression (for pyarrow and pandas).
QUOTED_PATTERN = "^[=+\\-@\t\r']"
# What XML cannot hold (and CR, which it turns into LF), and a literal escape a reader would
# take for one.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f]")
_ESCAPE_LIKE = re.compile(r"_(x[0-9A-Fa-f]{4}_)")
_XML_BAD = re.compile("[\x00-\x08\x0b-\x1f]|_x[0-9A-Fa-f]{4}_")
_UNESCAPE = re.compile(r"_x([0-9A-Fa-f]{4})_")


def escape_formula(value: Any) -> Any:
    """``value`` as a cell of a written file: text starting with one of
    :data:`QUOTED_LEADS` with one ``'`` in front; anything else (numbers, None) as it is."""
    if isinstance(value, str) and value.startswith(QUOTED_LEADS):
        return QUOTE + value
    return value


def unescape_formula(value: Any) -> Any:
    """A cell read from a file the toolkit wrote: text with its one leading ``'`` dropped.

    >>> unescape_formula("'=1+1"), unescape_formula("-5"), unescape_formula(3)
    ('=1+1', '-5', 3)
    """
    if isinstance(value, str) and value.startswith(QUOTE):
        return value[1:]
    return value


def _text_columns(df: pd.DataFrame) -> list[int]:
    return [
        i
        for i, dtype in enumerate(df.dtypes)
        if isinstance(dtype, (pd.StringDtype, pd.CategoricalDtype)) or is_object_dtype(dtype)
    ]


def _map_text(df: pd.DataFrame, func: Any) -> pd.DataFrame:
    """A copy of ``df`` with ``func`` applied to the text of its text columns and to its
    column names; numbers, times and missing values stay what they are."""
    out = df.copy()
    for i in _text_columns(out):
        col = out.iloc[:, i]
        if isinstance(col.dtype, pd.CategoricalDtype):
            col = col.astype(object).where(col.notna(), None)
        out.isetitem(i, col.map(func, na_action="ignore"))
    out.columns = [func(c) for c in out.columns]
    return out


def escape_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with :func:`escape_formula` applied to every text cell (and column
    name): what a writer hands to ``to_csv`` or ``to_excel``.

    >>> escape_formulas(pd.DataFrame({"k": ["@x", "y"], "n": [-1.5, 2.0]})).values.tolist()
    [["'@x", -1.5], ['y', 2.0]]
    """
    return _map_text(df, escape_formula)


def unescape_formulas(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` with :func:`unescape_formula` applied to every text cell (and column
    name): what a reader of a written file gives back."""
    return _map_text(df, unescape_formula)


def escape_arrow(arr: pa.Array) -> pa.Array:
    """:func:`escape_formula` over a pyarrow string array (nulls stay null)."""
    if len(arr) == 0:
        return arr
    quoted = pc.binary_join_element_wise(pa.scalar(QUOTE, arr.type), arr, pa.scalar("", arr.type))
    return pc.if_else(pc.match_substring_regex(arr, QUOTED_PATTERN), quoted, arr)


def unescape_arrow(arr: pa.Array) -> pa.Array:
    """:func:`unescape_formula` over a pyarrow string array (nulls stay null)."""
    if len(arr) == 0:
        return arr
    return pc.if_else(pc.starts_with(arr, QUOTE), pc.utf8_slice_codeunits(arr, 1), arr)


def excel_text(value: Any) -> Any:
    """``value`` as an openpyxl cell value: :func:`escape_formula`, then the characters XML
    cannot hold, and a carriage return (which an XML reader turns into a line feed), written
    ``_xHHHH_`` the spreadsheet way (a literal ``_xHHHH_`` as ``_x005F_xHHHH_``).

    >>> excel_text("\\rkey"), excel_text("a_x0041_b")
    ("'_x000D_key", 'a_x005F_x0041_b')
    """
    value = escape_formula(value)
    if isinstance(value, str) and _XML_BAD.search(value):
        value = _ESCAPE_LIKE.sub(r"_x005F_\1", value)
        value = _CONTROL.sub(lambda m: f"_x{ord(m.group(0)):04X}_", value)
    return value


def read_text(value: Any) -> Any:
    """A cell as openpyxl reads it from a file the toolkit wrote: ``_xHHHH_`` decoded (Excel,
    LibreOffice and calamine do this themselves), then :func:`unescape_formula`.

    >>> read_text("'_x000D_key")
    '\\rkey'
    """
    if isinstance(value, str) and "_x" in value:
        value = _UNESCAPE.sub(lambda m: chr(int(m.group(1), 16)), value)
    return unescape_formula(value)


def put_cell(ws: Any, row: int, column: int, value: Any) -> Any:
    """Write one openpyxl cell: text as :func:`excel_text` makes it and always a text cell
    (never a formula), anything else as it is. Returns the cell."""
    value = excel_text(value)
    cell = ws.cell(row=row, column=column, value=value)
    if isinstance(value, str):
        cell.data_type = "s"
    return cell


def write_csv(df: pd.DataFrame, path: str | os.PathLike[str], *, index: bool = False) -> Path:
    """``df`` as a CSV file, its text escaped (see the module). Lines end in CRLF (RFC 4180),
    so a field holding a carriage return is quoted, as one holding a line feed is (with
    ``\n`` endings, pandas would leave a lone CR unquoted, and a reader would split the row
    there). Returns the path."""
    path = Path(path)
    escape_formulas(df).to_csv(path, index=index, lineterminator="\r\n")
    return path


def read_table(path: str | os.PathLike[str], sheet: str | int = 0, **options: Any) -> pd.DataFrame:
    """A table the toolkit wrote (``.csv``, or a sheet of an ``.xlsx``), its text read back
    as it was before it was escaped. ``options`` go to ``pandas.read_csv`` /
    ``read_excel`` (``dtype=str`` keeps ids like ``007`` as text)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        return unescape_formulas(pd.read_csv(path, **options))
    df = pd.read_excel(path, sheet_name=sheet, engine="openpyxl", **options)
    return _map_text(df, read_text)


__all__ = [
    "FORMULA_LEADS",
    "QUOTE",
    "QUOTED_LEADS",
    "QUOTED_PATTERN",
    "escape_arrow",
    "escape_formula",
    "escape_formulas",
    "excel_text",
    "put_cell",
    "read_table",
    "read_text",
    "unescape_arrow",
    "unescape_formula",
    "unescape_formulas",
    "write_csv",
]
