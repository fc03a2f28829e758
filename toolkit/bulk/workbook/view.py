"""How a read workbook shows itself: a frame of its tables, and HTML for a notebook.

>>> from pathlib import Path
>>> import pandas as pd
>>> from toolkit.bulk.workbook import WorkbookTables
>>> lists = pd.DataFrame({"campaign_id": [7], "list": ["subid_black"], "item": ["ab"]})
>>> tables = WorkbookTables({"lists": lists}, {}, {"campaigns"}, Path("a.xlsx"),
...                         sheets={"lists": ["lists"]})
>>> tables_frame(tables)[["table", "sheets", "rows", "status"]].to_dict("records")
[{'table': 'campaigns', 'sheets': '', 'rows': 0, 'status': 'no sheet: no change'}, \
{'table': 'lists', 'sheets': 'lists', 'rows': 1, 'status': 'read'}]
"""

from __future__ import annotations

from html import escape

import pandas as pd

from ...frames.account import TABLES
from ..faces import TablesLike as WorkbookTables


def tables_frame(tables: WorkbookTables) -> pd.DataFrame:
    """One row per table of the workbook: ``table``, ``sheets`` it was read from, ``rows``
    read, ``exported_rows`` (from the hidden state; NA without one) and ``status``."""
    rows = []
    for table in TABLES:
        if table not in tables.desired and table not in tables.missing:
            continue
        df = tables.desired.get(table)
        base = tables.base.get(table)
        rows.append(
            {
                "table": table,
                "sheets": ", ".join(tables.sheets.get(table, [table] if df is not None else [])),
                "rows": 0 if df is None else len(df),
                "exported_rows": pd.NA if base is None else len(base),
                "status": "read" if df is not None else "no sheet: no change",
            }
        )
    frame = pd.DataFrame(rows, columns=["table", "sheets", "rows", "exported_rows", "status"])
    return frame.astype({"rows": "int64", "exported_rows": "Int64"})


def tables_html(tables: WorkbookTables) -> str:
    """The notebook view of a read workbook: its file, export facts, a table per table and
    the sheets that were not read. Every value is escaped."""
    facts = [f"<b>{escape(tables.path.name)}</b>"]
    if tables.meta.get("exported_at"):
        facts.append(f"exported {escape(tables.meta['exported_at'])}")
    facts.append("with its exported state" if tables.has_base else "without exported state")
    facts.append("no problems")
    parts = [f"<p>{' &middot; '.join(facts)}</p>", tables_frame(tables).to_html(index=False)]
    if tables.ignored:
        names = ", ".join(escape(n) for n in tables.ignored)
        parts.append(f"<p>Sheets not read: {names}</p>")
    return "<div>" + "".join(parts) + "</div>"


__all__ = ["tables_frame", "tables_html"]
