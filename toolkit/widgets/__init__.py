"""Notebook forms (ipywidgets) that edit campaigns and produce the same plans as workbooks.

>>> import toolkit.widgets
>>> toolkit.widgets.open(client)        # the picker and the forms in tabs   # doctest: +SKIP
>>> form = toolkit.widgets.BidForm(client, [1000001])                        # doctest: +SKIP
>>> form.plan()                          # the planner's Plan of the form's edits  # doctest: +SKIP

Every form (:class:`TargetingForm`, :class:`BidForm`, :class:`ListForm`) shares a campaign
picker (:class:`CampaignPicker`), keeps its edits as tables, previews them as a plan, applies
it with a progress bar (journaled) and undoes its last run. Over several accounts
(``toolkit.widgets.open(accounts="all")``) the picker filters by account and a form's plan is
one plan per account (:mod:`toolkit.widgets.form_accounts`). ``import toolkit`` does not import
ipywidgets; ``import toolkit.widgets`` does.
"""

from __future__ import annotations

from .accounts import AccountsSession
from .app import open
from .bids import BidForm
from .form import Form
from .lists import ListForm
from .picker import CampaignPicker
from .session import Session
from .targeting import TargetingForm

__all__ = [
    "AccountsSession",
    "BidForm",
    "CampaignPicker",
    "Form",
    "ListForm",
    "Session",
    "TargetingForm",
    "open",
]
