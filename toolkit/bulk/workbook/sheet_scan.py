"""What a workbook's sheets hold that a reader of values does not show: formulas, merged
cells and number formats that show a percentage.

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
from xml.etree import ElementTree

from ...xlsx.archive import SCAN_CHUNK

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
    tap = StructureTap(limit)
    for chunk in _chunks(archive, part):
        tap(chunk)
    tap(b"")
    return tap.scan


class StructureTap:
    """The formulas and merged ranges of a sheet found as its XML passes by, chunk by chunk:
    call it with each chunk, then with ``b""`` at the end (``complete`` is then True and
    ``scan`` holds what was found). The checks of :mod:`toolkit.xlsx.guard` take it along
    (``SheetGuard.check(name, tap)``), so a sheet is unpacked once for both.

    >>> tap = StructureTap()
    >>> for chunk in (b'<worksheet><row r="2"><c r="B2"><f>A1*2</f>', b"<v>4</v></c></row>", b""):
    ...     tap(chunk)
    >>> tap.complete, tap.scan.formulas
    (True, [('B', 2, '=A1*2')])
    """

    def __init__(self, limit: int = 1000) -> None:
        self.scan = SheetScan()
        self.complete = False
        self._limit = limit
        self._cutter = _Cutter()
        self._pending: bytes | None = None

    def __call__(self, chunk: bytes) -> None:
        if self._pending is not None:
            self._find(*self._cutter.block(self._pending, last=not chunk))
        self._pending = chunk or None
        self.complete = not chunk

    def _find(self, data: bytes, prefix: bytes, start: int, end: int) -> None:
        _find_formulas(data, prefix, start, end, self.scan, self._limit)
        _find_merges(data, prefix, start, end, self.scan, self._limit)


class _Cutter:
    """Chunks of a sheet's XML cut into blocks ``(data, namespace prefix, start, end)``: the
    tags starting in ``data[start:end]`` are each in exactly one block, whole within
    :data:`OVERLAP`."""

    def __init__(self) -> None:
        self.prefix: bytes | None = None
        self.carry, self.skip = b"", 0

    def block(self, chunk: bytes, last: bool) -> tuple[bytes, bytes, int, int]:
        data = self.carry + chunk
        if self.prefix is None:
            root = _ROOT_RE.search(data[:4096])
            self.prefix = (root.group(1) + b":") if root and root.group(1) else b""
        skip = self.skip
        end = len(data) if last else max(skip, len(data) - OVERLAP)
        start = max(0, end - OVERLAP)
        self.carry, self.skip = data[start:], end - start
        return data, self.prefix, skip, end


def _blocks(archive: zipfile.ZipFile, part: str) -> Iterator[tuple[bytes, bytes, int, int]]:
    """The sheet at ``part`` cut into blocks (see :class:`_Cutter`)."""
    cutter = _Cutter()
    chunks = _chunks(archive, part)
    pending = next(chunks, None)
    while pending is not None:
        following = next(chunks, None)
        yield cutter.block(pending, following is None)
        pending = following


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
    end += len(tag) - 1  # a tag starting before ``end`` may reach past it
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
    end += len(tag) - 1  # a tag starting before ``end`` may reach past it
    pos = data.find(tag, start, end)
    while pos >= 0 and len(scan.merged) < limit:
        close = data.find(b">", pos, pos + OVERLAP)
        ref = _MERGE_RE.search(data, pos, close) if close > 0 else None
        if ref is not None:
            scan.merged.append(ref.group(1).decode())
        pos = data.find(tag, pos + 1, end)


# --------------------------------------------------------------------------- number formats


#: The built-in number formats that show a percentage (``0%``, ``0.00%``).
PERCENT_FORMATS = frozenset({9, 10})


def percent_styles(archive: zipfile.ZipFile) -> frozenset[int]:
    """The cell styles (``s=`` of a cell: an index of ``cellXfs``) whose number format shows a
    percentage (``0%``, ``0.00%``, any format holding ``%``); empty for a workbook without
    one, such as every one the toolkit exports."""
    part = _styles_part(archive)
    if part is None:
        return frozenset()
    root = ElementTree.fromstring(archive.read(part))
    percent = set(PERCENT_FORMATS)
    for fmt in root.iterfind("{*}numFmts/{*}numFmt"):
        if "%" in fmt.get("formatCode", "") and (fmt.get("numFmtId") or "").isdigit():
            percent.add(int(fmt.get("numFmtId", "")))
    xfs = root.iterfind("{*}cellXfs/{*}xf")
    return frozenset(i for i, xf in enumerate(xfs) if _format_id(xf.get("numFmtId")) in percent)


def _format_id(text: str | None) -> int:
    return int(text) if text and text.isdigit() else 0


def _styles_part(archive: zipfile.ZipFile) -> str | None:
    """Where the styles are: as the workbook's relationships say, else ``xl/styles.xml``."""
    names = set(archive.namelist())
    if "xl/_rels/workbook.xml.rels" in names:
        rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
        for rel in rels.iterfind("{*}Relationship"):
            if rel.get("Type", "").endswith("/styles"):
                target = rel.get("Target", "")
                part = target.lstrip("/") if target.startswith("/") else f"xl/{target}"
                return part if part in names else None
    return "xl/styles.xml" if "xl/styles.xml" in names else None


_TYPE_RE = re.compile(rb'\bt="([a-zA-Z]*)"')


def styled_numbers(
    archive: zipfile.ZipFile, part: str, styles: frozenset[int], letter: str, limit: int = 1000
) -> list[int]:
    """The rows whose cell in column ``letter`` is a number cell with one of the ``styles``
    (at most ``limit``), found by the styles alone: a sheet is read only for a workbook that
    has such a style, and only the cells of one are looked at."""
    if not styles:
        return []
    found: list[int] = []
    wanted = re.compile(rb' s="(?:' + b"|".join(b"%d" % s for s in sorted(styles)) + rb')"')
    column = letter.encode()
    for data, prefix, start, end in _blocks(archive, part):
        tag = b"<" + prefix + b"c "
        for match in wanted.finditer(data, start, end + OVERLAP):
            if match.start() >= end:  # the next block's
                break
            cell = data.rfind(b"<", max(0, match.start() - OVERLAP), match.start())
            close = data.find(b">", match.end(), match.end() + OVERLAP)
            if cell < 0 or close < 0 or not data.startswith(tag, cell):
                continue
            ref = _REF_RE.search(data, cell, close)
            kind = _TYPE_RE.search(data, cell, close)
            if ref and ref.group(1) == column and (kind is None or kind.group(1) == b"n"):
                found.append(int(ref.group(2)))
                if len(found) >= limit:
                    return found
    return found


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


__all__ = [
    "PERCENT_FORMATS",
    "SheetScan",
    "StructureTap",
    "cells_of",
    "formulas_and_merges",
    "percent_styles",
    "styled_numbers",
]
