"""Building the calls of the record tables: campaign settings and work status, CPA rules,
creatives (part of the planner's build step, :mod:`toolkit.bulk.plan_build`).

Each record (a campaign, a rule, a creative) was diffed field by field, three ways, by the
diff step (:mod:`toolkit.bulk.plan_diff`); :class:`RecordPlanner` turns its changes into
calls.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pandas as pd

from .. import spec
from .calls import CAMPAIGN, CPA_RULE, CREATIVE, WORK_MOVES, Call
from .diff_types import TableDiff


class RecordPlanner:
    """The calls for edited campaigns, CPA rules and creatives, from their diffs
    (:class:`~toolkit.bulk.diff_types.TableDiff`); mixed into the build step's builder,
    which holds ``calls`` and ``warnings``."""

    calls: list[Call]
    warnings: list[str]

    # ------------------------------------------------------------------ campaigns

    def campaigns(self, found: TableDiff) -> None:
        """One update call per campaign whose settings change; one call per work status
        move, for every campaign that makes it."""
        moves: dict[str, dict[int, str]] = defaultdict(dict)  # move -> campaign -> old
        for record in found.edited:
            cid, l_ = record.id, record.live
            settings, previous = {}, {}
            for col, ch in record.changes.items():
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

    # ------------------------------------------------------------------ CPA rules

    def _cpa_adds(self, new: pd.DataFrame, live: pd.DataFrame) -> None:
        """One add call per campaign of the new rules (those without an id); its
        ``previous`` holds the ids live before, so that undo can find and drop the rules the
        add created."""
        for cid, group in new.groupby(new["campaign_id"].astype(int)):
            rules = [{f: python_value(r[f]) for f in spec.CPA_FIELDS} for _, r in group.iterrows()]
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

    def cpa_rules(self, found: TableDiff) -> None:
        """Adds of the new rules, an edit call per edited rule, and per campaign one drop
        call of its rules gone."""
        if found.added is not None and found.live is not None:
            self._cpa_adds(found.added, found.live)
        for record in found.edited:
            change = {f: ch.new for f, ch in record.changes.items()}
            previous = {f: ch.old for f, ch in record.changes.items()}
            self.calls.append(
                Call(
                    "rules",
                    "edit",
                    CPA_RULE,
                    (int(record.live["campaign_id"]),),
                    params={"rules": [{"id": record.id, **change}]},
                    previous={"rules": [{"id": record.id, **previous}]},
                )
            )
        by_campaign: dict[int, list[dict[str, Any]]] = defaultdict(list)
        for rid, row in found.dropped:
            # with their ids: undo re-adds only the rules that are really gone
            rule = {"id": rid} | {f: row[f] for f in spec.CPA_FIELDS}
            by_campaign[int(row["campaign_id"])].append(rule)
        for cid, dropped in by_campaign.items():
            self.calls.append(
                Call(
                    "rules",
                    "drop",
                    CPA_RULE,
                    (cid,),
                    items=tuple(r["id"] for r in dropped),
                    previous={"rules": dropped},
                )
            )

    # ------------------------------------------------------------------ creatives

    def creatives(self, found: TableDiff) -> None:
        """Work status moves of creatives; content edits are reported, not planned: the
        service's update needs the creative's name, which no read operation returns."""
        for record in found.edited:
            for col, ch in record.changes.items():
                if col != "work_status":
                    self.warnings.append(
                        f"creatives: creative {record.id} {col} edit not applied (the update "
                        "operation needs the creative's name, which no read returns)"
                    )
                elif ch.new in WORK_MOVES:
                    move = WORK_MOVES[ch.new]
                    self.calls.append(
                        Call(
                            move,
                            move,
                            CREATIVE,
                            (int(record.live["campaign_id"]),),
                            items=(record.id,),
                            previous={record.id: ch.old},
                        )
                    )


def python_value(value: Any) -> Any:
    """``value`` as a Python scalar (never a numpy one), missing (None, NaN, NA) as None."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    if hasattr(value, "item"):
        return value.item()
    return value


__all__ = ["RecordPlanner", "python_value"]
