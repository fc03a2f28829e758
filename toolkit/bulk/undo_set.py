"""The way back from a run of a set of accounts: undo or repair every account's run of the
set, or of some accounts only, each with its own account's client.

A run of a set (:func:`~toolkit.bulk.plan_set.apply_set`) is one journaled run per account,
each carrying the set id (``run_set``) and the account's name (``profile``). Undo of the set
plans, for each of those runs, :func:`~toolkit.bulk.undo.undo_plan` with that account's
client, into one :class:`~toolkit.bulk.plan_set.PlanSet`; applied, it is itself a run of a
new set whose runs each undo one run of the first. Repair does the same with
:func:`~toolkit.bulk.repair.repair_plan`. Each run keeps its own guarantees: bound to its
account, undone once, what was changed since left alone and listed.

>>> plans = undo_set_plan("set-20261126-101500-ab12cd")              # doctest: +SKIP
>>> plans.apply()                                                     # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError, ToolkitError
from .journal import Journal, open_journal
from .plan_set import SET_PREFIX, PlanSet, SetResult, apply_set
from .repair import repair_plan
from .run_check import finished_as_planned, undone_in_force
from .undo import undo_plan

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client


def is_set_id(text: str) -> bool:
    """Whether ``text`` names a run of a set rather than one run."""
    return str(text).startswith(SET_PREFIX)


def set_runs(book: Journal, set_id: str) -> dict[str, str]:
    """Account -> the id of its run in the set ``set_id``, in the order they ran; a set the
    journal does not hold is a :class:`~toolkit.errors.ToolkitError`."""
    runs = book.runs()
    rows = runs[runs["run_set"].eq(set_id).fillna(False)]
    if not len(rows):
        raise ToolkitError(
            f"no run of the set {set_id} in the journal {book.path}; see campaign-toolkit history"
        )
    return {str(r.profile): str(r.run_id) for r in rows.itertuples(index=False)}


def _pick(runs: Mapping[str, str], accounts: Sequence[str] | None, set_id: str) -> list[str]:
    if accounts is None:
        return list(runs)
    unknown = [a for a in accounts if a not in runs]
    if unknown:
        raise ConfigError(
            f"account(s) {', '.join(unknown)} had no run in the set {set_id}; its accounts:"
            f" {', '.join(runs)}"
        )
    return list(dict.fromkeys(accounts))


def _clients(names: Sequence[str], clients: Mapping[str, Client] | None) -> dict[str, Client]:
    if clients is not None:
        missing = [n for n in names if n not in clients]
        if missing:
            raise ConfigError(f"no client given for account(s) {', '.join(missing)}")
        return {n: clients[n] for n in names}
    from ..client.client import profile_clients

    return profile_clients(names)


def undo_set_plan(
    set_id: str,
    clients: Mapping[str, Client] | None = None,
    *,
    accounts: Sequence[str] | None = None,
    journal: Journal | str | None = "default",
    prefer: str | None = None,
) -> PlanSet:
    """The plans that undo the run of the set ``set_id`` (or of its ``accounts`` only), each
    with its account's client (``clients``, else connected by profile name)."""
    book = open_journal(journal)
    runs = set_runs(book, set_id)
    names = _pick(runs, accounts, set_id)
    warnings = []
    if accounts is None and prefer is None:  # the whole set: accounts undone already stay
        journaled = book.runs()
        for name in list(names):
            by = undone_in_force(journaled, runs[name])
            if by is not None and finished_as_planned(journaled, by):
                names.remove(name)
                warnings.append(f"account {name}: its run {runs[name]} was undone by run {by}")
    given = _clients(names, clients)
    plans = {n: undo_plan(given[n], runs[n], journal=book, prefer=prefer) for n in names}
    return PlanSet(
        plans,
        clients=given,
        warnings=warnings,
        purpose="undo",
        undoes={n: runs[n] for n in names},
        about=set_id,
    )


def repair_set_plan(
    set_id: str,
    clients: Mapping[str, Client] | None = None,
    *,
    accounts: Sequence[str] | None = None,
    journal: Journal | str | None = "default",
) -> PlanSet:
    """The plans that finish each account's run of the set ``set_id`` (or of ``accounts``)."""
    book = open_journal(journal)
    runs = set_runs(book, set_id)
    names = _pick(runs, accounts, set_id)
    given = _clients(names, clients)
    plans = {n: repair_plan(given[n], runs[n], journal=book)[1] for n in names}
    return PlanSet(plans, clients=given, purpose="repair", about=set_id)


def undo_set(
    set_id: str,
    clients: Mapping[str, Client] | None = None,
    *,
    accounts: Sequence[str] | None = None,
    journal: Journal | str | None = "default",
    prefer: str | None = None,
    plans: PlanSet | None = None,
    **options: Any,
) -> SetResult:
    """Undo the run of the set ``set_id`` (or of its ``accounts``): :func:`undo_set_plan`
    (or the ``plans`` it gave, previewed), applied as a run of a new set."""
    book = open_journal(journal)
    if plans is None:
        plans = undo_set_plan(set_id, clients, accounts=accounts, journal=book, prefer=prefer)
    return apply_set(plans, journal=book, **options)


def repair_set(
    set_id: str,
    clients: Mapping[str, Client] | None = None,
    *,
    accounts: Sequence[str] | None = None,
    journal: Journal | str | None = "default",
    plans: PlanSet | None = None,
    **options: Any,
) -> SetResult:
    """Finish each account's run of the set ``set_id`` (or of ``accounts``)."""
    book = open_journal(journal)
    if plans is None:
        plans = repair_set_plan(set_id, clients, accounts=accounts, journal=book)
    return apply_set(plans, journal=book, **options)


__all__ = [
    "is_set_id",
    "repair_set",
    "repair_set_plan",
    "set_runs",
    "undo_set",
    "undo_set_plan",
]
