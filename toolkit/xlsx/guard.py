"""Where each cell of a sheet says it is, checked before a reader parses the sheet.

A reader places a cell where its reference (``r="B2"``) says, and sizes what it holds by the
farthest one: a reference past the last column (``CYWOQVJ2``) would have it allocate
terabytes, and a row or a cell stored twice or out of order, or a shared-string index that
is not one (``-1``, ``abc``), is resolved silently, differently by each reader. So each sheet's
XML is read first, as a stream, and refused (one :class:`~toolkit.errors.WorkbookProblem`
naming the sheet and the cell) unless:

- every row and cell says where it is, a column A to XFD (16,384) and a row 1 to 1,048,576;
- rows come in order, each once, and the cells of a row in order, each once, inside it;
- the cells span at most :data:`MAX_AREA` cells from A1 (what a reader holds, empty or not);
- a shared-string cell (``t="s"``) holds a whole number below the number of shared strings.

Files as Excel, LibreOffice, openpyxl and the toolkit write them are checked with numpy on
blocks of the XML (:mod:`.cellscan`), two blocks at a time on threads of their own and
checked in the order of the XML; any other form (attributes in another order, comments,
another encoding) with expat, an XML parser that expands no entity.

>>> problem = problem_of([b'<row r="2"><c r="A2"/><c r="A2"/></row>'], "lists", lambda: 0)
>>> problem.sheet, problem.row, problem.message.split(":")[0]
('lists', 2, 'cell A2 appears twice in row 2')
"""

from __future__ import annotations

import os
import re
import threading
import xml.parsers.expat
import zipfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn

import numpy as np

from ..errors import WorkbookError, WorkbookProblem
from .archive import file_problem, part_chunks
from .cellscan import PAD, Entries, Names, entries_of, fast_entries
from .parts import sheet_parts

#: The last column and row of a worksheet (XFD1048576).
MAX_COLUMN = 16_384
MAX_ROW = 1_048_576
#: Cells a sheet may span from A1 to its last row and farthest column: a reader holds every
#: one of them, empty or not (1,048,576 rows of 16 columns; the toolkit's widest big table
#: has 8).
MAX_AREA = 1 << 24
#: Bytes of XML that may come without a row or a cell starting.
MAX_STRETCH = 64 << 20
#: Entries the expat reader gathers before they are checked.
BATCH = 100_000
#: Threads finding the entries of a sheet's blocks, and blocks found ahead of the checks.
SCAN_THREADS = max(1, min(2, os.cpu_count() or 1))
AHEAD = 2

_AGAIN = "the sheet was not saved by a spreadsheet program; export it again"
_ROOT_RE = re.compile(rb"<(?:([\w.-]+):)?(?:worksheet|chartsheet|dialogsheet)\b")
_DECL_RE = re.compile(rb"\A(?:\xef\xbb\xbf)?<\?xml[^>]*?\?>")


@dataclass
class _State:
    """What the blocks read so far leave for the next one."""

    row: int = 0  # the number of the last row; 0 before the first
    col: int = 0  # the column of the last cell of that row; 0 right after the row
    ref: str = ""  # that cell's reference
    widest: int = 0  # the farthest column so far


class SheetGuard:
    """The checks of each sheet of the workbook at ``path``, made once, before a reader
    parses the sheet: :meth:`check` raises :class:`~toolkit.errors.WorkbookError`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._checked: set[str] = set()
        self._strings: int | None = None
        self._lock = threading.Lock()  # sheets may be checked on several threads at once
        with zipfile.ZipFile(self.path) as archive:
            self._parts = sheet_parts(archive)
            self._infos = {i.filename.lower(): i for i in archive.infolist()}

    def check(self, sheet: str, tap: Callable[[bytes], None] | None = None) -> None:
        """Raise unless the sheet named ``sheet`` passes (see the module's docstring).
        ``tap``, when given, is called with each chunk of the sheet's XML as the checks read
        it, then with ``b""`` once the last was read (never when the checks stop before it,
        nor when the sheet was checked before): what else a reader looks for in the XML is
        found in the same pass. Each chunk reaches it once, in order; blocks are read a few
        ahead of their checks, so it may see more than the checks needed."""
        if sheet in self._checked:
            return
        info = self._info(sheet)
        if info is None:
            self._refuse(_problem(sheet, None, "", "its part is missing from the archive"))
        problem = problem_of(_Part(self.path, info, tap), sheet, self._count)
        if problem is not None:
            self._refuse(problem)
        self._checked.add(sheet)

    def size(self, sheet: str) -> int:
        """The bytes of XML of the sheet named ``sheet`` as its part's directory entry says
        (0 for a sheet without a part)."""
        info = self._info(sheet)
        return info.file_size if info is not None else 0

    def _info(self, sheet: str) -> zipfile.ZipInfo | None:
        """The directory entry of the sheet's part (None: no part)."""
        part = self._parts.get(sheet)
        return self._infos.get(part.lower()) if part is not None else None

    def _refuse(self, problem: WorkbookProblem) -> NoReturn:
        raise WorkbookError([problem], str(self.path))

    def _count(self) -> int:
        """How many shared strings the workbook has (0 without a table)."""
        with self._lock:
            return self._counted()

    def _counted(self) -> int:
        if self._strings is None:
            tables = [i for name, i in self._infos.items() if name.endswith("sharedstrings.xml")]
            if len(tables) > 1:
                self._refuse(file_problem("the archive holds two shared-string tables"))
            self._strings = _strings_in(part_chunks(self.path, tables[0])) if tables else 0
            if self._strings < 0:
                self._refuse(
                    file_problem(
                        f"the shared-string table holds a comment or a DTD: "
                        f"{_AGAIN.replace('sheet', 'workbook')}"
                    )
                )
        return self._strings


class _Part:
    """The chunks of a sheet's part, unpacked afresh each time it is iterated; ``tap`` sees
    those of the first time only."""

    def __init__(
        self, path: Path, info: zipfile.ZipInfo, tap: Callable[[bytes], None] | None
    ) -> None:
        self.path, self.info, self.tap = path, info, tap

    def __iter__(self) -> Iterator[bytes]:
        chunks, tap, self.tap = part_chunks(self.path, self.info), self.tap, None
        return chunks if tap is None else _tapped(chunks, tap)


def _tapped(chunks: Iterable[bytes], tap: Callable[[bytes], None]) -> Iterator[bytes]:
    for chunk in chunks:
        tap(chunk)
        yield chunk
    tap(b"")


_SI_RE = re.compile(rb"<(?:[\w.-]+:)?si[\s/>]")


def _strings_in(chunks: Iterable[bytes]) -> int:
    """The number of strings (``<si>``) in a shared-string table, streamed; -1 when it holds
    a comment or a DTD (which could hide or add one)."""
    count, carry = 0, b""
    for chunk in chunks:
        data = carry + chunk
        if b"<!" in data:
            return -1
        cut = max(len(data) - 32, 0)
        count += sum(1 for m in _SI_RE.finditer(data, 0, len(data)) if m.start() < cut)
        carry = data[cut:]
    if b"<!" in carry:
        return -1
    return count + len(_SI_RE.findall(carry))


def problem_of(
    chunks: Iterable[bytes], sheet: str, strings: Callable[[], int]
) -> WorkbookProblem | None:
    """The first problem of the sheet whose XML comes as ``chunks``, or None. ``strings()``
    counts the workbook's shared strings (asked only when a cell refers to one). When the
    fast reader gives up after the first chunk, expat reads ``chunks`` again from the start:
    give a list, or an object whose iteration starts over, not a one-off iterator."""
    blocks = iter(chunks)
    first = next(blocks, b"")
    names = _names(first)
    if names is not None:
        done, problem = _fast(first, blocks, names, sheet, strings)
        if done:
            return problem
        if iter(chunks) is not chunks:  # not a one-off iterator: read from the start again
            blocks = iter(chunks)
            first = next(blocks, b"")
    return _slow(first, blocks, sheet, strings)


def _names(first: bytes) -> Names | None:
    """The tags to look for, or None when the fast reader does not take this XML (another
    encoding, a comment or a declaration it cannot skip)."""
    decl = _DECL_RE.match(first)
    if decl is not None and re.search(rb"encoding=[\"'](?!utf-8[\"'])", decl.group().lower()):
        return None
    if first.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    root = _ROOT_RE.search(first[:65536])
    prefix = root.group(1) + b":" if root is not None and root.group(1) else b""
    return Names(prefix, decl.end() if decl is not None else 0)


def _fast(
    first: bytes,
    blocks: Iterator[bytes],
    names: Names,
    sheet: str,
    strings: Callable[[], int],
) -> tuple[bool, WorkbookProblem | None]:
    """``(True, problem)`` when every block was read by the fast reader; ``(False, None)``
    when one was not (the caller reads the whole sheet with expat).

    The blocks are cut here, one after another, and their entries found on
    :data:`SCAN_THREADS` threads (numpy lets go of the interpreter while it works), at most
    :data:`AHEAD` blocks ahead; they are checked here, in the order of the XML, so the
    first problem found is the first of the sheet."""
    ahead = _Ahead(sheet, strings)
    try:
        carry = first[names.skip :]
        pending: bytes | None = next(blocks, None)
        while True:
            last = pending is None
            data = b"".join((carry, pending or b"", PAD))  # zeros after: reads stay inside
            size = len(data) - len(PAD)
            cut = size if last else names.last_start(data)
            if cut <= 0 and size > MAX_STRETCH:
                return ahead.checked(0) or _stretch(data, size, sheet)
            if cut > 0:
                ahead.add(data, names, cut, last)
                answer = ahead.checked(0 if last else AHEAD)
                if answer is not None:
                    return answer
            if last:
                return True, None
            carry, pending = data[max(cut, 0) : size], next(blocks, None)
    finally:
        ahead.cancel()


def _stretch(data: bytes, size: int, sheet: str) -> tuple[bool, WorkbookProblem | None]:
    """The answer for a block of more than :data:`MAX_STRETCH` bytes without a row."""
    if data.find(b"<!", 0, size) >= 0 or data.find(b"<?", 0, size) >= 0:
        return False, None
    return True, _problem(
        sheet,
        None,
        "",
        f"more than {MAX_STRETCH >> 20} MB of XML without a row or a cell: {_AGAIN}",
    )


class _Ahead:
    """The blocks whose entries are being found, oldest first, and the checks' state."""

    def __init__(self, sheet: str, strings: Callable[[], int]) -> None:
        self.sheet, self.strings = sheet, strings
        self.state = _State()
        self.futures: deque[Future[Entries | None]] = deque()

    def add(self, data: bytes, names: Names, cut: int, last: bool) -> None:
        """Find the entries of the first ``cut`` bytes of ``data``: on a scan thread, or
        here for a sheet of one block or with one thread."""
        if SCAN_THREADS < 2 or (last and not self.futures):
            done: Future[Entries | None] = Future()
            done.set_result(fast_entries(data, names, cut))
            self.futures.append(done)
        else:
            self.futures.append(_scan_pool().submit(fast_entries, data, names, cut))

    def checked(self, room: int) -> tuple[bool, WorkbookProblem | None] | None:
        """Check the oldest blocks until at most ``room`` are ahead; None unless the
        sheet's answer is known (a problem, or a block of another form)."""
        while len(self.futures) > room:
            entries = self.futures.popleft().result()
            if entries is None:
                return False, None
            problem = _check(entries, self.state, self.sheet, self.strings)
            if problem is not None:
                return True, problem
        return None

    def cancel(self) -> None:
        for future in self.futures:  # the sheet's answer came before them
            future.cancel()


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _scan_pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=SCAN_THREADS, thread_name_prefix="toolkit-scan")
        return _POOL


def _forget_pool() -> None:
    """In a forked child: the parent's scan threads are not there, so a new pool is made."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_forget_pool)


def _slow(
    first: bytes, blocks: Iterator[bytes], sheet: str, strings: Callable[[], int]
) -> WorkbookProblem | None:
    """The sheet read with expat (no DTD, so no entity is expanded)."""
    reader = _Expat()
    state = _State()
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    parser.buffer_text = True
    parser.StartDoctypeDeclHandler = _no_doctype
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    parser.CharacterDataHandler = reader.text
    try:
        for block in _chain(first, blocks):
            parser.Parse(block, False)
            if len(reader.refs) >= BATCH:
                problem = _check(reader.take(), state, sheet, strings)
                if problem is not None:
                    return problem
        parser.Parse(b"", True)
    except xml.parsers.expat.ExpatError as exc:
        message = xml.parsers.expat.ErrorString(exc.code)
        return _problem(
            sheet,
            None,
            "",
            f"the sheet's XML is not well-formed (line "
            f"{exc.lineno}, column {exc.offset}: {message}): {_AGAIN}",
        )
    except _Doctype:
        return _problem(sheet, None, "", f"the sheet's XML declares a DTD: {_AGAIN}")
    return _check(reader.take(), state, sheet, strings)


def _chain(first: bytes, blocks: Iterator[bytes]) -> Iterator[bytes]:
    yield first
    yield from blocks


class _Doctype(Exception):
    pass


def _no_doctype(*_: object) -> None:
    raise _Doctype


class _Expat:
    """Rows, cells and shared-string values as expat meets them."""

    def __init__(self) -> None:
        self.refs: list[bytes | None] = []
        self.rows: list[bool] = []
        self.ss: list[int] = []
        self.values: list[str | None] = []
        self.outside: list[bool] = []
        self._value: list[str] | None = None
        self._in_ss = False
        self._in_row = False

    def start(self, name: str, attrs: dict[str, str]) -> None:
        local = name.rpartition(" ")[2]
        if local in ("row", "c"):
            ref = attrs.get("r")
            self.refs.append(None if ref is None else ref.encode("utf-8", "replace"))
            self.rows.append(local == "row")
            self.outside.append(local == "c" and not self._in_row)
            self._in_row = self._in_row or local == "row"
            self._in_ss = local == "c" and attrs.get("t") == "s"
            if self._in_ss:
                self.ss.append(len(self.refs) - 1)
                self.values.append(None)
        elif local == "v" and self._in_ss:
            self._value = []

    def text(self, data: str) -> None:
        if self._value is not None:
            self._value.append(data)

    def end(self, name: str) -> None:
        local = name.rpartition(" ")[2]
        if local == "v" and self._value is not None:
            self.values[-1] = "".join(self._value)
            self._value = None
        elif local == "c":
            self._in_ss = False
        elif local == "row":
            self._in_row = False

    def take(self) -> Entries:
        """The entries gathered so far (then forgotten)."""
        entries = entries_of(self.refs, self.rows, self.ss, self.values, self.outside)
        self.refs, self.rows, self.ss, self.values, self.outside = [], [], [], [], []
        return entries


# --------------------------------------------------------------------------- the checks


def _problem(sheet: str, row: int | None, ref: str, message: str) -> WorkbookProblem:
    return WorkbookProblem(sheet, row, None, ref or None, message)


def _check(
    e: Entries, state: _State, sheet: str, strings: Callable[[], int]
) -> WorkbookProblem | None:
    """The first problem among the entries ``e`` (read after ``state``), or None; ``state``
    is moved past them."""
    n = len(e.is_row)
    if n == 0:
        return None
    seen = np.cumsum(e.is_row)  # rows met up to each entry
    numbers = np.concatenate([[state.row], e.row[e.is_row]])
    parent = numbers[seen]  # the row each entry is in (its own number for a row)
    col = np.where(e.is_row, 0, e.col)
    before_col = np.concatenate([[state.col], col[:-1]])
    prev_rows = numbers[np.maximum(seen - e.is_row, 0)]  # the row before each row entry
    widest = np.maximum.accumulate(np.concatenate([[state.widest], col]))[1:]
    cell = ~e.is_row
    bad = {
        "ref": ~e.ok,
        "past": e.ok & ((e.col > MAX_COLUMN) | (e.row > MAX_ROW)),
        "row order": e.is_row & (e.row <= prev_rows) & (prev_rows > 0),
        "outside": cell & ((parent == 0) | (e.outside if e.outside is not None else False)),
        "inside": cell & (parent > 0) & (e.row != parent),
        "cell order": cell & (col <= before_col),
        "area": cell & (widest * e.row > MAX_AREA),
    }
    first = n
    kind = ""
    for name, mask in bad.items():  # in order: the first kind wins at the same entry
        hits = np.flatnonzero(mask)
        if len(hits) and hits[0] < first:
            first, kind = int(hits[0]), name
    if kind:
        twice = int(numbers[seen[first] - 1] if e.is_row[first] else before_col[first])
        return _message(kind, first, e, parent, widest, twice, state, sheet)
    problem = _strings(e, parent, sheet, strings)
    if problem is None:
        _advance(e, state, parent, col, widest)
    return problem


def _advance(
    e: Entries, state: _State, parent: np.ndarray, col: np.ndarray, widest: np.ndarray
) -> None:
    state.row = int(parent[-1])
    state.col = int(col[-1])
    state.ref = "" if e.is_row[-1] else e.ref(len(col) - 1)
    state.widest = int(widest[-1])


def _message(
    kind: str,
    i: int,
    e: Entries,
    parent: np.ndarray,
    widest: np.ndarray,
    before: int,
    state: _State,
    sheet: str,
) -> WorkbookProblem:
    """The words of the problem ``kind`` at entry ``i``; ``before`` is the row before (for
    a row) or the column of the cell before (for a cell)."""
    ref = e.ref(i)
    what = "row" if e.is_row[i] else "cell"
    row = int(parent[i]) if 0 < parent[i] <= MAX_ROW else None
    if kind == "ref":
        shown = f"{what} reference {ref!r}" if ref else f"a {what} without a reference (r=)"
        text = f"{shown} is not a {what} of a worksheet (columns A to XFD, rows 1 to 1,048,576)"
    elif kind == "past" and e.col[i] > MAX_COLUMN:
        letters = ref.rstrip("0123456789")
        text = f"cell {ref}: column {letters} is past XFD, the last column of a worksheet"
    elif kind == "past":
        text = f"{what} {ref}: row {ref.lstrip('ABCDEFGHIJKLMNOPQRSTUVWXYZ')} is past "
        text += f"{MAX_ROW:,}, the last row of a worksheet"
        row = None
    elif kind == "row order":
        text = (
            f"row {ref} appears twice"
            if int(e.row[i]) == before
            else f"row {ref} comes after row {before}: rows are out of order"
        )
    elif kind == "outside":
        text = f"cell {ref} is outside any row"
    elif kind == "inside":
        text = f"cell {ref} is inside row {int(parent[i])}"
    elif kind == "cell order":
        text = (
            f"cell {ref} appears twice in row {int(parent[i])}"
            if int(e.col[i]) == before
            else f"cell {ref} comes after cell {state.ref if i == 0 else e.ref(i - 1)}: "
            "cells are out of order"
        )
    else:
        text = (
            f"cells from A1 to row {int(e.row[i]):,} and column {column_letters(int(widest[i]))} "
            f"(at cell {ref}) are more than the {MAX_AREA:,} cells a sheet may span; "
            "delete the cells far from the table"
        )
        return _problem(sheet, row, ref, text)
    return _problem(sheet, row, ref, f"{text}: {_AGAIN}")


def column_letters(column: int) -> str:
    """The letters of the column numbered ``column`` (1 is A), whatever its size.

    >>> column_letters(28), column_letters(16_384)
    ('AB', 'XFD')
    """
    out = ""
    while column > 0:
        column, rest = divmod(column - 1, 26)
        out = chr(65 + rest) + out
    return out


def _strings(
    e: Entries, parent: np.ndarray, sheet: str, strings: Callable[[], int]
) -> WorkbookProblem | None:
    """A shared-string cell whose index is not one of the table's."""
    if not len(e.ss):
        return None
    count = strings()
    bad = np.flatnonzero((e.ss_value < 0) | (e.ss_value >= count))
    if not len(bad):
        return None
    k = int(bad[0])
    i = int(e.ss[k])
    value = e.ss_text(k)
    shown = f"the shared-string index {value!r}" if value is not None else "no shared-string index"
    table = f"0 to {count - 1:,}" if count else "none: the workbook has no shared strings"
    return _problem(
        sheet,
        int(parent[i]),
        e.ref(i),
        f"cell {e.ref(i)} holds {shown}, not a whole number of the table ({table}): {_AGAIN}",
    )


__all__ = ["MAX_AREA", "MAX_COLUMN", "MAX_ROW", "SheetGuard", "column_letters", "problem_of"]
