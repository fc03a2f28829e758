"""``toolkit.undo()``: the way back from a journaled run, planned like any edit.

Undo is a plan: the run's before-state is the desired state, its after-state the base, and
live state is read for the run's campaigns (:mod:`toolkit.bulk.run_state`). So, item by item:

- what live shows as the run left it goes back to its value before the run;
- what live already shows as before the run (a write that failed, or was undone) is skipped;
- what someone changed since the run (another run, another tool, a person) is a conflict: left
  alone and listed in ``plan.conflicts``, unless ``prefer="desired"`` puts the old value back
  over it.

CPA rules a run added are dropped (found live by the ids there before the add and their
fields), and rules it dropped are added again if they are still gone
(:meth:`~toolkit.bulk.call_kinds.CallKind.prepare_undo`).

A run is bound to the service and account it was made on; it is undone once (a second undo
says which run undid it and sends nothing; an undo that left items unfinished can be run
again, or repaired); the undo is a journaled run of its own, reported item by item like any
apply.

>>> plan = toolkit.bulk.undo.undo_plan(client, run_id)                 # doctest: +SKIP
>>> plan                                      # names, old -> new, conflicts # doctest: +SKIP
>>> toolkit.undo(client, run_id)                                      # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from .apply import apply_plan
from .call_kinds import Inverse, call_kind
from .calls import CPA_RULE, STEPS
from .guards import GUARDS
from .journal import INVERTED, Journal, open_journal
from .outcomes import ApplyResult
from .plan import Plan, make_plan, read_live
from .run_check import check_bound, refuse_undone
from .run_state import finished_by_the_run, run_states, way_tables

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


def inverse_plan(outcomes: pd.DataFrame) -> Plan:
    """The CPA rule calls that undo one run's adds and drops of CPA rules, from its journaled
    outcomes (``applied``, ``already`` and ``unknown`` ones: sent, fate not known, harmless if
    it never landed); completed from live state before they are sent."""
    inverse = Inverse()
    rows = outcomes[outcomes["outcome"].isin(INVERTED) & outcomes["target"].eq(CPA_RULE)]
    for row in rows.itertuples(index=False):
        if row.action not in ("add", "drop"):
            continue  # edits are planned three ways with the other records
        previous = json.loads(row.previous) if isinstance(row.previous, str) else None
        call_kind(row.target).invert(row, previous, inverse)
    return Plan(inverse.ordered())


def undo_plan(
    client: Client,
    run_id: str,
    *,
    journal: Journal | str | None = None,
    prefer: str | None = None,
) -> Plan:
    """The plan that undoes run ``run_id``, three ways against live (see the module).

    Raises :class:`~toolkit.errors.ToolkitError` when the run is not in the journal, was made
    on another service or account, or was already undone (unless that undo left items
    unfinished, or ``prefer="desired"`` asks to put back what it left alone), and
    :class:`~toolkit.errors.IncompleteReadError` when live state could not be read whole.
    """
    book = open_journal(journal)
    check_bound(book, run_id, client)
    refuse_undone(book, run_id, prefer=prefer)
    states = finished_by_the_run(run_states(book.planned(run_id)), book.outcomes(run_id))
    cpa = inverse_plan(book.outcomes(run_id)).calls
    if not states and not cpa:
        return Plan()
    live = read_live(client, sorted(states.campaigns))
    check_bound(book, run_id, client, live)
    desired, bases = way_tables(states, live, back=True)
    plan = make_plan(client, desired, base=bases, live=live, prefer=prefer, allow=GUARDS)
    plan.purpose = "undo"
    ready = [call_kind(c.target).prepare_undo(client, c) for c in cpa]
    cpa = [c for c in ready if c is not None]
    rank = {s: i for i, s in enumerate(STEPS)}
    plan.calls[:] = sorted([*plan.calls, *cpa], key=lambda c: rank[c.step])
    return plan


def undo(
    client: Client,
    run_id: str,
    *,
    journal: Journal | str | None = None,
    progress: bool = True,
    prefer: str | None = None,
    plan: Plan | None = None,
    **options: Any,
) -> ApplyResult:
    """Undo run ``run_id``: :func:`undo_plan` (or the ``plan`` it gave, previewed), applied as
    a journaled run of its own (``history()`` shows which run it undoes). Nothing to undo
    gives an empty result (no run). ``options`` go to :func:`toolkit.bulk.apply.apply_plan`.
    """
    book = open_journal(journal)
    if plan is None:
        plan = undo_plan(client, run_id, journal=book, prefer=prefer)
    if not len(plan):
        return ApplyResult()
    return apply_plan(plan, client, progress=progress, journal=book, undoes=run_id, **options)


def nothing_to_undo(run_id: str, plan: Plan) -> str:
    """One line for an undo plan without calls: why there is nothing to send."""
    if len(plan.conflicts):
        return (
            f"Nothing to undo in run {run_id} but what was changed since (left alone; add"
            " --prefer desired to put the old values back over it)"
        )
    return f"Nothing to undo: the account shows none of run {run_id}'s changes"


__all__ = ["ToolkitError", "inverse_plan", "nothing_to_undo", "undo", "undo_plan"]
