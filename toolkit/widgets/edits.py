"""The forms' edits as table operations, with no widget: add and drop rows of the item tables
(targets, countries, lists, bid rules, CPA rules), change bids, and read pasted items.

Each function takes a table in the loaders' schema and returns a new one; the forms keep the
edited tables and hand them to the planner with the loaded ones as the base. Target kinds are
read from their rows in :mod:`toolkit.spec` (the bid kind's table is ``countries``, the other
kinds' ``targets``).

>>> import pandas as pd
>>> new_bids(pd.Series([0.10, 0.30]), "cap", recommended=pd.Series([0.2, 0.2])).tolist()
[nan, 0.2]
>>> subids = list_problem(spec.LISTS["subid_black"])
>>> read_paste("ab12\\nzz!\\nab12", subids).problems
["line 2: 'zz!': not a subId (1 to 64 hexadecimal digits)"]
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import spec
from ..client import checks
from ..errors import ValidationError
from ..frames.schemas import frame

#: The item tables a form edits, by target kind: the bid kind's items are ``countries``.
TARGETS, COUNTRIES, LISTS, BID_RULES, CPA_RULES = (
    "targets",
    "countries",
    "lists",
    "bid_rules",
    "cpa_rules",
)


def table_of(kind: spec.TargetKind) -> str:
    """The table holding the items of ``kind``."""
    return COUNTRIES if kind.bids else TARGETS


def normal_value(kind: spec.TargetKind, value: Any) -> str:
    """A value as the tables keep it: ids as their digits, folded kinds lower case."""
    text = str(value).strip()
    if kind.stored_as_int and text.isdigit():
        return str(int(text))
    return text.lower() if kind.fold_case else text


def _concat(df: pd.DataFrame, extra: pd.DataFrame) -> pd.DataFrame:
    if not len(extra):
        return df
    if not len(df):
        return extra.reset_index(drop=True)
    return pd.concat([df, extra], ignore_index=True)


def _missing(
    existing: pd.DataFrame, column: str, campaign_ids: Iterable[int], values: Sequence[str]
) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``campaign_ids`` x ``values`` that ``existing`` (rows of the same list or
    kind) lacks, as two columns: campaign ids and values."""
    ids = np.asarray([int(c) for c in campaign_ids], dtype="int64")
    vals = np.asarray(list(values), dtype=object)
    cids, pairs = np.repeat(ids, len(vals)), np.tile(vals, len(ids))
    have = existing[existing["campaign_id"].isin(ids) & existing[column].isin(list(vals))]
    if len(have):
        known = pd.MultiIndex.from_arrays(
            [have["campaign_id"].astype("int64").to_numpy(), have[column].astype(str).to_numpy()]
        )
        keep = ~pd.MultiIndex.from_arrays([cids, pairs]).isin(known)
        cids, pairs = cids[keep], pairs[keep]
    return cids, pairs


# --------------------------------------------------------------------------- targets


def add_targets(
    df: pd.DataFrame,
    kind: spec.TargetKind,
    campaign_ids: Iterable[int],
    values: Sequence[str],
    list_type: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """``df`` (the targets table) with ``values`` of ``kind`` on each campaign that lacks them."""
    values = [normal_value(kind, v) for v in values]
    lt = (list_type or spec.LIST_TYPES[0]) if kind.typed else None
    same = df["kind"].astype(str) == kind.column
    if kind.typed:
        same &= df["list_type"].astype(str) == lt
    cids, vals = _missing(df[same], "value", campaign_ids, values)
    new = frame(
        TARGETS,
        {
            "campaign_id": cids,
            "kind": [kind.column] * len(cids),
            "value": vals,
            "label": [(labels or {}).get(v) for v in vals],
            "list_type": [lt] * len(cids),
        },
    )
    return _concat(df, new)


def drop_targets(
    df: pd.DataFrame,
    kind: spec.TargetKind,
    campaign_ids: Iterable[int],
    values: Sequence[str],
    list_type: str | None = None,
) -> pd.DataFrame:
    """``df`` without ``values`` of ``kind`` on the campaigns ``campaign_ids``."""
    values = [normal_value(kind, v) for v in values]
    mask = (
        (df["kind"].astype(str) == kind.column)
        & df["campaign_id"].isin(list(campaign_ids))
        & df["value"].astype(str).isin(values)
    )
    if kind.typed:
        mask &= df["list_type"].astype(str) == (list_type or spec.LIST_TYPES[0])
    return df[~mask].reset_index(drop=True)


# --------------------------------------------------------------------------- countries


def add_countries(
    df: pd.DataFrame, campaign_ids: Iterable[int], codes: Sequence[str], bid: float
) -> pd.DataFrame:
    """Target ``codes`` at ``bid`` on each campaign: added where missing, the bid set where
    the campaign targets it already."""
    bid = check_bid(bid)
    geo = spec.bid_kind().column
    codes = [str(c).strip().upper() for c in codes]
    ids = [int(c) for c in campaign_ids]
    out = df.copy()
    out.loc[out["campaign_id"].isin(ids) & out[geo].isin(codes), "bid"] = bid
    cids, vals = _missing(out, geo, ids, codes)
    return _concat(
        out, frame(COUNTRIES, {"campaign_id": cids, geo: vals, "bid": [bid] * len(cids)})
    )


def drop_countries(
    df: pd.DataFrame, campaign_ids: Iterable[int], codes: Sequence[str]
) -> pd.DataFrame:
    geo = spec.bid_kind().column
    codes = [str(c).strip().upper() for c in codes]
    mask = df["campaign_id"].isin(list(campaign_ids)) & df[geo].isin(codes)
    return df[~mask].reset_index(drop=True)


def check_bid(bid: Any) -> float:
    problems = checks.number("bid", bid)
    if problems:
        raise ValidationError(problems)
    return float(bid)


def round_up(price: float) -> float:
    """A price rounded up to 4 decimals (a rounded-down minimum would still be below it)."""
    return math.ceil(round(price * 10_000, 6)) / 10_000


#: How a bid edit reads: ``(label, needs prices)``.
BID_EDITS: dict[str, tuple[str, bool]] = {
    "set": ("set to (USD)", False),
    "percent": ("change by %", False),
    "minimum": ("raise to minimum", True),
    "recommended": ("raise to recommended", True),
    "cap": ("cap at recommended", True),
}


def new_bids(
    bids: pd.Series,
    how: str,
    amount: float | None = None,
    minimum: pd.Series | None = None,
    recommended: pd.Series | None = None,
) -> pd.Series:
    """New bids for ``bids`` (NaN: left as it is). ``set``: ``amount``; ``percent``: bid x
    (1 + amount / 100), to 4 decimals; ``minimum``: bids below the minimum raised to it;
    ``recommended``: bids below the recommended price raised to it; ``cap``: bids above the
    recommended price lowered to it. Prices are rounded up to 4 decimals."""
    if how not in BID_EDITS:
        raise ValueError(f"unknown bid edit {how!r}; edits: {', '.join(BID_EDITS)}")
    nan = pd.Series(np.nan, index=bids.index, dtype="float64")
    if how == "set":
        return nan.fillna(check_bid(amount))
    if how == "percent":
        if amount is None or not math.isfinite(float(amount)) or float(amount) <= -100:
            raise ValidationError("the change must be a number of % above -100")
        return (bids * (1 + float(amount) / 100)).round(4)
    price = minimum if how == "minimum" else recommended
    if price is None:
        raise ValidationError("ask the prices first (the Get prices button)")
    price = price.astype("float64").map(lambda p: round_up(p) if pd.notna(p) else np.nan)
    moved = (bids > price) if how == "cap" else (bids < price)
    return price.where(moved & price.notna(), np.nan)


# --------------------------------------------------------------------------- lists and rules


def add_items(
    df: pd.DataFrame, list_name: str, campaign_ids: Iterable[int], items: Sequence[str]
) -> pd.DataFrame:
    same = df[df["list"].astype(str) == list_name]
    cids, vals = _missing(same, "item", campaign_ids, list(items))
    new = frame(LISTS, {"campaign_id": cids, "list": [list_name] * len(cids), "item": vals})
    return _concat(df, new)


def drop_items(
    df: pd.DataFrame, list_name: str, campaign_ids: Iterable[int], items: Sequence[str]
) -> pd.DataFrame:
    mask = (
        (df["list"].astype(str) == list_name)
        & df["campaign_id"].isin(list(campaign_ids))
        & df["item"].astype(str).isin(list(items))
    )
    return df[~mask].reset_index(drop=True)


def set_rules(
    df: pd.DataFrame, campaign_ids: Iterable[int], items: Sequence[str], bid: float
) -> pd.DataFrame:
    """Bid rules ``items`` at ``bid`` on each campaign (added, or their bid changed)."""
    bid = check_bid(bid)
    ids = [int(c) for c in campaign_ids]
    out = df.copy()
    out.loc[out["campaign_id"].isin(ids) & out["item"].isin(list(items)), "bid"] = bid
    cids, vals = _missing(out, "item", ids, list(items))
    return _concat(
        out, frame(BID_RULES, {"campaign_id": cids, "item": vals, "bid": [bid] * len(cids)})
    )


def drop_rules(df: pd.DataFrame, campaign_ids: Iterable[int], items: Sequence[str]) -> pd.DataFrame:
    mask = df["campaign_id"].isin(list(campaign_ids)) & df["item"].astype(str).isin(list(items))
    return df[~mask].reset_index(drop=True)


def add_cpa_rule(
    df: pd.DataFrame, campaign_ids: Iterable[int], rule: Mapping[str, Any]
) -> pd.DataFrame:
    """A new CPA rule (no id yet) on each campaign; the fields are checked first."""
    problems = checks.cpa_rule(rule, "CPA rule", full=True)
    if problems:
        raise ValidationError(problems)
    ids = [int(c) for c in campaign_ids]
    columns: dict[str, Any] = {"campaign_id": ids}
    columns.update({f: [rule[f]] * len(ids) for f in spec.CPA_FIELDS})
    return _concat(df, frame(CPA_RULES, columns))


def drop_cpa_rules(df: pd.DataFrame, rule_ids: Iterable[int]) -> pd.DataFrame:
    return df[~df["id"].isin([int(r) for r in rule_ids])].reset_index(drop=True)


# --------------------------------------------------------------------------- pasted items

_SPLIT = re.compile(r"[\s,;]+")


@dataclass
class Pasted:
    """Items read from pasted text: the good ones (first of each, in order), the problems
    (``line 7: 'xyz!': ...``) and the duplicates (``line 9: 'ab12' again (line 3)``)."""

    items: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)

    def summary(self, most: int = 5) -> str:
        """One line: counts, then the first problems."""
        parts = [f"{len(self.items):,} item(s)"]
        if self.duplicates:
            parts.append(f"{len(self.duplicates):,} duplicate(s) left out ({self.duplicates[0]})")
        if self.problems:
            shown = "; ".join(self.problems[:most])
            more = f"; ... {len(self.problems) - most:,} more" if len(self.problems) > most else ""
            parts.append(f"{len(self.problems):,} bad: {shown}{more}")
        return ", ".join(parts)


def read_paste(text: str, problem: Callable[[str], str | None]) -> Pasted:
    """The items of ``text`` (one or more a line, split on white space, commas and
    semicolons), each checked by ``problem`` (a message, or None when fine)."""
    out = Pasted()
    seen: dict[str, int] = {}
    for number, line in enumerate((text or "").splitlines(), start=1):
        for token in _SPLIT.split(line.strip()):
            if not token:
                continue
            if token in seen:
                out.duplicates.append(f"line {number}: {token!r} again (line {seen[token]})")
                continue
            seen[token] = number
            found = problem(token)
            if found:
                out.problems.append(f"line {number}: {token!r}: {found}")
            else:
                out.items.append(token)
    return out


def list_problem(list_kind: spec.ListKind) -> Callable[[str], str | None]:
    """The check of one pasted item of a list: integer source ids, hexadecimal subIds."""
    if list_kind.item_type is int:
        return lambda t: (
            None
            if t.isdigit() and spec.is_source_id(int(t))
            else "not a source id (a positive integer)"
        )
    return lambda t: None if spec.is_hex(t) else "not a subId (1 to 64 hexadecimal digits)"


def rule_problem(token: str) -> str | None:
    """A bid rule's item: a source id or a subId (hexadecimal digits)."""
    return None if spec.is_hex(token) else "not a source id or a subId"


def kind_problem(kind: spec.TargetKind) -> Callable[[str], str | None]:
    """The check of one typed-in value of ``kind`` (the client's checks)."""

    def problem(token: str) -> str | None:
        found = checks.item_problems(kind, normal_value(kind, token))
        return "; ".join(found) if found else None

    return problem


__all__ = [
    "BID_EDITS",
    "Pasted",
    "add_countries",
    "add_cpa_rule",
    "add_items",
    "add_targets",
    "check_bid",
    "drop_countries",
    "drop_cpa_rules",
    "drop_items",
    "drop_rules",
    "drop_targets",
    "kind_problem",
    "list_problem",
    "new_bids",
    "normal_value",
    "read_paste",
    "round_up",
    "rule_problem",
    "set_rules",
    "table_of",
]
