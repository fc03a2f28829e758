"""``toolkit.widgets.open(client)``: the campaign picker above the forms, in tabs.

>>> import toolkit.widgets
>>> app = toolkit.widgets.open(client)                                 # doctest: +SKIP
>>> app.forms["bids"].plan()                                           # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

import ipywidgets as w

from ..bulk.journal import Journal
from .bids import BidForm
from .form import Form
from .lists import ListForm
from .picker import CampaignPicker
from .session import Session
from .targeting import TargetingForm

#: The forms of the tabs, by key, in order.
FORMS: dict[str, type[Form]] = {"targeting": TargetingForm, "bids": BidForm, "lists": ListForm}


class App(w.VBox):
    """The picker (shared) and one tab per form; ``forms`` maps ``targeting``, ``bids`` and
    ``lists`` to the forms, ``tabs`` is the Tab. CSS class ``ct-app``."""

    def __init__(self, session: Session, campaign_ids: Iterable[int] | None = None) -> None:
        self.session = session
        self.picker = CampaignPicker(session.account.campaigns, campaign_ids)
        self.forms: dict[str, Form] = {
            key: cls(session, picker=self.picker) for key, cls in FORMS.items()
        }
        self.tabs = w.Tab(children=list(self.forms.values()))
        self.tabs.titles = tuple(f.title for f in self.forms.values())
        self.tabs.add_class("ct-tabs")
        session.listeners.append(self._reloaded)
        super().__init__([self.picker, self.tabs])
        self.add_class("ct-app")

    def _reloaded(self) -> None:
        self.picker.set_campaigns(self.session.account.campaigns)


def open(  # noqa: A001 - toolkit.widgets.open, as the brief of the module says
    source: Any,
    campaign_ids: Iterable[int] | None = None,
    *,
    client: Any = None,
    journal: Journal | str | os.PathLike[str] | None = None,
    progress: bool = True,
) -> App:
    """The picker and the forms in tabs, over a client (the account is loaded, with a
    progress bar) or a loaded Account (``client=`` to plan and apply). Shown when it is the
    last expression of a cell (or with ``display``)."""
    session = Session.of(source, client=client, journal=journal, progress=progress)
    return App(session, campaign_ids)


__all__ = ["FORMS", "App", "open"]
