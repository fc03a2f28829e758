"""A form's runs in the journal: the last one it applied (also after a reload: runs are
journaled with the form's name), whether it is undone, and how many items a plan sends.

>>> runs = pd.DataFrame({"run_id": ["a", "b", "c"], "source": ["form:bids", "form:bids", None],
...     "undoes": [None, None, "b"], "base_url": "http://h", "account": pd.array([7, 7, 7]),
...     "repairs": None, "state": "finished", "unfinished": 0, "conflicts": 0})
>>> pick_last(runs, "form:bids", "http://h", 7)
FormRun(run_id='b', undone_by='c')
>>> pick_last(runs, "form:bids", "http://h", 8) is None   # another account's runs
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..bulk.call_kinds import call_kind
from ..bulk.journal import Journal, service_of
from ..bulk.plan import Plan, account_of
from ..bulk.run_check import finished_as_planned, undone_in_force
from ..bulk.undo import nothing_to_undo, undo_plan


@dataclass(frozen=True)
class FormRun:
    """A form's last run, and the run that undid it (None: not undone, or its undo left
    items unfinished and may go again)."""

    run_id: str
    undone_by: str | None = None


def pick_last(runs: pd.DataFrame, source: str, service: str, account: int | None) -> FormRun | None:
    """The newest run of ``runs`` (a journal's) made by ``source`` on ``service`` and (when
    both are known) ``account``, with the undo in force over it, if any."""
    if "source" not in runs:  # a journal older than forms' names
        return None
    mine = runs[(runs["source"] == source) & runs["undoes"].isna()]
    mine = mine[mine["base_url"].astype(str).str.rstrip("/") == service.rstrip("/")]
    if account is not None:
        known = mine["account"].astype("Int64")
        mine = mine[known.isna() | (known == account)].copy()
    if mine.empty:
        return None
    run_id = str(mine["run_id"].iloc[-1])
    by = undone_in_force(runs, run_id)
    if by is not None and not finished_as_planned(runs, by):
        by = None  # that undo left items unfinished: undo goes again (it converges)
    return FormRun(run_id, by)


def last_run(journal: Journal, source: str, client: Any, account: Any) -> FormRun | None:
    """The last run form ``source`` applied with ``client``'s service and the account of
    ``account`` (a loaded Account), read from ``journal``."""
    return pick_last(journal.runs(), source, service_of(client), account_of(account))


def undo_run(client: Any, run_id: str, journal: Journal) -> tuple[Plan, str]:
    """The plan that undoes ``run_id``, and a line saying why there is nothing to undo
    (``""`` when the plan has calls)."""
    plan = undo_plan(client, run_id, journal=journal)
    return plan, "" if len(plan) else nothing_to_undo(run_id, plan)


def item_count(plan: Plan) -> int:
    """How many items (campaign x item) the calls of ``plan`` send, as the journal counts
    their outcomes."""
    return sum(
        len(c.campaign_ids) * max(1, len(call_kind(c.target).items_of(c))) for c in plan.calls
    )


__all__ = ["FormRun", "item_count", "last_run", "pick_last", "undo_run"]
