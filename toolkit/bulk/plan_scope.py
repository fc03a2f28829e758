"""The scope of a plan: which campaigns an edit touches, found locally before any read.

When the state a workbook was exported from (the base) is known, the three-way diff makes
nothing of a key whose desired value equals its base, whatever live says: a campaign whose
rows are the same in every edited table as at export cannot give a call, a conflict or a
warning. :func:`narrow` compares the edited tables with their base (vectorised,
:func:`~toolkit.bulk.diff.changed_rows`) and keeps only the rows that may differ; the planner
then reads live state for the campaigns of those rows alone, so the cost of a plan follows
the edit, not the size of the workbook.

>>> import pandas as pd
>>> base = {"countries": pd.DataFrame(
...     {"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.4, 0.2]})}
>>> desired = {"countries": base["countries"].assign(bid=[0.5, 0.2])}
>>> sorted(narrow(desired, base).campaigns)
[1]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..frames.account import CAMPAIGN_COLUMN
from .call_kinds import ITEM_TABLES
from .diff import changed_rows
from .plan_records import record_fields

# Record tables diffed field by field: the column naming the record's campaign.
RECORD_TABLES: dict[str, str] = {
    name: CAMPAIGN_COLUMN[name] for name in ("campaigns", "cpa_rules", "creatives")
}


@dataclass
class Narrowed:
    """The edited tables and their base, cut down to the rows that may differ, and the
    campaigns those rows belong to (the campaigns the edit touches)."""

    tables: dict[str, pd.DataFrame]
    base: dict[str, pd.DataFrame]
    campaigns: set[int]


def narrow(
    tables: Mapping[str, pd.DataFrame | None], base: Mapping[str, pd.DataFrame]
) -> Narrowed | None:
    """The campaigns an edit touches, and the rows to plan, from the edited ``tables`` and
    their ``base`` alone (no request).

    ``None`` when the edit cannot be narrowed exactly, and the planner reads every campaign
    of the tables as without a base: a record table (campaigns, CPA rules, creatives) given
    without its base (it is then compared with live), a table without its key columns, a
    row that may differ with no campaign id, or campaign ids that are not numbers.
    """
    touched: set[int] = set()
    kept: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name in (*ITEM_TABLES, *RECORD_TABLES):
        df = tables.get(name)
        if df is None:
            continue
        found = _item_rows(name, df, base) if name in ITEM_TABLES else _record_rows(name, df, base)
        if found is None:
            return None
        touched |= found[0]
        kept[name] = found[1]
    return _cut(tables, base, kept, touched)


Rows = tuple[np.ndarray, np.ndarray]


def _item_rows(
    name: str, df: pd.DataFrame, base: Mapping[str, pd.DataFrame]
) -> tuple[set[int], Rows] | None:
    """The campaigns of the rows of an item table that may differ, and those rows."""
    key, value = ITEM_TABLES[name]
    b = base.get(name)
    b = df.iloc[:0] if b is None else b
    if not _has(df, b, key) or not _numeric(df, b, "campaign_id"):
        return None
    marks = changed_rows(df, b, key, (value,) if value else (), group="campaign_id")
    ids = _campaigns(df, b, marks, "campaign_id")
    return None if ids is None else (ids, marks)


def _record_rows(
    name: str, df: pd.DataFrame, base: Mapping[str, pd.DataFrame]
) -> tuple[set[int], Rows] | None:
    """The campaigns of the records that may differ (new records too), and their rows."""
    column = RECORD_TABLES[name]
    b = base.get(name)
    if b is None or not _has(df, b, ("id", column)) or not _numeric(df, b, column):
        return None
    fields = [*record_fields(name, df.columns), *([column] if column != "id" else [])]
    marks = changed_rows(df, b, ("id",), fields)
    ids = pd.concat([df["id"][marks[0]], b["id"][marks[1]]]).dropna().unique()
    rows = (
        (df["id"].isin(ids) | df["id"].isna()).to_numpy(),
        b["id"].isin(ids).to_numpy(),
    )
    found = _campaigns(df, b, rows, column, skip_missing=name == "campaigns")
    return None if found is None else (found, rows)


def _cut(
    tables: Mapping[str, pd.DataFrame | None],
    base: Mapping[str, pd.DataFrame],
    kept: dict[str, Rows],
    touched: set[int],
) -> Narrowed:
    """The tables and their base cut down to the kept rows; item tables keep every row of a
    touched campaign (the planner sees it whole)."""
    desired = {name: df for name, df in tables.items() if name not in kept}
    cut = {}
    for name, (d_rows, b_rows) in kept.items():
        df, b = tables[name], base.get(name)
        assert df is not None
        if name in ITEM_TABLES:
            d_rows = df["campaign_id"].isin(touched).to_numpy()
            b_rows = None if b is None else b["campaign_id"].isin(touched).to_numpy()
        desired[name] = df[d_rows]
        if b is not None and b_rows is not None:
            cut[name] = b[b_rows]
    return Narrowed(desired, cut, touched)


def only(df: pd.DataFrame | None, campaigns: set[int], column: str) -> pd.DataFrame | None:
    """The rows of ``df`` whose ``column`` is one of ``campaigns``."""
    if df is None or df.empty or column not in df.columns:
        return df
    return df[df[column].isin(campaigns).to_numpy()]


def _has(df: pd.DataFrame, base: pd.DataFrame, columns: tuple[str, ...]) -> bool:
    return all(c in df.columns and c in base.columns for c in columns)


def _numeric(df: pd.DataFrame, base: pd.DataFrame, column: str) -> bool:
    return all(len(t) == 0 or pd.api.types.is_numeric_dtype(t[column].dtype) for t in (df, base))


def _campaigns(
    df: pd.DataFrame,
    base: pd.DataFrame,
    marks: tuple[np.ndarray, np.ndarray],
    column: str,
    *,
    skip_missing: bool = False,
) -> set[int] | None:
    """The campaigns of the marked rows; None when one has no campaign id (unless
    ``skip_missing``: a campaign row without an id, which the planner skips)."""
    values = pd.concat([df[column][marks[0]], base[column][marks[1]]])
    if values.isna().any() and not skip_missing:
        return None
    return {int(v) for v in values.dropna().unique()}


__all__ = ["ITEM_TABLES", "RECORD_TABLES", "Narrowed", "narrow", "only"]
