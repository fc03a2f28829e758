"""Planning the record tables: campaign settings and work status, CPA rules, creatives.

Each record (a campaign, a rule, a creative) is diffed field by field, three ways
(:func:`field_changes`); :class:`RecordPlanner` turns the changes into calls.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from .. import spec
from .calls import CAMPAIGN, CPA_RULE, CREATIVE, SETTING_COLUMNS, WORK_MOVES, Call
from .diff import Change, Conflict, same, three_way

#: The fields of a creative the planner compares (work status moves; the rest is reported).
CREATIVE_FIELDS: tuple[str, ...] = ("work_status", "title", "text", "url")


def record_fields(table: str, columns: Iterable[str]) -> list[str]:
    """The fields of a record table that the planner compares, of those ``columns`` has:
    campaign settings and work status, a CPA rule's fields, a creative's fields."""
    present = set(columns)
    if table == "campaigns":
        wanted: Iterable[str] = (*SETTING_COLUMNS, "work_status")
    elif table == "cpa_rules":
        wanted = spec.CPA_FIELDS
    else:
        wanted = CREATIVE_FIELDS
    return [c for c in wanted if c in present]


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


class RecordPlanner:
    """The calls for edited campaigns, CPA rules and creatives (mixed into the planner,
    which holds ``calls`` and ``warnings``)."""

    calls: list[Call]
    warnings: list[str]

    # ------------------------------------------------------------------ campaigns

    def campaigns(
        self,
        desired: pd.DataFrame,
        base: pd.DataFrame | None,
        live: pd.DataFrame,
        prefer: str | None,
    ) -> list[tuple[str, Conflict]]:
        conflicts: list[tuple[str, Conflict]] = []
        watched = record_fields("campaigns", desired.columns)
        d_rows = rows_by_id(desired)
        b_rows = rows_by_id(base) if base is not None else None
        l_rows = rows_by_id(live)
        moves: dict[str, dict[int, str]] = defaultdict(dict)  # move -> campaign -> old
        for cid, d in d_rows.items():
            if unedited(d, b_rows, cid, watched):
                continue
            if cid not in l_rows:
                self.warnings.append(
                    f"campaigns: campaign {cid} is not in the live account; skipped"
                )
                continue
            l_ = l_rows[cid]
            settings, previous = {}, {}
            found = field_changes("campaigns", cid, d, b_rows, l_, watched, prefer, conflicts)
            for col, ch in found.items():
                if col == "work_status":
                    if ch.new in WORK_MOVES:
                        moves[WORK_MOVES[ch.new]][cid] = str(ch.old)
                else:
                    settings[col] = ch.new
                    previous[col] = ch.old
            if settings:
                params = {
                    "name": settings.get("name", l_.get("name")),
                    "vertical": l_.get("vertical"),
                    **settings,
                }
                self.calls.append(
                    Call(
                        "update",
                        "update",
                        CAMPAIGN,
                        (cid,),
                        params=params,
                        previous={"name": l_.get("name"), **previous},
                    )
                )
        for move, old in sorted(moves.items()):
            self.calls.append(Call(move, move, CAMPAIGN, tuple(sorted(old)), previous=old))
        return conflicts

    # ------------------------------------------------------------------ CPA rules

    def _cpa_adds(self, desired: pd.DataFrame, live: pd.DataFrame) -> None:
        """One add call per campaign of the rules without an id; its ``previous`` holds the
        ids live before, so that undo can find and drop the rules the add created."""
        new = desired[desired["id"].isna()]
        for cid, group in new.groupby(new["campaign_id"].astype(int)):
            rules = [{f: plain(r[f]) for f in spec.CPA_FIELDS} for _, r in group.iterrows()]
            before = sorted(int(i) for i in live.loc[live["campaign_id"] == cid, "id"].dropna())
            self.calls.append(
                Call(
                    "rules",
                    "add",
                    CPA_RULE,
                    (int(cid),),
                    params={"rules": rules},
                    previous={"rules": rules, "before": before},
                )
            )

    def cpa_rules(
        self,
        desired: pd.DataFrame,
        base: pd.DataFrame | None,
        live: pd.DataFrame,
        prefer: str | None,
    ) -> list[tuple[str, Conflict]]:
        conflicts: list[tuple[str, Conflict]] = []
        fields = list(spec.CPA_FIELDS)
        self._cpa_adds(desired, live)
        known = desired[desired["id"].notna()]
        d_rows = rows_by_id(known)
        b_rows = rows_by_id(base) if base is not None else None
        l_rows = rows_by_id(live)
        for rid, d in d_rows.items():
            if unedited(d, b_rows, rid, fields):
                continue
            if rid not in l_rows:
                self.warnings.append(f"cpa_rules: rule {rid} is not in the live account; skipped")
                continue
            l_ = l_rows[rid]
            found = field_changes("cpa_rules", rid, d, b_rows, l_, fields, prefer, conflicts)
            change = {f: ch.new for f, ch in found.items()}
            previous = {f: ch.old for f, ch in found.items()}
            if change:
                self.calls.append(
                    Call(
                        "rules",
                        "edit",
                        CPA_RULE,
                        (int(l_["campaign_id"]),),
                        params={"rules": [{"id": rid, **change}]},
                        previous={"rules": [{"id": rid, **previous}]},
                    )
                )
        gone = (set(b_rows) if b_rows is not None else set(l_rows)) - set(d_rows)
        by_campaign: dict[int, list[int]] = defaultdict(list)
        for rid in sorted(gone):
            if rid in l_rows:
                by_campaign[int(l_rows[rid]["campaign_id"])].append(rid)
        for cid, rids in by_campaign.items():
            # with their ids: undo re-adds only the rules that are really gone
            dropped = [{"id": r} | {f: l_rows[r][f] for f in fields} for r in rids]
            self.calls.append(
                Call(
                    "rules",
                    "drop",
                    CPA_RULE,
                    (cid,),
                    items=tuple(rids),
                    previous={"rules": dropped},
                )
            )
        return conflicts

    # ------------------------------------------------------------------ creatives

    def creatives(
        self,
        desired: pd.DataFrame,
        base: pd.DataFrame | None,
        live: pd.DataFrame,
        prefer: str | None,
    ) -> list[tuple[str, Conflict]]:
        """Work status moves of creatives; content edits are reported, not planned: the
        service's update needs the creative's name, which no read operation returns."""
        conflicts: list[tuple[str, Conflict]] = []
        d_rows, l_rows = rows_by_id(desired), rows_by_id(live)
        b_rows = rows_by_id(base) if base is not None else None
        for crid, d in d_rows.items():
            if crid not in l_rows:
                continue
            l_ = l_rows[crid]
            found = field_changes(
                "creatives", crid, d, b_rows, l_, CREATIVE_FIELDS, prefer, conflicts
            )
            for col, ch in found.items():
                if col != "work_status":
                    self.warnings.append(
                        f"creatives: creative {crid} {col} edit not applied (the update "
                        "operation needs the creative's name, which no read returns)"
                    )
                elif ch.new in WORK_MOVES:
                    move = WORK_MOVES[ch.new]
                    self.calls.append(
                        Call(
                            move,
                            move,
                            CREATIVE,
                            (int(l_["campaign_id"]),),
                            items=(crid,),
                            previous={crid: ch.old},
                        )
                    )
        return conflicts


def field_changes(
    table: str,
    rid: int,
    desired: Mapping[str, Any],
    base_rows: Mapping[int, Mapping[str, Any]] | None,
    live: Mapping[str, Any],
    columns: Iterable[str],
    prefer: str | None,
    conflicts: list[tuple[str, Conflict]],
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
        conflicts += [(table, Conflict((rid, col), c.base, c.live, c.desired)) for c in found]
        for ch in changes:
            out[col] = ch
    return out


def plain(value: Any) -> Any:
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


def rows_by_id(df: pd.DataFrame | None) -> dict[int, dict[str, Any]]:
    if df is None or df.empty:
        return {}
    records = df.astype(object).where(df.notna(), None).to_dict("records")
    return {int(r["id"]): r for r in records if r.get("id") is not None}


__all__ = [
    "CREATIVE_FIELDS",
    "RecordPlanner",
    "field_changes",
    "plain",
    "record_fields",
    "rows_by_id",
    "unedited",
]
