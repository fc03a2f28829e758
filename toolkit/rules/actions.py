"""Decisions to an action workbook: the planned changes, one row each with the rule and the
numbers that decided it, for a review in Excel before they are applied.

Delete the rows you disagree with, save, then ``campaign-toolkit apply decisions.xlsx``: the
rows left become a plan like any action workbook's (the ``rule`` and ``why`` columns are
shown, never read).

>>> plan, decisions = toolkit.evaluate_rules("rules.yaml", "stats.csv", client)  # doctest: +SKIP
>>> to_actions(decisions, "review.xlsx")                                        # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import spec
from ..bulk.calls import BID_RULE
from ..bulk.workbook.actions_templates import write_template
from ..stats.schema import COUNTRY
from .evaluate import PLANNED, list_name

Row = dict[str, Any]


def _row(action: str, target: str, d: Any, **more: Any) -> Row:
    return {
        "action": action,
        "target": target,
        "campaign": int(d.campaign_id),
        "item": str(d.key),
        **more,
    }


def _blacklist(d: Any) -> list[Row]:
    if d.new == "dropped":  # a whitelisted item: dropped from the whitelist
        return [_row("drop", list_name(d.level, "white"), d)]
    return [_row("add", list_name(d.level, "black"), d)]


def _whitelist(d: Any) -> list[Row]:
    rows = [_row("drop", list_name(d.level, "black"), d)] if d.old == "blacklisted" else []
    return [*rows, _row("add", list_name(d.level, "white"), d)]


def _bid(d: Any) -> list[Row]:
    target = spec.bid_kind().name if d.level == COUNTRY else BID_RULE
    return [_row("set", target, d, bid=float(d.new))]


def _pause(d: Any) -> list[Row]:
    return [{"action": "pause", "target": "campaign", "campaign": int(d.campaign_id)}]


#: The action rows of a planned decision, per rule action.
ROWS: dict[str, Callable[[Any], list[Row]]] = {
    "blacklist": _blacklist,
    "whitelist": _whitelist,
    "bid": _bid,
    "pause": _pause,
}


def action_rows(decisions: pd.DataFrame) -> list[Row]:
    """The action rows of the planned decisions, each with its ``rule`` and ``why``."""
    planned = decisions[decisions["status"] == PLANNED]
    return [
        {**row, "rule": d.rule, "why": d.why}
        for d in planned.itertuples(index=False)
        for row in ROWS[str(d.action)](d)
    ]


def to_actions(decisions: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write the planned decisions as an action workbook (see the module) at ``path``."""
    rows = action_rows(decisions)
    text = [
        f"{len(rows)} change(s) the rules decided, one row each, with the rule and the numbers "
        "behind it (the rule and why columns are never read).",
        "Delete the rows you do not want, save, and apply the rest.",
    ]
    return write_template(path, "Changes decided by rules", text, rows)


__all__ = ["ROWS", "action_rows", "to_actions"]
