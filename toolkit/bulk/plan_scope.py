"""The planner's scope step: what the desired tables cover, found locally before any read.

:func:`scope_of` takes what was given (a read workbook, an Account, a dict of tables), its
base, and answers a :class:`Scope`: the tables in play (targets normalised), the rows of them
to plan, and the campaigns whose live state the plan needs; :meth:`Scope.live_tables` cuts a
live read to them. The diff step (:mod:`toolkit.bulk.plan_diff`) takes it from there.

When the state a workbook was exported from (the base) is known, the three-way diff makes
nothing of a key whose desired value equals its base, whatever live says: a campaign whose
rows are the same in every edited table as at export cannot give a call, a conflict or a
warning. :func:`narrow` compares the edited tables with their base (vectorised,
:func:`~toolkit.bulk.changed_rows.changed_rows`) and keeps only the rows that may differ;
the planner then reads live state for the campaigns of those rows alone, so the cost of a
plan follows the edit, not the size of the workbook.

>>> import pandas as pd
>>> base = {"countries": pd.DataFrame(
...     {"campaign_id": [1, 2], "country": ["US", "FR"], "bid": [0.4, 0.2]})}
>>> desired = {"countries": base["countries"].assign(bid=[0.5, 0.2])}
>>> sorted(narrow(desired, base).campaigns)
[1]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import spec
from ..frames.account import CAMPAIGN_COLUMN
from .call_kinds import ITEM_TABLES
from .changed_rows import changed_rows, coded_changed_rows
from .key_codes import TableCodes
from .record_fields import RECORD_TABLES, record_fields

if TYPE_CHECKING:  # pragma: no cover
    from ..frames import Account

Tables = dict[str, pd.DataFrame]
Rows = tuple[np.ndarray, np.ndarray]  # marks of the rows of desired and of base

#: The live tables a plan is made against.
LIVE_TABLES: tuple[str, ...] = ("campaigns", *ITEM_TABLES, "cpa_rules", "creatives")


@dataclass
class Scope:
    """What a plan covers: the desired ``tables`` and their ``base`` (None: not known), cut
    to the rows that may differ when ``narrowed``; the ``campaigns`` whose live state the
    plan needs (with a base and narrowed: those the edit touches; else every campaign of
    the tables). ``codes``: per item table, the key codes of its rows the scope compared
    (the diff step reuses them)."""

    tables: Tables
    base: Tables | None
    campaigns: set[int]
    narrowed: bool
    codes: dict[str, TableCodes] = field(default_factory=dict)

    def live_tables(self, live: Account) -> Tables:
        """The live tables of ``live`` (only the scope's campaigns when narrowed), targets
        normalised as the desired ones are."""
        tables = {name: live.table(name) for name in LIVE_TABLES}
        if self.narrowed:
            tables = {
                name: only(df, self.campaigns, CAMPAIGN_COLUMN[name]) for name, df in tables.items()
            }
        tables["targets"] = normalise_targets(tables["targets"])
        return tables


def scope_of(
    desired: Any, base: Mapping[str, pd.DataFrame] | None = None, *, narrow_reads: bool = True
) -> Scope:
    """The scope of a plan to ``desired`` (a read workbook, whose exported state is then the
    base, an Account, or a dict of tables), three-way against ``base`` when known: narrowed
    to the rows the edit may change (:func:`narrow`) unless ``narrow_reads`` is False or it
    cannot be narrowed exactly."""
    tables, base = _inputs(desired, base)
    narrowed = narrow(tables, base) if base is not None and narrow_reads else None
    if narrowed is not None:
        return Scope(narrowed.tables, narrowed.base, narrowed.campaigns, True, narrowed.codes)
    return Scope(tables, base, campaigns_of(tables, base), False)


def _inputs(desired: Any, base: Mapping[str, pd.DataFrame] | None) -> tuple[Tables, Tables | None]:
    """The desired tables and their base (given, or the workbook's), targets normalised."""
    tables, workbook_base = _tables_of(desired)
    base = dict(base) if base is not None else workbook_base
    if "targets" in tables:
        tables["targets"] = normalise_targets(tables["targets"])
    if base is not None and "targets" in base:
        base = {**base, "targets": normalise_targets(base["targets"])}
    return tables, base


def _tables_of(source: Any) -> tuple[Tables, Tables | None]:
    """Desired tables (and the base they were exported from, if known) from what was given."""
    desired = getattr(source, "desired", None)
    if desired is not None:  # a read workbook
        base = getattr(source, "base", None) or None
        return dict(desired), (dict(base) if base else None)
    if hasattr(source, "tables"):  # an Account
        tables = source.tables
        return dict(tables() if callable(tables) else tables), None
    if isinstance(source, Mapping):
        return dict(source), None
    raise TypeError("desired must be a read workbook, an Account or a dict of DataFrames")


def normalise_targets(df: pd.DataFrame | None) -> pd.DataFrame | None:
    """Typed kinds without a list type are black lists; other kinds carry none."""
    if df is None or df.empty:
        return df
    out = df.copy()
    kinds = out["kind"].astype(str).str.replace("_", "-")
    typed = kinds.map(lambda k: spec.TARGET_KINDS[k].typed if k in spec.TARGET_KINDS else False)
    list_type = out["list_type"].astype(object).where(out["list_type"].notna(), None)
    list_type = [
        ("black" if lt is None else lt) if t else None
        for lt, t in zip(list_type, typed, strict=True)
    ]
    out["kind"] = kinds
    out["list_type"] = pd.Series(list_type, index=out.index, dtype=object)
    out["value"] = out["value"].astype(str).str.strip()
    return out


def campaigns_of(
    tables: Mapping[str, pd.DataFrame], base: Mapping[str, pd.DataFrame] | None
) -> set[int]:
    """Every campaign the tables and their base name (the scope of a plan not narrowed)."""
    ids: set[int] = set()
    for source in (tables, base or {}):
        for name, df in source.items():
            if df is None or df.empty:
                continue
            if (column := CAMPAIGN_COLUMN.get(name, "campaign_id")) in df:
                ids.update(int(v) for v in df[column].dropna())
    return ids


@dataclass
class Narrowed:
    """The edited tables and their base, cut down to the rows that may differ, and the
    campaigns those rows belong to (the campaigns the edit touches); the key codes of the
    rows of the item tables kept, when all were coded."""

    tables: dict[str, pd.DataFrame]
    base: dict[str, pd.DataFrame]
    campaigns: set[int]
    codes: dict[str, TableCodes] = field(default_factory=dict)


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
    kept: dict[str, Rows] = {}
    codes: dict[str, np.ndarray] = {}
    for name in (*ITEM_TABLES, *RECORD_TABLES):
        df = tables.get(name)
        if df is None:
            continue
        found = _item_rows(name, df, base) if name in ITEM_TABLES else _record_rows(name, df, base)
        if found is None:
            return None
        touched |= found[0]
        kept[name] = found[1]
        if len(found) > 2 and found[2] is not None:
            codes[name] = found[2]
    return _cut(tables, base, kept, touched, codes)


def _item_rows(
    name: str, df: pd.DataFrame, base: Mapping[str, pd.DataFrame]
) -> tuple[set[int], Rows, np.ndarray | None] | None:
    """The campaigns of the rows of an item table that may differ, those rows, and the key
    codes of the rows compared (:func:`~toolkit.bulk.changed_rows.coded_changed_rows`)."""
    key, value = ITEM_TABLES[name]
    b = base.get(name)
    b = df.iloc[:0] if b is None else b
    if not _has(df, b, key) or not _numeric(df, b, "campaign_id"):
        return None
    *marks, codes = coded_changed_rows(df, b, key, (value,) if value else (), group="campaign_id")
    ids = _campaigns(df, b, (marks[0], marks[1]), "campaign_id")
    return None if ids is None else (ids, (marks[0], marks[1]), codes)


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
    codes: Mapping[str, np.ndarray],
) -> Narrowed:
    """The tables and their base cut down to the kept rows; item tables keep every row of a
    touched campaign (the planner sees it whole), with their key ``codes`` when coded."""
    desired = {name: df for name, df in tables.items() if name not in kept}
    cut = {}
    out_codes = {}
    for name, (d_rows, b_rows) in kept.items():
        df, b = tables[name], base.get(name)
        assert df is not None
        if name in ITEM_TABLES:
            d_rows = df["campaign_id"].isin(touched).to_numpy()
            b_rows = None if b is None else b["campaign_id"].isin(touched).to_numpy()
        desired[name] = _rows_of(df, d_rows)
        if b is not None and b_rows is not None:
            cut[name] = _rows_of(b, b_rows)
            if name in codes and (found := _kept_codes(codes[name], d_rows, b_rows)) is not None:
                out_codes[name] = TableCodes(desired[name], cut[name], found)
    return Narrowed(desired, cut, touched, out_codes)


def _kept_codes(codes: np.ndarray, d_rows: np.ndarray, b_rows: np.ndarray) -> np.ndarray | None:
    """The codes of the rows kept (desired then base); None when one of them was not coded."""
    kept = codes[np.r_[d_rows, b_rows]]
    return None if (kept < 0).any() else kept


def only(df: pd.DataFrame | None, campaigns: set[int], column: str) -> pd.DataFrame | None:
    """The rows of ``df`` whose ``column`` is one of ``campaigns``."""
    if df is None or df.empty or column not in df.columns:
        return df
    return _rows_of(df, df[column].isin(campaigns).to_numpy())


def _rows_of(df: pd.DataFrame, rows: np.ndarray) -> pd.DataFrame:
    """The rows ``rows`` (a mask) of ``df``: ``df`` itself when all (no copy)."""
    return df if rows.all() else df[rows]


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


__all__ = [
    "ITEM_TABLES",
    "LIVE_TABLES",
    "RECORD_TABLES",
    "Narrowed",
    "Scope",
    "campaigns_of",
    "narrow",
    "normalise_targets",
    "only",
    "scope_of",
]
