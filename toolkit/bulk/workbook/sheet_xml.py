"""Fast sheet data for .xlsx files: cell XML built column-wise with pyarrow, spliced into a
workbook that openpyxl wrote.

openpyxl writes everything around the data (styles, header comments, data validation,
protection, hidden sheets) but spends microseconds per cell. Here the ``<sheetData>`` rows of
the big sheets are built a column at a time with ``pyarrow.compute`` and streamed into the
zip, in place of the header-only ``<sheetData>`` that openpyxl wrote.

Strings are inline strings (``t="inlineStr"``), so a spreadsheet never reads them as
formulas, and text that starts like a formula gets a ``'`` in front and the quote-prefix
style (:mod:`toolkit.frames.cells`; the readers drop the ``'``). XML-special characters
are escaped; a carriage return is written as ``&#13;`` (an XML parser would turn a raw one
into a line feed); other control characters, which XML 1.0 cannot hold, as ``_xHHHH_``, the
spreadsheet convention (a literal ``_xHHHH_`` in the text is escaped as ``_x005F_xHHHH_``);
the noncharacters U+FFFE and U+FFFF, which no reader takes back, become U+FFFD. Leading or
trailing white space is kept (``xml:space="preserve"``). Numbers are written in their
shortest round-trip form, so they read back bit for bit; timestamps as serial days (UTC).

>>> import pandas as pd
>>> cols = [Column("A", "str", 1, 2), Column("B", "float", 3)]
>>> df = pd.DataFrame({"a": ["=1+1", "x & y"], "b": [0.5, None]})
>>> print(b"".join(sheet_rows(df, cols)).decode().replace("><", ">\\n<"))
<row r="2">
<c r="A2" s="2" t="inlineStr">
<is>
<t>'=1+1</t>
</is>
</c>
<c r="B2" s="3">
<v>0.5</v>
</c>
</row>
<row r="3">
<c r="A3" s="1" t="inlineStr">
<is>
<t>x &amp; y</t>
</is>
</c>
</row>
"""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...frames.cells import escape_arrow
from ...xlsx.parts import sheet_parts

#: Rows built per chunk, to bound memory on big sheets.
CHUNK_ROWS = 100_000
#: Deflate level of the spliced sheets (1: fast; the files stay about 20% larger than at 6).
COMPRESS_LEVEL = 1
#: Days from the spreadsheet epoch (1899-12-30) to 1970-01-01.
UNIX_EPOCH_SERIAL = 25569.0
NS_PER_DAY = 86_400 * 10**9

_LS = pa.large_string()
_CONTROL = "[\x00-\x08\x0b\x0c\x0e-\x1f]"
_NONCHARACTER = "[\ufffe\uffff]"
_CONTROL_RE = re.compile(_CONTROL)
_ESCAPE_LIKE = r"_(x[0-9A-Fa-f]{4}_)"
_UNESCAPE_RE = re.compile(r"_x([0-9A-Fa-f]{4})_")
_QUOTE_RE = r"^[=+\-@\t\r]"
_SPACE_RE = r"^[ \t\n\r]|[ \t\n\r]$"


@dataclass(frozen=True)
class Column:
    """How to write one column: its letter, kind (``int``, ``float``, ``str``, ``time``), the
    style id of its cells and, for text, of cells that look like formulas (quote prefix)."""

    letter: str
    kind: str
    style: int
    quote_style: int | None = None


def _lit(text: str) -> pa.Scalar:
    return pa.scalar(text, _LS)


def _join(*parts: Any) -> pa.Array:
    """Element-wise concatenation; any null part makes the result null."""
    return pc.binary_join_element_wise(*parts, _lit(""))


def _arrow_text(series: pd.Series) -> pa.Array:
    """The column as a large_string array (nulls for missing values)."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        series = series.astype(object).where(series.notna(), None)
    if isinstance(series.dtype, pd.StringDtype):
        arr = pa.array(series.array)
    else:
        arr = pa.array(series.astype(object).where(series.notna(), None), from_pandas=True)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if arr.type != _LS:
        arr = arr.cast(_LS)
    return arr


def escape_text(arr: pa.Array) -> pa.Array:
    """XML-escape a large_string array the way :mod:`toolkit.bulk.workbook.sheet_xml` says."""
    if len(arr) == 0:
        return arr
    if pc.any(pc.match_substring_regex(arr, _ESCAPE_LIKE)).as_py():
        arr = pc.replace_substring_regex(arr, _ESCAPE_LIKE, r"_x005F_\1")
    arr = pc.replace_substring(arr, "&", "&amp;")
    arr = pc.replace_substring(arr, "<", "&lt;")
    arr = pc.replace_substring(arr, ">", "&gt;")
    arr = pc.replace_substring(arr, "\r", "&#13;")
    if pc.any(pc.match_substring_regex(arr, _NONCHARACTER)).as_py():
        arr = pc.replace_substring_regex(arr, _NONCHARACTER, "\ufffd")
    if pc.any(pc.match_substring_regex(arr, _CONTROL)).as_py():
        present = set(_CONTROL_RE.findall("".join(v for v in arr.to_pylist() if v)))
        for char in sorted(present):
            arr = pc.replace_substring(arr, char, f"_x{ord(char):04X}_")
    return arr


def unescape_text(text: str) -> str:
    """Undo the ``_xHHHH_`` escapes (for readers that keep them, like openpyxl).

    >>> unescape_text("a_x0001_b_x005F_x0041_")
    'a\\x01b_x0041_'
    """
    if "_x" not in text:
        return text
    return _UNESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), text)


def _text_cells(
    series: pd.Series, col: Column, refs: pa.Array, as_text: pa.Array | None = None
) -> pa.Array:
    arr = as_text if as_text is not None else _arrow_text(series)
    if len(arr) and pc.any(pc.equal(arr, "")).as_py():
        arr = pc.if_else(pc.equal(arr, ""), pa.scalar(None, _LS), arr)
    esc = escape_text(arr if as_text is not None else escape_arrow(arr))  # '=x, never =x
    open_t = pc.if_else(
        pc.match_substring_regex(arr, _SPACE_RE),
        _lit('"><is><t xml:space="preserve">'),
        _lit('"><is><t>'),
    )
    style = _lit(f'" s="{col.style}" t="inlineStr')
    if col.quote_style is not None:
        style = pc.if_else(
            pc.match_substring_regex(arr, _QUOTE_RE),
            _lit(f'" s="{col.quote_style}" t="inlineStr'),
            style,
        )
    return _join(_lit(f'<c r="{col.letter}'), refs, style, open_t, esc, _lit("</t></is></c>"))


def _number_cells(text: pa.Array, col: Column, refs: pa.Array) -> pa.Array:
    return _join(
        _lit(f'<c r="{col.letter}'), refs, _lit(f'" s="{col.style}"><v>'), text, _lit("</v></c>")
    )


def _cells(series: pd.Series, col: Column, refs: pa.Array) -> pa.Array:
    if col.kind == "str":
        cells = _text_cells(series, col, refs)
    elif col.kind == "int":
        values = pa.array(series.astype("Int64").array)
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        cells = _number_cells(values.cast(_LS), col, refs)
    elif col.kind == "time":
        times = series.dt.tz_convert("UTC") if series.dt.tz is not None else series
        ns = times.array.asi8 if hasattr(times.array, "asi8") else times.to_numpy().view("i8")
        serial = ns / NS_PER_DAY + UNIX_EPOCH_SERIAL
        values = pa.array(serial, mask=times.isna().to_numpy())
        cells = _number_cells(values.cast(_LS), col, refs)
    else:
        numbers = series.to_numpy(dtype="float64", na_value=np.nan)
        values = pa.array(numbers, mask=np.isnan(numbers))
        cells = _number_cells(values.cast(_LS), col, refs)
        infinite = np.isinf(numbers)
        if infinite.any():  # no number cell holds infinity: write it as text
            text = pa.array(np.where(infinite, np.where(numbers > 0, "inf", "-inf"), None), _LS)
            cells = pc.if_else(pa.array(infinite), _text_cells(series, col, refs, text), cells)
    return pc.fill_null(cells, _lit(""))


def sheet_rows(
    df: pd.DataFrame, columns: Sequence[Column], first_row: int = 2, chunk: int = CHUNK_ROWS
) -> Iterator[memoryview]:
    """The ``<row>`` elements of ``df`` (its columns in order, one per :class:`Column`),
    numbered from ``first_row``, as UTF-8 buffers of at most ``chunk`` rows each."""
    if len(columns) != df.shape[1]:
        raise ValueError(f"{df.shape[1]} columns, {len(columns)} column specs")
    for start in range(0, len(df), chunk):
        part = df.iloc[start : start + chunk]
        numbers = np.arange(first_row + start, first_row + start + len(part), dtype=np.int64)
        refs = pa.array(numbers).cast(_LS)
        cells = [_cells(part.iloc[:, i], col, refs) for i, col in enumerate(columns)]
        rows = _join(_lit('<row r="'), refs, _lit('">'), *cells, _lit("</row>"))
        yield _buffer(rows)


def _buffer(arr: pa.Array) -> memoryview:
    """The concatenated bytes of a non-null large_string array, without copying."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    _, offsets, data = arr.buffers()
    off = np.frombuffer(offsets, dtype=np.int64, count=len(arr) + 1, offset=arr.offset * 8)
    return memoryview(data)[int(off[0]) : int(off[-1])]


# --------------------------------------------------------------------------- splicing


@dataclass
class SheetData:
    """Rows to put into a sheet of the skeleton: a row iterator, the used range, and the
    number of cells (to decide whether the part needs ZIP64, which some readers refuse)."""

    rows: Iterator[memoryview] | Sequence[bytes | memoryview]
    last_column: str
    last_row: int
    cells: int = 0

    @property
    def large(self) -> bool:
        """Whether the XML may pass 2 GiB (at most about 200 bytes a cell)."""
        return self.cells * 200 >= 2**31 - 1


def splice(
    skeleton: str | os.PathLike[str] | IO[bytes], out: Path, data: Mapping[str, SheetData]
) -> None:
    """Copy ``skeleton`` to ``out``, adding each sheet's rows after its header row."""
    with zipfile.ZipFile(skeleton) as src:
        parts = sheet_parts(src)
        by_part = {parts[name]: sd for name, sd in data.items()}
        tmp = out.with_name(out.name + ".part")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                raw = src.read(info.filename)
                sd = by_part.get(info.filename)
                if sd is None:
                    dst.writestr(info, raw, compress_type=zipfile.ZIP_DEFLATED)
                    continue
                head, tail = _split(raw.decode("utf-8"), sd)
                entry = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                entry.compress_type = zipfile.ZIP_DEFLATED
                _set_level(entry, COMPRESS_LEVEL)
                with dst.open(entry, "w", force_zip64=sd.large) as stream:
                    stream.write(head.encode("utf-8"))
                    for block in sd.rows:
                        stream.write(block)
                    stream.write(tail.encode("utf-8"))
        os.replace(tmp, out)


def _set_level(entry: zipfile.ZipInfo, level: int) -> None:
    try:  # Python 3.13+
        entry.compress_level = level  # type: ignore[attr-defined]
    except AttributeError:
        entry._compresslevel = level  # type: ignore[attr-defined]


def _split(xml: str, sd: SheetData) -> tuple[str, str]:
    """The sheet XML before and after the point where data rows go; fixes ``dimension``."""
    end = xml.find("</sheetData>")
    if end < 0:  # an empty <sheetData/>
        empty = xml.find("<sheetData/>")
        if empty < 0:
            empty = xml.find("<sheetData />")
        if empty < 0:
            raise ValueError("sheet has no sheetData")
        close = xml.index(">", empty) + 1
        xml = xml[:empty] + "<sheetData></sheetData>" + xml[close:]
        end = xml.find("</sheetData>")
    head, tail = xml[:end], xml[end:]
    ref = f"A1:{sd.last_column}{max(sd.last_row, 1)}"
    head = re.sub(r'<dimension ref="[^"]*"\s*/>', f'<dimension ref="{ref}"/>', head, count=1)
    return head, tail


__all__ = [
    "Column",
    "SheetData",
    "escape_text",
    "sheet_rows",
    "splice",
    "unescape_text",
]
