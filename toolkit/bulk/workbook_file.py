"""The workbook as a file: is it an .xlsx at all, and what its sheets hold that a reader of
values does not show (formulas, merged cells).

:func:`check_file` looks at the first bytes and the zip directory before any reader opens
the file, so an empty file, a CSV, an old ``.xls`` or a truncated archive is one clear
:class:`~toolkit.errors.WorkbookError` instead of a reader's traceback.
:func:`formulas_and_merges` scans a sheet's XML as a stream (a million rows in a fraction of
a second) for cells holding a formula and for merged ranges: a reader of values sees a
formula's saved result (or nothing when no program computed it) and a merged range as one
value and empty cells, so both are reported instead of guessed at.

>>> import tempfile, pathlib
>>> empty = pathlib.Path(tempfile.mkdtemp()) / "empty.xlsx"
>>> _ = empty.write_bytes(b"")
>>> try:
...     check_file(empty)
... except WorkbookError as exc:
...     print(exc.problems[0].message)
the file is empty (0 bytes), not an .xlsx workbook
"""

from __future__ import annotations

import os
import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import WorkbookError, WorkbookProblem

#: The first bytes of a zip archive (an .xlsx is one), of an empty one, and of an OLE2
#: compound file (an Excel 97-2003 .xls, or a password-protected .xlsx).
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
#: Bytes of sheet XML scanned at once, and how far a cell's XML may reach from its tag.
SCAN_CHUNK = 1 << 22
OVERLAP = 1024
_SAVE_AS = "open it in Excel or LibreOffice and save it as an Excel Workbook (.xlsx)"


def file_problem(message: str) -> WorkbookProblem:
    """A problem of the whole file (no sheet, row or column)."""
    return WorkbookProblem("", None, None, None, message)


def check_file(path: str | os.PathLike[str]) -> None:
    """Raise :class:`~toolkit.errors.WorkbookError` unless ``path`` looks like an .xlsx
    workbook: a complete zip archive holding ``xl/workbook.xml``."""
    path = Path(path)
    with path.open("rb") as f:
        head = f.read(8)
    message = _kind_problem(path, head)
    if message is None:
        try:
            with zipfile.ZipFile(path) as archive:
                names = set(archive.namelist())
                mimetype = archive.read("mimetype")[:100] if "mimetype" in names else b""
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
            message = f"the .xlsx archive is damaged or truncated ({exc}); export it again"
        else:
            if b"opendocument" in mimetype:
                message = f"an OpenDocument spreadsheet (.ods), not .xlsx: {_SAVE_AS}"
            elif "xl/workbook.xml" not in names:
                message = "a zip archive without xl/workbook.xml: not an .xlsx workbook"
    if message is not None:
        raise WorkbookError([file_problem(message)], str(path))


def _kind_problem(path: Path, head: bytes) -> str | None:
    if not head:
        return "the file is empty (0 bytes), not an .xlsx workbook"
    if head.startswith(OLE2_MAGIC):
        return (
            "an Excel 97-2003 workbook (.xls) or an encrypted file, not .xlsx: "
            f"{_SAVE_AS} (without a password)"
        )
    if head.startswith(ZIP_MAGIC):
        return None
    if path.suffix.lower() in (".csv", ".tsv", ".txt") or _looks_like_text(head):
        return f"a CSV or text file, not an .xlsx workbook: {_SAVE_AS}"
    return "not an .xlsx workbook (the file is not a zip archive)"


def _looks_like_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return b"\x00" not in head


# --------------------------------------------------------------------------- sheet XML


@dataclass
class SheetScan:
    """What a sheet's XML holds besides values: ``formulas`` as ``(column letter, row,
    formula text)`` and ``merged`` ranges like ``"A2:C2"``."""

    formulas: list[tuple[str, int, str]] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)


_REF_RE = re.compile(rb'\br="([A-Z]{1,3})([0-9]{1,7})"')
_ROOT_RE = re.compile(rb"<(?:(\w+):)?worksheet\b")
_MERGE_RE = re.compile(rb'\bref="([A-Z]{1,3}[0-9]{1,7}(?::[A-Z]{1,3}[0-9]{1,7})?)"')


def formulas_and_merges(archive: zipfile.ZipFile, part: str, limit: int = 1000) -> SheetScan:
    """The formulas and merged ranges of the sheet stored at ``part`` (at most ``limit`` of
    each), read as a stream of chunks that overlap by :data:`OVERLAP` bytes."""
    scan = SheetScan()
    prefix: bytes | None = None
    carry, skip = b"", 0
    chunks = _chunks(archive, part)
    pending = next(chunks, None)
    while pending is not None:
        following = next(chunks, None)
        data = carry + pending
        if prefix is None:
            root = _ROOT_RE.search(data[:4096])
            prefix = (root.group(1) + b":") if root and root.group(1) else b""
        end = len(data) if following is None else max(skip, len(data) - OVERLAP)
        _find_formulas(data, prefix, skip, end, scan, limit)
        _find_merges(data, prefix, skip, end, scan, limit)
        start = max(0, end - OVERLAP)
        carry, skip = data[start:], end - start
        pending = following
    return scan


def _chunks(archive: zipfile.ZipFile, part: str) -> Iterator[bytes]:
    with archive.open(part) as stream:
        while True:
            chunk = stream.read(SCAN_CHUNK)
            if not chunk:
                return
            yield chunk


def _find_formulas(
    data: bytes, prefix: bytes, start: int, end: int, scan: SheetScan, limit: int
) -> None:
    """Formulas whose tag starts in ``data[start:end]``."""
    tag = b"<" + prefix + b"f"
    pos = data.find(tag, start, end)
    while pos >= 0 and len(scan.formulas) < limit:
        after = data[pos + len(tag) : pos + len(tag) + 1]
        if after in (b">", b" ", b"/"):
            cell = data.rfind(b"<" + prefix + b"c ", max(0, pos - OVERLAP), pos)
            ref = _REF_RE.search(data, cell, pos) if cell >= 0 else None
            if ref is not None:
                close = data.find(b">", pos, pos + OVERLAP)
                text = b""
                if close > 0 and data[close - 1 : close] != b"/":
                    text = data[close + 1 : close + 61].split(b"<", 1)[0]
                scan.formulas.append(
                    (ref.group(1).decode(), int(ref.group(2)), _formula_text(text))
                )
        pos = data.find(tag, pos + 1, end)


def _formula_text(raw: bytes) -> str:
    text = raw[:60].decode("utf-8", "replace")
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
    text = text.replace("&amp;", "&")
    return "=" + text if text else "(shared formula)"


def _find_merges(
    data: bytes, prefix: bytes, start: int, end: int, scan: SheetScan, limit: int
) -> None:
    tag = b"<" + prefix + b"mergeCell "
    pos = data.find(tag, start, end)
    while pos >= 0 and len(scan.merged) < limit:
        close = data.find(b">", pos, pos + OVERLAP)
        ref = _MERGE_RE.search(data, pos, close) if close > 0 else None
        if ref is not None:
            scan.merged.append(ref.group(1).decode())
        pos = data.find(tag, pos + 1, end)


def cells_of(ref: str) -> Iterator[tuple[str, int]]:
    """The cells of a range like ``A2:C3`` (column letter, row), at most 10,000.

    >>> list(cells_of("A2:B3"))
    [('A', 2), ('B', 2), ('A', 3), ('B', 3)]
    """
    from openpyxl.utils import get_column_letter, range_boundaries

    first_col, first_row, last_col, last_row = range_boundaries(ref)
    count = 0
    for row in range(first_row, last_row + 1):
        for col in range(first_col, last_col + 1):
            yield get_column_letter(col), row
            count += 1
            if count >= 10_000:
                return


__all__ = ["SheetScan", "cells_of", "check_file", "file_problem", "formulas_and_merges"]
