"""Bid rules (a campaign's bids for single sources and subIds) as rows of a bid report.

``report.bid_rules``: one row per campaign and rule item with its ``bid`` (in the campaign's
``mode``), the statistics of that source or subId (its ``level`` in the statistics) summed
over their window, and the figures of :mod:`toolkit.reports.profit` read the same way as a
country's: ``value_per_unit`` (the break-even bid), ``posterior_cr`` (the rules' Beta prior
fitted among the campaign's other items of the level, leave-one-out), ``payout`` (the
payouts table's row of the campaign with a blank country, else the campaign's revenue per
conversion at that level), ``max_profitable_bid`` and its lower bound, and ``profit_zone``
(``unprofitable``, ``profitable``, ``uncertain``, ``no statistics``: "room to grow" needs a
recommended price). The service prices countries, not sources or subIds, so there is no
price, traffic or expected profit: ``note`` says so on every row.

``level``: where the statistics have the item (a source or a subId); an item the
statistics have at both levels, or an item of digits alone they do not have (a source id or
a subId), is ``source or subid`` and gets no statistics: the note says so. An item with a
letter is a subId (a source id is a number).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..frames.schemas import FLOAT, INT, STRING
from .profit import (
    NO_PAYOUT,
    PROFIT_ZONE_DTYPE,
    figures,
    has_statistics,
    joined,
    level_items,
    prob_value_below,
    unit_value_of,
    zone_of,
)
from .units import CPC

SOURCE, SUBID = "source", "subid"
EITHER = "source or subid"
NO_PRICE = "no price estimate: the service prices countries, not sources or subIds"
SHOWN = (
    "clicks",
    "impressions_stats",
    "conversions",
    "revenue",
    "cost",
    "value_per_unit",
    "posterior_cr",
    "payout",
    "break_even_bid",
    "max_profitable_bid",
    "max_profitable_bid_low",
)
#: The columns of ``report.bid_rules``, in order.
COLUMNS: dict[str, Any] = {
    "campaign_id": INT,
    "mode": STRING,
    "level": STRING,
    "key": STRING,
    "bid": FLOAT,
    **{name: FLOAT for name in SHOWN},
    "profit_zone": PROFIT_ZONE_DTYPE,
    "note": STRING,
}


def level_of(key: str, at_source: bool, at_subid: bool) -> str:
    """The level of a rule's item from where the statistics have it, else its form.

    >>> level_of("ab12", False, False), level_of("123", True, False), level_of("123", False, False)
    ('subid', 'source', 'source or subid')
    """
    if at_source != at_subid:
        return SOURCE if at_source else SUBID
    if at_source or key.isdigit():
        return EITHER
    return SUBID


def _note(level: str, has: bool, payout: float, both: bool) -> str:
    if level == EITHER:
        where = "as a source and as a subId" if both else "at neither level"
        return f"{NO_PRICE}; the statistics have it {where}: not joined"
    if not has:
        return f"{NO_PRICE}; no statistics of this {level}"
    if np.isnan(payout):
        return f"{NO_PRICE}; {NO_PAYOUT}"
    return NO_PRICE


def bid_rule_rows(
    rules: pd.DataFrame,
    stats: pd.DataFrame | None,
    payouts: pd.DataFrame | None = None,
    modes: Mapping[int, str] | None = None,
) -> pd.DataFrame:
    """The rows of ``report.bid_rules`` from a ``bid_rules`` table (``campaign_id``,
    ``item``, ``bid``), a stats frame (or None: the statistics' columns NaN), a checked
    payouts table and each campaign's ``mode``."""
    modes = modes or {}
    rows = pd.DataFrame(
        {
            "campaign_id": rules["campaign_id"].astype("int64").to_numpy(),
            "key": rules["item"].astype(str).to_numpy(),
            "bid": rules["bid"].astype(float).to_numpy(),
        }
    )
    rows["mode"] = [modes.get(int(c)) for c in rows["campaign_id"]]
    out = rows.reindex(columns=list(COLUMNS))
    out["profit_zone"] = pd.Series([None] * len(out), index=out.index, dtype=object)
    if stats is None or not len(rows):
        out["level"] = [level_of(k, False, False) for k in rows["key"]]
        out["note"] = NO_PRICE
        return _typed(out)
    found = {}
    for level in (SOURCE, SUBID):
        items = level_items(stats, level, payouts)
        found[level] = items
        seen = set(zip(items["campaign_id"].astype(int), items["key"], strict=True))
        pairs = zip(rows["campaign_id"], rows["key"], strict=True)
        rows[f"at_{level}"] = [(int(c), k) in seen for c, k in pairs]
    where = zip(rows["key"], rows["at_source"], rows["at_subid"], strict=True)
    rows["level"] = [level_of(k, s, b) for k, s, b in where]
    for level in (SOURCE, SUBID):
        at = rows.index[rows["level"] == level]
        if len(at):
            _fill(out, rows.loc[at], found[level])
    both = (rows["at_source"] & rows["at_subid"]).to_numpy()
    has = np.nan_to_num(out["clicks"].to_numpy(float)) > 0
    out["level"] = rows["level"]
    out["note"] = [
        _note(lv, bool(h), float(p), bool(b))
        for lv, h, p, b in zip(rows["level"], has, out["payout"], both, strict=True)
    ]
    return _typed(out)


def _fill(out: pd.DataFrame, rows: pd.DataFrame, items: pd.DataFrame) -> None:
    """The statistics' columns and the zone of ``rows`` of one level, written into ``out``."""
    merged = joined(rows, items, "key")
    per_click = (rows["mode"].astype(str) == CPC).to_numpy()
    values = figures(merged, per_click)
    for name in SHOWN:
        out.loc[rows.index, name] = values[name].to_numpy(float)
    frame = values.assign(mode=rows["mode"].to_numpy())
    p = prob_value_below(
        rows["bid"], unit_value_of(frame), values["posterior_a"], values["posterior_b"]
    )
    has = has_statistics(frame)
    out.loc[rows.index, "profit_zone"] = [
        zone_of(float(x), bool(h), False) for x, h in zip(p, has, strict=True)
    ]


def _typed(out: pd.DataFrame) -> pd.DataFrame:
    out = out.reset_index(drop=True)
    for name, dtype in COLUMNS.items():
        out[name] = out[name].astype(object).astype(dtype)
    return out


__all__ = ["COLUMNS", "EITHER", "NO_PRICE", "bid_rule_rows", "level_of"]
