"""The planner's diff step: what changes, table by table, between the desired tables (cut to
their scope, :mod:`toolkit.bulk.plan_scope`), their base and live.

Item tables are diffed three ways by key (:func:`toolkit.bulk.diff.table_changes`, over
whole columns above :data:`~toolkit.bulk.diff.FRAME_DIFF_ROWS` rows); record tables
(campaigns, CPA rules, creatives) record by record, field by field. The answer, a
:class:`~toolkit.bulk.diff_types.PlanDiff`, is what the build step
(:mod:`toolkit.bulk.plan_build`) turns into calls; nothing here makes a call.

>>> import pandas as pd
>>> rows = pd.DataFrame({"campaign_id": [1], "country": ["US"], "bid": [0.5]})
>>> live = {"countries": rows.assign(bid=[0.4])}
>>> diff_tables({"countries": rows}, None, live).tables[0].moves
[((1, 'US'), 0.4, 0.5)]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pandas as pd

from .. import spec
from .call_kinds import ITEM_TABLES
from .diff import table_changes, three_way, valued
from .diff_types import Change, Conflict, PlanDiff, TableDiff, same
from .key_codes import TableCodes
from .record_fields import CREATIVE_FIELDS, record_fields

Tables = Mapping[str, pd.DataFrame]


def diff_tables(
    tables: Mapping[str, pd.DataFrame | None],
    base: Tables | None,
    live: Tables,
    prefer: str | None = None,
    codes: Mapping[str, TableCodes] | None = None,
) -> PlanDiff:
    """Every table of ``tables`` diffed against its ``base`` (None: no base, desired against
    live) and ``live``: the item tables, then campaigns, CPA rules and creatives. ``prefer``
    settles conflicts (``desired``, ``live``; None: left out, listed). ``codes``: the key
    codes the scope step found, per item table (reused, not found again)."""
    found = PlanDiff()
    for name, columns in ITEM_TABLES.items():
        if (desired := tables.get(name)) is not None:
            known = (codes or {}).get(name)
            diff = _item_diff(name, desired, base, live[name], columns, prefer, known)
            found.tables.append(diff)
    for name, records in _RECORD_DIFFS.items():
        if (desired := tables.get(name)) is not None:
            found.tables.append(records(desired, (base or {}).get(name), live[name], prefer))
    return found


def _item_diff(
    name: str,
    desired: pd.DataFrame,
    base: Tables | None,
    live: pd.DataFrame,
    columns: tuple[tuple[str, ...], str | None],
    prefer: str | None,
    known: TableCodes | None = None,
) -> TableDiff:
    """An item table diffed three ways by key (a base without the table: one without rows);
    ``columns``: its key columns and value column."""
    key, value = columns
    b = None if base is None else base.get(name)
    b = desired.iloc[:0] if base is not None and b is None else b
    desired = valued(name, desired, key, value)  # no row without its bid
    moves, conflicts = table_changes(desired, b, live, key, value, prefer, known)
    return TableDiff(name, moves=moves, conflicts=conflicts)


def _campaign_diff(
    desired: pd.DataFrame, base: pd.DataFrame | None, live: pd.DataFrame, prefer: str | None
) -> TableDiff:
    """The campaigns' settings and work status; a campaign not in live is skipped, warned."""
    out = TableDiff("campaigns")
    watched = record_fields("campaigns", desired.columns)
    b_rows = rows_by_id(base) if base is not None else None
    l_rows = rows_by_id(live)
    for cid, d in rows_by_id(desired).items():
        if unedited(d, b_rows, cid, watched):
            continue
        if cid not in l_rows:
            out.warnings.append(f"campaigns: campaign {cid} is not in the live account; skipped")
            continue
        found = field_changes(cid, d, b_rows, l_rows[cid], watched, prefer, out.conflicts)
        out.edit(cid, l_rows[cid], found)
    return out


def _cpa_diff(
    desired: pd.DataFrame, base: pd.DataFrame | None, live: pd.DataFrame, prefer: str | None
) -> TableDiff:
    """CPA rules: those without an id are new; those with one are diffed field by field (a
    rule not in live is skipped, warned); those of the base (or, without one, of live) not
    in ``desired`` are gone."""
    out = TableDiff("cpa_rules", added=desired[desired["id"].isna()], live=live)
    fields = list(spec.CPA_FIELDS)
    d_rows = rows_by_id(desired[desired["id"].notna()])
    b_rows = rows_by_id(base) if base is not None else None
    l_rows = rows_by_id(live)
    for rid, d in d_rows.items():
        if unedited(d, b_rows, rid, fields):
            continue
        if rid not in l_rows:
            out.warnings.append(f"cpa_rules: rule {rid} is not in the live account; skipped")
            continue
        out.edit(
            rid,
            l_rows[rid],
            field_changes(rid, d, b_rows, l_rows[rid], fields, prefer, out.conflicts),
        )
    gone = (set(b_rows) if b_rows is not None else set(l_rows)) - set(d_rows)
    out.dropped = [(rid, l_rows[rid]) for rid in sorted(gone) if rid in l_rows]
    return out


def _creative_diff(
    desired: pd.DataFrame, base: pd.DataFrame | None, live: pd.DataFrame, prefer: str | None
) -> TableDiff:
    """Creatives field by field (work status and content); one not in live is left out."""
    out = TableDiff("creatives")
    d_rows, l_rows = rows_by_id(desired), rows_by_id(live)
    b_rows = rows_by_id(base) if base is not None else None
    for crid, d in d_rows.items():
        if crid in l_rows:
            found = field_changes(
                crid, d, b_rows, l_rows[crid], CREATIVE_FIELDS, prefer, out.conflicts
            )
            out.edit(crid, l_rows[crid], found)
    return out


_RECORD_DIFFS: dict[
    str, Callable[[pd.DataFrame, pd.DataFrame | None, pd.DataFrame, str | None], TableDiff]
] = {"campaigns": _campaign_diff, "cpa_rules": _cpa_diff, "creatives": _creative_diff}


def unedited(
    desired: Mapping[str, Any],
    base_rows: Mapping[int, Mapping[str, Any]] | None,
    rid: int,
    columns: Iterable[str],
) -> bool:
    """Whether a record equals its exported state on every field of ``columns``: then the
    three-way diff finds no change and no conflict in it, whatever live says, so the record
    is not looked up in live at all (no "not in the live account" for a row nobody edited).
    Without a base, every record counts as edited."""
    if base_rows is None:
        return False
    base = base_rows.get(rid) or {}
    return all(same(desired.get(c), base.get(c)) for c in columns if c in desired)


def field_changes(
    rid: int,
    desired: Mapping[str, Any],
    base_rows: Mapping[int, Mapping[str, Any]] | None,
    live: Mapping[str, Any],
    columns: Iterable[str],
    prefer: str | None,
    conflicts: list[Conflict],
) -> dict[str, Change]:
    """Three-way changes of one record's fields (those ``desired`` has); conflicts are
    appended to ``conflicts`` keyed ``(id, column)``."""
    base = None if base_rows is None else base_rows.get(rid)
    out: dict[str, Change] = {}
    for col in columns:
        if col not in desired:
            continue
        changes, found = three_way(
            {(rid,): desired.get(col)},
            None if base_rows is None else {(rid,): None if base is None else base.get(col)},
            {(rid,): live.get(col)},
            prefer,
        )
        conflicts += [Conflict((rid, col), c.base, c.live, c.desired) for c in found]
        for ch in changes:
            out[col] = ch
    return out


def rows_by_id(df: pd.DataFrame | None) -> dict[int, dict[str, Any]]:
    """The rows of a record table as dicts (missing values None), by id (rows without one
    left out)."""
    if df is None or df.empty:
        return {}
    records = df.astype(object).where(df.notna(), None).to_dict("records")
    return {int(r["id"]): r for r in records if r.get("id") is not None}


__all__ = ["diff_tables", "field_changes", "rows_by_id", "unedited"]
