"""What a workbook's sheets hold that a reader of values does not show: formulas and
merged cells.

:func:`formulas_and_merges` scans a sheet's XML as a stream (a million rows in a fraction of
a second) for cells holding a formula and for merged ranges: a reader of values sees a
formula's saved result (or nothing when no program computed it) and a merged range as one
value and empty cells, so both are reported instead of guessed at. (The file itself, its zip
and each sheet's cells are checked before, by :mod:`toolkit.xlsx`.)

>>> list(cells_of("A2:B2"))
[('A', 2), ('B', 2)]
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..xlsx.archive import SCAN_CHUNK

#: How far a cell's XML may reach from its tag (the chunks of a sheet overlap by as much).
OVERLAP = 1024


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


__all__ = ["SheetScan", "cells_of", "formulas_and_merges"]
