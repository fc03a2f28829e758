"""Settling the outcomes of a campaign's settings update and work status moves by read-back.

An answer lost on the way (a 503 or a gateway's own status after the request was sent)
leaves such a call ``unknown``. The read-back has the campaign's live fields: an update is
carried out when a field it changed no longer holds its old value, and not when every one
still does; a move is carried out when the campaign has the status it moves to.

>>> from toolkit.bulk.outcomes import Outcome
>>> o = Outcome(seq=0, step="pause", action="pause", target="campaign", list_type=None,
...             campaign_id=7, item=None, bid=None, outcome="unknown", message="HTTP 503",
...             previous="Started")
>>> settle_records([o], {7: {"work_status": "Paused"}}), o.outcome
(1, 'applied')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .. import spec
from .calls import CAMPAIGN
from .diff import same
from .outcome_states import OutcomeState
from .outcomes import Outcome
from .plan_records import python_value


def is_record_move(o: Outcome) -> bool:
    """Whether ``o`` is a campaign's settings update or work status move."""
    return o.target == CAMPAIGN and (o.action == "update" or o.action in spec.WORK_ACTIONS)


def carried_out(o: Outcome, live: Mapping[str, Any]) -> bool | None:
    """Whether live shows ``o`` carried out; None when it cannot tell."""
    if o.action in spec.WORK_ACTIONS:
        return live.get("work_status") == spec.WORK_ACTIONS[o.action]
    previous = o.previous if isinstance(o.previous, Mapping) else None
    fields = [k for k in previous or {} if k in live]
    if not fields:
        return None
    return any(not same(python_value(live[k]), python_value(previous[k])) for k in fields)  # type: ignore[index]


def settle_records(outcomes: Iterable[Outcome], campaigns: Mapping[int, Mapping[str, Any]]) -> int:
    """Settle the ``unknown`` settings updates and moves of the campaigns read back
    (``campaigns``: id -> live fields); how many changed."""
    changed = 0
    for o in outcomes:
        if (
            o.outcome != OutcomeState.UNKNOWN
            or not is_record_move(o)
            or o.campaign_id not in campaigns
        ):
            continue
        done = carried_out(o, campaigns[o.campaign_id])
        if done is None:
            continue
        o.outcome = OutcomeState.APPLIED if done else OutcomeState.FAILED
        o.message = (
            f"{'carried out' if done else 'not carried out'} (settled by the read-back of the"
            f" campaign) after: {o.message}"
        )
        changed += 1
    return changed


__all__ = ["carried_out", "is_record_move", "settle_records"]
