"""``toolkit.widgets.open(client)``: the campaign picker above the forms, in tabs.

>>> import toolkit.widgets
>>> app = toolkit.widgets.open(client)                                 # doctest: +SKIP
>>> app.forms["bids"].plan()                                           # doctest: +SKIP
>>> app = toolkit.widgets.open(accounts="all")   # several accounts    # doctest: +SKIP
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable
from typing import Any

import ipywidgets as w

from ..bulk.journal import Journal
from .accounts import AccountsSession
from .bids import BidForm
from .form import Form
from .lists import ListForm
from .picker import CampaignPicker
from .session import Session
from .style import coloured
from .targeting import TargetingForm

#: The forms of the tabs, by key, in order.
FORMS: dict[str, type[Form]] = {"targeting": TargetingForm, "bids": BidForm, "lists": ListForm}
#: The forms of the tabs over several accounts.
SET_FORMS: dict[str, type[Form]] = dict(FORMS)


class App(w.VBox):
    """The picker (shared) and one tab per form; ``forms`` maps ``targeting``, ``bids`` and
    ``lists`` to the forms, ``tabs`` is the Tab. CSS class ``ct-app``.

    Over several accounts (``session`` an :class:`~toolkit.widgets.accounts.AccountsSession`)
    the picker has the account filter and selects ``(account, campaign id)`` pairs, each form
    editing every account's campaigns; ``failed`` (HTML, ``ct-failed``) names the accounts that
    could not be loaded."""

    def __init__(
        self, session: Session | AccountsSession, campaign_ids: Iterable[Any] | None = None
    ) -> None:
        self.session = session
        several = isinstance(session, AccountsSession)
        self.picker = CampaignPicker(self._campaigns(), campaign_ids)
        forms = SET_FORMS if several else FORMS
        self.forms: dict[str, Form] = {
            key: cls(session, picker=self.picker) for key, cls in forms.items()
        }
        self.failed = w.HTML(failed_accounts(session) if several else "")
        self.failed.add_class("ct-failed")
        self.tabs = w.Tab(children=list(self.forms.values()))
        self.tabs.titles = tuple(f.title for f in self.forms.values())
        self.tabs.add_class("ct-tabs")
        session.listeners.append(self._reloaded)
        super().__init__(
            [self.failed, self.picker, self.tabs] if several else [self.picker, self.tabs]
        )
        self.add_class("ct-app")

    def _campaigns(self) -> Any:
        if isinstance(self.session, AccountsSession):
            return self.session.campaigns
        return self.session.account.campaigns

    def _reloaded(self) -> None:
        self.picker.set_campaigns(self._campaigns())


def failed_accounts(session: AccountsSession) -> str:
    """A line naming the accounts of the set that could not be loaded (empty: none)."""
    f = session.failures
    whole = f[f["campaign_id"].isna()]
    if whole.empty:
        return ""
    named = "; ".join(
        f"{html.escape(str(r.account))}: {html.escape(str(r.error))}"
        for r in whole.itertuples(index=False)
    )
    return coloured(f"not loaded (left out of the forms): {named}", "error")


def open(  # noqa: A001 - toolkit.widgets.open, as the brief of the module says
    source: Any = None,
    campaign_ids: Iterable[Any] | None = None,
    *,
    client: Any = None,
    journal: Journal | str | os.PathLike[str] | None = None,
    progress: bool = True,
    accounts: Any = None,
) -> App:
    """The picker and the forms in tabs, over a client (the account is loaded, with a
    progress bar) or a loaded Account (``client=`` to plan and apply). Shown when it is the
    last expression of a cell (or with ``display``).

    ``accounts=`` opens them over several accounts instead: ``"all"`` (every profile), a
    comma list or a list of profile names, names -> clients, or a loaded
    :class:`~toolkit.frames.AccountSet` (each member connected by its profile, or
    ``client=`` names -> clients); ``campaign_ids`` are then ``(account, id)`` pairs."""
    if (source is None) == (accounts is None):
        raise ValueError("pass a client (or a loaded Account) or accounts=, one of the two")
    if accounts is not None:
        session: Session | AccountsSession = AccountsSession.of(
            accounts, clients=client, journal=journal, progress=progress
        )
    else:
        session = Session.of(source, client=client, journal=journal, progress=progress)
    return App(session, campaign_ids)


__all__ = ["FORMS", "SET_FORMS", "App", "failed_accounts", "open"]
