"""The forms over several accounts: one account at a time in focus, edits kept per account,
one plan per account made with that account's own client, and the runs of a set.

A form opened on a set (:class:`~toolkit.widgets.accounts.AccountsSession`) keeps its edits
by account. An edit button runs the edit once per account with selected campaigns, that
account in focus (``form.session``, ``form.account``, ``form.selected`` and ``form.table``
are then the account's own); when one account refuses it, nothing of it is kept. The plan is
a :class:`~toolkit.bulk.plan_set.PlanSet`: one :class:`~toolkit.bulk.plan.Plan` per account
with edits, made with the account's client, applied as linked journaled runs. Undo takes the
form's last run of the set (read from the journal, so also after a reload) and undoes each
account's run with that account's client, as a set of its own.

>>> form = toolkit.widgets.ListForm(["north", "south"])               # doctest: +SKIP
>>> form.picker.select_all.click(); form.paste.value = "ab12"         # doctest: +SKIP
>>> form.add_button.click(); form.plan().counts()                     # doctest: +SKIP
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pandas as pd

from ..bulk.journal import Journal, service_of
from ..bulk.outcomes import ApplyResult
from ..bulk.plan import Plan, account_of
from ..bulk.plan_set import ACCOUNT, PlanSet, SetResult, check_set_guards
from ..bulk.undo_set import set_runs, undo_set_plan
from ..errors import ToolkitError
from .accounts import AccountsSession
from .runs import item_count

#: Rows of a run's outcomes shown in the form (the rest counted).
SHOWN_ROWS = 200


class AccountsMixin:
    """Focus and per-account edits of a form; ``accounts`` is None on one account."""

    accounts: AccountsSession | None
    _focus: str | None
    _edits: dict[str | None, dict[str, pd.DataFrame]]
    notes: list[str]
    picker: Any

    @property
    def focused(self) -> str | None:
        """The account in focus (None: none, or a form of one account)."""
        return self._focus

    @contextmanager
    def focus(self, name: str) -> Iterator[None]:
        """Make ``name`` the account the form's state is of, for the ``with`` block."""
        if self.accounts is None:
            raise ToolkitError("this form edits one account: there is no account to focus")
        self.accounts.session(name)  # a known account, or a KeyError naming them
        before, self._focus = self._focus, name
        try:
            yield
        finally:
            self._focus = before

    def chosen_accounts(self) -> list[str]:
        """The accounts with selected campaigns, in the set's order."""
        by = self.picker.selected_by_account()
        return [n for n in (self.accounts.names if self.accounts else []) if n in by]

    def per_account(self, func: Callable[[], Any]) -> dict[str, Any]:
        """``func()`` with each account that has selected campaigns in focus, by name."""
        out = {}
        for name in self.chosen_accounts():
            with self.focus(name):
                out[name] = func()
        return out

    def for_each_account(self, func: Callable[[], Any]) -> None:
        """An edit: ``func()`` once (one account), or once per account with selected
        campaigns, that account in focus. One account refusing it keeps nothing of it, and
        the message names the account. What each account's ``func()`` says is shown
        together after the last: the edits' notes, else each account's lines, at the level
        of the most serious (an error, a note, then ok)."""
        if self.accounts is None or self._focus is not None:
            func()
            return
        names = self.chosen_accounts()
        if not names:
            raise ValueError("select campaigns first: an edit goes to the selected campaigns")
        saved = ({k: dict(v) for k, v in self._edits.items()}, list(self.notes))
        said: list[tuple[str, str]] = []
        name = names[0]
        try:
            for name in names:
                with self.focus(name), self._saying(said):
                    func()
            added = self.notes[len(saved[1]) :]
            if added:
                self.say("; ".join(added), "info")  # type: ignore[attr-defined]
            elif said:
                levels = [level for _, level in said]
                worst = next((x for x in ("error", "info", "ok") if x in levels), "info")
                self.say("; ".join(m for m, _ in said), worst)  # type: ignore[attr-defined]
        except ValueError as exc:
            self._edits, self.notes = saved
            raise ValueError(f"account {name}: {exc}; nothing of this edit kept") from exc
        except BaseException:
            self._edits, self.notes = saved
            raise
        finally:
            self._show_pending()  # type: ignore[attr-defined]
            self.redraw()  # type: ignore[attr-defined]

    @contextmanager
    def _saying(self, said: list[tuple[str, str]]) -> Iterator[None]:
        """What the form says meanwhile, gathered in ``said`` (and shown as it comes)."""
        shown = self.say  # type: ignore[attr-defined]

        def say(message: str, level: str = "info") -> None:
            said.append((message, level))
            shown(message, level)

        self.say = say
        try:
            yield
        finally:
            del self.say

    def has_edits(self) -> bool:
        return any(self._edits.values())

    def forget_edits(self) -> None:
        self._edits, self.notes = {}, []

    # ------------------------------------------------------------------ plans and runs

    def plan_set(self, one: Callable[[], Plan], allow: set[str]) -> PlanSet:
        """One plan per account with edits (``one()`` with the account in focus), made with
        its own client; the set's own guards checked."""
        assert self.accounts is not None
        plans: dict[str, Plan] = {}
        for name in self.accounts.names:
            if self._edits.get(name):
                with self.focus(name):
                    plans[name] = one()
        check_set_guards(plans, allow=allow)
        clients = {n: self.accounts.session(n).client for n in plans}
        return PlanSet(plans, clients=clients)

    def last_set(self, journal: Journal, source: str) -> tuple[str, dict[str, str]] | None:
        """The last set of runs ``source`` applied on these accounts (each on its own
        service and account), and the run of each account in it."""
        assert self.accounts is not None
        runs = journal.runs()
        if "run_set" not in runs:
            return None
        mine = runs[
            (runs["source"] == source)
            & runs["undoes"].isna()
            & runs["run_set"].notna()
            & runs["profile"].isin(self.accounts.names)
        ]
        keep = [self._is_own_run(r) for r in mine.itertuples(index=False)]
        mine = mine[keep] if len(mine) else mine
        if mine.empty:
            return None
        set_id = str(mine["run_set"].iloc[-1])
        rows = mine[mine["run_set"] == set_id]
        return set_id, dict(
            zip(rows["profile"].astype(str), rows["run_id"].astype(str), strict=True)
        )

    def _is_own_run(self, row: Any) -> bool:
        assert self.accounts is not None
        session = self.accounts.session(str(row.profile))
        same_service = str(row.base_url).rstrip("/") == service_of(session.client).rstrip("/")
        account = account_of(session.account)
        known = row.account is not None and not pd.isna(row.account)
        return same_service and (account is None or not known or int(row.account) == account)

    def undo_set_plans(self, journal: Journal, set_id: str) -> PlanSet:
        """The undo of each account's run of the set ``set_id``
        (:func:`~toolkit.bulk.undo_set.undo_set_plan`), each with its account's client;
        runs undone already are left out (the set's warnings say so)."""
        assert self.accounts is not None
        names = list(set_runs(journal, set_id))
        absent = [n for n in names if n not in self.accounts.sessions]
        if absent:
            raise ToolkitError(
                f"the set {set_id} also changed account(s) {', '.join(absent)}, not open in"
                f" this form: undo it with campaign-toolkit undo {set_id}"
            )
        clients = {n: self.accounts.session(n).client for n in names}
        return undo_set_plan(set_id, clients, journal=journal)


def item_total(plan: Plan | PlanSet) -> int:
    """The items a plan (or every plan of a set) sends."""
    if isinstance(plan, PlanSet):
        return sum(item_count(p) for p in plan.plans.values())
    return item_count(plan)


def counted(result: ApplyResult | SetResult) -> str:
    """A run's changes counted as the preview counts them; per account for a set."""
    if not isinstance(result, SetResult):
        return result.counted()
    parts = [f"{n}: {r.counted()}" for n, r in result.results.items()]
    parts += [f"{n}: stopped: {e}" for n, e in result.errors.items()]
    return "; ".join(parts) or "nothing sent"


def run_name(result: ApplyResult | SetResult) -> str:
    """``run <id>``, or ``runs <account> <id>, ...`` of a set."""
    if not isinstance(result, SetResult):
        return f"run {result.run_id}"
    runs = ", ".join(f"{n} {r}" for n, r in result.run_ids.items())
    return f"set {result.set_id} (runs {runs})"


def reloads(result: ApplyResult | SetResult) -> dict[str | None, list[int]]:
    """The campaigns a run touched, by account (``None``: a run of one account)."""
    results = result.results if isinstance(result, SetResult) else {None: result}
    return {
        name: [int(o.campaign_id) for o in r.outcomes if o.campaign_id is not None]
        for name, r in results.items()
    }


def set_result_html(result: SetResult) -> str:
    """A set's summary and its outcomes, ``account`` first (the first :data:`SHOWN_ROWS`)."""
    frame = result.to_frame()
    shown = frame.drop(columns=["previous"], errors="ignore").head(SHOWN_ROWS)
    shown = shown.astype(object).where(shown.notna(), "")
    more = len(frame) - len(shown)
    rest = f"<p>... and {more:,} more outcome(s): form.last_result.to_frame()</p>" if more else ""
    return (
        f"<pre>{html.escape(result.summary())}</pre>"
        f"{shown.to_html(index=False, escape=True, na_rep='')}{rest}"
    )


__all__ = [
    "ACCOUNT",
    "AccountsMixin",
    "counted",
    "item_total",
    "reloads",
    "run_name",
    "set_result_html",
]
