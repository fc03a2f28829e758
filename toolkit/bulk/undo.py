"""``toolkit.undo()``: the inverse of a journaled run, applied as a run of its own.

The inverse of each outcome that may have changed the account (``applied``, ``already``, and
``unknown``: sent, fate not known, its inverse harmless if it never landed) comes from the
call kind of its target (:meth:`~toolkit.bulk.call_kinds.CallKind.invert`): drops for adds,
adds with their old bids for drops, the old settings and work status back, dropped CPA rules
added again, added CPA rules dropped (found by the ids live before the add and their fields).

>>> toolkit.undo(client, result.run_id)                               # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pandas as pd

from .apply import apply_plan
from .call_kinds import Inverse, call_kind
from .journal import INVERTED, Journal, open_journal
from .outcomes import ApplyResult
from .plan import Plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


def inverse_plan(outcomes: pd.DataFrame) -> Plan:
    """The plan that undoes one run: the inverse of each applied outcome, and of each
    ``unknown`` one (sent, fate not known: its inverse is harmless if it never landed)."""
    inverse = Inverse()
    for row in outcomes[outcomes["outcome"].isin(INVERTED)].itertuples(index=False):
        previous = json.loads(row.previous) if isinstance(row.previous, str) else None
        call_kind(row.target).invert(row, previous, inverse)
    return Plan(inverse.ordered())


def undo(
    client: Client, run_id: str, *, journal: Journal | str | None = None, progress: bool = True
) -> ApplyResult:
    """Apply the inverse of run ``run_id``; the undo is journaled as a run of its own."""
    book = open_journal(journal)
    plan = inverse_plan(book.outcomes(run_id))
    plan.calls[:] = [c for c in plan.calls if call_kind(c.target).prepare_undo(client, c)]
    return apply_plan(plan, client, progress=progress, journal=book, undoes=run_id)


__all__ = ["inverse_plan", "undo"]
