"""An OpenDocument spreadsheet's claimed size, checked before a reader expands it.

An .ods holds no cell references; instead a row or a cell may say it is repeated
(``table:number-rows-repeated="1048575"``, ``table:number-columns-repeated="16384"``).
LibreOffice writes the empty rows and columns past a table so, and a reader holds every
cell from A1 to the last row and the farthest column that hold a value, the repeats
expanded: a file of a few hundred bytes can claim billions of cells (calamine asks for
gigabytes and aborts the process). So ``content.xml`` is read first, as a stream, with expat
(which expands no entity; a DTD is refused), and a table whose cells with a value span more
than :data:`~toolkit.xlsx.guard.MAX_AREA` cells from A1 is one
:class:`~toolkit.errors.WorkbookProblem` naming the table and the cell. Empty cells, however
often repeated, count for nothing (they are what LibreOffice writes past a table).

>>> xml = (b'<t:table xmlns:t="urn:oasis:names:tc:opendocument:xmlns:table:1.0" t:name="S">'
...        b'<t:table-row t:number-rows-repeated="1048576"><t:table-cell '
...        b't:number-columns-repeated="64"><p>x</p></t:table-cell></t:table-row></t:table>')
>>> print(area_problem([xml]).message[:60])
cells from A1 to row 1,048,576 and column BL (at cell BL1048
>>> area_problem([xml.replace(b"<p>x</p>", b"")]) is None
True
"""

from __future__ import annotations

import xml.parsers.expat
from collections.abc import Iterable

from ..errors import WorkbookProblem
from .guard import MAX_AREA, column_letters

_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0 "
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0 "
_CELLS = (_TABLE + "table-cell", _TABLE + "covered-table-cell")
_AGAIN = "the file was not saved by a spreadsheet program; export it again"


class _Refused(Exception):
    def __init__(self, problem: WorkbookProblem) -> None:
        self.problem = problem


class _Area:
    """Where the rows and cells of the table being read are, and how far its values reach."""

    def __init__(self) -> None:
        self.table = ""
        self.valued = False  # whether the current cell holds a value
        self._start_table()

    def _start_table(self) -> None:
        self.row = 0  # rows before the current one
        self.repeat = 1  # how often the current row repeats
        self.col = 0  # cells before the current one in its row
        self.cell: tuple[int, int] | None = None  # the current cell's column and repeat
        self.filled = False  # whether the current row holds a value
        self.last_row = 0
        self.widest = 0

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if self.cell is not None:
            self.valued = True  # an element inside a cell (its text): it holds a value
            return
        if name == _TABLE + "table":
            self.table = attrs.get(_TABLE + "name", "")
            self._start_table()
        elif name == _TABLE + "table-row":
            self.repeat = self._count(attrs, "number-rows-repeated")
            self.col, self.filled = 0, False
        elif name in _CELLS:
            self.cell = (self.col, self._count(attrs, "number-columns-repeated"))
            self.valued = _OFFICE + "value-type" in attrs

    def end(self, name: str) -> None:
        if self.cell is not None and name not in _CELLS:
            return
        if self.cell is not None:
            col, repeat = self.cell
            if self.valued:
                self.widest = max(self.widest, col + repeat)
                self.filled = True
            self.col, self.cell, self.valued = col + repeat, None, False
        elif name == _TABLE + "table-row":
            if self.filled:
                self.last_row = self.row + self.repeat
                self._check()
            self.row += self.repeat

    def _check(self) -> None:
        if self.last_row * self.widest > MAX_AREA:
            letters = column_letters(self.widest)
            ref = f"{letters}{self.last_row}"
            raise _Refused(
                WorkbookProblem(
                    self.table,
                    self.last_row,
                    None,
                    ref,
                    f"cells from A1 to row {self.last_row:,} and column {letters} (at cell "
                    f"{ref}) are more than the {MAX_AREA:,} cells a sheet may span; delete "
                    "the cells far from the table",
                )
            )

    def _count(self, attrs: dict[str, str], name: str) -> int:
        text = attrs.get(_TABLE + name, "1")
        if not (text.isascii() and text.isdigit()) or int(text) < 1:
            message = f"{name}={text!r} is not a whole number of 1 or more: {_AGAIN}"
            raise _Refused(WorkbookProblem(self.table, None, None, None, message))
        return int(text)


class _Doctype(Exception):
    pass


def _no_doctype(*_: object) -> None:
    raise _Doctype


def area_problem(chunks: Iterable[bytes]) -> WorkbookProblem | None:
    """The first table of the ``content.xml`` that comes as ``chunks`` whose values span more
    than :data:`~toolkit.xlsx.guard.MAX_AREA` cells from A1, or a part that is not XML a
    reader takes, as a problem; None when every table passes."""
    area = _Area()
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    parser.StartDoctypeDeclHandler = _no_doctype
    parser.StartElementHandler = area.start
    parser.EndElementHandler = area.end
    try:
        for chunk in chunks:
            parser.Parse(chunk, False)
        parser.Parse(b"", True)
    except _Refused as exc:
        return exc.problem
    except _Doctype:
        return WorkbookProblem(
            area.table, None, None, None, f"content.xml declares a DTD: {_AGAIN}"
        )
    except xml.parsers.expat.ExpatError as exc:
        message = xml.parsers.expat.ErrorString(exc.code)
        return WorkbookProblem(
            area.table,
            None,
            None,
            None,
            f"content.xml is not well-formed (line {exc.lineno}, column {exc.offset}: "
            f"{message}): {_AGAIN}",
        )
    return None


__all__ = ["area_problem"]
