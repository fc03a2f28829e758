"""One editor per target kind, chosen by the traits of the kind's row in :mod:`toolkit.spec`,
never by its name:

- ``values`` (a closed set): a multi-select of the values;
- ``labels`` (a dictionary): a searchable multi-select of the dictionary's entries by name
  (``by_format``: the entries of the campaigns' format groups);
- ``search``: a text box that asks the service's search operation as you type
  (``spec.SEARCH_MIN_CHARS`` characters or more), its answers in a multi-select;
- anything else (``typed`` kinds, free ids): a text area, one value a line, checked as you type.

``typed`` kinds get black/white buttons; the kind with ``bids`` a bid box. Every option's value
is a pair ``(group, value)``: ``group`` is the format's category group for ``by_format`` kinds
(``""`` otherwise), so one editor serves campaigns of several formats.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as w
import pandas as pd

from .. import spec
from ..stats import countries
from .edits import Pasted, kind_problem, normal_value, read_paste
from .money import MoneyText
from .style import coloured

Option = tuple[str, str]  # (group, value)
WIDE = w.Layout(width="95%")


def dictionary_options(
    kind: spec.TargetKind, refs: Mapping[str, pd.DataFrame], groups: list[str]
) -> list[tuple[str, Option]]:
    """``[(label, (group, value))]`` of a dictionary kind: values as the tables keep them
    (codes for code items, ids otherwise), labelled by name (and code)."""
    df = refs.get(kind.labels or "")
    if df is None or not len(df):
        return []
    if kind.by_format:
        df = df[df["ad_format"].astype(str).isin(groups)]
    keyed_by_code = kind.item_type is str and not kind.sent_as_code and "code" in df
    values = df["code"] if keyed_by_code else df["id"]
    names = df["name"].astype(object).where(df["name"].notna(), "").astype(str)
    codes = df["code"].astype(object) if "code" in df else pd.Series([None] * len(df))
    group = df["ad_format"].astype(str) if kind.by_format else pd.Series([""] * len(df))
    out = []
    for v, n, c, g in zip(values, names, codes, group, strict=True):
        if pd.isna(v):
            continue
        label = f"{n} ({c})" if isinstance(c, str) else f"{n} ({v})"
        if kind.by_format and len(groups) > 1:
            label = f"{g}: {label}"
        out.append((label, (g if kind.by_format else "", normal_value(kind, v))))
    return sorted(out, key=lambda o: o[0].lower())


class Chooser:
    """What an editor adds: :meth:`chosen` gives the ``(group, value)`` pairs picked;
    ``widget`` shows it; ``labels`` names the values found."""

    widget: w.Widget

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}

    def chosen(self) -> list[Option]:  # pragma: no cover - each chooser has its own
        raise NotImplementedError

    def reset(self) -> None:
        """Forget what was picked."""


def code_suggestion(kind: spec.TargetKind, text: str) -> tuple[str, str | None]:
    """For a kind typed as codes (countries, languages: :mod:`toolkit.stats.countries`), what
    is wrong with ``text`` as a code (``""``: nothing, or not such a kind) and the code it
    probably means (None when nothing fits or it could mean two)."""
    suggest = getattr(countries, f"suggest_{kind.name}", None)
    if suggest is None or not text.strip():
        return "", None
    return countries.code_problem(text.strip(), kind.name), suggest(text)


class OptionsChooser(Chooser):
    """A filter box and a multi-select over known options (a closed set or a dictionary).
    A country or language typed as a code or a name it does not find (``UK``, ``Germny``)
    gets a suggestion under the box (``note``), and the suggested entry is listed."""

    def __init__(self, kind: spec.TargetKind, options: list[tuple[str, Option]]) -> None:
        super().__init__()
        self.kind = kind
        self.all = options
        self.labels = {v: label for label, (_g, v) in options}
        self.filter = w.Text(
            description="Find",
            placeholder=f"part of a name ({kind.title})",
            continuous_update=True,
            layout=WIDE,
        )
        self.options = w.SelectMultiple(
            options=options, rows=8, description="To add", tooltip=kind.name, layout=WIDE
        )
        self.note = w.HTML()
        self.note.add_class("ct-find-note")
        self.filter.observe(lambda _c: self._refilter(), "value")
        self.widget = w.VBox([self.filter, self.options, self.note])

    def _refilter(self) -> None:
        text = self.filter.value.strip().lower()
        keep = set(self.options.value)
        found = [o for o in self.all if not text or text in o[0].lower()]
        problem, code = code_suggestion(self.kind, self.filter.value)
        extra = [o for o in self.all if code and o[0].endswith(f"({code})") and o not in found]
        shown = extra + [o for o in self.all if o in found or o[1] in keep]
        self.options.options = shown
        self.options.value = tuple(v for _label, v in shown if v in keep)
        if problem and (extra or not found):
            self.note.value = coloured(problem + (" (listed first)" if extra else ""), "error")
        else:
            self.note.value = ""

    def chosen(self) -> list[Option]:
        return list(self.options.value)

    def reset(self) -> None:
        self.options.value = ()


class SearchChooser(Chooser):
    """Search as you type: ``client.account.search`` from ``spec.SEARCH_MIN_CHARS``
    characters; picked answers stay listed across searches."""

    def __init__(self, kind: spec.TargetKind, search: Callable[[str, str], dict[str, str]]):
        super().__init__()
        self.kind, self._search = kind, search
        self.text = w.Text(
            description="Search",
            placeholder=f"{spec.SEARCH_MIN_CHARS} characters or more of a name ({kind.title})",
            continuous_update=True,
            layout=WIDE,
        )
        self.options = w.SelectMultiple(
            options=[], rows=8, description="To add", tooltip=kind.name, layout=WIDE
        )
        self.note = w.HTML()
        self.text.observe(lambda _c: self.search(), "value")
        self.widget = w.VBox([self.text, self.options, self.note])

    def search(self) -> None:
        text = self.text.value.strip()
        if len(text) < spec.SEARCH_MIN_CHARS:
            self.note.value = f"<i>type {spec.SEARCH_MIN_CHARS} characters or more</i>"
            return
        try:
            found = self._search(self.kind.name, text)
        except Exception as exc:  # noqa: BLE001 - one line under the box
            self.note.value = coloured(f"search: {exc}", "error")
            return
        keep = set(self.options.value)
        self.labels.update({normal_value(self.kind, k): v for k, v in found.items()})
        values = dict.fromkeys([v for _g, v in keep] + [normal_value(self.kind, k) for k in found])
        options = [(f"{self.labels.get(v, v)} ({v})", ("", v)) for v in values]
        self.options.options = options
        self.options.value = tuple(o for _label, o in options if o in keep)
        self.note.value = f"{len(found)} found for {html.escape(text)!s}"

    def chosen(self) -> list[Option]:
        return list(self.options.value)

    def reset(self) -> None:
        self.options.value = ()


class TextChooser(Chooser):
    """A text area of values, one or more a line, checked as you type (the line of each
    bad value is reported)."""

    def __init__(self, kind: spec.TargetKind) -> None:
        super().__init__()
        self.kind = kind
        self.text = w.Textarea(
            description="To add",
            tooltip=kind.name,
            placeholder=f"one {kind.help or kind.title} a line",
            continuous_update=True,
            rows=5,
            layout=WIDE,
        )
        self.note = w.HTML()
        self.pasted = Pasted()
        self.text.observe(lambda _c: self.check(), "value")
        self.widget = w.VBox([self.text, self.note])

    def check(self) -> Pasted:
        self.pasted = read_paste(self.text.value, kind_problem(self.kind))
        level = "error" if self.pasted.problems else "info"
        self.note.value = coloured(self.pasted.summary(), level)
        return self.pasted

    def chosen(self) -> list[Option]:
        pasted = self.check()
        if pasted.problems:
            raise ValueError(f"{len(pasted.problems)} bad value(s): {pasted.problems[0]}")
        return [("", normal_value(self.kind, v)) for v in pasted.items]

    def reset(self) -> None:
        self.text.value = ""


def make_chooser(
    kind: spec.TargetKind,
    refs: Mapping[str, pd.DataFrame],
    groups: list[str],
    search: Callable[[str, str], dict[str, str]],
) -> Chooser:
    """The chooser the kind's traits call for (see the module's docstring)."""
    if kind.values is not None:
        return OptionsChooser(kind, [(v, ("", v)) for v in kind.values])
    options = dictionary_options(kind, refs, groups) if kind.labels else []
    if options:
        return OptionsChooser(kind, options)
    if kind.search:
        return SearchChooser(kind, search)
    return TextChooser(kind)


class KindEditor(w.VBox):
    """The editor of one kind: the values the selected campaigns have (all of them or some:
    pick them to drop), the chooser of values to add, black/white for typed kinds and a bid
    for the kind with bids. CSS class ``ct-kind-<name>``."""

    def __init__(self, kind: spec.TargetKind, chooser: Chooser) -> None:
        self.kind, self.chooser = kind, chooser
        self.current = w.SelectMultiple(
            options=[], rows=8, description="Has", layout=WIDE, tooltip="pick values to drop"
        )
        self.list_type = w.ToggleButtons(
            options=list(spec.LIST_TYPES), description="List", tooltip="black or white list"
        )
        self.bid = MoneyText("Bid (USD)", tooltip="bid of added values")
        auto = w.Layout(width="auto")
        self.add_button = w.Button(
            description=f"Add {kind.title}",
            tooltip=f"add the values picked to the campaigns ({kind.name})",
            layout=auto,
        )
        self.drop_button = w.Button(
            description=f"Drop {kind.title}",
            tooltip=f"drop the values picked under 'Has' ({kind.name})",
            layout=auto,
        )
        self.add_button.add_class("ct-add")
        self.drop_button.add_class("ct-drop")
        self.note = w.HTML()
        extra = ([self.list_type] if kind.typed else []) + ([self.bid] if kind.bids else [])
        left = w.VBox([self.current, self.drop_button])
        right = w.VBox([chooser.widget, *extra, self.add_button])
        super().__init__([self.note, w.HBox([left, right])])
        self.add_class(f"ct-kind-{kind.name}")

    def show_current(self, rows: list[tuple[str, Option3]], note: str) -> None:
        keep = set(self.current.value)
        self.current.options = rows
        self.current.value = tuple(v for _label, v in rows if v in keep)
        self.note.value = note


Option3 = tuple[str, str, str]  # (group, list type, value)


def current_rows(
    targets: pd.DataFrame,
    kind: spec.TargetKind,
    groups: pd.Series,
    labels: Mapping[Any, str],
    column: str,
) -> list[tuple[str, Option3]]:
    """``[(label, (group, list type, value))]``: each value the campaigns ``groups`` (campaign
    id -> group, for the campaigns the kind is allowed for) have, and how many have it."""
    df = targets[targets["campaign_id"].isin(groups.index)]
    if not len(df):
        return []
    if kind.typed:
        lt = df["list_type"].astype(object).where(df["list_type"].notna(), "").to_numpy()
    else:
        lt = [""] * len(df)
    keyed = pd.DataFrame(
        {
            "group": groups.reindex(df["campaign_id"].astype("int64")).to_numpy(),
            "list_type": lt,
            "value": df[column].astype(str).to_numpy(),
            "campaign_id": df["campaign_id"].to_numpy(),
        }
    )
    counts = keyed.groupby(["group", "list_type", "value"])["campaign_id"].nunique()
    per_group = groups.value_counts()
    rows = []
    for (g, lt_, v), n in counts.items():
        total = int(per_group.get(g, 0))
        share = "all" if n == total else f"{n} of {total}"
        name = str(labels.get((g, v)) or labels.get(v) or v)
        named = name if name == v or name.endswith(f"({v})") else f"{name} ({v})"  # code once
        label = f"{lt_ + ': ' if lt_ else ''}{g + ': ' if g else ''}{named} - {share}"
        rows.append((label, (str(g), str(lt_), str(v))))
    return sorted(rows, key=lambda r: r[0].lower())


__all__ = [
    "Chooser",
    "KindEditor",
    "OptionsChooser",
    "SearchChooser",
    "TextChooser",
    "current_rows",
    "dictionary_options",
    "make_chooser",
]
