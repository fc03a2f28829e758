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
        from .preview import call_title

        return call_title(self, {})


__all__ = ["SETTING_COLUMNS", "STEPS", "WORK_MOVES", "Call"]
