"""What every form has: the picker, the edits kept as tables, Preview, Apply with a progress
bar, Undo, the guards' allow boxes and one status line.

A form keeps the tables it edits (``form.edited``, in the loaders' schemas) beside the loaded
account; :meth:`Form.plan` hands them to the planner with the account as the base and as live
state, so a form's plan is the same kind of :class:`~toolkit.bulk.plan.Plan` as a workbook's:
the same preview, guards, journal and undo.
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w
import pandas as pd

from ..bulk.guards import GUARDS
from ..bulk.journal import Journal
from ..bulk.outcomes import ApplyResult
from ..bulk.plan import Plan, make_plan
from ..bulk.plan_set import SetResult
from ..bulk.undo import nothing_to_undo, undo
from ..errors import PlanRefused, ToolkitError
from ..text import single_spaced
from .accounts import AccountsSession, is_set_source
from .form_accounts import AccountsMixin, counted, item_total, reloads, run_name, set_result_html
from .picker import CampaignPicker
from .runs import last_run, undo_run
from .session import Session
from .style import coloured, style_sheet

log = logging.getLogger("toolkit.widgets")

#: Rows of a run's outcomes shown in the form (the rest counted).
SHOWN_OUTCOMES = 200


def one_line(exc: BaseException) -> str:
    """An exception as one line: its class when the message says nothing more."""
    return single_spaced(exc) or type(exc).__name__


def button(description: str, tooltip: str, css: str | None = None, style: str = "") -> w.Button:
    b = w.Button(
        description=description,
        tooltip=tooltip,
        button_style=style,
        layout=w.Layout(width="auto", min_width="8em", flex="0 0 auto"),  # the whole label
    )
    if css:
        b.add_class(css)
    return b


class Form(AccountsMixin, w.VBox):
    """A form over some campaigns of an account: subclasses build the editing widgets
    (:meth:`build`) and redraw them when the selection or the account changes (:meth:`redraw`).

    Attributes the tests and the notebook rely on: ``session`` (client, account, journal),
    ``picker``, ``edited`` (the edited tables), ``notes`` (the edits in words),
    ``preview_button`` (``ct-preview``), ``apply_button`` (``ct-apply``), ``undo_button``
    (``ct-undo``), ``clear_button`` (``ct-clear``), ``allow`` (guard -> Checkbox, described
    ``allow <guard>``, unticked after every run), ``progress`` (IntProgress, ``ct-progress``,
    counting items), ``status`` (HTML, ``ct-status``; its text in ``message``, ``level``
    info/ok/error), ``plan_view`` (HTML, ``ct-plan``), ``result_view`` (HTML, ``ct-result``),
    ``last_plan``, ``last_result``, ``runs`` (the runs applied here), ``busy`` (a run is in
    flight: the buttons are disabled and the form has the CSS class ``ct-busy``).

    Runs are journaled with the form's :attr:`source` (``form:<key>``): Undo finds the form's
    last run in the journal, also in a new kernel over the same journal file.

    ``source`` may name several accounts (an :class:`~toolkit.frames.AccountSet`, profile
    names, ``"all"``, names -> clients, or an
    :class:`~toolkit.widgets.accounts.AccountsSession`; ``client=`` then maps names to
    clients): ``accounts`` is their session, the picker selects ``(account, campaign id)``
    pairs, the plan is a :class:`~toolkit.bulk.plan_set.PlanSet` of one plan per account and
    a run a :class:`~toolkit.bulk.plan_set.SetResult` (see :mod:`toolkit.widgets.form_accounts`).
    """

    css = "ct-form"
    title = "Form"
    #: The form's name in the journal (``form:<key>``).
    key = "form"

    def __init__(
        self,
        source: Any,
        campaign_ids: Iterable[int] | None = None,
        *,
        client: Any = None,
        journal: Journal | str | os.PathLike[str] | None = None,
        picker: CampaignPicker | None = None,
    ) -> None:
        self.accounts: AccountsSession | None = None
        self._focus: str | None = None
        if is_set_source(source):
            self.accounts = owner = AccountsSession.of(source, clients=client, journal=journal)
            campaigns = owner.campaigns
        else:
            self._session = owner = Session.of(source, client=client, journal=journal)
            campaigns = owner.account.campaigns
        own_picker = picker is None
        self.picker = picker or CampaignPicker(campaigns, campaign_ids)
        if self.picker.by_account != (self.accounts is not None):
            raise ValueError("the picker and the form must both be of one account or of a set")
        self._edits: dict[str | None, dict[str, pd.DataFrame]] = {}
        self.notes: list[str] = []
        self.runs: list[str] = []
        self.last_plan: Plan | None = None
        self.last_result: ApplyResult | None = None
        self.message, self.level = "", "info"
        self.busy = False
        self._make_common()
        body = self.build()
        children = ([self.picker] if own_picker else []) + body + self._common()
        super().__init__(children)
        self.add_class("ct-form")
        self.add_class(self.css)
        self.picker.on_change(self._selection_changed)
        owner.listeners.append(self._account_changed)
        self._show_pending()
        self._guarded("redraw", self.redraw)

    # ------------------------------------------------------------------ layout

    def _make_common(self) -> None:
        self.pending = w.HTML()
        self.clear_button = button("Clear edits", "forget the edits not applied", "ct-clear")
        self.allow = {
            g: w.Checkbox(value=False, description=f"allow {g}", indent=False) for g in GUARDS
        }
        for g, box in self.allow.items():
            box.add_class(f"ct-allow-{g.replace('_', '-')}")
        self.preview_button = button("Preview", "show the calls the edits mean", "ct-preview")
        self.apply_button = button("Apply", "send the edits", "ct-apply", "warning")
        self.undo_button = button("Undo last run", "revert this form's last run", "ct-undo")
        self.progress = w.IntProgress(value=0, min=0, max=1, description="Items")
        self.progress.add_class("ct-progress")
        self.status = w.HTML()
        self.status.add_class("ct-status")
        self.plan_view = w.HTML()
        self.plan_view.add_class("ct-plan")
        self.result_view = w.HTML()
        self.result_view.add_class("ct-result")
        self.clear_button.on_click(lambda _b: self._guarded("clear", self.clear))
        self.preview_button.on_click(lambda _b: self._guarded("preview", self.preview))
        self.apply_button.on_click(lambda _b: self._guarded("apply", self.apply))
        self.undo_button.on_click(lambda _b: self._guarded("undo", self.undo_last))

    def _common(self) -> list[w.Widget]:
        actions = w.HBox([self.preview_button, self.apply_button, self.undo_button, self.progress])
        return [
            style_sheet(),
            w.HBox([self.pending, self.clear_button]),
            w.HBox(list(self.allow.values())),
            actions,
            self.status,
            self.plan_view,
            self.result_view,
        ]

    def build(self) -> list[w.Widget]:  # pragma: no cover - every form builds its own
        raise NotImplementedError

    def redraw(self) -> None:
        """Show the state of the selected campaigns (with the edits)."""

    # ------------------------------------------------------------------ state

    @property
    def session(self) -> Session:
        """The client, account and journal of the form; over several accounts, those of the
        account in focus (:meth:`focus`)."""
        if self.accounts is None:
            return self._session
        if self._focus is None:
            raise ToolkitError(
                "this form edits several accounts: form.accounts.session(name) is one's"
                " session, or use 'with form.focus(name):'"
            )
        return self.accounts.session(self._focus)

    @property
    def journal(self) -> Any:
        """The journal the form's runs go to (one for every account)."""
        return (self.accounts or self._session).journal

    @property
    def edited(self) -> dict[str, pd.DataFrame]:
        """The edited tables (of the account in focus, over several accounts)."""
        return self._edits.setdefault(self._focus, {})

    @property
    def account(self) -> Any:
        return self.session.account

    @property
    def source(self) -> str:
        """The form's name in the journal: ``form:bids``."""
        return f"form:{self.key}"

    @property
    def selected(self) -> tuple[Any, ...]:
        """The campaigns selected: ids; over several accounts ``(account, id)`` pairs, or the
        ids of the account in focus."""
        if self._focus is None:
            return self.picker.selected
        return tuple(self.picker.selected_by_account().get(self._focus, ()))

    def table(self, name: str) -> pd.DataFrame:
        """The table ``name`` with this form's edits."""
        found = self.edited.get(name)
        return self.account.table(name) if found is None else found

    def edit(self, name: str, df: pd.DataFrame, note: str) -> None:
        """Keep ``df`` as the edited table ``name``; ``note`` says the edit in words. Refused
        (nothing kept) when no campaign is selected."""
        if not self.selected:
            raise ValueError("select campaigns first: an edit goes to the selected campaigns")
        self.edited[name] = df
        if self._focus is not None:  # one account's part of an edit of several
            self.notes.append(f"{self._focus}: {note}")
            self.say(self.notes[-1], "info")
            return  # redrawn once, after every account's part
        self.notes.append(note)
        self._show_pending()
        self.say(note, "info")
        self.redraw()

    def clear(self) -> None:
        self.forget_edits()
        self.plan_view.value = ""
        self._show_pending()
        self.say("edits cleared", "info")
        self.redraw()

    def _show_pending(self) -> None:
        if not self.notes:
            self.pending.value = "<i>no edit yet</i>"
            return
        shown = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes[-10:])
        more = len(self.notes) - 10
        rest = f"<li>... and {more} earlier</li>" if more > 0 else ""
        self.pending.value = f"<b>{len(self.notes)} edit(s) not applied</b><ul>{rest}{shown}</ul>"

    def say(self, message: str, level: str = "info") -> None:
        """One line in the status widget."""
        self.message, self.level = message, level
        self.status.value = coloured(message, level)

    def _guarded(self, action: str, func: Callable[[], Any]) -> None:
        """``func()``, its error shown as one line in the form, never as a traceback."""
        try:
            func()
        except PlanRefused as exc:
            details = "; ".join(exc.details[:5])
            more = f" (+{len(exc.details) - 5} more)" if len(exc.details) > 5 else ""
            self.say(
                f"Refused by the guard {exc.guard}: {details}{more}. Nothing was sent; tick "
                f"'allow {exc.guard}' to go ahead.",
                "error",
            )
        except ValueError as exc:  # a bad value: its message says where and what
            self.say(f"{action}: {one_line(exc)}", "error")
        except Exception as exc:  # noqa: BLE001 - shown in the form, not as a traceback
            log.debug("%s failed", action, exc_info=True)
            self.say(f"{action}: {type(exc).__name__}: {one_line(exc)}", "error")

    def _selection_changed(self) -> None:
        self._guarded("redraw", self.redraw)

    def _account_changed(self) -> None:
        self._guarded("redraw", self.redraw)

    # ------------------------------------------------------------------ plan, apply, undo

    def allowed(self) -> set[str]:
        return {g for g, box in self.allow.items() if box.value}

    def plan(self) -> Any:
        """The plan of this form's edits: the edited tables against the loaded account; over
        several accounts a :class:`~toolkit.bulk.plan_set.PlanSet` of one plan per account
        with edits, each made with its account's own client."""
        if self.accounts is not None and self._focus is None:
            self.last_plan = self.plan_set(self.plan, self.allowed())
            return self.last_plan
        base = {name: self.account.table(name) for name in self.edited}
        plan = make_plan(
            self.session.client,
            dict(self.edited),
            base=base,
            live=self.account,
            allow=self.allowed(),
            **self.plan_options(),
        )
        plan.source = self.source
        self.last_plan = plan
        return plan

    def plan_options(self) -> dict[str, Any]:
        """More options of the planner for this form's plans (none here; the bid form gives
        the minimum prices it has asked, so that ``bid_jump`` checks new bids against them)."""
        return {}

    def preview(self) -> Any:
        plan = self.plan()
        self.plan_view.value = plan._repr_html_()
        if not len(plan):
            self.say("Nothing to apply: no edit changes the account", "info")
            return plan
        changes = len(plan.changes())
        self.say(f"{len(plan)} call(s), {changes} change(s); Apply sends them", "info")
        return plan

    def apply(self) -> Any:
        """Preview the pending edits and send them (journaled). With nothing pending (a
        second click on Apply) it says so, sends nothing and leaves the last result shown.
        Over several accounts each account's plan goes with its own client (a
        :class:`~toolkit.bulk.plan_set.SetResult`)."""
        if not self.has_edits():
            last = f"; the last run, {self.runs[-1]}, is shown below" if self.runs else ""
            self.say(f"Nothing to apply: no edit pending{last}", "info")
            return None
        plan = self.preview()
        if not len(plan):
            return None
        options = self._apply_options()
        if self.accounts is not None:
            result = self._run("Applying", lambda: plan.apply(**options), plan)
            self.runs.append(str(result.set_id))
        else:
            result = self._run(
                "Applying", lambda: plan.apply(self._session.client, **options), plan
            )
            self.runs.append(str(result.run_id))
        self.say(f"applied: {counted(result)}; {run_name(result)}", _level(result))
        self.forget_edits()
        self._show_pending()
        self._reload(result)
        return result

    def undo_last(self) -> ApplyResult | None:
        """Undo this form's last run (of the same form and account, found in the journal, so
        also after a reload), once: when it is undone already, say so and send nothing (an
        earlier run is never undone in its place). Over several accounts: the form's last set
        of runs, each account's run undone with its own client."""
        if self.accounts is not None:
            return self._undo_set()
        client, journal = self.session.client, self.session.journal
        found = last_run(journal, self.source, client, self.account)
        if found is None:
            self.say(f"No run of this form to undo in the journal {journal.path}", "info")
            return None
        if found.undone_by is not None:
            self.say(
                f"Run {found.run_id} is already undone (by run {found.undone_by}); nothing"
                " sent. Undo takes back this form's last run only.",
                "info",
            )
            return None
        plan, nothing = undo_run(client, found.run_id, journal)
        if nothing:
            self.say(nothing, "info")
            return None
        result = self._run(
            f"Undoing run {found.run_id}",
            lambda: undo(client, found.run_id, journal=journal, progress=False, plan=plan),
            plan,
        )
        self.say(f"undone run {found.run_id}: {_counts(result)}", _level(result))
        self._reload(result)
        return result

    def _undo_set(self) -> Any:
        journal = self.journal
        found = self.last_set(journal, self.source)
        if found is None:
            self.say(f"No run of this form to undo in the journal {journal.path}", "info")
            return None
        set_id, _runs = found
        plans = self.undo_set_plans(journal, set_id)
        idle = plans.warnings + [
            f"account {n}: {nothing_to_undo(plans.undoes[n], p)}"
            for n, p in plans.plans.items()
            if not len(p)
        ]
        if not len(plans):
            self.say(f"Nothing to undo of {set_id}; nothing sent: {'; '.join(idle)}", "info")
            return None
        result = self._run(f"Undoing {set_id}", lambda: plans.apply(**self._apply_options()), plans)
        left = f"; {'; '.join(idle)}" if idle else ""
        self.say(f"undone {set_id}: {counted(result)}{left}", _level(result))
        self._reload(result)
        return result

    def _apply_options(self) -> dict[str, Any]:
        return {"progress": False, "journal": self.journal}

    def _set_busy(self, busy: bool) -> None:
        """Disable Preview, Apply, Undo and Clear while a run is in flight (CSS ``ct-busy``)."""
        self.busy = busy
        for b in (self.preview_button, self.apply_button, self.undo_button, self.clear_button):
            b.disabled = busy
        (self.add_class if busy else self.remove_class)("ct-busy")

    def _run(self, doing: str, func: Callable[[], Any], plan: Any) -> Any:
        """``func()`` (a run of ``plan``, or of a set), the form busy meanwhile and the
        progress bar counting the items answered; the allow boxes unticked after it, whatever
        happened."""
        journal = self.journal
        total = item_total(plan)
        self.progress.value, self.progress.max = 0, max(1, total)

        def answered(_seq: int, items: int) -> None:
            done = self.progress.value + items
            self.progress.max = max(self.progress.max, done)
            self.progress.value = done

        self._set_busy(True)
        self.say(f"{doing}: {total:,} item(s) in {len(plan):,} call(s)...", "info")
        journal.on_answer = answered
        try:
            result = func()
        finally:
            journal.on_answer = None
            self._set_busy(False)
            for box in self.allow.values():
                box.value = False
        self.progress.value = self.progress.max
        self.last_result = result
        self.result_view.value = (
            set_result_html(result) if isinstance(result, SetResult) else result_html(result)
        )
        return result

    def _reload(self, result: Any) -> None:
        touched = reloads(result)
        if self.accounts is None:
            failed = self._session.reload(touched[None])
        else:
            failed = self.accounts.reload({str(n): ids for n, ids in touched.items()})
        if failed:
            self.say(f"{self.message}; {len(failed)} campaign read(s) failed: {failed[0]}", "error")


def _counts(result: ApplyResult) -> str:
    """The plan's changes counted as the preview counts them: ``3 of 3 changes``."""
    return result.counted()


def _level(result: ApplyResult) -> str:
    return "ok" if result.ok else "error"


def result_html(result: ApplyResult) -> str:
    """A run's summary and its outcomes (the first :data:`SHOWN_OUTCOMES` rows)."""
    frame = result.to_frame()
    shown = frame.drop(columns=["previous"]).head(SHOWN_OUTCOMES)
    shown = shown.astype(object).where(shown.notna(), "")  # a missing value shows empty
    more = len(frame) - len(shown)
    rest = f"<p>... and {more:,} more outcome(s): form.last_result.to_frame()</p>" if more else ""
    return (
        f"<pre>{html.escape(result.summary())}</pre>"
        f"{shown.to_html(index=False, escape=True, na_rep='')}{rest}"
    )


__all__ = ["Form", "button", "one_line", "result_html"]
