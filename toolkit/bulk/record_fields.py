"""The record tables a plan compares field by field (campaigns, CPA rules, creatives), and
which of their fields it compares: the scope step narrows by them, the diff step diffs them.

>>> record_fields("creatives", ["id", "campaign_id", "title", "work_status"])
['work_status', 'title']
>>> RECORD_TABLES["cpa_rules"]
'campaign_id'
"""

from __future__ import annotations

from collections.abc import Iterable

from .. import spec
from ..frames.account import CAMPAIGN_COLUMN
from .calls import SETTING_COLUMNS

#: Record tables diffed field by field: the column naming the record's campaign.
RECORD_TABLES: dict[str, str] = {
    name: CAMPAIGN_COLUMN[name] for name in ("campaigns", "cpa_rules", "creatives")
}

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


__all__ = ["CREATIVE_FIELDS", "RECORD_TABLES", "record_fields"]
