"""The hidden sheets of an account workbook that hold no table: ``_meta`` (facts about the
export: ``exported_at``, ``source``, the digests of the tables, ...) and ``_refs`` (the
account's dictionaries, as exported).

>>> with Book("account.xlsx") as book:                                 # doctest: +SKIP
...     read_meta(book)["sheets"]
'campaigns=1, countries=1, ...'
"""

from __future__ import annotations

import pandas as pd

from ...frames.schemas import REF_SCHEMAS, SCHEMAS, frame
from .cells import Book, columns_of, is_empty, to_column
from .layout import META_SHEET, REFS_COLUMNS, REFS_SHEET


def read_meta(book: Book) -> dict[str, str]:
    """The ``_meta`` sheet as ``key -> value`` (empty when the workbook has none)."""
    if META_SHEET not in book.names:
        return {}
    out = {}
    for row in book.rows(META_SHEET)[1:]:
        if len(row) >= 2 and not is_empty(row[0]):
            out[str(row[0])] = "" if is_empty(row[1]) else str(row[1])
    return out


def read_refs(book: Book) -> dict[str, pd.DataFrame]:
    """The ``_refs`` sheet as one frame per kind of dictionary (empty without one)."""
    rows = book.rows(REFS_SHEET) if REFS_SHEET in book.names else []
    if not rows:
        return {}
    header = [str(h) for h in rows[0]]
    cells = columns_of(rows[1:], len(header))
    table = {h: cells[i] for i, h in enumerate(header) if h in REFS_COLUMNS}
    if "type" not in table:
        return {}
    kinds = table["type"]
    out = {}
    for kind, schema_name in REF_SCHEMAS.items():
        picked = [i for i, k in enumerate(kinds) if k == kind]
        if not picked:
            continue
        columns = {}
        for col, dtype in SCHEMAS[schema_name].items():
            values = [table[col][i] for i in picked] if col in table else [None] * len(picked)
            columns[col], _ = to_column(values, dtype)
        out[kind] = frame(schema_name, columns)
    return out


__all__ = ["read_meta", "read_refs"]
