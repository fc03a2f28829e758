"""Which sheets of a workbook hold which table: the table sheets and their continuations
(``lists``, ``lists (2)``, ...), the hidden exported state (``_base_lists``, ...), and the
sheets the reader does not read.

Sheets are refused, never skipped in silence, when skipping them could change what a plan
does: a continuation sheet without the rest of its table, a hidden exported state that is
gone, a sheet whose name is almost a table's (``Lists``, ``lists_edit``) or whose header is
a table's (``Sheet1`` written by pandas). A table sheet deleted outright means "no change"
for its table (see ``missing`` of :class:`~toolkit.bulk.workbook.WorkbookTables`).

>>> m = map_sheets(["README", "lists", "lists (2)", "_base_lists", "_base_lists (2)"], {})
>>> m.tables, m.bases, m.problems
({'lists': ['lists', 'lists (2)']}, {'lists': ['_base_lists', '_base_lists (2)']}, [])
>>> [p.message for p in map_sheets(["Lists"], {}).problems]
["not read: a table sheet is named exactly 'lists'; rename it, or delete it for no change"]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...errors import WorkbookProblem
from ...frames.account import TABLES
from .layout import (
    BASE_PREFIX,
    LISTS_SHEET,
    META_SHEET,
    README_SHEET,
    REFS_SHEET,
    SHEETS,
    part_name,
)

#: Sheets of an export that are not tables.
OTHER_SHEETS = frozenset({README_SHEET, LISTS_SHEET, REFS_SHEET, META_SHEET})
_PART_RE = re.compile(r"^(.+) \(([0-9]{1,4})\)$")


@dataclass
class SheetMap:
    """``tables``/``bases``: table -> its sheets in order (present ones only);
    ``ignored``: sheets not read; ``problems``: sheets refused."""

    tables: dict[str, list[str]] = field(default_factory=dict)
    bases: dict[str, list[str]] = field(default_factory=dict)
    ignored: list[str] = field(default_factory=list)
    problems: list[WorkbookProblem] = field(default_factory=list)

    def refuse(self, sheet: str, message: str) -> None:
        self.problems.append(WorkbookProblem(sheet, None, None, None, message))


def exported_parts(meta: Mapping[str, str]) -> dict[str, int]:
    """``table -> number of sheets`` from ``_meta`` (``sheets: lists=2, ...``).

    >>> exported_parts({"sheets": "campaigns=1, lists=2"})
    {'campaigns': 1, 'lists': 2}
    """
    out = {}
    for entry in meta.get("sheets", "").split(","):
        name, _, count = entry.strip().partition("=")
        if name in SHEETS and count.strip().isdecimal() and count.isascii():
            out[name] = int(count)
    return out


def _split(name: str) -> tuple[str, int]:
    match = _PART_RE.match(name)
    if match and int(match.group(2)) >= 2:
        return match.group(1), int(match.group(2))
    return name, 1


def _table_named_like(name: str) -> str | None:
    """The table a sheet name nearly spells (``Lists``, `` lists``, ``bid-rules``,
    ``lists_edit``, ``Copy of lists``)."""
    stem, _ = _split(name.strip())
    plain = re.sub(r"[\s\-.]+", "_", stem.strip().lower()).strip("_")
    plain = plain.removeprefix(BASE_PREFIX.strip("_")).strip("_")
    for table in TABLES:
        if plain == table or re.search(rf"(^|_){table}(_|$)", plain):
            return table
    return None


def map_sheets(
    names: Sequence[str],
    meta: Mapping[str, str],
    header_of: Callable[[str], Sequence[Any]] | None = None,
) -> SheetMap:
    """Sort the sheet ``names`` of a workbook; ``meta`` is its ``_meta`` sheet (empty for a
    workbook made by hand); ``header_of(name)`` gives the first row of a sheet, to spot a
    table under another name."""
    found: dict[str, dict[int, str]] = {}
    out = SheetMap()
    for name in names:
        stem, part = _split(name)
        if stem.removeprefix(BASE_PREFIX) in SHEETS:
            found.setdefault(stem, {})[part] = name
        elif name not in OTHER_SHEETS:
            _other_sheet(name, header_of, out)
    expected = exported_parts(meta)
    exported = {t.strip() for t in meta.get("tables", "").split(",") if t.strip()}
    for table in TABLES:
        for stem, into in ((table, out.tables), (BASE_PREFIX + table, out.bases)):
            parts = found.get(stem, {})
            if parts:
                into[table] = _parts(table, stem, parts, expected.get(table, max(parts)), out)
            elif stem != table and table in exported and table in found:
                out.refuse(
                    stem,
                    f"missing: this hidden sheet holds the exported state of {table}; "
                    "export the workbook again",
                )
    return out


def _other_sheet(
    name: str, header_of: Callable[[str], Sequence[Any]] | None, out: SheetMap
) -> None:
    """A sheet that is no table's: refused when it looks like one, else ignored."""
    if (like := _table_named_like(name)) is not None:
        out.refuse(
            name,
            f"not read: a table sheet is named exactly {like!r}; rename it, or delete it "
            "for no change",
        )
    elif header_of is not None and (like := _table_by_header(header_of(name))) is not None:
        out.refuse(
            name,
            f"not read: it has the columns of the {like} table; name the sheet {like!r} "
            "(or delete it)",
        )
    else:
        out.ignored.append(name)


def _parts(table: str, stem: str, parts: Mapping[int, str], count: int, out: SheetMap) -> list[str]:
    """The sheets of one table (or of its exported state) in order; a sheet past ``count``
    or one missing before it is refused."""
    wanted = [part_name(stem, k) for k in range(1, count + 1)]
    for k, name in sorted(parts.items()):
        if k > count:
            out.refuse(name, f"unexpected: {table} was exported on {count} sheet(s)")
    for name in (w for w in wanted if w not in parts.values()):
        out.refuse(
            name,
            f"missing: {table} spans {count} sheets ({', '.join(wanted)}); "
            "restore it, or delete all of them for no change",
        )
    return [w for w in wanted if w in parts.values()]


def _table_by_header(header: Sequence[Any]) -> str | None:
    labels = {str(c).strip() for c in header if c is not None and str(c).strip()}
    for table in TABLES:
        needed = set(SHEETS[table].headers_required)
        if len(needed) > 1 and needed <= labels:
            return table
    return None


__all__ = ["OTHER_SHEETS", "SheetMap", "exported_parts", "map_sheets"]
