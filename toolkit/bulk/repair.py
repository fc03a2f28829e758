"""Finishing a run: what a run planned and the account does not show yet, applied again.

A run can end with items not as planned: a write refused or lost under faults (``failed``,
``unknown``), a bid change whose old value could not even be restored (``lost``), or a run cut
off half-way (the client was killed). The journal holds the whole plan of every run, so
:func:`repair` knows each item's intent (the last value the plan gave it) and its value
before the run. It reads live state for those campaigns only, and plans what is still
missing, three ways: what live already shows is skipped, and what someone else changed since
the run is a conflict, left out and listed. The rest is applied as a new journaled run.

>>> result = toolkit.repair(client, run_id)                           # doctest: +SKIP
>>> result.summary()                                                  # doctest: +SKIP

The item tables (countries and their bids, bid rules, source and subId lists, targets of
every kind), a campaign's settings and work status, a creative's work status and a CPA rule's
edited fields are repaired; CPA rules a run added or dropped are not (their ids are known
only live): the run reports their outcome. A run that was undone has nothing to repair; a
failed undo is a run like any other, and is repaired the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .apply import apply_plan
from .guards import GUARDS
from .journal import Journal, open_journal
from .outcomes import ApplyResult
from .plan import Plan, make_plan, read_live
from .run_check import check_bound, finished_as_planned, run_row, undone_in_force
from .run_state import Key, finished_by_the_run, run_states, way_tables

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


def intents(
    calls: list[dict[str, Any]],
) -> tuple[dict[Key, Any], dict[Key, Any], dict[Key, list[Any]]]:
    """Per item of the item tables: the value before the run (``ABSENT`` if it was not
    there), the value the plan left it with (a bid, ``True`` for presence, ``ABSENT``), and
    every value the run's calls could have left it with on the way (see
    :func:`toolkit.bulk.run_state.run_states`)."""
    states = run_states(calls)
    return states.before, states.after, states.between


def run_to_repair(book: Journal) -> str | None:
    """The newest run that did not finish or left items failed, unknown or lost, that no
    run undid and no repair finished; None when there is none."""
    runs = book.runs()
    for run in reversed(list(runs.itertuples(index=False))):
        run_id = str(run.run_id)
        if undone_in_force(runs, run_id) is None and not finished_as_planned(runs, run_id):
            return run_id
    return None


def nothing_to_repair(book: Journal, run_id: str | None) -> str | None:
    """Why there is nothing to repair, in one line (no run left unfinished; the run was
    undone), or None."""
    if run_id is None:
        return f"Nothing to repair: every run in the journal {book.path} finished as planned."
    runs = book.runs()
    run_row(book, run_id, runs)
    by = undone_in_force(runs, run_id)
    if by is None:
        return None
    text = f"Nothing to repair: run {run_id} was undone by run {by}"
    if not finished_as_planned(runs, by):
        text += f", which did not finish: `campaign-toolkit repair {by}` finishes the undo"
    return text + "."


def repair_plan(
    client: Client, run_id: str | None = None, *, journal: Journal | str | None = "default"
) -> tuple[str | None, Plan]:
    """The run to repair (``run_id``, or the newest unfinished one; None when there is none)
    and the plan that finishes it: the items and settings whose live state is neither as the
    run planned nor changed by someone else since (those are ``plan.conflicts``). A run that
    was undone has nothing to repair (an empty plan); a run made on another service or
    account is refused."""
    book = open_journal(journal)
    run_id = run_id or run_to_repair(book)
    if run_id is None or nothing_to_repair(book, run_id) is not None:
        return run_id, Plan()
    check_bound(book, run_id, client)
    states = finished_by_the_run(run_states(book.planned(run_id)), book.outcomes(run_id))
    if not states:
        return run_id, Plan()
    live = read_live(client, sorted(states.campaigns))
    check_bound(book, run_id, client, live)
    desired, bases = way_tables(states, live, back=False)
    plan = make_plan(client, desired, base=bases, live=live, allow=GUARDS)
    plan.purpose, plan.repairs = "repair", run_id
    return run_id, plan


def repair(
    client: Client,
    run_id: str | None = None,
    *,
    journal: Journal | str | None = "default",
    progress: bool = True,
    **options: Any,
) -> ApplyResult:
    """Finish run ``run_id`` (default: the newest run not finished as planned): apply what
    the account does not show yet as a new journaled run. Nothing to do gives an empty
    result (no run). ``options`` go to :func:`toolkit.bulk.apply.apply_plan`."""
    book = open_journal(journal)
    _, plan = repair_plan(client, run_id, journal=book)
    if not len(plan):
        return ApplyResult()
    return apply_plan(plan, client, progress=progress, journal=book, **options)


__all__ = ["intents", "nothing_to_repair", "repair", "repair_plan", "run_to_repair"]
