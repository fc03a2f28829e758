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

import ipywidgets as w
import pandas as pd

from .. import spec
from .style import coloured, style_sheet

ANY = "(any)"
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
        value=None,
        description=description,
        style={"description_width": "initial"},
        layout=w.Layout(width="auto"),
    )


def option_labels(campaigns: pd.DataFrame) -> pd.Series:
    """``1000001 Name (push, CPC, Started)`` for each campaign, by position."""
    text = [campaigns[c].astype(str) for c in ("ad_format", "mode", "work_status")]
    names = campaigns["name"].astype(object).where(campaigns["name"].notna(), "").astype(str)
    return (
        campaigns["id"].astype(str)
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


class CampaignPicker(w.VBox):
    """Filters (format, buying model, status, work status, name or id) and a multi-select
    of the campaigns that match; :attr:`selected` is the ids chosen, in the table's order.

    Widgets: ``format``, ``mode``, ``status``, ``work_status`` (Dropdowns), ``name`` (Text),
    ``campaigns`` (SelectMultiple: the matching campaigns), ``select_all`` and ``select_none``
    (Buttons, CSS classes ``ct-select-all`` and ``ct-select-none``), ``count`` (HTML,
    ``ct-count``), ``paste`` (Textarea, ``ct-paste-ids``), ``select_pasted`` (Button,
    ``ct-select-pasted``), ``paste_note`` (HTML, ``ct-paste-note``). The picker has the CSS
    class ``ct-picker``. Selected campaigns filtered out stay selected (``hidden``).
    """

    def __init__(self, campaigns: pd.DataFrame, selected: Iterable[int] | None = None) -> None:
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
        self._chosen: set[int] = set()
        self.set_campaigns(campaigns, selected)
        for box in (self.format, self.mode, self.status, self.work_status, self.name):
            box.observe(lambda _change: self.refilter(), "value")
        self.campaigns.observe(lambda _change: self._picked(), "value")
        self.select_all.on_click(lambda _b: self._select(self._chosen | set(self.matching)))
        self.select_none.on_click(lambda _b: self._select(()))
        self.select_pasted.on_click(lambda _b: self.take_pasted())
        filters = w.HBox([self.format, self.mode, self.status, self.work_status])
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

    def set_campaigns(self, campaigns: pd.DataFrame, selected: Iterable[int] | None = None) -> None:
        """Show ``campaigns`` (the account's table); keep the selection that is still there."""
        keep = set(self._chosen if selected is None else (int(i) for i in selected))
        self.table = campaigns.reset_index(drop=True)
        self.ids = self.table["id"].astype("int64").to_numpy()
        self.labels = option_labels(self.table).to_numpy()
        self._chosen = {int(i) for i in self.ids if int(i) in keep}
        self.refilter()

    @property
    def selected(self) -> tuple[int, ...]:
        """The ids of the campaigns chosen, those filtered out included, in the table's order."""
        return tuple(int(i) for i in self.ids if int(i) in self._chosen)

    @property
    def hidden(self) -> tuple[int, ...]:
        """The chosen campaigns the filters hide."""
        shown = set(self.matching)
        return tuple(i for i in self.selected if i not in shown)

    @property
    def matching(self) -> tuple[int, ...]:
        return tuple(int(v) for _label, v in self.campaigns.options)

    def take_pasted(self) -> list[int]:
        """Add the ids pasted in ``paste`` to the selection; the note names the ids that are
        not in the account and the bits that are not ids. Returns the ids selected."""
        ids, bad = pasted_ids(self.paste.value)
        known = set(int(i) for i in self.ids)
        found = [i for i in ids if i in known]
        missing = [str(i) for i in ids if i not in known] + bad
        self._select(self._chosen | set(found))
        text = f"{len(found):,} pasted id(s) selected"
        if missing:
            more = f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
            shown = ", ".join(missing[:10]) + more
            text += f"; not campaigns of this account: {shown}"
        self.paste_note.value = coloured(text, "error" if missing else "ok")
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
        ):
            if box.value is not None:
                mask &= t[column].astype(str) == box.value
        text = self.name.value.strip()
        if text:
            mask &= name_mask(t["name"], text) | t["id"].astype(str).str.startswith(text)
        return mask

    def refilter(self) -> None:
        """Redraw the list of matching campaigns; the chosen ones stay chosen (hidden when
        they do not match)."""
        mask = self._mask().to_numpy()
        ids, labels = self.ids[mask], self.labels[mask]
        self._quiet = True
        try:
            self.campaigns.options = list(zip(labels.tolist(), ids.tolist(), strict=True))
            self.campaigns.value = tuple(int(i) for i in ids if int(i) in self._chosen)
        finally:
            self._quiet = False
        self._changed()

    def _picked(self) -> None:
        """The multi-select changed: its campaigns chosen, the hidden ones kept."""
        if self._quiet:
            return
        shown = set(self.matching)
        self._chosen = {i for i in self._chosen if i not in shown} | {
            int(i) for i in self.campaigns.value
        }
        self._changed()

    def _select(self, ids: Iterable[int]) -> None:
        """Choose exactly ``ids`` (shown or hidden)."""
        self._chosen = {int(i) for i in ids}
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


__all__ = ["CampaignPicker", "name_mask", "option_labels", "pasted_ids"]
