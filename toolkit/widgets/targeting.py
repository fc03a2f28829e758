"""``TargetingForm``: every target kind of :mod:`toolkit.spec` for the selected campaigns.

>>> form = toolkit.widgets.TargetingForm(client, [1000001, 1000002])   # doctest: +SKIP
>>> form.kind.value = "os"; ed = form.editor()                         # doctest: +SKIP
>>> ed.chooser.options.value = ed.chooser.options.options[0][1:]       # doctest: +SKIP
>>> ed.add_button.click(); form.plan()                                 # doctest: +SKIP

The kinds offered are those at least one selected campaign's format allows, read from the
table; an edit goes to the selected campaigns whose format allows the kind (for kinds grouped
by format, to those of the value's group).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

import ipywidgets as w
import pandas as pd

from .. import spec
from ..errors import ToolkitError
from .edits import add_countries, add_targets, drop_countries, drop_targets, table_of
from .form import Form
from .kinds import KindEditor, current_rows, make_chooser


class TargetingForm(Form):
    """Targeting of the selected campaigns, one kind at a time (``kind``: a Dropdown
    described ``Target kind``); :meth:`editor` is the kind's :class:`KindEditor`. CSS class
    ``ct-targeting-form``."""

    css = "ct-targeting-form"
    key = "targeting"
    title = "Targeting"

    def build(self) -> list[w.Widget]:
        if self.accounts is not None:
            raise ToolkitError(
                "the targeting form edits one account at a time: open it on one account of"
                " the set (TargetingForm(form.accounts.session(name)))"
            )
        self.kind = w.Dropdown(options=[], description="Target kind", tooltip="the kind to edit")
        self.kind.add_class("ct-kind")
        self.editor_box = w.VBox()
        self._editors: dict[tuple[str, tuple[str, ...]], KindEditor] = {}
        self.kind.observe(lambda _c: self._guarded("show kind", self.redraw), "value")
        return [self.kind, self.editor_box]

    # ------------------------------------------------------------------ which campaigns

    def kinds(self) -> list[spec.TargetKind]:
        """The kinds a selected campaign's format allows (every kind when none is selected)."""
        formats = set(self.session.campaign_formats().reindex(list(self.selected)).dropna())
        return [k for k in spec.TARGET_KINDS.values() if not formats or formats & set(k.formats)]

    def groups(self, kind: spec.TargetKind) -> pd.Series:
        """Selected campaigns whose format allows ``kind`` -> the kind's label group."""
        formats = self.session.campaign_formats().reindex(list(self.selected)).dropna()
        formats = formats[formats.map(kind.allowed_for).astype(bool)]
        return formats.map(kind.label_group).astype(str)

    def _kind(self) -> spec.TargetKind | None:
        return spec.TARGET_KINDS.get(self.kind.value) if self.kind.value else None

    # ------------------------------------------------------------------ editors

    def editor(self, name: str | None = None) -> KindEditor:
        """The editor of kind ``name`` (default: the kind shown) for the selected campaigns."""
        kind = spec.target_kind(name) if name else self._kind()
        if kind is None:
            raise ValueError("pick a target kind first")
        groups = tuple(sorted(set(self.groups(kind))))
        key = (kind.name, groups)
        if key not in self._editors:
            chooser = make_chooser(kind, self.account.refs, list(groups), self._search)
            ed = KindEditor(kind, chooser)
            ed.add_button.on_click(lambda _b: self._guarded("add", lambda: self.add(kind)))
            ed.drop_button.on_click(lambda _b: self._guarded("drop", lambda: self.drop(kind)))
            self._editors[key] = ed
        return self._editors[key]

    def _search(self, name: str, text: str) -> dict[str, str]:
        return self.session.client.account.search(name, text, limit=spec.SEARCH_LIMIT_MAX)

    def redraw(self) -> None:
        if not hasattr(self, "kind"):
            return
        names = [k.name for k in self.kinds()]
        if [v for _label, v in self.kind.options] != names:
            current = self.kind.value
            self.kind.options = [(spec.TARGET_KINDS[n].title, n) for n in names]
            self.kind.value = current if current in names else (names[0] if names else None)
        kind = self._kind()
        if kind is None:
            self.editor_box.children = []
            return
        ed = self.editor(kind.name)
        self.kind.tooltip = f"{kind.name}: {kind.help}"  # the interface's name of the kind
        self.editor_box.children = [ed]
        self._show_current(kind, ed)

    def _show_current(self, kind: spec.TargetKind, ed: KindEditor) -> None:
        groups = self.groups(kind)
        df, column = self._rows(kind)
        labels = dict(ed.chooser.labels)
        if "label" in df and len(df):
            named = df[df["label"].notna()]
            labels.update(zip(named[column].astype(str), named["label"].astype(str), strict=True))
        rows = current_rows(df, kind, groups, labels, column)
        left_out = len(self.selected) - len(groups)
        note = (
            f"<b>{html.escape(kind.title)}</b> (<code>{kind.name}</code>): {kind.help};"
            f" {len(groups):,} selected campaign(s)"
        )
        if left_out:
            note += f" ({left_out:,} left out: their format does not allow {kind.title})"
        ed.show_current(rows, note + f"; {len(rows):,} value(s) targeted")

    def _rows(self, kind: spec.TargetKind) -> tuple[pd.DataFrame, str]:
        """The rows of ``kind`` in its table (with the edits), and the column of its values."""
        df = self.table(table_of(kind))
        if kind.bids:
            return df, kind.column
        return df[df["kind"].astype(str) == kind.column], "value"

    # ------------------------------------------------------------------ edits

    def _campaign_count(self, kind: spec.TargetKind) -> int:
        """How many selected campaigns an edit of ``kind`` goes to; refused when none."""
        if not self.selected:
            raise ValueError("select campaigns first: an edit goes to the selected campaigns")
        n = len(self.groups(kind))
        if not n:
            raise ValueError(
                f"none of the {len(self.selected):,} selected campaign(s) allows {kind.title}:"
                " select campaigns of a format that does"
            )
        return n

    def _campaigns_of(self, kind: spec.TargetKind, group: str) -> list[int]:
        groups = self.groups(kind)
        return [int(c) for c in groups.index[groups == group]]

    def add(self, kind: spec.TargetKind) -> None:
        """Add the values picked in the chooser to the selected campaigns."""
        ed = self.editor(kind.name)
        n = self._campaign_count(kind)
        picked = ed.chooser.chosen()
        if not picked:
            raise ValueError(f"pick the {kind.title} values to add first")
        bid = ed.bid.amount() if kind.bids else None
        table = table_of(kind)
        df = self.table(table)
        for group in sorted({g for g, _v in picked}):
            values = [v for g, v in picked if g == group]
            ids = self._campaigns_of(kind, group)
            if bid is not None:
                df = add_countries(df, ids, values, bid)
            else:
                df = add_targets(df, kind, ids, values, ed.list_type.value, ed.chooser.labels)
        ed.chooser.reset()
        self.edit(table, df, _note("add", kind, ed, picked, n, bid))

    def drop(self, kind: spec.TargetKind) -> None:
        """Drop the values picked under 'Has' from the selected campaigns that have them."""
        ed = self.editor(kind.name)
        n = self._campaign_count(kind)
        picked = list(ed.current.value)
        if not picked:
            raise ValueError(f"pick the {kind.title} values to drop under 'Has' first")
        table = table_of(kind)
        df = self.table(table)
        for group, list_type in sorted({(g, lt) for g, lt, _v in picked}):
            values = [v for g, lt, v in picked if (g, lt) == (group, list_type)]
            ids = self._campaigns_of(kind, group)
            if kind.bids:
                df = drop_countries(df, ids, values)
            else:
                df = drop_targets(df, kind, ids, values, list_type or None)
        pairs = [(g, v) for g, _lt, v in picked]
        self.edit(table, df, _note("drop", kind, ed, pairs, n))


def _note(
    action: str,
    kind: spec.TargetKind,
    ed: KindEditor,
    picked: Sequence,
    n: int,
    bid: float | None = None,
) -> str:
    values = [ed.chooser.labels.get(v, v) for _g, v in picked]
    shown = ", ".join(values[:5]) + (f" (+{len(values) - 5} more)" if len(values) > 5 else "")
    typed = f" ({ed.list_type.value} list)" if kind.typed else ""
    at = f" at {bid:g}" if bid is not None else ""
    return f"{action} {kind.title}{typed} {shown}{at} on {n:,} campaign(s)"


__all__ = ["TargetingForm"]
