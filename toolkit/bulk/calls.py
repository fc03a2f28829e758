"""The calls of a plan: one API call each, and the steps they are applied in.

>>> Call("add", "add", "subid_black", (1000001, 1000002), items=("ab12",)).describe()
'add subid_black on 2 campaigns (batch)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import spec

# Steps of a plan, in the order they are applied.
STEPS: tuple[str, ...] = ("pause", "archive", "update", "drop", "add", "rules", "start")

# Campaign settings a plan may update, and the work status column.
SETTING_COLUMNS: tuple[str, ...] = (
    "name",
    "frequency_capping",
    "url",
    "note",
    *(lim.field for lim in spec.LIMITS.values()),
)
WORK_MOVES: dict[str, str] = {v: k for k, v in spec.WORK_ACTIONS.items()}  # Started -> start

# Targets of calls that are not target kinds or lists (see :mod:`toolkit.bulk.call_kinds`).
CAMPAIGN = "campaign"
CREATIVE = "creative"
CPA_RULE = "cpa_rule"
BID_RULE = "bid_rule"


@dataclass(frozen=True)
class Call:
    """One API call of a plan.

    ``target`` is ``country``, a target kind (``os``, ``cidr``...), a list (``subid_black``),
    ``bid_rule``, ``cpa_rule``, ``campaign`` or ``creative``. ``items`` are what the call
    adds or drops (country adds: ``bids`` maps each code to its bid). ``previous`` keeps what
    the call replaces (old bids, old settings, old work status) for compensation and undo.
    """

    step: str
    action: str
    target: str
    campaign_ids: tuple[int, ...]
    items: tuple[Any, ...] = ()
    bids: Mapping[str, float] | None = None
    bid: float | None = None
    list_type: str | None = None
    params: Mapping[str, Any] | None = None
    previous: Mapping[Any, Any] | None = None

    @property
    def batch(self) -> bool:
        return len(self.campaign_ids) > 1

    def describe(self) -> str:
        """``add subid_black on 12 campaigns (batch)``."""
        return call_title(self)

    def record(self) -> dict[str, Any]:
        """What the call will change, as JSON-ready fields (``previous``'s keys as text)."""
        return {
            "step": self.step,
            "action": self.action,
            "target": self.target,
            "campaign_ids": list(self.campaign_ids),
            "items": list(self.items),
            "bids": None if self.bids is None else dict(self.bids),
            "bid": self.bid,
            "list_type": self.list_type,
            "params": None if self.params is None else dict(self.params),
            "previous": None
            if self.previous is None
            else {str(k): v for k, v in self.previous.items()},
        }


def call_title(call: Call) -> str:
    """``add subid_black on 12 campaigns (batch)``, ``update campaign 1000001``."""
    what = call.target + (f" ({call.list_type})" if call.list_type else "")
    ids = call.campaign_ids
    who = f"campaign {ids[0]}" if len(ids) == 1 else f"{len(ids)} campaigns (batch)"
    if call.target == CAMPAIGN and call.action == "update":
        return f"update campaign {ids[0]}"
    if call.target == CAMPAIGN:
        return f"{call.action} {who}"
    return f"{call.action} {what} on {who}"


__all__ = [
    "BID_RULE",
    "CAMPAIGN",
    "CPA_RULE",
    "CREATIVE",
    "SETTING_COLUMNS",
    "STEPS",
    "WORK_MOVES",
    "Call",
    "call_title",
]
