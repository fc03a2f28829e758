"""A digest of each exported table, kept on the hidden ``_meta`` sheet of a workbook.

The export writes ``digests: campaigns=<hex>, lists=<hex>, ...``: the digest of each table's
exported rows (its shown columns, declared dtypes). On reading, a table sheet whose rows have
the digest of its export is unchanged, so its exported state is those rows and its hidden
``_base_`` sheets need not be parsed; the base sheets of a changed table are parsed and must
have the digest of the export, or the workbook is refused (the hidden state was edited).
A workbook exported without digests has every base sheet parsed, as before.

>>> import pandas as pd
>>> df = frame("lists", {"campaign_id": [7], "list": ["subid_black"], "item": ["a"]})
>>> table_digest(df) == table_digest(df.copy()), table_digest(df) == table_digest(df[:0])
(True, False)
>>> parse_digests("lists=ab12, campaigns=cd34")
{'lists': 'ab12', 'campaigns': 'cd34'}
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Mapping

import pandas as pd

from ...errors import WorkbookProblem
from ...frames.schemas import frame
from .layout import COLUMNS, SHEETS

#: The ``_meta`` key of the digests.
DIGESTS_KEY = "digests"


def table_digest(df: pd.DataFrame) -> str:
    """The digest of a table's rows: column names, dtypes and values, in order."""
    h = hashlib.sha256()
    h.update(repr([(str(c), str(df[c].dtype)) for c in df.columns]).encode())
    h.update(len(df).to_bytes(8, "little"))
    if len(df.columns) and len(df):
        h.update(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    return h.hexdigest()[:32]


def shown(table: str, df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the shown columns of ``table``, each of its declared dtype (what
    :func:`~toolkit.bulk.workbook.read_workbook` gives for the table)."""
    columns = list(COLUMNS[table])
    return frame(table, {c: df[c] for c in columns})[columns]


def export_digests(tables: Mapping[str, pd.DataFrame]) -> str:
    """The ``_meta`` value of the digests of the exported ``tables``."""
    return ", ".join(f"{t}={table_digest(shown(t, df))}" for t, df in tables.items())


def unchanged(table: str, df: pd.DataFrame, digests: Mapping[str, str]) -> pd.DataFrame | None:
    """The shown rows of a table sheet (read without a problem) when they have the digest
    of the export: they are then its exported state. None when they differ, or when the
    workbook has no digest of the table."""
    if table not in digests:
        return None
    with warnings.catch_warnings():  # codes not yet in their declared spelling: a change
        warnings.simplefilter("ignore", UserWarning)
        rows = shown(table, df)
    return rows if table_digest(rows) == digests[table] else None


def edited(
    table: str, sheet: str, base: pd.DataFrame, digests: Mapping[str, str]
) -> list[WorkbookProblem]:
    """The problem of a hidden ``_base_`` sheet whose rows ``base`` are not those exported
    (none without a digest of the table)."""
    if table not in digests or table_digest(base) == digests[table]:
        return []
    message = (
        f"edited: this hidden sheet holds the exported state of {table}, and its rows are no "
        "longer those exported; export the workbook again"
    )
    return [WorkbookProblem(sheet, None, None, None, message)]


def parse_digests(text: str) -> dict[str, str]:
    """``table -> digest`` from the ``_meta`` value (tables unknown here are left out)."""
    out = {}
    for entry in text.split(","):
        name, _, value = entry.strip().partition("=")
        if name in SHEETS and value.strip():
            out[name] = value.strip()
    return out


__all__ = [
    "DIGESTS_KEY",
    "edited",
    "export_digests",
    "parse_digests",
    "shown",
    "table_digest",
    "unchanged",
]
