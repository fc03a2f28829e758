"""``ListForm``: source and subId lists, bid rules and CPA rules of the selected campaigns.

Paste thousands of source ids or subIds (one or more a line); they are checked as you paste
(integer source ids, hexadecimal subIds, duplicates), each bad one reported with its line,
and added to or dropped from a list (:data:`toolkit.spec.LISTS`) of every selected campaign.
Bid rules take pasted items and a bid; CPA rules are added field by field and dropped by
picking them.

>>> form = toolkit.widgets.ListForm(client, [1000001])                 # doctest: +SKIP
>>> form.list_name.value = "subid_black"; form.paste.value = "ab12\\ncd34"  # doctest: +SKIP
>>> form.add_button.click(); form.plan()                               # doctest: +SKIP
"""

from __future__ import annotations

import ipywidgets as w
import pandas as pd

from .. import spec
from ..frames.account_set import ACCOUNT, stacked
from ..frames.schemas import empty
from .edits import (
    BID_RULES,
    CPA_RULES,
    LISTS,
    Pasted,
    add_cpa_rule,
    add_items,
    drop_cpa_rules,
    drop_items,
    drop_rules,
    list_problem,
    read_paste,
    rule_problem,
    set_rules,
)
from .form import Form, button
from .money import MoneyText
from .style import coloured

AREA = w.Layout(width="95%", height="8em")


def _choice(description: str, options: tuple[str, ...]) -> w.Dropdown:
    return w.Dropdown(options=list(options), description=description)


def _checked(view: w.HTML, pasted: Pasted) -> None:
    view.value = coloured(pasted.summary(), "error" if pasted.problems else "info")


class ListForm(Form):
    """Lists, bid rules and CPA rules. Widgets: ``list_name`` (Dropdown, ``List``), ``paste``
    (Textarea, ``Items``), ``paste_check`` (HTML, ``ct-paste-check``), ``add_button``
    (``ct-list-add``), ``drop_button`` (``ct-list-drop``); ``rule_items`` (Textarea,
    ``Rule items``), ``rule_bid`` (:class:`~toolkit.widgets.money.MoneyText`, ``Rule bid``),
    ``rule_check``, ``rule_set_button``
    (``ct-rule-set``), ``rule_drop_button`` (``ct-rule-drop``); ``cpa`` (field -> widget,
    described by the field's name), ``cpa_add_button`` (``ct-cpa-add``), ``cpa_rules``
    (SelectMultiple, ``CPA rules``), ``cpa_drop_button`` (``ct-cpa-drop``). CSS class
    ``ct-list-form``."""

    css = "ct-list-form"
    key = "lists"
    title = "Lists and rules"

    def build(self) -> list[w.Widget]:
        self.list_name = w.Dropdown(options=list(spec.LISTS), description="List")
        self.paste = w.Textarea(
            description="Items",
            layout=AREA,
            continuous_update=True,
            placeholder="paste source ids or subIds, one or more a line",
        )
        self.paste_check = w.HTML()
        self.paste_check.add_class("ct-paste-check")
        self.add_button = button("Add to list", "add the pasted items", "ct-list-add")
        self.drop_button = button("Drop from list", "drop the pasted items", "ct-list-drop")
        self.lists_view = w.HTML()
        self.rule_items = w.Textarea(
            description="Rule items",
            layout=AREA,
            placeholder="source ids or subIds, one or more a line",
        )
        self.rule_bid = MoneyText("Rule bid", tooltip="USD")
        self.rule_check = w.HTML()
        self.rule_set_button = button("Set bid rules", "bid rules at the bid", "ct-rule-set")
        self.rule_drop_button = button("Drop bid rules", "drop the items' rules", "ct-rule-drop")
        self.cpa = self._cpa_fields()
        self.cpa_add_button = button("Add CPA rule", "add the rule to each campaign", "ct-cpa-add")
        self.cpa_rules = w.SelectMultiple(
            options=[], rows=6, description="CPA rules", layout=w.Layout(width="95%")
        )
        self.cpa_drop_button = button("Drop CPA rules", "drop the rules picked", "ct-cpa-drop")
        self._wire()
        return [
            w.HTML("<b>Source and subId lists</b>"),
            self.lists_view,
            w.HBox([self.list_name, self.add_button, self.drop_button]),
            self.paste,
            self.paste_check,
            w.HTML("<b>Bid rules</b>"),
            self.rule_items,
            self.rule_check,
            w.HBox([self.rule_bid, self.rule_set_button, self.rule_drop_button]),
            w.HTML("<b>CPA rules</b>"),
            w.HBox(list(self.cpa.values())[:3]),
            w.HBox([*list(self.cpa.values())[3:], self.cpa_add_button]),
            self.cpa_rules,
            w.HBox([self.cpa_drop_button]),
        ]

    def _cpa_fields(self) -> dict[str, w.Widget]:
        choices = {
            "type": spec.CPA_TYPES,
            "cond": spec.CPA_CONDS,
            "lead_type": spec.CPA_LEAD_TYPES,
            "lead_cond": spec.CPA_CONDS,
        }
        return {
            f: _choice(f, choices[f])
            if f in choices
            else MoneyText(f, value="0", style={"description_width": "initial"})
            for f in spec.CPA_FIELDS
        }

    def _wire(self) -> None:
        self.paste.observe(lambda _c: self._guarded("check", self.pasted), "value")
        self.list_name.observe(lambda _c: self._guarded("check", self.pasted), "value")
        self.rule_items.observe(lambda _c: self._guarded("check", self.rule_pasted), "value")
        wire = {
            self.add_button: ("add to list", lambda: self.edit_list("add")),
            self.drop_button: ("drop from list", lambda: self.edit_list("drop")),
            self.rule_set_button: ("set bid rules", lambda: self.edit_rules("set")),
            self.rule_drop_button: ("drop bid rules", lambda: self.edit_rules("drop")),
            self.cpa_add_button: ("add CPA rule", self.add_cpa),
            self.cpa_drop_button: ("drop CPA rules", self.drop_cpa),
        }
        for b, (name, func) in wire.items():  # over several accounts, once per account
            b.on_click(
                lambda _b, name=name, func=func: self._guarded(
                    name, lambda: self.for_each_account(func)
                )
            )

    # ------------------------------------------------------------------ pasted items

    def pasted(self) -> Pasted:
        """The pasted items, checked for the list picked (shown under the box)."""
        found = read_paste(self.paste.value, list_problem(spec.LISTS[self.list_name.value]))
        _checked(self.paste_check, found)
        return found

    def rule_pasted(self) -> Pasted:
        found = read_paste(self.rule_items.value, rule_problem)
        _checked(self.rule_check, found)
        return found

    def _ids(self) -> list[int]:
        if not self.selected:
            raise ValueError("select campaigns first")
        return list(self.selected)

    @staticmethod
    def _good(found: Pasted) -> list[str]:
        if found.problems:
            raise ValueError(
                f"{len(found.problems):,} bad item(s), nothing taken: {found.problems[0]}"
            )
        if not found.items:
            raise ValueError("paste some items first")
        return found.items

    # ------------------------------------------------------------------ edits

    def edit_list(self, action: str) -> None:
        """Add (``add``) or drop (``drop``) the pasted items on the list picked."""
        items, ids, name = self._good(self.pasted()), self._ids(), self.list_name.value
        func = add_items if action == "add" else drop_items
        df = func(self.table(LISTS), name, ids, items)
        self.edit(
            LISTS, df, f"{action} {len(items):,} item(s) on {name} of {len(ids):,} campaign(s)"
        )

    def edit_rules(self, action: str) -> None:
        """Bid rules of the pasted items: set at the bid (``set``) or dropped (``drop``)."""
        items, ids = self._good(self.rule_pasted()), self._ids()
        if action == "set":
            bid = self.rule_bid.amount()
            df = set_rules(self.table(BID_RULES), ids, items, bid)
            note = f"bid rules at {bid:g}"
        else:
            df = drop_rules(self.table(BID_RULES), ids, items)
            note = "drop bid rules"
        self.edit(BID_RULES, df, f"{note}: {len(items):,} item(s) on {len(ids):,} campaign(s)")

    def add_cpa(self) -> None:
        ids = self._ids()
        rule = {
            f: box.amount() if isinstance(box, MoneyText) else box.value
            for f, box in self.cpa.items()
        }
        df = add_cpa_rule(self.table(CPA_RULES), ids, rule)
        words = " ".join(str(v) for v in rule.values())
        self.edit(CPA_RULES, df, f"add CPA rule {words} on {len(ids):,} campaign(s)")

    def drop_cpa(self) -> None:
        picked = list(self.cpa_rules.value)
        if not picked:
            raise ValueError("pick the CPA rules to drop")
        if self.focused is not None:  # over several accounts: (account, rule id) pairs
            picked = [r for a, r in picked if a == self.focused]
            if not picked:
                return  # none of this account's rules picked
        df = drop_cpa_rules(self.table(CPA_RULES), picked)
        self.edit(CPA_RULES, df, f"drop CPA rule(s) {', '.join(map(str, picked))}")

    # ------------------------------------------------------------------ view

    def redraw(self) -> None:
        if not hasattr(self, "cpa_rules"):
            return
        if self.accounts is None:
            lists, n_rules, cpa = self._selected_rows()
        else:  # every account's own rows, its account first
            parts = self.per_account(self._selected_rows)
            lists = stacked({n: p[0] for n, p in parts.items()}, empty(LISTS))
            n_rules = sum(p[1] for p in parts.values())
            cpa = stacked({n: p[2] for n, p in parts.items()}, empty(CPA_RULES))
        counts = lists.groupby(lists["list"].astype(str))["campaign_id"].agg(["size", "nunique"])
        if ACCOUNT in lists:  # a campaign is an account's: counted by (account, id)
            keyed = lists[ACCOUNT].astype(str) + ":" + lists["campaign_id"].astype(str)
            counts["nunique"] = keyed.groupby(lists["list"].astype(str)).nunique()
        lines = [
            f"{name}: {int(counts.loc[name, 'size']) if name in counts.index else 0:,} item(s)"
            f" on {int(counts.loc[name, 'nunique']) if name in counts.index else 0:,}"
            " campaign(s)"
            for name in spec.LISTS
        ]
        self.lists_view.value = (
            f"{len(self.selected):,} campaign(s) selected; "
            + "; ".join(lines)
            + f"; bid rules: {n_rules:,}"
        )
        self._show_cpa(cpa)

    def _selected_rows(self) -> tuple[pd.DataFrame, int, pd.DataFrame]:
        """The list rows, the count of bid rules and the CPA rules of the selected campaigns
        (with the edits)."""
        ids = list(self.selected)
        lists = self.table(LISTS)
        rules = self.table(BID_RULES)
        cpa = self.table(CPA_RULES)
        cpa = cpa[cpa["campaign_id"].isin(ids) & cpa["id"].notna()]
        return lists[lists["campaign_id"].isin(ids)], int(rules["campaign_id"].isin(ids).sum()), cpa

    def _show_cpa(self, cpa: pd.DataFrame) -> None:
        """The CPA rules to pick: their ids, or (account, id) pairs over several accounts."""
        fields = list(spec.CPA_FIELDS)
        text = cpa[fields].astype(str).agg(" ".join, axis=1) if len(cpa) else pd.Series([])
        names = cpa[ACCOUNT].astype(str) if ACCOUNT in cpa else pd.Series([None] * len(cpa))
        self.cpa_rules.options = [
            (f"{a + ': ' if a else ''}#{rid} on {cid}: {t}", (a, int(rid)) if a else int(rid))
            for a, rid, cid, t in zip(names, cpa["id"], cpa["campaign_id"], text, strict=True)
        ]


__all__ = ["ListForm"]
