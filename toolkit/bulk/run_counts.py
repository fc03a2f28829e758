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
from .outcomes import Outcome, change_states

#: The counts of :func:`count_changes`, in the order ``history`` shows them.
COUNTS: tuple[str, ...] = ("changes", "applied", "failed", "unknown", "not sent")
#: A change's outcome -> the count it adds to (``restored``: the old bid back, not applied).
COUNTED_AS: dict[str, str] = {
    "applied": "applied",
    "already": "applied",
    "failed": "failed",
    "lost": "failed",
    "restored": "failed",
    "unknown": "unknown",
    "not sent": "not sent",
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
        int(row.seq),
        str(row.step),
        str(row.action),
        str(row.target),
        value("list_type"),
        int(row.campaign_id),
        value("item"),
        value("bid"),
        str(row.outcome),
        value("message"),
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
    for state in change_states(changes, outcomes, missing="not sent"):
        counts[COUNTED_AS.get(state, "unknown")] += 1
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
    runs = runs.rename(columns={c: f"items_{c}" for c in ("applied", "failed", "unknown")})
    counts = [count_changes(opened, str(r)) for r in runs["run_id"]]
    at = list(runs.columns).index("items_applied")
    for offset, name in enumerate(COUNTS):
        column = name.replace(" ", "_")
        runs.insert(at + offset, column, pd.Series([c[name] for c in counts], dtype="int64"))
    return runs


__all__ = ["COUNTED_AS", "COUNTS", "call_of", "count_changes", "history"]
