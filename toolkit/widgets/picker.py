"""The campaign picker the forms share: filters, and one multi-select over the matching
campaigns (one widget whatever the number of campaigns).

>>> picker = CampaignPicker(account.campaigns)                         # doctest: +SKIP
>>> picker.format.value = "push"; picker.select_all.click()           # doctest: +SKIP
>>> picker.selected                                                    # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import ipywidgets as w
import pandas as pd

from .. import spec

ANY = "(any)"


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
    ``campaigns`` (SelectMultiple), ``select_all`` and ``select_none`` (Buttons, CSS classes
    ``ct-select-all`` and ``ct-select-none``), ``count`` (HTML). The picker has the CSS class
    ``ct-picker``.
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
        self._listeners: list[Callable[[], None]] = []
        self._quiet = False
        self.set_campaigns(campaigns, selected)
        for box in (self.format, self.mode, self.status, self.work_status, self.name):
            box.observe(lambda _change: self.refilter(), "value")
        self.campaigns.observe(lambda _change: self._changed(), "value")
        self.select_all.on_click(lambda _b: self._select(self.matching))
        self.select_none.on_click(lambda _b: self._select(()))
        filters = w.HBox([self.format, self.mode, self.status, self.work_status])
        buttons = w.HBox([self.name, self.select_all, self.select_none, self.count])
        super().__init__([filters, buttons, self.campaigns])
        self.add_class("ct-picker")

    # ------------------------------------------------------------------ state

    def set_campaigns(self, campaigns: pd.DataFrame, selected: Iterable[int] | None = None) -> None:
        """Show ``campaigns`` (the account's table); keep the selection that is still there."""
        keep = set(self.selected if selected is None else (int(i) for i in selected))
        self.table = campaigns.reset_index(drop=True)
        self.ids = self.table["id"].astype("int64").to_numpy()
        self.labels = option_labels(self.table).to_numpy()
        self.refilter(keep)

    @property
    def selected(self) -> tuple[int, ...]:
        """The ids of the campaigns chosen."""
        return tuple(int(i) for i in self.campaigns.value)

    @property
    def matching(self) -> tuple[int, ...]:
        return tuple(int(v) for _label, v in self.campaigns.options)

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
        text = self.name.value.strip().lower()
        if text:
            names = t["name"].astype(str).str.lower().str.contains(text, regex=False)
            mask &= names | t["id"].astype(str).str.startswith(text)
        return mask

    def refilter(self, keep: Iterable[int] | None = None) -> None:
        """Redraw the list of matching campaigns, keeping the chosen ones that still match."""
        kept = set(self.selected if keep is None else keep)
        mask = self._mask().to_numpy()
        ids, labels = self.ids[mask], self.labels[mask]
        self._quiet = True
        try:
            self.campaigns.options = list(zip(labels.tolist(), ids.tolist(), strict=True))
            self.campaigns.value = tuple(int(i) for i in ids if int(i) in kept)
        finally:
            self._quiet = False
        self._changed()

    def _select(self, ids: Iterable[int]) -> None:
        self.campaigns.value = tuple(ids)

    def _changed(self) -> None:
        if self._quiet:
            return
        self.count.value = (
            f"{len(self.campaigns.options):,} of {len(self.ids):,} match, "
            f"<b>{len(self.campaigns.value):,}</b> selected"
        )
        for listener in list(self._listeners):
            listener()


__all__ = ["CampaignPicker", "option_labels"]
