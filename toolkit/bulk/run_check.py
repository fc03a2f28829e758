"""Checks before a run is undone or repaired: is it bound to this service and account, and
was it undone already?

A run is bound to the service (its base URL) and the account (the user id of the live state
its plan was read from) it was made on: undoing it on another would change an account it
never touched. A run is undone once: an undo that finished with every item as planned is
in force until it is undone itself, and a second undo says so and sends nothing.

>>> runs = pd.DataFrame({"run_id": ["a", "b", "c"], "undoes": [None, "a", "b"], "repairs": None,
...     "state": ["finished"] * 3, "unfinished": [0, 0, 0], "conflicts": [0, 0, 0]})
>>> undone_in_force(runs, "a"), undone_in_force(runs, "b")
(None, 'c')
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from ..errors import ToolkitError
from .journal import service_of
from .plan import account_of

if TYPE_CHECKING:  # pragma: no cover
    from ..client import Client
    from ..frames import Account
    from .journal import Journal


def run_row(book: Journal, run_id: str, runs: pd.DataFrame | None = None) -> Any:
    """The journal's row of run ``run_id``, or a :class:`ToolkitError` naming the journal."""
    runs = book.runs() if runs is None else runs
    found = runs[runs["run_id"] == run_id]
    if found.empty:
        raise ToolkitError(f"no run {run_id!r} in the journal {book.path}")
    return found.iloc[0]


def check_bound(book: Journal, run_id: str, client: Client, live: Account | None = None) -> None:
    """Raise a one-line :class:`ToolkitError` when run ``run_id`` was made on another service
    than ``client``'s, or (with ``live``, a read of the account) on another account."""
    run = run_row(book, run_id)
    made, now = str(run.base_url).rstrip("/"), service_of(client).rstrip("/")
    if made != now:
        raise ToolkitError(
            f"run {run_id} was made on {made}, not on {now} (connected now): connect to the"
            " service it was made on to undo or repair it; nothing sent"
        )
    if live is None or pd.isna(run.account):
        return
    account = account_of(live)
    if account is None:  # that read's balance failed: the client's (kept, or one read)
        account = client.account.user_id()
    if account is not None and account != int(run.account):
        raise ToolkitError(
            f"run {run_id} was made on account {int(run.account)}, and this key is account"
            f" {account}: use the key of the account it was made on; nothing sent"
        )


def undone_in_force(runs: pd.DataFrame, run_id: str) -> str | None:
    """The newest run that undoes ``run_id`` and is not undone itself, if any."""
    undos = runs[runs["undoes"] == run_id]["run_id"].tolist()
    for undo_id in reversed(undos):
        if undone_in_force(runs, str(undo_id)) is None:
            return str(undo_id)
    return None


def finished_as_planned(runs: pd.DataFrame, run_id: str) -> bool:
    """Whether run ``run_id`` finished with every item as planned, itself or by a repair
    (one that finished so, and was not undone)."""
    run = runs[runs["run_id"] == run_id]
    if len(run) and run.iloc[0]["state"] == "finished" and not int(run.iloc[0]["unfinished"]):
        return True
    repairs = runs[runs["repairs"] == run_id]["run_id"].astype(str)
    return any(undone_in_force(runs, r) is None and finished_as_planned(runs, r) for r in repairs)


def refuse_undone(book: Journal, run_id: str, prefer: str | None = None) -> None:
    """Raise a one-line :class:`ToolkitError` when run ``run_id`` was already undone by a run
    that finished with every item as planned. Undo may go again when that undo left items
    unfinished (it converges), or left conflicts alone and ``prefer="desired"`` is asked."""
    runs = book.runs()
    by = undone_in_force(runs, run_id)
    if by is None:
        return
    undo = run_row(book, by, runs)
    conflicts = 0 if pd.isna(undo.conflicts) else int(undo.conflicts)
    if not finished_as_planned(runs, by):
        return
    if conflicts and prefer == "desired":
        return
    text = f"run {run_id} was already undone by run {by}; nothing sent"
    if conflicts:
        text += (
            f" (it left {conflicts} item(s) changed since the run alone: add --prefer desired"
            " to put the old values back over them)"
        )
    raise ToolkitError(text)


__all__ = ["check_bound", "finished_as_planned", "refuse_undone", "run_row", "undone_in_force"]
