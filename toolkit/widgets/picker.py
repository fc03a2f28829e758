"""The campaign picker the forms share: filters, and one multi-select over the matching
campaigns (one widget whatever the number of campaigns).

The selection survives the filters: campaigns chosen and then filtered out stay selected
(the count says ``5 selected (2 hidden)``). A pasted list of ids (commas, spaces or new lines)
selects them and names those that are not in the account. The name filter matches an id's
start or a name's words at their start (``US`` finds "US Push 3", not "Push").

>>> picker = CampaignPicker(account.campaigns)                         # doctest: +SKIP
>>> picker.format.value = "push"; picker.select_all.click()           # doctest: +SKIP
>>> picker.paste.value = "1000001, 1000007"; picker.select_pasted.click()  # doctest: +SKIP
>>> picker.selected                                                    # doctest: +SKIP
>>> pasted_ids("1000001, 1000002\\n x1 1000001")
([1000001, 1000002], ['x1'])
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import ipywidgets as w
import numpy as np
import pandas as pd

from .. import spec
from .style import coloured, style_sheet

ANY = "(any)"
#: The column naming each campaign's account in a picker of several accounts.
ACCOUNT = "account"
_SPLIT = re.compile(r"[\s,;]+")


def pasted_ids(text: str) -> tuple[list[int], list[str]]:
    """The campaign ids of pasted ``text`` (once each, in order), and the bits that are not
    ids."""
    ids: dict[int, None] = {}
    bad: list[str] = []
    for token in _SPLIT.split(text or ""):
        if token.isdigit():
            ids[int(token)] = None
        elif token:
            bad.append(token)
    return list(ids), bad


def name_mask(names: pd.Series, text: str) -> pd.Series:
    """Names where ``text`` starts a word (case aside): ``us`` finds "US Push", not "Push".

    >>> name_mask(pd.Series(["US Push 3", "Push 4", "DK+US 5"]), "us").tolist()
    [True, False, True]
    """
    needle = re.escape(text.strip().lower())
    start = r"(?<!\w)" if re.match(r"\w", text.strip()) else ""
    return names.astype(str).str.lower().str.contains(start + needle, regex=True)


def _dropdown(description: str, options: Iterable[tuple[str, str | None]]) -> w.Dropdown:
    return w.Dropdown(
        options=[(ANY, None), *options],
        index=0,  # "(any)" shown: with value=None a dropdown shows no option at all
        description=description,
        style={"description_width": "initial"},
        layout=w.Layout(width="auto"),
    )


def option_labels(campaigns: pd.DataFrame) -> pd.Series:
    """``1000001 Name (push, CPC, Started)`` for each campaign, by position; with an
    ``account`` column, the account first: ``north  1000001 Name (...)``."""
    text = [campaigns[c].astype(str) for c in ("ad_format", "mode", "work_status")]
    names = campaigns["name"].astype(object).where(campaigns["name"].notna(), "").astype(str)
    first = campaigns[ACCOUNT].astype(str) + "  " if ACCOUNT in campaigns else ""
    return (
        first
        + campaigns["id"].astype(str)
        + "  "
        + names
        + "  ("
        + text[0]
        + ", "
        + text[1]
        + ", "
        + text[2]
        + ")"
    )


def campaign_keys(campaigns: pd.DataFrame) -> list[Any]:
    """The key of each campaign, by position: its id, or ``(account, id)`` when the table has
    an ``account`` column (campaign ids may repeat across accounts)."""
    ids = campaigns["id"].astype("int64").tolist()
    if ACCOUNT not in campaigns:
        return ids
    return list(zip(campaigns[ACCOUNT].astype(str).tolist(), ids, strict=True))


class CampaignPicker(w.VBox):
    """Filters (format, buying model, status, work status, name or id) and a multi-select
    of the campaigns that match; :attr:`selected` is the ids chosen, in the table's order.

    Widgets: ``format``, ``mode``, ``status``, ``work_status`` (Dropdowns), ``name`` (Text),
    ``campaigns`` (SelectMultiple: the matching campaigns), ``select_all`` and ``select_none``
    (Buttons, CSS classes ``ct-select-all`` and ``ct-select-none``), ``count`` (HTML,
    ``ct-count``), ``paste`` (Textarea, ``ct-paste-ids``), ``select_pasted`` (Button,
    ``ct-select-pasted``), ``paste_note`` (HTML, ``ct-paste-note``). The picker has the CSS
    class ``ct-picker``. Selected campaigns filtered out stay selected (``hidden``).

    Over several accounts (``campaigns`` with an ``account`` column first, as an
    :class:`~toolkit.frames.AccountSet` stacks them) the picker also has ``account`` (Dropdown,
    ``Account``, CSS class ``ct-account``: one account or all), each campaign is shown after its
    account, and :attr:`selected` is ``(account, campaign id)`` pairs: an id alone could be
    campaigns of two accounts.
    """

    def __init__(self, campaigns: pd.DataFrame, selected: Iterable[Any] | None = None) -> None:
        self.by_account = ACCOUNT in campaigns
        names = campaigns[ACCOUNT].astype(str).unique().tolist() if self.by_account else []
        self.account = _dropdown("Account", [(n, n) for n in names])
        self.account.add_class("ct-account")
        self.format = _dropdown("Format", [(f.label, f.code) for f in spec.FORMATS.values()])
        self.mode = _dropdown("Buying model", [(m, m) for m in spec.MODES])
        self.status = _dropdown("Status", [(s, s) for s in spec.CAMPAIGN_STATUSES])
        self.work_status = _dropdown("Work status", [(s, s) for s in spec.WORK_STATUSES])
        self.name = w.Text(
            description="Name",
            placeholder="part of a name or an id",
            continuous_update=True,
            layout=w.Layout(width="auto"),
        )
        self.campaigns = w.SelectMultiple(
            options=[],
            rows=10,
            description="Campaigns",
            layout=w.Layout(width="95%"),
        )
        self.select_all = w.Button(
            description="Select all matching", tooltip="select every campaign that matches"
        )
        self.select_none = w.Button(description="Select none", tooltip="clear the selection")
        self.select_all.add_class("ct-select-all")
        self.select_none.add_class("ct-select-none")
        self.count = w.HTML()
        self.count.add_class("ct-count")
        self._make_paste()
        self._listeners: list[Callable[[], None]] = []
        self._quiet = False
        self._chosen: set[Any] = set()
        self.set_campaigns(campaigns, selected)
        boxes = (self.account, self.format, self.mode, self.status, self.work_status, self.name)
        for box in boxes:
            box.observe(lambda _change: self.refilter(), "value")
        self.campaigns.observe(lambda _change: self._picked(), "value")
        self.select_all.on_click(lambda _b: self._select(self._chosen | set(self.matching)))
        self.select_none.on_click(lambda _b: self._select(()))
        self.select_pasted.on_click(lambda _b: self.take_pasted())
        first = [self.account] if self.by_account else []
        filters = w.HBox([*first, self.format, self.mode, self.status, self.work_status])
        buttons = w.HBox([self.name, self.select_all, self.select_none, self.count])
        pasting = w.HBox([self.paste, self.select_pasted, self.paste_note])
        super().__init__([style_sheet(), filters, buttons, self.campaigns, pasting])
        self.add_class("ct-picker")

    def _make_paste(self) -> None:
        self.paste = w.Textarea(
            description="Ids",
            placeholder="paste campaign ids: commas, spaces or one a line",
            rows=2,
            layout=w.Layout(width="50%"),
        )
        self.paste.add_class("ct-paste-ids")
        self.select_pasted = w.Button(
            description="Select pasted ids", tooltip="add the pasted ids to the selection"
        )
        self.select_pasted.add_class("ct-select-pasted")
        self.paste_note = w.HTML()
        self.paste_note.add_class("ct-paste-note")

    # ------------------------------------------------------------------ state

    def set_campaigns(self, campaigns: pd.DataFrame, selected: Iterable[Any] | None = None) -> None:
        """Show ``campaigns`` (the account's table, or a set's with ``account`` first); keep
        the selection that is still there."""
        if (ACCOUNT in campaigns) != self.by_account:
            raise ValueError(
                "this picker shows "
                + ("several accounts" if self.by_account else "one account")
                + ": give it a campaigns table "
                + ("with" if self.by_account else "without")
                + " an 'account' column"
            )
        keep = set(self._chosen if selected is None else self._keys_of(selected))
        self.table = campaigns.reset_index(drop=True)
        self.ids = self.table["id"].astype("int64").to_numpy()
        self.entries = np.empty(len(self.table), dtype=object)
        self.entries[:] = campaign_keys(self.table)
        self.labels = option_labels(self.table).to_numpy()
        self._chosen = {k for k in self.entries if k in keep}
        self.refilter()

    def _keys_of(self, selected: Iterable[Any]) -> list[Any]:
        """Campaigns to select as keys: ids, or (account, id) pairs over several accounts
        (an id alone is refused there: it could be campaigns of two accounts)."""
        if not self.by_account:
            return [int(i) for i in selected]
        keys = []
        for item in selected:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise ValueError(
                    f"select {item!r} as an (account, campaign id) pair: this picker shows"
                    " several accounts, where an id alone could be campaigns of two"
                )
            keys.append((str(item[0]), int(item[1])))
        return keys

    @property
    def selected(self) -> tuple[Any, ...]:
        """The campaigns chosen, those filtered out included, in the table's order: their ids,
        or ``(account, id)`` pairs over several accounts."""
        return tuple(k for k in self.entries if k in self._chosen)

    def selected_by_account(self) -> dict[str, list[int]]:
        """Over several accounts: the ids chosen in each account (accounts with none left
        out), in the table's order."""
        out: dict[str, list[int]] = {}
        for name, cid in self.selected if self.by_account else ():
            out.setdefault(name, []).append(cid)
        return out

    @property
    def hidden(self) -> tuple[Any, ...]:
        """The chosen campaigns the filters hide."""
        shown = set(self.matching)
        return tuple(i for i in self.selected if i not in shown)

    @property
    def matching(self) -> tuple[Any, ...]:
        return tuple(v for _label, v in self.campaigns.options)

    def _pasted_scope(self) -> dict[int, list[Any]]:
        """Campaign id -> the keys a pasted id may select (over several accounts: those of
        the account the filter shows, else of every account)."""
        keys = self.entries
        if self.by_account and self.account.value is not None:
            keys = keys[(self.table[ACCOUNT].astype(str) == self.account.value).to_numpy()]
        scope: dict[int, list[Any]] = {}
        for key in keys:
            scope.setdefault(key[1] if self.by_account else key, []).append(key)
        return scope

    def take_pasted(self) -> list[Any]:
        """Add the ids pasted in ``paste`` to the selection; the note names the ids that are
        not in the account and the bits that are not ids. Over several accounts an id of
        campaigns in two accounts is not selected: the note says to pick one under
        Account. Returns the campaigns selected."""
        ids, bad = pasted_ids(self.paste.value)
        scope = self._pasted_scope()
        found = [scope[i][0] for i in ids if len(scope.get(i, ())) == 1]
        twice = [
            f"{i} ({', '.join(a for a, _ in scope[i])})" for i in ids if len(scope.get(i, ())) > 1
        ]
        missing = [str(i) for i in ids if i not in scope] + bad
        self._select(self._chosen | set(found))
        text = f"{len(found):,} pasted id(s) selected"
        if missing:
            more = f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
            shown = ", ".join(missing[:10]) + more
            whose = "this account"
            if self.by_account:
                shown_one = self.account.value
                whose = f"account {shown_one}" if shown_one else "these accounts"
            text += f"; not campaigns of {whose}: {shown}"
        if twice:
            text += (
                f"; in several accounts, not selected (pick one under Account): {', '.join(twice)}"
            )
        self.paste_note.value = coloured(text, "error" if missing or twice else "ok")
        return found

    def on_change(self, listener: Callable[[], None]) -> None:
        """Call ``listener()`` whenever the selection changes."""
        self._listeners.append(listener)

    def _mask(self) -> pd.Series:
        t = self.table
        mask = pd.Series(True, index=t.index)
        for column, box in (
            ("ad_format", self.format),
            ("mode", self.mode),
            ("status", self.status),
            ("work_status", self.work_status),
            (ACCOUNT, self.account),
        ):
            if box.value is not None and column in t:
                mask &= t[column].astype(str) == box.value
        text = self.name.value.strip()
        if text:
            mask &= name_mask(t["name"], text) | t["id"].astype(str).str.startswith(text)
        return mask

    def refilter(self) -> None:
        """Redraw the list of matching campaigns; the chosen ones stay chosen (hidden when
        they do not match)."""
        mask = self._mask().to_numpy()
        keys, labels = self.entries[mask], self.labels[mask]
        self._quiet = True
        try:
            self.campaigns.options = list(zip(labels.tolist(), keys.tolist(), strict=True))
            self.campaigns.value = tuple(k for k in keys if k in self._chosen)
        finally:
            self._quiet = False
        self._changed()

    def _picked(self) -> None:
        """The multi-select changed: its campaigns chosen, the hidden ones kept."""
        if self._quiet:
            return
        shown = set(self.matching)
        self._chosen = {i for i in self._chosen if i not in shown} | set(
            self._keys_of(self.campaigns.value)
        )
        self._changed()

    def _select(self, ids: Iterable[Any]) -> None:
        """Choose exactly ``ids`` (keys: shown or hidden)."""
        self._chosen = set(self._keys_of(ids))
        self.refilter()

    def _changed(self) -> None:
        if self._quiet:
            return
        hidden = len(self.hidden)
        more = f" ({hidden:,} hidden)" if hidden else ""
        self.count.value = (
            f"{len(self.campaigns.options):,} of {len(self.ids):,} match, "
            f"<b>{len(self._chosen):,}</b> selected{more}"
        )
        for listener in list(self._listeners):
            listener()


__all__ = ["ACCOUNT", "CampaignPicker", "campaign_keys", "name_mask", "option_labels", "pasted_ids"]
