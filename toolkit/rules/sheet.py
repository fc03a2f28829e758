"""Rules in a workbook, for those who keep their rules in Excel: a ``rules`` sheet with one
rule per row and the fields as columns (``name``, ``level``, ``when``, ``action``,
``window``, ``cooldown``, ``limit``, ``bid``, ``factor``, ``payout``, ``rank``, ``of``,
``enabled``, and the scope as ``campaigns`` and ``formats``: ids or codes separated by
commas). Empty cells are
fields left out; rows without any value are skipped; other sheets are never read. Text that
starts like a formula is written with a ``'`` in front (a rule named ``@SUM(1+1)`` is the
text ``'@SUM(1+1)``), and a text cell's one leading ``'`` is dropped when read
(:mod:`toolkit.frames.cells`).

>>> rules = toolkit.load_rules("rules.xlsx")                           # doctest: +SKIP
>>> write_rules_sheet([r.to_dict() for r in rules], "copy.xlsx")       # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..frames.cells import excel_text, read_text
from .fields import FIELDS

#: The sheet read.
SHEET = "rules"
_SCOPE = ("campaigns", "formats")
#: Its columns, in the order written: a rule's fields, the scope split in two.
COLUMNS: tuple[str, ...] = (*(f for f in FIELDS if f != "scope"), *_SCOPE)


def read_rules_sheet(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{"rules": [one dict per row]}`` from the ``rules`` sheet (or the first sheet); a
    ``campaigns``/``formats`` cell becomes the rule's ``scope``. Raises ``ValueError`` for a
    file that is not a workbook (:class:`~toolkit.errors.WorkbookError` for one that fails
    the checks of :mod:`toolkit.xlsx.guard`, before the sheet is parsed)."""
    from openpyxl import load_workbook

    from ..xlsx.archive import check_file
    from ..xlsx.guard import SheetGuard

    check_file(path)  # a zip bomb, a part stored twice: WorkbookError before it is opened
    book = load_workbook(path, read_only=True, data_only=True)
    try:
        names = {n.strip().lower(): n for n in book.sheetnames}
        sheet = book[names.get(SHEET, book.sheetnames[0])]
        SheetGuard(path).check(sheet.title)  # references, order, shared strings
        rows = [[read_text(v) for v in r] for r in sheet.iter_rows(values_only=True)]
    finally:
        book.close()
    if not rows:
        return {"rules": []}
    header = [str(h).strip().lower() if h is not None else "" for h in rows[0]]
    return {"rules": [_rule(header, r) for r in rows[1:] if any(_filled(v) for v in r)]}


def _filled(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _rule(header: list[str], row: Sequence[Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {}
    scope: dict[str, Any] = {}
    for column, value in zip(header, row, strict=False):
        if not column or not _filled(value):
            continue
        value = value.strip() if isinstance(value, str) else value
        if column in _SCOPE:
            scope[column] = [v.strip() for v in str(value).split(",") if v.strip()]
        elif column == "enabled" and isinstance(value, str):
            entry[column] = {"true": True, "yes": True, "false": False, "no": False}.get(
                value.lower(), value
            )
        else:
            entry[column] = value
    if scope:
        entry["scope"] = scope
    return entry


def write_rules_sheet(rules: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write rules (dicts as :meth:`Rule.to_dict` gives them) as a ``rules`` sheet."""
    from openpyxl import Workbook
    from openpyxl.styles import Font

    book = Workbook()
    sheet = book.active
    sheet.title = SHEET
    sheet.append(list(COLUMNS))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    for rule in rules:
        scope = rule.get("scope") or {}
        values = {**rule, **{k: ", ".join(map(str, scope[k])) for k in _SCOPE if k in scope}}
        sheet.append([excel_text(values.get(c)) for c in COLUMNS])
    for letter, width in zip("ABCD", (24, 10, 44, 10), strict=True):
        sheet.column_dimensions[letter].width = width
    sheet.freeze_panes = "A2"
    path = Path(path)
    book.save(path)
    return path


__all__ = ["COLUMNS", "SHEET", "read_rules_sheet", "write_rules_sheet"]
