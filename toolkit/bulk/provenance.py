"""Why a change of a plan was made: the rule that decided it, the item, and the data it was
decided on. A plan carries one :class:`Provenance` per change a rule planned
(``Plan.provenance``); applying the plan journals them with its run, so that a later run of
the same rules knows which steps were made on which evidence (see
:mod:`toolkit.rules.memory`).

>>> import datetime as dt
>>> p = Provenance("winners", 1000001, "subid", "bid_rule", "abc", 7, dt.date(2026, 1, 31), "0.36")
>>> p.row()
('winners', 1000001, 'subid', 'bid_rule', 'abc', 7, '2026-01-31', '0.36')
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

#: The journal's columns of a provenance row, after the run's id.
COLUMNS: tuple[str, ...] = (
    "rule",
    "campaign_id",
    "level",
    "target",
    "key",
    "window",
    "evidence",
    "value",
)


@dataclass(frozen=True)
class Provenance:
    """One change a rule planned: the rule (by name), the item (campaign, level, the target
    the change goes to and its key; ``""`` for a campaign's own move), the rule's window in
    days (None: every day), the evidence (the last day of the data it was decided on; None
    when the data carry no dates) and the value it sets (as text: a bid, ``blacklisted``,
    ``Paused``...)."""

    rule: str
    campaign_id: int
    level: str
    target: str
    key: str
    window: int | None
    evidence: dt.date | None
    value: str | None

    def row(self) -> tuple[Any, ...]:
        """The values of :data:`COLUMNS`, as the journal stores them."""
        day = None if self.evidence is None else self.evidence.isoformat()
        return (
            self.rule,
            int(self.campaign_id),
            self.level,
            self.target,
            self.key,
            self.window,
            day,
            self.value,
        )


__all__ = ["COLUMNS", "Provenance"]
