"""``TargetingForm``: every target kind of :mod:`toolkit.spec` for the selected campaigns.

>>> form = toolkit.widgets.TargetingForm(client, [1000001, 1000002])   # doctest: +SKIP
>>> form.kind.value = "os"; ed = form.editor()                         # doctest: +SKIP
>>> ed.chooser.options.value = ed.chooser.options.options[0][1:]       # doctest: +SKIP
>>> ed.add_button.click(); form.plan()                                 # doctest: +SKIP

The kinds offered are those at least one selected campaign's format allows, read from the
table; an edit goes to the selected campaigns whose format allows the kind (for kinds grouped
by format, to those of the value's group).

Over several accounts (``TargetingForm(["north", "south"])``) the kinds and the values shown
are those of every account's selected campaigns; an edit is made once per account with
selected campaigns, on that account's own tables (the choices come from the dictionaries of
the first such account: accounts of one service share them), and the plan is one plan per
account (:mod:`toolkit.widgets.form_accounts`).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import ipywidgets as w
import pandas as pd

from .. import spec
from ..frames.schemas import empty
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
        self.kind = w.Dropdown(options=[], description="Target kind", tooltip="the kind to edit")
        self.kind.add_class("ct-kind")
        self.editor_box = w.VBox()
        self._editors: dict[tuple[str, tuple[str, ...]], KindEditor] = {}
        self.kind.observe(lambda _c: self._guarded("show kind", self.redraw), "value")
        return [self.kind, self.editor_box]

    # ------------------------------------------------------------------ which campaigns

    def _several(self) -> bool:
        """Over several accounts, none in focus: every account's campaigns at once."""
        return self.accounts is not None and self.focused is None

    def _formats(self) -> set[str]:
        """The formats of the selected campaigns (of every account, over several)."""
        if self._several():
            return set().union(*self.per_account(self._formats).values())
        return set(self.session.campaign_formats().reindex(list(self.selected)).dropna())

    def kinds(self) -> list[spec.TargetKind]:
        """The kinds a selected campaign's format allows (every kind when none is selected)."""
        formats = self._formats()
        return [k for k in spec.TARGET_KINDS.values() if not formats or formats & set(k.formats)]

    def groups(self, kind: spec.TargetKind) -> pd.Series:
        """Selected campaigns whose format allows ``kind`` -> the kind's label group."""
        formats = self.session.campaign_formats().reindex(list(self.selected)).dropna()
        formats = formats[formats.map(kind.allowed_for).astype(bool)]
        return formats.map(kind.label_group).astype(str)

    def _all_groups(self, kind: spec.TargetKind) -> set[str]:
        """The label groups of ``kind`` of the selected campaigns (of every account)."""
        if self._several():
            return set().union(*self.per_account(lambda: self._all_groups(kind)).values())
        return set(self.groups(kind))

    def _kind(self) -> spec.TargetKind | None:
        return spec.TARGET_KINDS.get(self.kind.value) if self.kind.value else None

    # ------------------------------------------------------------------ editors

    def editor(self, name: str | None = None) -> KindEditor:
        """The editor of kind ``name`` (default: the kind shown) for the selected campaigns."""
        kind = spec.target_kind(name) if name else self._kind()
        if kind is None:
            raise ValueError("pick a target kind first")
        groups = tuple(sorted(self._all_groups(kind)))
        key = (kind.name, groups)
        if key not in self._editors:
            chooser = make_chooser(kind, self._refs(), list(groups), self._search)
            ed = KindEditor(kind, chooser)
            ed.add_button.on_click(lambda _b: self._guarded("add", lambda: self.add(kind)))
            ed.drop_button.on_click(lambda _b: self._guarded("drop", lambda: self.drop(kind)))
            self._editors[key] = ed
        return self._editors[key]

    def _own_session(self) -> Any:
        """The session whose dictionaries and search the choosers use: the form's, the one
        in focus, or over several accounts the first with selected campaigns (accounts of
        one service share their dictionaries)."""
        if not self._several():
            return self.session
        assert self.accounts is not None
        names = self.chosen_accounts() or self.accounts.names
        return self.accounts.session(names[0])

    def _refs(self) -> Any:
        return self._own_session().account.refs

    def _search(self, name: str, text: str) -> dict[str, str]:
        client = self._own_session().client
        return client.account.search(name, text, limit=spec.SEARCH_LIMIT_MAX)

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
        df, groups, column = self._current(kind)
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

    def _current(self, kind: spec.TargetKind) -> tuple[pd.DataFrame, pd.Series, str]:
        """The rows of ``kind`` (with the edits), the selected campaigns allowing it -> group,
        and the column of values. Over several accounts (none in focus) every account's, its
        campaigns numbered anew (one id may be a campaign of two accounts)."""
        if not self._several():
            df, column = self._rows(kind)
            return df, self.groups(kind), column
        frames, groups, start = [], [], 0
        column = kind.column if kind.bids else "value"
        for df, own, _column in self.per_account(lambda: self._current(kind)).values():
            number = pd.Series(range(start, start + len(own)), index=own.index, dtype="int64")
            start += len(own)
            df = df[df["campaign_id"].isin(own.index)].copy()
            df["campaign_id"] = number.reindex(df["campaign_id"].astype("int64")).to_numpy()
            frames.append(df)
            groups.append(pd.Series(own.to_numpy(), index=number.to_numpy(), dtype=object))
        if not frames:
            return empty(table_of(kind)), pd.Series([], dtype=object), column
        return pd.concat(frames, ignore_index=True), pd.concat(groups), column

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

    def _check_selected(self, kind: spec.TargetKind) -> None:
        """Refuse an edit with no campaign selected (or, of one account, none allowing it)."""
        if self.accounts is None:
            self._campaign_count(kind)
        elif not self.selected:
            raise ValueError("select campaigns first: an edit goes to the selected campaigns")

    def add(self, kind: spec.TargetKind) -> None:
        """Add the values picked in the chooser to the selected campaigns (over several
        accounts, to each account's, on its own tables)."""
        ed = self.editor(kind.name)
        self._check_selected(kind)
        picked = ed.chooser.chosen()
        if not picked:
            raise ValueError(f"pick the {kind.title} values to add first")
        bid = ed.bid.amount() if kind.bids else None
        self.for_each_account(lambda: self._add(kind, ed, picked, bid))
        ed.chooser.reset()

    def _add(
        self, kind: spec.TargetKind, ed: KindEditor, picked: list[Any], bid: float | None
    ) -> None:
        n = self._campaign_count(kind)
        table = table_of(kind)
        df = self.table(table)
        for group in sorted({g for g, _v in picked}):
            values = [v for g, v in picked if g == group]
            ids = self._campaigns_of(kind, group)
            if bid is not None:
                df = add_countries(df, ids, values, bid)
            else:
                df = add_targets(df, kind, ids, values, ed.list_type.value, ed.chooser.labels)
        self.edit(table, df, _note("add", kind, ed, picked, n, bid))

    def drop(self, kind: spec.TargetKind) -> None:
        """Drop the values picked under 'Has' from the selected campaigns that have them."""
        ed = self.editor(kind.name)
        self._check_selected(kind)
        picked = list(ed.current.value)
        if not picked:
            raise ValueError(f"pick the {kind.title} values to drop under 'Has' first")
        self.for_each_account(lambda: self._drop(kind, ed, picked))

    def _drop(self, kind: spec.TargetKind, ed: KindEditor, picked: list[Any]) -> None:
        n = self._campaign_count(kind)
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
