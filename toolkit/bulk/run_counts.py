"""A journaled run's changes counted as its plan counted them: a bid change is one change
(its drop, its add and a restore of its old bid are its items), so that ``history`` says
``2 calls, 1 change, 1 applied`` of a run whose plan said ``Plan: 2 calls, 1 change``.

>>> count_changes(journal, run_id)                                   # doctest: +SKIP
{'changes': 3, 'applied': 2, 'failed': 1, 'unknown': 0, 'not sent': 0}
"""

from __future__ import annotations

import os
from typing import Any

import pandas as pd

from .calls import Call
from .edits import edits_of
from .journal import Journal, open_journal
from .outcome_states import OutcomeState
from .outcomes import Outcome, change_states

#: A change none of whose calls was sent (its run cut off before them).
NOT_SENT = "not sent"
#: The counts of the outcomes of a run's changes (named after the outcomes they count).
APPLIED, FAILED, UNKNOWN = (
    OutcomeState.APPLIED.value,
    OutcomeState.FAILED.value,
    OutcomeState.UNKNOWN.value,
)
#: The counts of :func:`count_changes`, in the order ``history`` shows them.
COUNTS: tuple[str, ...] = ("changes", APPLIED, FAILED, UNKNOWN, NOT_SENT)
#: A change's outcome -> the count it adds to (``restored``: the old bid back, not applied).
COUNTED_AS: dict[str, str] = {
    OutcomeState.APPLIED: APPLIED,
    OutcomeState.ALREADY: APPLIED,
    OutcomeState.FAILED: FAILED,
    OutcomeState.LOST: FAILED,
    OutcomeState.RESTORED: FAILED,
    OutcomeState.UNKNOWN: UNKNOWN,
    NOT_SENT: NOT_SENT,
}


def call_of(record: dict[str, Any]) -> Call:
    """A call as the journal recorded it (``Call.record()``), enough to count its changes
    (``previous`` keeps the journal's text keys)."""
    return Call(
        step=record["step"],
        action=record["action"],
        target=record["target"],
        campaign_ids=tuple(int(c) for c in record["campaign_ids"]),
        items=tuple(record.get("items") or ()),
        bids=record.get("bids"),
        bid=record.get("bid"),
        list_type=record.get("list_type"),
        params=record.get("params"),
        previous=record.get("previous"),
    )


def _outcome(row: Any) -> Outcome:
    def value(name: str) -> Any:
        v = getattr(row, name, None)
        return None if v is None or (isinstance(v, float) and pd.isna(v)) else v

    return Outcome(
        seq=int(row.seq),
        step=str(row.step),
        action=str(row.action),
        target=str(row.target),
        list_type=value("list_type"),
        campaign_id=int(row.campaign_id),
        item=value("item"),
        bid=value("bid"),
        outcome=str(row.outcome),
        message=value("message"),
    )


def count_changes(journal: Journal, run_id: str) -> dict[str, int]:
    """The run's changes (those of the calls it planned, as the plan's preview counts them)
    and how many ended applied (or already so), failed (refused, lost, or their old bid
    restored), unknown, or not sent (a run cut off before their calls)."""
    calls = [call_of(r) for r in journal.planned(run_id)]
    changes = edits_of(calls)
    frame = journal.outcomes(run_id)
    outcomes = [_outcome(r) for r in frame.itertuples(index=False)]
    counts = dict.fromkeys(COUNTS, 0)
    counts["changes"] = len(changes)
    for state in change_states(changes, outcomes, missing=NOT_SENT):
        counts[COUNTED_AS.get(state, UNKNOWN)] += 1
    return counts


def history(journal: Journal | str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Runs in the journal, oldest first: run id, times, state (``finished`` or
    ``unfinished``), calls planned, sent and answered, and the run's changes counted as its
    plan counted them: ``changes``, ``applied`` (or already so), ``failed`` (refused, lost,
    or the old bid restored), ``unknown`` and ``not_sent``; ``items_applied``,
    ``items_failed`` and ``items_unknown`` count the calls' items (a bid change is two).

    >>> toolkit.history("journal.db")[["run_id", "changes", "applied"]]  # doctest: +SKIP
    """
    opened = open_journal(journal)
    runs = opened.runs()
    runs = runs.rename(columns={c: f"items_{c}" for c in (APPLIED, FAILED, UNKNOWN)})
    counts = [count_changes(opened, str(r)) for r in runs["run_id"]]
    at = list(runs.columns).index("items_applied")
    for offset, name in enumerate(COUNTS):
        column = name.replace(" ", "_")
        runs.insert(at + offset, column, pd.Series([c[name] for c in counts], dtype="int64"))
    return runs


__all__ = ["COUNTED_AS", "COUNTS", "call_of", "count_changes", "history"]
